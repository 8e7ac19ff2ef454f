"""How many GPUs to serve a model at a request rate under latency targets.

A replica (one engine on ``tp`` GPUs) batches the sequences in flight step by step
(iteration-level scheduling: Yu et al., 2022, "Orca", §3; vLLM, Kwon et al., 2023). Its times
come from the calibrated serving roofline (:func:`~whichgpu.estimate.throughput.serving_seconds`):
``S(B)``, seconds per output token over a batch cycle with ``B`` sequences in flight, and
``t_p``, one prompt's prefill (the latency of a request's own prefill, calibrated on
first-token times), and ``c``, the GPU time a prompt takes inside a busy cycle (prefills
batched with the others', at the cycle's efficiency). A cycle is ``B`` prefills and ``O``
decode steps, so a decode step takes ``t_d(B) = B·S(B) − B·c/O``.

At an arrival rate λ the engine spends ``ρ = λ·c`` of its time prefilling and the rest
decoding, so each sequence gets a token every ``TPOT = t_d(B)/(1 − ρ)`` seconds (prefill and
decode share the GPU; Agrawal et al., 2024, "Sarathi-Serve", §2), and Little's law fixes the
sequences in flight, ``B = λ·(t_p + O·TPOT)``. The time to first token is the prompt's
prefill, run in chunks alongside the decode batch (one decode step a chunk), plus the wait
for a free slot among the engine's ``B_max`` (M/M/c, :mod:`whichgpu.estimate.queueing`) and
behind other prefills (the prefill server's M/M/1 waiting tail, an upper bound on its
deterministic M/D/1). Latency quantiles are the waits' quantiles; TPOT is a request's mean
inter-token time (what vLLM's and MLPerf's harnesses report per request), the same at p50
and p95 in this model.

The highest rate a replica sustains under the targets is found by regula falsi (every
latency grows with the rate); replicas cover the demand; with no targets the operating point
is the most the replica serves before its queue grows without bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from whichgpu.catalog.records import GPU
from whichgpu.estimate.disaggregated import against_replicas, plan_disaggregated
from whichgpu.estimate.kv_pool import kv_sequences
from whichgpu.estimate.parallel import one_instance
from whichgpu.estimate.serving_curve import Curve
from whichgpu.estimate.serving_layouts import (
    held_targets,
    held_to,
    layout_kept,
    layouts,
    replica_reach,
    replica_sizes,
    serves_more,
)
from whichgpu.estimate.serving_points import _ceiling, _full, _highest, _meets, _point
from whichgpu.estimate.serving_types import Disaggregated, ServingPlan, ServingPoint, Targets
from whichgpu.estimate.speculative import verification
from whichgpu.frozen import evolve
from whichgpu.job.engine_times import family
from whichgpu.job.engine_times import sequence_s as fitted_sequence_s
from whichgpu.job.engines import EngineProfile

__all__ = [
    "PERCENTILES",
    "ServingPlan",
    "ServingPoint",
    "Targets",
    "kv_sequences",
    "max_load_rps",
    "plan_service",
    "replica_plan",
    "serves_more",
]
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch


def _curve(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    tp: int,
    engine: EngineProfile,
    factor: float,
    b_max: int,
    sequence_s: float = 0.0,
    at_most_only: bool = False,
) -> tuple[Curve, float]:
    """The replica's decode step at each grid batch: the calibrated cycle's (over
    ``factor``) plus ``sequence_s`` of host work per sequence in the batch (an engine's
    scheduler, sampler and detokenizer walk every running sequence each step: Kwon et al.,
    2023, §4.5; the vLLM v0.6.0 notes measure the API server and scheduler at a third of
    an 8B model's step on an H100), which the roofline fitted on TensorRT-LLM's C++
    runtime does not carry."""
    from whichgpu.estimate.throughput import cached_share, prefill_seconds, serving_seconds

    grid = sorted({*(1 << k for k in range(b_max.bit_length()) if 1 << k <= b_max), b_max})
    if at_most_only:  # the step at b_max alone: all the maximum-load ceiling reads
        grid = [b_max]
    out = max(job.generate, 1)
    decode, bounds, eta, in_cycle, cycles = [], [], 0.0, 0.0, []
    # the routed experts on the engine's own kernels (its law: whichgpu.estimate.routed_experts)
    base = evolve(job, tp=tp if engine.split == "tensor" else 1, gpus=tp,
                  moe_kernels=family(engine.id))  # fmt: skip
    # a layer split runs its GPUs one after another: one GPU's roofline, no all-reduce
    # (llama.cpp's harness is calibrated on layer-split runs of their GPU count as such)
    from whichgpu.estimate.collectives import LAYER_SPLIT_HARNESSES

    lanes = tp if engine.split == "tensor" or engine.harness in LAYER_SPLIT_HARNESSES else 1
    prefill_raw = prefill_seconds(arch, base, gpu, lanes, engine.harness)
    # a shared prefix in the engine's cache: what is left of each prompt's prefill (the
    # decode steps still read the prefix's KV, so they are what they were). A prompt
    # prefilled alone may be bound by reading the weights, which the cache does not spare
    # (:func:`cached_share`); inside a busy cycle its prefill is batched with the others'
    # and costs its FLOPs (the cycle's ``c``), of which the cache spares its share
    from whichgpu.estimate.perf import cached_prefill_share

    left = cached_share(arch, base, gpu, lanes, engine.harness, prefill_raw)
    spared = cached_prefill_share(arch, base) if base.shared_prefix else 1.0
    # an eager engine's host launches every kernel: no pass is faster than that
    host = arch.n_layers * engine.host_layer_s
    prefill = prefill_raw * left / factor
    together = 0.0
    if not engine.continuous_batching:  # a static batch's prompts go in one pass
        share = prefill_seconds(arch, base, gpu, lanes, engine.harness, b_max)
        together = b_max * share * left / factor
    speculation = verification(arch, base, gpu, lanes)
    for batch in grid:
        per_token, eta, bound, in_cycle = serving_seconds(
            arch, evolve(base, batch=batch), gpu, lanes, engine.harness, prefill_raw
        )
        per_token, in_cycle = per_token / factor, in_cycle / factor
        cycle = batch * per_token * out  # B prefills and O decode steps
        gpu_s = max(cycle - batch * in_cycle, 0.1 * cycle) / out
        tokens = 1.0  # a step's tokens a sequence
        if speculation is not None:  # a verification step and its drafts, τ tokens
            wide, drafts, kv_s, tokens = speculation
            rows = batch * wide  # the pass over k + 1 tokens of each sequence
            per_wide, _eta, bound_wide, in_wide = serving_seconds(
                arch, evolve(base, batch=rows), gpu, lanes, engine.harness, prefill_raw
            )
            cycle_wide = rows * per_wide / factor * out
            wide_s = max(cycle_wide - rows * in_wide / factor, 0.1 * cycle_wide) / out
            verify_s = max(wide_s - (rows - batch) * kv_s, gpu_s)  # one cache read a sequence
            bound = bound_wide if verify_s > gpu_s else bound
            gpu_s = verify_s + drafts * gpu_s
        step = (gpu_s + batch * sequence_s) / tokens
        in_cycle *= spared
        cycles.append(in_cycle)
        decode.append(max(step, host / tokens))
        bounds.append("host" if host / tokens > step else bound)  # the host's launches bind
    curve = Curve(
        tuple(grid),
        tuple(decode),
        prefill,
        in_cycle,
        job.prompt,
        out,
        b_max,
        engine.limits(gpu)[1],
        engine.continuous_batching,
        tuple(bounds),
        host,
        together,
        engine.scheduler_steps,
        tuple(cycles),
        speculation[3] if speculation is not None else 1.0,
    )
    return curve, eta * factor


@lru_cache(maxsize=4096)
def replica_curve(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    tp: int,
    engine: EngineProfile,
    factor: float,
    max_sequences: int | None,
    sequence_s: float,
    at_most_only: bool = False,
) -> tuple[Curve, float] | None:
    """A replica's serving curve and η at the sequences its KV cache holds (``max_sequences``
    at most: the user's cap, vLLM's --max-num-seqs); None where it holds none.
    ``at_most_only``: the curve's last point alone, all
    :func:`~whichgpu.estimate.serving_points._ceiling` reads."""
    b_max = kv_sequences(arch, job, gpu, tp, engine)
    if max_sequences is not None:
        b_max = min(b_max, max_sequences)
    if b_max < 1:
        return None
    return _curve(arch, job, gpu, tp, engine, factor, b_max, sequence_s, at_most_only)


@dataclass(frozen=True)
class _Capacity:
    curve: Curve
    eta: float
    capacity: ServingPoint
    binding: str
    unmet: tuple[str, float] | None


@lru_cache(maxsize=4096)
def _capacity(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    tp: int,
    engine: EngineProfile,
    targets: Targets,
    factor: float,
    max_sequences: int | None,
    sequence_s: float = 0.0,
) -> _Capacity | None:
    """A replica's highest rate under ``targets`` (once per replica shape: the candidates
    that run 1, 2 or 4 such replicas share it)."""
    found = replica_curve(arch, job, gpu, tp, engine, factor, max_sequences, sequence_s)
    if found is None:
        return None
    curve, eta = found
    q = targets.quantile
    ceiling = _ceiling(curve)
    unmet: tuple[str, float] | None = None
    binding = "throughput"
    capacity_rate = ceiling * 0.999
    if not targets.any:
        # no targets: every slot busy, its latencies without the unbounded queue's wait
        return _Capacity(curve, eta, _full(curve, capacity_rate, q), binding, None)
    floor = _point(curve, ceiling * 1e-6, q)
    if not _meets(floor, targets):
        assert floor is not None
        if targets.tpot_limit_s is not None and floor.tpot_s > targets.tpot_limit_s:
            unmet = ("tpot", floor.tpot_s)
        else:
            unmet = ("ttft", floor.ttft_s)
        return _Capacity(curve, eta, ServingPoint(0.0, 0.0, math.inf, math.inf), binding, unmet)
    assert floor is not None  # it meets the targets
    capacity = _highest(curve, floor, ceiling, targets)
    at_edge = _point(curve, capacity.rate_rps * 1.001, q, capacity.concurrency)
    if capacity.rate_rps >= SATURATED * ceiling:
        # the queue's wait explodes at the ceiling, whatever the target: its slots where
        # they are all busy there, else the replica's throughput, which flattens well before
        # they fill (a compute-bound step grows with the batch: 113 of 609 slots in flight
        # serve 95 % of what all 609 would), and which more slots would not raise
        full = capacity.concurrency >= SATURATED * curve.b_max
        binding = "slots" if full else "throughput"
    elif at_edge is not None:  # past the capacity a target breaks: the one given, else over
        over_tpot = targets.tpot_limit_s is not None and at_edge.tpot_s > targets.tpot_limit_s
        if targets.ttft_s is None or targets.tpot_s is None:
            binding = "ttft" if targets.tpot_s is None else "tpot"
        else:
            binding = "tpot" if over_tpot else "ttft"
    return _Capacity(curve, eta, capacity, binding, None)


#: A replica whose targets hold to this share of the rate that fills every sequence slot
#: (:func:`~whichgpu.estimate.serving_points._ceiling`) is limited by its slots (what its KV
#: cache or the engine's cap holds) where this share of them are in flight there, else by
#: its throughput; not by a target: near the ceiling the queue's wait grows without bound,
#: so any target breaks there (a TTFT of 0.1 s against 2 s is not the limit).
SATURATED = 0.95


def static_batch_s(
    arch: ModelArch, job: Job, gpu: GPU, tp: int, engine: EngineProfile, batch: int
) -> tuple[float, float]:
    """The seconds of a prefill of ``batch`` prompts and of one decode step at ``batch``
    sequences on a replica of ``tp`` GPUs (a static batch, as ``generate()`` runs it): what
    the serving curve is built from, at the engine's fitted host time per sequence."""
    curve, _eta = _curve(arch, job, gpu, tp, engine, 1.0, batch, fitted_sequence_s(engine.id))
    return curve.prompts_s(), curve.step_s(batch)


def replica_plan(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    tp: int,
    engine: EngineProfile,
    targets: Targets,
    demand_rps: float | None = None,
    factor: float = 1.0,
    replicas: int | None = None,
    max_sequences: int | None = None,
    sequence_s: float | None = None,
) -> ServingPlan | None:
    """Replicas of ``tp`` GPUs serving ``job`` (``prompt`` in, ``generate`` out) under
    ``targets``: as many as ``demand_rps`` needs, or ``replicas`` sharing it; None where
    the model's KV cache holds no sequence. ``sequence_s``: the engine's host time per
    sequence in a decode step (None: its fitted one,
    :func:`~whichgpu.job.engine_times.sequence_s`)."""
    if sequence_s is None:
        sequence_s = fitted_sequence_s(engine.id)
    found = _capacity(arch, one_instance(job, tp), gpu, tp, engine, targets, factor,
                      max_sequences, sequence_s)  # fmt: skip
    if found is None:
        return None
    curve, capacity = found.curve, found.capacity
    operating = capacity
    if replicas is None:
        replicas = 1
        if demand_rps is not None and capacity.rate_rps > 0:
            replicas = max(1, math.ceil(demand_rps / capacity.rate_rps * (1 - 1e-9)))
    if demand_rps is not None and capacity.rate_rps > 0:
        # replicas fixed by the caller (estimate's --count) that cannot carry the demand run
        # at their capacity under the targets, not past it: the shortfall is said apart
        rate = demand_rps / replicas
        if rate < capacity.rate_rps:  # at the capacity, the point the search found
            operating = _point(curve, rate, targets.quantile) or capacity
    return ServingPlan(
        engine=engine.id,
        gpus_per_replica=tp,
        replicas=replicas,
        max_sequences=curve.b_max,
        capacity=capacity,
        operating=operating,
        binding=found.binding,
        targets=targets,
        eta=found.eta,
        unmet=found.unmet,
        generate=max(job.generate, 1),
        bound=curve.bound_at(operating.concurrency),
        kv_dtype=job.kv_dtype,
        attention_dp=job.attention_dp and tp > 1,
    )


def plan_service(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    engine: EngineProfile,
    targets: Targets,
    demand_rps: float | None = None,
    max_sequences: int | None = None,
    tp: int | None = None,
    lows: tuple[float, float] = (1.0, 1.0),
    split_held: float = 1.0,
    split_mode: str | None = None,
) -> ServingPlan | None:
    """``count`` GPUs split into replicas of 1, 2, 4 or 8 (tensor parallelism inside each where
    the engine has it, in a degree that splits the heads), the split that serves the most
    kept (on a tie, the smaller replicas): None where no split holds the model. ``tp``: the
    replica's size the user fixed (``--tp``), the only split tried. ``lows``: what each
    layout's capacity is held to, tensor parallelism's and data-parallel attention's (the
    low end of its likely range where it rests on an unmeasured factor, else 1);
    ``split_held``: separate prefill and decode workers', against the replicas'
    (:func:`~whichgpu.estimate.engine_choice.split_low`), their latency targets held as far;
    ``split_mode``: ``aggregated`` plans replicas only, ``disaggregated`` the separate workers
    wherever they hold the model on both sides (on an engine that runs them), else chosen."""
    from whichgpu.errors import WhichGPUError

    best: ServingPlan | None = None
    served_by: list[tuple[int, int, float]] = []
    for per_replica in replica_sizes(arch, job, gpu, count, engine, tp):
        plan = None
        for layout in layouts(arch, job, engine, per_replica, fixed=tp is not None):
            held = held_targets(targets, lows) if layout.attention_dp else targets
            try:
                found = replica_plan(arch, layout, gpu, per_replica, engine, held,
                                     demand_rps=demand_rps, replicas=count // per_replica,
                                     max_sequences=max_sequences)  # fmt: skip
            except WhichGPUError:
                continue
            plan = layout_kept(plan, found, demand_rps, lows)
        if plan is None:
            continue
        served = plan.served_rps
        served_by.append((per_replica, plan.replicas, served))
        if best is None or serves_more(held_to(plan, lows), held_to(best, lows)):
            best = plan
    if best is None:
        return None
    others = sorted((s for s in served_by if s[0] != best.gpus_per_replica), key=lambda s: -s[2])
    best = replace(best, alternatives=tuple(others))
    if split_mode == "disaggregated" and engine.disaggregation and count >= 2:
        split = _split_of(arch, job, gpu, count, engine, targets, tp, max_sequences)
        return against_replicas(best, split, demand_rps, forced=True)
    chosen = split_mode is None and best.binding in ("ttft", "tpot")
    if chosen and engine.disaggregation and count >= 2:
        # a latency target binds the replicas: their prefills and decode steps share the
        # GPUs, which separate workers do not (bound by their slots or their throughput,
        # replicas lose nothing to the sharing). Where targets are met at the slow end
        # (``margin`` > 1), the split's are held at its own, wider slow end, and the capacity
        # of a pool no target binds is held there too (:func:`held_to`'s rule for replicas)
        held = held_targets(targets, (1.0, split_held))
        split = _split_of(arch, job, gpu, count, engine, held, tp, max_sequences)
        unbound = split is not None and held.limit_s(
            "ttft" if split.binding == "prefill" else "tpot") is None  # fmt: skip
        at_slow_end = targets.margin > 1.0 and split_held < 1.0
        scale = split_held if at_slow_end and unbound else 1.0
        return against_replicas(best, split, demand_rps, scale, held_at_slow_end=at_slow_end)
    return best


@lru_cache(maxsize=4096)
def _split_of(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    engine: EngineProfile,
    targets: Targets,
    tp: int | None,
    max_sequences: int | None,
) -> Disaggregated | None:
    """:func:`~whichgpu.estimate.disaggregated.plan_disaggregated` over the replica sizes
    ``count`` GPUs split into, once per shape (a GPU's offers share it)."""
    curves = {}
    for size in replica_sizes(arch, job, gpu, min(count, replica_reach(job, gpu)), engine, tp):
        found = replica_curve(arch, one_instance(job, size), gpu, size, engine, 1.0,
                               max_sequences, fitted_sequence_s(engine.id))  # fmt: skip
        if found is not None:
            curves[size] = found[0]
    return plan_disaggregated(arch, job, gpu, count, targets, curves)


def max_load_rps(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    engine: EngineProfile,
    max_sequences: int | None = None,
    tp: int | None = None,
) -> float:
    """The most requests/s any split of ``count`` GPUs serves at maximum load, every slot
    busy: a bound no target raises, so an engine whose bound is below what another serves
    under the targets need not be planned (0 where no split holds the model)."""
    from whichgpu.errors import WhichGPUError

    most = 0.0
    for n in replica_sizes(arch, job, gpu, count, engine, tp):
        for layout in layouts(arch, job, engine, n, fixed=tp is not None):
            try:
                found = replica_curve(arch, one_instance(layout, n), gpu, n, engine, 1.0,
                                       max_sequences, fitted_sequence_s(engine.id),
                                       at_most_only=True)  # fmt: skip
            except WhichGPUError:
                continue
            if found is not None:
                most = max(most, count // n * _ceiling(found[0]))
    return most


#: The latency quantiles a target may be set at
PERCENTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}
