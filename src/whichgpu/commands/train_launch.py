"""How an exported training pick starts: its settings as its framework's own launch
arguments (:func:`launch_arguments`), and its processes, one a GPU, as a distributed PyTorch
job takes them. ``torchrun`` (PyTorch docs, "torchrun (Elastic Launch)") starts
``--nproc-per-node`` workers on each node; over several nodes they meet at a rendezvous
on the first one, named from the scheduler's environment (Slurm's
``SLURM_JOB_NODELIST``/``SLURM_NNODES`` through ``srun``, one task a node; SkyPilot's
``SKYPILOT_NODE_IPS``, ``SKYPILOT_NUM_NODES``, ``SKYPILOT_NODE_RANK`` and
``SKYPILOT_NUM_GPUS_PER_NODE``, its docs' "Distributed multi-node jobs")."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

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
    return " ".join(parts)


def _recompute_method(job: Job) -> tuple[str, int]:
    """Megatron-core's full recomputation as whichgpu plans it: every layer alone (``uniform``
    over units of 1 layer), or the first :attr:`~whichgpu.job.Job.recompute_layers` of each
    chunk (``block``)."""
    return ("block", job.recompute_layers) if job.recompute_layers else ("uniform", 1)
