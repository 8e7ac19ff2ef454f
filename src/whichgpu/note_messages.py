"""The messages of :mod:`whichgpu.notes`: each reason, warning and correction's template by
its code, in English, marked for translation (rendered at the edge, in the reader's
language, by :func:`whichgpu.notes.render`)."""

from __future__ import annotations

from whichgpu.i18n import N_, Np_, Plural
from whichgpu.i18n.blocker_messages import BLOCKER_MESSAGES

#: A note's message by its code: a template, or a :class:`~whichgpu.i18n.Plural` whose form
#: follows one of its parameters
MESSAGES: dict[str, str | Plural] = {
    "article_differs": N_(
        "{claim} {gpu}, {field}: the article says {article}; the figure is {value} ({source})."
    ),
    "article_range_for_one_part": N_(
        "{claim} {gpu}, {field}: the article gives a range, {article}; this part is {value} "
        "({source}). {other}."
    ),
    "article_sparse_figure": N_(
        "{claim} {gpu}, {field}: the article's {article} is the 2:4-sparsity figure; the dense "
        "rate, comparable with the other cards' figures, is {value} ({source})."
    ),
    "article_price_unconfirmed": N_(
        "{claim} {gpu}: no public listing confirms the article's {article}; whichgpu shows the "
        "article's range for this card, marked as its source."
    ),
    "article_price_differs": N_(
        "{claim} {gpu}: the article says {article}; public listings run from {low} ({low_where}) "
        "to {high} ({high_where})."
    ),
    "article_price_one_listing": N_(
        "{claim} {gpu}: the article says {article}; the one public listing is {price} ({where})."
    ),
    "change_shorter_sequence": N_("shorten the sequence to {seq} tokens"),
    "change_batch_1": N_(
        "use a micro-batch of {batch} (keep the global batch with gradient accumulation)"
    ),
    "change_checkpointing": N_("turn on activation checkpointing"),
    "change_chunked_loss": N_(
        "compute the loss in chunks (torchtune's chunked cross-entropy): no full fp32 logits"
    ),
    "change_optimizer_8bit": N_("use an 8-bit AdamW (bitsandbytes): 2 bytes of state a weight"),
    "change_lora": N_("fine-tune with LoRA (rank {rank}) instead of all weights"),
    "change_qlora": N_("fine-tune with QLoRA (NF4 base weights)"),
    "change_bf16_true": N_("train in pure bf16 (bf16-true)"),
    # on a GPU without BF16 tensor cores (T4, V100): pure FP16 instead
    "change_fp16_true": N_("train in pure fp16 (16-true)"),
    "change_zero3": N_(
        "shard weights, gradients and optimizer state with ZeRO-3 / FSDP over {gpus} GPUs"
    ),
    "change_quantize": N_("serve {quant} quantized weights"),
    "change_tensor_parallel": N_("split the model with tensor parallelism over {tp} GPUs"),
    "change_bigger_gpu": N_("use a GPU with more memory: the {gpu}"),
    # recommend: why the pick
    "reason_cheapest": N_(
        "{option} costs the least for this job: ${cost:,.2f} ({rival} next, ${rival_cost:,.2f})."
    ),
    "reason_cheapest_only": N_(
        "{option} is the only GPU model that meets every constraint: ${cost:,.2f}."
    ),
    "reason_cheapest_per_h": N_(
        "{option} costs the least per hour: ${cost:,.2f}/h ({rival} next, ${rival_cost:,.2f}/h); "
        "give a job size for the cost per job."
    ),
    "reason_cheapest_per_h_only": N_(
        "{option} is the only GPU model that meets every constraint: ${cost:,.2f}/h."
    ),
    "reason_fastest": N_(
        "{option} finishes first: {hours:,.2f} h ({rival} next, {rival_hours:,.2f} h)."
    ),
    "reason_fastest_only": N_(
        "{option} is the only GPU model that meets every constraint: {hours:,.2f} h."
    ),
    "reason_fastest_rate": N_(
        "{option} has the highest throughput: {rate:,.1f} {unit} ({rival} next, {rival_rate:,.1f})."
    ),
    "reason_fastest_rate_only": N_(
        "{option} is the only GPU model that meets every constraint: {rate:,.1f} {unit}."
    ),
    "reason_best_value": N_(
        "{option} gives the most throughput per dollar: {value:,.1f} {unit} per $/h ({rival} "
        "next, {rival_value:,.1f})."
    ),
    "reason_best_value_only": N_(
        "{option} is the only GPU model that meets every constraint: {value:,.1f} {unit} per $/h."
    ),
    "reason_mig": N_(
        "{services} isolated services, one {profile} MIG slice each, on {gpus} × {gpu}."
    ),
    "reason_fits": N_(
        "{component}: needs {needed:,.1f} GiB per GPU of {capacity:,.1f} GiB ({strategy})."
    ),
    "reason_speed": N_("{component}: {rate:,.1f} {unit}, {bound}-bound (efficiency {provenance})."),
    "reason_speed_time": N_(
        "{component}: {rate:,.1f} {unit}, {hours:,.2f} h, {bound}-bound (efficiency {provenance})."
    ),
    "reason_capabilities": N_("{gpu} has what the workload requires: {capabilities}."),
    "reason_price": N_(
        "${usd_per_h:,.2f}/h for {option}: the lowest {market} listing ({provider}, {as_of})."
    ),
    "reason_price_instance": N_(
        "${usd_per_h:,.2f}/h for {option}: {instances} × {instance} from {provider} "
        "(${instance_usd_per_h:,.2f}/h an instance of {gpus}), the lowest {market} offer "
        "for {option_gpus} ({as_of})."
    ),
    "reason_nodes": N_(
        "{option} spans {instances} instances, {gpus} per instance: rings between them "
        "cross {network} (an assumption: {gbit:,g} Gb/s an instance; give network to set "
        "it)."
    ),
    "reason_nodes_replicas": N_(
        "{option} spans {instances} instances, {gpus} per instance: each replica runs inside "
        "one, so none of its all-reduces crosses the network between them (the requests are "
        "spread over the replicas)."
    ),
    "reason_nodes_nvlink": N_(
        "{option} spans {instances} instances, {gpus} per instance, of one NVLink domain of "
        "{domain} GPUs: rings between them stay on NVLink, not the network."
    ),
    "reason_nodes_sold": N_(
        "{option} spans {instances} instances, {gpus} per instance: rings between them "
        "cross {fabric} at {gbit:,g} Gb/s an instance, the network {provider} sells "
        "{instance} with."
    ),
    "reason_quant_cheaper": N_(
        "In {quant} weights ({field} {quant}), {option} would serve it for ${usd_per_h:,.2f}/h "
        "against ${pick_usd_per_h:,.2f}/h for {pick} in 16-bit, {gain:.0%} better on the "
        "objective: FP8 weights and activations keep accuracy within about 1% of BF16 "
        "(Kurtic et al., 2024, arXiv:2411.02355)."
    ),
    "reason_quant_cheaper_nvfp4": N_(
        "In {quant} weights ({field} {quant}), {option} would serve it for ${usd_per_h:,.2f}/h "
        "against ${pick_usd_per_h:,.2f}/h for {pick} as planned, {gain:.0%} better on the "
        "objective: NVIDIA reports NVFP4 within about 1% of FP8's accuracy on the models it "
        "measured (NVIDIA Technical Blog, 2025-06-24), a vendor's figure: check it on your task."
    ),
    "reason_quant_cheaper_job": N_(
        "In {quant} weights ({field} {quant}), {option} would do this job for ${cost:,.2f} "
        "in {hours:,.2f} h against ${pick_cost:,.2f} in {pick_hours:,.2f} h for {pick} in "
        "16-bit, {gain:.0%} "
        "better on the objective: FP8 weights and activations keep accuracy within about 1% "
        "of BF16 (Kurtic et al., 2024, arXiv:2411.02355)."
    ),
    "reason_quant_cheaper_nvfp4_job": N_(
        "In {quant} weights ({field} {quant}), {option} would do this job for ${cost:,.2f} "
        "in {hours:,.2f} h against ${pick_cost:,.2f} in {pick_hours:,.2f} h for {pick} as "
        "planned, {gain:.0%} "
        "better on the objective: NVIDIA reports NVFP4 within about 1% of FP8's accuracy on "
        "the models it measured (NVIDIA Technical Blog, 2025-06-24), a vendor's figure: check "
        "it on your task."
    ),
    "reason_quant_cheaper_image": N_(
        "With its denoiser in {quant} weights ({field} {quant}), {option} would run it for "
        "${usd_per_h:,.2f}/h against ${pick_usd_per_h:,.2f}/h for {pick} in 16-bit, {gain:.0%} "
        "better on the objective: Hugging Face found 8-bit weights' images hard to tell from "
        "BF16's without close inspection (blog, 'Exploring Quantization Backends in "
        "Diffusers', 2025-05-21)."
    ),
    "reason_quant_cheaper_image_job": N_(
        "With its denoiser in {quant} weights ({field} {quant}), {option} would do this job "
        "for ${cost:,.2f} in {hours:,.2f} h against ${pick_cost:,.2f} in {pick_hours:,.2f} h "
        "for {pick} in 16-bit, {gain:.0%} better on the objective: Hugging Face found 8-bit "
        "weights' images hard to tell from BF16's without close inspection (blog, 'Exploring "
        "Quantization Backends in Diffusers', 2025-05-21)."
    ),
    "reason_tie_axis_cost": N_(
        "{option} and {other} cost the same inside the estimate's typical error ({band:.0%}): "
        "${cost:,.2f} and ${other_cost:,.2f}; {option} finishes sooner ({hours:,.2f} h against "
        "{other_hours:,.2f} h), so it is the pick."
    ),
    "reason_tie_axis_time": N_(
        "{option} and {other} take the same time inside the estimate's typical error "
        "({band:.0%}): {hours:,.2f} h and {other_hours:,.2f} h; {option} costs less "
        "(${cost:,.2f} against ${other_cost:,.2f}), so it is the pick."
    ),
    "reason_tie": N_(
        "{option} is {diff:.1%} from the pick on {objective}, inside the estimate's typical "
        "error ({band:.0%}): treat the two as equivalent. What separates them: the high end "
        "of the listings (${pick_high:,.2f} for the pick, ${other_high:,.2f}), how many "
        "offers list each ({pick_offers} and {other_offers}), and the hardware "
        "({pick_memory:,.0f} and {other_memory:,.0f} GiB a GPU)."
    ),
    "reason_buy": N_(
        "Buying ({condition}): ${purchase:,.0f}, then ${power:,.3f}/h of electricity; owning "
        "beats renting the same cards ({provider}, {market}, ${rent:,.2f}/h, {as_of}) after "
        "{months:,.1f} months at {hours_per_month} h a month."
    ),
    "reason_buy_vs_rental": N_(
        "The rental that would do this job best: {rented} at ${usd_per_h:,.2f}/h "
        "({provider}, {as_of}); owning {option} beats it after {months:,.1f} months at "
        "{hours_per_month} h a month."
    ),
    "reason_buy_never": N_(
        "The rental that would do this job best, {rented} at ${usd_per_h:,.2f}/h "
        "({provider}, {as_of}), costs no more an hour than {option}'s electricity: owning "
        "never catches up with it."
    ),
    "reason_buy_no_rent": N_(
        "Buying ({condition}): ${purchase:,.0f}, then ${power:,.3f}/h of electricity (no rental "
        "price to break even against)."
    ),
    "reason_extrapolated_passed": N_(
        "{option} would cost ${middle:,.2f} at its estimate's middle, but its speed rests on "
        "a factor nobody measured for that GPU and work ({provenance}): ranked at the slow end "
        "of its range, ${slow:,.2f}, it does not beat a measured option inside its error."
    ),
    "fit_paged_optimizer": N_(
        "Beside the total: {paged:,.1f} GiB of paged optimizer states (bitsandbytes' paged "
        "optimizers keep them in CUDA unified memory: on the GPU while it has room, paged to "
        "the host when it has not; PyTorch's allocator does not count them, nor does a "
        "framework's peak-memory figure)."
    ),
    "reason_undated_passed": N_(
        "{option} would cost ${figure:,.2f} against the pick's ${pick:,.2f}, but its offer "
        "({provider}) carries no date: a price without a date is a guess, ranked after every "
        "dated one."
    ),
    "reason_undated_passed_h": N_(
        "{option} would cost ${figure:,.2f}/h against the pick's ${pick:,.2f}/h, but its offer "
        "({provider}) carries no date: a price without a date is a guess, ranked after every "
        "dated one."
    ),
    "reason_extrapolated_passed_time": N_(
        "{option} would take {middle:,.2f} h at its estimate's middle, but its speed rests on "
        "a factor nobody measured for that GPU and work ({provenance}): ranked at the slow end "
        "of its range, {slow:,.2f} h, it does not beat a measured option inside its error."
    ),
    "chosen_checkpoint_format": N_(
        "{component}: {quant} weights, the format its checkpoint ships in (config.json's "
        "quantization_config); give {field} to set another."
    ),
    "fit_rows_chosen": N_(
        "{component}: the memory shown is at micro-batch {batch}; each GPU's row is at the "
        "settings chosen for it ({gpu} gives one GPU's)."
    ),
    "suggest_global_batch": N_(
        "{component}: micro-batch {batch} as given, nothing accumulated; pretraining recipes "
        "step on about 4M tokens (Llama 2, NeMo's Llama 3): give {field} {global_batch:d} for "
        "that."
    ),
    # recommend: warnings
    "chosen_batch": N_(
        "{component} on the {gpu}: micro-batch {batch} per GPU, the largest that fits of up "
        "to {cap} ({recipe}); give {batch_field} to set it."
    ),
    "chosen_batch_pipeline": N_(
        "{component} on the {gpu}: micro-batch {batch} per GPU, the fastest that fits of up "
        "to {cap} ({recipe}): more micro-batches a step leave the pipeline a shorter bubble; "
        "give {batch_field} to set it."
    ),
    "chosen_serving": Np_(
        "{component} on {engine}: {replicas} × {gpus}-GPU replica at {rate:,.2f} requests/s "
        "with {concurrency} sequences in flight: time to first token {ttft_ms:,} ms, "
        "{tpot_ms:,.1f} ms per output token ({percentile}; limited by {binding}).",
        "{component} on {engine}: {replicas} × {gpus}-GPU replicas, each at {rate:,.2f} "
        "requests/s with {concurrency} sequences in flight: time to first token {ttft_ms:,} ms, "
        "{tpot_ms:,.1f} ms per output token ({percentile}; limited by {binding}).",
        "replicas",
    ),
    "chosen_disaggregated": N_(
        "{component} on {engine}, disaggregated: {prefill} prefill workers of {prefill_gpus} "
        "GPUs and {decode} decode workers of {decode_gpus} serve {rate:,.2f} requests/s under "
        "the targets, where replicas of the same GPUs serve {aggregated:,.2f}; a prompt's KV "
        "cache moves to its decode worker in {transfer_ms:,.1f} ms; time to first token "
        "{ttft_ms:,} ms, {tpot_ms:,.1f} ms per output token ({percentile}; limited by its "
        "{binding} workers)."
    ),
    "reason_disaggregated": N_(
        "{component}: prefill and decode on separate workers ({disaggregated:,.2f} requests/s "
        "under the targets) rather than replicas of the same GPUs ({aggregated:,.2f}): a "
        "replica's prefills stretch its decode steps, a decode worker's steps carry none; "
        "either way ${usd_h:,.2f}/h, ${per_million:,.3f} per million output tokens at the "
        "demand."
    ),
    "reason_aggregated": N_(
        "{component}: replicas that prefill and decode ({aggregated:,.2f} requests/s under "
        "the targets) rather than separate prefill and decode workers of the same GPUs "
        "({disaggregated:,.2f}): the split serves no more under these targets; either way "
        "${usd_h:,.2f}/h, ${per_million:,.3f} per million output tokens at the demand."
    ),
    "reason_aggregated_held": N_(
        "{component}: replicas that prefill and decode ({aggregated:,.2f} requests/s under "
        "the targets) rather than separate prefill and decode workers of the same GPUs "
        "({disaggregated:,.2f} at the slow end of their wider range: no serving run of the "
        "fit ran separate workers; {field} disaggregated plans them as asked); either way "
        "${usd_h:,.2f}/h, ${per_million:,.3f} per million output tokens at the demand."
    ),
    "chosen_engine": N_(
        "{component}: {engine}, {rate:,.2f} requests/s under the targets on these GPUs; "
        "{other} next, {other_rate:,.2f} (of {order}, each engine later in that order is "
        "taken only where it serves {margin} % more for every place it comes later); give "
        "{engine_field} to set the engine."
    ),
    "chosen_engine_held": N_(
        "{component}: {engine}, {rate:,.2f} requests/s under the targets on these GPUs; "
        "{other} next, {other_rate:,.2f} with its latencies held to the slow end of a wider "
        "range, as it rests on a factor no serving run measured for it here (of {order}, each "
        "engine later in that order is taken only where it serves {margin} % more for every "
        "place it comes later); give {engine_field} to set the engine."
    ),
    "chosen_engine_bound": N_(
        "{component}: {engine}, {rate:,.2f} requests/s under the targets on these GPUs; "
        "{other} next, {other_rate:,.2f} at most at full load (of {order}, each engine later "
        "in that order is taken only where it serves {margin} % more for every place it comes "
        "later); give {engine_field} to set the engine."
    ),
    "chosen_lengths": N_(
        "{component}: {name}'s mean lengths, {prompt} tokens in and {generate} out ({source}, "
        "{as_of}); the replicas are planned at those means, a batch's drain at their spread."
    ),
    "chosen_drain": N_(
        "{component}: {requests:,} requests sent at once. Once none wait, the batch drains and "
        "its last sequences run a few to a step: {drain_s:,.1f} s beyond the full batch's pace, "
        "{share:.0%} of the time ({name}'s outputs spread as an exponential of mean {generate} "
        "tokens, up to {longest})."
    ),
    "chosen_drain_fixed": N_(
        "{component}: {requests:,} requests sent at once. The last {left:,} on a replica run as "
        "a batch of their own once the others end: {drain_s:,.1f} s beyond the full batch's "
        "pace, {share:.0%} of the time."
    ),
    "chosen_drain_one_wave": N_(
        "{component}: every request sent at once fills fewer sequence slots than a replica "
        "has, so they run as one smaller batch: {drain_s:,.1f} s beyond the full batch's "
        "pace, {share:.0%} of the time."
    ),
    "chosen_engine_unmet": N_(
        "{component}: {engine}, {rate:,.2f} requests/s under the targets on these GPUs; "
        "{other} misses them at every load (of {order}, each engine later in that order is "
        "taken only where it serves {margin} % more for every place it comes later); give "
        "{engine_field} to set the engine."
    ),
    "chosen_kv_cache": N_(
        "{component} on {engine}: the KV cache in {kv}, the dtype {engine} reads from the "
        "checkpoint (TensorRT Model Optimizer's {quant} export quantizes the cache unless "
        "told not to): twice the sequences of a 16-bit cache in the same memory."
    ),
    "chosen_image": Np_(
        "{component}: {batch} image a call, CPU offload {offload}, VAE tiling {tiling} "
        "(chosen to fit and run fastest here: {seconds:,.2f} s an image; host memory "
        "{host_gib:,.1f} GiB); give {batch_field}, {offload_field} or {tiling_field} to set them.",
        "{component}: {batch} images a call, CPU offload {offload}, VAE tiling {tiling} "
        "(chosen to fit and run fastest here: {seconds:,.2f} s an image; host memory "
        "{host_gib:,.1f} GiB); give {batch_field}, {offload_field} or {tiling_field} to set them.",
        "batch",
    ),
    "image_no_fit": N_(
        "It does not fit: {gib:,.1f} GiB of the {gpu}'s {capacity:,.1f} GiB, even with the "
        "settings left open chosen to fit; try {quant} fp8 or nf4"
    ),
    "image_no_fit_loading": N_(
        "It does not fit: the 16-bit pipeline takes {gib:,.1f} GiB of the {gpu}'s "
        "{capacity:,.1f} GiB before it is quantised on the GPU; give {quantize_on} load (its "
        "weights quantised as they load)"
    ),
    "image_training_no_fit": N_(
        "It does not fit: {gib:,.1f} GiB of the {gpu}'s {capacity:,.1f} GiB; try "
        "{checkpointing}, {optimizer} adamw-8bit, {cache_latents} or image-lora with {quant} "
        "nf4"
    ),
    "chosen_image_training": Np_(
        "{component}: {batch} image a GPU step, gradient checkpointing {checkpointing} "
        "(chosen to fit and run fastest here: {seconds:,.2f} s a step); give {batch_field} or "
        "{checkpointing_field} to set them.",
        "{component}: {batch} images a GPU step, gradient checkpointing {checkpointing} "
        "(chosen to fit and run fastest here: {seconds:,.2f} s a step); give {batch_field} or "
        "{checkpointing_field} to set them.",
        "batch",
    ),
    "chosen_attention_dp": N_(
        "{component}: attention data-parallel and the experts expert-parallel over each "
        "replica's {gpus} GPUs (each GPU its own sequences and their KV cache) serve "
        "{rate:,.2f} requests/s under the targets, tensor parallelism {other_rate:,.2f}; no "
        "serving run of the fit ran this layout, so it is taken at the slow end of its "
        "likely range."
    ),
    "chosen_split": Np_(
        "{component}: {replicas} × {gpus}-GPU replica serves {rate:,.2f} requests/s under the "
        "targets; {other_replicas} × {other_gpus}-GPU would serve {other_rate:,.2f}.",
        "{component}: {replicas} × {gpus}-GPU replicas serve {rate:,.2f} requests/s under the "
        "targets; {other_replicas} × {other_gpus}-GPU would serve {other_rate:,.2f}.",
        "replicas",
    ),
    "warn_engine_prior": N_(
        "{component}: {engine}'s speed is TensorRT-LLM's calibration ({harness}); no factor "
        "fitted on its own published runs yet."
    ),
    "block_latency": N_(
        "{component}: {target} {percentile} of {limit_ms:,} ms is out of reach here: "
        "{best_ms:,} ms at the lightest load"
    ),
    "block_latency_likely": N_(
        "{component}: {target} {percentile} of {limit_ms:,} ms is out of reach here: "
        "{best_ms:,} ms at the lightest load at the slow end of the estimate's likely range "
        "({point_ms:,} ms at its middle)"
    ),
    "chosen_recipe_layout": N_(
        "{component} on the {gpu}: the layout NVIDIA's performance recipe runs it in "
        "({preset}: {layout}), {gap:.0%} below the fastest the estimate finds ({fastest}), "
        "within its typical error ({tolerance:.0%})."
    ),
    "chosen_recipe_layout_fastest": N_(
        "{component} on the {gpu}: the layout NVIDIA's performance recipe runs it in "
        "({preset}: {layout}), the fastest the estimate finds."
    ),
    "chosen_layout": Np_(
        "{component} on the {gpu}: {layout}, {accumulation} micro-batch a step, none "
        "accumulated (global batch {global_batch}); give {global_batch_field} to set it.",
        "{component} on the {gpu}: {layout}, {accumulation} micro-batches accumulated a step "
        "(global batch {global_batch}); give {global_batch_field} to set it.",
        "accumulation",
    ),
    "block_precision": N_("{component}: the {gpu} has no {unit} tensor cores."),
    "block_cuda_only": N_(
        "{component}: {engine} runs on NVIDIA GPUs only (CUDA); the {gpu} runs ROCm."
    ),
    "block_memory_instance": N_(
        "{component} needs {needed:,.1f} GiB per GPU; {capacity:,.1f} GiB available: a "
        "replica stays within one instance ({per_instance} × {gpu} here), as its all-reduces "
        "and expert exchanges do not cross the network between instances ({count} GPUs in "
        "one instance would hold it)"
    ),
    "block_memory_instance_none": N_(
        "{component} needs {needed:,.1f} GiB per GPU; {capacity:,.1f} GiB available: a "
        "replica stays within one instance ({per_instance} × {gpu} here), as its all-reduces "
        "and expert exchanges do not cross the network between instances"
    ),
    "block_layout_split": N_(
        "{component}: separate prefill and decode workers take two GPUs at least."
    ),
    "block_engine_min_capability": N_(
        "{component}: {engine} runs from compute capability {needed}; the {gpu} has {has}."
    ),
    "block_engine_capability": N_(
        "{component}: {engine} runs {quant} weights from compute capability {needed}; the "
        "{gpu} has {has}."
    ),
    "warn_split_slower": N_(
        "Split over {count} GPUs this model runs slower than on one ({rate:,.1f} against "
        "{one:,.1f} {unit}): the all-reduces between them cost more than the split saves; run "
        "a copy on each GPU instead."
    ),
    "estimate_no_fit": N_(
        "It does not fit: {gib:,.1f} GiB per GPU of the {gpu}'s {capacity:,.1f} GiB; the "
        "speed is the job's as if it did ({fit} says what would make it fit)."
    ),
    "chosen_precision": N_(
        "{component} on the {gpu}: {precision}, since this GPU has no BF16 tensor cores."
    ),
    "chosen_memory_format": N_(
        "{component}: activations {layout}, as NVIDIA DeepLearningExamples' ResNet-50 recipe "
        "trains in {precision} (channels_last in 16 bits, which tensor-core convolutions take "
        "without transposes; contiguous otherwise); give {field} to set it."
    ),
    "chosen_checkpointing": N_(
        "{component} on the {gpu}: activation checkpointing on: it costs a second forward pass "
        "but lets a larger micro-batch fit, which runs faster here."
    ),
    "chosen_checkpointing_needed": N_(
        "{component} on the {gpu}: activation checkpointing on: without it a micro-batch of "
        "{batch} does not fit."
    ),
    "warn_tight_memory": N_(
        "{component} uses {needed:,.1f} of {capacity:,.1f} GiB on the {gpu}: little room for "
        "fragmentation or a longer input."
    ),
    "warn_tight_kv": N_(
        "{component} on {engine}, {gpus} × {gpu} a replica: the KV cache gets {pool_gib:,.1f} "
        "GiB a GPU, {share:.0%} of its memory ({sequences} sequences of {tokens:,} tokens). "
        "In so tight a pool the engine's own buffers, which change between releases, decide "
        "the throughput: NVIDIA measured Llama 3.1 70B in FP8 on one H100 at 410 and at 742 "
        "tokens/s with two TensorRT-LLM releases. More GPUs a replica, or an 8-bit KV cache, "
        "leave it room."
    ),
    "warn_near_capacity": N_(
        "{component}: {demand:,.2f} requests/s is {share:.0%} of the {capacity:,.2f} this "
        "hardware serves under the targets, past the {target:.0%} a service is planned to run "
        "at: a burst or a slower release leaves it no room (recommend sizes it with that room)."
    ),
    "warn_near_capacity_slow": N_(
        "{component}: {demand:,.2f} requests/s is {share:.0%} of the {capacity:,.2f} this "
        "hardware serves under the targets at the slow end of its likely range ({point:,.2f} "
        "at its middle), past the {target:.0%} a service is planned to run at: a burst or a "
        "slower release leaves it no room (recommend sizes it with that room)."
    ),
    "warn_tight_kv_8bit": N_(
        "{component} on {engine}, {gpus} × {gpu} a replica: the KV cache gets {pool_gib:,.1f} "
        "GiB a GPU, {share:.0%} of its memory ({sequences} sequences of {tokens:,} tokens), "
        "in 8 bits already. In so tight a pool the engine's own buffers, which change between "
        "releases, decide the throughput: NVIDIA measured Llama 3.1 70B in FP8 on one H100 at "
        "410 and at 742 tokens/s with two TensorRT-LLM releases. More GPUs a replica leave it "
        "room."
    ),
    "warn_prior_efficiency": N_(
        "{component} on the {gpu}: no measurement of this work calibrates it ({provenance}); "
        "its likely range is widened for that, and it is held to the range's slow end."
    ),
    "warn_no_split": N_(
        "{component}: no split of these GPUs into prefill and decode workers holds the "
        "model on both sides within the targets; planned as replicas that do both."
    ),
    "note_pcie_link": N_(
        "{component}: NVLink bridges joining the {gpu} cards in pairs would make this "
        "{gain:.0%} faster; they are not assumed (rented instances do not state them): give "
        "{field} if yours are bridged."
    ),
    "warn_interconnect_bound": N_(
        "{component}: {count} × {gpu} wait on gradient exchange (no fast link); fewer GPUs may "
        "cost less."
    ),
    "warn_no_rt_cores": N_(
        "The {gpu} has no RT cores: ray tracing runs on its CUDA cores, far slower per dollar."
    ),
    "warn_over_provisioned": N_(
        "Over-provisioned (the article's hidden mistake): {option} pays for {features} that this "
        "workload does not use; {cheaper} does it for ${cheaper_cost:,.2f} instead of "
        "${cost:,.2f} per {per_job}, {waste:.0%} less."
    ),
    "warn_over_provisioned_tied": N_(
        "Over-provisioned, within the estimate's error (the article's hidden mistake): "
        "{option} pays for {features} that this workload does not use; {cheaper} does it for "
        "${cheaper_cost:,.2f} instead of ${cost:,.2f} per {per_job}, {waste:.0%} less, and "
        "finishes later: the pick was taken for its time, inside the cost's error."
    ),
    "warn_baseline": N_(
        "Your baseline {option} pays for {features} that this workload does not use; {cheaper} "
        "does it for ${cheaper_cost:,.2f} instead of ${cost:,.2f} per {per_job}: {waste:.0%} of "
        "the money wasted."
    ),
    "warn_baseline_infeasible": N_(
        "Your baseline {option} does not meet the workload's constraints (see its row)."
    ),
    "warn_spot": N_("Spot instances can be reclaimed at any time: checkpoint often."),
    "warn_price_age": N_("The {gpu}'s price listing is dated {as_of}: check it before you commit."),
    "warn_price_undated": N_(
        "The {gpu}'s price listing carries no date: check it before you commit."
    ),
    "warn_price_range": N_(
        "At the high end of the listings the job costs ${high:,.2f} instead of ${cost:,.2f}."
    ),
    "warn_unpriced": N_("Not ranked, no offer in {markets}: {gpus}."),
    # recommend: assumptions
    "assume_rent": N_(
        "Prices: the lowest listing in each market ({markets}), per GPU-hour; the high end is "
        "the range."
    ),
    "assume_prices_claims": N_(
        "Prices: the article's own ranges (claims, C20, undated), as the article's scenario; "
        "the full catalog ranks on providers' offers instead."
    ),
    "assume_prices_shipped": N_(
        "Prices: the shipped price catalogs, retrieved {retrieved} (most listings carry no date "
        "of their own); {update} fetches fresh ones."
    ),
    "assume_prices_snapshot": N_(
        "Prices: SkyPilot's catalogs fetched {fetched} ({days} days old) for {providers}; the "
        "shipped price catalogs (retrieved {retrieved}) for the other providers."
    ),
    "assume_buy": N_(
        "Buying: the lowest purchase price written off over {months} months of "
        "{hours_per_month} h of use, plus electricity at TDP and ${kwh:.4f}/kWh; no host, "
        "cooling or resale value."
    ),
    "assume_sequential": N_("Components run one after another on the same GPUs."),
    "assume_services": N_("Each service gets its own GPUs or MIG slice (isolated)."),
    "assume_throughput": N_(
        "Throughput from the roofline model fitted on published measurements "
        "(docs/perf-accuracy.md)."
    ),
    # MIG planning
    "mig_bad_start": N_("{profile} cannot start on memory slot {start}; its starts: {starts}"),
    "mig_overlap": N_("{profile} would overlap another instance on memory slot {slot}"),
    "mig_too_many": N_("at most {limit} × {profile} fit on one GPU"),
    "mig_compute": N_("{compute} compute slices asked for; a GPU has {limit}"),
    "mig_memory": N_("{memory} memory slices asked for; a GPU has {limit}"),
    "mig_no_placement": N_(
        "no placement of {profiles} on one GPU: the profiles' allowed start slots collide"
    ),
    "mig_profile_too_small": N_(
        "{service} needs {needed:,.1f} GiB; the {profile} it asks for has {capacity:,.1f} GiB"
    ),
    "mig_no_such_profile": N_("{service} asks for {profile}, which the {gpu} does not have"),
    "mig_too_big": N_(
        "{service} needs {needed:,.1f} GiB; the largest profile, {largest}, has "
        "{largest_gib:,.1f} GiB: use whole GPUs"
    ),
    # what blocks an option, and what would do where nothing is feasible
    **BLOCKER_MESSAGES,
}
