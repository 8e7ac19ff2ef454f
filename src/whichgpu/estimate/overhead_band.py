"""The fast end of a served estimate's likely range where its step carries an overhead that
the engine's own runs never measured (:func:`~whichgpu.estimate.latency_range.
borrowed_step_s`): the same work without it, as an overhead is at least 0. Arithmetic only,
so that the plan's types can state any of their points' ranges."""

from __future__ import annotations


def kept_share(borrowed_s: float, time_s: float) -> float:
    """The share of ``time_s`` a served estimate states that is left without the step
    overhead it carries from another engine's harness (:func:`borrowed_step_s`): the fast
    end of its likely range is that work without it, as an overhead is at least 0 and the
    engine's own runs never said how much of it it pays (vLLM 0.10's Llama 3.1 8B decodes
    one sequence on an H100 in 6.4 ms, the step's weight reads alone at the serving fit's
    bandwidth; the estimate with TensorRT-LLM's 2.7 ms read 9.5)."""
    return 1.0 - borrowed_s / time_s if time_s > borrowed_s > 0 else 1.0


def widened(band: tuple[float, float], borrowed_s: float, time_s: float) -> tuple[float, float]:
    """A latency's likely ``band`` (ratios to ``time_s``), its fast end without the
    borrowed step overhead (:func:`kept_share`)."""
    return band[0] * kept_share(borrowed_s, time_s), band[1]
