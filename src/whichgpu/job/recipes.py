"""Framework recipes: what each training framework does when its user leaves a setting at
its default, so that a job typed as ``--framework torchtune`` is estimated as torchtune runs
it. Each profile cites the framework's own config or docs; values the user gives win.

A :class:`Recipe` sets, per task, the :class:`~whichgpu.job.Job` fields a user did not: the
storage precision, optimizer, LoRA rank and targets, activation checkpointing, the optimizer
step in the backward, offloading, chunked cross-entropy, the micro-batch and gradient
accumulation, and how it spreads over GPUs (``parallel``: ``ddp`` replicas, ``zero`` /
``fsdp`` sharding, ``3d`` tensor × pipeline × data parallelism with a distributed optimizer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from whichgpu.job import SIXTEEN_BIT

if TYPE_CHECKING:
    from whichgpu.job import Job, MemoryFormat

Parallel = Literal["ddp", "fsdp", "zero", "3d"]


@dataclass(frozen=True)
class Recipe:
    id: str
    name: str
    #: Job fields for every task, then per task (``train``, ``finetune``, ``lora``, ``qlora``)
    common: dict[str, Any]
    by_task: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: How the framework spreads a job over several GPUs when it does not fit one
    parallel: Parallel = "fsdp"
    source: str = ""
    as_of: str = ""
    #: Job fields its multi-GPU recipe sets otherwise, per task (torchtune's distributed
    #: recipes step the optimizer after the backward: FSDP cannot run it inside)
    multi_gpu: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Sequences an optimizer step takes when fine-tuning (``finetune``, ``lora``,
    #: ``qlora``) where the recipe sets a global batch rather than one per GPU
    finetune_global_batch: int | None = None

    def defaults(self, task: str) -> dict[str, Any]:
        """The Job fields this recipe sets for ``task`` (before the user's own values)."""
        return {**self.common, **self.by_task.get(task, {})}


#: The HF Trainer's defaults with PEFT's LoRA (see the ``hf`` recipe), which TRL shares.
TRAINER: dict[str, Any] = {
    "precision": "bf16-mixed",
    "optimizer": "adamw-fused",
    "batch": 8,
    "grad_accum": 1,
    "lora_rank": 8,
    "lora_targets": "peft-default",
}
PEFT_BY_TASK: dict[str, dict[str, Any]] = {
    "lora": {"precision": "bf16-true"},
    # QLoRA's base goes through PEFT's prepare_model_for_kbit_training, whose
    # use_gradient_checkpointing defaults to True (huggingface/peft src/peft/utils/other.py):
    # a k-bit fine-tune recomputes its activations unless the script turns it off
    "qlora": {"precision": "bf16-true", "optimizer": "paged-adamw-8bit", "checkpointing": "full"},
}

#: NeMo 2.0's fine-tuning recipes: 128 sequences of 2,048 tokens a step at micro-batch 1
#: (NVIDIA/NeMo @78b5337 nemo/collections/llm/recipes/finetune_default.py,
#: default_finetune_recipe: SquadDataModule(seq_length=2048, global_batch_size=128,
#: micro_batch_size=1))
NEMO_FINETUNE_GLOBAL_BATCH = 128

RECIPES: dict[str, Recipe] = {
    # transformers 5.24 TrainingArguments (transformers/training_args.py):
    # per_device_train_batch_size 8, gradient_accumulation_steps 1, optim adamw_torch_fused
    # (torch >= 2.8), activation (gradient) checkpointing off; bf16=True is torch autocast over
    # fp32 weights. PEFT LoraConfig (src/peft/tuners/lora/config.py @5d602fd): r 8,
    # target_modules None → the per-architecture table. QLoRA as the PEFT/bitsandbytes guide
    # runs it: NF4 base, paged_adamw_8bit.
    "hf": Recipe(
        "hf",
        "Hugging Face Trainer + PEFT",
        common=TRAINER,
        by_task=PEFT_BY_TASK,
        parallel="ddp",
        source="huggingface/transformers 5.24.0 training_args.py; huggingface/peft @5d602fd "
        "tuners/lora/config.py, utils/constants.py, utils/other.py "
        "(prepare_model_for_kbit_training)",
        as_of="2026-11",
    ),
    # TRL SFTConfig (trl/trainer/sft_config.py @f2cd577, 1.10.0.dev0): as the Trainer, but
    # gradient_checkpointing True (since TRL PR #3510), bf16 True, max_length 1024.
    "trl": Recipe(
        "trl",
        "TRL SFTTrainer + PEFT",
        common={**TRAINER, "checkpointing": "full", "seq": 1024},
        by_task=PEFT_BY_TASK,
        parallel="ddp",
        source="huggingface/trl @f2cd577 trl/trainer/sft_config.py, base_config.py",
        as_of="2026-11",
    ),
    # torchtune recipes/configs/llama3_1 (@bd2a0fc, after v0.6.1), dtype bf16 throughout.
    # 8B_full_single_device: batch_size 2, gradient_accumulation_steps 1,
    # bitsandbytes.optim.PagedAdamW8bit, optimizer_in_bwd True, activation checkpointing True.
    # 8B_lora_single_device / 8B_qlora_single_device: lora_attn_modules [q_proj, v_proj,
    # output_proj], apply_lora_to_mlp True, lora_rank 8, AdamW fused, batch_size 2,
    # gradient_accumulation_steps 8, activation checkpointing True. Loss
    # CEWithChunkedOutputLoss (v0.6.1; LinearCrossEntropyLoss since, also chunked). 8B_full
    # (FSDP): AdamW fused, no optimizer-in-backward.
    "torchtune": Recipe(
        "torchtune",
        "torchtune",
        common={
            "precision": "bf16-true",
            "optimizer": "adamw-fused",
            "batch": 2,
            "grad_accum": 1,
            "checkpointing": "full",
            "chunked_loss": True,
            "lora_rank": 8,
            "lora_targets": "q_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
            # the model, adapters included, built in ``dtype`` (recipes'
            # training.set_default_dtype); unchunked logits upcast by the decoder
            # (torchtune/modules/transformer.py: ``self.output(h).float()``)
            "adapters_fp32": False,
            "logits_fp32": True,
            # QLoRA through torchao's NF4 linear, which saves only its weight
            # (torchtune/modules/low_precision/nf4_linear.py: ``linear_nf4``)
            "kbit_saves_inputs": False,
        },
        by_task={
            "finetune": {"optimizer": "paged-adamw-8bit", "optimizer_in_backward": True},
            "train": {"optimizer": "paged-adamw-8bit", "optimizer_in_backward": True},
            "lora": {"grad_accum": 8},
            "qlora": {"grad_accum": 8},
        },
        multi_gpu={
            task: {"optimizer": "adamw-fused", "optimizer_in_backward": False}
            for task in ("finetune", "train")
        },
        parallel="fsdp",
        source="pytorch/torchtune @bd2a0fc recipes/configs/llama3_1/8B_full_single_device.yaml, "
        "8B_lora_single_device.yaml, 8B_qlora_single_device.yaml, 8B_full.yaml",
        as_of="2026-11",
    ),
    # axolotl examples/llama-3 (@067b021): lora-8b.yml micro_batch_size 2,
    # gradient_accumulation_steps 4, adamw_bnb_8bit, lora_r 32, lora_target_linear true,
    # gradient_checkpointing true, sequence_len 4096; qlora.yml the same with
    # paged_adamw_32bit; fft-8b.yaml micro_batch_size 1, gradient_accumulation_steps 8,
    # paged_adamw_8bit, sequence_len 8192. bf16 auto. sample_packing true in each.
    "axolotl": Recipe(
        "axolotl",
        "Axolotl",
        common={
            "precision": "bf16-true",
            "optimizer": "adamw-8bit",
            "batch": 2,
            "grad_accum": 4,
            "checkpointing": "full",
            "seq": 4096,
            "lora_rank": 32,
            "lora_targets": "all-linear",
            "packing": True,
        },
        by_task={
            "qlora": {"optimizer": "adamw"},
            "finetune": {"optimizer": "paged-adamw-8bit", "batch": 1, "grad_accum": 8},
            "train": {"optimizer": "paged-adamw-8bit", "batch": 1, "grad_accum": 8},
        },
        parallel="fsdp",
        source="axolotl-ai-cloud/axolotl @067b021 examples/llama-3/lora-8b.yml, qlora.yml, "
        "fft-8b.yaml",
        as_of="2026-11",
    ),
    # LLaMA-Factory examples/train_lora/llama3_lora_sft.yaml (@0005269): lora_rank 8,
    # lora_target all, per_device_train_batch_size 1, gradient_accumulation_steps 8, bf16,
    # cutoff_len 2048; gradient checkpointing on unless disable_gradient_checkpointing
    # (src/llamafactory/hparams/model_args.py); train_full/llama3_full_sft.yaml: DeepSpeed
    # ZeRO-3 (examples/deepspeed/ds_z3_config.json), batch 1, gradient_accumulation_steps 2.
    "llama-factory": Recipe(
        "llama-factory",
        "LLaMA-Factory",
        common={
            "precision": "bf16-mixed",
            "optimizer": "adamw-fused",
            "batch": 1,
            "grad_accum": 8,
            "checkpointing": "full",
            "lora_rank": 8,
            "lora_targets": "all-linear",
        },
        by_task={
            "lora": {"precision": "bf16-true"},
            "qlora": {"precision": "bf16-true"},
            "finetune": {"runtime": "deepspeed", "grad_accum": 2},
            "train": {"runtime": "deepspeed", "grad_accum": 2},
        },
        parallel="zero",
        source="hiyouga/LLaMA-Factory @0005269 examples/train_lora/llama3_lora_sft.yaml, "
        "examples/train_full/llama3_full_sft.yaml, src/llamafactory/hparams/model_args.py",
        as_of="2026-11",
    ),
    # DeepSpeed (deepspeed/runtime/zero/config.py @edaa722, 0.19.6): 16-bit weights with fp32
    # master weights and Adam states (Rajbhandari et al., 2020, §3.1); whichgpu shards them
    # with stage 3 when the job needs it; offload_optimizer / offload_param device cpu on request.
    "deepspeed": Recipe(
        "deepspeed",
        "DeepSpeed ZeRO",
        common={"precision": "bf16-mixed", "runtime": "deepspeed", "optimizer": "adamw-fused"},
        parallel="zero",
        source="deepspeedai/DeepSpeed @edaa722 deepspeed/runtime/zero/config.py, offload_config.py",
        as_of="2026-11",
    ),
    # PyTorch FSDP2 fully_shard with MixedPrecisionPolicy(param_dtype=bf16,
    # reduce_dtype=fp32), as torchtitan sets it: fp32 sharded parameters and Adam states, bf16
    # compute copies gathered a layer at a time.
    "fsdp": Recipe(
        "fsdp",
        "PyTorch FSDP",
        common={"precision": "bf16-mixed", "runtime": "deepspeed", "optimizer": "adamw-fused"},
        parallel="fsdp",
        source="pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fsdp_api.py "
        "(MixedPrecisionPolicy, CPUOffloadPolicy)",
        as_of="2026-11",
    ),
    # torchtitan torchtitan/models/llama3/train_configs/llama3_8b.toml (@4a950ea):
    # local_batch_size 1, seq_len 8192, activation_checkpoint selective; FSDP2 with bf16
    # params and fp32 reduce (data_parallel_shard_degree -1: every GPU, tensor parallel 1);
    # its 70B and 405B configs add tensor parallel 8 (--tp 8: FSDP over the rest).
    "torchtitan": Recipe(
        "torchtitan",
        "torchtitan",
        common={
            "precision": "bf16-mixed",
            "runtime": "deepspeed",
            "optimizer": "adamw-fused",
            "batch": 1,
            "seq": 8192,
            "checkpointing": "selective",
            "vp": 1,  # pipeline_parallel_schedule 1F1B
        },
        parallel="fsdp",
        source="pytorch/torchtitan @4a950ea torchtitan/models/llama3/train_configs/"
        "llama3_8b.toml, llama3_70b.toml, llama3_405b.toml",
        as_of="2026-11",
    ),
    # Megatron-LM / NeMo 2.0 pretrain recipes (NVIDIA/NeMo @8cfedd7
    # nemo/collections/llm/recipes/llama3_8b.py …): bf16 mixed with the distributed
    # optimizer (fp32 master weights and Adam states sharded over data parallelism),
    # micro_batch_size 1, tensor parallelism inside a node and pipeline stages across nodes.
    # Megatron's own default is no recomputation (recompute_granularity None). The
    # distributed optimizer is ZeRO-1 (``zero``): the recipes' distributed_fused_adam sets
    # use_distributed_optimizer, which Megatron-LM's arguments leave off.
    "megatron": Recipe(
        "megatron",
        "Megatron-LM / NeMo",
        common={
            "precision": "bf16-mixed",
            "runtime": "megatron",
            "optimizer": "adamw-fused",
            "batch": 1,
            "zero": 1,
        },
        parallel="3d",
        finetune_global_batch=NEMO_FINETUNE_GLOBAL_BATCH,
        source="NVIDIA/Megatron-LM @d98e8a6 megatron/training/arguments.py; NVIDIA/NeMo "
        "@8cfedd7 nemo/collections/llm/recipes (llama3_8b, llama3_70b, gpt3_175b)",
        as_of="2026-11",
    ),
    # NeMo's and Megatron-Bridge's performance recipes (the runs of their performance
    # summaries): Megatron's defaults with the tensor-parallel collectives overlapped with
    # the GEMMs (NVIDIA/NeMo @de778f8 nemo/collections/llm/recipes/llama3_70b.py,
    # pretrain_recipe_performance: MegatronCommOverlapCallback(tp_comm_overlap=True,
    # tp_comm_overlap_cfg=userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192); Megatron-Bridge's
    # CommOverlapConfig(tp_comm_overlap=True) in its performance configs).
    "nemo": Recipe(
        "nemo",
        "NeMo / Megatron-Bridge (performance recipes)",
        common={
            "precision": "bf16-mixed",
            "runtime": "megatron",
            "optimizer": "adamw-fused",
            "batch": 1,
            "zero": 1,
            "tp_overlap": True,
            # Megatron-Bridge's performance configs fuse the loss in Transformer Engine
            # (cross_entropy_loss_fusion=True, cross_entropy_fusion_impl="te")
            "loss_fusion": True,
        },
        parallel="3d",
        finetune_global_batch=NEMO_FINETUNE_GLOBAL_BATCH,
        source="NVIDIA/NeMo @de778f8 nemo/collections/llm/recipes/llama3_70b.py "
        "(pretrain_recipe_performance); NVIDIA-NeMo/Megatron-Bridge "
        "src/megatron/bridge/training/comm_overlap.py",
        as_of="2026-12",
    ),
}

FRAMEWORKS: tuple[str, ...] = tuple(RECIPES)


def parallel_of(framework: str | None, task: str) -> Parallel:
    """How ``framework`` spreads a job over GPUs. Without one, a fine-tune spreads as the
    HF Trainer's users do (the ``hf`` recipe: DDP, or FSDP/ZeRO-3 where the model state does
    not fit: Accelerate; PEFT and bitsandbytes have no tensor parallelism), and pretraining
    takes any layout (``3d``: Megatron-LM's, torchtitan's)."""
    recipe = RECIPES.get(framework or "")
    if recipe is not None:
        return recipe.parallel
    return "3d" if task == "train" else RECIPES["hf"].parallel


def multi_gpu_defaults(framework: str | None, task: str) -> dict[str, Any]:
    """The Job fields ``framework``'s multi-GPU recipe sets otherwise than its single-GPU
    one, for ``task`` (none without a framework)."""
    recipe = RECIPES.get(framework or "")
    return {} if recipe is None else recipe.multi_gpu.get(task, {})


def timed_framework(framework: str | None, task: str) -> str | None:
    """The framework whose published runs time a training job: the one named, else, for a
    fine-tune (full, LoRA, QLoRA), the Hugging Face Trainer whose defaults it runs with
    (:func:`default_precision`, the micro-batch cap of 8): timed as the HF Trainer's own
    runs, not as the calibrated harness's packed pretraining runs (MosaicML llm-foundry),
    which it reads about twice as fast as. Pretraining with none keeps the calibrated
    harness."""
    if framework is not None or task not in ("finetune", "lora", "qlora"):
        return framework
    return "hf"


def default_precision(precision: str | None, task: str, framework: str | None) -> str | None:
    """The storage precision of a job that names none, the same in ``fit``, ``estimate`` and
    ``recommend``: a framework's recipe sets its own (None here:
    :func:`whichgpu.inputs.job_input.make_job` applies the recipe); training without one runs as
    the HF Trainer with PEFT does (the ``hf`` recipe: bf16 autocast over fp32 weights for a
    full fine-tune or pretraining, a 16-bit frozen base under fp32 adapters for LoRA and
    QLoRA; fp16 on GPUs without BF16, :mod:`whichgpu.plan.settings`); inference
    keeps the weights in 16 bits (None: the :class:`~whichgpu.job.Job` default,
    ``bf16-true``)."""
    if precision is not None:
        return precision
    if task == "inference" or framework is not None:
        return None
    return str(RECIPES["hf"].defaults(task)["precision"])


def recipe_memory_format(job: Job) -> MemoryFormat:
    """The layout the CNN recipe trains in (NVIDIA DeepLearningExamples' ResNet-50 for
    PyTorch, the batch whichgpu takes for a CNN): channels_last in 16 bits (its configs.yml
    sets ``memory_format: nhwc`` for each AMP entry), contiguous in TF32 and FP32 (its
    entries set none: ``--memory-format`` defaults to nchw)."""
    return "channels_last" if job.math_precision in SIXTEEN_BIT else "contiguous"
