"""A served model on its hardware (:func:`~whichgpu.plan.core.plan`'s serving branch): the
engine, its replicas and layout (:func:`~whichgpu.estimate.engine_choice.choose_engine`), the
served rate with its likely range, the notes, what a model no replica holds is reported as,
and the front of the layouts an answer that states one plan shows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from whichgpu.catalog.records import GPU
from whichgpu.estimate.assumptions import TARGET_UTILIZATION
from whichgpu.frozen import evolve
from whichgpu.inputs.requests import Component
from whichgpu.notes import Note, note
from whichgpu.plan.hardware import Hardware
from whichgpu.plan.jobs import checkpoint_note
from whichgpu.plan.run import Blocker, Run
from whichgpu.plan.serving_notes import serving_notes
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from whichgpu.estimate.engine_choice import EngineChoice
    from whichgpu.job import Job
    from whichgpu.models.arch import ModelArch


def serve_component(
    component: Component,
    hw: Hardware,
    gpu: GPU,
    arch: ModelArch,
    job: Job,
    tp: int | None = None,
    margin: float = 1.0,
) -> Run:
    """``component`` served on ``hw``: its ``count`` GPUs split into replicas of 1, 2, 4 or 8
    (tensor parallelism inside each where the engine has it: a degree that splits the heads;
    ``tp`` fixes it), the split that serves the most kept; each replica as
    :func:`~whichgpu.estimate.serving_plan.replica_plan` plans it."""
    from dataclasses import replace

    from whichgpu.estimate.efficiency_model import extrapolated
    from whichgpu.estimate.engine_choice import (
        choose_engine,
        engine_notes,
        engines_for,
        serving_provenance,
        tight_kv_notes,
    )
    from whichgpu.estimate.kv_pool import pool_band
    from whichgpu.estimate.latency_range import (
        borrowed_step_s,
        held_share,
        latency_band,
        rate_band,
        ttft_extra,
    )
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.estimate.serving_plan import PERCENTILES, Targets
    from whichgpu.estimate.throughput import Rate
    from whichgpu.plan.settings import fp16_where_needed

    precision: tuple[Note, ...] = ()
    if component.precision is None:  # BF16 on a GPU without it: FP16, said
        job, precision = fp16_where_needed(component.label, job, gpu)
    engines, named = engines_for(component.engine, gpu, job)
    targets = Targets(component.ttft, component.tpot, PERCENTILES[component.percentile], margin,
                      ttft_extra() if margin > 1.0 else 1.0)  # fmt: skip
    capacity_gib = usable_bytes(gpu) / BYTES_PER_GIB
    if (gap := named.gap(gpu, job.quant)) is not None:
        kind = {"CUDA": "cuda_only", "engine": "engine_capability"}.get(gap[0], "format_capability")
        blocker = Blocker(kind, unit=job.quant, needed=gap[1])  # type: ignore[arg-type]
        needed = _split_gib(arch, job, hw.count)  # would it hold it, had the engine run here
        return Run(component, needed <= capacity_gib, needed, capacity_gib, f"{hw.count} GPU",
                   provenance="none", blocker=blocker)  # fmt: skip
    if component.layout == "disaggregated":  # the engines that run separate workers
        engines = [e for e in engines if e.disaggregation]
        if hw.count < 2:  # a prefill worker and a decode worker take two GPUs at least
            needed = _split_gib(arch, job, hw.count)
            blocker = Blocker("layout_split")
            return Run(component, needed <= capacity_gib, needed, capacity_gib,
                       f"{hw.count} GPU", provenance="none", blocker=blocker)  # fmt: skip
    choice = choose_engine(arch, job, gpu, hw.count, engines, targets, component.request_rate,
                           component.batch, tp, component.layout)  # fmt: skip
    if choice is None:
        return _unheld(component, hw, arch, job, capacity_gib, tp)
    asked, job, engine, best = job, choice.job, choice.engine, choice.plan
    replica_job, needed = replica_memory(arch, choice, gpu)
    demand = component.request_rate
    served_rps = best.served_rps
    out = max(job.generate, 1)
    rate = served_rps * out
    # the serving fit's band, as estimate states it (it served a point alone here), wider
    # where it rests on a factor no serving run measured
    provenance = serving_provenance(engine, arch, gpu, job.speculative, best.attention_dp,
                                    best.disaggregated is not None)  # fmt: skip
    borrowed_s = borrowed_step_s(engine.id, engine.harness)
    pool = pool_band(arch, job, gpu, best.gpus_per_replica, engine, best.max_sequences)
    low, high = rate_band(provenance, borrowed_s, best.capacity.tpot_s, engine.id, pool)
    likely = Rate(rate, "tokens/s", rate * low, rate * high)
    best = replace(best, ttft_band=latency_band("ttft", provenance),
                   tpot_band=latency_band("tpot", provenance),
                   borrowed_step_s=borrowed_s)  # fmt: skip
    tp, replicas = best.gpus_per_replica, best.replicas
    if best.disaggregated is not None:
        strategy = f"disaggregated: {best.disaggregated.label()}"
    elif tp > 1 and best.attention_dp:
        strategy = f"attention data parallel {tp} + expert parallel {tp}" + (
            f" × data parallel {replicas}" if replicas > 1 else ""
        )
    elif tp > 1 and engine.split == "tensor":
        strategy = f"tensor parallel {tp}" + (
            f" × data parallel {replicas}" if replicas > 1 else ""
        )
    else:
        strategy = f"data parallel {replicas}" if replicas > 1 else "1 GPU"
    # the demand within the share of the capacity a service is planned to run at, that
    # capacity at the slow end of its range where it rests on an unmeasured factor (the
    # inherited band's, as the engine choice holds it: engine_choice.layout_lows)
    held_rps = served_rps * held_share(provenance, best.binding)  # its slow end where unmeasured
    meets = best.unmet is None and (
        demand is None or demand <= held_rps * TARGET_UTILIZATION * (1 + 1e-9)
    )
    time_s = component.hours * 3600.0 if component.hours is not None else None
    drained: tuple[Note, ...] = ()
    if time_s is None and component.tokens is not None and rate > 0:
        time_s = component.tokens / rate
        if demand is None and targets.tpot_s is None and targets.ttft_s is None:  # a batch
            from whichgpu.estimate.burst import batch_drain

            drain_s, drained = batch_drain(component.label, arch, job, gpu, engine, best,
                                           component.tokens, rate, component.lengths,
                                           component.batch)  # fmt: skip
            time_s += drain_s
    unmeasured: tuple[Note, ...] = ()
    if extrapolated(provenance):
        unmeasured = (note("warn_prior_efficiency", component=component.label, gpu=gpu.name,
                           provenance=provenance),)  # fmt: skip
    # a replica's pool (separate prefill and decode workers size theirs apart)
    kv_notes = () if best.disaggregated else tight_kv_notes(component.label, arch, gpu, choice)
    tight = kv_notes
    if component.layout == "disaggregated" and best.disaggregated is None:
        tight = (note("warn_no_split", component=component.label), *tight)
    near: tuple[Note, ...] = ()
    if best.unmet is None and demand and not meets and held_rps > 0 and demand <= served_rps:
        # it serves the demand, past the share of its capacity a service is planned at:
        # what estimate, which sizes nothing, must say (recommend does not pick it; a demand
        # past the capacity is estimate's replicas note); at the slow end the plan holds
        slow = {"point": round(served_rps, 2)} if held_rps < served_rps else {}
        near = (note("warn_near_capacity" + ("_slow" if slow else ""), component=component.label,
                     demand=round(demand, 2), capacity=round(held_rps, 2),
                     share=demand / held_rps, target=TARGET_UTILIZATION, **slow),)  # fmt: skip
    notes: list[Note] = [*unmeasured, *near, *tight]
    from whichgpu.job.engine_times import timed
    from whichgpu.job.engines import REFERENCE_ENGINE

    if (
        engine.harness == REFERENCE_ENGINE
        and engine.id != REFERENCE_ENGINE
        and timed(engine.id) is None
    ):  # TensorRT-LLM's calibration, nothing fitted on the engine's own runs
        notes.append(
            note(
                "warn_engine_prior",
                component=component.label,
                engine=engine.name,
                harness=engine.harness,
            )
        )
    missed = best.unmet is not None  # no operating point meets a target: no rate to state
    from whichgpu.estimate.throughput import ThroughputEstimate

    detail = None if missed else ThroughputEstimate(
        gpu=gpu, count=hw.count, regime="llm-serve", harness=engine.harness, throughput=likely,
        bound=best.bound, mfu=None, time_s=time_s, ttft_s=best.operating.ttft_s,
        tokens_per_s_per_sequence=1 / best.operating.tpot_s if best.operating.tpot_s else None,
        efficiency=best.eta, provenance=provenance, serving=best,
        demand_rps=demand, memory_gib=needed, fits=True,
        notes=unmeasured + near + engine_notes(component.label, choice, asked)
        + kv_notes + drained,
    )  # fmt: skip
    return Run(
        component,
        True,
        needed,
        capacity_gib,
        strategy,
        None if missed else rate,
        None if missed else likely.low,
        None if missed else likely.high,
        "tokens/s",
        time_s,
        best.bound,
        provenance,
        meets_rate=meets,
        notes=tuple(notes),
        chosen=precision
        + checkpoint_note(component.label, arch, job, component.quant)
        + drained
        + (
            serving_notes(component, engine.name, best)
            + engine_notes(component.label, choice, asked)
            if best.unmet is None
            else ()
        ),
        job=replica_job,
        serving=best,
        estimate=detail,
    )


def with_front(run: Run, arch: ModelArch, gpu: GPU, count: int, tp: int | None = None) -> Run:
    """``run`` with the front its serving plan was chosen on (output tokens/s a GPU against a
    user's over the layouts of the same GPUs: :func:`~whichgpu.estimate.serving_front.
    serving_front`): what an answer that states one plan shows (estimate, recommend's pick);
    a search's candidates do not compute it."""
    from dataclasses import replace

    import msgspec

    from whichgpu.estimate.serving_front import serving_front
    from whichgpu.job.engine_releases import engine_profile

    plan = run.serving
    if plan is None or run.job is None or plan.unmet is not None:
        return run
    engine = engine_profile(plan.engine)
    front = serving_front(arch, evolve(run.job, attention_dp=False), gpu, count, engine,
                          plan.targets, tp, run.component.batch, run.component.layout)  # fmt: skip
    serving = replace(plan, front=front)
    estimate = run.estimate
    if estimate is not None and estimate.serving is not None:
        estimate = msgspec.structs.replace(estimate, serving=serving)
    return replace(run, serving=serving, estimate=estimate)


def _unheld(
    component: Component,
    hw: Hardware,
    arch: ModelArch,
    job: Job,
    capacity_gib: float,
    tp: int | None = None,
) -> Run:
    """A served model no replica on ``hw`` holds with room for a sequence, reported as the
    largest replica it allows: the ``tp`` the user fixed, else one instance's GPUs where the
    instances hold fewer than ``hw.count`` (a replica's tensor-parallel all-reduces and
    expert exchanges stay inside an instance: :func:`~whichgpu.estimate.serving_layouts.
    replica_reach`), with a blocker saying so, and naming the fewest GPUs one instance would
    need where an instance can be that large (a node's 8, a rack's NVLink domain) and ``hw``
    has them."""
    from whichgpu.estimate.parallel import gpu_counts
    from whichgpu.estimate.serving_layouts import replica_reach
    from whichgpu.job import Job as JobRecord

    strategy = f"{hw.count} GPU"
    if tp:  # the user's split is the replica, wherever its GPUs sit
        return Run(component, False, _split_gib(arch, job, tp), capacity_gib, strategy)
    reach = min(hw.count, replica_reach(job, hw.gpu))
    sold = replica_reach(evolve(job, gpus_per_node=JobRecord.gpus_per_node), hw.gpu)
    holds = next((n for n in gpu_counts(min(hw.count, sold))
                  if n > reach and _split_gib(arch, job, n) <= capacity_gib), None)  # fmt: skip
    blocker = None
    if reach < hw.count:  # the instances split what a replica could span
        blocker = Blocker("replica_instance", needed=float(reach), instance_gpus=holds)
    return Run(component, False, _split_gib(arch, job, reach), capacity_gib, strategy,
               blocker=blocker)  # fmt: skip


def _split_gib(arch: ModelArch, job: Job, count: int) -> float:
    """One sequence's memory of the whole model, GiB, over ``count`` GPUs: the least a
    served model's split needs of each (what it is reported as when no replica holds it)."""
    from whichgpu.estimate.memory import memory_of

    whole = memory_of(arch, evolve(job, tp=1, gpus=1, batch=1))
    return whole.total_bytes / BYTES_PER_GIB / count


def replica_memory(arch: ModelArch, choice: EngineChoice, gpu: GPU) -> tuple[Job, float]:
    """One replica of a served model as the search chose it: its job (the engine's split of
    its GPUs, the sequences in flight at the operating point, within the engine's most) and
    the memory each of its GPUs holds, GiB (weights, the KV cache those sequences fill, the
    engine's own buffers: :func:`~whichgpu.estimate.kv_pool.replica_bytes_per_gpu`); what
    estimate and recommend both show."""
    from whichgpu.estimate.kv_pool import replica_bytes_per_gpu

    job, engine, best = choice.job, choice.engine, choice.plan
    split = best.disaggregated
    if split is not None:  # a decode worker at its capacity; a prefill worker's weights
        decoding = max(1, math.ceil(split.decode_batch))
        replica_job = evolve(job, tp=split.decode_tp, gpus=split.decode_tp, batch=decoding)
        needed = max(
            replica_bytes_per_gpu(arch, job, gpu, split.decode_tp, engine, decoding),
            replica_bytes_per_gpu(arch, job, gpu, split.prefill_tp, engine, 1),
        )
        return replica_job, needed / BYTES_PER_GIB
    gpus = best.gpus_per_replica
    concurrency = max(1, math.ceil(best.operating.concurrency))
    replica_job = evolve(job, tp=gpus if engine.split == "tensor" else 1, gpus=gpus,
                         batch=min(concurrency, best.max_sequences))  # fmt: skip
    needed = replica_bytes_per_gpu(arch, job, gpu, gpus, engine, replica_job.batch)
    return replica_job, needed / BYTES_PER_GIB
