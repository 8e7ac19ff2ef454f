"""What the user asks about: the job whose memory (and later speed and cost) is estimated.

Precision names are PyTorch Lightning's (``32-true``, ``16-mixed``, ``bf16-mixed``,
``16-true``, ``bf16-true``). ``bf16-mixed`` is torch autocast over fp32 weights, as Lightning
and the Hugging Face Trainer run it; ``runtime="deepspeed"`` or ``"megatron"`` switches mixed
precision to 16-bit weights with fp32 master weights (Rajbhandari et al., 2020, §3.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Literal, get_args

from whichgpu.errors import InvalidInput, Ref
from whichgpu.models.arch import ModelArch

Task = Literal["inference", "train", "finetune", "lora", "qlora"]
Precision = Literal["32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true"]
#: Math modes that store like one of the precisions above: ``tf32`` is FP32 storage with
#: FP32 matmuls on tensor cores (torch.backends.cuda.matmul.allow_tf32); ``fp8-mixed`` is
#: Transformer Engine's recipe, bf16 autocast storage with FP8 GEMMs (its per-GEMM FP8 casts
#: are transient; cached FP8 weight copies, 1 byte a weight, are not counted).
Math = Literal["tf32", "fp8-mixed"]
MATH_STORAGE: dict[str, str] = {"tf32": "32-true", "fp8-mixed": "bf16-mixed"}
Runtime = Literal["torch", "deepspeed", "megatron"]
#: ``adamw``: torch.optim.AdamW (foreach, its default on GPUs); ``adamw-fused``: with
#: ``fused=True`` (one kernel, no step temporaries; the HF Trainer's ``adamw_torch_fused``);
#: ``paged-adamw-8bit``: bitsandbytes' PagedAdamW8bit, its states in CUDA unified memory
Optimizer = Literal["adamw", "adamw-fused", "adamw-8bit", "paged-adamw-8bit", "sgd", "adafactor"]
#: What lives in host memory: ``optimizer`` (ZeRO-Offload: fp32 master weights, optimizer
#: states and gradients; FSDP's CPUOffload) or ``all`` (the parameters as well: ZeRO-Infinity,
#: FSDP ``offload_params``)
Offload = Literal["none", "optimizer", "all"]
#: The network between nodes: ``infiniband`` (one NIC per GPU at its generation's rate, as
#: DGX/HGX clusters are built) or ``ethernet`` (one 100 GbE port per node, no RDMA)
Network = Literal["infiniband", "ethernet"]
Checkpointing = Literal["none", "selective", "full"]
Attention = Literal["sdpa", "eager"]
#: A convolutional network's activations in memory: PyTorch's ``contiguous`` (NCHW) or
#: ``channels_last`` (NHWC, ``model.to(memory_format=torch.channels_last)``)
MemoryFormat = Literal["contiguous", "channels_last"]
#: Where quantised weights are made: ``load``, each weight quantised as it is read
#: (``from_pretrained`` with a ``quantization_config``: bitsandbytes, torchao's TorchAoConfig,
#: GGUF; or a checkpoint saved quantised), so the 16-bit model never sits whole on the GPU; or
#: ``gpu``, the 16-bit model moved to the GPU and then quantised in place (torchao's
#: ``quantize_`` after ``.to("cuda")``, as torchao's README and the diffusers-torchao
#: benchmarks run it), so the peak holds every 16-bit weight once
QuantizeOn = Literal["load", "gpu"]
#: Speculative decoding's drafters (:mod:`whichgpu.estimate.speculative`): an EAGLE-3 head
#: trained for the model, the model's own multi-token prediction modules (DeepSeek-V3's MTP),
#: or n-gram lookup in the prompt and the output so far (vLLM's ``ngram``, SGLang's and
#: TensorRT-LLM's n-gram drafting)
Speculative = Literal["eagle3", "mtp", "ngram"]
SPECULATIVE_METHODS: tuple[str, ...] = ("eagle3", "mtp", "ngram")
#: Tokens drafted a step where the user gives none: SGLang's EAGLE-3 chain of 3
#: (``--speculative-num-steps 3``, the EAGLE-3 paper's SGLang runs, Table 3) and its
#: DeepSeek MTP default (docs "Speculative Decoding": steps 3, topk 1, 4 draft tokens),
#: TensorRT-LLM's n-gram at a batch of 32 (its n-gram blog: max_draft_len 3)
DEFAULT_DRAFT_TOKENS: dict[str, int] = {"eagle3": 3, "mtp": 3, "ngram": 3}
#: Tokens a verification step yields on average (the acceptance length τ, the model's own
#: token included) where the user gives none: DeepSeek-V3's MTP at 3 draft tokens 2.18
#: (LMSYS, 2025-07-17, "Accelerating SGLang with Multiple Token Prediction": 2.18 at a
#: 3-token window); n-gram drafting on a conversation's first turn 1 + 1.37 (TensorRT-LLM's
#: n-gram blog, Llama 4 Scout: its acceptance length counts accepted drafts, as its
#: speed-ups above it show); an EAGLE-3 chain of 3: fitted on SGLang's 2-sequence run in
#: the EAGLE-3 paper (Table 3, 1.81× on an H100, Llama 3.1 8B), the one value here fitted
#: rather than read (an effective length: the engine's drafting overheads are in it)
DEFAULT_ACCEPTANCE: dict[str, float] = {"eagle3": 2.08, "mtp": 2.18, "ngram": 2.37}
#: LoRA targets: a named set or PEFT module names, comma-separated (models.lora_targets)
LoraTargets = str
KvDtype = Literal["auto", "fp16", "bf16", "fp8"]

#: Weight formats for frozen or served weights, with their bits per weight (a float).
#: int8/fp8: 8 bits plus one fp16/fp32 scale per row or block (negligible, ignored);
#: int4 (GPTQ/AWQ, group size 128): 4 bits + an fp16 scale and zero per group = 4.25;
#: nf4 (QLoRA, Dettmers et al., 2023, §3): 4 bits + 0.127 bits of double-quantized constants;
#: mxfp4 (OCP Microscaling Formats v1.0, §5: E2M1 elements, one E8M0 scale per block of 32):
#: 4 + 8/32 = 4.25; nvfp4 (NVIDIA Technical Blog, 2025-06-24, "Introducing NVFP4 for
#: Efficient and Accurate Low-Precision Inference": E2M1 elements, an FP8 E4M3 scale per
#: block of 16 and an FP32 scale per tensor): 4 + 8/16 = 4.5;
#: GGUF k-quants: bits per weight as llama.cpp's quantize tool reports them.
QUANT_BITS: dict[str, float] = {
    "fp8": 8.0,
    "int8": 8.0,
    "int4": 4.25,
    "mxfp4": 4.25,
    "nvfp4": 4.5,
    "nf4": 4.127,
    "q8_0": 8.5,
    "q6_k": 6.5625,
    "q5_k_m": 5.69,
    "q4_k_m": 4.89,
    "q4_0": 4.5,
    "q3_k_m": 3.91,
    "q2_k": 2.96,
}

#: The linear layers a weight format quantises where it is not all of them (attention, MLP
#: and experts): MXFP4 as gpt-oss ships it, its experts only (its config.json's
#: ``quantization_config.modules_to_not_convert``: attention, router, embeddings and head
#: stay in BF16); a format of a mixture's experts needs a model that has some.
QUANT_ROLES: dict[str, frozenset[str]] = {"mxfp4": frozenset({"expert"})}
#: Weight formats whose activations are quantised too (W8A8, NVFP4's W4A4), so that the
#: matmuls run on the format's own tensor cores where the GPU has them; the other formats
#: are weight-only, dequantised to 16 bits before the matmul
ACTIVATION_FORMATS = frozenset({"fp8", "int8", "nvfp4"})
#: The linear layers every other weight format quantises
ALL_LINEAR_ROLES = frozenset({"attn", "mlp", "expert"})

TASKS: tuple[str, ...] = get_args(Task)
PRECISIONS: tuple[str, ...] = get_args(Precision) + get_args(Math)
OPTIMIZERS: tuple[str, ...] = get_args(Optimizer)
OFFLOADS: tuple[str, ...] = get_args(Offload)
NETWORKS: tuple[str, ...] = get_args(Network)
ATTENTIONS: tuple[str, ...] = get_args(Attention)
MEMORY_FORMATS: tuple[str, ...] = get_args(MemoryFormat)
#: The precisions that store tensors in 16 bits (every one but ``32-true``)
SIXTEEN_BIT = frozenset(p for p in get_args(Precision) if p != "32-true")
QUANTIZE_ONS: tuple[str, ...] = get_args(QuantizeOn)


@dataclass(frozen=True)
class Job:
    """One training or inference job, on ``gpus`` GPUs (per-GPU memory is estimated)."""

    task: Task = "inference"
    precision: Precision = "bf16-true"
    #: How matmuls run when not in ``precision`` itself (tf32, fp8-mixed); None: as stored.
    math: Math | None = None
    runtime: Runtime = "torch"
    quant: str | None = None
    quantize_on: QuantizeOn = "load"
    batch: int = 1
    seq: int = 2048
    prompt: int = 0
    generate: int = 0
    #: Tokens at the start of every prompt that are the same for every request (a system
    #: prompt, few-shot examples), which an engine with a prefix cache prefills once and
    #: holds once (:attr:`~whichgpu.job.engines.EngineProfile.prefix_caching`)
    shared_prefix: int = 0
    #: Speculative decoding: the drafter, the tokens it drafts a step and the tokens a
    #: verification step yields on average (:mod:`whichgpu.estimate.speculative`); None: off
    speculative: Speculative | None = None
    draft_tokens: int = 0
    acceptance: float = 0.0
    optimizer: Optimizer = "adamw"
    checkpointing: Checkpointing = "none"
    #: With full recomputation, the layers of each model chunk that recompute, the first
    #: ones (Megatron-LM's ``--recompute-method block --recompute-num-layers N``, NeMo's and
    #: Megatron-Bridge's ``recompute_num_layers``); the others keep their activations.
    #: 0: every layer recomputes
    recompute_layers: int = 0
    attention: Attention = "sdpa"
    #: A fine-tune's examples packed into full sequences (TRL's ``packing``, axolotl's
    #: ``sample_packing``, torchtune's ``packed``): no padding. Unpacked, the default of the
    #: HF Trainer, TRL, torchtune and LLaMA-Factory, a batch is padded to its longest example
    #: and part of every step is spent on padding
    #: (:func:`~whichgpu.estimate.published_factors.training_factors`). Pretraining
    #: concatenates its documents into full sequences either way.
    packing: bool = False
    #: A convolutional network's layout in memory, where it trains: its 16-bit and TF32
    #: convolutions run on tensor cores in NHWC, behind cuDNN's transposes where the
    #: activations are contiguous (NCHW; :data:`~whichgpu.estimate.streams.NCHW_TERMS`).
    #: None: the recipe's (:func:`~whichgpu.plan.settings.recipe_memory_format`)
    memory_format: MemoryFormat | None = None
    #: PEFT's LoraConfig defaults: r = 8, target_modules per architecture
    lora_rank: int = 8
    lora_targets: LoraTargets = "peft-default"
    zero: int = 0
    tp: int = 1
    pp: int = 1
    #: Context parallelism: each sequence split over ``cp`` GPUs, its attention a ring that
    #: passes the keys and values round them (Megatron-LM's ``context_parallel_size``;
    #: Liu et al., 2023, "Ring Attention"); the data-parallel ranks are the GPUs over
    #: ``tp · pp · cp``
    cp: int = 1
    #: Virtual pipeline stages per GPU (Megatron's interleaved 1F1B); 0: as NeMo's recipes
    #: set it (:func:`~whichgpu.estimate.parallel.virtual_stages`)
    vp: int = 0
    gpus: int = 1
    #: A served mixture of experts laid out as the engines' DP attention with expert
    #: parallelism over the ``tp`` GPUs of a replica (vLLM's ``--data-parallel-size N
    #: --enable-expert-parallel``, SGLang's ``--dp N --enable-dp-attention``, TensorRT-LLM's
    #: ``enable_attention_dp``): each GPU holds the attention and the other dense weights
    #: whole and runs its own sequences through them, the routed experts split over the
    #: GPUs; no KV cache is held twice (:func:`~whichgpu.estimate.kv_cache.kv_copies`)
    attention_dp: bool = False
    #: The serving engine family whose routed experts' law a served MoE's step takes
    #: (:mod:`whichgpu.estimate.routed_experts`); None: the harness's the estimate is
    #: calibrated on
    moe_kernels: str | None = None
    kv_dtype: KvDtype = "auto"
    #: Micro-batches accumulated per optimizer step (global batch = batch · accumulation · dp)
    grad_accum: int = 1
    #: The optimizer steps each parameter as soon as its gradient exists (torchtune's
    #: ``optimizer_in_bwd``): no gradient buffer for the whole model
    optimizer_in_backward: bool = False
    offload: Offload = "none"
    #: Saved activations moved to host memory during the forward (torchtune's
    #: ``enable_activation_offloading``), fetched back for the backward
    activation_offload: bool = False
    #: Tensor-parallel collectives run under the GEMMs they feed (Transformer Engine's
    #: userbuffers: NeMo's and Megatron-Bridge's ``tp_comm_overlap``, with sequence
    #: parallelism): a layer waits only on what its GEMMs do not hide
    tp_overlap: bool = False
    #: Cross-entropy over chunks of the sequence (torchtune's CEWithChunkedOutputLoss, 8
    #: chunks): the logits are upcast to fp32 one chunk at a time
    chunked_loss: bool = False
    #: torch.compile over the model and the loss (torchtune's ``compile``, the HF Trainer's
    #: ``torch_compile``): Inductor fuses the loss's fp32 upcast, log-softmax and NLL into one
    #: kernel that keeps only each row's log-sum-exp for the backward
    compiled: bool = False
    #: LoRA adapters in fp32 (peft's ``autocast_adapter_dtype``: its adapters, their
    #: gradients and optimizer states, and the fp32 cast of each adapted input), or in the
    #: model's 16-bit dtype (torchtune builds the whole model in its ``dtype``)
    adapters_fp32: bool = True
    #: A QLoRA base's 4-bit linears save their input for the backward although their weight
    #: is frozen, as bitsandbytes' ``MatMul4Bit`` does (bitsandbytes/autograd/_functions.py:
    #: ``if any(ctx.needs_input_grad[:2]): ctx.tensors = (A, B)``), which PEFT, TRL,
    #: axolotl, LLaMA-Factory and LitGPT quantise through; torchao's NF4 linear (torchtune's
    #: QLoRA: torchao/dtypes/nf4tensor.py ``LinearNF4``) saves only the weight
    kbit_saves_inputs: bool = True
    #: The model returns fp32 logits, outside what ``torch.compile`` fuses (torchtune's
    #: TransformerDecoder without output chunks: ``self.output(h).float()``; its compile covers
    #: the layers and the loss)
    logits_fp32: bool = False
    #: Megatron's cross-entropy fused in Transformer Engine (Megatron-Bridge's performance
    #: configs: ``cross_entropy_loss_fusion=True``, ``cross_entropy_fusion_impl="te"``): its
    #: kernel writes the gradient into the logits it reads, no fp32 copy kept
    loss_fusion: bool = False
    network: Network = "infiniband"
    #: Gb/s an instance on ``network``, as its offer sells it
    #: (:class:`~whichgpu.catalog.records.InstanceNetwork`); None: the default for the kind
    #: (:func:`whichgpu.estimate.parallel.instance_gbit`)
    network_gbit: float | None = None
    #: PCIe cards joined in pairs by NVLink bridges (an accessory instances do not state:
    #: without it a pair of A6000s or A100 PCIe cards talks over PCIe)
    nvlink_bridge: bool = False
    #: GPUs one node (one rented instance) holds: rings over more cross ``network``
    gpus_per_node: int = 8
    #: Inference engines that keep only the last position's logits (vLLM, generate()).
    all_logits: bool = True

    def __hash__(self) -> int:
        """The dataclass hash of every field, computed once: jobs key the estimators' caches
        (memory, compute, the layout search's trials), hundreds of lookups a recommend."""
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(_field_values(self))
            object.__setattr__(self, "_hash", cached)
        return cached

    def with_prefix(self, shared: int) -> Job:
        """This job with ``shared`` tokens of prefix common to every prompt (inference only:
        a training step has no cache to keep it in)."""
        if not shared:
            return self
        if self.training:
            raise InvalidInput("shared_prefix_training", field=("shared_prefix",))
        if shared >= (self.prompt or self.seq):  # the last token is prefilled, whatever is kept
            raise InvalidInput("shared_prefix_longer", field=("shared_prefix",), shared=shared,
                               prompt=self.prompt or self.seq)  # fmt: skip
        from whichgpu.frozen import evolve

        return evolve(self, shared_prefix=shared)

    def with_speculation(
        self, arch: ModelArch, method: str | None, tokens: int | None, acceptance: float | None
    ) -> Job:
        """This job served with speculative decoding by ``method`` (None: off, and then no
        draft length or acceptance may be given), its defaults where left open
        (:data:`DEFAULT_DRAFT_TOKENS`, :data:`DEFAULT_ACCEPTANCE`, the latter no more than
        the ``k + 1`` tokens a step can yield)."""
        if method is None:
            if tokens is not None or acceptance is not None:
                field = "draft_tokens" if tokens is not None else "acceptance"
                raise InvalidInput("speculative_needs_method", field=(field,),
                                   speculative=Ref(("speculative",)))  # fmt: skip
            return self
        if self.training:
            raise InvalidInput("speculative_training", field=("speculative",))
        if method == "mtp" and not arch.mtp_layers:
            raise InvalidInput("speculative_no_mtp", field=("speculative",), model=arch.name)
        k = DEFAULT_DRAFT_TOKENS[method] if tokens is None else tokens
        tau = default_acceptance(method, k) if acceptance is None else acceptance
        if not 1.0 <= tau <= k + 1:
            raise InvalidInput("speculative_acceptance", field=("acceptance",), value=tau,
                               high=k + 1, k=k)  # fmt: skip
        from whichgpu.frozen import evolve

        return evolve(self, speculative=method, draft_tokens=k, acceptance=tau)

    @property
    def training(self) -> bool:
        return self.task != "inference"

    @property
    def quantised(self) -> bool:
        """Whether the job holds quantised weights: a weight format, at inference or under
        QLoRA's frozen base."""
        return self.quant is not None and (self.task in ("inference", "qlora") or not self.training)

    @property
    def quant_roles(self) -> frozenset[str]:
        """The linear layers the job's weight format quantises (:data:`QUANT_ROLES`)."""
        return QUANT_ROLES.get(self.quant or "", ALL_LINEAR_ROLES)

    @property
    def math_precision(self) -> str:
        """The precision matmuls run in (the throughput estimator's ``--precision``)."""
        return self.math or self.precision

    @property
    def tokens(self) -> int:
        """Sequence length the job holds at once: prompt + generated tokens for inference."""
        if self.task == "inference" and (self.prompt or self.generate):
            return self.prompt + self.generate
        return self.seq

    @property
    def dp(self) -> int:
        """Data-parallel degree: the GPUs left after tensor, pipeline and context
        parallelism (replicas that each take their own sequences)."""
        return max(1, self.gpus // (self.tp * self.pp * self.cp))

    @property
    def shards(self) -> int:
        """The ranks that hold one copy of a stage's weights: the data-parallel and the
        context-parallel ones, over which the gradients are reduced and ZeRO (Megatron's
        distributed optimizer) partitions the state (Megatron-core: the data-parallel group
        ``with_context_parallel``)."""
        return self.dp * self.cp

    @property
    def global_batch(self) -> int:
        """Sequences (or images) an optimizer step takes: micro-batch × data-parallel GPUs ×
        accumulated micro-batches."""
        return self.batch * self.dp * self.grad_accum


#: A served prompt's tokens when neither the prompt nor the sequence is given: the same for
#: ``estimate`` and ``recommend`` (they answered one job at 2,048 and at 512 tokens in)
DEFAULT_PROMPT = 512


def build_job(**values: object) -> Job:
    """A :class:`Job` of checked values: a math format named as the precision (``tf32``,
    ``fp8-mixed``: :data:`MATH_STORAGE`) runs on its storage precision, and QLoRA's base
    weights are NF4 unless another format is given (Dettmers et al., 2023, §3)."""
    from dataclasses import replace

    if values.get("precision") in MATH_STORAGE:
        values["math"] = values["precision"]
        values["precision"] = MATH_STORAGE[str(values["math"])]
    job = Job(**values)  # type: ignore[arg-type]
    if job.task == "qlora" and job.quant is None:
        job = replace(job, quant="nf4")
    return job


def default_prompt(arch: ModelArch, seq: int | None, generate: int) -> int:
    """A served prompt left open: the sequence given, else :data:`DEFAULT_PROMPT` tokens,
    within what the model reads with its output (GPT-2's 1,024 positions take a 768-token
    prompt and 256 out, not a refusal of whichgpu's own default)."""
    if seq is not None:
        return seq
    room = arch.max_positions - generate if arch.max_positions else DEFAULT_PROMPT
    return max(1, min(DEFAULT_PROMPT, room))


#: A job's field values as one tuple, read in C (the hash of thousands of jobs a recommend)
_field_values = attrgetter(*Job.__dataclass_fields__)


def generated_tokens(arch: ModelArch, generate: int) -> int:
    """The tokens an inference job generates: none for an encoder (BERT reads its sequence
    and answers in one pass; it has no decode loop), else ``generate``."""
    return 0 if arch.kind == "encoder" else generate


def default_seq(arch: ModelArch, seq: int | None) -> int | None:
    """The sequence length to plan: the one given, else (None) the recipe's or
    :class:`Job`'s default, except that a model with a learned position table is trained at
    its table's length where that is shorter (GPT-2 at 1,024, BERT at 512: the lengths they
    were trained at, and the longest they take)."""
    if seq is not None or not arch.learned_positions:
        return seq
    return arch.max_positions if arch.max_positions < Job.seq else None


def default_acceptance(method: str, k: int) -> float:
    """The acceptance length of ``k`` drafted tokens where the user gives none: each draft
    accepted with the chance ``α`` that gives :data:`DEFAULT_ACCEPTANCE` at the default
    length (a chain stops at its first rejection: ``τ = 1 + α + … + α^k``, Leviathan et
    al., 2023, eq. 1), so a longer chain yields more, never more than ``k + 1``."""
    at = DEFAULT_DRAFT_TOKENS[method]
    target = DEFAULT_ACCEPTANCE[method]

    def tau(alpha: float, n: int) -> float:
        return sum(alpha**i for i in range(n + 1))

    lo, hi = 0.0, 1.0
    for _ in range(60):  # τ grows with α: bisection
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tau(mid, at) < target else (lo, mid)
    return round(tau(lo, k), 4)


def check_lengths(arch: ModelArch, job: Job) -> None:
    """The job's sequences within what the model reads (:func:`check_positions`,
    :func:`check_context`), and its weight format one the model has layers for
    (:func:`check_quant_roles`): one rule for fit, estimate and recommend, whatever the GPU."""
    check_positions(arch, job)
    check_context(arch, job)
    check_quant_roles(arch, job)


def check_quant_roles(arch: ModelArch, job: Job) -> None:
    """A format that quantises a mixture's experts only (:data:`QUANT_ROLES`) needs a model
    with experts: on a dense model it would leave every weight in 16 bits."""
    roles = QUANT_ROLES.get(job.quant or "")
    if roles == frozenset({"expert"}) and not arch.is_moe:
        raise InvalidInput("quant_experts_only", field=("quant",), quant=job.quant,
                           model=arch.name)  # fmt: skip


def check_positions(arch: ModelArch, job: Job) -> None:
    """A model with a learned position table cannot take a longer sequence."""
    if arch.learned_positions and job.tokens > arch.max_positions:
        raise InvalidInput(
            "learned_positions",
            model=arch.name,
            n=arch.max_positions,
            tokens=job.tokens,
            seq=Ref(("seq",)),
            prompt=Ref(("prompt",)),
            generate=Ref(("generate",)),
        )


def check_context(arch: ModelArch, job: Job) -> None:
    """A served request must fit the model's context: engines refuse a longer one (vLLM
    raises when ``max_model_len`` exceeds the model's ``max_position_embeddings`` unless told
    to allow it)."""
    if job.task != "inference" or not arch.max_positions or job.tokens <= arch.max_positions:
        return
    if not (job.prompt or job.generate):  # a sequence the model reads whole (fit --seq)
        raise InvalidInput("sequence_context", field=("seq",), model=arch.name,
                           n=arch.max_positions, tokens=job.tokens)  # fmt: skip
    raise InvalidInput(
        "serving_context",
        field=("prompt",),
        model=arch.name,
        n=arch.max_positions,
        tokens=job.tokens,
        prompt=Ref(("prompt",)),
        generate=Ref(("generate",)),
    )


def check_lora_targets(arch: ModelArch, job: Job) -> None:
    """LoRA targets must name linear modules the model has (PEFT raises for a name that
    matches nothing: "Target modules ... not found in the base model")."""
    if job.task not in ("lora", "qlora"):
        return
    from whichgpu.catalog.names import closest
    from whichgpu.models.lora_targets import (
        NAMED_SETS,
        module_names,
        target_names,
        unknown_targets,
    )

    valid = [*NAMED_SETS, *module_names(arch)]
    if target_names(arch, job.lora_targets) == ():  # "," or " ": a list of no names
        raise InvalidInput(
            "lora_targets_empty",
            field=("lora_targets",),
            value=job.lora_targets,
            valid=", ".join(valid),
        )
    unknown = unknown_targets(arch, job.lora_targets)
    if unknown:
        raise InvalidInput(
            "lora_targets_unknown",
            field=("lora_targets",),
            model=arch.name or arch.family,
            names=", ".join(unknown),
            valid=", ".join(valid),
            hint=closest(unknown[0], valid) or "",
        )
