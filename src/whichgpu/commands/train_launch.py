"""How an exported training pick starts its processes: one a GPU, as a distributed PyTorch
job takes them. ``torchrun`` (PyTorch docs, "torchrun (Elastic Launch)") starts
``--nproc-per-node`` workers on each node; over several nodes they meet at a rendezvous
on the first one, named from the scheduler's environment (Slurm's
``SLURM_JOB_NODELIST``/``SLURM_NNODES`` through ``srun``, one task a node; SkyPilot's
``SKYPILOT_NODE_IPS``, ``SKYPILOT_NUM_NODES``, ``SKYPILOT_NODE_RANK`` and
``SKYPILOT_NUM_GPUS_PER_NODE``, its docs' "Distributed multi-node jobs")."""

from __future__ import annotations

import shlex

#: The user's training script and its arguments, as the default run starts it
TRAIN_SCRIPT = "train.py $WHICHGPU_LAUNCH_ARGS"
#: The port of the rendezvous on the first node
RDZV_PORT = 29500


def train_launch(kind: str, nodes: int, per_node: int) -> str:
    """The command ``kind``'s export runs for a training pick on ``nodes`` of ``per_node``
    GPUs: the script alone on one GPU, under torchrun on more."""
    if nodes * per_node == 1:
        return f"python {TRAIN_SCRIPT}"
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
