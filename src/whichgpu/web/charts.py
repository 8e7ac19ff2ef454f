"""The recommend page's two charts as SVG geometry: the numbers of
:mod:`whichgpu.render.chart_data` placed on a view box (log scales for cost and time, a
linear one for memory), for the ``_charts.html`` template to draw.

The page drew them with matplotlib until issue 16's load test: ~300 ms of a page's ~330 ms
went to its layout passes and tick labels (mathtext), so one core served three pages a
second. Placed here they take about a millisecond, and the reader's browser lays out the text
in the reader's fonts (Japanese labels need no font on the server). ``recommend --plot``
still draws its file with matplotlib, from the same numbers."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from whichgpu.commands.recommend.rank import Recommendation
from whichgpu.i18n import _, format_decimal
from whichgpu.render.chart_data import (
    Area,
    CostChart,
    MemoryChart,
    cost_chart,
    memory_chart,
    place_names,
    text_width,
)

#: matplotlib's "tab10" colours (the pick green, the front blue, as the file output has them)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
ROLE_STYLE = {"pick": ("#2ca02c", 4.7), "front": ("#1f77b4", 3.4), "other": ("#b3b3b3", 2.1)}
#: A chart's width in view-box units: a phone draws it at ~360 px, so 11-unit names read at
#: ~9 px and 12-unit ticks and axis titles at ~10 px; a desktop column at ~440 px, 1:1
WIDTH = 440.0
#: The font size of the names beside points and bars and of the legends (view-box units;
#: the template's ``font-size="11"``)
NAME_SIZE = 11.0
#: The plotting area's margins left (tick labels, the rotated axis title) and right
LEFT, RIGHT = 58.0, 12.0
#: The narrowest log axis, in decades (a factor of 4)
MIN_DECADES = math.log10(4)
#: Lines of the memory chart's title: wrapped at this many characters
TITLE_CHARS = 32


@dataclass(frozen=True, slots=True)
class Tick:
    at: float  #: the position on its axis, in view-box units
    label: str  #: "" for a grid line without a label


@dataclass(frozen=True, slots=True)
class Box:
    """The plotting area inside the view box."""

    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True, slots=True)
class Dot:
    x: float
    y: float
    color: str
    radius: float


@dataclass(frozen=True, slots=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str  #: SVG text-anchor


@dataclass(frozen=True, slots=True)
class CostSvg:
    height: float
    box: Box
    title: str
    x_title: str
    y_title: str
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    dots: tuple[Dot, ...]  #: the other options first, the pick last (drawn on top)
    front: str  #: the Pareto front's polyline points ("" for fewer than two)
    legend: str  #: the front's legend ("" without a line)
    labels: tuple[Label, ...]  #: the front's hardware names
    per_job: bool = True  #: y is the cost per job (else per hour: no hours or size given)
    #: A service's demand: its line's x and its label, or None
    demand: Label | None = None


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    color: str


@dataclass(frozen=True, slots=True)
class Swatch:
    x: float
    y: float
    color: str
    text: str


@dataclass(frozen=True, slots=True)
class MemorySvg:
    height: float
    box: Box
    title: tuple[str, ...]  #: its lines
    y_title: str
    y_ticks: tuple[Tick, ...]
    rects: tuple[Rect, ...]
    capacities: tuple[tuple[float, float, float], ...]  #: (x1, x2, y) dashed lines
    names: tuple[Label, ...]  #: the components under their bars
    legend: tuple[Swatch, ...]


def _log_ticks(lo: float, hi: float) -> tuple[list[float], list[float]]:
    """Labelled values and grid values of a log axis over [lo, hi]: the decades when two or
    more fall inside, else 1-2-5 of each decade, else every integer multiple (as matplotlib's
    LogLocator labels a short axis's minor ticks); the grid at every multiple."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    grid = [m * 10.0**k for k in range(first, last + 1) for m in range(1, 10)]
    grid = [v for v in grid if lo <= v <= hi]
    for mantissas in ((1,), (1, 2, 5), tuple(range(1, 10))):
        shown = [v for v in grid if _mantissa(v) in mantissas]
        if len(shown) >= 2:
            return shown, grid
    return grid, grid


def _mantissa(value: float) -> int:
    """The leading digit of a grid value (2 for 200, 5 for 0.05)."""
    return round(value / 10.0 ** math.floor(math.log10(value) + 1e-9))


def _linear_ticks(hi: float, most: int = 6) -> tuple[list[float], int]:
    """0 and multiples of a 1-2-5 step up to ``hi``, at most ``most`` + 1 of them, and the
    decimals the step needs (0.5 → 1, 0.05 → 2), which every label is written with."""
    if hi <= 0:
        return [0.0], 0
    raw = hi / most
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(hi / step + 1e-9) + 1)], _decimals(step)


def tick_label(value: float) -> str:
    """A tick's number as the reader's language writes it, with the decimals it needs
    (0.05, 2, 1,500)."""
    return format_decimal(value, _decimals(value) if value > 0 else 0)


def _decimals(value: float) -> int:
    """The decimals a positive number of one significant digit needs (0.05 → 2, 20 → 0)."""
    return max(0, -math.floor(math.log10(value) + 1e-9))


def _log_range(lo: float, hi: float) -> tuple[float, float]:
    """The padded data range of a log axis: 5 % of its decades on each side, and at least
    :data:`MIN_DECADES` wide (a factor of 4 holds two integer multiples of a power of ten
    or more, so the axis has two labelled ticks)."""
    low, high = math.log10(lo), math.log10(hi)
    pad = max(0.05 * (high - low), (MIN_DECADES - (high - low)) / 2)
    return 10 ** (low - pad), 10 ** (high + pad)


def _place_log(value: float, lo: float, hi: float, start: float, end: float) -> float:
    return start + (end - start) * (math.log10(value) - math.log10(lo)) / (
        math.log10(hi) - math.log10(lo)
    )


def _labels(
    points: list[tuple[float, float, str]], box: Box, dots: tuple[Dot, ...]
) -> tuple[Label, ...]:
    """The names of ``points`` beside them, clear of each other and of the dots
    (:func:`~whichgpu.render.chart_data.place_names`)."""

    def area(d: Dot) -> Area:
        return (d.x - d.radius, d.y - d.radius, d.x + d.radius, d.y + d.radius)

    faint = ROLE_STYLE["other"][1]
    placed = place_names(
        points, (box.left, box.top, box.right, box.bottom),
        [area(d) for d in dots if d.radius > faint], [area(d) for d in dots if d.radius <= faint],
        NAME_SIZE, gap=8,
    )  # fmt: skip
    return tuple(Label(round(x, 1), round(y, 1), text, anchor) for x, y, anchor, text in placed)


def cost_svg(chart: CostChart) -> CostSvg | None:
    """The cost chart on a 440 × 340 view box; None when no point has a positive time and
    cost (a log axis has no place for it)."""
    points = [p for p in chart.points if p.x > 0 and p.cost_usd > 0]
    if not points:
        return None
    box = Box(left=LEFT, top=28.0, right=WIDTH - RIGHT, bottom=294.0)
    xs = [p.x for p in points] + ([chart.demand] if chart.demand else [])
    x_lo, x_hi = _log_range(min(xs), max(xs))
    y_lo, y_hi = _log_range(min(p.cost_usd for p in points), max(p.cost_usd for p in points))

    def px(value: float) -> float:
        return round(_place_log(value, x_lo, x_hi, box.left, box.right), 1)

    def py(value: float) -> float:
        return round(_place_log(value, y_lo, y_hi, box.bottom, box.top), 1)

    def ticks(lo: float, hi: float, place: Callable[[float], float]) -> tuple[Tick, ...]:
        shown, grid = _log_ticks(lo, hi)
        labelled = set(shown)
        return tuple(Tick(place(v), tick_label(v) if v in labelled else "") for v in grid)

    order = {"other": 0, "front": 1, "pick": 2}
    dots = tuple(
        Dot(px(p.x), py(p.cost_usd), *ROLE_STYLE[p.role])
        for p in sorted(points, key=lambda p: order[p.role])
    )
    front = [p for p in chart.front if p.x > 0 and p.cost_usd > 0]
    named = [p for p in chart.named if p.x > 0 and p.cost_usd > 0]
    labels = _labels([(px(p.x), py(p.cost_usd), p.label) for p in named], box, dots)
    line = " ".join(f"{px(p.x)},{py(p.cost_usd)}" for p in front) if len(front) > 1 else ""
    demand = None
    if chart.demand:  # its label along the line, at the top of the plot
        demand = Label(px(chart.demand), box.top + 12, chart.demand_label(), "start")
    return CostSvg(
        height=360.0 if line else 340.0,  # the front's legend under the axis title
        box=box,
        title=chart.title(),
        x_title=chart.x_title(),
        y_title=chart.y_title(),
        x_ticks=ticks(x_lo, x_hi, px),
        y_ticks=ticks(y_lo, y_hi, py),
        dots=dots,
        front=line,
        legend=chart.front_legend() if line else "",
        labels=labels,
        per_job=chart.per_job,
        demand=demand,
    )


def memory_svg(chart: MemoryChart) -> MemorySvg:
    """The memory chart: stacked bars per component on a 440-wide view box, the legend under
    them in two columns, or one where a name would not fit in half the width (its height
    grows with its rows)."""
    from whichgpu.render.fit_out import COMPONENT_LABELS

    title = tuple(textwrap.wrap(chart.title(), TITLE_CHARS))
    names = chart.parts
    legends = [_(COMPONENT_LABELS.get(name, name)) for name in names]
    column = (WIDTH - RIGHT - LEFT) / 2
    columns = 2 if all(18 + text_width(t, NAME_SIZE) < column for t in legends) else 1
    rows = math.ceil(len(names) / columns)
    top = 14.0 + 15.0 * len(title)
    plot_height = 260.0
    box = Box(left=LEFT, top=top, right=WIDTH - RIGHT, bottom=top + plot_height)
    height = box.bottom + 34.0 + 16.0 * rows + 6.0
    highest = max(max(bar.capacity_gib, sum(g for _n, g in bar.parts_gib)) for bar in chart.bars)
    values, decimals = _linear_ticks(highest * 1.05)
    y_hi = max(highest * 1.08, values[-1])

    def py(gib: float) -> float:
        return round(box.bottom - (box.bottom - box.top) * gib / y_hi, 1)

    slot = (box.right - box.left) / len(chart.bars)
    rects: list[Rect] = []
    capacities = []
    labels = []
    for i, bar in enumerate(chart.bars):
        x = box.left + slot * (i + 0.1)
        width = slot * 0.8
        bottom = 0.0
        for name, gib in bar.parts_gib:
            color = PALETTE[names.index(name) % len(PALETTE)]
            rects.append(Rect(round(x, 1), py(bottom + gib), round(width, 1),
                              round(py(bottom) - py(bottom + gib), 1), color))  # fmt: skip
            bottom += gib
        capacities.append((round(x, 1), round(x + width, 1), py(bar.capacity_gib)))
        labels.append(Label(round(x + width / 2, 1), box.bottom + 16, bar.label, "middle"))
    legend = tuple(
        Swatch(
            round(box.left + column * (i % columns), 1),
            box.bottom + 34 + 16 * (i // columns),
            PALETTE[i % len(PALETTE)],
            text,
        )
        for i, text in enumerate(legends)
    )
    return MemorySvg(
        height=round(height, 1),
        box=box,
        title=title,
        y_title=chart.y_title(),
        y_ticks=tuple(Tick(py(v), format_decimal(v, decimals)) for v in values),
        rects=tuple(rects),
        capacities=tuple(capacities),
        names=tuple(labels),
        legend=legend,
    )


def recommendation_charts(result: Recommendation) -> tuple[CostSvg | None, MemorySvg | None]:
    """Both charts of a recommendation, each None when it would show nothing (no priced
    option; no model component, as for a render job)."""
    cost = cost_chart(result)
    memory = memory_chart(result)
    return (
        cost_svg(cost) if cost is not None else None,
        memory_svg(memory) if memory is not None else None,
    )
