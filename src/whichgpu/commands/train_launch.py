"""How an exported training pick starts: its settings as its framework's own launch
arguments (:func:`launch_arguments`), and its processes, one a GPU, as a distributed PyTorch
job takes them. ``torchrun`` (PyTorch docs, "torchrun (Elastic Launch)") starts
``--nproc-per-node`` workers on each node; over several nodes they meet at a rendezvous
on the first one, named from the scheduler's environment (Slurm's
``SLURM_JOB_NODELIST``/``SLURM_NNODES`` through ``srun``, one task a node; SkyPilot's
``SKYPILOT_NODE_IPS``, ``SKYPILOT_NUM_NODES``, ``SKYPILOT_NODE_RANK`` and
``SKYPILOT_NUM_GPUS_PER_NODE``, its docs' "Distributed multi-node jobs")."""

from __future__ import annotations

import base64
import json
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whichgpu.job import Job

#: The environment variable the exports set to the launch arguments.
LAUNCH_ARGS_ENV = "WHICHGPU_LAUNCH_ARGS"
#: The user's training script and its arguments, as the default run starts it
TRAIN_SCRIPT = f"train.py ${LAUNCH_ARGS_ENV}"
#: The default run command of a training pick on one GPU: the script, given the settings
TRAIN_COMMAND = f"python {TRAIN_SCRIPT}"
#: The port of the rendezvous on the first node
RDZV_PORT = 29500


def train_launch(kind: str, nodes: int, per_node: int) -> str:
    """The command ``kind``'s export runs for a training pick on ``nodes`` of ``per_node``
    GPUs: the script alone on one GPU, under torchrun on more."""
    if nodes * per_node == 1:
        return TRAIN_COMMAND
    if nodes == 1:
        return f"torchrun --standalone --nproc-per-node {per_node} {TRAIN_SCRIPT}"
    if kind == "skypilot":
        return (
            "torchrun --nnodes $SKYPILOT_NUM_NODES --nproc-per-node "
            "$SKYPILOT_NUM_GPUS_PER_NODE --node-rank $SKYPILOT_NODE_RANK --master-addr "
            f'$(echo "$SKYPILOT_NODE_IPS" | head -n1) --master-port {RDZV_PORT} {TRAIN_SCRIPT}'
        )
    head = '$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)'
    run = (
        f"torchrun --nnodes $SLURM_NNODES --nproc-per-node {per_node} --rdzv-backend c10d "
        f"--rdzv-endpoint {head}:{RDZV_PORT} {TRAIN_SCRIPT}"
    )
    return f"srun --ntasks-per-node=1 bash -c {shlex.quote(run)}"


def launch_arguments(framework: str | None, job: Job) -> str:
    """``job``'s micro-batch, accumulation, recomputation and layout in the framework's own
    settings: the HF Trainer's ``TrainingArguments`` flags (also TRL, DeepSpeed and FSDP
    through Accelerate, and without a framework), torchtune's ``key=value`` config overrides,
    Axolotl's ``--key=value``, LLaMA-Factory's ``key=value``, torchtitan's
    ``--section.key value`` and Megatron-LM's flags (megatron/training/arguments.py)."""
    b, m, ckpt = job.batch, job.grad_accum, job.checkpointing
    global_batch = b * m * job.dp
    on = ckpt != "none"
    if framework == "torchtune":
        parts = [f"batch_size={b}", f"gradient_accumulation_steps={m}",
                 f"enable_activation_checkpointing={on}"]  # fmt: skip
        if job.compiled:
            parts.append("compile=True")
    elif framework == "axolotl":
        parts = [f"--micro_batch_size={b}", f"--gradient_accumulation_steps={m}",
                 f"--gradient_checkpointing={str(on).lower()}"]  # fmt: skip
    elif framework == "llama-factory":
        parts = [f"per_device_train_batch_size={b}", f"gradient_accumulation_steps={m}",
                 f"disable_gradient_checkpointing={str(not on).lower()}"]  # fmt: skip
    elif framework == "torchtitan":
        parts = [f"--training.local_batch_size {b}", f"--training.global_batch_size {global_batch}",
                 f"--parallelism.tensor_parallel_degree {job.tp}",
                 f"--parallelism.pipeline_parallel_degree {job.pp}",
                 f"--activation_checkpoint.mode {ckpt}"]  # fmt: skip
        if job.cp > 1:
            parts.append(f"--parallelism.context_parallel_degree {job.cp}")
    elif framework == "megatron":
        parts = [f"--micro-batch-size {b}", f"--global-batch-size {global_batch}",
                 f"--tensor-model-parallel-size {job.tp}",
                 f"--pipeline-model-parallel-size {job.pp}"]  # fmt: skip
        if job.vp > 1:  # the interleaved schedule
            parts.append(f"--num-virtual-stages-per-pipeline-rank {job.vp}")
        if job.cp > 1:
            parts.append(f"--context-parallel-size {job.cp}")
        if on:  # full: Megatron-core asks a method (TransformerConfig: "block" or "uniform")
            parts.append(f"--recompute-granularity {ckpt}")
            if ckpt == "full":
                method, layers = _recompute_method(job)
                parts.append(f"--recompute-method {method} --recompute-num-layers {layers}")
        if job.zero >= 1:
            parts.append("--use-distributed-optimizer")
        if job.tp_overlap and job.tp > 1:  # Transformer Engine's userbuffers
            parts.append("--tp-comm-overlap")
        # Megatron trains in fp32 unless told (arguments.py: --bf16/--fp16), and a GPT's
        # sequence length is an argument of its own
        parts += [*_megatron_precision(job), f"--seq-length {job.seq}"]
    elif framework == "nemo":  # NeMo-Run overrides of a recipe (nemo llm pretrain --factory)
        strategy = "trainer.strategy."
        parts = [f"data.micro_batch_size={b}", f"data.global_batch_size={global_batch}",
                 f"{strategy}tensor_model_parallel_size={job.tp}",
                 f"{strategy}pipeline_model_parallel_size={job.pp}"]  # fmt: skip
        if job.vp > 1:
            parts.append(f"{strategy}virtual_pipeline_model_parallel_size={job.vp}")
        if job.cp > 1:
            parts.append(f"{strategy}context_parallel_size={job.cp}")
        if job.tp > 1:
            parts.append(f"{strategy}sequence_parallel=True")
        if on:
            parts.append(f"model.config.recompute_granularity={ckpt}")
            if ckpt == "full":
                method, layers = _recompute_method(job)
                parts.append(f"model.config.recompute_method={method} "
                             f"model.config.recompute_num_layers={layers}")  # fmt: skip
    else:
        parts = [f"--per_device_train_batch_size {b}", f"--gradient_accumulation_steps {m}"]
        if on:
            parts.append("--gradient_checkpointing")
        if job.compiled:
            parts.append("--torch_compile")
        parts += _trainer_precision(job)
        if job.zero:  # (the HF Trainer's arguments: trainer_zero)
            parts.append(f"--deepspeed {deepspeed_config(job)}")
    return " ".join(parts)


#: The frameworks whose launch arguments are their own (:func:`launch_arguments`' branches
#: before the HF Trainer's)
OWN_ARGUMENTS = frozenset(
    {"torchtune", "axolotl", "llama-factory", "torchtitan", "megatron", "nemo"}
)


def trainer_zero(framework: str | None, job: Job) -> bool:
    """Whether ``job`` launches through the HF Trainer's arguments with a ZeRO stage, which
    they carry as a DeepSpeed config (:func:`deepspeed_config`)."""
    return framework not in OWN_ARGUMENTS and job.zero > 0


def _trainer_precision(job: Job) -> list[str]:
    """The HF Trainer's mixed-precision flag for ``job``'s precision (``TrainingArguments``:
    ``bf16``, ``fp16``, ``tf32``; without one it trains in fp32)."""
    if job.math == "tf32":
        return ["--tf32 true"]
    if job.precision.startswith("bf16"):
        return ["--bf16"]
    return ["--fp16"] if job.precision.startswith("16") else []


def _megatron_precision(job: Job) -> list[str]:
    """Megatron-LM's precision flags: ``--bf16``/``--fp16``, and Transformer Engine's FP8
    recipe (``--fp8-format hybrid``: E4M3 forward, E5M2 gradients) where the job computes
    its GEMMs in FP8."""
    flags = ["--bf16"] if job.precision.startswith("bf16") else []
    flags += ["--fp16"] if job.precision.startswith("16") else []
    return [*flags, "--fp8-format hybrid"] if job.math == "fp8-mixed" else flags


def deepspeed_config(job: Job) -> str:
    """``job``'s ZeRO stage and offload as the DeepSpeed config the HF Trainer takes: a
    base64-encoded JSON string, which ``TrainingArguments(deepspeed=...)`` accepts as well
    as a path (transformers' ``HfDeepSpeedConfig``: "a string path to an existing deepspeed
    config, or a dictionary, or a base64 encoded string") and which no shell splits; the
    Trainer fills its ``auto`` values from its own arguments (DeepSpeed integration docs)."""
    return base64.urlsafe_b64encode(zero_config_text(job).encode()).decode()


def zero_config_text(job: Job) -> str:
    """:func:`deepspeed_config` as a person reads it: the JSON."""
    return json.dumps(_zero_config(job), separators=(",", ":"))


def _zero_config(job: Job) -> dict[str, Any]:
    """The DeepSpeed config of ``job``'s ZeRO stage (Rajbhandari et al., 2020), its offload
    (ZeRO-Offload: optimizer states to the host; ``all``: the parameters as well, stage 3)
    and mixed precision left to the Trainer's flags (``auto``)."""
    zero: dict[str, Any] = {"stage": job.zero}
    if job.offload != "none":
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if job.offload == "all" and job.zero == 3:
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    auto = "auto"
    return {
        "zero_optimization": zero,
        "bf16": {"enabled": auto},
        "fp16": {"enabled": auto},
        "train_micro_batch_size_per_gpu": auto,
        "gradient_accumulation_steps": auto,
        "train_batch_size": auto,
        "gradient_clipping": auto,
    }


def _recompute_method(job: Job) -> tuple[str, int]:
    """Megatron-core's full recomputation as whichgpu plans it: every layer alone (``uniform``
    over units of 1 layer), or the first :attr:`~whichgpu.job.Job.recompute_layers` of each
    chunk (``block``)."""
    return ("block", job.recompute_layers) if job.recompute_layers else ("uniform", 1)
