"""What a recommendation's two charts show, as numbers: the cost of every option that meets
the constraints against its time (or throughput, when the hours are fixed), with the Pareto
front and the pick marked; and the pick's memory per GPU by component against the GPU's
capacity. One source for both drawings: matplotlib's for ``recommend --plot``
(:mod:`whichgpu.render.plot`) and the web page's SVG (:mod:`whichgpu.web.charts`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from whichgpu.commands.recommend.rank import Option, Recommendation
from whichgpu.i18n import _, fmt
from whichgpu.units import BYTES_PER_GIB

Role = Literal["pick", "front", "other"]


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
        """The chart's title, in the reader's language (as are the three below)."""
        return _("Cost against time") if self.timed else _("Cost against throughput")

    def x_title(self) -> str:
        return _("time, hours") if self.timed else fmt(_("throughput ({unit})"), unit=self.unit)

    def y_title(self) -> str:
        return _("cost per job, US$") if self.per_job else _("cost per hour, US$")

    def front_legend(self) -> str:
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
    timed = by_time(result)
    points = []
    for option in shown:
        role: Role = "pick" if option is result.pick else "front" if option.pareto else "other"
        x = (option.time_s or 0.0) / 3600 if timed else option.throughput or 0.0
        points.append(CostPoint(x, _cost(option), role, option_label(option), option.pareto))
    return CostChart(
        points=tuple(points),
        timed=timed,
        per_job=any(o.cost_usd is not None for o in shown),
        unit=(shown[0].runs[0].unit or "") if shown[0].runs else "",
    )


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
