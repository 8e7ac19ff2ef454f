"""GPU memory of a job, component by component, per GPU.

One function per quantity, returning bytes; :func:`estimate_memory` assembles them at the
phase where the job peaks. The layouts:

* Weights, gradients and Adam states: mixed-precision Adam as DeepSpeed and Megatron run it
  keeps 2 + 2 + 12 bytes per parameter (16-bit weights and gradients; fp32 master weights,
  momentum and variance; Rajbhandari et al., "ZeRO", 2020, §3.1); ZeRO stages 1/2/3 divide
  the optimizer, gradient and weight terms by the data-parallel degree (§5, eq. in fig. 1);
  with the weights split, the layer running and the next one are held whole, gathered
  (:func:`gathered_weights_bytes`).
  torch autocast (Lightning's ``bf16-mixed``, the HF Trainer) keeps fp32 weights and gradients
  instead, and 16-bit copies of the weights for the backward pass.
* Gradient accumulation: from the second micro-batch on, the forward and backward run beside
  the gradient buffer the earlier micro-batches filled (``zero_grad`` follows the step).
* ``torch.optim.AdamW`` (``foreach``, the default on GPUs) materialises one more
  parameter-sized tensor in ``step()`` (the ``sqrt`` of the variance): the step's peak.
* Activations: :mod:`whichgpu.estimate.activations` (Korthikanti et al., 2022).
* KV cache: ``2 · layers · kv_heads · head_dim · tokens · batch · bytes`` (GQA and MQA through
  kv_heads; MLA caches its latent, ``(kv_lora_rank + rope_dim) · layers · tokens``;
  DeepSeek-V2, 2024, §2.1.2); paged in blocks of 16 tokens (Kwon et al., vLLM, 2023).
* LoRA adapters: ``r · (d_in + d_out)`` parameters per adapted matrix (Hu et al., 2021), in
  fp32 as peft keeps them or in the model's dtype as torchtune builds them;
  QLoRA keeps the frozen weights in NF4 with double quantisation (Dettmers et al., 2023).
* Logits: ``batch · seq · vocab`` in the compute dtype, upcast to fp32 for the loss, whose
  log-softmax output is saved; in the backward pass its gradient adds two fp32 copies.
  torchtune's chunked cross-entropy upcasts one of 8 chunks at a time; a compiled loss
  fuses the upcast (unless the model upcasts before it, as torchtune's decoder does).
* Memory off the GPU's allocator: a paged optimizer's states (bitsandbytes ``Paged*``: CUDA
  unified memory, on the GPU while it has room and paged to host memory when it has not) and
  what is offloaded to host memory (ZeRO-Offload, Ren et al., 2021, §4: fp32 master weights,
  optimizer states and fp32 gradients on the CPU; ZeRO-Infinity / FSDP ``offload_params``:
  the parameters too, gathered a layer at a time; activation offloading) are reported apart:
  ``paged_bytes`` and ``host_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

from whichgpu.estimate.activations import (
    ACTIVATION_SAVED_TENSORS,
    model_activation_bytes,
    numerics,
    recompute_bytes,
    resnet_image_bytes,
)
from whichgpu.estimate.assumptions import (
    ADAM_8BIT_BYTES_PER_PARAM,
    ALLOCATOR_RESERVE_FRACTION,
    CNN_INFERENCE_LIVE_FRACTION,
    CUDA_CONTEXT_GIB,
    OFFLOAD_RESIDENT_LAYERS,
)
from whichgpu.estimate.kv_cache import kv_cache_bytes
from whichgpu.estimate.logits import logits_bytes
from whichgpu.estimate.pipeline import stage_share, virtual_stages
from whichgpu.frozen import evolve, memo
from whichgpu.job import QUANT_BITS, Job
from whichgpu.models.arch import ModelArch
from whichgpu.units import BYTES_PER_GIB

#: The components of a breakdown, in display order. ``overhead`` is never part of the
#: tensor total that validation compares with PyTorch's accounting.
COMPONENTS = (
    "weights",
    "master_weights",
    "gradients",
    "optimizer",
    "optimizer_step_temp",
    "activations",
    "logits",
    "kv_cache",
    "overhead",
)
#: The phases that run no layer: nothing gathered beside a ZeRO-3 shard
NOT_COMPUTING = frozenset({"optimizer step", "host", "paged", "loading"})


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-GPU bytes by component at the job's peak, and which phase that peak is in."""

    components: dict[str, float]
    phase: str
    parameters: int
    trainable_parameters: int
    job: Job
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: A paged optimizer's states (unified memory; not counted by PyTorch's allocator)
    paged_bytes: float = 0.0
    #: What the job keeps in host memory (offloaded states, parameters, activations)
    host_bytes: float = 0.0

    @memo
    def tensor_bytes(self) -> float:
        """Live tensors at the peak: what ``torch.cuda.max_memory_allocated`` measures."""
        return sum(v for k, v in self.components.items() if k != "overhead")

    @memo
    def total_bytes(self) -> float:
        # the recommender reads it for every candidate: computed once per estimate
        return self.tensor_bytes + self.components.get("overhead", 0.0)

    @property
    def total_gib(self) -> float:
        return self.total_bytes / BYTES_PER_GIB


# --- parameters ------------------------------------------------------------------------


def lora_parameters(arch: ModelArch, job: Job) -> int:
    """Adapter parameters: ``r·(d_in + d_out)`` per adapted matrix (Hu et al., 2021, §4.1),
    on the matrices PEFT's ``target_modules`` select (:mod:`whichgpu.models.lora_targets`)."""
    return _lora_parameters(arch, job.lora_rank, job.lora_targets)


@lru_cache(maxsize=1024)
def _lora_parameters(arch: ModelArch, rank: int, targets: str) -> int:
    from whichgpu.models.lora_targets import adapted

    return sum(rank * (lin.d_in + lin.d_out) * lin.count for lin in adapted(arch, targets))


def trainable_parameters(arch: ModelArch, job: Job) -> int:
    if not job.training:
        return 0
    if job.task in ("lora", "qlora"):
        return lora_parameters(arch, job)
    return arch.total_params


def linear_params(arch: ModelArch, roles: set[str]) -> int:
    return sum(lin.d_in * lin.d_out * lin.count for lin in arch.linears if lin.role in roles)


# --- weights, gradients, optimizer -----------------------------------------------------


def weight_bytes_per_param(job: Job) -> float:
    """Bytes of a stored weight: fp32 for ``32-true`` and torch autocast, 16-bit otherwise."""
    if job.precision == "32-true":
        return 4.0
    if job.training and job.task not in ("lora", "qlora") and job.runtime == "torch":
        return 4.0 if job.precision.endswith("mixed") else 2.0
    return 2.0


def weights_bytes(arch: ModelArch, job: Job) -> float:
    """Model weights (and LoRA adapters, in fp32 as peft keeps them), before sharding.

    Quantisation (``--quant``) applies to the linear layers' weights; embeddings, norms and
    the output head stay in 16 bits, as GPTQ, AWQ, bitsandbytes and GGUF k-quants keep them.
    """
    per_param = weight_bytes_per_param(job)
    total = arch.total_params * per_param
    if job.quant is not None and job.quantised:
        quantised = linear_params(arch, set(job.quant_roles))
        total = quantised * QUANT_BITS[job.quant] / 8 + (arch.total_params - quantised) * 2.0
    if job.task in ("lora", "qlora"):
        total += lora_parameters(arch, job) * adapter_bytes_per_param(job)
    return total


def expert_weights_bytes(arch: ModelArch, job: Job) -> float:
    """The routed experts' weights as ``job`` stores them: their bits where its format
    quantises them (:attr:`~whichgpu.job.Job.quant_roles`), else 16 bits (or the job's
    dtype)."""
    if job.quantised and "expert" in job.quant_roles:
        return arch.params.experts * QUANT_BITS[job.quant or ""] / 8
    if job.quantised:
        return arch.params.experts * 2.0
    return arch.params.experts * weight_bytes_per_param(job)


def replicated_weights_bytes(arch: ModelArch, job: Job, gpus: int) -> float:
    """The weights a replica of ``gpus`` GPUs holds (and a decode step reads) beyond one
    copy: under data-parallel attention (``job.attention_dp``) every GPU keeps all but the
    routed experts (attention, dense and shared-expert MLPs, embeddings and head), so
    ``gpus − 1`` more copies of them (vLLM's "Data Parallel Deployment": data parallel for
    the attention layers, expert or tensor parallel for the expert layers); 0 otherwise."""
    if not job.attention_dp or gpus <= 1 or not arch.is_moe:
        return 0.0
    return (gpus - 1) * (weights_bytes(arch, job) - expert_weights_bytes(arch, job))


def adapter_bytes_per_param(job: Job) -> float:
    """A LoRA adapter's weight (and its gradient): fp32 as peft keeps it, or the model's
    dtype where the framework builds it so (``job.adapters_fp32``)."""
    return 4.0 if job.adapters_fp32 or job.precision == "32-true" else 2.0


def master_weights_bytes(arch: ModelArch, job: Job) -> float:
    """fp32 master weights of 16-bit mixed-precision training (DeepSpeed, Megatron)."""
    mixed = job.precision.endswith("mixed") and job.runtime != "torch"
    return 4.0 * trainable_parameters(arch, job) if job.training and mixed else 0.0


def gradient_bytes_per_param(job: Job) -> float:
    if job.task in ("lora", "qlora"):
        return adapter_bytes_per_param(job)
    return weight_bytes_per_param(job)


def gradients_bytes(arch: ModelArch, job: Job) -> float:
    return trainable_parameters(arch, job) * gradient_bytes_per_param(job)


def optimizer_state_bytes_per_param(job: Job) -> float:
    """Adam's momentum and variance in the dtype of the weights it updates (fp32 masters for
    DeepSpeed/Megatron mixed precision): 8 bytes, or 4 for pure 16-bit weights."""
    state = 4.0 if master_weights_bytes_needed(job) else gradient_bytes_per_param(job)
    if job.optimizer in ("adamw", "adamw-fused"):
        return 2 * state
    if job.optimizer in ("adamw-8bit", "paged-adamw-8bit"):
        return ADAM_8BIT_BYTES_PER_PARAM
    if job.optimizer == "sgd":
        return state  # momentum buffer
    return 0.0  # adafactor: see optimizer_bytes


def master_weights_bytes_needed(job: Job) -> bool:
    return job.precision.endswith("mixed") and job.runtime != "torch"


def optimizer_bytes(arch: ModelArch, job: Job) -> float:
    """Optimizer states. Adafactor (Shazeer & Stern, 2018, §3) factors each matrix's second
    moment into a row and a column vector and keeps no first moment (its HF default)."""
    if not job.training:
        return 0.0
    if job.optimizer == "adafactor":
        if job.task in ("lora", "qlora"):
            return 4.0 * lora_parameters(arch, job)  # adapters: small matrices, ~full states
        matrices = sum((lin.d_in + lin.d_out) * lin.count for lin in arch.linears)
        vectors = arch.total_params - linear_params(arch, {"attn", "mlp", "expert", "head"})
        return 4.0 * (matrices + vectors)
    return trainable_parameters(arch, job) * optimizer_state_bytes_per_param(job)


def optimizer_step_temp_bytes(arch: ModelArch, job: Job) -> float:
    """The extra tensor ``torch.optim.AdamW(foreach=True)`` allocates during ``step()``:
    ``_foreach_sqrt`` of the variances, one state-sized copy (PyTorch ``torch/optim/adamw.py``,
    ``_multi_tensor_adamw``). Fused engine optimizers (DeepSpeed, Megatron) update in place."""
    if not job.training or job.optimizer not in ("adamw",) or job.runtime != "torch":
        return 0.0
    return trainable_parameters(arch, job) * optimizer_state_bytes_per_param(job) / 2


def autocast_weight_copies_bytes(arch: ModelArch, job: Job) -> float:
    """torch autocast caches a 16-bit copy of every trained linear weight it casts; the copies
    are saved for the backward pass and live from the forward to the end of backward."""
    if not (job.training and numerics(job).autocast and job.task not in ("lora", "qlora")):
        return 0.0
    return 2.0 * linear_params(arch, {"attn", "mlp", "expert", "head"})


# --- activations, logits, KV cache ------------------------------------------------------


def activations_bytes(arch: ModelArch, job: Job) -> float:
    """Training: saved activations of all layers (per pipeline stage: the first stage holds
    ``pp`` micro-batches of ``layers/pp`` layers, the same total, or the step's ``m`` where
    it runs fewer; of its ``ceil(layers/pp)`` where the split is uneven; ``1 +
    (pp−1)/(pp·vp)`` times that in the interleaved schedule: Korthikanti §4.2.3), divided by
    the tensor-parallel degree.
    Inference: the largest transient working set."""
    if arch.kind == "cnn":
        per_image = resnet_image_bytes(arch, job)
        live = 1.0 if job.training else CNN_INFERENCE_LIVE_FRACTION
        return per_image * job.batch * live
    seq = arch.tokens_per_image if arch.kind == "vit" else job.tokens
    if job.training:
        # 1F1B's first stage holds a micro-batch per stage in flight, or every micro-batch of
        # the step where it runs fewer (1 where pp divides the layers and m >= pp)
        stages = stage_share(arch, job.pp) * min(job.pp, max(job.grad_accum, 1))
        v = virtual_stages(arch, job)
        if v > 1:  # the interleaved schedule's first stage holds more in flight
            stages *= 1 + (job.pp - 1) / (job.pp * v)
        local = seq // job.cp  # context parallelism: a GPU holds its chunk of each sequence
        return model_activation_bytes(arch, job, job.batch, local, arch.n_layers) * stages / job.tp
    return inference_working_set_bytes(arch, job, seq) / job.tp


def inference_working_set_bytes(arch: ModelArch, job: Job, seq: int) -> float:
    """The largest set of temporaries alive at once in a no-grad forward pass: the MLP's
    activated gate, up projection and their product (3 × width), or eager attention's fp32
    scores and their 16-bit cast; plus the hidden state and the norm's fp32 copy."""
    c = numerics(job).compute
    tokens = float(job.batch) * seq
    width = arch.intermediate_size
    if arch.is_moe:
        width = arch.experts_per_token * arch.moe_intermediate_size
    # GLU: act(gate), up and their product; otherwise the activation's intermediates
    # (HF's gelu_new keeps four I-sized tensors alive at once), at least input and output.
    alive = (
        3 if arch.ffn_kind == "glu" else max(2, ACTIVATION_SAVED_TENSORS.get(arch.activation, 1))
    )
    mlp = tokens * width * c * alive
    attention = 0.0
    if job.attention == "eager":
        # softmax(dtype=float32) first copies its 16-bit input to fp32: input, copy, output
        attention = float(job.batch) * arch.n_heads * seq * seq * (c + 8 if c != 4 else 8)
    return max(mlp, attention) + tokens * arch.hidden_size * (c + 4)


# --- sharding ---------------------------------------------------------------------------


def shard(
    components: dict[str, float], job: Job, arch: ModelArch, computing: bool = False
) -> dict[str, float]:
    """Per-GPU share: tensor and pipeline parallelism split the model's state ``tp·pp`` ways
    (the heaviest stage's layers: :func:`~whichgpu.estimate.parallel.stage_share`); ZeRO
    stage k then splits optimizer states (k ≥ 1), gradients (k ≥ 2) and weights (k = 3) over
    the data-parallel degree (Rajbhandari et al., 2020, §5). With the weights split, a phase
    that runs the layers (``computing``) holds :func:`gathered_weights_bytes` beside it."""
    share = stage_share(arch, job.pp)
    model_split = job.tp / share
    dp = job.shards
    out = dict(components)
    for key in ("weights", "master_weights", "gradients", "optimizer", "optimizer_step_temp"):
        out[key] = out.get(key, 0.0) / model_split
    if job.attention_dp:  # every GPU its copy of the dense weights, an n-th of the experts
        extra = replicated_weights_bytes(arch, job, job.tp) / model_split
        out["weights"] = out.get("weights", 0.0) + extra
    if job.zero >= 1:
        for key in ("optimizer", "optimizer_step_temp", "master_weights"):
            out[key] /= dp
    if job.zero >= 2:
        out["gradients"] /= dp
    if job.zero >= 3 and dp > 1 and job.offload != "all":  # (offloaded: the layers on
        # the GPU are the gathered ones, see _training_phases)
        gathered = gathered_weights_bytes(arch, out["weights"]) if computing else 0.0
        out["weights"] = out["weights"] / dp + gathered * (1 - 1 / dp)
    out["kv_cache"] = out.get("kv_cache", 0.0) * share
    return out


def gathered_weights_bytes(arch: ModelArch, weights: float) -> float:
    """Of ``weights`` (a GPU's unsharded share), what ZeRO-3 / FSDP hold gathered while the
    layers run: the layer computing and the next one, all-gathered ahead (Zhao et al., 2023,
    "PyTorch FSDP", §3.3.1 and §4.4: backward prefetching, and the rate limiter's two
    all-gathers in flight at most; DeepSpeed prefetches likewise), of the decoder layers'
    share of the weights (the embeddings and head are one unit each, gathered at the ends)."""
    layers = max(arch.n_layers, 1)
    in_layers = linear_params(arch, {"attn", "mlp", "expert"}) / max(arch.total_params, 1)
    return weights * min(1.0, in_layers * OFFLOAD_RESIDENT_LAYERS / layers)


def overhead_bytes(tensor_bytes: float) -> float:
    """The CUDA context plus what the caching allocator reserves beyond live tensors."""
    return CUDA_CONTEXT_GIB * BYTES_PER_GIB + ALLOCATOR_RESERVE_FRACTION * tensor_bytes


# --- the estimate -------------------------------------------------------------------------


def estimate_memory(arch: ModelArch, job: Job) -> MemoryEstimate:
    """Per-GPU memory of ``job`` on ``arch`` at its peak phase."""
    from whichgpu.job import check_lora_targets, check_positions

    check_positions(arch, job)
    check_lora_targets(arch, job)
    if job.task == "qlora" and job.precision == "32-true":
        job = replace(job, precision="bf16-true")
    phases = _training_phases(arch, job) if job.training else _inference_phases(arch, job)
    if job.quantised and job.quantize_on == "gpu":  # the 16-bit model, before quantize_
        phases["loading"] = {"weights": weights_bytes(arch, replace(job, quant=None))}
    phases = {
        name: shard(parts, job, arch, computing=name not in NOT_COMPUTING)
        for name, parts in phases.items()
    }
    host = sum(phases.pop("host", {}).values())
    paged = sum(phases.pop("paged", {}).values())
    phase, parts = max(phases.items(), key=lambda item: sum(item[1].values()))
    parts = {key: parts.get(key, 0.0) for key in COMPONENTS}
    parts["overhead"] = overhead_bytes(sum(parts.values()))
    return MemoryEstimate(
        components=parts,
        phase=phase,
        parameters=arch.total_params,
        trainable_parameters=trainable_parameters(arch, job),
        job=job,
        paged_bytes=paged,
        host_bytes=host,
    )


def accumulates(job: Job) -> bool:
    """Whether ``job`` holds a gradient buffer across micro-batches: it accumulates more
    than one, and steps its optimizer after the backward on the GPU (stepped in the
    backward there is no buffer, torchtune refuses accumulation with it; offloaded, the
    gradients accumulate in host memory)."""
    return (
        job.grad_accum > 1
        and job.task != "inference"
        and not job.optimizer_in_backward
        and job.offload == "none"
    )


def memory_key(job: Job) -> Job:
    """``job`` with the settings a step's memory does not depend on at their defaults: how
    many micro-batches it accumulates beyond two (from the second on, each runs beside the
    same gradient buffer) or, with pipeline stages, beyond one a stage (the first stage's
    micro-batches in flight; whether they are a multiple of the stages is kept), where its
    GPUs sit and, without ZeRO, how many data-parallel replicas run it. Jobs with one key
    have one estimate, up to its ``job`` (a property test holds :func:`estimate_memory` to
    that)."""
    changes: dict[str, object] = {}
    if job.pp <= 1 and job.grad_accum > 2:
        changes["grad_accum"] = 2
    elif job.pp > 1 and job.grad_accum > job.pp:
        changes["grad_accum"] = job.pp if job.grad_accum % job.pp == 0 else job.pp + 1
    if job.gpus_per_node != Job.gpus_per_node:
        changes["gpus_per_node"] = Job.gpus_per_node
    if job.network != Job.network:
        changes["network"] = Job.network
    if job.network_gbit is not None:
        changes["network_gbit"] = None
    if job.nvlink_bridge:  # a link, not memory
        changes["nvlink_bridge"] = False
    if job.zero == 0 and job.gpus != job.tp * job.pp:
        changes["gpus"] = job.tp * job.pp
    return evolve(job, **changes) if changes else job


@lru_cache(maxsize=4096)
def memory_of(arch: ModelArch, job: Job) -> MemoryEstimate:
    """:func:`estimate_memory`, computed once per (model, :func:`memory_key`): a job's memory
    does not depend on the GPU, and the recommender asks for the same jobs on every
    candidate and count of replicas (callers must not change the ``components``)."""
    found = _memory_of_key(arch, memory_key(job))
    # the job asked about (the key's estimate holds the key, or, for a QLoRA job asked in
    # 32-true, the bf16 job it computes in)
    return found if found.job is job else evolve(found, job=job)


def peak_bytes(arch: ModelArch, job: Job) -> float:
    """:func:`memory_of`'s total bytes, without the copy of its estimate naming ``job``
    (the layout search asks only the peak, of hundreds of jobs a recommendation)."""
    return _memory_of_key(arch, memory_key(job)).total_bytes


@lru_cache(maxsize=4096)
def _memory_of_key(arch: ModelArch, key: Job) -> MemoryEstimate:
    return estimate_memory(arch, key)


def _training_phases(arch: ModelArch, job: Job) -> dict[str, dict[str, float]]:
    """The phases of a training step, plus what lives off the GPU's allocator (``paged``,
    ``host``: see the module's docstring)."""
    state = {
        "weights": weights_bytes(arch, job),
        "master_weights": master_weights_bytes(arch, job),
        "optimizer": optimizer_bytes(arch, job),
    }
    acts = activations_bytes(arch, job) + autocast_weight_copies_bytes(arch, job)
    grads = gradients_bytes(arch, job)
    off: dict[str, dict[str, float]] = {"host": {}, "paged": {}}
    if job.optimizer == "paged-adamw-8bit":
        off["paged"]["optimizer"] = state.pop("optimizer")
    if job.offload != "none":
        # ZeRO-Offload: fp32 master weights, optimizer states and fp32 gradients on the CPU;
        # the GPU keeps the 16-bit weights (and reduces gradients in buckets)
        off["host"]["optimizer"] = state.pop("optimizer", 0.0) + state.pop("master_weights")
        off["host"]["gradients"] = trainable_parameters(arch, job) * 4.0
        grads = 0.0
    if job.offload == "all":
        # parameters on the CPU too, gathered a layer at a time (and the next one prefetched)
        off["host"]["weights"] = state["weights"]
        layers = max(arch.n_layers, 1)
        state["weights"] = state["weights"] * min(1.0, OFFLOAD_RESIDENT_LAYERS / layers)
    if job.activation_offload and arch.n_layers > OFFLOAD_RESIDENT_LAYERS:
        # saved activations stream to the host as layers finish; the ones in flight stay
        resident = OFFLOAD_RESIDENT_LAYERS / arch.n_layers
        off["host"]["activations"] = acts * (1 - resident)
        acts *= resident
    head_grad = (
        arch.vocab_size * arch.hidden_size * gradient_bytes_per_param(job)
        if job.task not in ("lora", "qlora") and arch.vocab_size
        else 0.0
    )
    # Accumulating micro-batches keeps the gradient buffer of the micro-batches before from
    # one backward to the next (``zero_grad`` runs after the optimizer step only): from the
    # second micro-batch on, the forward and backward run beside it, and the backward adds
    # each parameter's fresh gradient into it (the output head's the largest).
    held = grads if accumulates(job) else 0.0
    phases = {
        "forward": {
            **state,
            "activations": acts,
            "logits": logits_bytes(arch, job, "forward"),
            "gradients": held,
        },
        "backward": {
            **state,
            "activations": acts,
            "logits": logits_bytes(arch, job, "backward"),
            "gradients": held + head_grad,
        },
    }
    if not job.optimizer_in_backward and job.offload == "none":
        # (stepped in the backward, or on the CPU, no gradient buffer of the whole model)
        phases["optimizer step"] = {
            **state,
            "gradients": grads,
            "optimizer_step_temp": optimizer_step_temp_bytes(arch, job),
        }
    phases.update(off)
    seq = arch.tokens_per_image if arch.kind == "vit" else job.tokens // job.cp
    again = recompute_bytes(arch, job, job.batch, seq) / job.tp
    if again:
        # the last layer recomputed, once the loss's gradient has reached the hidden states
        phases["recomputation"] = {
            **state,
            "activations": acts + again,
            "gradients": held + head_grad,
        }
    return phases


def _inference_phases(arch: ModelArch, job: Job) -> dict[str, dict[str, float]]:
    weights = weights_bytes(arch, job)
    prompt = job.prompt or job.seq if job.generate else job.tokens
    # generate() asks the prefill for the last position's logits only (logits_to_keep=1)
    prefill_job = replace(
        job, prompt=prompt, generate=0, seq=prompt, all_logits=job.all_logits and not job.generate
    )
    # The layers' temporaries are gone when the logits are computed: the prefill peaks either
    # inside a layer or at the output head (its input hidden state and the logits).
    working = activations_bytes(arch, prefill_job)
    logits = logits_bytes(arch, prefill_job, "prefill")
    head_input = float(job.batch) * prompt * arch.hidden_size * numerics(job).compute / job.tp
    at_head = logits + head_input >= working
    phases = {
        "prefill": {
            "weights": weights,
            "kv_cache": kv_cache_bytes(arch, prefill_job),
            "activations": head_input if at_head else working,
            "logits": logits if at_head else 0.0,
        }
    }
    if job.generate:
        one_layer = kv_cache_bytes(arch, job) / max(arch.n_layers, 1)
        phases["decode"] = {
            "weights": weights,
            "kv_cache": kv_cache_bytes(arch, job) + one_layer,  # the concat copy of one layer
            "activations": activations_bytes(arch, replace(job, prompt=1, generate=0, seq=1)),
            "logits": logits_bytes(arch, replace(job, prompt=1, generate=0, seq=1), "decode"),
        }
    return phases
