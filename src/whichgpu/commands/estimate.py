"""``whichgpu estimate`` as a library call: a request (the CLI's flags, the API's JSON body)
to its estimate, training, inference, a served model or model-free work. The CLI, the HTTP
API and the web app share it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from whichgpu.errors import InvalidInput, Ref
from whichgpu.estimate.engine_choice import (
    check_serving,
    engines_for,
)
from whichgpu.estimate.model_free import estimate_model_free
from whichgpu.estimate.parallel import gpu_counts, tensor_parallel_degree
from whichgpu.estimate.serving_plan import PERCENTILES, Targets
from whichgpu.estimate.throughput import (
    ThroughputEstimate,
    check_runnable,
    estimate_throughput,
    job_size,
)
from whichgpu.inputs.requests import IMAGE_KINDS
from whichgpu.job import Job, default_prompt

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.inputs.requests import Component, EstimateRequest
    from whichgpu.models.arch import ModelArch
    from whichgpu.notes import Note
    from whichgpu.plan import Hardware


def estimate_job(gpu: GPU, arch: ModelArch | None, request: EstimateRequest) -> ThroughputEstimate:
    """``whichgpu estimate`` (the CLI, the HTTP API and the web share it): a model's job
    (inference prompts default to ``seq`` tokens), or ``render``/``fp64`` work without a
    model, and where NVLink bridges the user did not say they have would speed it (the job
    again with them), a note saying by how much. The request's fields are already checked
    (:mod:`whichgpu.inputs`)."""
    import msgspec

    from whichgpu.job.length_presets import apply_lengths, lengths_note
    from whichgpu.plan.jobs import bridge_note

    served = request.task == "inference"  # (other kinds are told they take no lengths)
    if served and request.lengths is not None:  # a dataset's means set the lengths
        prompt, generate = apply_lengths(request.lengths, request.prompt, request.generate)
        request = replace(request, prompt=prompt, generate=generate)
    result = _estimate_job(gpu, arch, request)
    if served and request.lengths is not None:
        label = arch.name if arch is not None else (request.model or request.task)
        said = lengths_note(label, request.lengths)
        result = msgspec.structs.replace(result, notes=(said, *result.notes))
    if request.nvlink_bridge or _planned(result):  # plan said what bridges give
        return result
    # bridged, the same engine the search chose (the note is the link's gain, not an engine's)
    engine = request.engine or (result.serving.engine if result.serving is not None else None)
    bridged = replace(request, nvlink_bridge=True, engine=engine)
    label = arch.name if arch is not None else (request.model or request.task)
    linked = bridge_note(label, gpu, request.count, result.throughput.value,
                         lambda: _estimate_job(gpu, arch, bridged).throughput.value)  # fmt: skip
    if linked is None:
        return result
    return msgspec.structs.replace(result, notes=(*result.notes, linked))


def _planned(result: ThroughputEstimate) -> bool:
    """Whether ``result`` is :func:`whichgpu.plan.plan`'s (a served model, a training job
    that runs here), which has said what NVLink bridges would give."""
    trains = result.job is not None and result.job.training
    return result.serving is not None or (trains and bool(result.fits))


def _estimate_job(gpu: GPU, arch: ModelArch | None, request: EstimateRequest) -> ThroughputEstimate:
    from whichgpu.inputs.workload_files import check_applies

    r = request
    image_fields = ("resolution", "steps", "cpu_offload", "vae_tiling", "cache_latents")
    # a served model's and LoRA's settings, refused for the kinds of work that read none
    served_lora = ("engine", "request_rate", "ttft", "tpot", "lora_rank", "lora_targets",
                   "lengths", "speculative", "draft_tokens", "acceptance", "layout")  # fmt: skip
    given = {
        k: getattr(r, k)
        for k in (
            "tokens",
            "images",
            "epochs",
            "frames",
            "scene_gib",
            "tflop",
            *image_fields,
            *served_lora,
        )
    }
    kv = None if r.kv_dtype == "auto" else r.kv_dtype
    check_applies(r.task, {**given, "prompt": r.prompt or None, "kv_dtype": kv,
                           "shared_prefix": r.shared_prefix or None,
                           "packing": r.packing,
                           "memory_format": r.memory_format})  # fmt: skip
    epochs = r.epochs or 1.0  # one pass over a size given without --epochs
    if r.task in IMAGE_KINDS:
        from whichgpu.estimate.throughput import estimate_image_job
        from whichgpu.inputs.workload_files import check_image_model

        check_image_model(r.model, r.params)
        assert r.model is not None
        images = None if r.images is None else r.images * epochs
        from whichgpu.estimate.imaging import image_settings
        from whichgpu.plan import plan

        run = plan(_component(None, r), _hardware(gpu, r), None)
        if run.estimate is not None:
            return run.estimate
        # a format this GPU cannot run: the estimator's own error names what would
        settings = image_settings(r, r.task)
        return estimate_image_job(r.model, gpu, r.task, r.count, images, **settings)
    if not r.uses_model:
        if r.scene_gib is not None:  # the scene in each GPU's memory (plan's verdict)
            from whichgpu.plan import plan

            run = plan(_component(None, r), _hardware(gpu, r), None)
            if not run.fits:
                raise InvalidInput("render_scene_no_fit", field=("scene_gib",), gpu=gpu.name,
                                   needed=round(run.needed_gib or 0.0, 1),
                                   capacity=round(run.capacity_gib, 1))  # fmt: skip
        return estimate_model_free(r.task, gpu, r.count, r.frames, r.samples_per_frame, r.tflop)
    if arch is None:
        raise InvalidInput(
            "estimate_needs_model", field=("model",), model=Ref(("model",)), params=Ref(("params",))
        )
    training = r.task != "inference"
    one_copy = not training and not r.serves(arch.kind)  # the planner sizes replicas
    if one_copy and r.count > 1 and tensor_parallel_degree(arch, r.count) != r.count:
        valid = [n for n in gpu_counts(64) if tensor_parallel_degree(arch, n) == n]
        raise InvalidInput(
            "count_splits_heads",
            field=("count",),
            count=r.count,
            heads=arch.n_heads,
            kv_heads=arch.n_kv_heads,
            valid=", ".join(str(n) for n in valid),
        )
    try:
        job = _estimate_job_of(arch, r, training)
    except InvalidInput as error:
        if error.field == ("gpus",):  # the request names its GPU count "count"
            error.field = ("count",)
        raise
    from whichgpu.inputs.job_input import check_asked

    check_asked(arch, job)
    if one_copy and r.tp not in (None, r.count):
        # without the serving planner, inference is one copy split over every GPU
        raise InvalidInput("inference_tp_count", field=("tp",), tp=r.tp, count=r.count,
                           replicas=r.count // (r.tp or 1), engine=Ref(("engine",)))  # fmt: skip
    from whichgpu.plan.jobs import checkpoint_note

    notes: list[Note] = list(checkpoint_note(arch.name, arch, job, r.quant))
    if r.precision is None:  # a default this GPU cannot run: its FP16 twin, said
        from whichgpu.plan.settings import fp16_where_needed

        job, said = fp16_where_needed(arch.name, job, gpu)
        notes += said
    work = job_size(arch, job, r.tokens, r.images, epochs)
    if job.speculative is not None and not r.serves(arch.kind):
        raise InvalidInput("speculative_not_served", field=("speculative",))
    if r.layout is not None and not r.serves(arch.kind):
        raise InvalidInput("layout_not_served", field=("layout",))
    if r.serves(arch.kind):
        import msgspec

        asked = any(v is not None for v in (r.engine, r.request_rate, r.ttft, r.tpot))
        try:
            served = estimate_service(arch, job, gpu, r)  # with what was chosen before (FP16)
        except InvalidInput as error:  # a batch of tokens no replica holds: how far it is
            if asked or error.code != "serving_no_fit":
                raise
        else:
            return msgspec.structs.replace(served, notes=(*notes, *served.notes))
    if training:
        planned = _planned_training(arch, job, gpu, r, notes)
        if planned is not None:
            return planned
        job, chosen = _configured(arch, job, gpu, r)
        notes += chosen
    from whichgpu.job.recipes import timed_framework

    timed = timed_framework(r.framework, job.task)  # a fine-tune: the recipe it runs as
    result = estimate_throughput(arch, job, gpu, r.count, work=work, framework=timed)
    held = result.job or job
    if not training and r.count > 1:
        notes += _slower_split(arch, job, gpu, result)
        # inference over several GPUs is one copy split tensor-parallel (the heads allow it:
        # checked above), as the throughput estimate has it
        held = replace(job, tp=r.count, gpus=r.count)
    return _with_memory(arch, held, gpu, result, notes)


def _hardware(gpu: GPU, r: EstimateRequest) -> Hardware:
    """``r.count`` × ``gpu``, in instances of ``r.gpus_per_instance`` where the user says
    they are several (rings between them then cross ``--network``, Ethernet by default)."""
    from whichgpu.plan import Hardware

    return Hardware(gpu, r.count, 1, per_node=r.gpus_per_instance)


def _component(arch: ModelArch | None, r: EstimateRequest) -> Component:
    """The request as the one component :func:`whichgpu.plan.plan` plans, named as estimate
    names the model in its notes (an image pipeline's are its own)."""
    from whichgpu.inputs.requests import Component

    return Component(
        kind=r.task, name="" if arch is None else arch.name, model=r.model, params=r.params,
        precision=r.precision, quant=r.quant, batch=r.batch, seq=r.seq, prompt=r.prompt,
        generate=r.generate, shared_prefix=r.shared_prefix, speculative=r.speculative,
        layout=r.layout, draft_tokens=r.draft_tokens, acceptance=r.acceptance,
        kv_dtype=r.kv_dtype, checkpointing=r.checkpointing, tokens=r.tokens, images=r.images,
        epochs=r.epochs or 1.0, frames=r.frames, samples_per_frame=r.samples_per_frame,
        scene_gib=r.scene_gib, tflop=r.tflop, resolution=r.resolution, steps=r.steps,
        cpu_offload=r.cpu_offload,
        vae_tiling=r.vae_tiling, cache_latents=r.cache_latents, request_rate=r.request_rate,
        engine=r.engine, ttft=r.ttft, tpot=r.tpot, percentile=r.percentile, arch=arch,
        lengths=r.lengths,
        **r.settings(),
    )  # fmt: skip


def _planned_training(
    arch: ModelArch, job: Job, gpu: GPU, r: EstimateRequest, notes: list[Note]
) -> ThroughputEstimate | None:
    """A training job where it runs on ``r.count`` × ``gpu``: :func:`whichgpu.plan.plan`'s
    estimate (the settings left open chosen, the layout ``--tp``/``--pp`` fix kept), with
    ``notes`` (what estimate said before it) first, then what plan chose and warns of.
    None where the job does not fit or makes no global batch there: estimate then still
    says how fast it would run, and that it does not fit."""
    import msgspec

    from whichgpu.plan import plan

    fixed = None if r.tp is None and r.pp is None and r.cp is None else (r.tp, r.pp, r.cp)
    run = plan(_component(arch, r), _hardware(gpu, r), (arch, job), fixed)
    if run.estimate is None or not run.fits:
        return None
    said = [n for n in notes if n not in run.chosen]
    return msgspec.structs.replace(run.estimate, notes=(*said, *run.chosen, *run.notes))


def _configured(arch: ModelArch, job: Job, gpu: GPU, r: EstimateRequest) -> tuple[Job, list[Note]]:
    """A training job's open settings chosen as ``recommend`` chooses them for the same GPU
    and count (:func:`whichgpu.plan.settings.configure`: the micro-batch, the
    accumulation to a global batch, recomputation, the layout unless ``--tp``/``--pp`` fix
    it), and the notes saying so: one job, one answer, whichever command asks."""
    from whichgpu.plan.settings import configure

    fixed = None if r.tp is None and r.pp is None and r.cp is None else (r.tp, r.pp, r.cp)
    configured = configure(_component(arch, r), arch, job, gpu, r.count, fixed)
    return configured.job, configured.chosen


def _slower_split(arch: ModelArch, job: Job, gpu: GPU, split: ThroughputEstimate) -> list[Note]:
    """A model split over several GPUs that runs slower than on one (a small model's
    all-reduces cost more than the split saves): said, with what to run instead."""
    from whichgpu.notes import note

    one = estimate_throughput(arch, replace(job, gpus=1, tp=1, pp=1), gpu, 1)
    if one.throughput.value <= split.throughput.value:
        return []
    return [note("warn_split_slower", count=split.count, rate=round(split.throughput.value, 1),
                 one=round(one.throughput.value, 1), unit=split.throughput.unit)]  # fmt: skip


def _with_memory(
    arch: ModelArch, job: Job, gpu: GPU, result: ThroughputEstimate, notes: list[Note]
) -> ThroughputEstimate:
    """The estimate with the job's memory per GPU, whether the GPU holds it, and, where it
    does not, the note that says so: a speed for a job that cannot run is not an answer
    to act on."""
    import msgspec

    from whichgpu.errors import Ref
    from whichgpu.estimate.memory import memory_of
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.notes import note
    from whichgpu.units import BYTES_PER_GIB

    needed = memory_of(arch, job).total_bytes
    capacity = usable_bytes(gpu)
    fits = needed <= capacity
    if not fits:
        notes = [*notes, note("estimate_no_fit", gib=round(needed / BYTES_PER_GIB, 1),
                              gpu=gpu.short_name, capacity=round(capacity / BYTES_PER_GIB, 1),
                              fit=Ref(("@fit",)))]  # fmt: skip
    return msgspec.structs.replace(
        result, memory_gib=needed / BYTES_PER_GIB, fits=fits, notes=tuple(notes)
    )


def _estimate_job_of(arch: ModelArch, r: EstimateRequest, training: bool) -> Job:
    """The request's job: the training settings it gives, its lengths, its layout."""
    from whichgpu.inputs.job_input import make_job
    from whichgpu.job import default_seq, generated_tokens
    from whichgpu.job.recipes import default_precision
    from whichgpu.plan.jobs import served_quant

    inference = r.task == "inference"
    generate = generated_tokens(arch, r.generate) if inference else 0
    return make_job(
        **(r.settings() if training else r.hardware()),
        task=r.task,
        precision=default_precision(r.precision, r.task, r.framework),
        quant=served_quant(arch, r.quant, r.precision, r.task),
        batch=r.batch,
        seq=default_seq(arch, r.seq),
        prompt=r.prompt or (default_prompt(arch, r.seq, generate) if inference else 0),
        generate=generate,
        checkpointing=None if r.checkpointing is None else ("full" if r.checkpointing else "none"),
        tp=r.tp,
        pp=r.pp,
        cp=r.cp,
        gpus=r.count,
        kv_dtype=r.kv_dtype if r.task == "inference" else "auto",
    ).with_prefix(r.shared_prefix).with_speculation(arch, r.speculative, r.draft_tokens,
                                                    r.acceptance)  # fmt: skip


def estimate_service(arch: ModelArch, job: Job, gpu: GPU, r: EstimateRequest) -> ThroughputEstimate:
    """``estimate`` of a served model: the serving planner's replicas on ``r.count`` GPUs,
    their capacity under the targets and the operating point at the request rate."""
    from whichgpu.job.engines import ENGINES

    job = replace(job, all_logits=False)
    check_serving(arch, job, r.engine, r.layout)
    if r.layout == "disaggregated" and r.count < 2:
        raise InvalidInput("layout_count", field=("count",), count=r.count)
    targets = Targets(r.ttft, r.tpot, PERCENTILES[r.percentile])
    _engines, engine = engines_for(r.engine, gpu, job)
    if (gap := engine.gap(gpu, job.quant)) is not None:
        able = [e.name for e in ENGINES.values() if e.gap(gpu, job.quant) is None
                and (job.quant is None or job.quant in e.formats)]  # fmt: skip
        if gap[0] == "CUDA":
            raise InvalidInput("engine_cuda_only", field=("engine",), engine=engine.name,
                               gpu=gpu.name, instead=", ".join(able) or "-")  # fmt: skip
        if gap[0] == "engine":  # older than the engine supports at all
            raise InvalidInput("engine_min_capability", field=("engine",), engine=engine.name,
                               needed=f"{gap[1]:.1f}", gpu=gpu.name, has=gpu.compute_capability,
                               instead=", ".join(able) or "-")  # fmt: skip
        raise InvalidInput("engine_capability", field=("quant",), engine=engine.name,
                           quant=job.quant, needed=f"{gap[1]:.1f}", gpu=gpu.name,
                           has=gpu.compute_capability, instead=", ".join(able) or "-")  # fmt: skip
    if r.tp and engine.split == "tensor" and tensor_parallel_degree(arch, r.tp) != r.tp:
        raise InvalidInput("tp_heads", field=("tp",), tp=r.tp, model=arch.name, heads=arch.n_heads)
    if r.tp and r.gpus_per_instance:  # a replica's all-reduces stay inside an instance
        from whichgpu.estimate.serving_layouts import replica_reach
        from whichgpu.frozen import evolve

        reach = replica_reach(evolve(job, gpus_per_node=r.gpus_per_instance), gpu)
        if r.tp > reach:
            raise InvalidInput("tp_instance", field=("tp",), tp=r.tp, per_instance=reach,
                               gpu=gpu.name, flag=Ref(("gpus_per_instance",)))  # fmt: skip
    import msgspec

    from whichgpu.plan import plan
    from whichgpu.plan.core import latency_margin
    from whichgpu.plan.serving import with_front

    # the one place a job meets hardware (its bridge note passed on below); latency targets
    # held as recommend holds them by default: at the slow end of the
    # estimate's likely range (one job on one hardware, one answer)
    run = plan(_component(arch, r), _hardware(gpu, r), (arch, job),
               None if r.tp is None else (r.tp, None, None), latency_margin("likely"))  # fmt: skip
    if run.serving is None and run.blocker is not None and run.blocker.kind == "replica_instance":
        holds = run.blocker.instance_gpus  # one instance this large would hold it, or none
        said = {"count": holds, "flag": Ref(("gpus_per_instance",))} if holds else {}
        raise InvalidInput("serving_no_fit_instance" + ("" if holds else "_none"),
                           field=("gpus_per_instance",), model=arch.name, gpu=gpu.name,
                           per_instance=int(run.blocker.needed or 1),
                           needed=round(run.needed_gib or 0.0, 1),
                           capacity=round(run.capacity_gib, 1), **said)  # fmt: skip
    if run.serving is None:
        raise InvalidInput("serving_no_fit", model=arch.name, gpu=gpu.name, count=r.count)
    assert run.job is not None
    check_runnable(arch, run.job, gpu)
    if run.serving.unmet is not None:  # missed even at the lightest load: no operating point
        target, best_s = run.serving.unmet
        raise InvalidInput(
            "latency_out_of_reach_on",
            (target,),
            target=target.upper(),
            percentile=r.percentile,
            limit_ms=round(1e3 * (targets.limit_s(target) or 0.0), 1),
            model=arch.name,
            count=r.count,
            gpu=gpu.name,
            best_ms=round(1e3 * best_s * run.serving.targets.margin_of(target), 1),
            point_ms=round(1e3 * best_s, 1),
        )
    # the trade-off beside the plan: every layout of these GPUs, a GPU's tokens/s against a
    # user's
    run = with_front(run, arch, gpu, r.count, r.tp)
    assert run.estimate is not None
    linked = tuple(n for n in run.notes if n.code in ("note_pcie_link", "warn_no_split"))
    return msgspec.structs.replace(run.estimate, notes=(*run.estimate.notes, *linked))
