"""Candidates: every GPU × count × (whole card or MIG slice) of the catalog, checked for
fit (:mod:`whichgpu.estimate.memory`) and capabilities, timed (:mod:`whichgpu.throughput`)
and priced per market (:mod:`whichgpu.estimate.cost`). Pure functions over plain data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from whichgpu.catalog.prices import rents_as
from whichgpu.catalog.records import GPU
from whichgpu.errors import Ref, WhichGPUError
from whichgpu.estimate.assumptions import TIGHT_HEADROOM
from whichgpu.estimate.parallel import GPUS_PER_NODE, gpu_counts
from whichgpu.frozen import evolve
from whichgpu.notes import Note, note
from whichgpu.recommender.jobs import bridge_note, serves
from whichgpu.requests import IMAGE_KINDS, Component, Constraints
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from whichgpu.catalog.records import MigProfile
    from whichgpu.catalog.store import Catalog
    from whichgpu.estimate.serving_types import ServingPlan
    from whichgpu.imaging import ImageEstimate, ImageTrainEstimate
    from whichgpu.job import Checkpointing, Job, Network
    from whichgpu.models.arch import ModelArch


@dataclass(frozen=True)
class Hardware:
    """What a candidate runs on: ``count`` whole GPUs per service, or one MIG slice per
    service; ``gpus`` is the physical cards paid for."""

    gpu: GPU
    count: int
    services: int
    mig: MigProfile | None = None
    #: GPUs in each rented instance, where the candidate is rented as several (``count``
    #: over instances of ``per_node``: rings that leave one cross the network); None for
    #: one node (a single instance, up to 8 GPUs a node beyond, or cards bought)
    per_node: int | None = None

    @property
    def node_gpus(self) -> int | None:
        """GPUs a node where the candidate spans instances smaller than a full node (the
        estimate then differs from one node's); None otherwise."""
        if self.per_node is None or self.per_node >= min(self.count, GPUS_PER_NODE):
            return None
        return self.per_node

    @property
    def instances(self) -> int:
        """Instances rented: the GPUs over the instance shape (one without a shape)."""
        return 1 if self.per_node is None else math.ceil(self.gpus / self.per_node)

    @property
    def gpus(self) -> int:
        if self.mig is None:
            return self.count * self.services
        return math.ceil(self.services / self.mig.max_instances)

    @property
    def mig_profile(self) -> str | None:
        return None if self.mig is None else self.mig.profile


@dataclass(frozen=True)
class ComponentRun:
    """One component on one candidate's hardware."""

    component: Component
    fits: bool
    needed_gib: float | None
    capacity_gib: float
    strategy: str
    throughput: float | None = None
    throughput_low: float | None = None
    throughput_high: float | None = None
    unit: str | None = None
    time_s: float | None = None
    bound: str | None = None
    provenance: str = ""
    meets_rate: bool = True
    notes: tuple[Note, ...] = ()
    #: What was chosen for settings the user left open (micro-batch, checkpointing)
    chosen: tuple[Note, ...] = ()
    #: The tensor-core format the job's precision needs and the GPU lacks
    missing_unit: str | None = None
    #: The job as configured for this hardware (layout, micro-batch, accumulation…)
    job: Job | None = None
    #: A served model's plan on this hardware: engine, replicas × GPUs, its operating point
    serving: ServingPlan | None = None
    #: False where no layout on this hardware makes the user's global batch (micro-batch ×
    #: data-parallel GPUs × accumulation)
    global_batch_made: bool = True

    @property
    def batch(self) -> int | None:
        return None if self.job is None else self.job.batch

    @property
    def checkpointing(self) -> Checkpointing | None:
        return None if self.job is None else self.job.checkpointing


def slice_gpu(gpu: GPU, profile: MigProfile) -> GPU:
    """A MIG slice as a smaller GPU: its share of the SMs (compute slices of 7) for every
    rate, its share of the memory slices (of 8) for bandwidth, its own memory (NVIDIA MIG
    user guide: each instance has dedicated SMs, L2 slices and memory controllers)."""
    import msgspec

    c = profile.compute_fraction
    m = profile.memory_fraction

    def scaled(value: float | None) -> float | None:
        return None if value is None else value * c

    return msgspec.structs.replace(
        gpu,
        memory_gib=profile.memory_gib,  # a slice's name counts 10^9-byte GB: in GiB here
        memory_bandwidth_gb_per_s=gpu.memory_bandwidth_gb_per_s * m,
        fp32_tflops=gpu.fp32_tflops * c,
        fp64_tflops=gpu.fp64_tflops * c,
        fp64_tensor_tflops=scaled(gpu.fp64_tensor_tflops),
        tf32_tensor_dense_tflops=scaled(gpu.tf32_tensor_dense_tflops),
        fp16_tensor_dense_tflops=gpu.fp16_tensor_dense_tflops * c,
        fp16_fp16acc_tensor_dense_tflops=gpu.fp16_fp16acc_tensor_dense_tflops * c,
        bf16_tensor_dense_tflops=scaled(gpu.bf16_tensor_dense_tflops),
        fp8_tensor_dense_tflops=scaled(gpu.fp8_tensor_dense_tflops),
        int8_tensor_dense_tops=scaled(gpu.int8_tensor_dense_tops),
        vendor_fp16_tensor_tflops=gpu.vendor_fp16_tensor_tflops * c,
        nvlink_gb_per_s=0.0,
        mig_max_instances=0,
    )


def has_capability(gpu: GPU, capability: str) -> bool:
    """``gpu`` has ``capability`` (:data:`whichgpu.catalog.filters.FEATURES`, the one list
    ``gpus --feature`` and ``--requires`` share); a KeyError for an unknown one."""
    from whichgpu.catalog.filters import FEATURES

    return FEATURES[capability](gpu)


def _work(component: Component, prepared: tuple[ModelArch, Job] | None) -> float | None:
    """The job size in the numerator of the throughput's unit (samples, TFLOP, tokens,
    sequences, images)."""
    if component.kind == "render":
        return None if component.frames is None else component.frames * component.samples_per_frame
    if component.kind == "fp64":
        return component.tflop
    if prepared is None:
        return None
    from whichgpu.throughput import job_size

    arch, job = prepared
    return job_size(arch, job, component.tokens, component.images, component.epochs)


def per_second(rate: float, unit: str) -> float:
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
def _on_nodes(job: Job, node_gpus: int, network: Network) -> Job:
    """``job`` on instances of ``node_gpus`` GPUs joined by ``network``: one job for every
    GPU model sold in that shape, so that the layout search's and the estimators' caches of
    it serve them all."""
    return evolve(job, gpus_per_node=node_gpus, network=network)


def run_component(
    component: Component, hw: Hardware, prepared: tuple[ModelArch, Job] | None
) -> ComponentRun:
    """Fit, throughput and time of ``component`` on ``hw`` (per service), and, where NVLink
    bridges the user did not say they have would speed it (:func:`bridge_note`: the run
    again with them), a note saying by how much."""
    from dataclasses import replace

    run = _run_component(component, hw, prepared)
    if component.nvlink_bridge or hw.mig is not None or not run.fits:
        return run
    joined = None if prepared is None else (prepared[0], evolve(prepared[1], nvlink_bridge=True))

    # bridged, on the engine the search chose (the note is the link's gain, not an engine's)
    engine = component.engine or (run.serving.engine if run.serving is not None else None)

    def bridged() -> float:
        again = replace(component, nvlink_bridge=True, engine=engine)
        return _run_component(again, hw, joined).throughput or 0.0

    linked = bridge_note(component.label, hw.gpu, hw.count, run.throughput or 0.0, bridged,
                         hw.node_gpus)  # fmt: skip
    return run if linked is None else replace(run, notes=(*run.notes, linked))


def _run_component(
    component: Component, hw: Hardware, prepared: tuple[ModelArch, Job] | None
) -> ComponentRun:
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.throughput import estimate_rate, estimate_throughput

    gpu = hw.gpu if hw.mig is None else slice_gpu(hw.gpu, hw.mig)
    if component.kind in IMAGE_KINDS:
        return image_component(component, hw, gpu)
    capacity_gib = usable_bytes(gpu) / BYTES_PER_GIB
    notes: list[Note] = []
    if prepared is not None and hw.node_gpus is not None:
        # instances smaller than a node: rings between them cross the network, Ethernet
        # unless the user names it (GPU clouds join small instances by their VPC)
        arch, job = prepared
        network: Network = "ethernet" if component.network is None else job.network
        prepared = (arch, _on_nodes(job, hw.node_gpus, network))
    if prepared is None:
        needed = None
        fits = True
        strategy = f"{hw.count} GPU" if hw.count == 1 else f"{hw.count} GPUs"
        try:
            est = estimate_rate(component.kind, gpu, hw.count)
        except WhichGPUError:
            return ComponentRun(component, fits, needed, capacity_gib, strategy, provenance="none")
    elif serves(component):
        return serve_component(component, hw, gpu, *prepared)
    else:
        arch, job = prepared
        from whichgpu.recommender.autoconfig import configure, needed_bytes

        scaled, strategy, chosen, searched = configure(component, arch, job, gpu, hw.count)
        if component.global_batch is not None and scaled.global_batch != component.global_batch:
            return ComponentRun(
                component, True, None, capacity_gib, strategy, job=scaled, global_batch_made=False
            )
        peak_bytes = needed_bytes(arch, scaled)
        needed = peak_bytes / BYTES_PER_GIB
        fits = peak_bytes <= usable_bytes(gpu)
        if not fits:
            return ComponentRun(component, fits, needed, capacity_gib, strategy)
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
                arch, scaled, gpu, hw.count, framework=component.framework
            )
        except WhichGPUError:
            from whichgpu.estimate.perf import missing_math_unit

            missing = missing_math_unit(gpu, scaled.math_precision)
            return ComponentRun(
                component,
                fits,
                needed,
                capacity_gib,
                strategy,
                provenance="none",
                missing_unit=missing,
            )
    rate = est.throughput
    if "prior" in est.provenance or "not fitted" in est.provenance:
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
    return ComponentRun(
        component,
        fits,
        needed,
        capacity_gib,
        strategy,
        rate.value,
        rate.low,
        rate.high,
        rate.unit,
        _timed(component, rate.value, rate.unit, prepared),
        est.bound,
        est.provenance,
        meets,
        tuple(notes),
        chosen=() if prepared is None else tuple(chosen),
        job=None if prepared is None else scaled,
    )


def image_component(component: Component, hw: Hardware, gpu: GPU) -> ComponentRun:
    """An image job on ``hw``: each GPU runs its own pipeline on a share of the images
    (generation), or a data-parallel copy (fine-tuning); what the user left open (images a
    call, CPU offload, VAE tiling; the training batch, checkpointing) set as a skilled user
    would for this GPU's memory (:mod:`whichgpu.imaging`), and said."""
    from whichgpu.estimate.efficiency_model import load_efficiency
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.imaging import image_settings, plan_image, plan_image_training
    from whichgpu.models.pipelines import find_pipeline

    assert component.model is not None  # make_component checked it
    pipeline = find_pipeline(component.model)
    capacity_gib = usable_bytes(gpu) / BYTES_PER_GIB
    strategy = f"{hw.count} GPU" if hw.count == 1 else f"data parallel {hw.count}"
    settings = image_settings(component, component.kind)
    made: list[Note] = []
    try:
        if component.kind == "image":
            image = plan_image(pipeline, gpu, hw.count, settings)
            est: ImageEstimate | ImageTrainEstimate = image
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
            method = "full" if component.kind == "image-finetune" else "lora"
            training = plan_image_training(pipeline, gpu, hw.count, method, settings)
            est = training
            if training.chosen:
                made.append(note(
                    "chosen_image_training", component=component.label,
                    batch=training.job.batch,
                    checkpointing="on" if training.job.checkpointing else "off",
                    seconds=round(training.seconds_per_step, 2),
                    batch_field=Ref(("batch",)), checkpointing_field=Ref(("checkpointing",)),
                ))  # fmt: skip
    except WhichGPUError:
        from whichgpu.estimate.perf import missing_math_unit

        return ComponentRun(component, True, None, capacity_gib, strategy, provenance="none",
                            missing_unit=missing_math_unit(gpu, "bf16-true"))  # fmt: skip
    needed = est.memory.total_gib
    if needed > capacity_gib:
        return ComponentRun(component, False, needed, capacity_gib, strategy)
    _model, spread = load_efficiency()
    low_err, high_err = spread.get("diffusion-infer", spread["*"])
    rate = est.images_per_s
    notes: list[Note] = []
    if needed > capacity_gib * (1 - TIGHT_HEADROOM):
        notes.append(note("warn_tight_memory", component=component.label, gpu=gpu.name,
                          needed=round(needed, 1), capacity=round(capacity_gib, 1)))  # fmt: skip
    images = None if component.images is None else component.images * component.epochs
    time_s = component.hours * 3600.0 if component.hours is not None else (
        None if images is None else images / rate)  # fmt: skip
    return ComponentRun(
        component, True, needed, capacity_gib, strategy, rate, rate / (1 + high_err),
        rate / (1 + low_err), "images/s", time_s, est.bound, est.provenance,
        notes=tuple(notes), chosen=tuple(made),
    )  # fmt: skip


def serve_component(
    component: Component, hw: Hardware, gpu: GPU, arch: ModelArch, job: Job
) -> ComponentRun:
    """``component`` served on ``hw``: its ``count`` GPUs split into replicas of 1, 2, 4 or 8
    (tensor parallelism inside each where the engine has it: a degree that splits the heads),
    the split that serves the most kept; each replica as
    :func:`~whichgpu.estimate.serving_plan.replica_plan` plans it."""
    from whichgpu.estimate.engine_choice import (
        choose_engine,
        engine_notes,
        engines_for,
        serving_provenance,
        tight_kv_notes,
    )
    from whichgpu.estimate.kv_pool import replica_bytes_per_gpu
    from whichgpu.estimate.memory import memory_of
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.estimate.serving_plan import PERCENTILES, Targets
    from whichgpu.recommender.autoconfig import fp16_where_needed

    precision: tuple[Note, ...] = ()
    if component.precision is None:  # BF16 on a GPU without it: FP16, said
        job, precision = fp16_where_needed(component.label, job, gpu)
    engines, named = engines_for(component.engine, gpu, job)
    targets = Targets(component.ttft, component.tpot, PERCENTILES[component.percentile])
    capacity_gib = usable_bytes(gpu) / BYTES_PER_GIB
    if (gap := named.gap(gpu, job.quant)) is not None:
        missing = {"CUDA": "CUDA", "engine": f"engine SM {gap[1]:.1f}"}.get(
            gap[0], f"SM {gap[1]:.1f}"
        )
        return ComponentRun(component, True, None, capacity_gib, f"{hw.count} GPU",
                            provenance="none", missing_unit=missing)  # fmt: skip
    choice = choose_engine(arch, job, gpu, hw.count, engines, targets, component.request_rate,
                           component.batch)  # fmt: skip
    if choice is None:
        whole = memory_of(arch, evolve(job, tp=1, gpus=1, batch=1))
        needed = whole.total_bytes / BYTES_PER_GIB / hw.count
        return ComponentRun(component, False, needed, capacity_gib, f"{hw.count} GPU")
    asked, job, engine, best = job, choice.job, choice.engine, choice.plan
    replica_job = evolve(job, tp=best.gpus_per_replica if engine.split == "tensor" else 1,
                          gpus=best.gpus_per_replica)  # fmt: skip
    demand = component.request_rate
    served_rps = best.replicas * best.capacity.rate_rps
    concurrency = max(1, math.ceil(best.operating.concurrency))
    replica_job = evolve(replica_job, batch=min(concurrency, best.max_sequences))
    needed = (
        replica_bytes_per_gpu(arch, job, gpu, best.gpus_per_replica, engine, replica_job.batch)
        / BYTES_PER_GIB
    )
    out = max(job.generate, 1)
    rate = served_rps * out
    tp, replicas = best.gpus_per_replica, best.replicas
    if tp > 1 and engine.split == "tensor":
        strategy = f"tensor parallel {tp}" + (
            f" × data parallel {replicas}" if replicas > 1 else ""
        )
    else:
        strategy = f"data parallel {replicas}" if replicas > 1 else "1 GPU"
    meets = best.unmet is None and (demand is None or served_rps >= demand * (1 - 1e-9))
    time_s = component.hours * 3600.0 if component.hours is not None else None
    if time_s is None and component.tokens is not None and rate > 0:
        time_s = component.tokens / rate
    notes: list[Note] = list(tight_kv_notes(component.label, arch, gpu, choice))
    from whichgpu.engines import REFERENCE_ENGINE, load_sequence_times

    if (
        engine.harness == REFERENCE_ENGINE
        and engine.id != REFERENCE_ENGINE
        and engine.id not in load_sequence_times()
    ):  # TensorRT-LLM's calibration, nothing fitted on the engine's own runs
        notes.append(
            note(
                "warn_engine_prior",
                component=component.label,
                engine=engine.name,
                harness=engine.harness,
            )
        )
    return ComponentRun(
        component,
        True,
        needed,
        capacity_gib,
        strategy,
        rate,
        rate,
        rate,
        "tokens/s",
        time_s,
        best.bound,
        serving_provenance(engine),
        meets_rate=meets,
        notes=tuple(notes),
        chosen=precision
        + (
            serving_notes(component, engine.name, best)
            + engine_notes(component.label, choice, asked)
            if best.unmet is None
            else ()
        ),
        job=replica_job,
        serving=best,
    )


def serving_notes(component: Component, engine: str, plan: ServingPlan) -> tuple[Note, ...]:
    """What the planner chose: the engine, replicas × GPUs, sequences in flight, and the
    latencies at the operating point; and why this split of the GPUs (the next best)."""
    notes = [serving_note(component, engine, plan)]
    if plan.alternatives:
        gpus, replicas, rate = plan.alternatives[0]
        notes.append(
            note(
                "chosen_split",
                component=component.label,
                replicas=plan.replicas,
                gpus=plan.gpus_per_replica,
                rate=round(plan.replicas * plan.capacity.rate_rps, 2),
                other_replicas=replicas,
                other_gpus=gpus,
                other_rate=round(rate, 2),
            )
        )
    return tuple(notes)


def serving_note(component: Component, engine: str, plan: ServingPlan) -> Note:
    """The engine, replicas × GPUs, sequences in flight, and the latencies at the operating
    point."""
    point = plan.operating
    return note(
        "chosen_serving",
        component=component.label,
        engine=engine,
        replicas=plan.replicas,
        gpus=plan.gpus_per_replica,
        rate=round(point.rate_rps, 2),
        concurrency=max(1, math.ceil(point.concurrency)),
        ttft_ms=round(point.ttft_s * 1e3),
        tpot_ms=round(point.tpot_s * 1e3, 1),
        percentile=component.percentile,
        binding=plan.binding,
    )


def instance_shapes(catalog: Catalog, gpu: GPU, gpus: int, markets: tuple[str, ...]) -> list[int]:
    """GPUs per instance of the offers that rent ``gpus`` of ``gpu`` whole: one instance of
    ``gpus``, or several of a shape that divides it, joined by a network (never a slice of
    a bigger box: nobody rents one GPU of an 8-GPU instance). Marketplace hosts are separate
    machines: only one of them serves a candidate."""
    return sorted(
        {
            shape
            for price in catalog.prices_for(gpu.id, markets)  # type: ignore[arg-type]
            if (shape := rents_as(price, gpus)) is not None
        },
        reverse=True,
    )


def _rented(catalog: Catalog, hw: Hardware, constraints: Constraints) -> list[Hardware]:
    """``hw`` once per instance shape its GPUs can be rented as (unchanged when bought, or
    when no offer rents that many: the option is then unpriced, and says why)."""
    if constraints.mode == "buy":
        return [hw]
    shapes = instance_shapes(catalog, hw.gpu, hw.gpus, constraints.markets)
    return [evolve(hw, per_node=k) for k in shapes] or [hw]


def hardware_for(
    catalog: Catalog, gpu: GPU, components: tuple[Component, ...], constraints: Constraints
) -> tuple[Hardware, ...]:
    """Whole-card counts 1, 2, 4, 8… up to ``max_gpus`` (per service × services), each once
    per instance shape it can be rented as, and for workloads that only serve models, one
    MIG slice per service of every profile: what the catalog sells, the same for every job
    that asks with these constraints, so listed once per catalog (:meth:`Catalog.derived`)."""
    services = max(c.services for c in components)
    serving_only = all(c.kind == "inference" for c in components)
    # what max_gpus decides: the counts, gpu_counts(max_gpus // services), and which MIG
    # plans fit under it (a plan takes at most one GPU a service)
    counts = len(gpu_counts(constraints.max_gpus // services))
    key = ("hardware_for", gpu.id, services, serving_only, constraints.mode,
           tuple(constraints.markets), counts, min(constraints.max_gpus, services))  # fmt: skip
    return catalog.derived(
        key, lambda: tuple(_hardware(catalog, gpu, services, serving_only, constraints))
    )


def _hardware(
    catalog: Catalog, gpu: GPU, services: int, serving_only: bool, constraints: Constraints
) -> list[Hardware]:
    whole = [
        Hardware(gpu, count, services) for count in gpu_counts(constraints.max_gpus // services)
    ]
    out = [rented for hw in whole for rented in _rented(catalog, hw, constraints)]
    if constraints.mode != "buy" and catalog.prices_for(gpu.id, constraints.markets):  # type: ignore[arg-type]
        # a count no offer rents is left out (it cannot be had), unless none can: then the
        # smallest stays, to say how the GPU is sold
        shaped = [hw for hw in out if hw.per_node is not None]
        out = shaped or out[:1]
    if gpu.has_mig and serving_only:
        profiles = getattr(catalog, "mig_profiles", None)
        for profile in profiles(gpu.id) if profiles else ():
            if profile.profile.endswith(("+me", "+me.all", "+gfx", "-me")):
                continue  # media extensions add decoders, not capacity
            hw = Hardware(gpu, 1, services, profile)
            if (
                profile.compute_slices < profile.gpu_compute_slices
                and hw.gpus <= constraints.max_gpus
            ):
                out.extend(_rented(catalog, hw, constraints))
    return out
