"""The likely range of a served model's latencies, from what each rests on: a time to first
token is a prompt's prefill (and the wait before it), fitted on the prefill measurements; a
time per output token is a decode step of the serving cycle, fitted on the serving runs. A
time is the inverse of a rate, so a rate's likely band ``[low, high]`` (as ratios to the
estimate: :func:`~whichgpu.estimate.throughput.likely_rate`, the regime's 10th and 90th
percentiles of held-out error, widened where a factor is unmeasured) holds its time within
``[1/high, 1/low]``."""

from __future__ import annotations

from functools import lru_cache

from whichgpu.estimate.overhead_band import kept_share, widened

__all__ = ["borrowed_step_s", "kept_share", "latency_band", "rate_band", "ttft_extra", "widened"]

#: The fitted regime each latency rests on
LATENCY_REGIME = {"ttft": "llm-prefill", "tpot": "llm-serve"}


@lru_cache(maxsize=256)
def latency_band(target: str, provenance: str = "") -> tuple[float, float]:
    """The ratios to its estimate within which ``target``'s latency (``"ttft"`` or
    ``"tpot"``) likely falls: the inverse of its regime's rate band
    (:data:`LATENCY_REGIME`), widened as ``provenance`` widens a rate's."""
    from whichgpu.estimate.throughput import likely_rate

    rate = likely_rate(1.0, "tokens/s", LATENCY_REGIME[target], provenance)
    return 1.0 / rate.high, 1.0 / rate.low


def held_share(provenance: str, binding: str = "throughput") -> float:
    """The share of a served replica's capacity a plan holds it to against a request rate:
    the low end of the serving regime's likely range where the capacity rests on a factor
    nobody measured (:func:`~whichgpu.estimate.efficiency_model.extrapolated`: an engine
    release whose MLA kernels no run measured among them) and its throughput or its slots
    bind it (``binding``), else all of it: where a latency target binds, the target's margin
    holds the estimate at the slow end of that latency's range already, and holding the
    rate again would count the same uncertainty twice (as
    :func:`~whichgpu.estimate.serving_layouts.held_to` has it); what the engine choice
    compares layouts at, what a plan decides with, what the blocker saying it missed
    reports and what the table's serves column states (one place)."""
    from whichgpu.estimate.efficiency_model import extrapolated
    from whichgpu.estimate.throughput import likely_rate

    if binding in ("ttft", "tpot") or not extrapolated(provenance):
        return 1.0
    return likely_rate(1.0, "tokens/s", "llm-serve", provenance).low


def ttft_extra() -> float:
    """How much further than a decode step's the slow end of a time to first token lies
    (the prefill fit's band over the serving fit's, unwidened): what a time-to-first-token
    target is held to beyond the serving margin, so that it is met at its own slow end."""
    return latency_band("ttft")[1] / latency_band("tpot")[1]


def borrowed_step_s(engine_id: str, harness: str) -> float:
    """The fixed time a step that an engine's serving estimate charges and that no run of
    the engine measured: TensorRT-LLM's fitted per-step overhead (its maximum-load tables,
    ``catalog/data/efficiency.csv``) where another engine runs on TensorRT-LLM's harness
    (vLLM and SGLang, whose own runs fit a host time a sequence at maximum load only; TGI,
    transformers, none at all); 0 for TensorRT-LLM itself, and for an engine with a harness
    of its own, whose overhead its own runs fit (llama.cpp's decode steps)."""
    from whichgpu.job.engine_times import family
    from whichgpu.job.engines import REFERENCE_ENGINE

    if harness != REFERENCE_ENGINE or family(engine_id) == REFERENCE_ENGINE:
        return 0.0
    from whichgpu.estimate.efficiency_model import load_efficiency

    return load_efficiency()[0].overhead_s.get(harness, 0.0)


def rate_band(
    provenance: str,
    borrowed_s: float,
    full_step_s: float,
    engine_id: str = "",
    pool: tuple[float, float] = (1.0, 1.0),
) -> tuple[float, float]:
    """A served rate's likely band (ratios to it), as
    :func:`~whichgpu.estimate.throughput.likely_rate` states it from ``provenance``, wider
    where the engine's own maximum-load runs, each predicted from the other sources' (its
    host time's fit, ``framework_efficiency.csv``), erred further (vLLM's six put the
    measurement −30 % to +22 % of the estimate at their 10th and 90th percentiles, against
    the serving fit's −23 % to +14 %): both ends, so that a deadline or budget held at the
    slow end holds there too (capacity against a request rate is held as the engine choice
    holds it: :func:`~whichgpu.estimate.engine_choice.layout_lows`); its fast end without
    the borrowed overhead of the full batch's step, ``full_step_s``; each end moved by how
    far the engine's own buffers may move a KV-bound batch (``pool``:
    :func:`~whichgpu.estimate.kv_pool.pool_band`)."""
    from whichgpu.estimate.efficiency_model import load_framework_spreads
    from whichgpu.estimate.throughput import likely_rate
    from whichgpu.job.engine_times import family

    own = load_framework_spreads().get(family(engine_id)) if engine_id else None
    rate = likely_rate(1.0, "tokens/s", "llm-serve", provenance, own)
    return rate.low * pool[0], rate.high / kept_share(borrowed_s, full_step_s) * pool[1]
