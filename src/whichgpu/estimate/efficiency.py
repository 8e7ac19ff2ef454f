"""Efficiency factors η: what fraction of the roofline real software reaches, fitted on the
catalog's published measurements (``benchmarks.csv``).

Each measurement is turned into its ideal rate on its GPU (:func:`ideal_rate`, η = 1); the
ratio measured / ideal is the observed η. The model shares factors by what physically shares
them: ``log η = a[harness, regime] + b[architecture]`` (a harness — software stack and its
kernels — sets how close a regime gets to peak; an architecture how well that software
uses its units). ``scripts/fit_efficiency.py`` fits it and validates it leave-one-out; the
fitted model and how its factors combine are :mod:`whichgpu.estimate.efficiency_model`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.estimate.collectives import (
    ALLREDUCE_START_S,
    LAYER_SPLIT_HARNESSES,
    all_reduces_per_unit,
    collectives_per_unit,
    tensor_parallel_link,
)
from whichgpu.estimate.memory import replicated_weights_bytes
from whichgpu.estimate.parallel import forward_comm_seconds
from whichgpu.estimate.perf import (
    attention_flops_per_token,
    attention_slowdown,
    decode_attention_flops,
    decode_weight_bytes,
    image_flops,
    kv_read_bytes,
    runs_natively,
    tensor_tflops,
    train_flops_per_token,
)
from whichgpu.estimate.render_roofline import SCORE_METRICS, render_ideal
from whichgpu.estimate.routed_experts import routed_flops_per_token, served_flops_per_token
from whichgpu.estimate.streams import stream_seconds, stream_term_of
from whichgpu.job import ACTIVATION_FORMATS, MATH_STORAGE, QUANT_BITS, Job, build_job
from whichgpu.models.arch import ModelArch

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
#: Harnesses whose 16-bit matmuls accumulate in FP16 (llama.cpp calls cuBLAS with
#: CUBLAS_COMPUTE_16F), which GeForce cards run at twice their FP32-accumulate rate.
FP16_ACCUMULATE_HARNESSES = frozenset({"llamacpp", "llamacpp-2023-12"})


#: The generation an architecture follows in its product line, keyed by (architecture,
#: memory class): data-centre parts on HBM (Volta → Ampere → Hopper → Blackwell B200/B300/GB200;
#: AMD's CDNA 3 → CDNA 4) and workstation/GeForce parts on GDDR (Turing → Ampere → Ada
#: Lovelace → Blackwell GB20x).
#: An architecture the fit has no measurements on takes the nearest fitted predecessor's
#: factor: how far a generation's software gets from its peak carries over better than
#: the neutral 1 (Hopper's factor, 0.61, says its peak is hard to reach; B200's published
#: MFU, 39 % for Llama 3 8B in FP8, is Hopper's 42 %).
PREDECESSOR: dict[tuple[str, str], str] = {
    ("Blackwell", "hbm"): "Hopper",
    ("Hopper", "hbm"): "Ampere",
    ("Ampere", "hbm"): "Volta",
    ("Blackwell", "gddr"): "Ada Lovelace",
    ("Ada Lovelace", "gddr"): "Ampere",
    ("Ampere", "gddr"): "Turing",
    ("CDNA 4", "hbm"): "CDNA 3",
}


def math_unit(bench: Benchmark, gpu: GPU) -> str:
    """The execution unit a measurement's math runs on: tensor cores at 16 bits, TF32, FP8,
    FP4 or INT8, FP32 or FP64 cores, or 16-bit tensor cores behind a dequantisation
    (weight-only quantised weights, and NVFP4 weights on a GPU without FP4 tensor cores:
    vLLM's Marlin FP4 kernels, ``marlin_utils_fp4.is_fp4_marlin_supported``, SM 8.0 up)."""
    precision = bench.precision or "16-true"
    if precision in QUANT_BITS and bench.regime == "diffusion-infer":
        return "tensor-16"  # weight-only: dequantised, then 16-bit (diffusion.dequant_s)
    if precision == "nvfp4" and runs_natively(gpu, precision):
        return "fp4"
    if precision in QUANT_BITS and precision not in ("fp8", "int8"):
        return "dequant-16"
    if precision == "32-true" and bench.regime == "diffusion-infer":
        # FP32 work on a GPU with TF32: its convolutions run there (diffusion.peak_flops;
        # its matmuls on the FP32 cores, at PyTorch's default): the TF32 unit's factor
        return "tf32" if gpu.tf32_tensor_dense_tflops else "fp32"
    if precision == "32-true":
        return "fp32"
    if precision == "tf32":
        return "tf32" if gpu.tf32_tensor_dense_tflops else "fp32"
    if precision in ("fp8", "int8", "fp64"):
        return precision
    if precision == "fp8-mixed":
        return "fp8" if gpu.fp8_tensor_dense_tflops else "tensor-16"
    if precision.startswith("bf16") and gpu.bf16_tensor_dense_tflops is None:
        return "fp32"
    return "tensor-16"


@lru_cache(maxsize=256)
def bench_arch(name: str) -> ModelArch | None:
    """The model a benchmark ran, by its name (None where it names no model: a pipeline's
    or a renderer's benchmark); once per name: observing a measurement asks it, and a name
    that is no preset costs the lookup's closest-name suggestions (difflib over every
    preset: three quarters of an image recommendation's time, asked for each GPU)."""
    from whichgpu.errors import WhichGPUError
    from whichgpu.models import resolve_model

    if name in GENERIC_SIZES:
        return resolve_model(params=GENERIC_SIZES[name])
    try:
        return resolve_model(MODEL_ALIASES.get(name, name))
    except WhichGPUError:
        return None


def bench_job(bench: Benchmark, task: str) -> Job:
    """The job a measurement describes: its precision, batch, recomputation and KV cache."""
    checkpointing = bench.checkpointing if task != "inference" else None
    return _job_of(bench.precision, bench.batch, task, checkpointing or "none", bench.kv_dtype,
                   bench.attention_dp)  # fmt: skip


@lru_cache(maxsize=1024)
def _job_of(
    bench_precision: str | None,
    bench_batch: int | None,
    task: str,
    checkpointing: str = "none",
    kv_dtype: str | None = None,
    attention_dp: bool = False,
) -> Job:
    """The job a measurement's precision, batch, recomputation, KV cache and MoE layout
    describe (once
    per combination: the serving planner describes each candidate's batches as
    measurements). An fp8 or nvfp4 run without a KV dtype keeps its cache in fp8:
    TensorRT-LLM's published fp8 runs do ("If you specify FP8 quantization, the KV cache will
    automatically be set to FP8 as well", perf-overview v0.14), and TensorRT Model
    Optimizer's ``hf_ptq.py`` exports NVFP4 checkpoints with an FP8 cache
    (``--kv_cache_qformat``, default fp8)."""
    precision = bench_precision or "bf16-true"
    quant = precision if precision in QUANT_BITS else None
    fields: dict[str, object] = {
        "task": task, "batch": bench_batch or 1, "quant": quant, "checkpointing": checkpointing,
        "attention_dp": attention_dp,
    }  # fmt: skip
    if precision in ("32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true") or (
        precision in MATH_STORAGE
    ):
        fields["precision"] = precision
    if kv_dtype is not None:
        fields["kv_dtype"] = kv_dtype
    elif precision in ("fp8", "nvfp4"):
        fields["kv_dtype"] = "fp8"
    return build_job(**fields)


def _math_precision(bench: Benchmark) -> str:
    precision = bench.precision or "16-true"
    if precision in QUANT_BITS and precision not in ACTIVATION_FORMATS:
        return "16-true"  # weight-only quantisation computes in 16 bits
    return precision


@dataclass(frozen=True)
class Ideal:
    """A measurement's ideal rate on its GPUs (η = 1), in the measurement's own unit."""

    rate: float
    bound: str
    #: The share of the ideal time the other resource binds (the per-operator roofline of a
    #: decode step: its GEMMs compute-bound, its attention reading the KV cache), which runs
    #: at that resource's efficiency; 0 where one resource binds the whole unit of work
    other_share: float = 0.0


def ideal_rate(
    bench: Benchmark, gpu: GPU, arch: ModelArch | None = None, job: Job | None = None
) -> Ideal | None:
    """The roofline rate for a measurement, or None where no roofline applies (a ratio).
    ``job``: the user's own job, when a user's job is described as a measurement: its task
    (LoRA's cheaper backward), recomputation and precision set the work, not the
    benchmark's defaults."""
    if bench.regime == "render" and bench.metric in SCORE_METRICS:
        found = render_ideal(bench, gpu)
        return None if found is None else Ideal(*found)
    if bench.regime == "diffusion-infer":
        from whichgpu.estimate.diffusion_bench import diffusion_ideal

        found = diffusion_ideal(bench, gpu)
        return None if found is None else Ideal(*found)
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
    w = bench.regime
    if w in ("gemm", "fp64"):
        return Ideal(peak / 1e12, "compute") if bench.unit == "tflops" else None
    if w == "bandwidth":
        return Ideal(bandwidth / 1e9, "memory bandwidth") if bench.unit == "GB/s" else None
    if w in ("cnn-train", "cnn-infer"):
        arch = arch or bench_arch(bench.model)
        if arch is None or bench.unit != "images/s":
            return None
        return Ideal(peak / image_flops(arch, w == "cnn-train"), "compute")
    arch = arch or bench_arch(bench.model)
    if arch is None:
        return None
    if w in ("llm-train", "transformer-train"):
        seq = bench.seq or (384 if arch.kind == "encoder" else 2048)
        job = job or bench_job(bench, "train")
        per_token = train_flops_per_token(arch, job, seq, executed=True)
        tokens_per_s = peak / per_token
        if math in ("fp8", "fp8-mixed") and w == "llm-train":
            # FP8 training runs the linear layers' GEMMs in FP8 and the attention core in
            # 16 bits: Transformer Engine's recipes default to ``fp8_dpa=False`` (NVIDIA
            # Transformer Engine docs, ``DelayedScaling``; NeMo's ``fp8_dot_product_attention``
            # is off), torchao's float8 converts ``nn.Linear`` only
            attention = per_token - train_flops_per_token(arch, job, 0, executed=True)
            sixteen = tensor_tflops(gpu, "bf16-mixed") * 1e12 * parallel
            tokens_per_s = 1.0 / ((per_token - attention) / peak + attention / sixteen)
        if bench.unit == "tokens/s":
            return Ideal(tokens_per_s, "compute")
        if bench.unit == "sequences/s":
            return Ideal(tokens_per_s / seq, "compute")
        return None
    job = bench_job(bench, "inference")
    tp = 1 if bench.harness in LAYER_SPLIT_HARNESSES else n  # tensor-parallel degree
    slower = attention_slowdown(gpu, math, job.kv_dtype)  # the attention core's own peak
    if w == "llm-prefill":
        # a prompt's share of a pass of ``batch`` prompts, which reads the weights once
        seq, prompts = bench.seq or 512, bench.batch or 1
        flops = _prefill_flops(arch, seq, _kernels(bench), slower)
        compute_s = flops / peak
        if job.attention_dp and tp > 1:  # a prompt's attention and dense layers on its GPU
            routed = routed_flops_per_token(arch, _kernels(bench)) * seq
            compute_s = routed / peak + (flops - routed) / (peak / tp * min(prompts, tp))
        weights = _weights(arch, job) + replicated_weights_bytes(arch, job, tp)
        seconds = max(compute_s, weights / bandwidth / prompts)
        seconds += forward_comm_seconds(arch, seq, tp, gpu, bench.nvlink_bridge, job.attention_dp)
        if bench.unit == "ms":
            return Ideal(1 / seconds, "compute")  # requests per second (a latency's inverse)
        if bench.unit == "tokens/s":
            return Ideal(seq / seconds, "compute")
        return None
    if w == "llm-decode":
        context = (bench.seq or 0) + (bench.generate or 128) // 2
        compute_s, memory_s = _decode_step(arch, job, bench, context, peak, bandwidth, slower)
        comm = forward_comm_seconds(arch, job.batch, tp, gpu, bench.nvlink_bridge,
                                    job.attention_dp)  # fmt: skip
        step = compute_s + memory_s + comm
        if bench.unit != "tokens/s":
            return None
        return _split(job.batch / step, compute_s, memory_s + comm)
    if w == "llm-serve":
        if bench.batch is None:
            return None  # a "maximum throughput" without its batch has no roofline
        prompt, out = bench.seq or 128, bench.generate or 128
        prefill = _serve_prefill_s(arch, prompt, job.batch, peak, _kernels(bench), slower)
        compute_s, memory_s = _decode_step(arch, job, bench, prompt + out // 2, peak, bandwidth,
                                           slower)  # fmt: skip
        comm = forward_comm_seconds(
            arch, job.batch * (prompt + out), tp, gpu, bench.nvlink_bridge, job.attention_dp
        )
        compute_s, memory_s = prefill + out * compute_s, out * memory_s + comm
        rate = job.batch * out / (compute_s + memory_s)
        if bench.unit == "tokens/s/gpu":
            rate /= n
        return _split(rate, compute_s, memory_s) if bench.unit.startswith("tokens/s") else None
    return None


#: The prefix of the architecture factors fitted on image-generation work alone
DIFFUSION_FAMILY = "diffusion:"
#: The prefix of the architecture factors of a served model's compute-bound kernels: how
#: far a serving engine's GEMMs and attention get from an architecture's peak is its own
#: (TensorRT-LLM's FP16 on Ampere is not its FP8 on Hopper, nor a training step's); an
#: architecture no serving run measured takes its predecessor's, then the shared factor
SERVE_FAMILY = "serve:"
#: The prefix of the architecture factors of a language model's training step: its large
#: GEMMs (FlashAttention, fused optimizers) reach a share of a new architecture's peak that
#: the small kernels of the CNN and BERT benchmarks, and llama.cpp's prefill, sharing the
#: plain factor, do not (MosaicML's H100 runs: 0.36 to 0.45 of the ideal, Lambda's H100
#: ResNet-50 0.06). An architecture no LLM training run measured takes its own shared
#: factor, then its predecessor's training one
TRAIN_FAMILY = "llm:"
#: The architecture whose LLM training runs take the shared factor: the one with the most
#: such runs, where the training harnesses' η are set (one reference level, as in treatment
#: coding: with every architecture its own training factor, η and those factors would only
#: be told apart by the ridge, and architectures without training runs would inherit the
#: split)
TRAIN_REFERENCE = "Ampere"


def compute_factor(bench: Benchmark, gpu: GPU) -> str:
    """The factor key of a measurement's compute-bound work on ``gpu``."""
    if bench.regime == "llm-serve":
        return f"{SERVE_FAMILY}{gpu.architecture}"
    if bench.regime == "llm-train" and gpu.architecture != TRAIN_REFERENCE:
        return f"{TRAIN_FAMILY}{gpu.architecture}"
    return gpu.architecture


def _kernels(bench: Benchmark) -> str:
    """The engine family whose routed experts' law a measurement's MoE takes: the one a
    planned step names, else its harness's (a published run measured that engine's kernels:
    :mod:`~whichgpu.estimate.routed_experts`)."""
    return bench.moe_kernels or bench.harness


def _serve_prefill_s(
    arch: ModelArch, prompt: int, batch: int, peak: float, kernels: str, slower: float = 1.0
) -> float:
    """The ideal prefill of a served batch's prompts: a causal forward over each
    (``served_flops_per_token`` at half the prompt, the mean context) at the peak, its
    attention core at its own, ``slower`` times below it (:func:`~whichgpu.estimate.perf.
    attention_slowdown`)."""
    return _prefill_flops(arch, prompt, kernels, slower) * batch / peak


def _prefill_flops(arch: ModelArch, prompt: int, kernels: str, slower: float) -> float:
    """A causal prefill's FLOPs over ``prompt`` tokens (``served_flops_per_token`` at half the
    prompt, the mean context), its attention core's counted ``slower`` times, at the peak of
    the GEMMs (:func:`~whichgpu.estimate.perf.attention_slowdown`)."""
    context = prompt // 2
    attention = attention_flops_per_token(arch, context) * (slower - 1)
    return (served_flops_per_token(arch, context, kernels) + attention) * prompt


def serve_prefill_ideal_s(bench: Benchmark, gpu: GPU, arch: ModelArch) -> float:
    """One request's ideal prefill inside a served batch's cycle (:func:`ideal_rate`'s
    ``llm-serve`` term, per request)."""
    parallel = 1 if bench.harness in LAYER_SPLIT_HARNESSES else bench.gpus
    math = _math_precision(bench)
    peak = tensor_tflops(gpu, math) * 1e12 * parallel
    slower = attention_slowdown(gpu, math, bench_job(bench, "inference").kv_dtype)
    return _serve_prefill_s(arch, bench.seq or 128, 1, peak, _kernels(bench), slower)


def _split(rate: float, compute_s: float, memory_s: float) -> Ideal:
    """An ideal rate whose time is ``compute_s`` bound by the math units and ``memory_s`` by
    memory (and links): the larger names the bound (Williams et al., 2009: large batches
    make a decode step compute-bound), the smaller is the other share."""
    total = compute_s + memory_s
    if total <= 0:
        return Ideal(rate, "memory bandwidth")
    if compute_s > memory_s:
        return Ideal(rate, "compute", memory_s / total)
    return Ideal(rate, "memory bandwidth", compute_s / total)


def _weights(arch: ModelArch, job: Job) -> float:
    """The weights' bytes as ``job`` stores them (:func:`_job_of` quantises an fp8
    measurement's linear layers to 8 bits already)."""
    from whichgpu.estimate.memory import weights_bytes

    return weights_bytes(arch, job)


def _decode_step(
    arch: ModelArch,
    job: Job,
    bench: Benchmark,
    context: int,
    peak: float,
    bandwidth: float,
    slower: float = 1.0,
) -> tuple[float, float]:
    """A decode step's seconds on the per-operator roofline, split into its compute-bound
    and its memory-bound kernels'. Each kernel runs at its own bound and the kernels run one
    after another (Yuan et al., 2024, "LLM Inference Unveiled: Survey and Roofline Model
    Insights", arXiv:2402.16363, §2.2: a layer's time is the sum of its operators'
    ``max(FLOPs / peak, bytes / bandwidth)``): the linear layers read the weights once for the
    batch (``2·N·B`` FLOPs), attention reads each sequence's KV cache
    (:func:`~whichgpu.estimate.perf.decode_attention_flops` a sequence, at its own peak,
    ``slower`` times below the GEMMs': :func:`~whichgpu.estimate.perf.attention_slowdown`;
    each tensor-parallel GPU that holds a copy reads it:
    :func:`~whichgpu.estimate.kv_cache.kv_copies`). At a large
    batch the GEMMs are compute-bound and attention's KV reads come on top of them; each
    part then runs at its own resource's efficiency
    (:attr:`Ideal.other_share`)."""
    tp = 1 if bench.harness in LAYER_SPLIT_HARNESSES else bench.gpus
    weights = decode_weight_bytes(arch, job) + replicated_weights_bytes(arch, job, tp)
    kv = kv_read_bytes(arch, job, context, tp)
    linear_flops = served_flops_per_token(arch, 0, _kernels(bench)) * job.batch
    attention_flops = decode_attention_flops(arch, context) * job.batch * slower
    compute_s = memory_s = 0.0
    for flops, moved in ((linear_flops, weights), (attention_flops, kv)):
        if flops / peak > moved / bandwidth:
            compute_s += flops / peak
        else:
            memory_s += moved / bandwidth
    return compute_s, memory_s


def memory_class(gpu: GPU) -> str:
    return "hbm" if gpu.memory_type.upper().startswith("HBM") else "gddr"


def units_per_step(bench: Benchmark) -> float:
    """Units of work one step of the software produces (what a per-step overhead divides):
    a batch of images or of decoded tokens, a prompt's tokens, a training batch's tokens."""
    if bench.regime == "diffusion-infer":
        from whichgpu.estimate.diffusion_bench import diffusion_units_per_step

        return diffusion_units_per_step(bench)
    if bench.batch is None and bench.regime not in ("llm-decode", "llm-prefill"):
        return float("inf")  # a throughput figure at a large, unstated batch
    batch = float(bench.batch or 1)
    if bench.unit == "ms":
        return batch  # a latency: one request a step
    if bench.regime in ("llm-prefill",):
        return batch * (bench.seq or 512)
    if bench.regime in ("llm-train", "transformer-train"):
        return batch * (bench.seq or 2048) if bench.unit == "tokens/s" else batch
    if bench.regime in ("gemm", "fp64", "bandwidth", "render"):
        return float("inf")  # kernels timed alone, or a render's long frames: no step overhead
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
    #: Board power per FP32 TFLOPS at boost clock (W), for compute-bound work; None otherwise
    power_w_per_tflops: float | None = None
    #: The share of ``ideal_s`` the other resource binds (:attr:`Ideal.other_share`), which
    #: runs at that resource's factor and unit (``other_factor``, ``other_unit``)
    other_share: float = 0.0
    other_factor: str = ""
    other_unit: str = ""
    #: Tensor-parallel all-reduce ring start-ups the GPUs wait on per unit of work, in
    #: units of a 2-GPU ring's (:func:`collectives_per_unit`: a ring of n takes n − 1 times
    #: as many, for messages past the one-shot kernels' size); each costs the fitted
    #: latency ``tp:latency_s:HARNESS``, the α of Hockney's α + β·bytes model, one per
    #: software generation and link (fitted 2026-12: TensorRT-LLM's static-batching
    #: v0.5/v0.6 harness about 140 µs, its in-flight batching releases about 21 over
    #: NVLink and 67 over PCIe, the latter on the L40S's TP 4 and TP 8 rows)
    collectives: float = 0.0
    #: Seconds per unit of the all-reduces' start-ups over NVLink, which no fit sets: each
    #: call's :data:`~whichgpu.estimate.collectives.ALLREDUCE_START_S` (one-shot kernels)
    fixed_collective_s: float = 0.0
    #: The link those collectives cross (:func:`tensor_parallel_link`): NCCL over PCIe starts
    #: each one slower than an NVLink ring, so a harness's α is fitted apart for ``pcie``
    link: str = "nvlink"
    #: Seconds to stream a CNN image's activations once through DRAM at full bandwidth: the
    #: batch-norm, ReLU and residual-add kernels between the convolutions are elementwise and
    #: memory-bound, and run apart from them (cuDNN does not fuse them in training). The number
    #: of passes, ``cnn:passes_train`` / ``cnn:passes_infer``, is fitted.
    stream_s: float = 0.0
    #: The GPU's memory class (``hbm``/``gddr``): the stream runs at the bandwidth efficiency
    #: fitted for it on memory-bound work
    memory: str = "hbm"
    #: The fitted passes the stream runs (:func:`stream_term_of`)
    stream_term: str = ""


def power_density(gpu: GPU) -> float:
    """Board power available per FP32 TFLOPS at boost clock: ``tdp_w / fp32_tflops``, W per
    (SM × GHz) up to a constant. A card whose power limit is low for its units cannot hold
    its boost clock under sustained load (see :func:`sustained_clock`)."""
    return gpu.tdp_w / gpu.fp32_tflops


def observe(
    bench: Benchmark, gpu: GPU, arch: ModelArch | None = None, job: Job | None = None
) -> Observation | None:
    """A measurement (or a user's job described as one) against its roofline; ``arch`` is
    the model when it is not a preset the benchmark's name resolves to (a config.json, a
    generic size)."""
    if bench.regime == "llm-serve" and bench.batch is None:
        bench = _at_full_batch(bench, gpu, arch)
    ideal = ideal_rate(bench, gpu, arch, job)
    if ideal is None or ideal.rate <= 0:
        return None
    measured_rate = (
        1e3 / bench.value
        if bench.unit == "ms"
        else (1 / bench.value if bench.unit == "s" else bench.value)
    )
    compute = ideal.bound == "compute"
    if bench.regime == "render":
        factor = f"rt:{gpu.rt_core_gen if gpu.rt_cores and gpu.rt_core_gen else 'none'}"
        unit = "render"
    elif bench.regime == "diffusion-infer":
        # a pipeline of convolutions, attention and many small kernels: how well each
        # architecture runs it is its own factor (shared ones would mix it with GEMM work)
        factor = f"{DIFFUSION_FAMILY}{gpu.architecture if compute else memory_class(gpu)}"
        unit = f"{DIFFUSION_FAMILY}{math_unit(bench, gpu) if compute else 'memory'}"
    else:
        factor = compute_factor(bench, gpu) if compute else memory_class(gpu)
        unit = math_unit(bench, gpu) if compute else "memory"
    other_factor = other_unit = ""
    if ideal.other_share:
        other_factor = memory_class(gpu) if compute else compute_factor(bench, gpu)
        other_unit = "memory" if compute else math_unit(bench, gpu)
    link = tensor_parallel_link(bench, gpu)
    tp_arch = arch or bench_arch(bench.model)  # the model its all-reduces carry
    return Observation(
        bench=bench,
        ideal_s=1 / ideal.rate,
        measured_s=1 / measured_rate,
        units_per_step=units_per_step(bench),
        bound=ideal.bound,
        group=(bench.harness, bench.regime),
        factor=factor,
        unit=unit,
        # a power-limited clock binds under sustained full load; a denoising pipeline's
        # small launches and idle gaps between them do not hold it there
        power_w_per_tflops=power_density(gpu)
        if (compute or ideal.other_share) and bench.regime not in ("diffusion-infer",)
        else None,
        other_share=ideal.other_share,
        other_factor=other_factor,
        other_unit=other_unit,
        collectives=collectives_per_unit(bench, tp_arch, link),
        fixed_collective_s=ALLREDUCE_START_S * all_reduces_per_unit(bench, tp_arch, link),
        link=link,
        stream_s=stream_seconds(bench, gpu, *_streamed(bench, arch)),
        stream_term=stream_term_of(bench, gpu),
        memory=memory_class(gpu),
    )


def _streamed(bench: Benchmark, arch: ModelArch | None) -> tuple[ModelArch | None, Job | None]:
    """The model and job whose activations a measurement streams
    (:func:`~whichgpu.estimate.streams.stream_seconds`), resolved for the work that streams
    them: a CNN's (its precision and batch), a transformer's training."""
    if bench.regime in ("cnn-train", "cnn-infer"):
        task = "train" if bench.regime == "cnn-train" else "inference"
        return arch or bench_arch(bench.model), bench_job(bench, task)
    if bench.regime in ("llm-train", "transformer-train"):
        return arch or bench_arch(bench.model), None
    return arch, None


def _at_full_batch(bench: Benchmark, gpu: GPU, arch: ModelArch | None) -> Benchmark:
    """A maximum-throughput run published without its batch (TensorRT-LLM's perf overview
    since v0.12 gives lengths, not batches) ran as many sequences as its KV cache held, up to
    the max_batch_size trtllm-bench set for its lengths
    (:func:`~whichgpu.estimate.bench_batch.bench_max_batch`):
    :func:`~whichgpu.estimate.kv_pool.kv_sequences` with TensorRT-LLM's defaults."""
    import msgspec

    from whichgpu.estimate.bench_batch import bench_max_batch
    from whichgpu.estimate.kv_pool import kv_sequences
    from whichgpu.job.engines import ENGINES

    arch = arch or bench_arch(bench.model)
    if arch is None or (bench.precision or "16-true") not in (*QUANT_BITS, "16-true", "bf16-true"):
        return bench  # a format whichgpu does not model (FP4): no roofline
    job = bench_job(bench, "inference")
    prompt, out = bench.seq or 128, bench.generate or 128
    job = replace(job, prompt=prompt, generate=out, seq=prompt)
    engine = replace(ENGINES["trtllm"], max_sequences=bench_max_batch(arch, job, gpu, bench.gpus))
    batch = kv_sequences(arch, job, gpu, bench.gpus, engine)
    if batch < 1:
        return bench
    return msgspec.structs.replace(bench, batch=batch)


def observed_efficiency(bench: Benchmark, gpu: GPU) -> float | None:
    obs = observe(bench, gpu)
    return None if obs is None else obs.ideal_s / obs.measured_s
