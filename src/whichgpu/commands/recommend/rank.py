"""``recommend``: price every candidate, keep those that meet the constraints (both in
:mod:`~whichgpu.commands.recommend.pricing`), rank them by the objective, mark the Pareto
front (time vs cost) and explain the pick with codes.

Pipeline (DESIGN.md): workload → candidates (GPU × count × MIG slice) → memory → throughput
→ price per market (or purchase) → constraints → rank → reasons and warnings.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date
from typing import TYPE_CHECKING

from whichgpu.catalog.prices import Link
from whichgpu.catalog.records import GPU
from whichgpu.commands.recommend.candidates import hardware_for
from whichgpu.commands.recommend.options import (
    Option,
    Recommendation,
    hw_text,
    money,
    score_of,
    typical_error,
)
from whichgpu.commands.recommend.pricing import constraint_blockers, price_options
from whichgpu.commands.recommend.reasons import explain
from whichgpu.estimate.assumptions import MAX_TIED, STALE_PRICE_MONTHS
from whichgpu.estimate.cost import (
    break_even_months,
)
from whichgpu.frozen import evolve
from whichgpu.inputs.requests import Workload
from whichgpu.notes import Note, note
from whichgpu.plan import Hardware, Run, plan
from whichgpu.plan.jobs import prepare

__all__ = ["STALE_PRICE_MONTHS", "Option", "Recommendation", "recommend"]

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog
    from whichgpu.job import Job
    from whichgpu.models.arch import ModelArch


def _runs(
    hw: Hardware, workload: Workload, prepared: list[tuple[ModelArch, Job] | None]
) -> tuple[Run, ...]:
    """Each component planned on ``hw``; latency targets held at the confidence asked
    (:func:`~whichgpu.plan.core.latency_margin`); the NVLink bridges' note left to the pick
    (:func:`_finished_pick`: the only option whose runs' notes the answer says)."""
    from whichgpu.plan.core import latency_margin

    margin = latency_margin(workload.constraints.confidence)
    return tuple(plan(c, hw, p, margin=margin, bridge=False)
                 for c, p in zip(workload.components, prepared, strict=True))  # fmt: skip


def _objective_key(option: Option, objective: str) -> tuple[float, ...]:
    """Smaller is better; ties broken by cost, time, card count and names (deterministic).
    An option whose speed is extrapolated is held at the slow end of its range."""
    cost, per_h, time_s = _rounded(option)
    speed = -(_held_speed(option) or 0.0)
    primary: tuple[float, ...]
    if objective == "cost":
        primary = (cost, per_h)  # an unknown cost is infinite (_rounded): ranked by $/h
    elif objective == "time":
        primary = (time_s, speed)
    else:
        value = option.value or 0.0
        if option.extrapolated and option.throughput:
            value *= (_held_speed(option) or 0.0) / option.throughput
        primary = (-value,)
    return (*primary, cost, per_h, time_s, round(speed, 6), float(option.gpus))


def _held_speed(option: Option) -> float | None:
    """The throughput the ranking holds ``option`` to: the slow end of its likely range
    where it rests on an extrapolated factor, else its estimate."""
    run = option.runs[0] if option.runs else None
    if option.extrapolated and run is not None and run.throughput_low:
        return run.throughput_low
    return option.throughput


def _rounded(option: Option) -> tuple[float, float, float]:
    """Cost, $/h and seconds to the cent, the hundredth of a cent and the second (infinite
    where unknown): float noise must not reorder equal options."""
    inf = float("inf")
    slow = option.extrapolated  # held at the slow end of its range
    cost_usd = option.cost_usd_slow if slow else option.cost_usd
    seconds = option.time_high_s if slow else option.time_s
    cost = round(cost_usd, 2) if cost_usd is not None else inf
    per_h = round(option.usd_per_h, 4) if option.usd_per_h is not None else inf
    time_s = round(seconds) if seconds is not None else inf
    return cost, per_h, time_s


#: Objective figures this close (relative) are equal for the ranking: the same job on 1, 2,
#: 4 or 8 of one card costs the same to a tenth of a cent when its rate scales with the
#: count, and which comes first must not turn on that tenth; the next keys decide.
EQUAL_FIGURE = 1e-3


def rank(options: Sequence[Option], objective: str) -> list[Option]:
    """Feasible options first, those priced on a dated offer before those priced on an
    undated one (a price without a date is a guess: it does not outrank an observed one),
    each by the objective; then the rest, by the same key. Options whose objective figure
    is within :data:`EQUAL_FIGURE` of the first of their run are ordered among themselves by
    :func:`_tie_key`: at the same cost the lower $/h (the fewer GPUs: no more hardware than
    the job needs), at the same time the cheaper."""

    def key(o: Option) -> tuple[bool, bool, tuple[float, ...], str, str, str]:
        return (
            not o.feasible,
            o.price_as_of == "undated",
            _objective_key(o, objective),
            o.gpu.id,
            o.hardware.mig_profile or "",
            o.market or "",
        )

    keyed = sorted(((key(o), o) for o in options), key=lambda pair: pair[0])
    out: list[Option] = []
    start = 0
    for i in range(1, len(keyed) + 1):
        if i < len(keyed) and _same_figure(keyed[start][1], keyed[i][1], objective):
            continue
        if i - start == 1:
            out.append(keyed[start][1])
        else:
            run = sorted(keyed[start:i], key=lambda pair: (_tie_key(pair[1], objective), pair[0]))
            out += [o for _key, o in run]
        start = i
    return out


def _tie_key(option: Option, objective: str) -> tuple[float, ...]:
    """How options of one objective figure are ordered: for cost, the lower $/h (then the
    sooner done), as the ranking's key has it; for time and value, the cheaper (then the
    sooner done)."""
    cost, per_h, time_s = _rounded(option)
    if objective == "cost":
        return (per_h, time_s)
    return (cost, time_s)


def _same_figure(a: Option, b: Option, objective: str) -> bool:
    """Whether ``b``'s objective figure (:func:`score_of`, unrounded) equals ``a``'s within
    :data:`EQUAL_FIGURE` (both feasible or both not, both priced on a dated offer or both on
    an undated one: a tie is never broken in favour of a price without a date)."""
    if a.feasible != b.feasible or (a.price_as_of == "undated") != (b.price_as_of == "undated"):
        return False
    x, y = score_of(a, objective), score_of(b, objective)
    if x is None or y is None or x == 0:
        return x == y
    return abs(y - x) <= EQUAL_FIGURE * abs(x)


def mark_ties(ranked: list[Option], workload: Workload, objective: str) -> list[Option]:
    """The feasible options whose objective figure is within the pick's typical error of
    the pick's (at most :data:`MAX_TIED`), marked ``tied``: the ranking cannot tell them
    apart. A cost with the hours fixed carries no estimate error: no ties there."""
    pick = ranked[0]
    fixed_hours = all(c.hours is not None for c in workload.components)
    if objective == "cost" and fixed_hours:
        return ranked
    score = pick.score
    if not score:
        return ranked
    band = typical_error(pick)
    out, seen = list(ranked), {pick.gpu.id}
    for i, option in enumerate(ranked[1:], start=1):
        if len(seen) > MAX_TIED or not option.feasible or option.score is None:
            break
        if abs(option.score - score) / abs(score) > band:
            break  # ranked by the objective: the rest are further
        if option.gpu.id not in seen:  # another GPU's best: the same card is not a rival
            out[i] = evolve(option, tied=True)
            seen.add(option.gpu.id)
    return out


def other_axis(option: Option, objective: str) -> float:
    """The figure the objective does not rank by: the time for cost, the cost for time
    (infinite where unknown; None for value, which weighs both)."""
    inf = float("inf")
    if objective == "cost":
        return option.time_s if option.time_s is not None else inf
    cost = option.cost_usd if option.cost_usd is not None else option.usd_per_h
    return cost if cost is not None else inf


def by_other_axis(ranked: list[Option], objective: str) -> list[Option]:
    """The pick and the options tied with it (inside the estimate's typical error on the
    objective: the ranking cannot tell them apart) weighed on the other axis: of two jobs
    that cost the same within the error, the one that finishes sooner, where it saves more
    time (relative) than it costs more; of two as fast, the cheaper likewise. Measured
    options only: an extrapolated one is not preferred on a figure it rests on (its slow
    end already ranks it)."""
    if objective not in ("cost", "time") or not ranked:
        return ranked
    pick = ranked[0]
    if pick.extrapolated or not pick.score or other_axis(pick, objective) in (0.0, float("inf")):
        return ranked

    def trade(o: Option) -> float:
        """What ``o`` saves on the other axis less what it loses on the objective."""
        gain = 1 - other_axis(o, objective) / other_axis(pick, objective)
        loss = (o.score or 0.0) / (pick.score or 1.0) - 1
        return gain - loss

    better = [o for o in ranked[1:] if o.tied and not o.extrapolated and o.score and trade(o) > 0]
    if not better:
        return ranked
    best = max(better, key=trade)
    rest = [evolve(o, tied=True) if o is ranked[0] else o for o in ranked if o is not best]
    return [evolve(best, tied=False), *rest]


def pareto_front(options: Sequence[Option]) -> set[int]:
    """Indices of the feasible options that no other feasible option beats on cost, time and
    throughput together (where hours of use fix the time, throughput is what differs)."""
    inf = float("inf")
    points = [
        (
            i,
            (
                o.cost_usd if o.cost_usd is not None else (o.usd_per_h or inf),
                o.time_s if o.time_s is not None else inf,
                -(o.throughput or 0.0),
            ),
        )
        for i, o in enumerate(options)
        if o.feasible
    ]

    # Kung, Luccio & Preparata (1975): in lexicographic order a point can only be dominated
    # by one before it, and if it is, by one on the front so far (domination is transitive)
    points.sort(key=lambda point: point[1])
    front: list[tuple[float, ...]] = []
    out: set[int] = set()
    for i, p in points:
        if not any(q != p and q[0] <= p[0] and q[1] <= p[1] and q[2] <= p[2] for q in front):
            front.append(p)
            out.add(i)
    return out


def evaluate(
    catalog: Catalog,
    workload: Workload,
    gpus: Sequence[GPU] | None = None,
    only: Collection[Hardware] | None = None,
) -> list[Option]:
    """Every candidate of the catalog (of ``gpus``; ``only``: of those hardware), priced and
    checked (not ranked)."""
    prepared = prepare(workload)
    out: list[Option] = []
    c = workload.constraints
    for gpu in gpus or catalog.gpus:
        memo: dict[tuple[int, int, str | None, int | None, Link | None], tuple[Run, ...]] = {}
        # a GPU nobody offers is shown once, at the fewest cards that hold the job: it is
        # not ranked, and more of it would say nothing more
        unoffered = c.mode != "buy" and not catalog.prices_for(gpu.id, c.markets)  # type: ignore[arg-type]
        for hw in hardware_for(catalog, gpu, workload.components, c):
            if only is not None and hw not in only:
                continue
            key = (hw.count, hw.services, hw.mig_profile, hw.node_gpus, hw.link)
            if key not in memo:  # instance shapes that hold it in one node time it alike
                memo[key] = _runs(hw, workload, prepared)
            runs = memo[key]
            for option in price_options(catalog, hw, runs, workload):
                blockers = constraint_blockers(option, workload)
                out.append(evolve(option, feasible=not blockers, blockers=blockers))
            if unoffered and hw.mig is None and all(run.fits for run in runs):
                break
    return out


def _finished_pick(option: Option, workload: Workload) -> Option:
    """The pick's runs as the answer states them: with the note of what NVLink bridges would
    gain (:func:`~whichgpu.plan.core.with_bridge_note`, which :func:`_runs` leaves out: its
    replan with bridges is asked of the one option whose notes the answer says), and each
    served model with the front its plan was chosen on (:func:`~whichgpu.plan.serving.
    with_front`; whole GPUs of one service, not MIG slices)."""
    from whichgpu.plan.core import latency_margin, with_bridge_note
    from whichgpu.plan.serving import with_front

    hw = option.hardware
    margin = latency_margin(workload.constraints.confidence)
    fronts = hw.mig is None and hw.services == 1
    runs = []
    for run, p in zip(option.runs, prepare(workload), strict=True):
        run = with_bridge_note(run, hw, p, margin=margin)
        runs.append(run if p is None or not fronts else with_front(run, p[0], hw.gpu, hw.count))
    return evolve(option, runs=tuple(runs))


def _against_renting(
    catalog: Catalog, workload: Workload, objective: str, pick: Option
) -> Note | None:
    """Buying ``pick`` against the rental that would do the same job best on the same
    objective (the same request ranked as renting): after how many months of use owning
    costs less, or that it never does."""

    c = workload.constraints
    renting = evolve(workload, constraints=evolve(c, mode="rent"))
    rented = next((o for o in rank(evaluate(catalog, renting), objective) if o.feasible), None)
    if rented is None or rented.usd_per_h is None or pick.purchase_usd is None:
        return None
    months = break_even_months(
        pick.purchase_usd, rented.usd_per_h, pick.power_usd_per_h or 0.0, c.hours_per_month
    )
    params: dict[str, str | float] = {
        "option": hw_text(pick),
        "rented": hw_text(rented),
        "usd_per_h": money(rented.usd_per_h),
        "provider": rented.price_provider or "",
        "as_of": rented.price_as_of or "undated",
    }
    if months is None:
        return note("reason_buy_never", **params)
    return note("reason_buy_vs_rental", months=round(months, 1),
                hours_per_month=round(c.hours_per_month), **params)  # fmt: skip


def recommend(
    catalog: Catalog,
    workload: Workload,
    objective: str = "cost",
    baseline: GPU | None = None,
    today: date | None = None,
) -> Recommendation:
    """The ranked options, the pick (None when nothing is feasible) and why; ``objective``
    is one of :data:`~whichgpu.inputs.requests.OBJECTIVES`."""
    from whichgpu.inputs import choice
    from whichgpu.inputs.requests import OBJECTIVES

    objective = choice(objective, OBJECTIVES, ("objective",))
    options = evaluate(catalog, workload)
    ranked = rank(options, objective)
    front = pareto_front(ranked)
    ranked = [
        evolve(o, score=score_of(o, objective), pareto=i in front) for i, o in enumerate(ranked)
    ]
    pick = ranked[0] if ranked and ranked[0].feasible else None
    if pick is None:
        from whichgpu.commands.recommend.infeasible import out_of_reach

        unreachable = out_of_reach(ranked, workload)
        if unreachable is not None:
            raise unreachable
    if pick is not None:
        ranked = by_other_axis(mark_ties(ranked, workload, objective), objective)
        pick = ranked[0] = _finished_pick(ranked[0], workload)
    base = None
    if baseline is not None:
        same = [o for o in ranked if o.gpu.id == baseline.id]
        base = same[0] if same else None
    result = explain(catalog, workload, objective, tuple(ranked), pick, base, today or date.today())
    if pick is not None and workload.constraints.mode == "buy":
        versus = _against_renting(catalog, workload, objective, pick)
        if versus is not None:
            result = evolve(result, reasons=(*result.reasons, versus))
    from whichgpu.commands.recommend.alternatives import lower_format_notes

    def options_on(
        lower: Workload, gpus: list[GPU], only: Collection[Hardware] | None
    ) -> list[Option]:
        return evaluate(catalog, lower, gpus, only)

    def rank_of(options: list[Option]) -> list[Option]:
        return rank(options, objective)

    lower = lower_format_notes(catalog, workload, objective, pick, (options_on, rank_of), ranked)
    if pick is None:
        return evolve(result, infeasible=(*result.infeasible, *lower))
    return evolve(result, reasons=(*result.reasons, *lower))
