"""Disaggregated serving: prefill workers and decode workers on separate GPUs, the prompt's
KV cache moved from one to the other (DistServe: Zhong et al., 2024, OSDI, §3-4;
Splitwise: Patel et al., 2024, ISCA; as NVIDIA Dynamo, llm-d and the engines' own PD modes
deploy it). Each pool is sized for its own target:

* a prefill worker (``tp_p`` GPUs) takes the prompts one pass at a time: an M/M/1 queue
  (:func:`~whichgpu.estimate.queueing.waiting_s`) whose service is a prompt's GPU time in a
  busy pass ``c``; a request's first token waits in it, then takes its own prefill ``t_p``,
  then its KV cache's transfer to a decode worker (its bytes over the link between them,
  every prefill GPU sending its shard at once);
* a decode worker (``tp_d`` GPUs) runs decode steps only, no prefill stretching them: at
  ``B`` sequences a token every ``t_d(B)`` seconds, and by Little's law it serves
  ``B / (O · t_d(B))`` requests a second, ``B`` the most whose step meets the TPOT target
  and whose KV cache it holds.

The pools serve what the slower of them does. Against the aggregated replicas of the same
GPUs (:mod:`whichgpu.estimate.serving_plan`) it wins where long prompts' prefills would
stretch every decode step past a tight TPOT (DistServe §2.2), and loses where prompts are
short (the prefill GPUs then idle, and the transfer buys nothing).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from whichgpu.catalog.records import GPU
from whichgpu.estimate.queueing import mean_waiting_s, waiting_s
from whichgpu.estimate.serving_curve import Curve
from whichgpu.estimate.serving_types import Disaggregated, ServingPlan, ServingPoint, Targets
from whichgpu.job import Job
from whichgpu.models.arch import ModelArch


def transfer_s(arch: ModelArch, job: Job, gpu: GPU, tp_p: int, tp_d: int, per_node: int) -> float:
    """Seconds a prompt's KV cache takes from its prefill worker to a decode worker: its bytes
    over the link between the two (NVLink inside a node's domain, PCIe inside a node, the
    network across nodes: :func:`~whichgpu.estimate.parallel.collective_gb_per_s`), each of
    the smaller worker's GPUs sending its shard at once (NIXL's and Mooncake's transfers are
    GPU to GPU, RDMA across nodes)."""
    from whichgpu.estimate.kv_cache import kv_cache_bytes
    from whichgpu.estimate.parallel import collective_gb_per_s
    from whichgpu.frozen import evolve

    nbytes = kv_cache_bytes(arch, evolve(job, batch=1, tp=1), tokens=job.prompt or job.seq)
    link = collective_gb_per_s(gpu, tp_p + tp_d, job.network, per_node,
                               network_gbit=job.network_gbit)  # fmt: skip
    return nbytes / (link * 1e9 * min(tp_p, tp_d))


@lru_cache(maxsize=4096)
def prefill_capacity(t_p: float, c: float, extra_s: float, targets: Targets) -> tuple[float, float]:
    """The most requests/s one prefill worker takes with the time to first token (its queue,
    ``t_p``, ``extra_s`` after it) within the target, and that time there; with no TTFT
    target, what keeps its queue finite (at 95 % busy). Once per (times, targets): a sixty-
    step bisection, asked again of the same worker by each split a plan weighs (a full-
    catalog serving recommend: 187 times, 59 of them distinct)."""
    limit = targets.ttft_limit_s
    ceiling = 1.0 / max(c, 1e-9)
    if limit is None:
        rate = 0.95 * ceiling
        return rate, waiting_s(1, rate * c, c, targets.quantile) + t_p + extra_s
    if t_p + extra_s > limit:
        return 0.0, t_p + extra_s
    lo, hi = 0.0, ceiling * (1 - 1e-9)
    for _ in range(60):  # the TTFT grows with the rate: bisection
        mid = (lo + hi) / 2
        if waiting_s(1, mid * c, c, targets.quantile) + t_p + extra_s <= limit:
            lo = mid
        else:
            hi = mid
    return lo, waiting_s(1, lo * c, c, targets.quantile) + t_p + extra_s


def prefill_worker(
    arch: ModelArch, job: Job, gpu: GPU, prefill: Curve, tp_p: int, tp_d: int, targets: Targets
) -> tuple[float, float, float]:
    """A prefill worker of ``tp_p`` GPUs (``prefill``: its serving curve) feeding decode
    workers of ``tp_d``: the most requests/s it takes with the time to first token within
    the target, that time, and the KV transfer in it (:func:`prefill_capacity`,
    :func:`transfer_s`)."""
    moved = transfer_s(arch, job, gpu, tp_p, tp_d, job.gpus_per_node)
    t_p, c = prefill.prefill_s, prefill.cycle_prefill_at(prefill.b_max)
    one_p, ttft = prefill_capacity(t_p, c, moved, targets)
    return one_p, ttft, moved


def decode_capacity(
    step_s: Callable[[float], float], b_max: int, generate: int, targets: Targets
) -> tuple[float, float]:
    """The most requests/s one decode worker serves with its step within the TPOT target
    (and its sequences within its KV cache's ``b_max``), and the sequences there: Little's law,
    ``B / (O · t_d(B))``. ``step_s``: the worker's decode step at a batch."""
    limit = targets.tpot_limit_s
    if limit is not None and step_s(1.0) > limit:
        return 0.0, 1.0
    batch = float(b_max)
    if limit is not None and step_s(batch) > limit:
        lo, hi = 1.0, batch
        for _ in range(50):  # the step grows with the batch: bisection
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if step_s(mid) <= limit else (lo, mid)
        batch = lo
    return batch / (max(generate, 1) * step_s(batch)), batch


def split_at(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    split: tuple[tuple[Curve, int, int], tuple[Curve, int, int]],
    rate_rps: float,
    quantile: float | None = 0.5,
) -> ServingPoint:
    """Prefill and decode workers (``split``: each pool's serving curve, its workers and
    their tensor-parallel degree) at ``rate_rps`` offered requests a second, spread evenly:
    a request waits at one of the prefill workers (an M/M/1 queue at ``λ/n_p`` whose service
    is a prompt's GPU time in a busy pass; its ``quantile``, or its mean with None), takes
    its prefill and its KV cache's transfer, then decodes at the step of the batch each
    decode worker holds by Little's law, ``B = (λ/n_d)·O·t_d(B)``. Infinite times where a
    pool cannot keep up."""
    (prefill, n_p, tp_p), (decode, n_d, tp_d) = split
    moved = transfer_s(arch, job, gpu, tp_p, tp_d, job.gpus_per_node)
    c = prefill.cycle_prefill_at(prefill.b_max)
    busy = rate_rps / n_p * c
    mean_ttft = mean_waiting_s(1, busy, c) + prefill.prefill_s + moved  # Little's law's
    wait = mean_ttft if quantile is None else waiting_s(1, busy, c, quantile)
    ttft = wait + prefill.prefill_s + moved if quantile is not None else mean_ttft
    per_worker = rate_rps / n_d * max(job.generate, 1)  # tokens a second a decode worker owes
    if per_worker * decode.step_s(float(decode.b_max)) > decode.b_max:
        return ServingPoint(rate_rps, math.inf, ttft, math.inf)
    lo, hi = 0.0, float(decode.b_max)
    for _ in range(60):  # B − (λ/n_d)·O·t_d(B) grows with B: bisection on its root
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if per_worker * decode.step_s(max(mid, 1e-9)) > mid else (lo, mid)
    batch = max(hi, 1e-9)
    held = n_d * batch + rate_rps * mean_ttft  # decoding, and waiting or prefilling (Little)
    return ServingPoint(rate_rps, held, ttft, decode.step_s(batch))


def split_at_concurrency(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    split: tuple[tuple[Curve, int, int], tuple[Curve, int, int]],
    users: int,
    quantile: float | None = 0.5,
) -> ServingPoint:
    """:func:`split_at` under a closed loop of ``users`` (a benchmark's concurrency: each
    sends its next request when the last one ends): the rate ``X`` at which the requests in
    flight, :func:`split_at`'s count by Little's law over their mean lives, are ``users``."""
    lo, hi = 0.0, float(users) / max(job.generate, 1) / 1e-6
    for _ in range(80):  # the requests in flight grow with the rate: bisection
        mid = (lo + hi) / 2
        held = split_at(arch, job, gpu, split, mid, quantile).concurrency
        lo, hi = (mid, hi) if held < users else (lo, mid)
    return replace(split_at(arch, job, gpu, split, lo, quantile), concurrency=float(users))


def plan_disaggregated(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    targets: Targets,
    curves: dict[int, Curve],
) -> Disaggregated | None:
    """The layout of ``count`` GPUs into prefill and decode workers (each of a size among
    ``curves``' keys, its serving curve there: a replica's tensor-parallel degrees) that
    serves the most under ``targets``; None where none holds the model on both sides."""
    best: Disaggregated | None = None
    decoding = {  # a decode worker's capacity depends on its own size alone
        tp: decode_capacity(curve.step_s, curve.b_max, job.generate, targets)
        for tp, curve in curves.items()
    }
    for tp_p, prefill in curves.items():
        for tp_d, (one_d, batch) in decoding.items():
            tpot = curves[tp_d].step_s(batch)
            one_p, ttft, moved = prefill_worker(arch, job, gpu, prefill, tp_p, tp_d, targets)
            if one_p <= 0 or one_d <= 0:
                continue
            for n_p in range(1, count // tp_p):
                left = count - n_p * tp_p
                if left < tp_d or left % tp_d:
                    continue
                n_d = left // tp_d
                served = min(n_p * one_p, n_d * one_d)
                if best is None or served > best.capacity_rps * (1 + 1e-9):
                    binding = "prefill" if n_p * one_p <= n_d * one_d else "decode"
                    best = Disaggregated(tp_p, n_p, tp_d, n_d, served, ttft, tpot, moved,
                                         binding, batch)  # fmt: skip
    if best is not None and math.isinf(best.ttft_s):
        return None
    return best


def against_replicas(
    aggregated: ServingPlan,
    split: Disaggregated | None,
    demand_rps: float | None,
    held: float = 1.0,
    forced: bool = False,
    held_at_slow_end: bool = False,
) -> ServingPlan:
    """``split``'s GPUs as its prefill and decode workers where that serves more under the
    targets than ``aggregated``, the best replicas of the same GPUs, with its capacity held
    to ``held`` (the slow end of its wider range against theirs:
    :func:`~whichgpu.estimate.engine_choice.split_low`; no serving run of the fit ran
    separate workers; ``forced``: the user asked for them); else ``aggregated``, with what
    the layout would serve (``held_at_slow_end``: that figure is its slow end's)."""
    wins = split is not None and (
        forced or split.capacity_rps * held > aggregated.served_rps * (1 + 1e-9)
    )
    if split is None or not wins:
        rate = 0.0 if split is None else split.capacity_rps * held
        return replace(aggregated, disaggregated_rps=rate, disaggregated_held=held_at_slow_end)
    held = split.decode_workers * split.decode_batch  # sequences decoding at the capacity
    point = ServingPoint(split.capacity_rps, held, split.ttft_s, split.tpot_s)
    # at the demand, its latencies taken as at the capacity (an upper bound: both pools' waits
    # shrink with the load)
    rate = min(demand_rps or split.capacity_rps, split.capacity_rps)
    at_demand = replace(point, rate_rps=rate, concurrency=held * rate / split.capacity_rps)
    return replace(
        aggregated,
        gpus_per_replica=split.gpus,
        replicas=1,
        capacity=point,
        operating=at_demand,
        binding=split.binding,
        disaggregated=split,
        aggregated_rps=aggregated.served_rps,
        replicas_plan=aggregated,
        alternatives=(),
        attention_dp=False,
        other_layout_rps=0.0,
    )  # fmt: skip  (workers: TP)
