"""Throughput and time: a roofline (Williams, Waterman & Patterson, 2009) per job.

time = max(FLOPs / (peak · η_compute), bytes / (bandwidth · η_memory)) + communication

* Training FLOPs per token: ``6·N + 12·L·h·s`` (PaLM, Chowdhery et al., 2022, App. B: the
  matmuls of forward and backward plus attention's ``QKᵀ`` and ``AV``); full recomputation adds
  one forward (``2·N + 4·L·h·s``); LoRA skips the frozen weights' gradients (``4·N + 8·L·h·s``).
* Inference: a forward pass is ``2·N`` per token plus ``4·L·h·context``; prefill is bound by
  compute, decode by reading the weights and the KV cache once per step (Kwon et al., 2023).
* CNNs: ResNet-50 is 4.09 GMACs per 224² image forward (torchvision), 2 FLOPs a MAC, and a
  training step costs three forwards.
* Multi-GPU data parallelism: a ring all-reduce moves ``2·(n−1)/n`` of the gradient bytes over
  the slowest link (NVLink inside its domain: an SXM baseboard, a bridged PCIe pair;
  PCIe otherwise; Patarasuk & Yuan, 2009).

The efficiencies η are fitted on published measurements (``scripts/fit_efficiency.py`` →
``catalog/data/efficiency.csv``), never typed in; see :mod:`whichgpu.estimate.efficiency`.
"""

from __future__ import annotations

from functools import lru_cache

from whichgpu.catalog.records import GPU
from whichgpu.estimate.assumptions import RESNET50_PARAMS
from whichgpu.estimate.kv_cache import kv_copies
from whichgpu.estimate.memory import expert_weights_bytes, weights_bytes
from whichgpu.job import Job, Precision
from whichgpu.models.arch import ModelArch

#: ResNet-50 forward, multiply-accumulates per 224² image (torchvision weights table, 4.09).
RESNET50_MACS = 4.09e9


def missing_math_unit(gpu: GPU, precision: str) -> str | None:
    """The tensor-core format ``precision`` needs and ``gpu`` lacks, or None: BF16 needs
    Ampere or later (a V100 has none: PyTorch's ``torch.cuda.is_bf16_supported()`` is False
    there), TF32 likewise, FP8 (Transformer Engine) Ada, Hopper or later."""
    if precision.startswith("bf16") and not gpu.bf16_tensor_dense_tflops:
        return "BF16"
    if precision == "tf32" and not gpu.tf32_tensor_dense_tflops:
        return "TF32"
    if precision in ("fp8", "fp8-mixed") and not gpu.fp8_tensor_dense_tflops:
        return "FP8"
    return None


def runs_natively(gpu: GPU, quant: str) -> bool:
    """Whether ``gpu``'s tensor cores compute in the weight format ``quant`` itself (FP8 on
    Ada, Hopper, Blackwell and CDNA 3; NVFP4 on Blackwell), not behind a dequantisation."""
    if quant == "fp8":
        return bool(gpu.fp8_tensor_dense_tflops)
    # NVFP4 (16-element blocks, FP8 scales) is NVIDIA's; CDNA 4's FP4 units take OCP MXFP4
    return quant == "nvfp4" and gpu.cuda and bool(gpu.fp4_tensor_dense_tflops)


def fp16_instead(gpu: GPU, precision: str) -> Precision | None:
    """The FP16 twin of a BF16 precision on a GPU without BF16 tensor cores (T4, V100:
    what a precision left open runs as there), else None."""
    if precision.startswith("bf16") and missing_math_unit(gpu, precision) is not None:
        return "16-mixed" if precision == "bf16-mixed" else "16-true"
    return None


def supported_instead(gpu: GPU, precision: str) -> str:
    """The nearest precision ``gpu`` runs, for a message."""
    if precision in ("fp8", "fp8-mixed"):
        return "bf16-mixed" if gpu.bf16_tensor_dense_tflops else "16-mixed"
    if precision == "tf32":
        return "32-true"
    return "16-true" if precision == "bf16-true" else "16-mixed"


def tensor_tflops(gpu: GPU, precision: str) -> float:
    """The dense peak a precision runs at: tensor cores for 16-bit, TF32, FP8 and INT8 math;
    FP32 cores for ``32-true`` (PyTorch keeps FP32 matmuls off TF32 by default); NVFP4 on
    FP4 tensor cores (Blackwell); weight-only quantised models (int4, GGUF k-quants) compute
    in FP16."""
    if precision == "32-true":
        return gpu.fp32_tflops
    if precision == "tf32":
        return gpu.tf32_tensor_dense_tflops or gpu.fp32_tflops
    if precision in ("fp8", "fp8-mixed"):
        return gpu.fp8_tensor_dense_tflops or gpu.fp16_tensor_dense_tflops
    if precision == "nvfp4":  # W4A4 on FP4 tensor cores; elsewhere dequantised (Marlin)
        native = gpu.fp4_tensor_dense_tflops if gpu.cuda else None
        return native or gpu.fp16_tensor_dense_tflops
    if precision == "int8":
        return gpu.int8_tensor_dense_tops or gpu.fp16_tensor_dense_tflops
    if precision == "fp64":
        return gpu.fp64_tensor_tflops or gpu.fp64_tflops
    if precision.startswith("bf16"):
        return gpu.bf16_tensor_dense_tflops or gpu.fp32_tflops
    return gpu.fp16_tensor_dense_tflops


def matmul_params(arch: ModelArch) -> float:
    """Parameters that take part in matmuls per token (embedding lookups are gathers; an
    MoE token uses only its routed experts)."""
    embedding = arch.params.embedding
    return float(arch.active_params - embedding + (embedding if arch.tied_embeddings else 0))


def routed_active_params(arch: ModelArch) -> float:
    """The routed experts' parameters a token runs through: ``top_k`` of each MoE layer's
    experts (an MoE's other weights, shared experts included, every token runs)."""
    if not arch.is_moe:
        return 0.0
    return float(arch.params.experts * arch.experts_per_token / arch.n_experts)


@lru_cache(maxsize=4096)
def train_flops_per_token(
    arch: ModelArch, job: Job, seq: int, executed: bool = False, recomputed: bool | None = None
) -> float:
    """PaLM (Chowdhery et al., 2022) App. B: ``6·N + 12·L·h·s`` a token (forward ``2·N``,
    backward ``4·N``: gradients of the inputs and of the weights). LoRA (Hu et al., 2021)
    freezes the base weights: their gradients are skipped, ``4·N``. Full recomputation
    (Chen et al., 2016) runs the forward again, ``+2·N`` and a third of the attention;
    selective recomputation (Korthikanti et al., 2022, §5) recomputes only the attention
    core (scores, softmax, values), a third of the attention term.

    PaLM's count (the model FLOPs that MFU is quoted in: no recomputation, every pair of
    positions) is the default; ``executed``: the FLOPs the kernels run, recomputation and
    :func:`attention_share` included, which set the time. ``recomputed`` counts the
    recomputation (or not) whatever ``executed`` says: the hardware FLOPs a published rate
    implies (:mod:`accuracy.published_runs`)."""
    n = matmul_params(arch)
    attention = 12.0 * arch.n_layers * arch.n_heads * arch.head_dim * seq
    if executed:
        attention *= attention_share(arch, job)
    flops = 4 * n + attention * 2 / 3 if job.task in ("lora", "qlora") else 6 * n + attention
    if not (executed if recomputed is None else recomputed):
        return flops
    if job.checkpointing == "full":
        from whichgpu.estimate.activations import recomputed_share

        flops += (2 * n + attention / 3) * recomputed_share(arch, job)
    elif job.checkpointing == "selective":
        flops += attention / 3
    return flops


def attention_share(arch: ModelArch, job: Job) -> float:
    """The share of the full score matrix (``QKᵀ`` and ``AV`` over every pair of positions)
    that attention kernels compute: a decoder's causal mask lets FlashAttention skip the
    blocks above the diagonal, half the pairs (Dao, 2023, "FlashAttention-2", §3.1, causal
    masking; PyTorch's SDPA dispatches to it); eager attention builds the whole matrix and
    masks it, as an encoder's bidirectional attention needs it whole."""
    if arch.kind == "decoder" and job.attention != "eager":
        return 0.5
    return 1.0


def forward_flops_per_token(arch: ModelArch, context: int) -> float:
    return 2 * matmul_params(arch) + attention_flops_per_token(arch, context)


def attention_flops_per_token(arch: ModelArch, context: int) -> float:
    """A token's attention core over ``context`` positions in a forward pass: ``QKᵀ`` and
    ``AV``, ``4·H·d`` a position (Kaplan et al., 2020, Table 1's ``2·n_layer·n_ctx·d_attn``
    per score and value product, doubled for a multiply-add's 2 FLOPs)."""
    return 4.0 * arch.n_heads * arch.head_dim * arch.layer_positions(context)


def attention_slowdown(gpu: GPU, linear_precision: str, kv_dtype: str) -> float:
    """How much slower than the linear layers' peak (``linear_precision``'s) a served
    model's attention core computes: in FP8 where its KV cache is FP8 (vLLM's docs,
    "Quantized KV Cache": with the FP8 KV cache on FlashAttention 3 "attention operations
    are also performed in the quantized (FP8) domain", queries quantized too; TensorRT-LLM's
    FP8 context FMHA takes FP8 K/V likewise), else in 16 bits: an FP8 checkpoint's W8A8
    quantises its linear layers only (vLLM's ``Fp8LinearMethod``; the cache stays in the
    model's dtype, ``--kv-cache-dtype auto``), so its attention runs at the 16-bit peak, as an
    INT8 (W8A8) model's does, and an NVFP4 model's with an FP8 cache at the 8-bit one. 1 where
    the linear layers compute in 16 bits (weight-only formats among them)."""
    attention = "fp8" if kv_dtype == "fp8" and gpu.fp8_tensor_dense_tflops else "bf16-true"
    if attention == "bf16-true" and not gpu.bf16_tensor_dense_tflops:
        attention = "16-true"
    return max(1.0, tensor_tflops(gpu, linear_precision) / tensor_tflops(gpu, attention))


def cached_prefill_share(arch: ModelArch, job: Job) -> float:
    """The share of a prompt's prefill FLOPs left to compute when its first
    ``job.shared_prefix`` tokens are in the engine's prefix cache: the other tokens' matmuls
    and their attention over the whole prompt, ``F(P) − F(C)`` over ``F(P)``, with ``F(n)``
    a causal prefill's ``n`` tokens at a mean context of ``n/2`` (the KV of the cached
    tokens is read, not computed: Kwon et al., 2023, vLLM, §4.4 shared prefix; Zheng et
    al., 2024, SGLang, §3 RadixAttention)."""
    prompt = job.prompt or job.seq
    shared = min(job.shared_prefix, prompt)
    if shared <= 0 or prompt <= 0:
        return 1.0

    def flops(n: int) -> float:
        return n * forward_flops_per_token(arch, n // 2)

    return (flops(prompt) - flops(shared)) / flops(prompt)


def image_flops(arch: ModelArch, training: bool) -> float:
    """FLOPs per image: ResNet-50's 4.09 GMACs scaled by parameters for other ResNets; ViT
    by the transformer formula over its patch tokens."""
    if arch.kind == "cnn":
        forward = 2 * RESNET50_MACS * arch.total_params / RESNET50_PARAMS
    else:
        forward = forward_flops_per_token(arch, arch.tokens_per_image) * arch.tokens_per_image
    return forward * (3 if training else 1)


def decode_bytes_per_step(arch: ModelArch, job: Job, context: int) -> float:
    """Bytes read per decode step: :func:`decode_weight_bytes` and :func:`kv_read_bytes`."""
    return decode_weight_bytes(arch, job) + kv_read_bytes(arch, job, context)


def decode_weight_bytes(arch: ModelArch, job: Job) -> float:
    """Weight bytes a decode step of ``job.batch`` sequences reads: every weight once, as the
    job stores it (an MoE step reads the experts its batch routes to:
    :func:`experts_touched` of them a layer)."""
    weights = weights_bytes(arch, job)
    if arch.is_moe:
        touched = experts_touched(arch.n_experts, arch.experts_per_token, job.batch)
        weights -= expert_weights_bytes(arch, job) * (1 - touched / arch.n_experts)
    return weights


def experts_touched(experts: int, top_k: int, tokens: float) -> float:
    """The experts a layer's ``tokens`` route to, on average, each token to ``top_k`` of
    ``experts`` with every expert as likely (a trained router's auxiliary load-balancing
    loss aims at that: Fedus et al., 2022, "Switch Transformers", eq. 4; DeepSeek-V3's
    bias-based balancing, arXiv:2412.19437 §2.1.2): an expert is missed by one token with
    probability ``1 − k/E``, by all of them with its ``tokens``-th power, so
    ``E · (1 − (1 − k/E)^tokens)`` are read (the occupancy expectation; fewer than
    ``min(E, k · tokens)``, the count if no two tokens shared an expert: 4 decoding
    sequences of DeepSeek-V3 read 30.5 of its 256 experts, not 32; 10 of Qwen3-30B-A3B's,
    61 of 128, not 80)."""
    if experts <= 0 or tokens <= 0:
        return 0.0
    miss = max(0.0, 1.0 - top_k / experts)
    return float(experts * (1.0 - miss**tokens))


def kv_read_bytes(arch: ModelArch, job: Job, context: int, tp: int = 1) -> float:
    """Each of the batch's sequences' KV cache over ``context`` tokens, read once a step by
    each of the ``tp`` GPUs that holds a copy (:func:`kv_copies`): the bytes the replica's
    GPUs read together."""
    kv_elem = 1.0 if job.kv_dtype == "fp8" else 2.0
    copies = kv_copies(arch, tp, job.attention_dp)
    return arch.layer_positions(context) * arch.kv_dim * job.batch * kv_elem * copies


def decode_attention_flops(arch: ModelArch, context: int) -> float:
    """A decode step's attention FLOPs a token over ``context`` cached positions: ``QKᵀ``
    and ``AV`` at 2 FLOPs a multiply-add, ``4·H·d`` a position (:func:`forward_flops_per_token`'s
    term). MLA decodes in its absorbed form: ``W_UK`` folded into the query and ``W_UV``
    into the output projection, so every head attends over the compressed latent itself,
    ``2·H·(d_c + d_h^R)`` for the scores and ``2·H·d_c`` for the values (DeepSeek-V2,
    arXiv:2405.04434, §2.1.2 and App. B; FlashMLA's and vLLM's MLA decode kernels run this
    form, their prefill the uncompressed one)."""
    if arch.attention == "mla" and arch.kv_lora_rank:
        per_position = 2.0 * arch.n_heads * (2 * arch.kv_lora_rank + arch.qk_rope_head_dim)
    else:
        per_position = 4.0 * arch.n_heads * arch.head_dim
    return per_position * arch.layer_positions(context)


def check_math_unit(gpu: GPU, precision: str) -> None:
    """``precision``'s tensor-core format on ``gpu``, or one line naming what runs there."""
    from whichgpu.errors import InvalidInput

    missing = missing_math_unit(gpu, precision)
    if missing is not None:
        raise InvalidInput(
            "precision_unsupported",
            field=("precision",),
            gpu=gpu.name,
            unit=missing,
            precision=precision,
            instead=supported_instead(gpu, precision),
        )
