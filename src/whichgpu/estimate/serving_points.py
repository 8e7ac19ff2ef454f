"""A replica's operating point on its serving curve at an arrival rate (the queueing of
:mod:`whichgpu.estimate.serving_plan`'s docstring: Little's law over the decode batch, the
prefill share of the GPU, the waits for a slot and behind other prefills), the highest rate
that keeps it within latency targets, and the rate that fills every slot: what a replica's
capacity and its operating point are read from."""

from __future__ import annotations

import math

from whichgpu.estimate.queueing import waiting_s
from whichgpu.estimate.serving_curve import Curve
from whichgpu.estimate.serving_types import ServingPoint, Targets

#: How close (on the rate's logarithm: relative) the highest rate under the targets is found
RATE_TOLERANCE = 5e-5


def _point(curve: Curve, rate: float, quantile: float, start: float = 1.0) -> ServingPoint | None:
    """The replica at ``rate`` requests/s, or None where it cannot keep up. ``start``: a
    concurrency at or below the answer's (the one at a lower rate), where the fixed-point
    iteration begins."""
    if rate <= 0:
        return None
    t_p, c, out = curve.prompts_s(), curve.cycle_prefill_s, curve.generate
    if not curve.continuous:
        # static batching: a batch runs to its end and an arrival waits for the next, which
        # holds what arrived meanwhile (B = λ·cycle(B), from 1 up): busy all the time once
        # B > 1, a λ·cycle(1) share of it below; beyond b_max the queue grows without end
        if rate * curve.static_cycle_s(curve.b_max) >= curve.b_max:
            return None
        batch = 1.0
        for _ in range(60):
            nxt = max(1.0, rate * curve.static_cycle_s(batch))
            if abs(nxt - batch) < 1e-4 * batch:
                break
            batch = nxt
        batch = min(batch, float(curve.b_max))
        busy = min(1.0, rate * curve.static_cycle_s(batch) / batch)
        ttft = busy * curve.static_cycle_s(batch) * quantile + curve.prompts_s(batch)
        return ServingPoint(rate, batch, ttft, curve.step_s(batch))
    if rate * min(curve.cycle_prefills or (c,)) >= 1:  # prefills alone fill the GPU
        return None
    batch = max(1.0, start)
    for _ in range(60):  # Little's law, B = λ·(t_p + O·TPOT(B)): increasing, so it converges
        tpot = _tpot(curve, batch, rate)
        nxt = rate * (t_p + out * tpot)
        if nxt > curve.b_max:
            return None
        if abs(nxt - batch) < 1e-4 * max(1.0, batch):
            batch = nxt
            break
        batch = nxt
    if batch > curve.b_max * (1 - 1e-9):
        return None
    tpot = _tpot(curve, batch, rate)
    busy = rate * curve.cycle_prefill_at(batch)  # the share of the GPU's time in prefills
    if not math.isfinite(tpot) or busy >= 1:
        return None
    chunks = math.ceil(curve.prompt / curve.chunk_tokens) if curve.chunk_tokens else 1
    residence = batch / rate
    slot_wait = waiting_s(curve.b_max, batch, residence, quantile)
    prefill_wait = 0.0
    if busy > 1 - quantile:
        prefill_wait = t_p / (1 - busy) * math.log(busy / (1 - quantile))
    window = curve.window_wait_s(batch, quantile)
    ttft = t_p + chunks * curve.step_s(batch) * curve.step_tokens + slot_wait + prefill_wait
    ttft += window
    return ServingPoint(rate, batch, ttft, tpot)


def _tpot(curve: Curve, batch: float, rate: float) -> float:
    """The mean time between a running sequence's tokens at ``batch`` sequences and
    ``rate`` prompts a second, under iteration-level batching (Yu et al., 2022, Orca §3.2;
    Agrawal et al., 2024, Sarathi-Serve §4): a prompt's prefill runs inside the decode
    steps, in ``⌈P/K⌉`` chunks of ``K`` tokens, and each such step reads the weights once
    for both. A chunk's GEMMs are compute-bound, so the step's weight read (``t_d(1)``, the
    step of one sequence: weights and little else) hides under them, up to the chunk's
    compute (``K·c/P``); the decode attention's KV reads and the prefill's own compute do
    not overlap. A prompt thus stretches the steps by ``e = c − ⌈P/K⌉·min(t_d(1), K·c/P)``
    rather than its whole ``c``, and at ``λ`` prompts a second the steps run
    ``t_d(B) / (1 − λ·e)``. (Taking turns, ``1/(1 − λ·c)``, read every published online
    TPOT 11 to 86 % long.)"""
    step_s, excess_s = curve.step_and_excess_s(batch)
    stretched = 1 - rate * excess_s
    return step_s / stretched if stretched > 0 else math.inf


def _ceiling(curve: Curve) -> float:
    """The rate at which Little's law fills every slot, ``λ·(t_p + O·t_d(B_max)/(1 − λ·c))
    = B_max``: the smaller root of ``c·t_p·λ² − (t_p + O·t_d + B_max·c)·λ + B_max = 0``
    (static batching: one full batch a cycle)."""
    t_p, c, out = curve.prompts_s(), curve.cycle_prefill_s, curve.generate
    b_max = float(curve.b_max)
    t_d = curve.step_s(b_max)
    if not curve.continuous:
        return b_max / (t_p + out * t_d)
    b = t_p + out * t_d + b_max * c
    # the smaller root as 2·B / (b + √…): no cancellation where c·t_p is small
    return 2 * b_max / (b + math.sqrt(max(b * b - 4 * c * t_p * b_max, 0.0)))


def _full(curve: Curve, rate: float, quantile: float) -> ServingPoint:
    """The replica with every slot busy at ``rate``: a prompt's chunked prefill beside the
    full batch, and its decode steps stretched by the prefills (static batching: a request
    waits for the running batch to end, as :func:`_point` has it)."""
    batch = float(curve.b_max)
    step = curve.step_s(batch)
    if not curve.continuous:
        ttft = curve.static_cycle_s(batch) * quantile + curve.prompts_s(batch)
        return ServingPoint(rate, batch, ttft, step)
    chunks = math.ceil(curve.prompt / curve.chunk_tokens) if curve.chunk_tokens else 1
    # a saturated replica's prefills may claim every step: its steps are stretched 1,000×
    # at most (a busy share capped at 0.999), never infinitely
    tpot = min(_tpot(curve, batch, rate), step / 0.001)
    ttft = curve.prompts_s() + chunks * step * curve.step_tokens
    ttft += curve.window_wait_s(batch, quantile)
    return ServingPoint(rate, batch, ttft, tpot)


def _meets(point: ServingPoint | None, targets: Targets) -> bool:
    if point is None:
        return False
    ttft, tpot = targets.ttft_limit_s, targets.tpot_limit_s
    if ttft is not None and point.ttft_s > ttft:
        return False
    return tpot is None or point.tpot_s <= tpot


def _slack(point: ServingPoint, targets: Targets) -> float:
    """The log of the tightest target's latency over its limit: negative inside the
    targets. (The latencies diverge at the replica's capacity; their log is what the
    interpolation can follow.)"""
    ratio = 0.0
    if targets.ttft_limit_s is not None:
        ratio = max(ratio, point.ttft_s / targets.ttft_limit_s)
    if targets.tpot_limit_s is not None:
        ratio = max(ratio, point.tpot_s / targets.tpot_limit_s)
    return math.log(ratio) if 0 < ratio < math.inf else (math.inf if ratio else -math.inf)


def _highest(curve: Curve, ok: ServingPoint, bad: float, targets: Targets) -> ServingPoint:
    """The point at the highest rate found to meet ``targets``, between a point that meets
    them and a rate that does not (the replica's capacity), to :data:`RATE_TOLERANCE` on
    the rate's logarithm. Every latency grows with the rate, so the tightest target's
    :func:`_slack` crosses zero once. While the upper bound has no finite slack (a rate at
    or past the capacity) the bracket is halved on the rate itself (the answers mostly lie
    at a large share of the capacity, not in the middle of its six decades); then regula
    falsi on the slack over the rate's logarithm, with the Illinois modification (a bound
    kept twice has its slack halved; Dowell & Jarratt, 1971). The concurrency grows with
    the rate, so each probe's fixed point starts from the one at the highest rate known to
    pass."""
    low, high = math.log(ok.rate_rps), math.log(bad)
    low_slack, high_slack = _slack(ok, targets), math.inf
    kept, streak = 0, 0  # the bound the last probes left in place (+1 the high), how often
    step = RATE_TOLERANCE / 2
    while high - low > RATE_TOLERANCE:
        if not math.isfinite(high_slack):
            x = math.log((math.exp(low) + math.exp(high)) / 2)
        elif streak >= 3 or not high_slack > low_slack > -math.inf:
            x = (low + high) / 2  # a bound kept three times running: the slack is too curved
        else:
            x = high - high_slack * (high - low) / (high_slack - low_slack)
            x = min(max(x, low + step), high - step)  # strictly inside, a step from each end
        point = _point(curve, math.exp(x), targets.quantile, ok.concurrency)
        side = 1 if point is not None and _meets(point, targets) else -1
        streak = streak + 1 if side == kept else 1
        if point is not None and side == 1:
            ok, low, low_slack = point, x, _slack(point, targets)
            if streak > 1 and math.isfinite(high_slack):
                high_slack /= 2
        else:
            high, high_slack = x, math.inf if point is None else _slack(point, targets)
            if streak > 1:
                low_slack /= 2
        kept = side
    return ok
