"""A tensor-parallel step's all-reduces: how many a unit of work waits on, over which link,
and what they cost before any fit (the engines' one-shot start-ups); the fitted ring term
is :mod:`whichgpu.estimate.efficiency_model`'s (``tp:latency_s:HARNESS``)."""

from __future__ import annotations

from whichgpu.catalog.records import GPU, Benchmark
from whichgpu.estimate.parallel import nvlink_domain
from whichgpu.models.arch import ModelArch

#: Harnesses that split a model's layers across GPUs, so that the GPUs work in turn.
LAYER_SPLIT_HARNESSES = frozenset({"llamacpp", "llamacpp-2023-12"})


def tensor_parallel_link(bench: Benchmark, gpu: GPU) -> str:
    """``pcie`` where a run's tensor-parallel ring leaves the NVLink domain
    (:func:`~whichgpu.estimate.parallel.nvlink_domain`: L40S cards, a PCIe pair without its
    bridge), else ``nvlink``. TensorRT-LLM's own all-reduce kernels exchange through peer
    memory over NVLink; over PCIe it calls NCCL, whose every collective starts slower."""
    tp = 1 if bench.harness in LAYER_SPLIT_HARNESSES else bench.gpus
    return "pcie" if tp > 1 and nvlink_domain(gpu, bench.nvlink_bridge) < tp else "nvlink"


#: One small all-reduce's time over NVLink (or AMD's xGMI) in the engines' own one-shot
#: kernels, nearly flat in the degree: vLLM's custom all-reduce 9-10 µs at TP 2, 4 and 8 on
#: H100 and SGLang's 3.7-5.9 µs (sgl-project/sglang#2904, unit test without CUDA graphs),
#: vLLM's 7-10 µs at 0.5 MB on TP 2 and 4 (vllm-project/vllm#24111), NCCL's NVLS 5.6-6 µs
#: at 128-512 bytes on two H100s (NVIDIA/nccl#1259), 6-7 µs on MI300 and MI355X
#: (vllm-project/vllm#19744, #39080): the α of Hockney's α + β·bytes, 8 µs.
ALLREDUCE_START_S = 8e-6

#: Bytes an activation element takes in a tensor-parallel all-reduce (16-bit, whatever the
#: weights' format: FP8 models reduce their BF16 activations)
ACTIVATION_BYTES = 2


def _passes(bench: Benchmark, arch: ModelArch) -> tuple[float, float] | None:
    """Per unit of ``bench``'s work: the forward passes the GPUs all-reduce through, and
    the tokens those passes carry (a prefill: one pass per request; a decode step or a
    served batch: one pass for the prompts, one per generated token); None where no
    tensor-parallel all-reduce runs."""
    n = bench.gpus
    if n <= 1 or bench.harness in LAYER_SPLIT_HARNESSES or not arch.n_layers:
        return None
    batch = bench.batch or 1
    w = bench.regime
    if w == "llm-prefill" and bench.unit == "ms":
        return 1 / batch, bench.seq or 512
    if w == "llm-prefill":
        return 1 / (batch * (bench.seq or 512)), 1.0
    if w == "llm-decode":
        return 1 / batch, 1.0
    if w == "llm-serve" and bench.batch:
        out = bench.generate or 128
        prompt = bench.seq or 128
        per_gpu = n if bench.unit == "tokens/s/gpu" else 1
        return per_gpu * (1 + out) / (batch * out), per_gpu * (prompt + out) / out
    return None


def all_reduces_per_unit(bench: Benchmark, arch: ModelArch | None, link: str) -> float:
    """Megatron-LM's two all-reduces per layer and forward pass (Shoeybi et al., 2019, §3),
    per unit of work, over NVLink (each costs :data:`ALLREDUCE_START_S`; over PCIe NCCL's
    ring start-ups are :func:`collectives_per_unit`'s)."""
    found = None if arch is None or link != "nvlink" else _passes(bench, arch)
    if found is None or arch is None:
        return 0.0
    if bench.attention_dp:  # an all-gather and a reduce-scatter a MoE layer
        return 2.0 * arch.n_moe_layers * found[0]
    return 2.0 * arch.n_layers * found[0]


#: The all-reduce message the engines' one-shot kernels take whole: vLLM's custom
#: all-reduce runs one-shot up to 512 KB (two-shot or NCCL past it; vllm-project/vllm#24111
#: measures the kernels at 0.5 and 1 MB), TensorRT-LLM's AUTO strategy likewise picks its
#: one-shot kernel for small messages. A ring's per-hop start-ups bind past it.
ONE_SHOT_BYTES = 512 * 1024


def collectives_per_unit(bench: Benchmark, arch: ModelArch | None, link: str) -> float:
    """Tensor-parallel all-reduce ring start-ups per unit of work: Megatron-LM's two
    all-reduces a layer and pass (Shoeybi et al., 2019, §3), each a ring whose latency term
    is 2(n−1)·α on n GPUs (Thakur, Rabenseifner & Gropp, 2005, §4.5), counted in units of a
    2-GPU ring's. Over NVLink a message the engines' one-shot kernels take whole
    (:data:`ONE_SHOT_BYTES`: a light-load decode step's) pays its share of them only (the
    kernel's own start-up is :func:`all_reduces_per_unit`'s, flat in the degree); a
    maximum-load batch's megabytes pay every hop, where the fit sets α. Over PCIe NCCL's
    ring runs every message (with one latency for every degree, the fit read TP 2 slow and
    TP 8 fast: TensorRT-LLM's v0.20 table, −23 % and +2 % on H100)."""
    found = None if arch is None else _passes(bench, arch)
    if found is None or arch is None:
        return 0.0
    n, batch = bench.gpus, bench.batch or 1
    hops = 2.0 * arch.n_layers * (n - 1)
    if bench.attention_dp:  # a ring all-gather and reduce-scatter a MoE layer: one all-reduce's
        hops = float(arch.n_moe_layers * (n - 1))
    if link != "nvlink":
        return hops * found[0]

    def ring_share(tokens: float) -> float:
        """How much of a ring's start-ups a message of ``tokens`` activations pays."""
        return min(1.0, tokens * arch.hidden_size * ACTIVATION_BYTES / ONE_SHOT_BYTES)

    w = bench.regime
    if w == "llm-prefill":  # one pass of the batch's prompts
        return hops * found[0] * ring_share(batch * (bench.seq or 512))
    if w == "llm-decode":
        return hops * found[0] * ring_share(batch)
    # a served batch: a pass for the prompts, one per generated token
    out, prompt = bench.generate or 128, bench.seq or 128
    per_gpu = n if bench.unit == "tokens/s/gpu" else 1
    decode = ring_share(batch) * out / (batch * out)
    prefill = ring_share(batch * prompt) / (batch * out)
    return hops * per_gpu * (decode + prefill)
