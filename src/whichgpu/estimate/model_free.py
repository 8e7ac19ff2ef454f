"""Throughput of the work that has no model: path-traced rendering (Blender's benchmark,
samples a minute) and dense FP64 matrix products (TFLOPS), on the same efficiency fit as
the rest (:mod:`whichgpu.estimate.efficiency_model`)."""

from __future__ import annotations

import msgspec

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.errors import InvalidInput
from whichgpu.estimate.efficiency import observe
from whichgpu.estimate.efficiency_model import load_efficiency
from whichgpu.estimate.throughput import DEFAULT_HARNESS, Rate, ThroughputEstimate, likely_rate

__all__ = ["FP64_MATMUL_N", "RENDER_MODEL", "estimate_model_free", "estimate_rate"]

#: What a render or FP64 estimate is measured against: Blender's benchmark (samples per
#: minute over its scenes, Cycles with OptiX where the GPU has RT cores) and a large square
#: FP64 matmul (cuBLAS DGEMM, the kernel HPL spends its time in).
RENDER_MODEL = "blender-4.2"
FP64_MATMUL_N = 8000


def estimate_rate(
    regime: str, gpu: GPU, count: int = 1, harness: str | None = None
) -> ThroughputEstimate:
    """Throughput of a model-free regime on ``count`` × ``gpu``: ``render`` in samples/min
    (frames parallelise over GPUs), ``fp64`` in TFLOPS (dense FP64 matmul; multi-GPU work
    is assumed to split without communication, as HPL's panels nearly do)."""
    model, _spread = load_efficiency()
    harness = harness or DEFAULT_HARNESS[regime]
    if regime == "render":
        unit, name, precision, seq, metric = "samples/min", RENDER_MODEL, None, None, "score"
    elif regime == "fp64":
        unit, name, precision, seq, metric = (
            "tflops",
            "matmul-fp64",
            "fp64",
            FP64_MATMUL_N,
            "throughput",
        )
    else:
        raise ValueError(f"no model-free regime {regime!r}")  # a caller's bug
    bench = Benchmark(
        id="user-job",
        gpu=gpu.id,
        gpus=1,
        regime=regime,  # type: ignore[arg-type]
        model=name,
        precision=precision,
        seq=seq,
        metric=metric,
        value=1.0,
        unit=unit,
        harness=harness,
        source="whichgpu",
        as_of="undated",
    )
    obs = observe(bench, gpu)
    if obs is None:
        raise InvalidInput("no_throughput_model", regime=regime, gpu=gpu.name)
    eta, provenance = model.of(obs)
    rate = count / model.seconds_per_unit(obs)
    return ThroughputEstimate(
        gpu=gpu,
        count=count,
        regime=regime,
        harness=harness,
        throughput=likely_rate(rate, unit, regime, provenance),
        bound=obs.bound,
        mfu=None,
        time_s=None,
        ttft_s=None,
        tokens_per_s_per_sequence=None,
        efficiency=eta,
        provenance=provenance,
    )


def estimate_model_free(
    kind: str,
    gpu: GPU,
    count: int = 1,
    frames: float | None = None,
    samples_per_frame: int = 1024,
    tflop: float | None = None,
) -> ThroughputEstimate:
    """``estimate --task render|fp64``: frames per hour (a frame of ``samples_per_frame``
    path-tracing samples) or FP64 TFLOPS, and the time for ``frames`` or ``tflop``."""
    est = estimate_rate(kind, gpu, count)
    if kind == "render":
        per_hour = 60.0 / samples_per_frame  # samples/min → frames/h
        rate = est.throughput
        throughput = Rate(
            rate.value * per_hour, "frames/h", rate.low * per_hour, rate.high * per_hour
        )
        time_s = None if frames is None else frames / throughput.value * 3600
        return msgspec.structs.replace(est, throughput=throughput, time_s=time_s)
    time_s = None if tflop is None else tflop / est.throughput.value
    return msgspec.structs.replace(est, time_s=time_s)
