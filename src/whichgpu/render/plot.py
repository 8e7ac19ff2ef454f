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


#: The web charts' size and their labels' (legend, point labels, bar names): a phone draws
#: a chart at ~360 px, 1.1 px a point at this width, so 9 pt labels read at ~10 px (at
#: 5.6 in and 8 pt they were ~7 px, issue 18); ticks and titles take font.size (11 pt).
WEB_FIGSIZE_IN = (4.4, 3.4)
#: The memory chart is taller: its legend sits under the bars
MEMORY_FIGSIZE_IN = (4.4, 4.4)
LABEL_PT = 9


def _label(option: Option) -> str:
    from whichgpu.recommender.options import hardware_label

    return hardware_label(option, count_one=True)


def _cost(option: Option) -> float:
    return option.cost_usd if option.cost_usd is not None else (option.usd_per_h or 0.0)


def _x_of(option: Option, timed: bool) -> float:
    if timed:
        return (option.time_s or 0.0) / 3600
    return option.throughput or 0.0


def _shown(result: Recommendation) -> list[Option]:
    shown = [o for o in result.options if o.feasible and o.cost_usd is not None]
    return shown or [o for o in result.options if o.feasible and o.usd_per_h is not None]


def by_time(result: Recommendation) -> bool:
    """Whether the cost chart's x axis is time (else throughput: the hours are fixed, so
    every option takes the same time)."""
    return len({round(o.time_s or 0.0) for o in _shown(result)}) > 1


def _cost_time_chart(ax: Axes, result: Recommendation) -> None:
    """Cost against time of every feasible option (against throughput when the hours are
    fixed: then time says nothing), the Pareto front as a line, the pick in green and the
    front in blue, labelled; the other options grey and unlabelled."""
    shown = _shown(result)
    timed = by_time(result)
    groups: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    for option in shown:
        if option is result.pick:
            style = ("tab:green", 70)
        elif option.pareto:
            style = ("tab:blue", 36)
        else:
            style = ("0.7", 14)
        xs, ys = groups.setdefault(style, ([], []))
        xs.append(_x_of(option, timed))
        ys.append(_cost(option))
    for (color, size), (xs, ys) in groups.items():  # one collection per style: fast to draw
        ax.scatter(xs, ys, color=color, s=size, zorder=3)
    front = sorted((o for o in shown if o.pareto), key=lambda o: _x_of(o, timed))
    if len(front) > 1:
        ax.plot([_x_of(o, timed) for o in front], [_cost(o) for o in front],
                color="tab:blue", linewidth=1, zorder=2,
                label=_("Pareto front (time vs cost)") if timed
                else _("Pareto front (throughput vs cost)"))  # fmt: skip
        ax.legend(fontsize=LABEL_PT, loc="best")
    for option in front:  # labels on the front only: the options worth naming
        ax.annotate(_label(option), (_x_of(option, timed), _cost(option)), fontsize=LABEL_PT,
                    xytext=(4, 3), textcoords="offset points", parse_math=False)  # fmt: skip
    per_job = any(o.cost_usd is not None for o in shown)
    ax.set_xscale("log")
    ax.set_yscale("log")
    unit = shown[0].runs[0].unit if shown and shown[0].runs else ""
    ax.set_xlabel(_("time, hours") if timed else fmt(_("throughput ({unit})"), unit=unit))
    ax.set_ylabel(_("cost per job, US$") if per_job else _("cost per hour, US$"))
    ax.set_title(_("Cost against time") if timed else _("Cost against throughput"))
    ax.grid(True, which="both", linewidth=0.3)


def _has_priced(result: Recommendation) -> bool:
    return any(o.feasible and o.usd_per_h is not None for o in result.options)


def _has_model(result: Recommendation) -> bool:
    option = result.pick or (result.options[0] if result.options else None)
    return option is not None and any(r.component.uses_model for r in option.runs)


def _memory_chart(ax: Axes, result: Recommendation) -> None:
    """The memory estimate of each model component on the pick (or the first option)."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.parallel import scaled_job
    from whichgpu.recommender.jobs import model_job
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
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=LABEL_PT)
    for tick in ax.get_xticklabels():
        tick.set_parse_math(False)
    ax.set_ylabel(_("GiB per GPU (dashed: capacity)"))
    import textwrap

    title = fmt(_("Memory on {option}"), option=_label(option)) if option else ""
    ax.set_title("\n".join(textwrap.wrap(title, 32)), parse_math=False)  # a phone's width
    # the legend under the bars, not over them nor squeezing them beside
    ax.legend(fontsize=LABEL_PT, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2,
              frameon=False)  # fmt: skip


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
        _cost_time_chart(left, result)
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


def recommendation_svgs(result: Recommendation) -> tuple[tuple[str, str], ...]:
    """The charts that have something to show, as ``(name, SVG)`` to inline in HTML: cost
    against time with the Pareto front (``cost-time``), and the pick's memory by component
    (``memory``, for a model). No XML prolog, text kept as text, stable element ids; fonts
    sized to stay legible when a phone scales the chart to its width."""
    import io

    from matplotlib.figure import Figure

    charts = [("cost-time", _cost_time_chart, _has_priced), ("memory", _memory_chart, _has_model)]
    out: list[tuple[str, str]] = []
    with _fonts({"svg.fonttype": "none", "svg.hashsalt": "whichgpu", "font.size": 11}):
        for name, draw, shows in charts:
            if not shows(result):
                continue  # an empty chart says nothing: not drawn
            fig = Figure(figsize=WEB_FIGSIZE_IN if name != "memory" else MEMORY_FIGSIZE_IN)
            draw(fig.add_subplot(), result)
            fig.tight_layout()
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
            out.append((name, _inline_svg(buffer.getvalue(), name)))
    return tuple(out)


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
