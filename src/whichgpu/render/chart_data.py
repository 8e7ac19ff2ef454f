"""What a recommendation's two charts show, as numbers: the cost of every option that meets
the constraints against its time (or throughput, when the hours are fixed), with the Pareto
front and the pick marked; and the pick's memory per GPU by component against the GPU's
capacity. One source for both drawings: matplotlib's for ``recommend --plot``
(:mod:`whichgpu.render.plot`) and the web page's SVG (:mod:`whichgpu.web.charts`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from whichgpu.commands.recommend.rank import Option, Recommendation
from whichgpu.i18n import _, fmt, format_decimal
from whichgpu.units import BYTES_PER_GIB

Role = Literal["pick", "front", "other"]
#: A rectangle on a drawing whose y grows downward: (left, top, right, bottom)
Area = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class CostPoint:
    x: float  #: hours (``CostChart.timed``) or the throughput in ``CostChart.unit``
    cost_usd: float  #: per job, or per hour when no option has a job cost
    role: Role
    label: str  #: the hardware, as the table names it
    pareto: bool  #: on the Pareto front (the pick is, unless the ranking's rounding or its
    #: objective put a dominated option first)


@dataclass(frozen=True, slots=True)
class CostChart:
    points: tuple[CostPoint, ...]  #: the Pareto front among them sorted by ``x``
    timed: bool  #: x is hours (else throughput: the hours are fixed, time says nothing)
    per_job: bool  #: y is the cost per job (else per hour)
    unit: str  #: the throughput's unit (``tokens/s``, ``images/s``)
    #: A service's demand in requests/s, where x is each option's capacity under the
    #: targets (:func:`is_service`): the chart draws it as a line; None for a job
    demand: float | None = None

    @property
    def front(self) -> tuple[CostPoint, ...]:
        """The Pareto front's points, by ``x``: the line the chart draws."""
        return tuple(sorted((p for p in self.points if p.pareto), key=lambda p: p.x))

    @property
    def named(self) -> tuple[CostPoint, ...]:
        """The points worth a name: the pick, then the rest of the front."""
        pick = tuple(p for p in self.points if p.role == "pick")
        return pick + tuple(p for p in self.front if p.role != "pick")

    def title(self) -> str:
        """The chart's title, in the reader's language (as are the four below)."""
        if self.demand is not None:
            return _("Cost against capacity")
        return _("Cost against time") if self.timed else _("Cost against throughput")

    def x_title(self) -> str:
        if self.demand is not None:
            return _("requests/s served under the targets")
        return _("time, hours") if self.timed else fmt(_("throughput ({unit})"), unit=self.unit)

    def demand_label(self) -> str:
        """The demand line's label (a service's chart)."""
        rps = self.demand or 0.0
        return fmt(_("demand: {rps} req/s"), rps=format_decimal(rps, 0 if rps >= 10 else 1))

    def y_title(self) -> str:
        return _("cost per job, US$") if self.per_job else _("cost per hour, US$")

    def front_legend(self) -> str:
        if self.demand is not None:
            return _("Pareto front (capacity vs cost)")
        return (
            _("Pareto front (time vs cost)") if self.timed
            else _("Pareto front (throughput vs cost)")
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class MemoryBar:
    label: str  #: the workload component
    parts_gib: tuple[tuple[str, float], ...]  #: (memory component, GiB per GPU), stacked
    capacity_gib: float


@dataclass(frozen=True, slots=True)
class MemoryChart:
    option: str  #: the hardware the bars are on (the pick, else the first option)
    bars: tuple[MemoryBar, ...]

    @property
    def parts(self) -> tuple[str, ...]:
        """The memory components in the order they first stack: one colour and one legend
        entry each, the same on every bar."""
        return tuple(dict.fromkeys(n for bar in self.bars for n, _gib in bar.parts_gib))

    def title(self) -> str:
        return fmt(_("Memory on {option}"), option=self.option)

    def y_title(self) -> str:
        return _("GiB per GPU (dashed: capacity)")


def option_label(option: Option) -> str:
    from whichgpu.commands.recommend.options import hardware_label

    return hardware_label(option, count_one=True)


def _cost(option: Option) -> float:
    return option.cost_usd if option.cost_usd is not None else (option.usd_per_h or 0.0)


def _shown(result: Recommendation) -> list[Option]:
    shown = [o for o in result.options if o.feasible and o.cost_usd is not None]
    return shown or [o for o in result.options if o.feasible and o.usd_per_h is not None]


def is_service(result: Recommendation) -> bool:
    """Whether the answer is a service's (one served component at a request rate): its
    table and its chart show serving's figures (capacity, latencies, $/h), not a job's cost
    and time."""
    components = result.workload.components
    return len(components) == 1 and components[0].request_rate is not None


def served_rps(option: Option) -> float | None:
    """The requests/s a served option's plan sustains under the targets, all replicas
    together, as the plan counts on them (the slow end of its range where it rests on a
    factor nobody measured and its throughput binds it:
    :func:`~whichgpu.estimate.latency_range.held_share`), what the table's serves column
    and the cost chart state; None where no plan meets them."""
    run = option.runs[0] if option.runs else None
    if run is None or run.serving is None or run.serving.unmet is not None:
        return None
    return run.held_rps


def by_time(result: Recommendation) -> bool:
    """Whether the cost chart's x axis is time (else throughput: the hours are fixed, so
    every option takes the same time)."""
    return len({round(o.time_s or 0.0) for o in _shown(result)}) > 1


def cost_chart(result: Recommendation) -> CostChart | None:
    """Cost against time of every feasible, priced option; None when none is priced (an
    empty chart says nothing)."""
    shown = _shown(result)
    if not shown:
        return None
    service = is_service(result)
    timed = not service and by_time(result)
    points = []
    for option in shown:
        role: Role = "pick" if option is result.pick else "front" if option.pareto else "other"
        if service:
            x = served_rps(option) or 0.0
        else:
            x = (option.time_s or 0.0) / 3600 if timed else option.throughput or 0.0
        points.append(CostPoint(x, _cost(option), role, option_label(option), option.pareto))
    if service:  # the front of capacity against cost: no option serves more for less
        points = _capacity_front(points)
    return CostChart(
        points=tuple(points),
        timed=timed,
        per_job=any(o.cost_usd is not None for o in shown),
        unit=(shown[0].runs[0].unit or "") if shown[0].runs else "",
        demand=result.workload.components[0].request_rate if service else None,
    )


def _capacity_front(points: list[CostPoint]) -> list[CostPoint]:
    """The points with the front redrawn on capacity against cost (an option is on it where
    none costs less and serves at least as much): the ranking's own front weighs time,
    which a service at a rate does not have). Of points that coincide (two offers of one
    layout at one price) the front keeps one, the pick where it is one of them."""
    kept: set[tuple[float, float]] = set()
    on: set[int] = set()
    for i, p in sorted(enumerate(points), key=lambda ip: ip[1].role != "pick"):
        dominated = any(
            q.cost_usd <= p.cost_usd and q.x >= p.x and (q.cost_usd < p.cost_usd or q.x > p.x)
            for q in points
        )
        if not dominated and (p.x, p.cost_usd) not in kept:
            kept.add((p.x, p.cost_usd))
            on.add(i)
    out = []
    for i, p in enumerate(points):
        role: Role = p.role if p.role == "pick" else "front" if i in on else "other"
        out.append(CostPoint(p.x, p.cost_usd, role, p.label, i in on))
    return out


def memory_chart(result: Recommendation) -> MemoryChart | None:
    """The memory estimate of each model component on the pick (or the first option), by
    the layout, micro-batch and recomputation the recommender chose there; None when no
    component runs a model (a render job)."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.parallel import scaled_job
    from whichgpu.plan.jobs import model_job

    option = result.pick or (result.options[0] if result.options else None)
    if option is None:
        return None
    bars = []
    for run in option.runs:
        if not run.component.uses_model:
            continue
        arch, job = model_job(run.component)
        scaled = run.job or scaled_job(job, option.hardware.count, arch)[0]
        estimate = estimate_memory(arch, scaled)
        parts = tuple((k, v / BYTES_PER_GIB) for k, v in estimate.components.items() if v > 0)
        bars.append(MemoryBar(run.component.label, parts, run.capacity_gib))
    return MemoryChart(option_label(option), tuple(bars)) if bars else None


def text_width(text: str, size: float) -> float:
    """About how wide ``text`` draws at font size ``size`` (in the size's units): 0.6 em a
    Latin character (DejaVu Sans averages 0.55-0.6), 1 em a wide (CJK) one; for layout."""
    import unicodedata

    return size * sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6 for c in text)


def place_names(
    points: Sequence[tuple[float, float, str]],
    bounds: Area,
    marked: Sequence[Area],
    faint: Sequence[Area],
    size: float,
    gap: float,
) -> list[tuple[float, float, str, str]]:
    """Each point's name beside it, in the order given (the pick first), on a drawing whose
    y grows downward: right of the point, else left of it, above it, below it, whichever
    first stays inside ``bounds`` and clear of the names already placed, the ``marked``
    points and the ``faint`` ones; failing that, clear of the names and the marked points
    only; the first (the pick's), failing that too, clear of the names alone. A name with no
    such place is left out (its point is still drawn, and the table
    names it): names never overlap each other. Returns ``(x, baseline, anchor, text)``,
    the anchor as SVG's ``text-anchor`` (start, end, middle)."""
    placed: list[Area] = []
    out = []
    for i, (x, y, text) in enumerate(points):
        width = text_width(text, size)
        candidates = [
            (tx, ty, anchor, (left, ty - size + 1, left + width, ty + 2))
            for tx, ty, anchor, left in (
                (x + gap, y + size / 3, "start", x + gap),
                (x - gap, y + size / 3, "end", x - gap - width),
                (x, y - gap - 1, "middle", x - width / 2),
                (x, y + gap + size, "middle", x - width / 2),
            )
        ]
        inside = [c for c in candidates if bounds[0] <= c[3][0] and c[3][2] <= bounds[2]
                  and bounds[1] <= c[3][1] and c[3][3] <= bounds[3]]  # fmt: skip
        passes = [[*placed, *marked, *faint], [*placed, *marked]] + ([placed] if i == 0 else [])
        found = next(
            (c for obstacles in passes
             for c in inside if not any(_overlap(c[3], a) for a in obstacles)),
            None,
        )  # fmt: skip
        if found is not None:
            placed.append(found[3])
            out.append((found[0], found[1], found[2], text))
    return out


def _overlap(a: Area, b: Area) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
