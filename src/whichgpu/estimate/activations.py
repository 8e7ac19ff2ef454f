"""Activation memory: the tensors autograd saves for the backward pass, op by op.

The accounting is Korthikanti et al.'s ("Reducing Activation Recomputation in Large
Transformer Models", 2022, §4.1): every operation saves what its backward needs — a linear
layer its input (only when its weight is trained), a norm its input, an activation function
its input (or several intermediates when it is written as separate operations), softmax its
output, dropout a one-byte mask. Summed for a GPT layer in fp16 with dropout this is their
eq. 1, ``s·b·h·(34 + 5·a·s/h)`` bytes (checked by a test). Here the same bookkeeping runs
over the layer structure of each model family as Hugging Face transformers implements it, in
the dtypes the chosen precision gives (see :class:`Numerics`), so that one formula serves
fp32, autocast and pure 16-bit training, SDPA and eager attention, full fine-tuning and LoRA.

Under ``torch.compile`` AOTAutograd splits the joint graph with its min-cut partitioner
(``torch._functorch.partitioners.min_cut_rematerialization_partition``, Inductor's default):
elementwise operations are recomputed in the backward unless their output must be
materialised there anyway (``should_ban_recomputation``: the input of a matmul). A layer then
saves matmul inputs and outputs and the attention kernel's tensors only: each norm's input,
not its fp32 upcast or normalised copy; ``gate`` and ``up``, not ``act(gate)``; one cast of a
tensor however many linears read it (see :func:`decoder_layer_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from whichgpu.job import Job
from whichgpu.models.arch import ModelArch

#: Activation functions written as several elementwise operations save several tensors:
#: HF's ``gelu_new`` (x, tanh(·), 0.5·x and 1 + tanh(·)); fused kernels save their input only.
ACTIVATION_SAVED_TENSORS = {"gelu_new": 4, "gelu_fast": 4, "quick_gelu": 2}

#: peft casts an adapter's input to the adapter's dtype (fp32) and saves that copy.
LORA_INPUT_BYTES = 4


@dataclass(frozen=True)
class Numerics:
    """Bytes per element where a job keeps its tensors.

    ``compute``: matmul outputs (2 under autocast or 16-bit weights, 4 in fp32);
    ``residual``: the residual stream and norm outputs (the weights' dtype: fp32 weights under
    autocast keep it in fp32); ``autocast``: torch autocast casts a linear's input to 16 bits
    once per linear (only leaf weights are cached), so each trained linear saves its own copy.
    """

    compute: int
    residual: int
    autocast: bool
    #: Attention probabilities: HF transformers computes the softmax in fp32 and casts back;
    #: Megatron's fused scale-mask-softmax keeps them in 16 bits.
    softmax: int = 4
    #: What a trained linear saves of its input for the weight gradient, where it is not
    #: ``compute`` (0): Transformer Engine's FP8 GEMMs keep the FP8 cast they ran on, 1 byte
    #: (transformer_engine/pytorch/module/linear.py and layernorm_linear.py save the
    #: quantised input, ``ln_out`` for the latter, for the backward's wgrad GEMM)
    gemm_input: int = 0


def numerics(job: Job) -> Numerics:
    if job.precision == "32-true":
        return Numerics(4, 4, False)
    if job.precision in ("16-mixed", "bf16-mixed") and job.runtime == "torch":
        return Numerics(2, 4, True)
    if job.runtime == "megatron" and job.math == "fp8-mixed":
        return Numerics(2, 2, False, 2, gemm_input=1)
    return Numerics(2, 2, False, 4 if job.runtime == "torch" else 2)


@dataclass(frozen=True)
class Trained:
    """Which weights receive gradients: all of them, or LoRA adapters on some linears
    (``adapted``: how many adapted matrices read each (role, tensor) of a layer)."""

    full: bool
    adapted: tuple[tuple[tuple[str, str], int], ...] = ()
    #: The frozen linears are 4-bit ones that save their input all the same
    #: (:attr:`~whichgpu.job.Job.kbit_saves_inputs`: bitsandbytes' ``MatMul4Bit``)
    frozen_save_inputs: bool = False

    def readers(self, key: tuple[str, str]) -> int:
        return next((n for k, n in self.adapted if k == key), 0)


def trained(arch: ModelArch, job: Job) -> Trained:
    if job.task not in ("lora", "qlora"):
        return Trained(True)
    from whichgpu.models.lora_targets import adapted

    linears = adapted(arch, job.lora_targets)
    out_proj = [lin for lin in arch.linears if lin.role == "attn"][-1:]
    counts: dict[tuple[str, str], int] = {}
    for lin in linears:
        # the attention output projection reads the merged heads; an MLA's other inner
        # matrices read its latents, which are small (kv_lora_rank wide) and not counted
        if lin.role == "attn" and lin.reads == "inner" and lin not in out_proj:
            continue
        counts[(lin.role, lin.reads)] = counts.get((lin.role, lin.reads), 0) + 1
    return Trained(False, tuple(counts.items()), job.task == "qlora" and job.kbit_saves_inputs)


def _linear_inputs(
    n: Numerics,
    t: Trained,
    key: tuple[str, str],
    consumers: int,
    elements: float,
    compiled: bool = False,
    adapters_fp32: bool = True,
) -> float:
    """Bytes saved for the inputs of ``consumers`` linears reading one tensor of ``elements``
    (``key``: the readers' role and tensor, see :class:`~whichgpu.models.arch.Linear`).

    A trained linear saves its input: the tensor itself (once, shared by all readers) in plain
    precision; its own 16-bit cast under autocast. A LoRA adapter (peft) casts the input to the
    adapter's fp32 dtype and saves that copy, once per adapted reader; a frozen linear saves
    nothing, but a QLoRA base's 4-bit linear in bitsandbytes saves the tensor itself, once
    for all its readers (:attr:`Trained.frozen_save_inputs`). Compiled, the graph computes a
    cast of one tensor once (common subexpressions are merged), so every reader shares one
    copy. Adapters in the model's dtype (torchtune) read the tensor itself: one copy in the
    compute dtype, whatever the readers.
    """
    if t.full:
        saved = n.gemm_input or n.compute
        return elements * saved * (consumers if n.autocast and not compiled else 1)
    readers = t.readers(key)
    frozen = elements * n.compute if t.frozen_save_inputs and consumers else 0.0
    if not adapters_fp32:
        return max(frozen, elements * n.compute * min(readers, 1))
    return frozen + elements * LORA_INPUT_BYTES * (min(readers, 1) if compiled else readers)


def _norm(n: Numerics, t: Trained, kind: str, elements: float, saved_input: int = 0) -> float:
    """A norm's saved tensors. HF's RMSNorm upcasts to fp32 and saves that copy (pow and mul
    need it) plus, when its weight trains, the normalised input of ``weight * x``; LayerNorm
    (one fused kernel, run in fp32 under autocast) saves its input. Compiled, an RMSNorm keeps
    only its input, ``saved_input`` bytes an element (the upcast and the normalised copy are
    elementwise and recomputed in the backward)."""
    if kind == "rmsnorm":
        if saved_input:
            return elements * saved_input
        return elements * (4 + (n.residual if t.full else 0))
    if kind == "batchnorm":
        return elements * n.compute
    return elements * (4 if n.autocast else n.residual)


def decoder_layer_bytes(arch: ModelArch, job: Job, batch: int, seq: int) -> float:
    """Bytes saved by one transformer layer for a micro-batch of ``batch × seq`` tokens.

    Compiled (``job.compiled``; the partition rule in the module docstring), checked tensor
    by tensor against the forward graph torch 2.13's partitioner emits for a Hugging Face
    Llama layer (full fine-tuning in bf16 and under autocast, LoRA on q/v and on every
    linear: equal to the byte): the first norm keeps the layer's input (the residual dtype),
    the second the attention block's output (the compute dtype: the partitioner keeps the
    smaller summand and recomputes the sum); a tensor's cast is shared by its readers; an
    activation function keeps only its input.

    Megatron-core (``job.runtime == "megatron"``) saves the same tensors with fused kernels
    of its own: Transformer Engine's ``LayerNormLinear`` keeps the norm's input and the
    normalised tensor its GEMM reads, no fp32 copy; ``bias_swiglu_impl``
    (megatron/core/fusions/fused_bias_swiglu.py) keeps the first linear's output, gate and
    up, and recomputes the SiLU in its backward; attention is TE's flash kernel. Counted the
    HF way, a Llama 3.1 405B step at NeMo's H100 recipe (TP 8 × PP 8 × CP 2, micro-batch 1,
    no recomputation: Megatron-Bridge's LLAMA31_405B_PRETRAIN_CONFIG_H100_*_V1) held 54 GiB
    of activations a GPU and did not fit the 80 GB it runs on; counted so, 37 GiB."""
    n, t = numerics(job), trained(arch, job)
    compiled, fp32 = job.compiled or job.runtime == "megatron", job.adapters_fp32
    tokens = float(batch) * seq
    h, heads, kv, d = arch.hidden_size, arch.n_heads, arch.n_kv_heads, arch.head_dim
    c = n.compute
    q_width, kv_width = heads * d, kv * d
    if arch.attention == "mla":
        q_width, kv_width = heads * d, heads * d  # decompressed per-head keys and values
    total = 0.0

    # --- attention block: norm, projections, attention core, output projection --------
    total += _norm(n, t, arch.norm, tokens * h, n.residual if compiled else 0)
    readers = sum(1 for lin in arch.linears if lin.role == "attn" and lin.reads == "x")
    total += _linear_inputs(n, t, ("attn", "x"), readers, tokens * h, compiled, fp32)
    if job.attention == "eager":
        # q·kᵀ saves q and the keys (repeated to every head); softmax saves its fp32 output,
        # its cast to the compute dtype is saved by the product with the (repeated) values.
        total += tokens * (q_width + 2 * heads * d) * c
        scores = float(batch) * heads * seq * seq
        total += scores * n.softmax
        if arch.attention_dropout:
            total += scores * (1 + c)  # dropout's mask, and its output saved by the product
        elif c != n.softmax:
            total += scores * c  # the cast back to the compute dtype, saved by the product
    else:
        # SDPA (flash / memory-efficient kernels) saves q, k, v, its output and the log-sum-exp.
        total += tokens * (2 * q_width + 2 * kv_width) * c + float(batch) * heads * seq * 4
    # the merged heads, o_proj's input
    total += _linear_inputs(n, t, ("attn", "inner"), 1, tokens * q_width, compiled, fp32)
    if arch.hidden_dropout:
        total += tokens * h  # residual dropout mask (saved whenever the input needs a gradient)

    # --- MLP block --------------------------------------------------------------------
    if arch.family not in ("gptj",):
        total += _norm(n, t, arch.norm, tokens * h, c if compiled else 0)
    width = float(arch.intermediate_size)
    role = "mlp"
    if arch.is_moe:
        width = arch.experts_per_token * arch.moe_intermediate_size
        role = "expert"
        total += tokens * arch.n_experts * 4  # router logits (fp32 softmax)
        if t.full:
            total += _linear_inputs(n, t, (role, "x"), arch.experts_per_token, tokens * h)
        else:  # LoRA on the experts' gate and up: a copy per adapted matrix of routed experts
            total += tokens * h * 4 * arch.experts_per_token * t.readers((role, "x")) / 2
            if t.frozen_save_inputs:  # each routed expert's gathered tokens, its gate's and up's
                total += tokens * h * c * arch.experts_per_token
    if arch.ffn_kind == "glu":
        if not arch.is_moe:
            total += _linear_inputs(n, t, (role, "x"), 2, tokens * h, compiled, fp32)
        # act(gate) saves gate; act·up saves both factors; down saves the product. Compiled:
        # gate and up only, act(gate) is recomputed from gate
        total += tokens * width * c * (2 if compiled else 3)
        total += _linear_inputs(n, t, (role, "inner"), 1, tokens * width, compiled, fp32)
    else:
        total += _linear_inputs(n, t, (role, "x"), 1, tokens * h, compiled, fp32)
        saved = 1 if compiled else ACTIVATION_SAVED_TENSORS.get(arch.activation, 1)
        total += tokens * width * c * saved
        total += _linear_inputs(n, t, (role, "inner"), 1, tokens * width, compiled, fp32)
    if arch.hidden_dropout:
        total += tokens * h
    return total


def checkpointed_layer_bytes(arch: ModelArch, job: Job, batch: int, seq: int) -> float:
    """With full activation checkpointing a layer keeps only its input (Korthikanti §4:
    ``2·s·b·h`` in 16 bits); the layer is recomputed, whole, during its backward."""
    return float(batch) * seq * arch.hidden_size * numerics(job).residual


def recomputed_share(arch: ModelArch, job: Job) -> float:
    """The share of a GPU's layers that full recomputation recomputes: every one, or
    :attr:`~whichgpu.job.Job.recompute_layers` of each model chunk's (Megatron-core's block
    method: ``TransformerBlock._checkpointed_forward`` checkpoints the chunk's first
    ``recompute_num_layers`` layers and runs the others plainly); 0 without it."""
    if job.checkpointing != "full":
        return 0.0
    if not job.recompute_layers:
        return 1.0
    from whichgpu.estimate.pipeline import virtual_stages

    chunks = job.vp or virtual_stages(arch, job)  # a given --vp is launched as given
    chunk = arch.n_layers / (max(job.pp, 1) * max(chunks, 1))
    return min(1.0, job.recompute_layers / max(chunk, 1.0))


def model_activation_bytes(arch: ModelArch, job: Job, batch: int, seq: int, layers: int) -> float:
    """Saved activations of ``layers`` layers at the end of the forward pass. (With
    checkpointing, the layer recomputed during backward is :func:`recompute_bytes`.) Under
    partial recomputation the recomputed share keeps its inputs, the rest everything."""
    if job.checkpointing == "full":
        share = recomputed_share(arch, job)
        kept = checkpointed_layer_bytes(arch, job, batch, seq)
        if share >= 1.0:
            return layers * kept
        whole = decoder_layer_bytes(arch, replace(job, checkpointing="none"), batch, seq)
        return layers * (share * kept + (1.0 - share) * whole)
    per_layer = decoder_layer_bytes(arch, job, batch, seq)
    if job.checkpointing == "selective" and job.attention == "eager":
        # Selective recomputation drops the attention core's s² tensors (Korthikanti §4.2).
        eager = decoder_layer_bytes(arch, job, batch, seq)
        sdpa = decoder_layer_bytes(arch, _with_sdpa(job), batch, seq)
        per_layer = min(eager, sdpa)
    return layers * per_layer


def recompute_bytes(arch: ModelArch, job: Job, batch: int, seq: int) -> float:
    """With full checkpointing, one layer's activations exist again while it is recomputed
    and back-propagated, one layer at a time."""
    if job.checkpointing != "full" or arch.kind == "cnn":
        return 0.0
    return decoder_layer_bytes(arch, job, batch, seq)


def _with_sdpa(job: Job) -> Job:
    from dataclasses import replace

    return replace(job, attention="sdpa")


def resnet_image_bytes(arch: ModelArch, job: Job) -> float:
    """Saved activations of one image through a bottleneck ResNet (HF ``ResNetModel``):
    each convolution's output is saved by its BatchNorm, each ReLU saves its output (the next
    convolution's input), max-pooling its input and int64 indices."""
    n = numerics(job)
    c = n.compute
    side = arch.image_size // 2  # 7×7 stride-2 stem
    total = side * side * arch.stem_width * (c + c)  # stem conv out (BN) + ReLU out
    pooled = side // 2
    total += pooled * pooled * arch.stem_width * 8  # max-pool indices (int64)
    side = pooled
    width_in = arch.stem_width
    for stage, (blocks, width) in enumerate(arch.stages):
        inner = width // 4
        for block in range(blocks):
            stride = 2 if (block == 0 and stage > 0) else 1
            out_side = side // stride
            total += side * side * inner * 2 * c  # 1×1 reduce: BN input + ReLU output
            total += out_side * out_side * inner * 2 * c  # 3×3: BN input + ReLU output
            total += out_side * out_side * width * c  # 1×1 expand: BN input
            if block == 0:
                total += out_side * out_side * width * c  # projection shortcut: BN input
            total += out_side * out_side * width * c  # ReLU after the residual add
            side, width_in = out_side, width
    total += width_in * c  # pooled features saved by the classifier
    return float(total)
