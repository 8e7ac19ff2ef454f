"""What would make an infeasible workload feasible, with figures: the fewest GPUs that hold
a model, the changes that make it fit, the budget or deadline the nearest option needs, and
a latency target no option meets at any load."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from whichgpu.commands.recommend.candidates import has_capability
from whichgpu.commands.recommend.options import Option, cost_of, hours_of, hw_text, money
from whichgpu.errors import InvalidInput, Ref
from whichgpu.inputs.requests import Workload
from whichgpu.notes import Note, note

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog
    from whichgpu.estimate.serving_types import Targets


def _why_nothing_fits(catalog: Catalog, first: Option, workload: Workload) -> list[Note]:
    """For each model component that fits nowhere: the fewest GPUs with every capability
    the workload requires that would hold it, or, when no count does (activations are not
    sharded), the changes that make it fit on the largest such GPU at ``max_gpus``."""
    from whichgpu.commands.fit import what_would_fit
    from whichgpu.estimate.parallel import min_gpus, scaled_job, usable_bytes
    from whichgpu.plan.jobs import model_job

    c = workload.constraints
    # the GPUs with what the workload requires (a display, ECC…): what would do is one of them
    allowed = [g for g in catalog.gpus if all(has_capability(g, cap) for cap in c.requires)]
    out: list[Note] = []
    for comp, run in zip(workload.components, first.runs, strict=True):
        if not comp.uses_model or run.fits:
            continue
        arch, job = model_job(comp)
        best: tuple[int, str] | None = None
        for gpu in sorted(allowed, key=lambda g: (-g.memory_gib, g.id)):
            count = min_gpus(arch, job, gpu)[0]
            if count is not None and (best is None or count < best[0]):
                best = (count, gpu.name)
        if best is not None:
            out.append(
                note(
                    "infeasible_memory",
                    component=comp.label,
                    max_gpus=c.max_gpus,
                    count=best[0] * comp.services,
                    gpu=best[1],
                )
            )
            continue
        largest = max(allowed or catalog.gpus, key=lambda g: (g.memory_gib, g.id))
        scaled, _strategy = scaled_job(job, c.max_gpus, arch)
        changes = what_would_fit(arch, scaled, usable_bytes(largest))
        if not changes:
            out.append(note("infeasible_no_change", component=comp.label, gpu=largest.name))
            continue
        out.append(
            note("infeasible_no_count", component=comp.label, gpu=largest.name, max_gpus=c.max_gpus)
        )
        out.extend(changes[0].notes)
    return out or [note("infeasible_nothing")]


def out_of_reach(ranked: Sequence[Option], workload: Workload) -> InvalidInput | None:
    """A latency target no option meets at any load: for a served component, every option
    that holds it misses the same target even at the lightest load (the serving planner's
    ``unmet``). The error names the target's field and the nearest option, with what it
    reaches; a target some option meets, or two that the options miss in turn, is no such
    error (the recommendation says what blocks each option)."""
    for index, comp in enumerate(workload.components):
        missed: dict[str, list[tuple[float, float, Option, Targets]]] = {}
        met = False
        for option in ranked:
            run = option.runs[index]
            if not run.fits or run.serving is None:
                continue
            if run.serving.unmet is None:
                met = True
                break
            target, best_s = run.serving.unmet
            entry = (best_s, cost_of(option) or 0.0, option, run.serving.targets)
            missed.setdefault(target, []).append(entry)
        if met or len(missed) != 1:
            continue
        ((target, misses),) = missed.items()
        best_s, _cost, nearest, targets = min(misses, key=lambda m: m[:2])
        held = targets.margin > 1  # at the slow end of the estimate's likely range
        return InvalidInput(
            "latency_out_of_reach_likely" if held else "latency_out_of_reach",
            ("components", index, target),
            target=target.upper(),
            percentile=comp.percentile,
            limit_ms=round(1e3 * (targets.limit_s(target) or 0.0), 1),
            component=comp.label,
            option=hw_text(nearest),
            best_ms=round(1e3 * best_s * targets.margin_of(target), 1),
            **({"point_ms": round(1e3 * best_s, 1), "setting": Ref(("confidence",))}
               if held else {}),
        )  # fmt: skip
    return None


#: The blockers whose nearest option the answer names, and the note that names it
NEAREST_CODES = ("block_budget", "block_budget_per_h", "block_deadline")
NEAREST_MESSAGES = ("infeasible_budget", "infeasible_budget_per_h", "infeasible_deadline")


def infeasible(catalog: Catalog, ranked: Sequence[Option], workload: Workload) -> list[Note]:
    """What would make the workload feasible: the nearest option for each blocking
    constraint, or why nothing fits."""
    c = workload.constraints
    services = max(comp.services for comp in workload.components)
    if services > c.max_gpus and not any(o.hardware.mig is not None for o in ranked):
        return [note("infeasible_services", services=services, max_gpus=c.max_gpus)]
    if not ranked:
        return [note("infeasible_nothing")]
    needed = [cap for cap in c.requires]
    if needed and not any(all(has_capability(g, cap) for cap in needed) for g in catalog.gpus):
        return [note("infeasible_capability", capabilities=", ".join(needed))]
    out: list[Note] = []
    fitting = [o for o in ranked if o.fits]
    if not fitting:
        return _why_nothing_fits(catalog, ranked[0], workload)

    def codes(o: Option) -> set[str]:  # a blocker said at the range's slow end too
        return {b.code.removesuffix("_likely").removesuffix("_slow") for b in o.blockers}

    # the options blocked by one constraint alone; where every option is blocked by two or
    # more, the nearest to each constraint is still what would do (the fastest for a
    # deadline, the cheapest for a budget), said with its name, whatever else blocks it
    alone = any(
        o.blockers and len(codes(o)) == 1 and codes(o) <= {*NEAREST_CODES, "block_rate_headroom"}
        for o in ranked
    )

    def nearly(code: str) -> list[Option]:
        if alone:
            return [o for o in ranked if o.blockers and codes(o) <= {code}]
        return [o for o in ranked if code in codes(o)]

    likely = c.confidence == "likely"  # held at the slow end of the estimate's range

    def held_time(o: Option) -> float | None:
        return o.time_high_s if likely else o.time_s

    def held_cost(o: Option) -> float | None:
        return o.cost_usd_slow if likely and o.cost_usd is not None else o.cost_usd

    for code, message in zip(NEAREST_CODES, NEAREST_MESSAGES, strict=True):
        near = nearly(code)
        if not near:
            continue
        if code == "block_deadline":
            best = min(near, key=lambda o: (held_time(o) or 0.0, o.cost_usd or 0.0))
            out.append(
                note(
                    message + ("_likely" if likely else ""),
                    option=hw_text(best),
                    hours=hours_of(held_time(best)),
                    deadline=c.deadline_h or 0,
                    cost=money(held_cost(best)),
                    **({"field": Ref(("confidence",))} if likely else {}),
                )
            )
        else:
            per_hour = code == "block_budget_per_h"
            best = min(  # a dated offer first, as the table ranks them (rank.py)
                near,
                key=lambda o: (
                    o.price_as_of == "undated",
                    (o.usd_per_h if per_hour else held_cost(o) or cost_of(o)) or 0.0,
                    o.time_s or 0.0,
                ),
            )
            out.append(
                note(
                    message + ("_likely" if likely and code == "block_budget" else ""),
                    option=hw_text(best),
                    cost=money(held_cost(best)),
                    **(
                        {"field": Ref(("confidence",))} if likely and code == "block_budget" else {}
                    ),
                    usd_per_h=money(best.usd_per_h),
                    budget=(c.budget_usd if code == "block_budget" else c.budget_usd_per_h) or 0,
                )
            )
    short = nearly("block_rate_headroom")
    reach = _rate_reach(short, workload) if short else None
    gpus = None if reach is None else reach.params["gpus"]
    if reach is not None and isinstance(gpus, int) and gpus > c.max_gpus:  # the limit binds
        out.append(reach)
    if not out:
        first = next((o for o in ranked if o.fits), ranked[0])
        out.extend(first.blockers)
    return out


def _rate_reach(short: Sequence[Option], workload: Workload) -> Note:
    """Options that meet the latency targets but serve less than the request rate at the
    utilisation a service is planned at (:data:`TARGET_UTILIZATION`), each at the slow end
    of its range where the plan holds it there: the one whose copies
    serve the demand for the least per hour on a dated offer (then the fewest GPUs), with
    what one serves,
    how many copies the demand takes and the ``max_gpus`` that allows them (said where the
    GPU limit is what binds: larger counts within it were blocked by something else)."""
    import math

    from whichgpu.estimate.assumptions import TARGET_UTILIZATION

    def reach(option: Option) -> tuple[float, float, int, float]:
        run = next(r for r in option.runs if not r.meets_rate and r.serving is not None)
        capacity = run.held_rps or 0.0  # at the slow end it is held to, as its blocker says
        demand = run.component.request_rate or 0.0
        copies = math.ceil(demand / (capacity * TARGET_UTILIZATION)) if capacity else 0
        hourly = copies * option.usd_per_h if option.usd_per_h is not None else math.inf
        return capacity, demand, copies, hourly

    reached = {id(o): reach(o) for o in short}
    # a dated offer first, as the ranking orders them (rank.py: an undated price is a guess)
    best = min(short, key=lambda o: (o.price_as_of == "undated", reached[id(o)][3],
                                     reached[id(o)][2] * o.gpus, o.key))  # fmt: skip
    capacity, demand, copies, hourly = reached[id(best)]
    component = next(r.component for r in best.runs if not r.meets_rate)
    return note(
        "infeasible_rate",
        component=component.label,
        option=hw_text(best),
        capacity=round(capacity, 2),
        demand=demand,
        target=TARGET_UTILIZATION,
        copies=copies,
        gpus=copies * best.gpus,
        usd_per_h=money(hourly if math.isfinite(hourly) else 0.0),
        field=Ref(("max_gpus",)),
    )
