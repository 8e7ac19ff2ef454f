"""``fit``: does a job fit on each GPU, on how many, and what would make it fit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from whichgpu.catalog.records import GPU
from whichgpu.catalog.store import Catalog
from whichgpu.estimate.memory import MemoryEstimate, estimate_memory
from whichgpu.estimate.parallel import (
    min_gpus,
    splits_tensors,
    tensor_parallel_degree,
    usable_bytes,
)
from whichgpu.job import Job
from whichgpu.models import resolve_gpu
from whichgpu.models.arch import ModelArch
from whichgpu.notes import Note, note
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from whichgpu.estimate.serving import ServingCapacity
    from whichgpu.inputs.requests import Component, FitRequest


@dataclass(frozen=True)
class GpuFit:
    """``job`` on one GPU: the job as that GPU runs it (the precision it has tensor cores
    for, the recomputation and layout chosen where left open), what it needs, and the
    fewest of that GPU that hold it."""

    gpu: GPU
    fits: bool
    needed_gib: float
    headroom_gib: float
    min_count: int | None
    strategy: str
    job: Job
    #: what was chosen for this GPU (:func:`whichgpu.plan.settings.configure`)
    chosen: tuple[Note, ...] = ()


@dataclass(frozen=True)
class Change:
    """Changes to the job that together make it fit, with the per-GPU memory needed."""

    notes: tuple[Note, ...]
    job: Job
    needed_gib: float


@dataclass(frozen=True)
class FitResult:
    """``job`` (as the target GPU, else the largest, runs it), its memory, every GPU's fit
    and the changes that would make it fit; ``chosen`` says what was chosen for the target
    where the user left it open."""

    arch: ModelArch
    job: Job
    estimate: MemoryEstimate
    gpus: tuple[GpuFit, ...]
    target: GPU | None
    changes: tuple[Change, ...]
    chosen: tuple[Note, ...] = ()
    #: the job as asked, before what it left open was chosen for each GPU
    given: Job | None = None


def fit_gpu(
    arch: ModelArch,
    job: Job,
    gpu: GPU,
    estimate: MemoryEstimate | None = None,
    component: Component | None = None,
) -> GpuFit:
    """``job`` on ``gpu``. With ``component`` (the request, its open settings None), the
    settings it leaves open are chosen for this GPU as ``estimate`` and ``recommend`` choose
    them (:func:`open_settings_on`); else ``job`` runs as given (``estimate``: its memory,
    when the caller has it)."""
    chosen: tuple[Note, ...] = ()
    if component is not None:
        job, chosen = open_settings_on(component, arch, job, gpu)
        estimate = None
    needed = (estimate or estimate_memory(arch, job)).total_bytes
    count, strategy = min_gpus(arch, job, gpu)
    return GpuFit(
        gpu=gpu,
        fits=needed <= usable_bytes(gpu),
        needed_gib=needed / BYTES_PER_GIB,
        headroom_gib=(usable_bytes(gpu) - needed) / BYTES_PER_GIB,
        min_count=count,
        strategy=strategy,
        job=job,
        chosen=chosen,
    )


def layout_open(job: Job) -> bool:
    """A training job's spread over its GPUs is left to whichgpu: no ZeRO stage, tensor or
    pipeline or context degree given (``fit``'s defaults: 0, 1, 1 and 1)."""
    return job.zero == 0 and job.tp == 1 and job.pp == 1 and job.cp == 1


def open_settings_on(
    component: Component, arch: ModelArch, job: Job, gpu: GPU
) -> tuple[Job, tuple[Note, ...]]:
    """``job`` as ``gpu`` runs it, with what the user left open chosen as ``estimate``
    chooses it (:func:`whichgpu.plan.settings.configure`, shared by ``estimate``
    and ``recommend``): a BF16 precision left open runs in FP16 on a GPU without BF16
    tensor cores (:func:`whichgpu.estimate.perf.fp16_instead`); a training job's
    recomputation left open is full where nothing fits without it (or where it lets a faster
    micro-batch fit); on several GPUs a layout left open (:func:`layout_open`) is the
    fastest that fits, ZeRO-3 / FSDP or tensor × pipeline parallelism
    (:func:`whichgpu.estimate.parallel.training_layouts`), as ``estimate --count`` spreads
    it. A layout the user gave is kept, the recomputation chosen for the nearest the
    search tries (the same tensor and pipeline degrees). A micro-batch left open is the
    largest that fits of up to the recipe's, with the accumulation that keeps the recipe's
    batch, as ``estimate`` chooses it: one job, one answer."""
    from whichgpu.estimate.perf import fp16_instead
    from whichgpu.notes import note as make_note

    if not job.training:
        fp16 = None if component.precision is not None else fp16_instead(gpu, job.precision)
        if fp16 is None:
            return job, ()
        said = make_note(
            "chosen_precision", component=component.label, gpu=gpu.short_name, precision=fp16
        )
        return replace(job, precision=fp16), (said,)
    from whichgpu.plan.settings import configure

    given = not layout_open(job)
    fixed = (job.tp, job.pp, job.cp) if given and job.gpus > 1 else None
    configured = configure(component, arch, job, gpu, job.gpus, fixed)
    if not given or job.gpus == 1:
        return configured.job, tuple(configured.chosen)
    # the user's layout (a ZeRO stage the search's layouts may not share), with the
    # precision and recomputation chosen
    kept = replace(
        job,
        precision=configured.job.precision,
        checkpointing=configured.job.checkpointing,
        recompute_layers=configured.job.recompute_layers,
    )
    return kept, tuple(n for n in configured.chosen if n.code != "chosen_layout")


def candidate_changes(arch: ModelArch, job: Job, gpu: GPU | None = None) -> list[tuple[Note, Job]]:
    """Changes users make when a job does not fit, smallest first; on ``gpu``, only those
    it runs (pure FP16 rather than pure BF16 where it has no BF16 tensor cores:
    :func:`whichgpu.estimate.perf.fp16_instead`)."""
    from whichgpu.estimate.perf import fp16_instead

    out: list[tuple[Note, Job]] = []
    if job.tokens > 256:
        seq = job.tokens // 2
        shorter = replace(job, seq=seq, prompt=job.prompt // 2, generate=job.generate // 2)
        out.append((note("change_shorter_sequence", seq=seq), shorter))
    if job.batch > 1:
        out.append((note("change_batch_1", batch=1), replace(job, batch=1)))
    if job.training and (job.checkpointing != "full" or job.recompute_layers):
        every = replace(job, checkpointing="full", recompute_layers=0)
        out.append((note("change_checkpointing"), every))
    if job.task in ("train", "finetune") and job.optimizer in ("adamw", "adamw-fused"):
        # bitsandbytes' AdamW8bit: 2 bytes of state a parameter instead of 8
        out.append((note("change_optimizer_8bit"), replace(job, optimizer="adamw-8bit")))
    # LoRA and QLoRA fine-tune a trained model: not a way to pretrain one
    if job.task == "finetune":
        out.append((note("change_lora", rank=job.lora_rank), replace(job, task="lora")))
    if job.task in ("finetune", "lora"):
        out.append((note("change_qlora"), replace(job, task="qlora", quant="nf4")))
    if job.precision in ("32-true", "16-mixed", "bf16-mixed") and job.runtime == "torch":
        if gpu is not None and fp16_instead(gpu, "bf16-true") is not None:
            out.append((note("change_fp16_true"), replace(job, precision="16-true")))
        else:
            out.append((note("change_bf16_true"), replace(job, precision="bf16-true")))
    if job.training and job.zero < 3:
        out.append((note("change_zero3", gpus=2), replace(job, zero=3, gpus=max(2, job.gpus))))
    if not job.training and job.quant is None:
        out.append((note("change_quantize", quant="int4"), replace(job, quant="int4")))
    if job.training and not job.chunked_loss and not job.compiled:
        # torchtune's CEWithChunkedOutputLoss: the logits upcast to fp32 a chunk at a time
        out.append((note("change_chunked_loss"), replace(job, chunked_loss=True)))
    # each degree the heads allow within one 8-GPU node (its NVLink domain), the smallest
    # that fits listed first; the job's GPUs kept where it has more (taken from replicas).
    # A fine-tune splits a model so only in Megatron/NeMo: the HF Trainer, PEFT and
    # bitsandbytes have no tensor parallelism (whichgpu.job.recipes.parallel_of)
    tp = job.tp * 2 if splits_tensors(job) else 2 * tensor_parallel_degree(arch, 8)
    while tp <= tensor_parallel_degree(arch, 8):
        gpus = max(job.gpus, tp * job.pp)
        out.append((note("change_tensor_parallel", tp=tp), replace(job, tp=tp, gpus=gpus)))
        tp *= 2
    return out


def what_would_fit(
    arch: ModelArch, job: Job, capacity_bytes: float, gpu: GPU | None = None
) -> list[Change]:
    """Single changes that make ``job`` fit in ``capacity_bytes``; when none does alone, the
    shortest combination found by applying the most effective change first, repeatedly.
    With ``gpu``, only changes it runs (:func:`candidate_changes`)."""
    singles: list[Change] = []
    for change, changed in candidate_changes(arch, job, gpu):
        needed = estimate_memory(arch, changed).total_bytes
        if needed <= capacity_bytes:
            singles.append(Change((change,), changed, needed / BYTES_PER_GIB))
    if singles:
        return sorted(singles, key=lambda c: c.needed_gib, reverse=True)
    notes: list[Note] = []
    current = job
    for _step in range(6):
        options = [
            (estimate_memory(arch, changed).total_bytes, change, changed)
            for change, changed in candidate_changes(arch, current, gpu)
            if change.code not in {n.code for n in notes}
        ]
        if not options:
            break
        needed, change, current = min(options, key=lambda o: o[0])
        notes.append(change)
        if needed <= capacity_bytes:
            return [Change(tuple(notes), current, needed / BYTES_PER_GIB)]
    return []


def fit(
    catalog: Catalog,
    arch: ModelArch,
    job: Job,
    target: GPU | None = None,
    gpus: Sequence[GPU] | None = None,
    component: Component | None = None,
) -> FitResult:
    """Memory of ``job`` and, for every GPU, whether it fits, with headroom and the minimum
    count. When it does not fit ``target`` (or the largest GPU), the changes that would,
    among them the smallest larger GPU that holds it (and runs its precision).

    With ``component`` (``fit_request``'s), each GPU runs the job with the settings left
    open chosen for it (:func:`open_settings_on`), and the memory shown is the target's
    (else the largest GPU's); without, ``job`` runs as given everywhere."""
    from whichgpu.estimate.perf import missing_math_unit

    reference = target or max(catalog.gpus, key=lambda g: g.memory_gib)
    chosen: tuple[Note, ...] = ()
    given = job
    if component is not None:
        job, chosen = open_settings_on(component, arch, job, reference)
        if target is None and chosen:
            # no GPU asked: the settings are the largest GPU's, which the user did not name;
            # each row says its own
            from whichgpu.errors import Ref
            from whichgpu.notes import note as make_note

            chosen = (make_note("fit_rows_chosen", component=component.label, batch=job.batch,
                                gpu=Ref(("gpu",))),)  # fmt: skip
    estimate = estimate_memory(arch, job)
    shared = None if component is not None else estimate
    # each GPU chooses from the job as asked, not as the reference runs it
    base = given if component is not None else job
    rows = tuple(fit_gpu(arch, base, gpu, shared, component) for gpu in (gpus or catalog.gpus))
    changes: list[Change] = []
    if estimate.total_bytes > usable_bytes(reference):
        changes = what_would_fit(arch, job, usable_bytes(reference), reference)
        # the GPUs that hold the job as each runs it, and have the tensor cores it runs on
        holding = [
            row
            for row in (rows if gpus is None else tuple(
                fit_gpu(arch, base, g, shared, component) for g in catalog.gpus
            ))
            if row.fits
            and row.gpu.memory_gib > reference.memory_gib
            and missing_math_unit(row.gpu, row.job.math_precision) is None
        ]  # fmt: skip
        bigger = sorted(holding, key=lambda row: row.gpu.memory_gib)
        if bigger and target is not None:
            row = bigger[0]
            changes.append(
                Change((note("change_bigger_gpu", gpu=row.gpu.name),), row.job, row.needed_gib)
            )
    return FitResult(arch, job, estimate, rows, target, tuple(changes), chosen, given)


def fit_request(
    catalog: Catalog, arch: ModelArch, request: FitRequest
) -> tuple[FitResult, ServingCapacity | None]:
    """``whichgpu fit`` (the CLI, the HTTP API and the web share it): the job, the fit
    against every GPU (and ``request.gpu``), and with ``gpu_memory_utilization`` the vLLM
    serving capacity."""
    from whichgpu.errors import InvalidInput
    from whichgpu.inputs.job_input import make_job
    from whichgpu.inputs.workload_files import check_applies

    given = {"prompt": request.prompt or None, "generate": request.generate or None,
             "lora_rank": request.lora_rank, "lora_targets": request.lora_targets}  # fmt: skip
    check_applies(request.task, given, among=("prompt", "generate", "lora_rank", "lora_targets"))
    from whichgpu.job import default_seq
    from whichgpu.plan.jobs import served_quant

    # a served model in its checkpoint's format where none is asked, as estimate and
    # recommend plan it (gpt-oss's MXFP4 experts, DeepSeek-V3's FP8)
    quant = served_quant(arch, request.quant, request.precision, request.task)
    job = make_job(**{**request.job_fields(), "seq": default_seq(arch, request.seq),
                      "quant": quant})  # fmt: skip
    from whichgpu.estimate.parallel import check_layout
    from whichgpu.inputs.job_input import check_asked
    from whichgpu.job import check_lengths

    check_lengths(arch, job)
    check_layout(arch, job)
    check_asked(arch, job)
    target = resolve_gpu(catalog, request.gpu) if request.gpu else None
    from whichgpu.inputs.requests import Component

    asked = request.checkpointing is not None or request.recompute is not None
    component = Component(
        kind=request.task, model=request.model, params=request.params,
        precision=request.precision, quant=quant, seq=job.seq,
        # a micro-batch left open is chosen per GPU as estimate and recommend choose it
        batch=request.batch if request.batch is not None else None,
        checkpointing=(job.checkpointing != "none") if asked else None, **request.settings(),
    )  # fmt: skip
    serving = None
    if request.gpu_memory_utilization is not None:
        from whichgpu.estimate.serving import serving_capacity

        if job.training:
            raise InvalidInput(
                "utilization_inference", field=("gpu_memory_utilization",), task=job.task
            )
        serving = serving_capacity(
            arch, job, target or catalog.resolve("a100"), request.gpu_memory_utilization
        )
    return fit(catalog, arch, job, target, component=component), serving


# -- image pipelines ---------------------------------------------------------------------


@dataclass(frozen=True)
class ImageGpuFit:
    """An image job on one GPU: the memory with the settings left open chosen to fit (the
    images a call, CPU offload, VAE tiling; the training batch, checkpointing), and those."""

    gpu: GPU
    fits: bool
    needed_gib: float
    headroom_gib: float
    host_gib: float
    chosen: str


@dataclass(frozen=True)
class ImageFitResult:
    pipeline_id: str
    pipeline_name: str
    task: str
    gpus: tuple[ImageGpuFit, ...]
    target: ImageGpuFit | None
    #: the memory by part on the target (or the first GPU that holds it)
    parts_gib: dict[str, float]
    stage: str


def _image_settings_text(est: object) -> str:
    """The settings an image estimate ran with, named as the reader's shell names them (the
    CLI's flags: ``--batch 2, --cpu-offload model``)."""
    from whichgpu.errors import field_name
    from whichgpu.estimate.imaging import ImageEstimate

    if isinstance(est, ImageEstimate):
        job = est.job
        parts = [f"{field_name(('batch',))} {job.batch}"]
        if job.offload != "none":
            parts.append(f"{field_name(('cpu_offload',))} {job.offload}")
        if job.vae_tiling:
            parts.append(field_name(("vae_tiling",)))
        return ", ".join(parts)
    train = est.job  # type: ignore[attr-defined]
    parts = [f"{field_name(('batch',))} {train.batch}"]
    if train.checkpointing:
        parts.append(field_name(("checkpointing",)))
    return ", ".join(parts)


def fit_image_request(catalog: Catalog, request: FitRequest) -> ImageFitResult:
    """``whichgpu fit --task image|image-lora|image-finetune``: on every GPU of the
    catalog, the memory an image job needs once what was left open is set to fit
    (:mod:`whichgpu.estimate.imaging`), and on ``request.gpu``."""
    from whichgpu.errors import WhichGPUError
    from whichgpu.estimate.imaging import image_settings, plan_image, plan_image_training
    from whichgpu.inputs.workload_files import check_applies, check_image_model
    from whichgpu.models.pipelines import find_pipeline

    check_image_model(request.model, request.params)
    assert request.model is not None
    keys = ("resolution", "steps", "cpu_offload", "vae_tiling", "cache_latents", "seq",
            "prompt", "generate", "lora_rank", "lora_targets")  # fmt: skip
    # the lengths of a language model's job (0: not given) are not an image job's
    given = {k: getattr(request, k) or None for k in keys}
    check_applies(request.task, given, among=keys)
    pipeline = find_pipeline(request.model)
    # what was left open (images a call or a step, offload, tiling, checkpointing) chosen
    # per GPU as estimate and recommend choose it: one job, one memory, whichever asks
    settings = image_settings(request, request.task)
    method = "full" if request.task == "image-finetune" else "lora"
    target_gpu = resolve_gpu(catalog, request.gpu) if request.gpu else None

    def on(gpu: GPU) -> tuple[ImageGpuFit, object] | None:
        try:
            if request.task == "image":
                est: object = plan_image(pipeline, gpu, 1, dict(settings))
            else:
                est = plan_image_training(pipeline, gpu, 1, method, dict(settings))
        except WhichGPUError:
            if gpu is target_gpu:
                raise
            return None  # a precision or format the GPU does not run: not listed
        memory = est.memory  # type: ignore[attr-defined]
        needed = memory.total_bytes
        row = ImageGpuFit(
            gpu=gpu,
            fits=needed <= usable_bytes(gpu),
            needed_gib=needed / BYTES_PER_GIB,
            headroom_gib=(usable_bytes(gpu) - needed) / BYTES_PER_GIB,
            host_gib=memory.host_bytes / BYTES_PER_GIB,
            chosen=_image_settings_text(est)
            + (f" (host {memory.host_bytes / BYTES_PER_GIB:.0f} GiB)" if memory.host_bytes else ""),
        )
        return row, est

    results = [r for gpu in catalog.gpus if (r := on(gpu)) is not None]
    target = on(target_gpu) if target_gpu is not None else None
    shown = target or next((r for r in results if r[0].fits), results[0] if results else None)
    parts = {} if shown is None else {
        k: v / BYTES_PER_GIB for k, v in shown[1].memory.parts.items()  # type: ignore[attr-defined]
    }  # fmt: skip
    stage = "" if shown is None else shown[1].memory.stage  # type: ignore[attr-defined]
    return ImageFitResult(
        pipeline_id=pipeline.id,
        pipeline_name=pipeline.name,
        task=request.task,
        gpus=tuple(r[0] for r in results),
        target=None if target is None else target[0],
        parts_gib=parts,
        stage=stage,
    )
