"""Speculative decoding: a cheap drafter proposes ``k`` tokens a sequence, and one forward
pass of the served model verifies them all, keeping the longest prefix it agrees with and
one token of its own (Leviathan et al., 2023, "Fast Inference from Transformers via
Speculative Decoding", §2-3; Chen et al., 2023). A verification step yields ``τ`` tokens a
sequence on average (the acceptance length, 1 ≤ τ ≤ k + 1), and costs

* the served model's pass over ``k + 1`` tokens of each of the batch's ``B`` sequences: its
  weights read once and its GEMMs over ``B·(k + 1)`` rows, as a decode step of ``B·(k + 1)``
  sequences costs, less the key/value reads of the ``B·k`` sequences that do not exist (the
  ``k + 1`` queries of a sequence read its cache once);
* the drafter's ``k`` passes at batch ``B``: EAGLE-3's head (Li et al., 2025, "EAGLE-3",
  §3: one decoder layer over the model's hidden states and its own output head over a
  32,000-token draft vocabulary), DeepSeek-V3's multi-token prediction module (DeepSeek-AI,
  2024, "DeepSeek-V3 Technical Report", §2.2: one transformer block and the model's output
  head), each read as a decode step reads its weights; an n-gram lookup in the prompt and
  the output so far costs the GPU nothing.

A token then takes ``(t_verify + t_draft) / τ``. At a small batch the pass over ``k + 1``
tokens reads the weights as one token's does, so speculation pays nearly τ; as the batch
grows the GEMMs bind and the pass costs about ``k + 1`` steps, so the gain falls, and below
1 once ``(k + 1 + drafts) > τ`` (the EAGLE-3 paper's SGLang table: 1.8× at 2 sequences,
1.4× at 64 on an H100; its first EAGLE head 0.93× at 24).
"""

from __future__ import annotations

from whichgpu.catalog.records import GPU
from whichgpu.frozen import evolve
from whichgpu.job import SPECULATIVE_METHODS, Job
from whichgpu.models.arch import ModelArch

__all__ = ["SPECULATIVE_METHODS", "draft_fraction", "draft_params", "verification"]

#: EAGLE-3's draft head's output vocabulary (its released heads' ``draft_vocab_size``)
EAGLE3_DRAFT_VOCAB = 32_000


def _layer_params(arch: ModelArch) -> float:
    """One decoder layer's parameters a token reads (its active experts only)."""
    head = arch.vocab_size * arch.hidden_size * (1 if arch.tied_embeddings else 2)
    return max(arch.active_params - head, 0) / max(arch.n_layers, 1)


def draft_fraction(arch: ModelArch, method: str) -> float:
    """A draft pass's weights over a decode step's (the served model's active weights): the
    share of a step's time one drafted token costs at the same batch."""
    if method == "ngram":
        return 0.0
    h, active = arch.hidden_size, max(arch.active_params, 1)
    if method == "mtp":  # one block, its input projection (2h → h) and the model's head
        return (_layer_params(arch) + 2 * h * h + arch.vocab_size * h) / active
    # eagle3: one layer, the fusion of three layers' features (3h → h), its own head
    return (_layer_params(arch) + 3 * h * h + EAGLE3_DRAFT_VOCAB * h) / active


def draft_params(arch: ModelArch, method: str) -> float:
    """Parameters the drafter adds to a replica's memory: none for n-gram lookup; an MTP
    module's block (all its experts: DeepSeek-V3's is about 14 B with its embedding, not
    counted in the model's 671 B) and input projection, the head shared; an EAGLE-3 head's
    layer, fusion and 32,000-token head."""
    if method == "ngram":
        return 0.0
    h = arch.hidden_size
    head = arch.vocab_size * h * (1 if arch.tied_embeddings else 2)
    layer = max(arch.total_params - head, 0) / max(arch.n_layers, 1)
    if method == "mtp":
        return layer * max(arch.mtp_layers, 1) + 2 * h * h
    return _layer_params(arch) + 3 * h * h + EAGLE3_DRAFT_VOCAB * h


def verification(
    arch: ModelArch, job: Job, gpu: GPU, lanes: int
) -> tuple[int, float, float, float] | None:
    """A speculative job's verification pass, for a replica's serving curve
    (:mod:`whichgpu.estimate.serving_plan`): the tokens a sequence it runs (``k + 1``), its
    drafts' cost in decode steps (``k`` passes of the drafter's share of the weights:
    :func:`draft_fraction`), the seconds one sequence's KV cache takes to read on a GPU (what
    the ``k`` extra rows a sequence do not read again), and ``τ``; None where the job drafts
    nothing."""
    if job.speculative is None:
        return None
    from whichgpu.estimate.perf import kv_read_bytes

    context = (job.prompt or job.seq) + max(job.generate, 1) // 2  # a decode's mean context
    kv_s = kv_read_bytes(arch, evolve(job, batch=1), context, lanes) / lanes
    kv_s /= gpu.memory_bandwidth_gb_per_s * 1e9
    drafts = job.draft_tokens * draft_fraction(arch, job.speculative)
    return job.draft_tokens + 1, drafts, kv_s, job.acceptance
