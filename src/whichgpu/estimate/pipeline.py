"""How a pipeline splits a model's layers (Narayanan et al., 2021, "Efficient Large-Scale
Language Model Training on GPU Clusters Using Megatron-LM"): the heaviest stage and the
interleaved schedule's model chunks, shared by the memory and the step-time estimators."""

from __future__ import annotations

import math

from whichgpu.job import Job
from whichgpu.models.arch import ModelArch


def stage_share(arch: ModelArch, pp: int) -> float:
    """The heaviest pipeline stage's share of the layers: ``ceil(L / pp) / L``, ``1 / pp``
    where ``pp`` divides them. Frameworks split as evenly as they can: Megatron-LM with
    ``--decoder-first-pipeline-num-layers`` / ``--decoder-last-pipeline-num-layers``
    (the Llama 3 paper's 126 layers over 16 stages: 7 on the first and last, which also
    hold the embedding and the loss, 8 elsewhere; Dubey et al., 2024, §3.3.2), torchtitan
    with its split points. The heaviest stage sets the pipeline's pace and its memory."""
    layers = max(arch.n_layers, 1)
    if pp <= 1:
        return 1.0
    return math.ceil(layers / pp) / layers


def stage_compute_share(arch: ModelArch, pp: int, head: float) -> float:
    """The heaviest pipeline stage's share of a training step's compute: the last stage's
    ``ceil(L / pp)`` layers and the output layer (Megatron-LM puts the output layer and the
    loss on the last stage, the embedding lookup, nearly free, on the first, and splits the
    layers evenly unless told otherwise: ``--decoder-last-pipeline-num-layers``). ``head``:
    the output layer's share of the step's compute (:func:`output_layer_share`)."""
    if pp <= 1:
        return 1.0
    head = min(max(head, 0.0), 1.0)
    return stage_share(arch, pp) * (1.0 - head) + head


def output_layer_share(arch: ModelArch, step_flops_per_token: float) -> float:
    """The output layer's share of a training step's FLOPs: its GEMM is ``2·V·h`` FLOPs a
    token forward and twice that backward, against ``step_flops_per_token`` for the whole
    step (``6·N + 12·L·h·s`` as executed: :func:`~whichgpu.estimate.perf.
    train_flops_per_token`). For Llama 3.1 8B at 8,192 tokens about two layers' worth, so 16
    stages of 2 layers run at the pace of a last stage of nearly 4 (1.9 × :func:`stage_share`);
    for 405B over 8 stages of 16, 3 % more."""
    if step_flops_per_token <= 0:
        return 0.0
    return 6.0 * arch.vocab_size * arch.hidden_size / step_flops_per_token


#: Layers per virtual pipeline stage where the interleaving is left open: NeMo's and
#: Megatron-Bridge's pretraining recipes give each chunk two (llama31_405b: 126 layers, PP 8,
#: VP 8; gpt3_175b: 96 layers, PP 8, VP 6; llama3_70b: 80 layers, PP 8, VP 5; Megatron-Bridge
#: performance summary 25.11, NeMo 24.07).
LAYERS_PER_VIRTUAL_STAGE = 2


def model_chunks(arch: ModelArch, job: Job) -> int:
    """Model chunks per GPU the interleaved 1F1B schedule is set up with (Narayanan et al.,
    2021, §2.2.2: each GPU runs ``vp`` non-adjacent chunks of layers, which divides the
    pipeline bubble by ``vp`` and multiplies the point-to-point traffic by it). ``job.vp``
    where given, else the most chunks of :data:`LAYERS_PER_VIRTUAL_STAGE` layers or more
    that split the heaviest stage evenly; 1 without a pipeline."""
    if job.pp <= 1:
        return 1
    if job.vp:
        return job.vp
    stage = math.ceil(max(arch.n_layers, 1) / job.pp)
    chunks = [v for v in range(1, stage // LAYERS_PER_VIRTUAL_STAGE + 1) if stage % v == 0]
    return max(chunks, default=1)


def virtual_stages(arch: ModelArch, job: Job) -> int:
    """The chunks a step of ``job`` interleaves (:func:`model_chunks`), or 1 where the
    micro-batches it runs are not a multiple of the stages: "this new schedule requires the
    number of microbatches in a batch to be an integer multiple of the degree of pipeline
    parallelism" (ibid.), and fewer cannot fill it (one micro-batch runs its stages one
    after another: plain 1F1B's ``m + p − 1`` stage times)."""
    if job.pp <= 1 or max(job.grad_accum, 1) % job.pp:
        return 1
    return model_chunks(arch, job)
