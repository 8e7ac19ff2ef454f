"""Settings a user leaves open, chosen per candidate GPU and count as a skilled engineer
would, and said: a training run left without ``batch`` is not run one sample at a time.

* **Micro-batch**: the largest power of two that fits the GPU's memory, up to what the usual
  recipe uses per GPU (:data:`BATCH_CAPS`). This is what Accelerate's
  ``find_executable_batch_size`` (and the HF Trainer's ``auto_find_batch_size``) do: start
  from the recipe's batch and halve it until the step fits.
* **Activation checkpointing**: off, or full recomputation when that runs faster (its
  cost, a second forward, is in the throughput: :mod:`whichgpu.estimate.perf`; what it buys
  is a larger micro-batch, which amortises the step's communication) or when nothing fits
  without it.

* **Layout** (several GPUs): data-parallel replicas, ZeRO-3 / FSDP, or tensor × pipeline
  × data parallelism, as the framework allows (:func:`whichgpu.estimate.parallel.
  training_layouts`): the fastest that fits, with the fewest pipeline stages that hold the
  model for each tensor-parallel degree, and no tensor × pipeline split larger than the
  smallest that holds it (Narayanan et al., 2021, §3.3, takeaway #2).
* **Gradient accumulation**: to the user's global batch, to 4M tokens a step when
  pretraining a language model, to the recipe's global batch where it sets one (NeMo's
  fine-tuning 128), else to the samples a GPU takes a step in the recipe where the
  micro-batch had to be lowered (the HF Trainer's 8 a device: micro-batch 2 accumulates 4).

A framework's recipe (:mod:`whichgpu.job.recipes`) sets the micro-batch cap and, where it sets
it, the recomputation. Inference left without ``batch`` serves one sequence at a time.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple

from whichgpu.catalog.records import GPU
from whichgpu.errors import Ref, WhichGPUError
from whichgpu.estimate.assumptions import TIGHT_HEADROOM
from whichgpu.estimate.memory import peak_bytes
from whichgpu.estimate.parallel import layout_name, scaled_job, training_layouts, usable_bytes
from whichgpu.estimate.perf import fp16_instead, missing_math_unit
from whichgpu.estimate.throughput import (
    ThroughputEstimate,
    check_model_runnable,
    checked_throughput,
)
from whichgpu.frozen import evolve
from whichgpu.i18n import N_
from whichgpu.inputs.requests import Component
from whichgpu.job import Checkpointing, Job
from whichgpu.job.recipe_layouts import RecipeLayout, recipe_layout
from whichgpu.job.recipes import (
    RECIPES,
    multi_gpu_defaults,
    parallel_of,
    recipe_memory_format,
    timed_framework,
)
from whichgpu.models.arch import ModelArch
from whichgpu.notes import Note, note

#: Tokens per optimizer step for pretraining a language model when the user gives no global
#: batch: Llama 2's 4M (Touvron et al., 2023, Table 1: "a global batch-size of 4M tokens"),
#: NeMo's Llama 3 recipes' 512 × 8,192 (nemo/collections/llm/recipes/llama3_8b.py).
TOKENS_PER_STEP = 4 * 2**20

#: Per-GPU micro-batch of the usual recipe, by model kind, and where it comes from.
BATCH_CAPS: dict[str, tuple[int, str]] = {
    # NVIDIA DeepLearningExamples, ResNet-50 v1.5 for PyTorch: 256 images per GPU with AMP
    "cnn": (256, N_("NVIDIA DeepLearningExamples' ResNet-50 recipe")),
    # DeiT (Touvron et al., 2021, §4): batch 1,024 over 8 GPUs, 128 per GPU
    "vit": (128, N_("the DeiT recipe")),
    # transformers.TrainingArguments: per_device_train_batch_size = 8 by default
    "decoder": (8, N_("the Hugging Face Trainer's default")),
    "encoder": (8, N_("the Hugging Face Trainer's default")),
}

#: Per-GPU micro-batch of a decoder's pretraining that names no framework: the recipes of the
#: harness it is timed as (MosaicML llm-foundry, scripts/train/yamls/pretrain/mpt-7b.yaml:
#: ``device_train_microbatch_size: 8``), not the HF Trainer's, which does not lay out the
#: tensor and pipeline splits such a job is searched over
PRETRAIN_CAP: tuple[int, str] = (8, N_("MosaicML llm-foundry's pretraining recipes"))


@lru_cache(maxsize=4096)
def needed_bytes(arch: ModelArch, job: Job) -> float:
    """The job's peak memory per GPU (:func:`~whichgpu.estimate.memory.peak_bytes`), once per
    (model, job): the search asks it of the same jobs on every GPU model of a count."""
    return peak_bytes(arch, job)


def _largest(arch: ModelArch, variants: tuple[Job, ...], capacity: float) -> Job | None:
    """The first of ``variants`` (micro-batches, descending) that fits ``capacity`` bytes, by
    bisection: memory grows with the batch, so if one fits every smaller one does."""
    best, low, high = None, 0, len(variants) - 1
    while low <= high:
        middle = (low + high) // 2
        if needed_bytes(arch, variants[middle]) <= capacity:
            best, high = variants[middle], middle - 1
        else:
            low = middle + 1
    return best


def accumulation(
    global_batch: int | None,
    arch: ModelArch,
    job: Job,
    batch: int,
    per_gpu: int | None = None,
    recipe_global: int | None = None,
    open_batch: bool = True,
) -> int | None:
    """Micro-batches a step of ``job`` at micro-batch ``batch`` accumulates: to the user's
    global batch (None when the micro-batch and the data-parallel degree cannot make it), to
    :data:`TOKENS_PER_STEP` for pretraining a language model, to the recipe's global batch
    where it sets one (``recipe_global``: NeMo's fine-tuning 128), else to the samples a GPU
    takes a step in the recipe (``per_gpu``: its micro-batch × accumulation, the HF
    Trainer's 8 × 1) where the micro-batch was lowered to fit: the job keeps the batch its
    recipe trains with, as a user of ``auto_find_batch_size`` raises
    ``gradient_accumulation_steps`` to keep it. An optimizer stepped in the backward
    accumulates nothing (torchtune refuses ``optimizer_in_bwd`` with
    ``gradient_accumulation_steps`` > 1)."""
    per_step = batch * job.dp
    if global_batch is not None:
        if global_batch % per_step:
            return None
        return global_batch // per_step
    if job.optimizer_in_backward:
        return 1
    if job.task == "train" and arch.kind in ("decoder", "encoder"):
        if not open_batch:  # a micro-batch the user gave is not multiplied unasked
            return job.grad_accum
        return max(1, round(TOKENS_PER_STEP / (per_step * job.seq)))
    if recipe_global is not None:
        return max(1, round(recipe_global / per_step))
    if per_gpu is not None:
        return max(1, per_gpu // batch)
    return job.grad_accum


#: One layout's candidates: its name, and per recomputation mode the micro-batch variants
#: (descending), each with its accumulation set.
Trials = tuple[tuple[str, tuple[tuple[Checkpointing, tuple[Job, ...]], ...]], ...]


#: The tensor, pipeline and context-parallel degrees a user fixed (None: each left open)
Layout = tuple[int | None, int | None, int | None]


@lru_cache(maxsize=1024)
def trials(
    arch: ModelArch,
    job: Job,
    count: int,
    parallel: str,
    batches: tuple[int, ...],
    modes: tuple[Checkpointing, ...],
    global_batch: int | None,
    fixed: Layout | None = None,
    per_gpu: int | None = None,
    recipe_global: int | None = None,
    open_batch: bool = True,
) -> Trials:
    """The jobs the search tries on ``count`` GPUs, built once for every GPU model (they do
    not depend on it; only which of them fit and how fast they run do): each layout, mode
    and micro-batch a global batch allows (:func:`accumulation`). ``fixed``: the tensor ×
    pipeline degrees the user gave, the only layout tried (``job``'s own where the
    framework lists none such)."""
    out = []
    for layout, strategy in _layouts(arch, job, count, parallel, fixed):
        per_mode = []
        for mode in modes:
            variants = []
            for batch in batches:
                accum = accumulation(global_batch, arch, layout, batch, per_gpu, recipe_global,
                                     open_batch)  # fmt: skip
                if accum is not None:
                    variants.append(
                        evolve(layout, batch=batch, checkpointing=mode, grad_accum=accum)
                    )
            if variants:
                per_mode.append((mode, tuple(variants)))
        if per_mode:
            out.append((strategy, tuple(per_mode)))
    return tuple(out)


def _layouts(
    arch: ModelArch, job: Job, count: int, parallel: str, fixed: Layout | None
) -> list[tuple[Job, str]]:
    layouts = training_layouts(arch, job, count, parallel)
    if fixed is None:
        return layouts

    def given(layout: Job) -> bool:  # each degree the user gave (None: left open)
        return all(
            want is None or have == want
            for want, have in zip(fixed, (layout.tp, layout.pp, layout.cp), strict=True)
        )

    kept = [(j, name) for j, name in layouts if given(j)]
    if kept:  # the framework's own first where a sharded one splits the same way
        return sorted(kept, key=lambda layout: parallel == "3d" and layout[0].zero == 3)
    tp, pp, cp = (1 if degree is None else degree for degree in fixed)
    # a sharding framework (FSDP, ZeRO) shards over the data-parallel rest: torchtitan's
    # 2-D FSDP × tensor parallel
    zero = 3 if parallel in ("fsdp", "zero") and count > tp * pp * cp else job.zero
    layout = evolve(job, gpus=count, tp=tp, pp=pp, cp=cp, zero=zero)
    return [(layout, layout_name(tp, pp, layout.dp, cp))]


def fp16_where_needed(label: str, job: Job, gpu: GPU) -> tuple[Job, tuple[Note, ...]]:
    """BF16 left open on a GPU without BF16 tensor cores (V100, T4): FP16, as the engines and
    frameworks take it there, and the note saying so (estimate, and recommend's training
    and serving, share it)."""
    fp16 = fp16_instead(gpu, job.precision)
    if fp16 is None:
        return job, ()
    said = note("chosen_precision", component=label, gpu=gpu.short_name, precision=fp16)
    return evolve(job, precision=fp16), (said,)


def configure(
    component: Component,
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    fixed: Layout | None = None,
) -> Configured:
    """``job`` on ``count`` × ``gpu`` with the open settings chosen: the job spread over the
    GPUs, its layout, and notes saying what was chosen. Values the user gave are kept."""
    chosen: list[Note] = []
    if component.precision is None:
        job, said = fp16_where_needed(component.label, job, gpu)
        chosen += said
    if not job.training:
        scaled, strategy = scaled_job(job, count, arch)
        return Configured(scaled, strategy, chosen)
    if arch.kind == "cnn" and job.memory_format is None:
        layout = recipe_memory_format(job)
        job = evolve(job, memory_format=layout)
        chosen.append(note("chosen_memory_format", component=component.label, layout=layout,
                           precision=job.math_precision,
                           field=Ref(("memory_format",))))  # fmt: skip
    # the framework's recipe, or for a fine-tune that names none the HF Trainer + PEFT one
    # it runs and is timed as (timed_framework): QLoRA's recomputation comes with it
    recipe = RECIPES.get(timed_framework(component.framework, job.task) or "")
    defaults = recipe.defaults(job.task) if recipe is not None else {}
    if count > 1:  # the framework's multi-GPU recipe, where it differs (the user's kept)
        recipe_changes = multi_gpu_defaults(component.framework, job.task)
        changes = {k: v for k, v in recipe_changes.items() if getattr(component, k) is None}
        if changes:
            job = evolve(job, **changes)
    cap, source = BATCH_CAPS.get(arch.kind, (8, N_("the Hugging Face Trainer's default")))
    if job.task == "train" and arch.kind == "decoder" and component.framework is None:
        cap, source = PRETRAIN_CAP
    if recipe is not None and "batch" in defaults:
        cap, source = int(defaults["batch"]), recipe.name
    open_batch = component.batch is None
    open_checkpointing = (
        component.checkpointing is None
        and "checkpointing" not in defaults
        and component.recompute_layers is None  # a block of layers asked: full, as asked
    )
    batches = [cap >> i for i in range(cap.bit_length()) if cap >> i] if open_batch else [job.batch]
    kept: Checkpointing = (
        job.checkpointing if component.checkpointing is not None
        or component.recompute_layers is not None
        else defaults.get("checkpointing", job.checkpointing)
    )  # fmt: skip
    modes: list[Checkpointing] = ["none", "full"] if open_checkpointing else [kept]
    parallel = parallel_of(component.framework, job.task)
    # the samples a GPU takes a step in the recipe, kept where the micro-batch is lowered
    per_gpu = cap * max(job.grad_accum, 1) if open_batch else None
    recipe_global = None
    if recipe is not None and job.task in ("finetune", "lora", "qlora"):
        recipe_global = recipe.finetune_global_batch
    layouts = trials(
        arch, job, count, parallel, tuple(batches), tuple(modes), component.global_batch, fixed,
        per_gpu, recipe_global, open_batch,
    )  # fmt: skip
    # with headroom first (the estimate's own error, the allocator's fragmentation: a choice
    # whichgpu makes should not be one it warns about), else as tight as it fits
    for headroom in (TIGHT_HEADROOM, 0.0):
        capacity = usable_bytes(gpu) * (1 - headroom)
        timed = timed_framework(component.framework, job.task)  # the recipe it runs as
        best = _search(arch, layouts, gpu, count, timed, capacity)
        if best is not None:
            break
    at = _recipe_at(component, arch, job, gpu, count, fixed, parallel)
    recipe_said: list[Note] = []
    if at is not None and best is not None:
        # the layout NVIDIA's recipe runs, where it is as fast as the search's best within
        # the estimate's typical error: what engineers deploy, on a tie
        # as Megatron runs it: its distributed optimizer (ZeRO-1) and the recipe's chunks
        given = (at.batch,) if open_batch else (job.batch,)
        as_run: dict[str, object] = {"vp": job.vp or at.vp, "zero": 1, "runtime": "megatron"}
        preset_modes = tuple(modes)
        launched = component.framework in ("megatron", "nemo")  # whose flags say it
        if at.recompute_layers and open_checkpointing and not job.recompute_layers and launched:
            # the preset's partial recomputation
            preset_modes = ("full",)
            as_run["recompute_layers"] = at.recompute_layers
        ran = tuple(
            (layout_name(at.tp, at.pp, count // (at.tp * at.pp * at.cp), at.cp),
             tuple((mode, tuple(evolve(j, **as_run) for j in variants))
                   for mode, variants in per_mode))
            for _strategy, per_mode in trials(
                arch, job, count, parallel, given, preset_modes,
                component.global_batch or at.global_batch, (at.tp, at.pp, at.cp),
            )[:1]
        )  # fmt: skip
        # at the whole usable memory: NVIDIA's runs are the evidence that it fits (where it
        # leaves less than the headroom, the plan says so: warn_tight_memory)
        theirs = _search(arch, ran, gpu, count, timed, usable_bytes(gpu))
        tolerance = _typical_train_error()
        if theirs is not None and theirs[0] >= best[0] * (1 - tolerance):
            gap = round(1 - theirs[0] / best[0], 3)
            recipe_said.append(note(
                "chosen_recipe_layout" if gap >= 0.005 else "chosen_recipe_layout_fastest",
                component=component.label, gpu=gpu.short_name, preset=at.preset,
                layout=theirs[2], gap=gap, tolerance=round(tolerance, 3), fastest=best[2],
            ))  # fmt: skip
            best = theirs
    if best is None:  # nothing fits: the smallest step, as the memory check will report it
        fallback = _smallest(arch, layouts) or scaled_job(
            replace(job, batch=batches[-1]), count, arch
        )
        return Configured(fallback[0], fallback[1], chosen)
    _rate_value, scaled, strategy, mode, estimate = best
    notes = chosen + recipe_said
    if open_batch:
        notes.append(
            note(
                "chosen_batch_pipeline" if scaled.pp > 1 else "chosen_batch",
                component=component.label,
                gpu=gpu.short_name,
                batch=scaled.batch,
                cap=cap,
                recipe=source,
                batch_field=Ref(("batch",)),
            )
        )
    if open_checkpointing and mode != "none":
        # a faster larger micro-batch, or the only way the step fits at all
        alone = evolve(scaled, checkpointing="none", batch=batches[-1])
        code = "chosen_checkpointing" if needed_bytes(arch, alone) <= capacity else (
            "chosen_checkpointing_needed")  # fmt: skip
        notes.append(note(code, component=component.label, gpu=gpu.short_name, batch=alone.batch))
    if (not open_batch and component.global_batch is None and job.task == "train"
            and arch.kind in ("decoder", "encoder")):  # fmt: skip
        # what a pretraining recipe would step on, as a suggestion: not imposed
        steps = max(1, round(TOKENS_PER_STEP / (scaled.batch * scaled.dp * scaled.seq)))
        notes.append(note("suggest_global_batch", component=component.label,
                          batch=scaled.batch, global_batch=steps * scaled.batch * scaled.dp,
                          field=Ref(("global_batch",))))  # fmt: skip
    if scaled.grad_accum > 1 or count > 1:
        notes.append(
            note(
                "chosen_layout",
                component=component.label,
                gpu=gpu.short_name,
                layout=strategy,
                accumulation=scaled.grad_accum,
                global_batch=scaled.global_batch,
                global_batch_field=Ref(("global_batch",)),
            )
        )
    return Configured(scaled, strategy, notes, estimate)


Best = tuple[float, Job, str, Checkpointing, ThroughputEstimate | None]


def _recipe_at(
    component: Component,
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    fixed: Layout | None,
    parallel: str,
) -> RecipeLayout | None:
    """NVIDIA's performance recipe's layout for pretraining ``arch`` on ``count`` × ``gpu``
    (:func:`~whichgpu.job.recipe_layouts.recipe_layout`), where the job runs Megatron's
    layouts (no framework, NeMo's or Megatron's) and the degrees the user fixed agree."""
    if job.task != "train" or parallel != "3d" or count == 1:
        return None
    if component.framework not in (None, "nemo", "megatron"):
        return None
    at = recipe_layout(arch.id, gpu.id, count, job.math_precision, job.seq)
    if at is None or fixed is None:
        return at
    agree = all(w is None or w == h for w, h in zip(fixed, (at.tp, at.pp, at.cp), strict=True))
    return at if agree else None


def _typical_train_error() -> float:
    """The typical (median absolute) error of a training throughput estimate, from its
    regime's likely band (:data:`~whichgpu.estimate.assumptions.MEDIAN_ERROR_PER_BAND`)."""
    from whichgpu.estimate.assumptions import MEDIAN_ERROR_PER_BAND
    from whichgpu.estimate.throughput import likely_rate

    band = likely_rate(1.0, "tokens/s", "llm-train")
    return MEDIAN_ERROR_PER_BAND * (band.high - band.low)


def _search(
    arch: ModelArch,
    layouts: Trials,
    gpu: GPU,
    count: int,
    framework: str | None,
    capacity: float,
) -> Best | None:
    """The fastest of ``layouts`` whose step fits ``capacity`` bytes: its rate, job, layout,
    recomputation and estimate."""
    best: Best | None = None
    fitted_pp: dict[int, int] = {}  # per tensor-parallel degree, the fewest stages that fit
    replicas_fit = False
    runnable: bool | None = None  # checked once: the layouts differ only in valid splits
    whole_split: int | None = None  # the smallest t·p that holds the model
    for strategy, per_mode in layouts:
        first = per_mode[0][1][0]
        tp, pp = first.tp, first.pp
        if pp > fitted_pp.get(tp, pp):
            # pipeline stages only once the model does not fit without them: a deeper
            # pipeline adds bubble (Narayanan et al., 2021, §3.3, takeaway #1); fitting only
            # by recomputing every layer does not count, as a deeper pipeline that spares it
            # the recomputation can run faster (NeMo's Llama 3.1 405B recipe on H100: TP 8 ×
            # PP 8 × CP 2 without recomputation, where PP 4 fits only recomputing)
            continue
        if replicas_fit and tp == 1 and pp == 1 and first.zero > 0:
            # whole replicas hold the largest micro-batch: sharding them (ZeRO/FSDP) runs the
            # same compute with more communication (Rajbhandari et al., 2020, §7: 1.5× the
            # all-reduce's volume at stage 3), so it cannot be faster
            continue
        if whole_split is not None and tp * pp > whole_split:
            # "a total model-parallel size of M = t·p should be used so that the model's
            # parameters and intermediate metadata fit in GPU memory; data parallelism can be
            # used to scale up training to more GPUs" (Narayanan et al., 2021, §3.3,
            # takeaway #2): a smaller split already holds it
            continue
        found: list[tuple[Job, Checkpointing]] = []
        for mode, variants in per_mode:
            fit = _largest(arch, variants, capacity)
            if fit is not None:
                if found and fit.batch <= found[-1][0].batch:
                    continue  # recomputation that buys no larger micro-batch only adds work
                found.append((fit, mode))
                if fit is variants[0]:
                    break  # the largest batch without recomputation: recomputing only adds work
        if found and found[0][1] == per_mode[0][0]:  # in the lightest recomputation tried
            fitted_pp[tp] = min(pp, fitted_pp.get(tp, pp))
        if found:
            replicas_fit = replicas_fit or (
                tp == 1 and pp == 1 and first.zero == 0 and found[0][0] is first
            )
            if first.zero == 0 and whole_split is None:
                whole_split = tp * pp
        if pp > 1:
            # a pipeline's bubble shrinks with the micro-batches a step runs (Narayanan et
            # al., 2021, eq. 1; interleaving needs them a multiple of the stages): under a
            # fixed global batch a smaller micro-batch can run faster, so each that fits
            # is tried, not the largest only
            variants_of = dict(per_mode)
            found = [
                (j, mode) for fit, mode in found for j in variants_of[mode] if j.batch <= fit.batch
            ]
        for fit, mode in found:
            # the fastest layout and recomputation (on a tie, the simpler: listed first)
            searching = len(found) > 1 or count > 1
            if searching and runnable is None:
                runnable = _runnable(arch, fit, gpu)
            est = _estimate(arch, fit, gpu, count, framework) if searching and runnable else None
            rate = _value(est) if searching else 1.0
            if best is None or rate > best[0]:
                best = (rate, fit, strategy, mode, est)
    return best


def _smallest(arch: ModelArch, layouts: Trials) -> tuple[Job, str] | None:
    """The step that needs the least memory of any layout (what a job that fits nowhere is
    reported as: the nearest it comes to fitting), and its layout."""
    steps = [(per_mode[-1][1][-1], strategy) for strategy, per_mode in layouts]
    return min(steps, key=lambda step: needed_bytes(arch, step[0]), default=None)


class Configured(NamedTuple):
    """The job as configured, how it is spread, what was chosen and said, and the estimate
    of the chosen configuration when the search made one (the caller need not again)."""

    job: Job
    strategy: str
    chosen: list[Note]
    estimate: ThroughputEstimate | None = None


def _runnable(arch: ModelArch, job: Job, gpu: GPU) -> bool:
    """``job`` passes :func:`~whichgpu.estimate.throughput.check_runnable` on ``gpu``: the model's
    checks once per job (every GPU model of a count shares the search's jobs), the GPU's
    tensor-core format each time."""
    return _model_runnable(arch, job) and missing_math_unit(gpu, job.math_precision) is None


@lru_cache(maxsize=1024)
def _model_runnable(arch: ModelArch, job: Job) -> bool:
    try:
        check_model_runnable(arch, job)
    except WhichGPUError:
        return False
    return True


def _estimate(
    arch: ModelArch, job: Job, gpu: GPU, count: int, framework: str | None
) -> ThroughputEstimate | None:
    try:
        return checked_throughput(arch, job, gpu, count, framework=framework)
    except WhichGPUError:
        return None


def _value(estimate: ThroughputEstimate | None) -> float:
    return 0.0 if estimate is None else round(estimate.throughput.value, 6)
