"""The speed factors fitted on published training runs (``catalog/data/
framework_efficiency.csv``, written by scripts/fit_frameworks.py from
validation/published_training.csv) applied to one training step: a framework's own
(:func:`accuracy.published_runs.fit_factors`), the padding of an unpacked fine-tune's
batches (fitted there too, on the runs of padded datasets), an architecture's whose LLM
training the efficiency fit has no run of
(:func:`accuracy.published_runs.fit_architecture_factors`), and FP8 training's over the
doubled peak (:func:`accuracy.published_runs.fit_fp8_factor`).
Each stretches (or shortens) the whole step it times, and says so in the provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.estimate.efficiency_model import (
    FP8_TRAIN_FACTOR,
    PADDED_FACTOR,
    load_framework_factors,
    load_framework_spreads,
)

#: The tasks whose examples are padded unless packed (pretraining concatenates its documents)
FINE_TUNES = frozenset({"finetune", "lora", "qlora"})

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.estimate.training import Step
    from whichgpu.job import Job


def training_factors(
    gpu: GPU,
    job: Job,
    framework: str | None,
    rate: float,
    step: Step,
    provenance: str,
    layers: int = 0,
) -> tuple[float, Step, str, tuple[float, float] | None]:
    """``rate`` and ``step`` of an LLM training job with every published-run factor that
    applies to it, the provenance saying which, and the held-out error range of a factor
    wider than the regime's own (an architecture's), or None. A job run as a framework's
    recipe (``framework``; a fine-tune that names none runs the HF Trainer's) takes its
    speed factor and, a fine-tune whose examples are not packed, its padding's; with none,
    the calibrated harness's full sequences."""
    fitted = load_framework_factors().get(framework or "")
    if fitted is not None:
        rate, step = rate * fitted[0], step.scaled(1 / fitted[0])
        provenance += f"; × {fitted[0]:.2f} for {framework}, fitted on {fitted[1]} published runs"
    rate, step, provenance, band = _architecture_factor(gpu, rate, step, provenance)
    if job.math_precision in ("fp8", "fp8-mixed") and gpu.fp8_tensor_dense_tflops:
        rate, step, provenance = _fp8_factor(rate, step, provenance)
    if framework in HF_TRAINER_LOOPS and not job.compiled and layers:
        rate, step, provenance = _launch_floor(job, layers, rate, step, provenance)
    padded = load_framework_factors().get(PADDED_FACTOR)
    if padded is not None and framework is not None and job.task in FINE_TUNES and not job.packing:
        # a batch padded to its longest example: the steps as fast, fewer of their tokens
        # real (the HF Trainer on full sequences runs at the roofline's speed:
        # validation/measured_trainer.csv, docs/training-accuracy.md)
        rate, step = rate * padded[0], step.scaled(1 / padded[0])
        provenance += (
            f"; × {padded[0]:.2f} for padded batches (not packed), fitted on {padded[1]} "
            "published runs"
        )
    return rate, step, provenance, band


#: The recipes that run the HF Trainer's eager Python loop (TRL's SFTTrainer, axolotl and
#: LLaMA-Factory subclass it)
HF_TRAINER_LOOPS = frozenset({"hf", "trl", "axolotl", "llama-factory"})


def _launch_floor(
    job: Job, layers: int, rate: float, step: Step, provenance: str
) -> tuple[float, Step, str]:
    """An eager training step no shorter than its host takes to launch it: each micro-batch
    a forward pass of ``layers`` layers from Python and its backward (as many launches
    again, at least), a layer's launches taking what an eager forward's measured here do
    (``transformers``' ``host_layer_s``: 1.12 ms a layer on an H200's host,
    validation/measured_transformers.csv). Small steps (short sequences, a micro-batch of
    one) are bound by it; a step of thousands of tokens is not (the HF Trainer measured at
    4,096 tokens a step runs at the roofline's speed: validation/measured_trainer.csv)."""
    from whichgpu.job.engines import ENGINES

    host = max(job.grad_accum, 1) * 2 * layers * ENGINES["transformers"].host_layer_s
    if step.seconds >= host:
        return rate, step, provenance
    stretch = host / step.seconds
    said = f"bound by the host's kernel launches, {host * 1e3:.0f} ms a step"
    return rate / stretch, step.scaled(stretch), f"{provenance}; {said}"


def _architecture_factor(
    gpu: GPU, rate: float, step: Step, provenance: str
) -> tuple[float, Step, str, tuple[float, float] | None]:
    """An LLM training step on an architecture no run of the efficiency fit measured,
    where published LLM training runs on it give its own factor (``llm:ARCH``): the rate
    and step scaled by it, the provenance saying so (and no longer that nobody measured
    it), and the range of its leave-one-source-out errors."""
    from whichgpu.estimate.efficiency import TRAIN_FAMILY

    key = TRAIN_FAMILY + gpu.architecture
    fitted = load_framework_factors().get(key)
    if fitted is None:
        return rate, step, provenance, None
    factor, runs = fitted
    kept = [part for part in provenance.split("; ") if not part.endswith("(no LLM training run)")]
    said = f"× {factor:.2f} for {gpu.architecture}'s LLM training, fitted on {runs} published runs"
    return (
        rate * factor,
        step.scaled(1 / factor),
        "; ".join([*kept, said]),
        load_framework_spreads().get(key),
    )


def _fp8_factor(rate: float, step: Step, provenance: str) -> tuple[float, Step, str]:
    """An FP8 training step at the speed the published runs that measure one layout in BF16
    and in FP8 give it (``fp8-train``): NVIDIA's NeMo recipes run 1.31 to 1.60 times their
    BF16 speed on H100, where the doubled peak alone says about 1.8."""
    fitted = load_framework_factors().get(FP8_TRAIN_FACTOR)
    if fitted is None:
        return rate, step, provenance
    factor, pairs = fitted
    said = f"× {factor:.2f} for FP8 training, fitted on {pairs} published BF16/FP8 pairs"
    return rate * factor, step.scaled(1 / factor), f"{provenance}; {said}"
