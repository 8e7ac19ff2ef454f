"""``recommend --plot``: throughput per dollar against cost per job (the Pareto front
marked), and the pick's memory breakdown, drawn with matplotlib (imported only here).

:func:`plot_recommendation` writes both charts to a file; :func:`recommendation_svgs` returns
each as SVG text for a web page (matplotlib's object API, no pyplot state; labels that come
from user input are drawn as plain text, never parsed as mathtext)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whichgpu.i18n import _, fmt
from whichgpu.recommender.engine import Option, Recommendation
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _label(option: Option) -> str:
    from whichgpu.recommender.options import hardware_label

    return hardware_label(option, count_one=True)


def _cost(option: Option) -> float:
    return option.cost_usd if option.cost_usd is not None else (option.usd_per_h or 0.0)


def _value_chart(ax: Axes, result: Recommendation) -> None:
    from whichgpu.render.recommend_out import best_per_gpu

    shown = [o for o in result.options if o.feasible and o.value is not None]
    per_job = any(o.cost_usd is not None for o in shown)
    groups: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    for option in shown:
        color = "tab:green" if option is result.pick else ("tab:blue" if option.pareto else "0.6")
        xs, ys = groups.setdefault((color, 40 if option.pareto else 18), ([], []))
        xs.append(_cost(option))
        ys.append(option.value or 0.0)
    for (color, size), (xs, ys) in groups.items():  # one collection per style: fast to draw
        ax.scatter(xs, ys, color=color, s=size, zorder=3)
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
            parse_math=False,
        )
    unit = shown[0].runs[0].unit if shown else ""
    if not shown:
        ax.text(0.5, 0.5, _("no priced option"), ha="center", va="center")
    ax.set_xscale("log")
    ax.set_xlabel(_("cost per job, US$") if per_job else _("cost per hour, US$"))
    ax.set_ylabel(fmt(_("throughput per $/h ({unit})"), unit=unit))
    ax.set_title(_("Value against cost"))
    if front:
        ax.legend(fontsize=7)
    ax.grid(True, which="both", linewidth=0.3)


def _memory_chart(ax: Axes, result: Recommendation) -> None:
    """The memory estimate of each model component on the pick (or the first option)."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.parallel import scaled_job
    from whichgpu.recommender.candidates import model_job
    from whichgpu.render.fit_out import COMPONENT_LABELS

    option = result.pick or (result.options[0] if result.options else None)
    bars: list[tuple[str, dict[str, float], float]] = []
    if option is not None:
        for run in option.runs:
            if not run.component.uses_model:
                continue
            arch, job = model_job(run.component)
            # the layout, micro-batch and recomputation the recommender chose here
            scaled = run.job or scaled_job(job, option.hardware.count, arch)[0]
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
            ax.bar(
                i, gib, bottom=bottom, label=_(COMPONENT_LABELS.get(name, name)) if i == 0 else None
            )
            bottom += gib
        ax.hlines(capacity, i - 0.4, i + 0.4, colors="black", linestyles="dashed")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    for tick in ax.get_xticklabels():
        tick.set_parse_math(False)
    ax.set_ylabel(_("GiB per GPU (dashed: capacity)"))
    ax.set_title(
        fmt(_("Memory on {option}"), option=_label(option)) if option else "", parse_math=False
    )
    ax.legend(fontsize=7)


#: Fonts tried glyph by glyph (matplotlib ≥ 3.6 falls back per character): Latin first, then
#: Japanese fonts Debian and most desktops ship, so Japanese labels are not drawn as boxes.
FONTS = ["DejaVu Sans", "IPAGothic", "IPAexGothic", "IPAPGothic", "Noto Sans CJK JP"]


@contextmanager
def _fonts(extra: dict[str, object] | None = None) -> Iterator[None]:
    """Matplotlib settings for whichgpu's charts; a missing glyph (no Japanese font on the
    machine) draws a box rather than failing, and matplotlib's warning about it is muted."""
    import logging
    import warnings

    import matplotlib

    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    settings = {"font.family": "sans-serif", "font.sans-serif": FONTS, **(extra or {})}
    with matplotlib.rc_context(settings), warnings.catch_warnings():  # type: ignore[arg-type]
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        yield


def plot_recommendation(result: Recommendation, path: Path) -> None:
    """Write both charts side by side to ``path`` (.png or .svg)."""
    from matplotlib.figure import Figure

    with _fonts():
        fig = Figure(figsize=(11, 4.5))
        left, right = fig.subplots(1, 2)
        _value_chart(left, result)
        _memory_chart(right, result)
        fig.tight_layout()
        _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    try:
        fig.savefig(path)
    except OSError as error:
        from whichgpu.errors import InvalidInput

        raise InvalidInput(
            "unwritable", field=("plot",), path=str(path), reason=str(error.strerror)
        ) from None


def recommendation_svgs(result: Recommendation) -> tuple[str, str]:
    """The two charts (value against cost with the Pareto front; memory breakdown) as SVG
    documents to inline in HTML: no XML prolog, text kept as text, stable element ids."""
    import io

    from matplotlib.figure import Figure

    out: list[str] = []
    with _fonts({"svg.fonttype": "none", "svg.hashsalt": "whichgpu"}):
        for draw, prefix in ((_value_chart, "value"), (_memory_chart, "memory")):
            fig = Figure(figsize=(6.4, 4.2))
            draw(fig.add_subplot(), result)
            fig.tight_layout()
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None})
            out.append(_inline_svg(buffer.getvalue(), prefix))
    return out[0], out[1]


def _inline_svg(text: str, prefix: str) -> str:
    """An SVG file's text as an element: prolog and doctype dropped, ids made unique to the
    chart (two charts on one page), fixed size replaced by the view box (it scales)."""
    import re

    start = text.find("<svg")
    svg = text[start:] if start >= 0 else text
    svg = re.sub(r'id="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'(href|xlink:href)="#([^"]+)"', rf'\1="#{prefix}-\2"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", svg, count=1)
    return svg.strip()
