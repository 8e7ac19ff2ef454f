"""The model and the job a workload's component describes, built once per request before
any candidate is tried (a field at fault named within its component), and whether the
component is a served model the serving planner sizes, and whether NVLink bridges would
speed it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from whichgpu.errors import InvalidInput, Ref
from whichgpu.inputs.requests import Component, Workload
from whichgpu.notes import Note, note

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.job import Job
    from whichgpu.models.arch import ModelArch


def serves(component: Component) -> bool:
    """A served model the serving planner sizes (:func:`~whichgpu.inputs.requests.
    planned_service`: a request rate, a latency target, an engine, or a job of tokens with no
    batch given; interactive use keeps the one-sequence estimate)."""
    from whichgpu.inputs.requests import planned_service

    c = component
    kind = _model_kind(c) if c.kind == "inference" else None  # only inference asks it
    return planned_service(c.kind, c.engine, c.request_rate, c.ttft, c.tpot, c.tokens, c.batch,
                           c.generate, kind)  # fmt: skip


def _model_kind(component: Component) -> str | None:
    """The kind of the component's model (its own, a preset's, or the generic decoder of a
    size alone, as :func:`model_job` resolves it); None where it names none."""
    from whichgpu.errors import WhichGPUError
    from whichgpu.models import resolve_model

    try:
        return (component.arch or resolve_model(component.model, component.params)).kind
    except WhichGPUError:
        return None


def served_quant(
    arch: ModelArch, quant: str | None, precision: str | None, kind: str
) -> str | None:
    """The weight format an inference job runs in: the one asked, else, where no precision
    is asked either, the checkpoint's own (DeepSeek-V3 ships FP8 weights: served in FP8, as
    its reference deployments are; :attr:`ModelArch.checkpoint_quant`)."""
    if quant is not None or precision is not None or kind != "inference":
        return quant
    return arch.checkpoint_quant


def checkpoint_note(label: str, arch: ModelArch, job: Job, asked: str | None) -> tuple[Note, ...]:
    """The note saying a job runs in its checkpoint's format, where that was not asked."""
    if asked is not None or job.quant is None or job.quant != arch.checkpoint_quant:
        return ()
    return (note("chosen_checkpoint_format", component=label, quant=job.quant,
                 field=Ref(("quant",))),)  # fmt: skip


def model_job(component: Component) -> tuple[ModelArch, Job]:
    """The model and the memory/throughput job a model component describes."""
    from whichgpu.inputs.job_input import make_job
    from whichgpu.job import default_prompt, default_seq, generated_tokens
    from whichgpu.job.recipes import default_precision
    from whichgpu.models import resolve_model

    arch = component.arch or resolve_model(component.model, component.params)
    inference = component.kind == "inference"
    generate = generated_tokens(arch, component.generate) if inference else 0
    settings = component.settings() if component.training else component.hardware()
    global_batch = settings.pop("global_batch", None)  # per candidate, once its count is known
    job = make_job(
        **settings,
        task=component.kind,
        precision=default_precision(component.precision, component.kind, component.framework),
        quant=served_quant(arch, component.quant, component.precision, component.kind),
        batch=component.batch or 1,
        seq=default_seq(arch, component.seq),
        prompt=(component.prompt or default_prompt(arch, component.seq, generate))
        if inference
        else 0,
        generate=generate,
        kv_dtype=component.kv_dtype if inference else "auto",
        checkpointing=None
        if component.checkpointing is None
        else ("full" if component.checkpointing else "none"),
        all_logits=not inference,
    ).with_prefix(component.shared_prefix)
    job = job.with_speculation(arch, component.speculative, component.draft_tokens,
                               component.acceptance)  # fmt: skip
    if serves(component):
        from whichgpu.estimate.engine_choice import check_serving

        check_serving(arch, job, component.engine, component.layout)
    elif job.speculative is not None:
        raise InvalidInput("speculative_not_served", field=("speculative",))
    elif component.layout is not None:
        raise InvalidInput("layout_not_served", field=("layout",))
    if global_batch is not None and component.batch is not None:
        from whichgpu.inputs.job_input import with_global_batch

        with_global_batch(job, int(global_batch))  # one GPU's steps: none of more can make it
    return arch, job


def prepare(workload: Workload) -> list[tuple[ModelArch, Job] | None]:
    """Each component's model and job (None for one without a model); a field at fault is
    named within its component (``components.0.global_batch``: the CLI still names it
    ``--global-batch``, a workload file by its line)."""
    out: list[tuple[ModelArch, Job] | None] = []
    for index, component in enumerate(workload.components):
        try:
            pair = model_job(component) if component.uses_model else None
            if pair is not None:  # what estimate refuses of the model, whatever the GPU
                from whichgpu.inputs.job_input import check_asked
                from whichgpu.job import check_lengths

                check_lengths(*pair)
                check_asked(*pair)
            out.append(pair)
        except InvalidInput as error:
            if error.field and error.field[0] != "components":
                error.field = ("components", index, *error.field)
            raise
    return out


def bridge_note(
    label: str,
    gpu: GPU,
    count: int,
    plain: float,
    bridged: Callable[[], float],
    per_instance: int | None = None,
) -> Note | None:
    """``note_pcie_link`` where NVLink bridges could join ``count`` cards in pairs
    (:func:`~whichgpu.estimate.parallel.bridgeable`) and would make the job faster by a
    percent or more: its rate ``plain`` against ``bridged()``, the job planned again with
    them (asked only where bridges could join the cards)."""
    from whichgpu.estimate.parallel import bridgeable

    if not plain or not bridgeable(gpu, count, per_instance):
        return None
    rate = bridged()
    if rate < plain * 1.01:
        return None
    return note("note_pcie_link", component=label, gpu=gpu.name,
                gain=round(rate / plain - 1, 3), field=Ref(("nvlink_bridge",)))  # fmt: skip
