"""Efficiency factors η: what fraction of the roofline real software reaches, fitted on the
catalog's published measurements (``benchmarks.csv``).

Each measurement is turned into its ideal rate on its GPU (:func:`ideal_rate`, η = 1); the
ratio measured / ideal is the observed η. The model shares factors by what physically shares
them: ``log η = a[harness, workload] + b[architecture]`` (a harness — software stack and its
kernels — sets how close a workload gets to peak; an architecture how well that software
uses its units). ``scripts/fit_efficiency.py`` fits it and validates it leave-one-out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.estimate.perf import (
    decode_bytes_per_step,
    forward_flops_per_token,
    image_flops,
    tensor_tflops,
    train_flops_per_token,
)
from whichgpu.models.arch import ModelArch
from whichgpu.workload import QUANT_BITS, Job, make_job

#: Benchmark model names that are presets under another name, or generic sizes (MosaicML's
#: MPT configurations as published in llm-foundry's benchmark tables).
MODEL_ALIASES = {
    "llama-3-8b": "llama-3.1-8b",
    "llama-3-70b": "llama-3.1-70b",
    "llama-3.3-70b": "llama-3.1-70b",
}
GENERIC_SIZES = {
    "mpt-1b": "1.3B",
    "mpt-3b": "2.7B",
    "mpt-13b": "13B",
    "mpt-70b": "65B",
}
RATE_METRICS = {"throughput", "output_throughput", "ttft"}
#: Harnesses that split a model's layers across GPUs, so that the GPUs work in turn.
LAYER_SPLIT_HARNESSES = frozenset({"llamacpp"})
#: Harnesses whose 16-bit matmuls accumulate in FP16 (llama.cpp calls cuBLAS with
#: CUBLAS_COMPUTE_16F), which GeForce cards run at twice their FP32-accumulate rate.
FP16_ACCUMULATE_HARNESSES = frozenset({"llamacpp"})


def math_unit(bench: Benchmark, gpu: GPU) -> str:
    """The execution unit a measurement's math runs on: tensor cores at 16 bits, TF32, FP8 or
    INT8, FP32 or FP64 cores, or 16-bit tensor cores behind a dequantisation (weight-only
    quantised weights)."""
    precision = bench.precision or "16-true"
    if precision in QUANT_BITS and precision not in ("fp8", "int8"):
        return "dequant-16"
    if precision == "32-true":
        return "fp32"
    if precision == "tf32":
        return "tf32" if gpu.tf32_tensor_dense_tflops else "fp32"
    if precision in ("fp8", "int8", "fp64"):
        return precision
    if precision.startswith("bf16") and gpu.bf16_tensor_dense_tflops is None:
        return "fp32"
    return "tensor-16"


def bench_arch(name: str) -> ModelArch | None:
    from whichgpu.errors import WhichGPUError
    from whichgpu.models import resolve_model

    if name in GENERIC_SIZES:
        return resolve_model(params=GENERIC_SIZES[name])
    try:
        return resolve_model(MODEL_ALIASES.get(name, name))
    except WhichGPUError:
        return None


def _job(bench: Benchmark, task: str) -> Job:
    precision = bench.precision or "bf16-true"
    quant = precision if precision in QUANT_BITS else None
    fields: dict[str, object] = {"task": task, "batch": bench.batch or 1, "quant": quant}
    if precision in ("32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true"):
        fields["precision"] = precision
    if precision == "fp8":
        fields["kv_dtype"] = "fp8"
    return make_job(**fields)


def _math_precision(bench: Benchmark) -> str:
    precision = bench.precision or "16-true"
    if precision in QUANT_BITS and precision not in ("fp8", "int8"):
        return "16-true"  # weight-only quantisation computes in 16 bits
    return precision


def _weights_scale(bench: Benchmark) -> float:
    """fp8 serving stores weights in 8 bits (make_job's 16-bit weights halved)."""
    return 0.5 if bench.precision == "fp8" else 1.0


@dataclass(frozen=True)
class Ideal:
    """A measurement's ideal rate on its GPUs (η = 1), in the measurement's own unit."""

    rate: float
    bound: str


def ideal_rate(bench: Benchmark, gpu: GPU) -> Ideal | None:
    """The roofline rate for a measurement, or None where no roofline applies (scores)."""
    if bench.metric not in RATE_METRICS:
        return None
    n = bench.gpus
    # llama.cpp splits layers across GPUs (they run one after another): one GPU's rates
    parallel = 1 if bench.harness in LAYER_SPLIT_HARNESSES else n
    math = _math_precision(bench)
    per_gpu = tensor_tflops(gpu, math)
    if bench.harness in FP16_ACCUMULATE_HARNESSES and math in ("16-true", "16-mixed"):
        per_gpu = gpu.fp16_fp16acc_tensor_dense_tflops
    peak = per_gpu * 1e12 * parallel
    bandwidth = gpu.memory_bandwidth_gb_per_s * 1e9 * parallel
    w = bench.workload
    if w in ("gemm", "fp64"):
        return Ideal(peak / 1e12, "compute") if bench.unit == "tflops" else None
    if w == "bandwidth":
        return Ideal(bandwidth / 1e9, "memory bandwidth") if bench.unit == "GB/s" else None
    if w in ("cnn-train", "cnn-infer"):
        arch = bench_arch(bench.model)
        if arch is None or bench.unit != "images/s":
            return None
        return Ideal(peak / image_flops(arch, w == "cnn-train"), "compute")
    arch = bench_arch(bench.model)
    if arch is None:
        return None
    if w in ("llm-train", "transformer-train"):
        seq = bench.seq or (384 if arch.kind == "encoder" else 2048)
        job = _job(bench, "train")
        per_token = train_flops_per_token(arch, job, seq)
        tokens_per_s = peak / per_token
        if bench.unit == "tokens/s":
            return Ideal(tokens_per_s, "compute")
        if bench.unit == "sequences/s":
            return Ideal(tokens_per_s / seq, "compute")
        return None
    job = _job(bench, "inference")
    if w == "llm-prefill":
        seq = bench.seq or 512
        flops = forward_flops_per_token(arch, seq // 2) * seq
        seconds = max(flops / peak, _weights(arch, job, bench) / bandwidth)
        if bench.unit == "ms":
            return Ideal(1 / seconds, "compute")  # requests per second (a latency's inverse)
        if bench.unit == "tokens/s":
            return Ideal(seq / seconds, "compute")
        return None
    if w == "llm-decode":
        context = (bench.seq or 0) + (bench.generate or 128) // 2
        step = _decode_step(arch, job, bench, context, peak, bandwidth)
        return Ideal(job.batch / step, "memory bandwidth") if bench.unit == "tokens/s" else None
    if w == "llm-serve":
        if bench.batch is None:
            return None  # a "maximum throughput" without its batch has no roofline
        prompt, out = bench.seq or 128, bench.generate or 128
        prefill = forward_flops_per_token(arch, prompt // 2) * prompt * job.batch / peak
        step = _decode_step(arch, job, bench, prompt + out // 2, peak, bandwidth)
        rate = job.batch * out / (prefill + out * step)
        if bench.unit == "tokens/s/gpu":
            rate /= n
        return Ideal(rate, "memory bandwidth") if bench.unit.startswith("tokens/s") else None
    return None


def _weights(arch: ModelArch, job: Job, bench: Benchmark) -> float:
    from whichgpu.estimate.memory import weights_bytes

    return weights_bytes(arch, job) * _weights_scale(bench)


def _decode_step(
    arch: ModelArch, job: Job, bench: Benchmark, context: int, peak: float, bandwidth: float
) -> float:
    moved = decode_bytes_per_step(arch, job, context, _weights_scale(bench))
    flops = forward_flops_per_token(arch, context) * job.batch
    return max(flops / peak, moved / bandwidth)


def memory_class(gpu: GPU) -> str:
    return "hbm" if gpu.memory_type.upper().startswith("HBM") else "gddr"


def units_per_step(bench: Benchmark) -> float:
    """Units of work one step of the software produces (what a per-step overhead divides):
    a batch of images or of decoded tokens, a prompt's tokens, a training batch's tokens."""
    if bench.batch is None and bench.workload not in ("llm-decode", "llm-prefill"):
        return float("inf")  # a throughput figure at a large, unstated batch
    batch = float(bench.batch or 1)
    if bench.unit == "ms":
        return batch  # a latency: one request a step
    if bench.workload in ("llm-prefill",):
        return batch * (bench.seq or 512)
    if bench.workload in ("llm-train", "transformer-train"):
        return batch * (bench.seq or 2048) if bench.unit == "tokens/s" else batch
    if bench.workload in ("gemm", "fp64", "bandwidth"):
        return float("inf")  # kernels timed alone: no framework overhead
    return batch


@dataclass(frozen=True)
class Observation:
    """A measurement as the model sees it: the ideal seconds per unit on its GPUs, the
    measured seconds per unit, and the keys of the factors that explain the gap."""

    bench: Benchmark
    ideal_s: float
    measured_s: float
    units_per_step: float
    bound: str
    group: tuple[str, str]
    factor: str
    unit: str


def observe(bench: Benchmark, gpu: GPU) -> Observation | None:
    ideal = ideal_rate(bench, gpu)
    if ideal is None or ideal.rate <= 0:
        return None
    measured_rate = 1e3 / bench.value if bench.unit == "ms" else bench.value
    factor = gpu.architecture if ideal.bound == "compute" else memory_class(gpu)
    return Observation(
        bench=bench,
        ideal_s=1 / ideal.rate,
        measured_s=1 / measured_rate,
        units_per_step=units_per_step(bench),
        bound=ideal.bound,
        group=(bench.harness, bench.workload),
        factor=factor,
        unit=math_unit(bench, gpu) if ideal.bound == "compute" else "memory",
    )


def observed_efficiency(bench: Benchmark, gpu: GPU) -> float | None:
    obs = observe(bench, gpu)
    return None if obs is None else obs.ideal_s / obs.measured_s


@dataclass(frozen=True)
class EfficiencyModel:
    """Fitted factors. Seconds per unit = ideal / (η_group · f_factor) + overhead / units per
    step, with η_group · f_factor capped at 1 and the overhead a property of the harness."""

    group: Mapping[tuple[str, str], float]
    factor: Mapping[str, float]
    overhead_s: Mapping[str, float]
    fitted_on: Mapping[str, int]

    def efficiency(
        self, group: tuple[str, str], factor: str, unit: str = "tensor-16"
    ) -> tuple[float, str]:
        eta = self.group.get(group)
        provenance = f"fitted on {self.fitted_on.get('|'.join(group), 0)} measurements"
        if eta is None:
            same = [v for (h, wl), v in self.group.items() if wl == group[1]]
            eta = sum(same) / len(same) if same else 0.5
            provenance = "prior: mean of other harnesses" if same else "prior: η = 0.5"
        f = self.factor.get(factor)
        if f is None:
            f = 1.0
            provenance += f"; {factor} not fitted"
        u = self.factor.get(f"unit:{unit}", 1.0)
        return min(1.0, eta * f * u), provenance

    def seconds_per_unit(self, obs: Observation) -> float:
        eta, _ = self.efficiency(obs.group, obs.factor, obs.unit)
        overhead = self.overhead_s.get(obs.group[0], 0.0) / obs.units_per_step
        return obs.ideal_s / eta + overhead


def load_efficiency() -> tuple[EfficiencyModel, dict[str, tuple[float, float]]]:
    """The fitted model and, per workload, its leave-one-out error spread (10th, 90th pct),
    from ``catalog/data/efficiency.csv`` (written by scripts/fit_efficiency.py)."""
    import csv
    import io
    from importlib import resources

    text = (resources.files("whichgpu.catalog") / "data" / "efficiency.csv").read_text("utf-8")
    group: dict[tuple[str, str], float] = {}
    factor: dict[str, float] = {}
    overhead: dict[str, float] = {}
    fitted: dict[str, int] = {}
    spread_low: dict[str, float] = {}
    spread_high: dict[str, float] = {}
    for row in csv.DictReader(io.StringIO(text)):
        value = float(row["value"])
        kind = row["kind"]
        if kind == "eta":
            group[(row["key"], row["workload"])] = value
            fitted[f"{row['key']}|{row['workload']}"] = int(row["fitted_on"] or 0)
        elif kind == "factor":
            factor[row["key"]] = value
            fitted[row["key"]] = int(row["fitted_on"] or 0)
        elif kind == "overhead":
            overhead[row["key"]] = value
        elif kind == "spread_low":
            spread_low[row["workload"]] = value
        elif kind == "spread_high":
            spread_high[row["workload"]] = value
    spread = {w: (spread_low[w], spread_high.get(w, 0.0)) for w in spread_low}
    return EfficiencyModel(group, factor, overhead, fitted), spread
