"""``fit`` output: JSON and terminal tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whichgpu.commands.fit import FitResult, GpuFit, ImageFitResult, ImageGpuFit
from whichgpu.estimate.assumptions import DEFAULTS
from whichgpu.estimate.memory import COMPONENTS
from whichgpu.estimate.serving import ServingCapacity
from whichgpu.i18n import N_, _, fmt, format_decimal
from whichgpu.inputs.fields import format_number
from whichgpu.notes import note_doc
from whichgpu.phrases import CLAUSE_SEPARATOR, localize
from whichgpu.render.json_doc import SCHEMA_VERSION
from whichgpu.render.tables import quant_shown, recomputation_of
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from rich.console import Console

    from whichgpu.estimate.memory import MemoryEstimate
    from whichgpu.job import Job
    from whichgpu.notes import Note

COMPONENT_LABELS = {
    "weights": N_("Weights"),
    "master_weights": N_("fp32 master weights"),
    "gradients": N_("Gradients"),
    "optimizer": N_("Optimizer states"),
    "optimizer_step_temp": N_("Optimizer step temporaries"),
    "activations": N_("Activations"),
    "logits": N_("Logits and loss"),
    "kv_cache": N_("KV cache"),
    "overhead": N_("Overhead (CUDA context, allocator)"),
}


def _gib(value: float) -> float:
    return round(value / BYTES_PER_GIB, 3)


def fit_doc(result: FitResult, serving: ServingCapacity | None) -> dict[str, Any]:
    est, job, arch = result.estimate, result.job, result.arch
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "fit",
        "model": {
            "id": arch.id,
            "name": arch.name,
            "family": arch.family,
            "parameters": arch.total_params,
            "active_parameters": arch.active_params,
            "trainable_parameters": est.trainable_parameters,
        },
        "job": {k: getattr(job, k) for k in job.__dataclass_fields__},
        "parameters": arch.total_params,
        "phase": est.phase,
        "total_gib": _gib(est.total_bytes),
        "tensor_gib": _gib(est.tensor_bytes),
        "breakdown_gib": {key: _gib(est.components[key]) for key in COMPONENTS},
        # a paged optimizer's states, in CUDA unified memory beside the peak
        "paged_gib": _gib(est.paged_bytes),
        # what was chosen for the target (else the largest GPU) where the job left it open
        "chosen": [note_doc(n) for n in result.chosen],
        "gpus": [
            {
                "id": row.gpu.id,
                "fits": row.fits,
                "min_count": row.min_count,
                "strategy": row.strategy,
                "headroom_gib": round(row.headroom_gib, 3),
                "needed_gib": round(row.needed_gib, 3),
                # the job as this GPU runs it: its precision, recomputation and layout
                "precision": row.job.math_precision,
                "checkpointing": row.job.checkpointing,
                "zero": row.job.zero,
                "tp": row.job.tp,
                "pp": row.job.pp,
            }
            for row in result.gpus
        ],
        "target": result.target.id if result.target else None,
        "changes": [
            {
                "codes": [n.code for n in change.notes],
                "params": [dict(n.params) for n in change.notes],
                "needed_gib": round(change.needed_gib, 3),
            }
            for change in result.changes
        ],
        "serving": None
        if serving is None
        else {
            "gpu": serving.gpu.id,
            "gpu_memory_utilization": serving.utilization,
            "kv_budget_gib": round(serving.kv_budget_gib, 3),
            "blocks": serving.blocks,
            "tokens_per_block": serving.tokens_per_block,
            "sequence_tokens": serving.sequence_tokens,
            "max_concurrent_sequences": serving.max_concurrent_sequences,
        },
        "assumptions": [
            {"name": a.name, "value": a.value, "unit": a.unit, "why": a.why} for a in DEFAULTS
        ],
    }


def _describe(result: FitResult) -> str:
    job, arch = result.job, result.arch
    parts = [f"{arch.name}: {format_decimal(arch.total_params / 1e9, 2)} B " + _("parameters")]
    if arch.is_moe:
        parts[0] += " " + fmt(_("({active:.2f} B active)"), active=arch.active_params / 1e9)
    parts.append(_(job.task))
    shown = job.math_precision
    parts.append(shown + quant_shown(job.quant, job.quantize_on))
    if arch.kind in ("cnn", "vit"):
        parts.append(
            fmt(_("batch of {b} images ({side}×{side})"), b=job.batch, side=arch.image_size)
        )
    else:
        tokens = (
            fmt(
                _("{prompt} + {generate} tokens"),
                prompt=job.prompt or job.seq,
                generate=job.generate,
            )
            if job.generate
            else fmt(_("{n} tokens"), n=job.tokens)
        )
        parts.append(fmt(_("batch {b} × {tokens}"), b=job.batch, tokens=tokens))
    if job.training:
        parts.append(job.optimizer)
        if job.checkpointing != "none":
            parts.append(fmt(_("recomputation {mode}"), mode=recomputation_of(job)))
    if job.gpus > 1:
        parts.append(
            fmt(
                _("{gpus} GPUs (ZeRO-{zero}, tp {tp}, pp {pp})"),
                gpus=job.gpus,
                zero=job.zero,
                tp=job.tp,
                pp=job.pp,
            )
        )
    return " · ".join(parts)


def _row_settings(row: GpuFit, given: Job | None) -> str:
    """How ``row``'s GPU runs the job where it differs from the job as asked (``given``):
    the FP16 precision it falls back to, the recomputation chosen for it; empty where the
    same (the memory and the count of the row are with these)."""
    if given is None:
        return ""
    parts = []
    if row.job.math_precision != given.math_precision:
        parts.append(row.job.math_precision)
    if (row.job.checkpointing, row.job.recompute_layers) != (
        given.checkpointing,
        given.recompute_layers,
    ):
        parts.append(fmt(_("recomputation {mode}"), mode=recomputation_of(row.job)))
    return ", ".join(parts)


def _verdict(row: GpuFit) -> str:
    """The one line that answers for the GPU asked about: whether one holds the job, its
    memory against the GPU's, and how many would hold it where one does not."""
    capacity = row.needed_gib + row.headroom_gib
    if row.fits:
        text = _("{gpu}: fits, {needed} of {capacity} GiB (micro-batch {batch})")
    elif row.min_count is not None:
        text = _("{gpu}: does not fit on one, {needed} GiB of {capacity}; {count} would hold it")
    else:
        text = _("{gpu}: does not fit, {needed} GiB of {capacity}, at any count")
    return fmt(text, gpu=row.gpu.short_name, needed=format_decimal(row.needed_gib, 1),
               capacity=format_decimal(capacity, 1), batch=row.job.batch,
               count=row.min_count or 0)  # fmt: skip


def paged_note(est: MemoryEstimate) -> Note | None:
    """The paged optimizer's states beside the peak, where the job has them (the CLI's and
    the fit page's words)."""
    if not est.paged_bytes:
        return None
    from whichgpu.notes import note

    return note("fit_paged_optimizer", paged=round(est.paged_bytes / BYTES_PER_GIB, 1))


def print_fit(result: FitResult, serving: ServingCapacity | None, console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    est = result.estimate
    target = next((r for r in result.gpus if result.target and r.gpu.id == result.target.id), None)
    if target is not None:  # the answer for the GPU asked about comes first
        console.print(Text(_verdict(target), style="bold"))
    console.print(Text(_describe(result), style="bold"))
    for chosen in result.chosen:
        console.print(chosen.render())
    console.print(
        fmt(
            _(
                "Peak per GPU: {total:.1f} GiB during the {phase} ({tensors:.1f} GiB of tensors + "
                "{overhead:.1f} GiB overhead)"
            ),
            total=est.total_gib,
            phase=_(est.phase),
            tensors=est.tensor_bytes / BYTES_PER_GIB,
            overhead=est.components["overhead"] / BYTES_PER_GIB,
        )
    )
    table = Table(title=_("Memory at the peak, per GPU"))
    table.add_column(_("Component"))
    table.add_column("GiB", justify="right")
    for key in COMPONENTS:
        value = est.components[key]
        if value:
            table.add_row(_(COMPONENT_LABELS[key]), format_decimal(value / BYTES_PER_GIB, 2))
    table.add_row(
        Text(_("Total"), style="bold"), Text(format_decimal(est.total_gib, 2), style="bold")
    )
    console.print(table)
    paged = paged_note(est)
    if paged is not None:
        console.print(paged.render())

    from whichgpu.render.tables import fitted_table

    on = result.job.gpus
    columns = [
        (_("GPU"), "left", 1),
        (_("VRAM"), "right", 2),
        (_("Fits on 1") if on == 1 else fmt(_("Fits on {n}"), n=on), "left", 1),
        (_("Headroom GiB"), "right", 3),
        (_("Min GPUs"), "left", 2),
    ]
    rows, styles = [], []
    asked = [r for r in result.gpus if r is target]  # the GPU asked about, first
    for row in asked + [r for r in result.gpus if r is not target]:
        count = "—" if row.min_count is None else f"{row.min_count} ({localize(row.strategy)})"
        if row.min_count is None:
            count = _("no count: activations alone exceed it")
        settings = _row_settings(row, result.given)
        if settings:  # chosen for this GPU: its memory and count are with it
            count = f"{count}; {settings}"
        rows.append(
            [
                row.gpu.short_name,
                f"{format_number(row.gpu.memory_gib)} GB",
                _("yes") if row.fits else _("no"),
                format_decimal(row.headroom_gib, 1),
                count,
            ]
        )
        styles.append("" if row.fits else "dim")
    # the count column is prose where nothing holds it: it wraps, the numbers do not
    console.print(fitted_table(_("Which GPUs hold it"), columns, rows, console.width,
                               frozenset({4}), styles))  # fmt: skip
    if result.changes:
        where = result.target.short_name if result.target else _("the largest GPU")
        console.print(Text(fmt(_("What would make it fit on {gpu}:"), gpu=where), style="bold"))
        for change in result.changes:
            what = _(CLAUSE_SEPARATOR).join(n.render() for n in change.notes)
            console.print(f"- {what}: {format_decimal(change.needed_gib, 1)} GiB")
    if serving is not None:
        console.print(
            fmt(
                _(
                    "Serving on {gpu} at --gpu-memory-utilization {u}: {budget:.1f} GiB of KV "
                    "cache = "
                    "{blocks:,} blocks of {block} tokens → {n:,} concurrent sequences of "
                    "{tokens:,} "
                    "tokens"
                ),
                gpu=serving.gpu.short_name,
                u=serving.utilization,
                budget=serving.kv_budget_gib,
                blocks=serving.blocks,
                block=serving.tokens_per_block,
                n=serving.max_concurrent_sequences,
                tokens=serving.sequence_tokens,
            )
        )
    console.print(
        Text(
            fmt(
                _(
                    "Assumed: {context:g} GiB a GPU of CUDA context and library workspaces; "
                    "the caching allocator reserves {reserve:.0%} beyond live tensors"
                ),
                context=DEFAULTS[0].value,
                reserve=DEFAULTS[1].value,
            ),
            style="dim",
        )
    )


def image_fit_doc(result: ImageFitResult) -> dict[str, Any]:
    """``whichgpu fit --task image… --json``: per GPU, the memory once the settings left open
    are chosen to fit, and those settings."""

    def row(r: ImageGpuFit) -> dict[str, Any]:
        return {
            "gpu": r.gpu.id,
            "fits": r.fits,
            "needed_gib": round(r.needed_gib, 3),
            "headroom_gib": round(r.headroom_gib, 3),
            "host_memory_gib": round(r.host_gib, 3),
            "settings": r.chosen,
        }

    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "fit",
        "pipeline": result.pipeline_id,
        "task": result.task,
        "memory_gib": {k: round(v, 3) for k, v in result.parts_gib.items()},
        "peak_stage": result.stage,
        "target": None if result.target is None else row(result.target),
        "gpus": [row(r) for r in result.gpus],
    }


def print_image_fit(result: ImageFitResult, console: Console) -> None:
    """An image job's memory by part (on ``--gpu``, or the first GPU that holds it) and the
    GPUs that hold it, with the settings chosen on each."""
    from rich.text import Text

    from whichgpu.render.tables import fitted_table

    console.print(Text(f"{result.pipeline_name} · {result.task}", style="bold"))
    if result.target is not None:
        t = result.target
        console.print(
            fmt(
                _("On the {gpu}: {gib:,.1f} GiB ({settings}); {verdict}"),
                gpu=t.gpu.short_name,
                gib=t.needed_gib,
                settings=t.chosen,
                verdict=_("it fits") if t.fits else _("it does not fit"),
            )
        )
    parts = ", ".join(
        f"{_(COMPONENT_LABELS.get(k, k))} {format_decimal(v, 1)}"
        for k, v in result.parts_gib.items()
        if v > 0.05
    )
    console.print(fmt(_("Memory at the peak ({stage}), GiB: {parts}"),
                      stage=localize(result.stage), parts=parts))  # fmt: skip
    columns = [
        (_("GPU"), "left", 1),
        (_("VRAM"), "right", 2),
        (_("Fits on 1"), "left", 1),
        (_("Needs GiB"), "right", 3),
        (_("Settings"), "left", 2),
    ]
    rows, styles = [], []
    for r in result.gpus:
        rows.append(
            [
                r.gpu.short_name,
                f"{format_number(r.gpu.memory_gib)} GB",
                _("yes") if r.fits else _("no"),
                format_decimal(r.needed_gib, 1),
                r.chosen,
            ]
        )
        styles.append("" if r.fits else "dim")
    console.print(fitted_table(_("Which GPUs hold it"), columns, rows, console.width,
                               frozenset({4}), styles))  # fmt: skip
