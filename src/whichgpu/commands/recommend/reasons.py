"""Why the pick, what to watch, and what would make an infeasible workload feasible: all as
:class:`~whichgpu.notes.Note` codes with parameters, rendered per language elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from whichgpu.commands.recommend.candidates import has_capability
from whichgpu.commands.recommend.infeasible import infeasible
from whichgpu.commands.recommend.options import (
    Option,
    Recommendation,
    between_instances,
    cost_of,
    held_cost_of,
    hours_of,
    hw_text,
    money,
)
from whichgpu.errors import Ref
from whichgpu.estimate.assumptions import PRICE_RANGE_WARN_RATIO, STALE_PRICE_MONTHS
from whichgpu.inputs.requests import Workload
from whichgpu.notes import Note, note

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog


def _objective_reason(pick: Option, ranked: Sequence[Option], objective: str) -> Note:
    rival = next((o for o in ranked if o.feasible and o.gpu.id != pick.gpu.id), None)
    per_job = pick.cost_usd is not None
    params: dict[str, str | float] = {"option": hw_text(pick)}
    if objective == "time":
        # hours of use fix the time: the faster option is the one with more throughput
        fixed = all(run.component.hours is not None for run in pick.runs)
        code = "reason_fastest" if pick.time_s is not None and not fixed else "reason_fastest_rate"
        params |= {"hours": hours_of(pick.time_s), "rate": round(pick.throughput or 0, 1),
                   "unit": pick.runs[0].unit or ""}  # fmt: skip
        if rival is not None:
            params |= {
                "rival": hw_text(rival),
                "rival_hours": hours_of(rival.time_s),
                "rival_rate": round(rival.throughput or 0, 1),
            }
    elif objective == "value":
        code = "reason_best_value"
        params |= {"value": round(pick.value or 0, 1), "unit": pick.runs[0].unit or ""}
        if rival is not None:
            params |= {"rival": hw_text(rival), "rival_value": round(rival.value or 0, 1)}
    else:
        code = "reason_cheapest" if per_job else "reason_cheapest_per_h"
        params |= {"cost": money(cost_of(pick))}
        if rival is not None:
            params |= {"rival": hw_text(rival), "rival_cost": money(cost_of(rival))}
    if rival is None:
        code += "_only"
        params = {k: v for k, v in params.items() if not k.startswith("rival")}
    return note(code, **params)


def _run_reasons(pick: Option) -> list[Note]:
    out: list[Note] = []
    for run in pick.runs:
        label = run.component.label
        if run.needed_gib is not None:
            out.append(
                note(
                    "reason_fits",
                    component=label,
                    needed=round(run.needed_gib, 1),
                    capacity=round(run.capacity_gib, 1),
                    strategy=run.strategy,
                )
            )
        if run.throughput is not None:
            rate, unit = run.throughput, run.unit or ""
            if unit.endswith("/s") and rate < 1:  # a fraction a second reads as a rate a minute
                rate, unit = rate * 60, unit[: -len("/s")] + "/min"
            params: dict[str, str | float] = {
                "component": label,
                "rate": round(rate, 1),
                "unit": unit,
                "bound": run.bound or "",
                "provenance": run.provenance,
            }
            if run.time_s is not None:
                out.append(note("reason_speed_time", hours=hours_of(run.time_s), **params))
            else:
                out.append(note("reason_speed", **params))
    return out


def _layout_reason(pick: Option) -> Note | None:
    """A served pick's layout against the other one its engine runs on the same GPUs:
    prefill and decode on separate workers, or replicas that do both (what each serves
    under the targets; their cost an hour and a million output tokens are the GPUs' and the
    demand's, the same for both)."""
    run = pick.runs[0] if pick.runs else None
    plan = run.serving if run is not None else None
    if plan is None or (plan.disaggregated is None and not plan.disaggregated_rps):
        return None
    per_million = plan.usd_per_million_tokens(pick.usd_per_h)
    common: dict[str, str | float] = {
        "component": run.component.label if run is not None else "",
        "usd_h": round(pick.usd_per_h or 0.0, 2),
        "per_million": round(per_million or 0.0, 3),
    }
    if plan.disaggregated is not None:
        return note("reason_disaggregated", disaggregated=round(plan.served_rps, 2),
                    aggregated=round(plan.aggregated_rps, 2), **common)  # fmt: skip
    if plan.disaggregated_held:
        common["field"] = Ref(("layout",))  # type: ignore[assignment]
    code = "reason_aggregated_held" if plan.disaggregated_held else "reason_aggregated"
    return note(code, aggregated=round(plan.served_rps, 2),
                disaggregated=round(plan.disaggregated_rps, 2), **common)  # fmt: skip


def _price_reason(pick: Option, workload: Workload) -> Note:
    if pick.purchase_usd is not None:
        rent = pick.rent_compared
        return (
            note(
                "reason_buy",
                purchase=money(pick.purchase_usd),
                condition=pick.price_provider or "",
                power=round(pick.power_usd_per_h or 0, 3),
                months=round(pick.break_even_months or 0, 1),
                hours_per_month=round(workload.constraints.hours_per_month),
                rent=money(rent.price_usd_per_h * pick.gpus),
                provider=rent.provider,
                market=rent.market,
                as_of=rent.as_of,
            )
            if pick.break_even_months is not None and rent is not None
            else note(
                "reason_buy_no_rent",
                purchase=money(pick.purchase_usd),
                condition=pick.price_provider or "",
                power=round(pick.power_usd_per_h or 0, 3),
            )
        )
    listing = pick.listing
    if listing is not None and listing.instance is not None:
        return note(
            "reason_price_instance",
            usd_per_h=money(pick.usd_per_h),
            option=hw_text(pick),
            instances=pick.hardware.instances,
            instance=listing.instance,
            gpus=listing.gpus_per_instance,
            instance_usd_per_h=money(listing.instance_usd_per_h),
            provider=listing.provider,
            market=pick.market or "",
            option_gpus=pick.gpus,
            as_of=listing.as_of,
        )
    return note(
        "reason_price",
        usd_per_h=money(pick.usd_per_h),
        option=hw_text(pick),
        market=pick.market or "",
        provider=pick.price_provider or "",
        as_of=pick.price_as_of or "undated",
    )


def _tie_reason(
    catalog: Catalog, pick: Option, other: Option, workload: Workload, objective: str
) -> Note:
    """``other`` ties with the pick (:func:`~whichgpu.commands.recommend.rank.mark_ties`): how far
    apart they are, the band, and what would separate them."""
    from whichgpu.commands.recommend.options import typical_error

    markets = workload.constraints.markets

    def high(option: Option) -> float:
        value = option.cost_usd_high if option.cost_usd is not None else option.usd_per_h_high
        return money(value)

    def offers(option: Option) -> int:
        return len(catalog.prices_for(option.gpu.id, markets))  # type: ignore[arg-type]

    score, other_score = pick.score or 0.0, other.score or 0.0
    return note(
        "reason_tie",
        option=hw_text(other),
        diff=round(abs(other_score - score) / abs(score), 4) if score else 0.0,
        objective=objective,
        band=round(typical_error(pick), 3),
        pick_high=high(pick),
        other_high=high(other),
        pick_offers=offers(pick),
        other_offers=offers(other),
        pick_memory=pick.gpu.memory_gib,
        other_memory=other.gpu.memory_gib,
    )


def _nodes_reason(pick: Option) -> Note | None:
    """Where an option (the pick, or one tied with it) spans several instances: the network
    between them, as its offer sells it (:class:`~whichgpu.catalog.records.InstanceNetwork`)
    or as assumed (:func:`~whichgpu.estimate.parallel.instance_gbit`). A row of 1-GPU VMs
    over Ethernet reads like a node otherwise, and runs slower."""
    hw = pick.hardware
    between = between_instances(pick)
    if between is None or hw.node_gpus is None:
        return None
    plans = [run.serving for run in pick.runs]
    if all(p is not None and p.disaggregated is None and p.gpus_per_replica <= hw.node_gpus
           for p in plans):  # fmt: skip
        # served replicas, each inside an instance: nothing of theirs crosses the network
        return note("reason_nodes_replicas", option=hw_text(pick), instances=hw.instances,
                    gpus=hw.node_gpus)  # fmt: skip
    if between.network == "nvlink":  # a rack-scale fabric over the instances (NVL72)
        return note("reason_nodes_nvlink", option=hw_text(pick), instances=hw.instances,
                    gpus=hw.node_gpus, domain=pick.gpu.nvlink_domain_gpus or 0)  # fmt: skip
    if between.fabric is not None and pick.listing is not None:
        return note(
            "reason_nodes_sold",
            option=hw_text(pick),
            instances=hw.instances,
            gpus=hw.node_gpus,
            fabric=between.fabric,
            gbit=between.gbit,
            provider=pick.listing.provider,
            instance=pick.listing.instance or "",
        )
    return note(
        "reason_nodes",
        option=hw_text(pick),
        instances=hw.instances,
        gpus=hw.node_gpus,
        network=between.network,
        gbit=between.gbit,
    )


def _slower(a: Option, b: Option) -> bool:
    if a.time_s is not None and b.time_s is not None and a.time_s != b.time_s:
        return a.time_s > b.time_s
    return (a.throughput or 0.0) < (b.throughput or 0.0)


def unused_premium(option: Option, cheaper: Option, workload: Workload) -> list[str]:
    """Codes of the features ``option`` pays for that this workload does not use and
    ``cheaper`` does without (the article's C38 list: VRAM beyond need, HBM bandwidth,
    NVLink, MIG, FP64); rendered through :data:`whichgpu.notes.FEATURES`."""
    gpu, other = option.gpu, cheaper.gpu
    used_fp64 = any(c.kind == "fp64" for c in workload.components)
    features = []
    if gpu.memory_gib > other.memory_gib:
        features.append("vram")
    if gpu.memory_type.upper().startswith("HBM") and not other.memory_type.upper().startswith(
        "HBM"
    ):
        features.append("hbm")
    if gpu.has_nvlink and option.hardware.count == 1 and not other.has_nvlink:
        features.append("nvlink")
    if gpu.has_mig and option.hardware.mig is None and "mig" not in workload.constraints.requires:
        features.append("mig")
    if has_capability(gpu, "fp64") and not used_fp64 and not has_capability(other, "fp64"):
        features.append("fp64")
    return features


def over_provisioning(
    option: Option,
    ranked: Sequence[Option],
    workload: Workload,
    objective: str = "cost",
    pick: bool = False,
) -> Note | None:
    """C38, computed: ``option`` costs more than the cheapest feasible option for features
    this workload leaves unused; the share of the money it would waste. When speed is the
    objective, only options at least as fast count; against a dated price, only dated ones
    (an undated price, ranked after them, does not show waste). Against an option tied with
    the ``pick`` (the ranking took the pick over it, within the estimate's error, for
    finishing sooner), the note says that trade rather than a waste."""
    feasible = [o for o in ranked if o.feasible and held_cost_of(o) is not None]
    if option.price_as_of != "undated":
        feasible = [o for o in feasible if o.price_as_of != "undated"]
    if objective == "time":
        feasible = [o for o in feasible if not _slower(o, option)]
    if not feasible or cost_of(option) is None:
        return None
    # to the cent, then the fewest GPUs: eight cards that cost what one does are not
    # cheaper; an extrapolated option at the slow end of its range, as it is ranked
    cheapest = min(feasible, key=lambda o: (money(held_cost_of(o)), o.key))
    cost, low = cost_of(option) or 0.0, held_cost_of(cheapest) or 0.0
    if cheapest.gpu.id == option.gpu.id or cost <= low:
        return None
    features = unused_premium(option, cheapest, workload)
    if not features:
        return None
    return note(
        "warn_over_provisioned_tied" if pick and cheapest.tied else "warn_over_provisioned",
        option=hw_text(option),
        features=",".join(features),
        cheaper=hw_text(cheapest),
        cost=money(cost),
        cheaper_cost=money(low),
        waste=round((cost - low) / cost, 3),
        per_job="job" if option.cost_usd is not None else "hour",
    )


def _warnings(
    pick: Option,
    ranked: Sequence[Option],
    workload: Workload,
    unpriced: Sequence[str],
    today: date,
    objective: str,
) -> list[Note]:
    from whichgpu.catalog.prices import age_months

    out: list[Note] = []
    for run in pick.runs:
        out.extend(run.notes)
        if run.component.kind == "render" and pick.gpu.rt_cores == 0:
            out.append(note("warn_no_rt_cores", gpu=pick.gpu.name))
    over = over_provisioning(pick, ranked, workload, objective, pick=True)
    if over is not None:
        out.append(over)
    if pick.market == "spot":
        out.append(note("warn_spot"))
    if pick.price_as_of is not None:
        months = age_months(pick.price_as_of, today)
        if months is None:
            out.append(note("warn_price_undated", gpu=pick.gpu.name))
        elif months > STALE_PRICE_MONTHS:
            out.append(note("warn_price_age", gpu=pick.gpu.name, as_of=pick.price_as_of))
    if (
        pick.cost_usd_high is not None
        and pick.cost_usd
        and pick.cost_usd_high > pick.cost_usd * PRICE_RANGE_WARN_RATIO
    ):
        out.append(
            note("warn_price_range", cost=money(pick.cost_usd), high=money(pick.cost_usd_high))
        )
    if unpriced:
        out.append(
            note(
                "warn_unpriced",
                gpus=", ".join(unpriced),
                markets="purchase"
                if workload.constraints.mode == "buy"
                else ", ".join(workload.constraints.markets),
            )
        )
    return out


def _price_origin(catalog: Catalog, today: date) -> Note:
    """Where the prices come from and how old they are: the snapshot ``prices update``
    fetched, and the shipped price catalogs (their retrieval date: most rows carry none)."""
    from datetime import date as date_type

    from whichgpu.catalog.prices import age_days

    shipped = max(
        (
            s.retrieved
            for s in catalog.sources
            if s.kind == "price catalog" and not s.id.endswith("-snapshot")
        ),
        default=None,
    )
    shipped_text = shipped.isoformat() if shipped else "undated"
    if catalog.rank_claims:
        return note("assume_prices_claims")
    if catalog.price_snapshot is None:
        return note(
            "assume_prices_shipped", retrieved=shipped_text, update=Ref(("@prices-update",))
        )
    fetched, providers = catalog.price_snapshot
    days = age_days(date_type.fromisoformat(fetched), today) if fetched != "undated" else 0
    return note(
        "assume_prices_snapshot",
        fetched=fetched,
        days=days,
        providers=", ".join(providers),
        retrieved=shipped_text,
    )


def _assumptions(workload: Workload) -> list[Note]:
    from whichgpu.estimate.cost import DEFAULT_ELECTRICITY_USD_PER_KWH

    c = workload.constraints
    out = []
    if c.mode == "buy":
        kwh = c.electricity_usd_per_kwh
        out.append(
            note(
                "assume_buy",
                kwh=kwh if kwh is not None else DEFAULT_ELECTRICITY_USD_PER_KWH,
                hours_per_month=round(c.hours_per_month),
                months=round(c.amortize_months),
            )
        )
    else:
        out.append(note("assume_rent", markets=", ".join(c.markets)))
    if len(workload.components) > 1:
        out.append(note("assume_sequential"))
    if any(comp.services > 1 for comp in workload.components):
        out.append(note("assume_services"))
    from whichgpu.job.length_presets import lengths_note

    out += [lengths_note(c.label, c.lengths) for c in workload.components if c.lengths]
    out.append(note("assume_throughput"))
    return out


def explain(
    catalog: Catalog,
    workload: Workload,
    objective: str,
    ranked: tuple[Option, ...],
    pick: Option | None,
    baseline: Option | None,
    today: date,
) -> Recommendation:
    unpriced = tuple(dict.fromkeys(o.gpu.name for o in ranked if o.usd_per_h is None and o.fits))
    priced_gpus = {o.gpu.name for o in ranked if o.usd_per_h is not None}
    unpriced = tuple(name for name in unpriced if name not in priced_gpus)
    assumptions = (*_assumptions(workload), _price_origin(catalog, today))
    if pick is None:
        return Recommendation(
            workload,
            objective,
            ranked,
            None,
            (),
            (),
            assumptions,
            tuple(infeasible(catalog, ranked, workload)),
            baseline,
            unpriced,
        )
    reasons = [_axis_reason(pick, ranked, objective) or _objective_reason(pick, ranked, objective)]
    reasons += [chosen for run in pick.runs for chosen in run.chosen]
    if pick.hardware.mig is not None:
        reasons.append(
            note(
                "reason_mig",
                services=pick.hardware.services,
                profile=pick.hardware.mig.profile,
                gpus=pick.gpus,
                gpu=pick.gpu.name,
            )
        )
    reasons.extend(_run_reasons(pick))
    layout = _layout_reason(pick)
    if layout is not None:
        reasons.append(layout)
    if workload.constraints.requires:
        reasons.append(
            note(
                "reason_capabilities",
                gpu=pick.gpu.name,
                capabilities=", ".join(workload.constraints.requires),
            )
        )
    reasons.append(_price_reason(pick, workload))
    for passed in (_extrapolated_passed(pick, ranked, objective),
                   _undated_passed(pick, ranked, objective)):  # fmt: skip
        if passed is not None:
            reasons.append(passed)
    nodes = _nodes_reason(pick)
    if nodes is not None:
        reasons.append(nodes)
    for other in (o for o in ranked if o.tied):
        # a tied option on several instances carries the same word on its network
        reasons.append(_tie_reason(catalog, pick, other, workload, objective))
        nodes = _nodes_reason(other)
        if nodes is not None:
            reasons.append(nodes)
    warnings = _warnings(pick, ranked, workload, unpriced, today, objective)
    if baseline is not None and baseline is not pick:
        over = over_provisioning(baseline, ranked, workload)
        if over is not None:
            warnings.append(note("warn_baseline", **dict(over.params)))
        elif not baseline.feasible:
            warnings.append(note("warn_baseline_infeasible", option=hw_text(baseline)))
    return Recommendation(
        workload,
        objective,
        ranked,
        pick,
        tuple(reasons),
        tuple(warnings),
        assumptions,
        (),
        baseline,
        unpriced,
    )


def _extrapolated_passed(pick: Option, ranked: Sequence[Option], objective: str) -> Note | None:
    """Where a feasible option beats the pick at its estimate's middle but its speed rests
    on a factor nobody measured for its GPU and work: the best such option, its figure at
    the middle and at the slow end of its range, where it is ranked."""
    if objective not in ("cost", "time"):
        return None

    def middle(o: Option) -> float | None:
        return (o.cost_usd if objective == "cost" else o.time_s) if o.time_s else None

    def slow(o: Option) -> float | None:
        return o.cost_usd_slow if objective == "cost" else o.time_high_s

    here = middle(pick)
    better = [o for o in ranked if o.feasible and o.extrapolated and o is not pick
              and here is not None and (middle(o) or here) < here]  # fmt: skip
    if not better:
        return None
    best = min(better, key=lambda o: middle(o) or 0.0)
    run = next(r for r in best.runs if r.provenance)
    figure = money if objective == "cost" else hours_of
    return note(
        "reason_extrapolated_passed" + ("" if objective == "cost" else "_time"),
        option=hw_text(best),
        middle=figure(middle(best) or 0.0),
        slow=figure(slow(best) or 0.0),
        provenance=run.provenance,
    )


def _undated_passed(pick: Option, ranked: Sequence[Option], objective: str) -> Note | None:
    """Where a feasible option costs less than a pick priced on a dated offer but is priced
    on an offer without a date (ranked after every dated one: a price without a date is a
    guess, whatever it says): the cheapest such option, its figure and where it is listed,
    so that the table's cheaper row below the pick is not a puzzle."""
    if objective != "cost" or pick.price_as_of in (None, "undated") or pick.score is None:
        return None
    cheaper = [o for o in ranked if o.feasible and o.price_as_of == "undated"
               and o.score is not None and o.score < pick.score]  # fmt: skip
    if not cheaper:
        return None
    best = min(cheaper, key=lambda o: o.score or 0.0)
    per_job = best.cost_usd is not None and pick.cost_usd is not None
    return note(
        "reason_undated_passed" if per_job else "reason_undated_passed_h",
        option=hw_text(best),
        figure=money((best.cost_usd if per_job else best.usd_per_h) or 0.0),
        provider=best.price_provider or "",
        pick=money((pick.cost_usd if per_job else pick.usd_per_h) or 0.0),
    )


def _axis_reason(pick: Option, ranked: Sequence[Option], objective: str) -> Note | None:
    """Where the pick comes first on the other axis among options tied on the objective
    (:func:`~whichgpu.commands.recommend.rank.by_other_axis`): the one it passed, the two
    figures on each axis and the band."""
    from whichgpu.commands.recommend.options import typical_error

    if objective not in ("cost", "time") or pick.score is None:
        return None
    passed = [o for o in ranked if o.tied and o.score is not None and o.score < pick.score]
    if not passed:
        return None
    other = min(passed, key=lambda o: o.score or 0.0)
    costs = money(cost_of(pick)), money(cost_of(other))
    hours = hours_of(pick.time_s), hours_of(other.time_s)
    return note(
        "reason_tie_axis_" + objective,
        option=hw_text(pick),
        other=hw_text(other),
        cost=costs[0],
        other_cost=costs[1],
        hours=hours[0],
        other_hours=hours[1],
        band=round(typical_error(pick), 3),
    )
