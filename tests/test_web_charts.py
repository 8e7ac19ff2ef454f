"""The recommend page's charts (whichgpu.web.charts): every drawn point and bar read back
from its position as the number it stands for, the axes' ticks as numbers in their range."""

from __future__ import annotations

import itertools
import math
import re

from hypothesis import given
from hypothesis import strategies as st

import whichgpu
from whichgpu.catalog import load_catalog
from whichgpu.commands.recommend import recommend
from whichgpu.i18n import format_decimal
from whichgpu.inputs.requests import Constraints, Workload
from whichgpu.inputs.workload_files import make_component
from whichgpu.render.chart_data import (
    CostChart,
    CostPoint,
    MemoryBar,
    MemoryChart,
    cost_chart,
    memory_chart,
    text_width,
)
from whichgpu.web.charts import (
    MIN_DECADES,
    Box,
    Dot,
    _labels,
    _linear_ticks,
    _log_range,
    _log_ticks,
    cost_svg,
    memory_svg,
    tick_label,
)


def _lora() -> whichgpu.Recommendation:
    component = make_component({"kind": "lora", "model": "llama-2-7b", "tokens": 1e8})
    return recommend(load_catalog(), Workload((component,), Constraints(budget_usd=500)))


def _read_log(at: float, lo: float, hi: float, start: float, end: float) -> float:
    return 10 ** (math.log10(lo) + (at - start) / (end - start) * math.log10(hi / lo))


def test_each_dot_reads_back_as_its_options_time_and_cost() -> None:
    chart = cost_chart(_lora())
    assert chart is not None and chart.timed and chart.per_job
    svg = cost_svg(chart)
    assert svg is not None
    xs = [p.x for p in chart.points]
    ys = [p.cost_usd for p in chart.points]
    x_lo, x_hi = _log_range(min(xs), max(xs))
    y_lo, y_hi = _log_range(min(ys), max(ys))
    box = svg.box
    order = {"other": 0, "front": 1, "pick": 2}  # drawn in this order: the pick on top
    points = sorted(chart.points, key=lambda p: order[p.role])
    assert len(svg.dots) == len(points)
    for dot, point in zip(svg.dots, points, strict=True):
        x = _read_log(dot.x, x_lo, x_hi, box.left, box.right)
        y = _read_log(dot.y, y_lo, y_hi, box.bottom, box.top)
        assert math.isclose(x, point.x, rel_tol=0.005), (dot, point)
        assert math.isclose(y, point.cost_usd, rel_tol=0.005), (dot, point)
    picks = [d for d in svg.dots if d.color == "#2ca02c"]
    assert len(picks) == 1 and svg.dots[-1] == picks[0]  # drawn last, on top
    assert svg.front and svg.legend and svg.labels


def test_a_service_charts_its_capacity_against_its_cost_and_draws_the_demand() -> None:
    """A service at a request rate has no job time: each option's point is the requests/s
    it serves under the targets (its table's capacity) against its $/h, the demand a dashed
    line, the front the options no other serves more for less than."""
    from whichgpu.render.chart_data import served_rps

    component = make_component({"kind": "inference", "model": "llama-3.1-8b",
                                "request_rate": 5, "ttft": "2s", "tpot": "100ms"})  # fmt: skip
    result = recommend(load_catalog(), Workload((component,), Constraints()))
    chart = cost_chart(result)
    assert chart is not None and chart.demand == 5 and not chart.timed and not chart.per_job
    assert result.pick is not None
    pick = next(p for p in chart.points if p.role == "pick")
    assert pick.x == served_rps(result.pick) and pick.x >= 5
    assert all(p.x >= 5 for p in chart.points)  # every option shown serves the demand
    front = chart.front
    assert all(a.x < b.x and a.cost_usd < b.cost_usd for a, b in itertools.pairwise(front))
    svg = cost_svg(chart)
    assert svg is not None and svg.demand is not None and "5" in svg.demand.text
    assert svg.box.left < svg.demand.x < svg.box.right


def test_bars_stack_to_the_memory_estimate_and_the_line_is_the_capacity() -> None:
    chart = memory_chart(_lora())
    assert chart is not None and len(chart.bars) == 1
    svg = memory_svg(chart)
    bar = chart.bars[0]
    zero = svg.y_ticks[0]
    assert zero.label == "0" and zero.at == svg.box.bottom
    top_tick = svg.y_ticks[-1]
    gib_per_unit = float(top_tick.label.replace(",", "")) / (zero.at - top_tick.at)
    stacked = sum(r.height for r in svg.rects) * gib_per_unit
    assert math.isclose(stacked, sum(g for _n, g in bar.parts_gib), rel_tol=0.01)
    ((_x1, _x2, y),) = svg.capacities
    assert math.isclose((zero.at - y) * gib_per_unit, bar.capacity_gib, rel_tol=0.01)


def test_the_template_draws_the_geometry_with_names_escaped() -> None:
    from whichgpu.web.templating import environment

    macros = environment().get_template("_charts.html").module
    chart = cost_chart(_lora())
    assert chart is not None
    svg = cost_svg(chart)
    assert svg is not None
    text = str(macros.cost(svg))  # type: ignore[attr-defined]
    assert text.count("<circle") == len(svg.dots) and text.count("<svg") == 1
    evil = MemoryChart("<script>x</script>", (MemoryBar("<b>lora</b>", (("weights", 1.0),), 2.0),))
    drawn = str(macros.memory(memory_svg(evil)))  # type: ignore[attr-defined]
    assert "<script>" not in drawn and "<b>" not in drawn
    assert "&lt;script&gt;" in drawn and "&lt;b&gt;lora" in drawn


@given(
    st.floats(min_value=1e-3, max_value=1e6),
    st.floats(min_value=1.0, max_value=1e4),
)
def test_a_log_axis_has_two_labelled_ticks_inside_it(lo: float, factor: float) -> None:
    low, high = _log_range(lo, lo * factor)
    assert math.log10(high / low) >= MIN_DECADES - 1e-9
    shown, grid = _log_ticks(low, high)
    assert len(shown) >= 2
    assert all(low <= v <= high for v in grid) and set(shown) <= set(grid)
    assert all(re.fullmatch(r"[\d,]+(\.\d+)?", tick_label(v)) for v in shown)


@given(st.floats(min_value=0.01, max_value=1e5))
def test_a_linear_axis_starts_at_zero_with_few_even_steps(hi: float) -> None:
    ticks, decimals = _linear_ticks(hi)
    assert ticks[0] == 0 and 2 <= len(ticks) <= 11 and ticks[-1] <= hi * (1 + 1e-9)
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    # every label written with the step's decimals: distinct, and each reads as its value
    labels = [format_decimal(v, decimals) for v in ticks]
    assert len(set(labels)) == len(labels)
    assert all(
        math.isclose(float(t.replace(",", "")), v, abs_tol=1e-9)
        for t, v in zip(labels, ticks, strict=True)
    )


def test_a_small_memory_axis_labels_its_half_steps() -> None:
    """Review: labels took their decimals from each value, so a 0.5 step read 0, 0.5, 1, 2,
    2, 3 (1.5 and 2.5 rounded away)."""
    ticks, decimals = _linear_ticks(2.73)
    assert [format_decimal(v, decimals) for v in ticks] == [
        "0.0",
        "0.5",
        "1.0",
        "1.5",
        "2.0",
        "2.5",
    ]


def test_the_front_line_joins_only_pareto_options_and_the_pick_is_named() -> None:
    """Review: a pick the ranking's rounding put first though another option dominates it
    was drawn on the front's line; it is named, not joined."""
    chart = CostChart(
        points=(
            CostPoint(1.0, 10.0, "front", "A", True),
            CostPoint(2.0, 12.0, "pick", "P", False),  # dominated by A
            CostPoint(4.0, 5.0, "front", "B", True),
            CostPoint(3.0, 20.0, "other", "C", False),
        ),
        timed=True,
        per_job=True,
        unit="tokens/s",
    )
    assert [p.label for p in chart.front] == ["A", "B"]
    assert [p.label for p in chart.named] == ["P", "A", "B"]
    svg = cost_svg(chart)
    assert svg is not None and len(svg.front.split()) == 2
    assert [label.text for label in svg.labels] == ["P", "A", "B"]


def test_names_never_overlap_each_other_the_dots_or_the_edges() -> None:
    """Each name takes the first of right, left, above and below its point that is clear
    of the names placed, the marked dots and the plot's edges; one with no such place is
    left out (the table names it)."""
    box = Box(58, 28, 428, 294)
    crowd = [(200, 150, f"{n} × H100 SXM") for n in (1, 2, 4, 8, 16)]
    labels = _labels([*crowd, (420, 200, "1 × L4")], box, ())
    assert [label.anchor for label in labels[:4]] == ["start", "end", "middle", "middle"]
    assert "16 × H100 SXM" not in [label.text for label in labels]  # four places, five names
    l4 = labels[-1]
    assert l4.text == "1 × L4" and l4.anchor == "end" and l4.x < 420
    blocked = _labels([(200, 150, "8 × A100")], box, (Dot(214, 147, "#1f77b4", 3.4),))
    assert blocked[0].anchor == "end"  # a marked dot where the name would start: the left
    assert text_width("ジョブ", 10) == 30 and text_width("abc", 10) == 18
