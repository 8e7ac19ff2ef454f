"""The same served workload in the lower weight formats engineers commonly serve it in
(and an image pipeline's denoiser in FP8 weights, as diffusers loads it).

A 16-bit model served at a request rate costs about half as much in FP8 on the GPUs whose
tensor cores run FP8 (Ada, Hopper, Blackwell; and CDNA 3 through the engines' ROCm builds):
half the weight bytes a decode step reads, twice the KV cache room. On Blackwell, NVFP4
halves the weights again (4.5 bits) and runs the GEMMs on FP4 tensor cores; an FP8
checkpoint (DeepSeek-V3's) is planned in it too, as NVIDIA publishes such models
(nvidia/DeepSeek-R1-0528-FP4). Where the search in a format finds an option cheaper (or
faster) than the pick by more than the pick's estimate error, or one at all where nothing met
the request, the answer names it, with its quality caveat: FP8 weights and activations keep
accuracy within about 1 % of BF16 across model sizes (Kurtic et al., 2024, "Give Me BF16 or
Give Me Death? Accuracy-Performance Trade-Offs in LLM Quantization", arXiv:2411.02355, §4);
NVFP4 within about 1 % of FP8 on the models NVIDIA measured (NVIDIA Technical Blog,
2025-06-24, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference": a
vendor's figure, said as one).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from whichgpu.errors import Ref
from whichgpu.notes import Note, note

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.catalog.store import Catalog
    from whichgpu.commands.recommend.options import Option
    from whichgpu.inputs.requests import Workload
    from whichgpu.plan import Hardware, Run

    #: The workload's options on some GPUs (unranked), and options ranked on the objective
    Search = tuple[Callable[[Workload, list[GPU], Collection[Hardware] | None], list[Option]],
                   Callable[[list[Option]], list[Option]]]  # fmt: skip

#: The weight formats the alternatives are planned in (``--quant``), each with the notes that
#: name it where it beats the pick and where it alone meets the request (their caveats differ)
LOWER_FORMATS: dict[str, tuple[str, str]] = {
    "fp8": ("reason_quant_cheaper", "infeasible_quant"),
    "nvfp4": ("reason_quant_cheaper_nvfp4", "infeasible_quant_nvfp4"),
}
#: The notes of an image pipeline's denoiser in FP8 weights, whose caveat is its images':
#: Hugging Face's diffusers team found 8-bit weights' images hard to tell from BF16's
#: without close inspection (Hugging Face blog, "Exploring Quantization Backends in
#: Diffusers", 2025-05-21; diffusers/FLUX.1-dev-torchao-fp8, float8 weight-only)
IMAGE_FORMAT_NOTES = ("reason_quant_cheaper_image", "infeasible_quant_image")


def in_lower_format(workload: Workload, quant: str) -> Workload | None:
    """``workload`` with each served model component (a request rate, a latency target, an
    engine or an offline batch of tokens: :func:`~whichgpu.plan.jobs.serves`; no precision,
    no quantisation asked, no engine that cannot run ``quant``), and each image generation
    whose denoiser loads in ``quant`` (:data:`~whichgpu.estimate.diffusion.IMAGE_QUANTS`:
    weight-only, diffusers' TorchAoConfig for FP8),
    whose checkpoint ships in more bits than ``quant`` (16 bits, or FP8 for NVFP4) in
    ``quant``; None where no component changes."""
    from whichgpu.estimate.diffusion import IMAGE_QUANTS
    from whichgpu.job import QUANT_BITS
    from whichgpu.job.engine_releases import engine_profile
    from whichgpu.plan.jobs import model_job, serves

    changed = False
    components = []
    for component in workload.components:
        engine = engine_profile(component.engine) if component.engine else None
        runs = engine is None or quant in engine.formats
        drawn = component.kind == "image" and component.model is not None and quant in IMAGE_QUANTS
        open_format = component.quant is None and component.precision is None
        if drawn and open_format:
            component = replace(component, quant=quant)
            changed = True
        elif serves(component) and runs and open_format:
            _arch, job = model_job(component)
            shipped = 16.0 if job.quant is None else QUANT_BITS[job.quant]
            if job.quant in (None, "fp8") and shipped > QUANT_BITS[quant]:
                component = replace(component, quant=quant)
                changed = True
        components.append(component)
    return replace(workload, components=tuple(components)) if changed else None


def lower_format_notes(
    catalog: Catalog,
    workload: Workload,
    objective: str,
    pick: Option | None,
    search: Search,
    options: Sequence[Option] = (),
) -> list[Note]:
    """What the workload would take in each of :data:`LOWER_FORMATS`, searched (``search``:
    the workload's options on some GPUs, and a ranking on ``objective``) on the GPUs whose
    tensor cores run the format (elsewhere the engines refuse it or dequantise it); an
    image pipeline's on the GPUs where its 16-bit ``options`` did not run whole (weight-only
    formats dequantise to 16 bits on any GPU and compute no faster: what they buy is the
    memory that spares a CPU offload)."""
    from whichgpu.estimate.perf import runs_natively

    out = []
    images = all(c.kind == "image" for c in workload.components)
    cramped = {o.gpu.id for o in options if not all(_whole(run) for run in o.runs)}
    for quant in LOWER_FORMATS:
        lower = in_lower_format(workload, quant)
        able = [g for g in catalog.gpus
                if (g.id in cramped if images else runs_natively(g, quant))]  # fmt: skip
        if lower is None or not able:
            continue
        said = lower_format_note(_ranked(catalog, lower, able, objective, search), objective,
                                 pick, quant, images)  # fmt: skip
        if said is not None:
            out.append(said)
    return out


def _whole(run: Run) -> bool:
    """Whether ``run`` holds its job with nothing offloaded to the host (an image
    pipeline's CPU offload). A batch below the largest whichgpu chooses is not counted:
    weight-only FP8 dequantises its weights every step, which a larger batch would have to
    win back first, and planning those GPUs too doubled an image recommend's compute (SDXL's
    10,000 images: 18.5 to 30.7 ms median) for no note in the cases tried."""
    image = run.estimate.image if run.estimate is not None else None
    return run.fits and (image is None or image.job.offload == "none")


def _ranked(
    catalog: Catalog, lower: Workload, gpus: list[GPU], objective: str, search: Search
) -> list[Option]:
    """``lower``'s options on ``gpus``, ranked, as far as their first (all that
    :func:`lower_format_note` reads). On cost, where every component is a service whose cost
    is its $/h (times its hours), GPU counts and instance shapes are planned cheapest dated
    offer first (:func:`~whichgpu.commands.recommend.candidates.dated_floor_usd_per_h`), a
    GPU's shapes of one price together, and the search stops at the first whose cheapest
    dated offer costs more an hour than a feasible option found on a dated offer (the
    ranking puts dated offers first, then the lowest figure): none of its options, nor any
    after it, could come first (branch and bound: Land & Doig, 1960). GPUs no dated offer
    rents come last, whole. Elsewhere every GPU is planned."""
    from whichgpu.commands.recommend.candidates import dated_floor_usd_per_h, hardware_for
    from whichgpu.plan.jobs import serves

    options_on, rank_of = search
    per_hour = lower.constraints.mode == "rent" and all(
        serves(c) and c.tokens is None and c.images is None for c in lower.components
    )
    if objective != "cost" or not per_hour:
        return rank_of(options_on(lower, gpus, None))
    c = lower.constraints
    inf = float("inf")
    floors: dict[float, dict[str, list[Hardware]]] = {}
    by_id = {gpu.id: gpu for gpu in gpus}
    undated: dict[str, list[Hardware]] = {}
    for gpu in gpus:
        for hw in hardware_for(catalog, gpu, lower.components, c):
            floor = dated_floor_usd_per_h(catalog, hw, c)
            shelf = undated if floor == inf else floors.setdefault(floor, {})
            shelf.setdefault(gpu.id, []).append(hw)
    options: list[Option] = []
    bound = inf  # the least $/h of a feasible option on a dated offer
    for floor in sorted(floors):
        if floor > bound:
            return rank_of(options)
        for gpu_id, shapes in floors[floor].items():
            found = options_on(lower, [by_id[gpu_id]], shapes)
            options += found
            bound = min([bound, *(o.usd_per_h or inf for o in found
                                  if o.feasible and o.price_as_of != "undated")])  # fmt: skip
    if bound == inf:  # nothing feasible on a dated offer: the shapes sold undated, a GPU
        for gpu_id, shapes in undated.items():  # no dated offer rents whole (as it is shown)
            whole = not any(gpu_id in shelf for shelf in floors.values())
            options += options_on(lower, [by_id[gpu_id]], None if whole else shapes)
    return rank_of(options)


def lower_format_note(
    ranked: Sequence[Option],
    objective: str,
    pick: Option | None,
    quant: str,
    images: bool = False,
) -> Note | None:
    """What the workload would take in ``quant`` (``ranked``: the options of
    :func:`in_lower_format`'s workload, ranked on ``objective``) where that beats the pick
    by more than its estimate error, or where nothing met the request: the option, its
    figure beside the pick's, the field that asks for it; with an image pipeline's caveat
    where the workload draws ``images``."""
    from whichgpu.commands.recommend.options import hw_text, money, score_of, typical_error

    # on a dated offer where the pick is on one (an undated price is a guess, which the
    # ranking puts after every dated one: it does not beat a signed pick either)
    signed = pick is not None and pick.price_as_of != "undated"
    best = next((o for o in ranked if o.feasible
                 and not (signed and o.price_as_of == "undated")), None)  # fmt: skip
    if best is None:
        return None
    cheaper, alone = IMAGE_FORMAT_NOTES if images else LOWER_FORMATS[quant]
    field = Ref(("quant",))
    if pick is None:
        return note(alone, quant=quant, option=hw_text(best), usd_per_h=money(best.usd_per_h),
                    field=field)  # fmt: skip
    mine, theirs = score_of(pick, objective), score_of(best, objective)
    if mine is None or theirs is None or not mine:
        return None
    higher_better = objective == "value" or (objective == "time" and pick.time_s is None)
    gain = (theirs - mine) / mine if higher_better else (mine - theirs) / mine
    if gain <= typical_error(pick):
        return None
    if pick.time_s is not None and pick.cost_usd is not None and best.cost_usd is not None:
        return note(f"{cheaper}_job", quant=quant, option=hw_text(best), pick=hw_text(pick),
                    cost=best.cost_usd, pick_cost=pick.cost_usd, gain=round(gain, 3),
                    hours=(best.time_s or 0.0) / 3600, pick_hours=pick.time_s / 3600,
                    field=field)  # fmt: skip
    return note(cheaper, quant=quant, option=hw_text(best), pick=hw_text(pick),
                usd_per_h=money(best.usd_per_h), pick_usd_per_h=money(pick.usd_per_h),
                gain=round(gain, 3), field=field)  # fmt: skip
