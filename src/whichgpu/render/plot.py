"""``recommend --plot``: throughput per dollar against cost per job (the Pareto front
marked), and the pick's memory breakdown, drawn with matplotlib (imported only here)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from whichgpu.i18n import _
from whichgpu.recommend.engine import Option, Recommendation
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _label(option: Option) -> str:
    hw = option.hardware
    if hw.mig is not None:
        return f"{hw.services}×{hw.mig.profile} {option.gpu.short_name}"
    return f"{option.gpus}× {option.gpu.short_name}"


def _cost(option: Option) -> float:
    return option.cost_usd if option.cost_usd is not None else (option.usd_per_h or 0.0)


def _value_chart(ax: Axes, result: Recommendation) -> None:
    from whichgpu.render.recommend_out import best_per_gpu

    shown = [o for o in result.options if o.feasible and o.value is not None]
    per_job = any(o.cost_usd is not None for o in shown)
    for option in shown:
        color = "tab:green" if option is result.pick else ("tab:blue" if option.pareto else "0.6")
        ax.scatter(
            _cost(option), option.value or 0.0, color=color, s=40 if option.pareto else 18, zorder=3
        )
    front = sorted((o for o in shown if o.pareto), key=lambda o: _cost(o) or 0.0)
    if front:
        ax.plot(
            [_cost(o) for o in front],
            [o.value or 0.0 for o in front],
            color="tab:blue",
            linewidth=1,
            zorder=2,
            label=_("Pareto front (time vs cost)"),
        )
    for option in best_per_gpu([o for o in shown]):
        ax.annotate(
            _label(option),
            (_cost(option) or 0.0, option.value or 0.0),
            fontsize=7,
            xytext=(4, 3),
            textcoords="offset points",
        )
    unit = shown[0].runs[0].unit if shown else ""
    ax.set_xscale("log")
    ax.set_xlabel(_("cost per job, US$") if per_job else _("cost per hour, US$"))
    ax.set_ylabel(_("throughput per $/h ({unit})").format(unit=unit))
    ax.set_title(_("Value against cost"))
    if front:
        ax.legend(fontsize=7)
    ax.grid(True, which="both", linewidth=0.3)


def _memory_chart(ax: Axes, result: Recommendation) -> None:
    """The memory estimate of each model component on the pick (or the first option)."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.fit import scaled_job
    from whichgpu.recommend.candidates import model_job

    option = result.pick or (result.options[0] if result.options else None)
    bars: list[tuple[str, dict[str, float], float]] = []
    if option is not None:
        for run in option.runs:
            if not run.component.uses_model:
                continue
            arch, job = model_job(run.component)
            scaled, _strategy = scaled_job(job, option.hardware.count)
            estimate = estimate_memory(arch, scaled)
            parts = {k: v / BYTES_PER_GIB for k, v in estimate.components.items() if v > 0}
            bars.append((run.component.label, parts, run.capacity_gib))
    if not bars:
        ax.text(0.5, 0.5, _("no model component"), ha="center", va="center")
        ax.set_axis_off()
        return
    for i, (_name, parts, capacity) in enumerate(bars):
        bottom = 0.0
        for name, gib in parts.items():
            ax.bar(i, gib, bottom=bottom, label=name if i == 0 else None)
            bottom += gib
        ax.hlines(capacity, i - 0.4, i + 0.4, colors="black", linestyles="dashed")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.set_ylabel(_("GiB per GPU (dashed: capacity)"))
    ax.set_title(_("Memory on {option}").format(option=_label(option)) if option else "")
    ax.legend(fontsize=7)


def plot_recommendation(result: Recommendation, path: Path) -> None:
    """Write both charts side by side to ``path`` (.png or .svg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    _value_chart(left, result)
    _memory_chart(right, result)
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as error:
        from whichgpu.errors import InvalidInput

        raise InvalidInput(
            _("cannot write {path}: {reason}").format(path=path, reason=error.strerror)
        ) from None
    finally:
        plt.close(fig)
