"""A finite run of requests sent at once: an offline batch of prompts, or a benchmark at an
infinite request rate (``vllm bench serve --request-rate inf``, which "sends all requests at
once"). Under iteration-level batching (Yu et al., 2022, Orca §3.2) the replica fills its
slots and, while requests wait, refills each as it frees: every decode step runs the full
batch, the rate :func:`~whichgpu.estimate.serving_points._ceiling` gives. Once none wait, the
batch drains: its last sequences run decode steps that read every weight for a few tokens.
That drain is what a finite run costs beyond ``requests / ceiling``, and where lengths
spread it is long: the last of a thousand ShareGPT outputs runs about a thousand steps at a
batch of a few (GPUStack's DeepSeek-R1 run on 8 × H200, vLLM 0.11: a peak of 7,451 output
tokens/s, 2,621 over the run's 76.6 s).

Two laws for the outputs' lengths: ``fixed`` (every request the same, a benchmark's random
dataset at its default range of 0), whose slots fill and empty in waves, the last wave the
``requests mod slots`` left; and ``exponential``, a dataset's lengths as the maximum-entropy
law for a positive length of known mean (Jaynes, 1957), truncated at the longest the dataset
holds. The exponential is memoryless: whatever ran before, the sequences in flight when the
queue empties have exponential residual lengths of the same mean, so the drain is that of
``min(requests, slots)`` fresh ones.

A closed loop of users started at once (a benchmark's ``--max-concurrency``) is such a
run too: where every length is fixed, its first wave's groups come back together, and each
prompt waits for its group's (:func:`closed_loop_ttft_s`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.estimate.serving_curve import Curve
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.job import Job
    from whichgpu.job.engines import EngineProfile
    from whichgpu.models.arch import ModelArch
    from whichgpu.notes import Note

Law = Literal["fixed", "exponential"]


def _log_integral(curve: Curve, low: float, high: float) -> float:
    """``∫ t_d(b) d(ln b)`` from ``low`` to ``high`` sequences: the curve is linear in log-batch
    between its grid points, so the trapezoid over them (and the ends) is exact."""
    if high <= low:
        return 0.0
    knots = [low, *(b for b in curve.batches if low < b < high), high]
    steps = [curve.step_s(b) for b in knots]
    return sum(
        (s0 + s1) / 2 * math.log(b1 / b0)
        for b0, b1, s0, s1 in zip(knots, knots[1:], steps, steps[1:], strict=False)
    )


def _harmonic(n: float) -> float:
    """``H_n``, the ``n``-th harmonic number (its asymptotic series past 20 terms)."""
    if n <= 20:
        return sum(1.0 / k for k in range(1, round(n) + 1))
    return math.log(n) + 0.5772156649015329 + 1 / (2 * n) - 1 / (12 * n * n)


def drain_s(curve: Curve, requests: int, law: Law, mean: float, longest: float) -> float:
    """Seconds a run of ``requests`` spends beyond serving their tokens at the full batch's
    cost per token (``t_d(B)/B``): the decode steps of its drain, less that cost of their
    tokens. ``mean``: the outputs' mean tokens, ``longest``: the most a request generates.

    ``fixed``: the last wave's ``r`` sequences run ``mean`` steps at ``r``,
    ``mean·(t_d(r) − r·t_d(B)/B)``. ``exponential``: ``n = min(requests, B)`` sequences whose
    count falls as ``n·e^(−k/μ)`` over decode steps ``k``, so the steps from ``b`` to
    ``b − db`` sequences number ``μ·db/b`` and the drain is ``μ·∫(t_d(b) − b·t_d(B)/B) db/b``
    down to one sequence (or to the count the truncation at ``longest`` ends at once), and
    the last one's remainder at ``t_d(1)``: the longest of ``n`` exponentials runs
    ``μ·H_n`` steps (``H_n`` the harmonic number, about ``ln n + 0.577``), ``μ·(H_n − ln n)``
    past the fluid's ``μ·ln n``, truncated at ``longest`` as an exponential of that mean
    is (``m·(1 − e^(−T/m))``)."""
    slots = curve.b_max
    per_token = curve.step_s(slots) / slots
    if requests < 1 or mean <= 0:
        return 0.0
    if law == "fixed":
        left = requests if requests <= slots else requests % slots
        return mean * max(0.0, curve.step_s(left) - left * per_token) if left else 0.0
    n = float(min(requests, slots))
    ends_at = n * math.exp(-longest / mean)  # still running when the longest ends
    low = max(1.0, ends_at)
    drain = mean * (_log_integral(curve, low, n) - per_token * (n - low))
    if ends_at < 1.0:  # the last sequence alone, for the rest of its length
        room = max(longest - mean * math.log(n), 0.0)  # steps the truncation leaves it
        tail = mean * (_harmonic(n) - math.log(n))
        last = tail * -math.expm1(-room / tail) if tail > 0 else 0.0
        drain += last * (curve.step_s(1.0) - per_token)
    return max(drain, 0.0)


def run_drain_s(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    engine: EngineProfile,
    plan: ServingPlan,
    requests: int,
    law: Law,
    longest: float,
    limit: int | None = None,
    seconds_per_sequence: float | None = None,
    mean: float | None = None,
) -> float:
    """:func:`drain_s` of ``plan``'s replicas, sharing ``requests`` evenly, on the curve the
    plan was searched on (its GPUs a replica, the batch ``limit`` it was searched under, None:
    what the KV cache holds, the engine's host time per sequence: ``seconds_per_sequence``,
    else its fitted one), the outputs ``mean`` tokens (None: the job's). An engine that
    batches statically runs its waves to their longest request, which its steady state
    already counts: no drain beyond it."""

    curve = plan_curve(arch, job, gpu, engine, plan, limit, seconds_per_sequence)
    if curve is None or not curve.continuous:
        return 0.0
    each = math.ceil(requests / max(plan.replicas, 1))
    return drain_s(curve, each, law, mean or max(job.generate, 1), longest)


def plan_curve(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    engine: EngineProfile,
    plan: ServingPlan,
    limit: int | None = None,
    seconds_per_sequence: float | None = None,
) -> Curve | None:
    """The serving curve ``plan``'s replicas were searched on: its GPUs a replica, the batch
    ``limit`` it was searched under (None: what the KV cache holds), the engine's host time
    per sequence ``seconds_per_sequence`` (None: its fitted one); None where the cache holds
    no sequence."""
    from whichgpu.estimate.parallel import one_instance
    from whichgpu.estimate.serving_plan import replica_curve
    from whichgpu.job.engine_times import sequence_s

    tp = plan.gpus_per_replica
    if seconds_per_sequence is None:
        seconds_per_sequence = sequence_s(engine.id)
    found = replica_curve(arch, one_instance(job, tp), gpu, tp, engine, 1.0, limit,
                          seconds_per_sequence)  # fmt: skip
    return None if found is None else found[0]


def closed_loop_group(
    users: int, prompt: int, chunk_tokens: int, step_token_limit: int, decodes: bool = True
) -> int:
    """The prompts a closed loop of ``users`` prefills together, each user sending its next
    request when its answer ends (a benchmark's ``--max-concurrency``, every user starting
    at once), where every request has the same lengths. The first prompts the scheduler
    takes share a step (``chunk_tokens`` a step under chunked prefill, else whole prompts up
    to ``step_token_limit``, 0: all that wait: vLLM's V0 engine without chunked prefill took
    up to ``max_model_len`` tokens a step); sequences that start together decode together
    and end together, so their users' next prompts arrive together and the groups the first
    wave formed persist: ``⌊budget / P⌋`` prompts a group, one where a prompt fills the
    budget, every user's where nothing bounds the step. Where the budget also holds the
    other users' decode tokens (``decodes``: vLLM's V1 scheduler, TensorRT-LLM's in-flight
    batching), ``g`` prompts fit beside ``users − g`` decodes: ``g·P + users − g ≤ K``."""
    budget = chunk_tokens or step_token_limit
    if users <= 1 or budget <= 0:
        return max(users, 1)
    if decodes:
        return max(1, min(users, (budget - users) // max(prompt - 1, 1)))
    return max(1, min(users, budget // max(prompt, 1)))


def closed_loop_ttft_s(
    curve: Curve,
    users: int,
    law: Law,
    step_token_limit: int,
    quantile: float = 0.5,
    decodes: bool = True,
) -> float:
    """The time to first token of a closed loop of ``users`` at a replica's full batch: a
    request's prefill shares its steps with the other prompts of its group
    (:func:`closed_loop_group`, where lengths are ``fixed``; one, whose neighbours' prefills
    fall elsewhere, where they spread as an ``exponential``), so its first token waits for
    the group's ``g`` prefills, ``g·t_p``, and the decode steps their ``⌈g·P/K⌉`` chunks
    ride in (one step of whole prompts), then its scheduler window
    (:func:`~whichgpu.estimate.serving_points._full`'s wait, for ``g = 1``)."""
    group = 1
    users = min(users, curve.b_max)  # no more in flight than the KV cache holds
    if law == "fixed":
        group = closed_loop_group(users, curve.prompt, curve.chunk_tokens, step_token_limit,
                                  decodes)  # fmt: skip
    tokens = group * max(curve.prompt, 1)
    steps = math.ceil(tokens / curve.chunk_tokens) if curve.chunk_tokens else 1
    batch = float(users)
    step = curve.step_s(batch) * curve.step_tokens
    return group * curve.prompts_s() + steps * step + curve.window_wait_s(batch, quantile)


def batch_drain(
    component: str,
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    engine: EngineProfile,
    plan: ServingPlan,
    tokens: float,
    rate: float,
    lengths: str | None,
    limit: int | None = None,
) -> tuple[float, tuple[Note, ...]]:
    """A served job of ``tokens`` to generate and no request rate, a batch of requests sent
    at once: its drain (:func:`run_drain_s`) beyond ``tokens / rate``, and the note that says
    so where it is 1 % of the time or more. A dataset's lengths (``lengths``, a preset) spread
    as an exponential up to the longest it keeps; lengths the user gave are every request's.
    ``limit``: the batch the plan was searched under (the user's), None where none was."""
    from whichgpu.job.length_presets import LENGTHS
    from whichgpu.notes import note

    if plan.disaggregated is not None or rate <= 0 or tokens <= 0:
        return 0.0, ()
    out = max(job.generate, 1)
    requests = math.ceil(tokens / out)
    mean = tokens / requests  # a job smaller than one request's output generates less
    preset = LENGTHS[lengths] if lengths is not None else None
    law: Law = "exponential" if preset is not None else "fixed"
    longest = preset.longest if preset is not None else mean
    drain = run_drain_s(arch, job, gpu, engine, plan, requests, law, longest, limit,
                        mean=mean)  # fmt: skip
    total = tokens / rate + drain
    if drain < 0.01 * total:
        return drain, ()
    share = drain / total
    if preset is not None:
        said = note("chosen_drain", component=component, requests=requests, drain_s=drain,
                    share=share, name=preset.name, generate=out, longest=longest)  # fmt: skip
    elif (each := math.ceil(requests / max(plan.replicas, 1))) <= plan.max_sequences:
        said = note("chosen_drain_one_wave", component=component, requests=requests,
                    drain_s=drain, share=share)  # fmt: skip
    else:
        said = note("chosen_drain_fixed", component=component, requests=requests,
                    left=each % plan.max_sequences, drain_s=drain, share=share)  # fmt: skip
    return drain, (said,)
