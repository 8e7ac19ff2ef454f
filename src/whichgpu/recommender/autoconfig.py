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

Inference left without ``batch`` serves one sequence at a time, as before.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from whichgpu.catalog.records import GPU
from whichgpu.estimate.memory import estimate_memory
from whichgpu.estimate.parallel import scaled_job, usable_bytes
from whichgpu.i18n import N_
from whichgpu.job import Checkpointing, Job, Precision
from whichgpu.models.arch import ModelArch
from whichgpu.notes import Note, note
from whichgpu.requests import Component

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


@lru_cache(maxsize=4096)
def needed_bytes(arch: ModelArch, job: Job) -> float:
    """The job's peak memory per GPU. It does not depend on the GPU, so the candidates of
    one count share it: computed once per (model, job), not once per GPU model."""
    return estimate_memory(arch, job).total_bytes


def _fits(arch: ModelArch, job: Job, gpu: GPU, count: int) -> tuple[Job, str] | None:
    scaled, strategy = scaled_job(job, count, arch)
    if needed_bytes(arch, scaled) <= usable_bytes(gpu):
        return scaled, strategy
    return None


def _largest(
    arch: ModelArch, job: Job, batches: list[int], gpu: GPU, count: int
) -> tuple[Job, str] | None:
    """The largest of ``batches`` (descending) that fits, by bisection: memory grows with
    the batch, so if one fits every smaller one does."""
    best, low, high = None, 0, len(batches) - 1
    while low <= high:
        middle = (low + high) // 2
        fit = _fits(arch, replace(job, batch=batches[middle]), gpu, count)
        if fit is None:
            low = middle + 1
        else:
            best, high = fit, middle - 1
    return best


def configure(
    component: Component, arch: ModelArch, job: Job, gpu: GPU, count: int
) -> tuple[Job, str, list[Note]]:
    """``job`` on ``count`` × ``gpu`` with the open settings chosen: the job spread over the
    GPUs, its layout, and notes saying what was chosen. Values the user gave are kept."""
    chosen: list[Note] = []
    if component.precision is None and job.precision.startswith("bf16"):
        from whichgpu.estimate.perf import missing_math_unit

        if missing_math_unit(gpu, job.precision) is not None:
            fp16: Precision = "16-mixed" if job.precision == "bf16-mixed" else "16-true"
            job = replace(job, precision=fp16)
            chosen.append(
                note(
                    "chosen_precision",
                    component=component.label,
                    gpu=gpu.short_name,
                    precision=fp16,
                )
            )
    open_batch = component.batch is None and job.training
    open_checkpointing = component.checkpointing is None and job.training
    if not (open_batch or open_checkpointing):
        scaled, strategy = scaled_job(job, count, arch)
        return scaled, strategy, chosen
    cap, recipe = BATCH_CAPS.get(arch.kind, (8, N_("the Hugging Face Trainer's default")))
    batches = [cap >> i for i in range(cap.bit_length()) if cap >> i] if open_batch else [job.batch]
    modes: list[Checkpointing] = ["none", "full"] if open_checkpointing else [job.checkpointing]
    found: list[tuple[Job, str, Checkpointing]] = []
    for mode in modes:
        fit = _largest(arch, replace(job, checkpointing=mode), batches, gpu, count)
        if fit is not None:
            found.append((*fit, mode))
            if fit[0].batch == batches[0]:
                break  # the largest batch without recomputation: recomputing only adds work
    if not found:  # nothing fits: the smallest step, as the memory check will report it
        smallest = replace(job, batch=batches[-1], checkpointing=modes[-1])
        scaled, strategy = scaled_job(smallest, count, arch)
        return scaled, strategy, chosen
    scaled, strategy, mode = found[0]
    if len(found) > 1 and found[1][0].batch > scaled.batch:
        # recomputation buys a larger micro-batch, which amortises the step's communication:
        # the faster of the two (on a tie, the one without recomputation)
        scaled, strategy, mode = max(
            found, key=lambda f: (round(_rate(arch, f[0], gpu, count), 6), f[2] == "none")
        )
    notes = chosen
    if open_batch:
        notes.append(
            note(
                "chosen_batch",
                component=component.label,
                gpu=gpu.short_name,
                batch=scaled.batch,
                cap=cap,
                recipe=recipe,
            )
        )
    if open_checkpointing and mode != "none":
        notes.append(note("chosen_checkpointing", component=component.label, gpu=gpu.short_name))
    return scaled, strategy, notes


def _rate(arch: ModelArch, job: Job, gpu: GPU, count: int) -> float:
    from whichgpu.errors import WhichGPUError
    from whichgpu.throughput import estimate_throughput

    try:
        return estimate_throughput(arch, job, gpu, count).throughput.value
    except WhichGPUError:
        return 0.0
