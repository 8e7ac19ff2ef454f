"""``recommend --plot``: cost against time (the Pareto front marked) and the pick's memory
breakdown, drawn with matplotlib (imported only here) into a .png or .svg file: the numbers
of :mod:`whichgpu.render.chart_data`, which the web page draws as its own SVG
(:mod:`whichgpu.web.charts`). matplotlib's object API, no pyplot state; labels that come from
user input are drawn as plain text, never parsed as mathtext."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whichgpu.commands.recommend.rank import Recommendation
from whichgpu.i18n import _
from whichgpu.render.chart_data import cost_chart, memory_chart, place_names

if TYPE_CHECKING:
    from matplotlib.axes import Axes


#: The point labels', the legends' and the bar names' size
LABEL_PT = 9


def _cost_time_chart(ax: Axes, result: Recommendation) -> None:
    """Cost against time of every feasible option (against throughput when the hours are
    fixed: then time says nothing), the Pareto front as a line, the pick in green and the
    front in blue, labelled; the other options grey and unlabelled."""
    chart = cost_chart(result)
    if chart is None:
        return
    styles = {"pick": ("tab:green", 70), "front": ("tab:blue", 36), "other": ("0.7", 14)}
    groups: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    for point in chart.points:
        xs, ys = groups.setdefault(styles[point.role], ([], []))
        xs.append(point.x)
        ys.append(point.cost_usd)
    for (color, size), (xs, ys) in groups.items():  # one collection per style: fast to draw
        ax.scatter(xs, ys, color=color, s=size, zorder=3)
    front = chart.front
    if len(front) > 1:
        ax.plot([p.x for p in front], [p.cost_usd for p in front],
                color="tab:blue", linewidth=1, zorder=2,
                label=chart.front_legend())  # fmt: skip
    if chart.demand:  # a service: what it must serve, against each option's capacity
        ax.axvline(chart.demand, color="tab:red", linestyle="--", linewidth=1, zorder=1,
                   label=chart.demand_label())  # fmt: skip
    if len(front) > 1 or chart.demand:
        ax.legend(fontsize=LABEL_PT, loc="best")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(chart.x_title())
    ax.set_ylabel(chart.y_title())
    ax.set_title(chart.title())
    ax.grid(True, which="both", linewidth=0.3)


def _name_points(ax: Axes, result: Recommendation) -> None:
    """The pick's and the front's names beside their points, placed as the web page places
    them (:func:`~whichgpu.render.chart_data.place_names`, in display pixels, y down): none
    over another, nor over a marked point. Run once the layout is final."""
    chart = cost_chart(result)
    if chart is None:
        return
    ax.autoscale_view()
    height = ax.figure.bbox.height
    scale = ax.figure.dpi / 72  # points to pixels

    def down(x: float, y: float) -> tuple[float, float]:
        px, py = ax.transData.transform((x, y))
        return float(px), float(height - py)

    def area(x: float, y: float, size: int) -> tuple[float, float, float, float]:
        cx, cy = down(x, y)
        r = (size**0.5) / 2 * scale
        return (cx - r, cy - r, cx + r, cy + r)

    marked = [area(p.x, p.cost_usd, 70 if p.role == "pick" else 36)
              for p in chart.points if p.role != "other"]  # fmt: skip
    faint = [area(p.x, p.cost_usd, 14) for p in chart.points if p.role == "other"]
    x0, y0, x1, y1 = ax.bbox.extents
    placed = place_names(
        [(*down(p.x, p.cost_usd), p.label) for p in chart.named],
        (x0, height - y1, x1, height - y0), marked, faint, LABEL_PT * scale, gap=6 * scale,
    )  # fmt: skip
    align = {"start": "left", "end": "right", "middle": "center"}
    back = ax.transData.inverted()
    for x, y, anchor, text in placed:
        dx, dy = back.transform((x, height - y))
        ax.text(dx, dy, text, fontsize=LABEL_PT, ha=align[anchor], va="baseline",
                parse_math=False)  # fmt: skip


def _memory_chart(ax: Axes, result: Recommendation) -> None:
    """The memory estimate of each model component on the pick (or the first option)."""
    import textwrap

    from whichgpu.render.fit_out import COMPONENT_LABELS

    chart = memory_chart(result)
    if chart is None:
        ax.text(0.5, 0.5, _("no model component"), ha="center", va="center")
        ax.set_axis_off()
        return
    parts = chart.parts
    for i, bar in enumerate(chart.bars):
        bottom = 0.0
        for name, gib in bar.parts_gib:
            color = f"C{parts.index(name) % 10}"  # one colour a component on every bar
            first = all(name not in dict(b.parts_gib) for b in chart.bars[:i])
            label = _(COMPONENT_LABELS.get(name, name)) if first else None
            ax.bar(i, gib, bottom=bottom, color=color, label=label)
            bottom += gib
        ax.hlines(bar.capacity_gib, i - 0.4, i + 0.4, colors="black", linestyles="dashed")
    ax.set_xticks(range(len(chart.bars)), [b.label for b in chart.bars], fontsize=LABEL_PT)
    for tick in ax.get_xticklabels():
        tick.set_parse_math(False)
    ax.set_ylabel(chart.y_title())
    ax.set_title("\n".join(textwrap.wrap(chart.title(), 32)), parse_math=False)
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
        _name_points(left, result)
        _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    """Draw ``fig`` in memory in ``path``'s format (.png or .svg), then write it whole
    (:func:`~whichgpu.files.write_atomic`): a failure, while drawing or writing, leaves a
    file already there as it was, never a truncated one."""
    import io

    from whichgpu.files import write_atomic

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format=path.suffix.lower().lstrip("."))
    except OSError as error:  # a font or a backend that cannot be read: one line
        from whichgpu.errors import InvalidInput

        reason = error.strerror or str(error)
        raise InvalidInput("unwritable", field=("plot",), path=str(path), reason=reason) from None
    write_atomic(path, buffer.getvalue(), field="plot")
