"""The messages of :mod:`whichgpu.errors`: each input error's template by its code, in
English, marked for translation (rendered at the edge, in the reader's language, by
:func:`whichgpu.errors.render_message`), as :mod:`whichgpu.note_messages` holds the notes'."""

from __future__ import annotations

from whichgpu.i18n import N_

#: Every input error's code and message. Parameters: ``hint`` is a closest match ("" for
#: none); a :class:`~whichgpu.errors.Word` is translated, a
#: :class:`~whichgpu.errors.Ref` is a field's name.
MESSAGES: dict[str, str] = {
    # any field
    "unknown_field": N_("unknown field; valid: {valid}{hint}"),
    "missing_field": N_("missing; one of: {valid}"),
    "unknown_value": N_("unknown value {value!r}; valid: {valid}{hint}"),
    "out_of_range": N_("must be a number from {low:g} to {high:g} (got {value!r})"),
    "out_of_range_int": N_("must be a whole number from {low} to {high:,} (got {value!r})"),
    "at_least": N_("must be at least {low:g} (got {value!r})"),
    "not_whole": N_("must be a whole number (got {value!r})"),
    "not_a_number": N_("must be a number (got {value!r})"),
    "not_finite": N_("must be a finite number (got {value!r})"),
    "not_positive": N_("must be above 0 (got {value!r})"),
    "not_a_size": N_("takes a size like 7B, 350M or 1.5e9 (got {value!r})"),
    "not_a_duration": N_("takes a duration like 48h, 3d or 90min (got {value!r})"),
    "not_a_latency": N_("takes a latency like 2s or 150ms (got {value!r})"),
    "unit_required": N_("{value} what? give its unit, e.g. {example}"),
    "not_bool": N_("must be true or false (got {value!r})"),
    "not_a_list": N_("must be a list of: {valid}"),
    "not_text": N_("must be text (got {value!r})"),
    "too_long": N_("must be at most {n} characters"),
    "too_many": N_("at most {n} items"),
    "too_many_replicas": N_("{total} replicas in all; a MIG plan places at most {n}"),
    # data from outside, past its limits (whichgpu.untrusted)
    "too_deep": N_("nested more than {depth} levels deep"),
    "too_many_values": N_(
        "holds more than {n:,} values (a YAML alias counts each time it is used)"
    ),
    "number_too_long": N_("holds a number of more than {digits} digits"),
    "null_value": N_("null is not a value here: leave the field out for its default"),
    "file_too_large": N_("the file is {size:,} bytes; at most {limit:,} are read"),
    "bad_job_name": N_(
        "{value!r} is not a valid job name: lowercase letters, digits and '-', at most 63, "
        "starting and ending with a letter or digit (try {suggestion!r})"
    ),
    "empty_run": N_("an empty command: give the command the job runs"),
    "recompute_contradicts": N_(
        "{checkpointing} asks for recomputation '{given}' and {recompute} for '{mode}': give one"
    ),
    "json_and_export": N_("--json and --export print different things: give one"),
    "not_for_kind": N_("{kind} does not use it; {kind} takes {valid}"),
    "not_for_kind_at_all": N_("{kind} does not use it"),
    "epochs_without_size": N_("passes over a dataset whose size is not given: give {sizes}"),
    "unknown_family": N_("no model of family {value!r}; the families: {valid}"),
    "buy_only": N_("applies only to buying (mode buy)"),
    "count_splits_heads": N_(
        "{count} GPUs do not split the model's {heads} attention ({kv_heads} KV) heads for "
        "tensor parallelism; counts that do: {valid}"
    ),
    "config_missing_file": N_("names {path}, which is not a file (unset it to use no config)"),
    "not_a_table": N_("must be a table of fields"),
    "not_json": N_("not valid JSON ({reason})"),
    "not_yaml": N_("not valid YAML: {reason}"),
    "duplicate_key": N_("gives the key {key!r} twice: give each key once"),
    "not_toml": N_("not valid TOML: {reason}"),
    "not_utf8": N_("not UTF-8 text"),
    "lone_surrogate": N_("holds {escape}, half of a UTF-16 surrogate pair: not a character"),
    "unreadable": N_("cannot read it: {reason}"),
    "unwritable": N_("cannot write {path}: {reason}"),
    "bad_today": N_("WHICHGPU_TODAY must be a date like 2026-11-29 (got {value!r})"),
    # files and caches (hostile input)
    "not_regular_file": N_("is {kind}, not a regular file"),
    "file_over_limit": N_("the file holds more than {limit:,} bytes; at most {limit:,} are read"),
    "stdout_failed": N_("cannot write to standard output: {reason}"),
    "not_a_date": N_("must be a date like 2026-11-29, 2026-11 or 2026 (got {value!r})"),
    "date_in_future": N_("{value} is in the future (today is {today})"),
    "date_too_old": N_("{value} is before {low}: not a date of a price"),
    "snapshot_corrupt": N_("not a price snapshot ({reason})"),
    "snapshot_changed": N_("changed since it was fetched (its SHA-256 is not the one recorded)"),
    "snapshot_ignored": N_(
        "{problem}; the price snapshot is ignored, the shipped prices are in use "
        "({update} fetches a new one)"
    ),
    "snapshot_cloud_ignored": N_(
        "{problem}; the snapshot's {cloud} offers are left out ({update} fetches them again)"
    ),
    # names
    "unknown_feature": N_("unknown feature {name!r}; valid features: {valid}"),
    "unknown_market": N_("unknown market {name!r}; valid markets: {valid}"),
    "no_gpu_to_compare": N_("name at least one GPU to compare"),
    "gpu_listed_twice": N_("{name!r} names {gpu}, which is already in the comparison"),
    "no_mig": N_("{gpu} has no MIG; MIG GPUs: {gpus}"),
    # models
    "model_or_size": N_('give a model preset or a size (params = "7B")'),
    "model_and_config": N_("give a model, params or a config, only one"),
    "model_file_and_preset": N_("give a model file or a preset, not both"),
    "params_range": N_("must be between 1M and 10T parameters (got {value!r})"),
    "takes_no_model": N_("a {kind} component takes no model"),
    "config_not_object": N_("config.json must be a JSON object"),
    "config_no_model_type": N_("config.json: missing 'model_type'"),
    "config_model_type": N_(
        "config.json: model_type {family!r} is not supported; supported: {valid}"
    ),
    "config_missing": N_("config.json ({family}): missing {key!r}"),
    "config_whole": N_("config.json: {key!r} must be a whole number >= 0 (got {value!r})"),
    "config_positive": N_("config.json: layers, hidden size and attention heads must be positive"),
    "config_positive_key": N_("config.json: {key!r} must be at least 1 (got {value!r})"),
    "config_too_large": N_("config.json: {key!r} is at most {high:,} (got {value!r})"),
    "config_kv_heads": N_(
        "config.json: {kv_heads} key/value heads must divide the {heads} attention heads"
    ),
    "config_heads": N_(
        "config.json: the hidden size {hidden} is not a multiple of the {heads} attention heads"
    ),
    "vit_config": N_("ViT config.json: missing or bad {key}"),
    "resnet_bottleneck": N_("ResNet config.json: only bottleneck ResNets are supported"),
    "resnet_config": N_("ResNet config.json: missing or bad {key}"),
    "preset_metadata": N_("preset {name}: missing its _whichgpu metadata"),
    "hub_missing": N_("needs huggingface_hub: pip install 'whichgpu[hub]'"),
    "hub_fetch": N_("could not fetch {repo}/config.json from the Hub: {reason}"),
    "price_fetch": N_(
        "could not fetch {url}: {reason} (nothing changed: the prices in use are as before)"
    ),
    "learned_positions": N_(
        "{model} has {n} learned positions: sequences of {tokens} tokens "
        "do not fit (give {seq}, or {prompt} + {generate}, of at most {n})"
    ),
    # jobs
    "gpus_multiple": N_("must be a multiple of {tp} × {pp} × {cp} ({n}); got {gpus}"),
    "cp_sequence": N_(
        "context parallelism of {cp} splits a training sequence into {split} chunks (two a "
        "GPU, for the causal mask's balance, as Megatron-LM requires): the sequence, {seq} "
        "tokens, must be a multiple of {split}"
    ),
    "tp_heads": N_(
        "{tp} GPUs of tensor parallelism do not split {model}'s {heads} attention heads"
    ),
    "pp_layers": N_("{pp} pipeline stages need a layer each; {model} has {layers}"),
    "gpu_is_model": N_(
        "{name!r} names the model {model}, not a GPU: {fit} says which GPUs hold it, and "
        "{models} lists the model presets"
    ),
    "serving_no_fit": N_("{model} does not fit {count} × {gpu} with room for one sequence"),
    "tp_instance": N_(
        "a tensor-parallel split of {tp} spans instances of {per_instance} × {gpu}, and a "
        "served replica's all-reduces and expert exchanges run inside one instance, not over "
        "the network between them: give at most {per_instance}, or {flag} {tp}"
    ),
    "serving_no_fit_instance_none": N_(
        "{model} does not fit one instance of {per_instance} × {gpu} with room for one "
        "sequence ({needed:,.1f} GiB a GPU needed, {capacity:,.1f} GiB available), and a "
        "replica stays within one instance: its all-reduces and expert exchanges do not cross "
        "the network"
    ),
    "serving_no_fit_instance": N_(
        "{model} does not fit one instance of {per_instance} × {gpu} with room for one "
        "sequence ({needed:,.1f} GiB a GPU needed, {capacity:,.1f} GiB available), and a "
        "replica stays within one instance: its all-reduces and expert exchanges do not cross "
        "the network; {count} GPUs in one instance would hold it ({flag} {count})"
    ),
    "latency_out_of_reach_on": N_(
        "{target} {percentile} of {limit_ms:,} ms is out of reach for {model} on {count} × "
        "{gpu}: {best_ms:,} ms at the lightest load at the slow end of the estimate's likely "
        "range ({point_ms:,} ms at its middle)"
    ),
    "latency_out_of_reach": N_(
        "{target} {percentile} of {limit_ms:,} ms is out of reach for {component}: the "
        "nearest is {option}, {best_ms:,} ms at the lightest load"
    ),
    "latency_out_of_reach_likely": N_(
        "{target} {percentile} of {limit_ms:,} ms is out of reach for {component}: the "
        "nearest is {option}, {best_ms:,} ms at the lightest load at the slow end of the "
        "estimate's likely range ({point_ms:,} ms at its middle; {setting} point holds the "
        "targets at the middle)"
    ),
    "sequence_context": N_("{model} reads {n:,} tokens at most; asked for {tokens:,}"),
    "serving_context": N_(
        "{model} reads {n:,} tokens at most; {prompt} + {generate} asks for {tokens:,}"
    ),
    "lengths_and_tokens": N_(
        "{name}'s means ({prompt} tokens in, {generate} out) set the lengths: give them or "
        "{prompt_field} and {generate_field}, not both"
    ),
    "kv_dtype_format": N_(
        "no engine that runs {quant} weights ({engines}) keeps its KV cache in {kv}"
    ),
    "engine_kv_dtype": N_(
        "{engine} keeps no {kv} KV cache (16 bits or its own formats); engines that do: {instead}"
    ),
    "quant_experts_only": N_(
        "{quant} quantises a mixture of experts' expert weights (gpt-oss's checkpoints); "
        "{model} has no experts: give int4 or fp8 for its weights"
    ),
    "engine_format": N_(
        "{engine} does not run {quant} weights (it runs {valid}); engines that do: {instead}"
    ),
    "vp_needs_pp": N_("{vp} virtual pipeline stages need a pipeline: set {pp} above 1"),
    "vp_layers": N_(
        "{vp} virtual stages need a layer each; {model} over {pp} pipeline stages has {layers} "
        "in the largest"
    ),
    "recompute_layers_stage": N_(
        "a block of {n} recomputed layers: Megatron's recompute_num_layers runs from 1 to "
        "the layers a pipeline rank holds, and {model} over {pp} pipeline stages holds "
        "{layers} a rank"
    ),
    "global_batch_split": N_(
        "a global batch of {global_batch} is not a whole number of steps of {per_step} "
        "(micro-batch {batch} × {dp} data-parallel GPUs)"
    ),
    "lora_targets_unknown": N_("{model} has no linear module {names}; valid: {valid}{hint}"),
    "lora_targets_empty": N_("LoRA targets '{value}' name no module; valid: {valid}"),
    "memory_format_inference": N_(
        "a memory layout is a training setting: inference does not use it (a served "
        "network's layout is the engine's)"
    ),
    "memory_format_not_cnn": N_(
        "a memory layout (channels_last or contiguous) lays out a convolutional network's "
        "activations; {model} has no convolutions"
    ),
    "zero_inference": N_("ZeRO shards training state; inference shards weights with {tp}"),
    "engine_cuda_only": N_(
        "{engine} runs on NVIDIA GPUs only (CUDA), not on the {gpu}; engines that run there: "
        "{instead}"
    ),
    "engine_min_capability": N_(
        "{engine} runs from compute capability {needed}; the {gpu} has {has}; engines that run "
        "there: {instead}"
    ),
    "engine_capability": N_(
        "{engine} runs {quant} weights from compute capability {needed}; the {gpu} has {has}; "
        "engines that run them there: {instead}"
    ),
    "pp_inference": N_(
        "pipeline stages are planned for training; a served model is split with {tp}"
    ),
    "inference_tp_count": N_(
        "{tp} GPUs a copy makes {replicas} copies of the model on {count} GPUs, which only "
        "the serving planner sizes: give {engine} too, or {count} to split one copy over all"
    ),
    "utilization_inference": N_("is for inference (the task is {task})"),
    "images_model": N_("{model} works on images: give {images}, not {tokens}"),
    "tokens_model": N_("{model} works on tokens: give {tokens}, not {images}"),
    "precision_unsupported": N_(
        "the {gpu} has no {unit} tensor cores for {precision}; {instead} runs there"
    ),
    "no_throughput_model": N_("no throughput model for {workload} on {gpu}"),
    "estimate_needs_model": N_("estimate needs a preset model ({model}) or {params}"),
    # recommend
    "give_workload": N_("give a workload: {task} (with {model} or {params}) or {file}"),
    "file_and_flags": N_("{file} describes the components; drop {flag} or put it in the file"),
    "rate_for_inference": N_("a request rate is for inference"),
    "size_or_hours": N_("give a job size ({size}) or hours of use, not both"),
    "render_frames": N_("a render component needs frames (or hours)"),
    "speculative_needs_method": N_(
        "draft tokens and an acceptance length describe speculative decoding: give {speculative} "
        "(eagle3, mtp or ngram)"
    ),
    "quantize_on_without_quant": N_(
        "where weights are quantised means nothing without a weight format: give {quant}"
    ),
    "engine_speculative": N_("{engine} runs no {method} drafter; these do: {instead}"),
    "engine_layout": N_(
        "{engine} runs no separate prefill and decode workers; these do: {instead}"
    ),
    "layout_format": N_(
        "no engine that runs separate prefill and decode workers runs {quant} weights (these "
        "run them: {engines}): give another {quant_field}, or {layout_field} aggregated"
    ),
    "recompute_layers_framework": N_(
        "recomputing a block of layers is Megatron's (recompute_num_layers): give {framework} "
        "megatron or nemo"
    ),
    "recompute_layers_mode": N_(
        "recomputing a block of layers is full recomputation's, and the recomputation asked "
        "is {mode}: leave one of them out"
    ),
    "recompute_layers_inference": N_(
        "recomputing layers is a training job's: an inference job keeps no activations"
    ),
    "layout_count": N_(
        "separate prefill and decode workers take two GPUs at least, {count} given: give 2 or more"
    ),
    "layout_not_served": N_(
        "a serving layout is planned for a served model: give a request rate, a latency "
        "target or an engine"
    ),
    "speculative_not_served": N_(
        "speculative decoding is planned for a served model: give a request rate, a latency "
        "target or an engine"
    ),
    "speculative_training": N_("speculative decoding is a served model's: a training job has none"),
    "speculative_no_mtp": N_(
        "{model} ships no multi-token prediction module (DeepSeek-V3 and R1 do): use eagle3 "
        "or ngram"
    ),
    "speculative_acceptance": N_(
        "an acceptance length of {value} tokens a step is outside 1 to {high} (a step of {k} "
        "draft tokens yields at most {high})"
    ),
    "shared_prefix_training": N_("a shared prefix is a served model's: a training job has none"),
    "shared_prefix_longer": N_(
        "a shared prefix of {shared} tokens leaves nothing of the prompt ({prompt} tokens) "
        "to prefill: it is the start every prompt has in common, shorter than the prompt"
    ),
    "render_scene_no_fit": N_(
        "the scene needs {needed} GiB on each GPU with the CUDA context; the {gpu} holds "
        "{capacity} GiB: choose a GPU with more memory"
    ),
    "image_resolution_stride": N_(
        "resolution {resolution} px: {model} takes sides that are multiples of {stride} px "
        "(try {low:d} or {high:d})"
    ),
    "image_quant": N_("image generation loads weights as {valid}, not {quant}"),
    "model_is_pipeline": N_(
        "{name} is an image-generation model: set {task} to image (generate), image-lora or "
        "image-finetune (fine-tune)"
    ),
    "image_optimizer": N_("image fine-tuning runs {valid}, not {optimizer}"),
    "image_quant_full": N_(
        "a full fine-tune trains every weight in FP32: a {quant} base is for image-lora"
    ),
    "image_precision": N_("image generation runs in {valid}, not {precision}"),
    "image_needs_pipeline": N_(
        "image generation needs an image model preset: sd-1.5, sdxl, sd-3-medium, "
        "sd-3.5-large, flux.1-dev or flux.1-schnell ({listing})"
    ),
    "fp64_tflop": N_("an fp64 component needs tflop of work (or hours)"),
    "no_market": N_("name at least one market"),
    "no_components": N_("give at least one [[components]] table"),
    "not_a_workload": N_("a workload file is a table of fields"),
    # mig
    "service_model_and_memory": N_("give a service's model or its memory_gib, not both"),
    "no_services": N_("give at least one service (or profiles and a gpu)"),
    "services_and_profiles": N_("give services or profiles, not both"),
    "profiles_need_gpu": N_("profiles need the gpu they are for"),
    "no_profiles": N_("name at least one MIG profile"),
    "file_and_service_flags": N_("{file} describes the services; drop the service flags"),
    "give_service": N_("give a service: {model}, {params} or {memory} (or {file})"),
    "no_service_tables": N_("give at least one [[services]] table"),
    # export
    "skypilot_name": N_(
        "SkyPilot has no accelerator name for {gpu} in whichgpu's catalog; the best option "
        "it names is {option} (accelerators: {accelerators}), or export to kubernetes or slurm"
    ),
    "skypilot_no_name": N_(
        "SkyPilot has no accelerator name for {gpu} in whichgpu's catalog, nor for another "
        "option: export to kubernetes or slurm"
    ),
    "skypilot_mig": N_("SkyPilot rents whole GPUs; export a MIG plan to kubernetes"),
    "slurm_mig": N_("export a MIG plan to kubernetes, or configure MIG GRES in Slurm"),
    "kubernetes_nodes": N_(
        "{n} GPUs span nodes: export to skypilot or slurm, or use a multi-node operator "
        "(Kubeflow PyTorchJob to train, LeaderWorkerSet to serve)"
    ),
    "nothing_to_export": N_("nothing to export: no option meets the workload's constraints"),
    "deploy_not_served": N_(
        "{system} deploys a served model; export a training job to skypilot, kubernetes or slurm"
    ),
    "deploy_engine": N_(
        "this export writes {system}'s workers for {valid}, not {engine}: give --engine with "
        "one of them, or export to skypilot, kubernetes or slurm"
    ),
    "deploy_mig": N_("{system}'s workers take whole GPUs; export a MIG plan to kubernetes"),
    "deploy_rocm": N_("whichgpu knows no ROCm image of {engine} for the {gpu}: give --image"),
    "export_replica_spans": N_(
        "a serving replica of the pick takes {gpus} GPUs, more than an instance of {per_node} "
        "holds: the export starts one server a node, no multi-node launch (Ray, MPI)"
    ),
    "deploy_vendor": N_(
        "{system}'s pods here ask for NVIDIA GPUs and CUDA images, not the {gpu}: give "
        "--requires cuda, or export to skypilot or slurm"
    ),
    "deploy_checkpoint": N_(
        "the pick loads a pre-quantized checkpoint whichgpu cannot name; export to skypilot "
        "or slurm, which read it from $WHICHGPU_MODEL"
    ),
    # optional parts
    "missing_extra": N_("{feature} needs {modules}: pip install 'whichgpu[{extra}]'"),
    # the CLI's own options
    "plot_format": N_("writes .png or .svg files (got {path})"),
}
