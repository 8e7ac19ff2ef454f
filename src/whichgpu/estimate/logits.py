"""Output logits and the loss's copies of them: what a language model's last layer and its
cross-entropy hold, by framework (Hugging Face's loss, a compiled or chunked one,
Megatron-core's and Transformer Engine's), in each phase of a step (used by
:mod:`whichgpu.estimate.memory`)."""

from __future__ import annotations

from whichgpu.estimate.activations import numerics
from whichgpu.estimate.assumptions import LOSS_CHUNKS
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch


def logits_bytes(arch: ModelArch, job: Job, phase: str) -> float:
    """Output logits: ``batch·seq·vocab`` elements.

    Training (HF ``ForCausalLMLoss``; the model output released before ``backward()`` as the
    HF Trainer and Lightning do): the loss upcasts the logits to fp32 and log-softmax saves its
    fp32 output. Peak in the forward pass: the compute-dtype logits, the fp32 copy and the
    log-softmax output (``c + 8`` bytes per element; 8 when the logits are already fp32).
    Peak at the start of backward: the saved output, its gradient and the input gradient
    (12). Nothing of it is left at the optimizer step. Compiled (``torch.compile``; Inductor
    fuses the upcast, log-softmax and NLL and saves each row's log-sum-exp, as Liger's and
    torchtune's fused losses do): the compute-dtype logits (``c``), then their gradient beside
    them in the backward (``2c``; one chunk of it at a time when chunked). Megatron-core
    (``job.runtime == "megatron"``: ``tensor_parallel/cross_entropy.py``,
    ``_VocabParallelCrossEntropy``) upcasts the logits to fp32, exponentiates that copy in
    place and saves it; its backward turns it into the gradient in place: ``c + 4`` in the
    forward, ``4 + c`` in the backward (the gradient cast back for the output layer); fused
    in Transformer Engine (:attr:`~whichgpu.job.Job.loss_fusion`:
    ``transformer_engine/pytorch/cross_entropy.py`` writes the gradient into its input), ``c``.
    Inference keeps the logits of every position (``c``) unless the engine keeps only the
    last one.
    """
    if arch.kind in ("cnn", "vit") or not arch.vocab_size:
        return 0.0
    c = numerics(job).compute
    positions = job.tokens if job.all_logits or job.training else 1
    elements = float(job.batch) * positions * arch.vocab_size / job.tp
    if not job.training:
        return elements * c
    if job.runtime == "megatron":
        per = c if job.loss_fusion else c + 4
        return elements * per if phase in ("forward", "backward") else 0.0
    if job.compiled and job.logits_fp32 and not job.chunked_loss:
        # the model's fp32 upcast runs before the compiled loss: the cast beside the 16-bit
        # logits, then the fp32 logits the loss saves and, in the backward, their gradient
        if phase == "forward":
            return elements * (c + 4 if c != 4 else 4)
        return elements * 8 if phase == "backward" else 0.0
    if job.compiled:
        # Inductor's fused cross-entropy: the logits stay in the compute dtype and the
        # backward writes their gradient (one chunk of it at a time when chunked)
        k = LOSS_CHUNKS if job.chunked_loss else 1
        if phase == "forward":
            return elements * c
        return elements * (c + c / k) if phase == "backward" else 0.0
    if job.chunked_loss:
        # the compute-dtype chunks and each chunk's saved fp32 log-softmax output stay; the
        # fp32 upcast and, in the backward, the gradients exist one chunk at a time
        k = LOSS_CHUNKS
        if phase == "forward":
            return elements * (c + 4 + 4 / k if c != 4 else 4 + 4 / k)
        return elements * (4 + 8 / k) if phase == "backward" else 0.0
    if phase == "forward":
        return elements * (c + 8 if c != 4 else 8)
    if phase == "backward":
        return elements * 12
    return 0.0
