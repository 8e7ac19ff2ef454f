"""The messages of the notes that block an option (recommend's and the MIG planner's
blockers) and of an answer where nothing is feasible, with what would do: merged into
:data:`whichgpu.note_messages.MESSAGES` (kept here, with the errors' messages, so that the
ground floor stays a few modules)."""

from __future__ import annotations

from whichgpu.i18n import N_, Np_, Plural

BLOCKER_MESSAGES: dict[str, str | Plural] = {
    # recommend: what blocks an option
    "block_memory": N_(
        "{component} needs {needed:,.1f} GiB per GPU; {capacity:,.1f} GiB available"
    ),
    "block_no_model": N_("no throughput model for {component} on {gpu}"),
    "block_rate": N_("{component} serves {rate:,.1f} tokens/s of the {need:,.1f} needed"),
    "block_global_batch": N_(
        "{component}: a global batch of {global_batch:,} is not a whole number of micro-batches "
        "of {batch} over the data-parallel GPUs of any layout on {hardware}"
    ),
    "block_capability": N_("{gpu} lacks {missing}"),
    "block_unpriced": N_("no price for {gpu} in {markets}"),
    "block_instance_shape": N_(
        "no offer rents {gpus} × {gpu} in {markets}: it is sold as instances of {shapes} GPUs"
    ),
    "block_budget_per_h": N_("${usd_per_h:,.2f}/h is over the ${budget:,.2f}/h budget"),
    "block_budget": N_("${cost:,.2f} is over the ${budget:,.2f} budget"),
    "block_deadline": N_("{hours:,.1f} h is past the {deadline:,.1f} h deadline"),
    "block_deadline_likely": N_(
        "{hours:,.1f} h at the slow end of the estimate's likely range ({point:,.1f} h at its "
        "middle) is past the {deadline:,.1f} h deadline"
    ),
    "block_budget_likely": N_(
        "${cost:,.2f} at the slow end of the estimate's likely range (${point:,.2f} at its "
        "middle) is over the ${budget:,.2f} budget"
    ),
    "block_rate_headroom": N_(
        "{component} serves {capacity:,.2f} requests/s at most here: {demand:,.2f} asked is "
        "{share:.0%} of it, past the {target:.0%} a service is planned to run at"
    ),
    "block_rate_headroom_slow": N_(
        "{component} serves {capacity:,.2f} requests/s at most here at the slow end of its "
        "likely range ({point:,.2f} at its middle): {demand:,.2f} asked is {share:.0%} of it, "
        "past the {target:.0%} a service is planned to run at"
    ),
    # recommend: nothing feasible
    "infeasible_nothing": N_("No GPU in the catalog can run this workload."),
    "infeasible_capability": N_("No GPU in the catalog has all of: {capabilities}."),
    "infeasible_memory": Np_(
        "{component} does not fit on {max_gpus} GPU; {count} × {gpu} would hold it (raise "
        "max_gpus).",
        "{component} does not fit within {max_gpus} GPUs; {count} × {gpu} would hold it (raise "
        "max_gpus).",
        "max_gpus",
    ),
    "infeasible_no_count": N_(
        "{component} fits on no number of GPUs as it is (its activations are not sharded); on "
        "{max_gpus} × {gpu}, these changes would make it fit:"
    ),
    "infeasible_services": N_(
        "{services} isolated services need {services} GPUs or MIG slices; at most {max_gpus} "
        "GPUs allowed (raise max_gpus)."
    ),
    "infeasible_no_change": N_(
        "{component} fits on no number of GPUs, and no change whichgpu knows makes it fit on "
        "the {gpu}."
    ),
    "infeasible_budget": N_(
        "Over budget: the cheapest option, {option}, costs ${cost:,.2f} (budget ${budget:,.2f})."
    ),
    "infeasible_rate": N_(
        "{component}: {option} serves {capacity:,.2f} requests/s at most under the targets; "
        "{demand:,.2f} at the {target:.0%} a service is planned to run at takes {copies} of "
        "it, {gpus} GPUs for ${usd_per_h:,.2f}/h (raise {field} to {gpus})."
    ),
    "infeasible_quant": N_(
        "In {quant} weights ({field} {quant}), {option} would do it, for ${usd_per_h:,.2f}/h: "
        "FP8 weights and activations keep accuracy within about 1% of BF16 (Kurtic et al., "
        "2024, arXiv:2411.02355)."
    ),
    "infeasible_quant_nvfp4": N_(
        "In {quant} weights ({field} {quant}), {option} would do it, for ${usd_per_h:,.2f}/h: "
        "NVIDIA reports NVFP4 within about 1% of FP8's accuracy on the models it measured "
        "(NVIDIA Technical Blog, 2025-06-24), a vendor's figure: check it on your task."
    ),
    "infeasible_quant_image": N_(
        "With its denoiser in {quant} weights ({field} {quant}), {option} would do it, for "
        "${usd_per_h:,.2f}/h: Hugging Face found 8-bit weights' images hard to tell from "
        "BF16's without close inspection (blog, 'Exploring Quantization Backends in "
        "Diffusers', 2025-05-21)."
    ),
    "infeasible_budget_per_h": N_(
        "Over the hourly budget: the cheapest option, {option}, costs ${usd_per_h:,.2f}/h "
        "(budget ${budget:,.2f}/h)."
    ),
    "infeasible_deadline": N_(
        "Past the deadline: the fastest option, {option}, takes {hours:,.2f} h (deadline "
        "{deadline:,.1f} h) for ${cost:,.2f}."
    ),
    "infeasible_deadline_likely": N_(
        "Past the deadline: the fastest option, {option}, takes {hours:,.2f} h at the slow end "
        "of its likely range (deadline {deadline:,.1f} h) for ${cost:,.2f}; {field} point holds "
        "it to the estimate's middle."
    ),
    "infeasible_budget_likely": N_(
        "Over budget: the cheapest option, {option}, costs ${cost:,.2f} at the slow end of its "
        "likely range (budget ${budget:,.2f}); {field} point holds it to the estimate's middle."
    ),
}
