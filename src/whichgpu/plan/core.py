"""``plan(component, hardware, prepared) -> Run``: the one place a job meets hardware.

Fit (:mod:`whichgpu.estimate.memory`), the settings left open chosen as a skilled engineer
would (:mod:`whichgpu.plan.settings`), the speed with its likely range
(:mod:`whichgpu.estimate.throughput`, the serving planner, the image estimators), the time, what
bounds it and the notes; `recommend` ranks a loop of it over hardware × offers.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from whichgpu.catalog.records import GPU
from whichgpu.errors import Ref, WhichGPUError
from whichgpu.estimate.assumptions import TIGHT_HEADROOM
from whichgpu.frozen import evolve
from whichgpu.inputs.requests import IMAGE_KINDS, Component
from whichgpu.job.recipes import timed_framework
from whichgpu.notes import Note, note
from whichgpu.plan.hardware import Hardware, slice_gpu
from whichgpu.plan.jobs import bridge_note, checkpoint_note, serves
from whichgpu.plan.run import Blocker, Run
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
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
        from whichgpu.plan.serving import serve_component

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


def math_unit_blocker(gpu: GPU, precision: str) -> Blocker | None:
    """The tensor-core format ``precision`` needs and ``gpu`` lacks, as a blocker."""
    from whichgpu.estimate.perf import missing_math_unit

    missing = missing_math_unit(gpu, precision)
    return None if missing is None else Blocker("math_unit", unit=missing)
