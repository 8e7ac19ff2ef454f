"""How a replica's GPUs are laid out and how two plans of the same GPUs are weighed: tensor
parallelism, or for a mixture of experts data-parallel attention with expert-parallel MoE
(:attr:`~whichgpu.job.Job.attention_dp`), each held to the slow end of its likely range
(``lows``) where it rests on a factor no serving run measured; a plan that serves more, or
that comes nearer to targets no load meets (:func:`serves_more`). Used by the serving
planner's search (:mod:`whichgpu.estimate.serving_plan`)."""

from __future__ import annotations

import math
from dataclasses import replace

from whichgpu.catalog.records import GPU
from whichgpu.estimate.serving_types import ServingPlan, Targets
from whichgpu.frozen import evolve
from whichgpu.job import Job
from whichgpu.job.engines import EngineProfile
from whichgpu.models.arch import ModelArch


def layouts(
    arch: ModelArch, job: Job, engine: EngineProfile, gpus: int, fixed: bool = False
) -> list[Job]:
    """The layouts a replica of ``gpus`` GPUs serves ``job`` in: tensor parallelism, and for
    a mixture of experts on an engine that has it, data-parallel attention with
    expert-parallel MoE (:attr:`~whichgpu.job.Job.attention_dp`; vLLM's DeepSeek recipe:
    "Tensor-parallel is usually better for low-latency / low-load scenarios, while
    data-parallel works better for high-load workloads"). A job that already asks for
    data-parallel attention is planned so only; a tensor-parallel degree the user fixed
    (``fixed``: ``--tp``) keeps tensor parallelism."""
    if job.attention_dp or fixed:
        return [job]
    if gpus > 1 and arch.is_moe and engine.attention_dp_flags and engine.split == "tensor":
        return [job, evolve(job, attention_dp=True)]
    return [job]


def held_targets(targets: Targets, lows: tuple[float, float]) -> Targets:
    """Latency targets a data-parallel-attention replica is held to: at the slow end of its
    range where that lies further than tensor parallelism's (``lows``), where targets are met
    at the slow end at all (``--confidence likely``)."""
    tp_low, dp_low = lows
    if targets.margin > 1.0 and targets.any and dp_low < tp_low:
        return replace(targets, margin=targets.margin * tp_low / dp_low)
    return targets


def layout_kept(
    kept: ServingPlan | None,
    plan: ServingPlan | None,
    demand_rps: float | None,
    lows: tuple[float, float],
) -> ServingPlan | None:
    """Of two layouts of the same replicas, tensor parallelism where it carries the demand
    with a service's headroom (:data:`~whichgpu.estimate.assumptions.TARGET_UTILIZATION`,
    its capacity held to ``lows[0]``: more capacity buys nothing there, and its latencies are
    the lower), else the one that serves more, each at what ``lows`` holds it to
    (data-parallel attention, which no serving run of the fit ran, wins only by more than
    its wider range; its latency targets are already held there, :func:`held_targets`);
    the other's rate kept beside it."""
    from whichgpu.estimate.assumptions import TARGET_UTILIZATION

    if plan is None or kept is None:
        return plan or kept
    dp, tp = (plan, kept) if plan.attention_dp else (kept, plan)
    carries = (
        demand_rps is not None
        and tp.unmet is None
        and (tp.served_rps * lows[0] * TARGET_UTILIZATION >= demand_rps)
    )
    winner = dp if not carries and serves_more(held_to(dp, lows), held_to(tp, lows)) else tp
    loser = tp if winner is dp else dp
    return replace(winner, other_layout_rps=loser.served_rps)


def held_to(plan: ServingPlan, lows: tuple[float, float]) -> ServingPlan:
    """``plan`` with its capacity at what its layout is held to (``lows``: tensor
    parallelism's, data-parallel attention's) where its throughput binds (a latency
    target's margin already holds the other), to compare layouts and splits on."""
    low = lows[1] if plan.attention_dp else lows[0]
    if plan.binding != "throughput" or low == 1.0:
        return plan
    return replace(plan, capacity=replace(plan.capacity, rate_rps=plan.capacity.rate_rps * low))


def shortfall(plan: ServingPlan) -> float:
    """How far a plan that misses a target at every load is from it: what it reaches over
    the target (1 for a plan that meets its targets)."""
    if plan.unmet is None:
        return 1.0
    target, reached_s = plan.unmet
    limit_s = plan.targets.limit_s(target)
    return reached_s * plan.targets.margin_of(target) / limit_s if limit_s else math.inf


def serves_more(plan: ServingPlan, best: ServingPlan) -> bool:
    """``plan`` serves more than ``best``, or, where neither meets the targets at any load,
    comes nearer to them (the split a message about the miss should name: tensor parallel
    8 reaches a shorter first token than 4 replicas of 2, which serve more)."""
    if plan.unmet is not None or best.unmet is not None:
        return shortfall(plan) < shortfall(best) * (1 - 1e-9)
    served = plan.served_rps
    return served > best.served_rps * (1 + 1e-9)


def replica_reach(job: Job, gpu: GPU) -> int:
    """The most GPUs one replica spans: a node's (an instance's), or a rack-scale NVLink
    domain's where one joins the nodes (GB200 NVL72: its tensor-parallel all-reduces and
    expert exchanges stay on NVLink across the trays of 4 it is sold as)."""
    return max(job.gpus_per_node, gpu.nvlink_domain_gpus or 0)


def replica_sizes(
    arch: ModelArch, job: Job, gpu: GPU, count: int, engine: EngineProfile, tp: int | None
) -> list[int]:
    """The replica sizes ``count`` GPUs split into (:func:`~whichgpu.estimate.serving_plan.
    plan_service`): 1, 2, 4, 8… up to what one replica spans, or the ``tp`` the user fixed, in
    a degree that splits the heads where the engine splits tensors."""
    from whichgpu.estimate.parallel import gpu_counts, tensor_parallel_degree

    sizes = [tp] if tp else gpu_counts(min(count, replica_reach(job, gpu)))
    return [n for n in sizes if not count % n and (engine.split != "tensor"
            or tensor_parallel_degree(arch, n) == n)]  # fmt: skip
