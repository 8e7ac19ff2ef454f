"""``plan(component, hardware, prepared) -> Run``: the one place a job meets hardware.

Fit (:mod:`whichgpu.estimate.memory`), the settings left open chosen as a skilled engineer
would (:mod:`whichgpu.plan.settings`), the speed with its likely range
(:mod:`whichgpu.estimate.throughput`, the serving planner, the image estimators), the time, what
bounds it and the notes; `recommend` ranks a loop of it over hardware × offers.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from whichgpu.catalog.records import GPU
from whichgpu.errors import Ref, WhichGPUError
from whichgpu.estimate.assumptions import TARGET_UTILIZATION, TIGHT_HEADROOM
from whichgpu.frozen import evolve
from whichgpu.inputs.requests import IMAGE_KINDS, Component
from whichgpu.job.recipes import timed_framework
from whichgpu.notes import Note, note
from whichgpu.plan.hardware import Hardware, slice_gpu
from whichgpu.plan.jobs import bridge_note, checkpoint_note, serves
from whichgpu.plan.run import Blocker, Run
from whichgpu.plan.serving_notes import serving_notes
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from whichgpu.estimate.engine_choice import EngineChoice
    from whichgpu.estimate.imaging import ImageEstimate, ImageTrainEstimate
    from whichgpu.job import Job, Network
    from whichgpu.models.arch import ModelArch
    from whichgpu.plan.settings import Layout


def _work(component: Component, prepared: tuple[ModelArch, Job] | None) -> float | None:
    """The job size in the numerator of the throughput's unit (samples, TFLOP, tokens,
    sequences, images)."""
    if component.kind == "render":
        return component.frames
    if component.kind == "fp64":
        return component.tflop
    if prepared is None:
        return None
    from whichgpu.estimate.throughput import job_size

    arch, job = prepared
    return job_size(arch, job, component.tokens, component.images, component.epochs)


def latency_margin(confidence: str) -> float:
    """How much slower than estimated a served model's latencies are held to be against a
    target: at ``likely`` confidence the slow end of the serving estimate's likely range (a
    decode step as long as the throughput's 10th percentile of held-out error implies:
    value over low, about 1.22), at ``point`` the estimate itself."""
    if confidence != "likely":
        return 1.0
    from whichgpu.estimate.throughput import likely_rate

    return 1.0 / likely_rate(1.0, "tokens/s", "llm-serve").low


def per_second(rate: float, unit: str) -> float:
    if unit.endswith("/h"):
        return rate / 3600.0
    return rate / 60.0 if unit.endswith("/min") else rate


def _timed(
    component: Component, rate: float, unit: str, prepared: tuple[ModelArch, Job] | None
) -> float | None:
    """Seconds the component takes: its hours of use, or its work over the rate."""
    if component.hours is not None:
        return component.hours * 3600.0
    work = _work(component, prepared)
    return None if work is None else work / per_second(rate, unit)


@lru_cache(maxsize=1024)
def _on_nodes(job: Job, node_gpus: int, network: Network, gbit: float | None) -> Job:
    """``job`` on instances of ``node_gpus`` GPUs joined by ``network`` of ``gbit`` an
    instance: one job for every GPU model sold in that shape, so that the layout search's
    and the estimators' caches of it serve them all."""
    return evolve(job, gpus_per_node=node_gpus, network=network, network_gbit=gbit)


def plan(
    component: Component,
    hw: Hardware,
    prepared: tuple[ModelArch, Job] | None,
    layout: Layout | None = None,
    margin: float = 1.0,
    bridge: bool = True,
) -> Run:
    """Fit, throughput and time of ``component`` on ``hw`` (per service), and, where NVLink
    bridges the user did not say they have would speed it (:func:`with_bridge_note`), a note
    saying by how much (``bridge``: False leaves that to the caller, as the recommender does
    for the options it does not pick, whose notes nobody reads). ``layout``: the tensor and
    pipeline degrees the user fixed (``estimate --tp/--pp``; a served model's replica split
    is its tensor degree), else searched. ``margin``: how much slower than estimated a
    served model's latencies are held to be against its targets (:func:`latency_margin`)."""
    run = _plan(component, hw, prepared, layout, margin)
    return with_bridge_note(run, hw, prepared, layout, margin) if bridge else run


def with_bridge_note(
    run: Run,
    hw: Hardware,
    prepared: tuple[ModelArch, Job] | None,
    layout: Layout | None = None,
    margin: float = 1.0,
) -> Run:
    """``run`` (:func:`plan`'s of its component on ``hw``) with ``note_pcie_link`` where NVLink
    bridges the user did not say they have would speed it (:func:`bridge_note`: the run
    again with them)."""
    from dataclasses import replace

    component = run.component
    if component.nvlink_bridge or hw.mig is not None or not run.fits:
        return run
    joined = None if prepared is None else (prepared[0], evolve(prepared[1], nvlink_bridge=True))

    # bridged, on the engine the search chose (the note is the link's gain, not an engine's)
    engine = component.engine or (run.serving.engine if run.serving is not None else None)

    def bridged() -> float:
        again = replace(component, nvlink_bridge=True, engine=engine)
        return _plan(again, hw, joined, layout, margin).throughput or 0.0

    linked = bridge_note(component.label, hw.gpu, hw.count, run.throughput or 0.0, bridged,
                         hw.node_gpus)  # fmt: skip
    return run if linked is None else replace(run, notes=(*run.notes, linked))


def _plan(
    component: Component,
    hw: Hardware,
    prepared: tuple[ModelArch, Job] | None,
    layout: Layout | None = None,
    margin: float = 1.0,
) -> Run:
    from whichgpu.estimate.model_free import estimate_model_free
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.estimate.throughput import estimate_throughput

    gpu = hw.gpu if hw.mig is None else slice_gpu(hw.gpu, hw.mig)
    if component.kind in IMAGE_KINDS:
        return image_component(component, hw, gpu)
    capacity_gib = usable_bytes(gpu) / BYTES_PER_GIB
    notes: list[Note] = []
    if prepared is not None and hw.node_gpus is not None:
        # several instances: rings between them cross the network the user names, else
        # the one their offers are sold with, else Ethernet (GPU clouds join separate
        # instances by their VPC unless they sell a fabric)
        arch, job = prepared
        network: Network = job.network
        gbit = job.network_gbit
        if component.network is None and component.network_gbit is None:
            link = hw.link
            network = "ethernet" if link is None or not link.gpudirect else "infiniband"
            gbit = None if link is None else link.gbit
        prepared = (arch, _on_nodes(job, hw.node_gpus, network, gbit))
    if prepared is None:
        needed = None
        fits = True
        strategy = f"{hw.count} GPU" if hw.count == 1 else f"{hw.count} GPUs"
        if component.kind == "render" and component.scene_gib is not None:
            from whichgpu.estimate.render_roofline import render_memory_gib

            needed = render_memory_gib(component.scene_gib)  # every GPU renders it whole
            if needed > capacity_gib:
                return Run(component, False, needed, capacity_gib, strategy)
        try:
            # a render in frames an hour (frames of the component's samples), as estimate
            # says it: Blender's samples a minute are a benchmark's unit, not the job's
            est = estimate_model_free(component.kind, gpu, hw.count, None,
                                      component.samples_per_frame)  # fmt: skip
        except WhichGPUError:
            return Run(component, fits, needed, capacity_gib, strategy, provenance="none")
    elif serves(component):
        return serve_component(component, hw, gpu, *prepared, tp=layout and layout[0],
                               margin=margin)  # fmt: skip
    else:
        arch, job = prepared
        from whichgpu.plan.settings import configure, needed_bytes

        scaled, strategy, chosen, searched = configure(component, arch, job, gpu, hw.count,
                                                       layout)  # fmt: skip
        if component.global_batch is not None and scaled.global_batch != component.global_batch:
            return Run(
                component, True, None, capacity_gib, strategy, job=scaled, global_batch_made=False
            )
        peak_bytes = needed_bytes(arch, scaled)
        needed = peak_bytes / BYTES_PER_GIB
        fits = peak_bytes <= usable_bytes(gpu)
        if not fits:
            return Run(component, fits, needed, capacity_gib, strategy)
        if needed > capacity_gib * (1 - TIGHT_HEADROOM):
            notes.append(
                note(
                    "warn_tight_memory",
                    component=component.label,
                    gpu=gpu.name,
                    needed=round(needed, 1),
                    capacity=round(capacity_gib, 1),
                )
            )
        try:
            est = searched or estimate_throughput(
                arch,
                scaled,
                gpu,
                hw.count,
                framework=timed_framework(component.framework, scaled.task),
            )
        except WhichGPUError:
            blocker = math_unit_blocker(gpu, scaled.math_precision)
            return Run(component, fits, needed, capacity_gib, strategy, provenance="none",
                       blocker=blocker)  # fmt: skip
    rate = est.throughput
    from whichgpu.estimate.efficiency_model import extrapolated

    if extrapolated(est.provenance):
        notes.append(
            note(
                "warn_prior_efficiency",
                component=component.label,
                gpu=gpu.name,
                provenance=est.provenance,
            )
        )
    if est.bound == "interconnect":
        notes.append(
            note("warn_interconnect_bound", component=component.label, gpu=gpu.name, count=hw.count)
        )
    meets = True
    if component.kind == "inference" and component.request_rate is not None:
        need = component.request_rate * max(component.generate, 1)
        meets = rate.value >= need
    time_s = _timed(component, rate.value, rate.unit, prepared)
    detail = None
    if prepared is not None:  # the estimate in full, as estimate shows it
        import msgspec

        detail = msgspec.structs.replace(est, time_s=time_s, job=est.job or scaled,
                                         memory_gib=needed, fits=fits)  # fmt: skip
    return Run(
        component,
        fits,
        needed,
        capacity_gib,
        strategy,
        rate.value,
        rate.low,
        rate.high,
        rate.unit,
        time_s,
        est.bound,
        est.provenance,
        meets,
        tuple(notes),
        chosen=()
        if prepared is None
        else (*checkpoint_note(component.label, prepared[0], scaled, component.quant), *chosen),
        job=None if prepared is None else scaled,
        estimate=detail,
    )


def image_component(component: Component, hw: Hardware, gpu: GPU) -> Run:
    """An image job on ``hw``: each GPU runs its own pipeline on a share of the images
    (generation), or a data-parallel copy (fine-tuning); what the user left open (images a
    call, CPU offload, VAE tiling; the training batch, checkpointing) set as a skilled user
    would for this GPU's memory (:mod:`whichgpu.estimate.imaging`), and said."""
    from whichgpu.estimate.imaging import image_settings
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.estimate.throughput import estimate_image_job
    from whichgpu.models.pipelines import find_pipeline

    assert component.model is not None  # make_component checked it
    pipeline = find_pipeline(component.model)
    capacity_gib = usable_bytes(gpu) / BYTES_PER_GIB
    strategy = f"{hw.count} GPU" if hw.count == 1 else f"data parallel {hw.count}"
    settings = image_settings(component, component.kind)
    images = None if component.images is None else component.images * component.epochs
    made: list[Note] = []
    try:
        detail = estimate_image_job(pipeline.name, gpu, component.kind, hw.count, images,
                                    **settings)  # fmt: skip
    except WhichGPUError:
        return Run(component, True, None, capacity_gib, strategy, provenance="none",
                   blocker=math_unit_blocker(gpu, "bf16-true"))  # fmt: skip
    est: ImageEstimate | ImageTrainEstimate
    if detail.image is not None:
        image = est = detail.image
        if image.chosen:
            made.append(note(
                "chosen_image", component=component.label, batch=image.job.batch,
                offload=image.job.offload, tiling="on" if image.job.vae_tiling else "off",
                seconds=round(image.seconds_per_image, 2),
                host_gib=round(image.memory.host_bytes / BYTES_PER_GIB, 1),
                batch_field=Ref(("batch",)), offload_field=Ref(("cpu_offload",)),
                tiling_field=Ref(("vae_tiling",)),
            ))  # fmt: skip
    else:
        assert detail.image_training is not None
        training = est = detail.image_training
        if training.chosen:
            made.append(note(
                "chosen_image_training", component=component.label,
                batch=training.job.batch,
                checkpointing="on" if training.job.checkpointing else "off",
                seconds=round(training.seconds_per_step, 2),
                batch_field=Ref(("batch",)), checkpointing_field=Ref(("checkpointing",)),
            ))  # fmt: skip
    needed = est.memory.total_gib
    if needed > capacity_gib:  # (the estimate kept: estimate says how it would run)
        return Run(component, False, needed, capacity_gib, strategy, estimate=detail)
    rate = detail.throughput
    notes: list[Note] = []
    if needed > capacity_gib * (1 - TIGHT_HEADROOM):
        notes.append(note("warn_tight_memory", component=component.label, gpu=gpu.name,
                          needed=round(needed, 1), capacity=round(capacity_gib, 1)))  # fmt: skip
    time_s = component.hours * 3600.0 if component.hours is not None else detail.time_s
    return Run(
        component, True, needed, capacity_gib, strategy, rate.value, rate.low, rate.high,
        "images/s", time_s, est.bound, est.provenance,
        notes=tuple(notes), chosen=tuple(made), estimate=detail,
    )  # fmt: skip


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
    held_rps = served_rps * held_share(provenance)  # its slow end where unmeasured
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


def math_unit_blocker(gpu: GPU, precision: str) -> Blocker | None:
    """The tensor-core format ``precision`` needs and ``gpu`` lacks, as a blocker."""
    from whichgpu.estimate.perf import missing_math_unit

    missing = missing_math_unit(gpu, precision)
    return None if missing is None else Blocker("math_unit", unit=missing)


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
