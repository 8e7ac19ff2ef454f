"""Terminal output (Rich, imported on first use) of ``whichgpu models``: the model presets
and the image-generation pipelines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from whichgpu.i18n import N_, _, fmt, format_decimal
from whichgpu.render.tables import add_columns

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from whichgpu.models.diffusion import DiffusionPipeline
    from whichgpu.models.presets import ModelSummary


def _light_table(title: str, left: Sequence[str], right: Sequence[str]) -> Table:
    """A light table (no outer edge, headers ruled off) whose ``left`` columns hold names and
    ``right`` columns figures: it fits 80 columns without cutting a name or a number."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    headers = [(_(h), "left") for h in left] + [(_(h), "right") for h in right]
    add_columns(table, headers, whole=True)
    return table


def print_models(
    models: Sequence[ModelSummary], console: Console, pipelines: Sequence[DiffusionPipeline] = ()
) -> None:
    """``whichgpu models``: the presets, smallest first, with their shape and context."""
    table = _light_table(
        fmt(_("Model presets ({n})"), n=len(models)),
        (N_("model"), N_("family")),
        (N_("params"), N_("active"), N_("layers"), N_("heads/KV"), N_("context")),
    )
    for m in models:
        arch = m.arch

        def billions(count: int) -> str:
            if count < 1e8:
                return f"{format_decimal(count / 1e6, 0)} M"
            return f"{format_decimal(count / 1e9, 1)} B"

        table.add_row(
            m.id,
            arch.family,
            billions(arch.total_params),
            billions(arch.active_params) if arch.is_moe else "",
            format_decimal(arch.n_layers) if arch.n_layers else "—",
            f"{arch.n_heads}/{arch.n_kv_heads}" if arch.n_heads else "—",
            _positions(arch.max_positions),
        )
    console.print(table)
    if pipelines:
        print_pipelines(pipelines, console)


def _positions(count: int) -> str:
    """A context length: whole up to a million tokens, in millions beyond (Llama 4 Scout's
    10,485,760 reads 10.5 M, as the parameter column reads)."""
    if not count:
        return "—"
    return format_decimal(count) if count < 1_000_000 else f"{format_decimal(count / 1e6, 1)} M"


def print_pipelines(pipelines: Sequence[DiffusionPipeline], console: Console) -> None:
    """The image-generation pipelines: denoiser and text encoders, defaults."""
    table = _light_table(
        fmt(_("Image-generation pipelines ({n})"), n=len(pipelines)),
        (N_("model"), N_("family")),
        (N_("params"), N_("denoiser"), N_("resolution"), N_("steps")),
    )
    for p in pipelines:
        table.add_row(
            p.id,
            p.family,
            f"{format_decimal(p.total_params / 1e9, 1)} B",
            f"{format_decimal(p.denoiser.params / 1e9, 1)} B",
            format_decimal(p.default_resolution),
            format_decimal(p.default_steps),
        )
    console.print(table)
