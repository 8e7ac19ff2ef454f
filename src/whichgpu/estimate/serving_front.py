"""The front of a served model on some GPUs: output tokens a second each GPU serves against
those each user gets, over every layout of the GPUs the planner weighs (replicas of each
size, and separate prefill and decode workers where the engine has them), as NVIDIA's
AIConfigurator prints it for aggregated and disaggregated (xPyD) deployments ("tokens/s/gpu"
against "tokens/s/user", its Pareto frontier; ai-dynamo/aiconfigurator README).

A user's speed is a running sequence's tokens a second, ``1 / TPOT``; a GPU's throughput the
output tokens a second of a layout at a load over its GPUs. A point is kept where the
latency targets hold at it (at their margin), and the front is the points no other beats on
both axes. It is a trade-off, not a plan: a demand is served at one point of it
(:func:`~whichgpu.estimate.serving_plan.plan_service`)."""

from __future__ import annotations

import math

from whichgpu.catalog.records import GPU
from whichgpu.estimate.serving_curve import Curve
from whichgpu.estimate.serving_types import FrontPoint, ServingPoint, Targets
from whichgpu.job import Job
from whichgpu.job.engines import EngineProfile
from whichgpu.models.arch import ModelArch

#: Loads a layout of replicas is read at: its capacity under the targets and lighter rates,
#: each half the last (a front's ends are its lightest and its fullest load)
LOADS = 8

#: A point is shown where a user gets this much more speed than at the next point with
#: more per GPU (lighter loads whose users gain a hair more cost their GPUs much)
STEP = 0.05


def pareto(points: list[FrontPoint]) -> tuple[FrontPoint, ...]:
    """The points no other is at least as fast for a user and as productive per GPU as,
    thinned to those a user gains :data:`STEP` or more on; fastest for a user first."""
    ordered = sorted(points, key=lambda p: (-p.tokens_per_s_per_gpu, -p.tokens_per_s_per_user))
    out: list[FrontPoint] = []
    for p in ordered:  # a GPU's throughput falls along the list: kept where a user's rises
        if not out or p.tokens_per_s_per_user > out[-1].tokens_per_s_per_user * (1 + STEP):
            out.append(p)
    return tuple(reversed(out))


def _replica_points(
    capacity: ServingPoint, curve: Curve, gpus: int, targets: Targets, attention_dp: bool
) -> list[FrontPoint]:
    """Replicas of ``gpus`` GPUs at their capacity under the targets (the planner's,
    :func:`~whichgpu.estimate.serving_plan._capacity`) and at :data:`LOADS` − 1 lighter
    rates, each half the last."""
    from whichgpu.estimate.serving_points import _meets, _point

    out = []
    for k in range(LOADS):
        rate = capacity.rate_rps / 2**k
        point = capacity if k == 0 else _point(curve, rate, targets.quantile)
        if point is None or rate <= 0 or point.tpot_s <= 0 or not _meets(point, targets):
            continue
        out.append(FrontPoint(gpus, 0, 1 / point.tpot_s, rate * curve.generate / gpus,
                              point.ttft_s, point.tpot_s, attention_dp))  # fmt: skip
    return out


def _split_points(
    arch: ModelArch, job: Job, gpu: GPU, count: int, targets: Targets, curves: dict[int, Curve]
) -> list[FrontPoint]:
    """Prefill and decode workers of each pair of sizes among ``curves``' (as
    :func:`~whichgpu.estimate.disaggregated.plan_disaggregated` pairs them), the decode
    workers at each grid batch whose step meets the TPOT target, the prefill workers in the
    share the prompts need (a GPU's figure counts both pools' GPUs, in the ratio that
    matches their rates, as AIConfigurator's per-GPU figures do)."""
    from whichgpu.estimate.disaggregated import decode_capacity, prefill_worker

    out = []
    limit = targets.tpot_limit_s
    for tp_p, prefill in curves.items():
        for tp_d, decode in curves.items():
            if tp_p + tp_d > count:
                continue
            one_p, ttft, _moved = prefill_worker(arch, job, gpu, prefill, tp_p, tp_d, targets)
            if one_p <= 0 or not math.isfinite(ttft):
                continue
            _rps, most = decode_capacity(decode.step_s, decode.b_max, decode.generate, targets)
            for batch in sorted({*(b for b in decode.batches if b < most), most}):
                step = decode.step_s(batch)
                if step <= 0 or (limit is not None and step > limit):
                    continue
                gpu_s = tp_p / one_p + tp_d * decode.generate * step / batch  # a request's
                out.append(FrontPoint(tp_d, tp_p, 1 / step, decode.generate / gpu_s, ttft, step))
    return out


def serving_front(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    count: int,
    engine: EngineProfile,
    targets: Targets,
    tp: int | None = None,
    max_sequences: int | None = None,
    split_layout: str | None = None,
) -> tuple[FrontPoint, ...]:
    """The front of ``job`` served by ``engine`` on ``count`` × ``gpu`` under ``targets``
    (``tp``: the replica size the user fixed), over the layouts the planner weighs: replicas
    and separate workers, or the one ``split_layout`` the user asked for."""
    from whichgpu.estimate.parallel import one_instance
    from whichgpu.estimate.serving_layouts import layouts, replica_reach, replica_sizes
    from whichgpu.estimate.serving_plan import _capacity
    from whichgpu.job.engine_times import sequence_s as fitted_sequence_s

    per_sequence_s = fitted_sequence_s(engine.id)
    curves: dict[int, Curve] = {}
    points: list[FrontPoint] = []
    for size in replica_sizes(arch, job, gpu, count, engine, tp):
        for layout in layouts(arch, job, engine, size, fixed=tp is not None):
            found = _capacity(arch, one_instance(layout, size), gpu, size, engine, targets,
                              1.0, max_sequences, per_sequence_s)  # fmt: skip
            if found is None or found.unmet is not None:
                continue
            if not layout.attention_dp and size <= replica_reach(job, gpu):
                curves[size] = found.curve
            if split_layout != "disaggregated":
                points += _replica_points(found.capacity, found.curve, size, targets,
                                          layout.attention_dp)  # fmt: skip
    if engine.disaggregation and count >= 2 and split_layout != "aggregated":
        points += _split_points(arch, job, gpu, count, targets, curves)
    return pareto(points)
