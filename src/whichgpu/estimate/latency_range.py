"""The likely range of a served model's latencies, from what each rests on: a time to first
token is a prompt's prefill (and the wait before it), fitted on the prefill measurements; a
time per output token is a decode step of the serving cycle, fitted on the serving runs. A
time is the inverse of a rate, so a rate's likely band ``[low, high]`` (as ratios to the
estimate: :func:`~whichgpu.estimate.throughput.likely_rate`, the regime's 10th and 90th
percentiles of held-out error, widened where a factor is unmeasured) holds its time within
``[1/high, 1/low]``."""

from __future__ import annotations

from functools import lru_cache

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


def ttft_extra() -> float:
    """How much further than a decode step's the slow end of a time to first token lies
    (the prefill fit's band over the serving fit's, unwidened): what a time-to-first-token
    target is held to beyond the serving margin, so that it is met at its own slow end."""
    return latency_band("ttft")[1] / latency_band("tpot")[1]
