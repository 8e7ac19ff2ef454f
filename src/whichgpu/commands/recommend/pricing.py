"""``recommend``'s pricing stage: each candidate priced per market (or as a purchase,
owned and powered), and the constraints it misses (memory, engine, capability, latency and
rate targets, budget, deadline) as blocker codes. Pipeline (DESIGN.md): … → throughput →
price per market (or purchase) → constraints → rank (:mod:`~whichgpu.commands.recommend.
rank`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from whichgpu.catalog.prices import ANY_LINK, dated_first, price_range, shape_range
from whichgpu.commands.recommend.candidates import has_capability
from whichgpu.commands.recommend.options import Option, hardware_label
from whichgpu.estimate.cost import (
    DEFAULT_ELECTRICITY_USD_PER_KWH,
    break_even_months,
    ownership_usd_per_h,
    power_usd_per_h,
    rent_cost_usd,
)
from whichgpu.notes import Note, note

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog
    from whichgpu.inputs.requests import Workload
    from whichgpu.plan import Hardware, Run


def total_time(runs: Sequence[Run]) -> float | None:
    """Components run one after another on the same GPUs; unknown when one has no size."""
    times = [r.time_s for r in runs]
    if any(t is None for t in times):
        return None
    return sum(t for t in times if t is not None)


def price_options(
    catalog: Catalog, hw: Hardware, runs: tuple[Run, ...], workload: Workload
) -> list[Option]:
    c = workload.constraints
    time_s = total_time(runs)
    hours = None if time_s is None else time_s / 3600
    out: list[Option] = []
    if c.mode == "buy":
        rows = catalog.purchases_ranked(hw.gpu.id)
        if not rows:
            return [Option(hw, None, runs)]
        best = min(rows, key=lambda p: (p.low_usd, p.condition, p.source))
        kwh = c.electricity_usd_per_kwh
        kwh = DEFAULT_ELECTRICITY_USD_PER_KWH if kwh is None else kwh
        power = power_usd_per_h(hw.gpu.tdp_w, hw.gpus, kwh)
        rent = price_range(dated_first(catalog.prices_for(hw.gpu.id, c.markets)))  # type: ignore[arg-type]
        months = None
        if rent is not None:
            months = break_even_months(
                best.low_usd * hw.gpus, rent.low_usd_per_h * hw.gpus, power, c.hours_per_month
            )
        own_per_h = ownership_usd_per_h(
            best.low_usd * hw.gpus, power, c.amortize_months, c.hours_per_month
        )
        own_per_h_high = ownership_usd_per_h(
            best.high_usd * hw.gpus, power, c.amortize_months, c.hours_per_month
        )
        cost = None if hours is None else own_per_h * hours
        high = None if hours is None else own_per_h_high * hours
        out.append(
            Option(
                hw,
                f"buy-{best.condition}",
                runs,
                usd_per_h=own_per_h,
                usd_per_h_high=own_per_h_high,
                power_usd_per_h=power,
                price_provider=best.condition,
                price_source=best.source,
                price_as_of=best.as_of,
                purchase_usd=best.low_usd * hw.gpus,
                break_even_months=months,
                rent_compared=None if rent is None else rent.low,
                time_s=time_s,
                cost_usd=cost,
                cost_usd_high=high,
            )
        )
        return out
    for market in c.markets:
        if hw.per_node is None:
            continue
        link = ANY_LINK if hw.node_gpus is None else hw.link
        found = shape_range(catalog, hw.gpu.id, market, hw.gpus, hw.per_node, link)  # type: ignore[arg-type]
        if found is None:
            continue
        per_h = found.low_usd_per_h * hw.gpus
        per_h_high = found.high_usd_per_h * hw.gpus
        out.append(
            Option(
                hw,
                market,
                runs,
                usd_per_h=per_h,
                usd_per_h_high=per_h_high,
                price_provider=found.low.provider,
                price_source=found.low.source,
                price_as_of=found.low.as_of,
                listing=found.low,
                time_s=time_s,
                cost_usd=None
                if hours is None
                else rent_cost_usd(found.low_usd_per_h, hw.gpus, hours),
                cost_usd_high=None
                if hours is None
                else rent_cost_usd(found.high_usd_per_h, hw.gpus, hours),
            )
        )
    if out:
        return out
    offered = catalog.prices_for(hw.gpu.id, c.markets)  # type: ignore[arg-type]
    shapes = tuple(sorted({p.gpus_per_instance for p in offered}))
    return [Option(hw, None, runs, sold_as=shapes)]


def constraint_blockers(option: Option, workload: Workload) -> tuple[Note, ...]:
    c = workload.constraints
    out: list[Note] = []
    gpu = option.gpu
    for run in option.runs:
        if not run.fits:
            memory = {"needed": round(run.needed_gib or 0, 1)}
            memory["capacity"] = round(run.capacity_gib, 1)
            if run.blocker is not None and run.blocker.kind == "replica_instance":
                # a replica stays inside one instance; a larger one would hold it, or none
                holds = run.blocker.instance_gpus
                out.append(note("block_memory_instance" + ("" if holds else "_none"),
                                component=run.component.label,
                                per_instance=int(run.blocker.needed or 1), gpu=gpu.short_name,
                                **({"count": holds} if holds else {}), **memory))  # fmt: skip
            else:
                out.append(note("block_memory", component=run.component.label, **memory))
        elif run.blocker is not None and run.blocker.kind != "math_unit":
            from whichgpu.job.engine_releases import engine_profile
            from whichgpu.job.engines import DEFAULT_ENGINE

            engine = engine_profile(run.component.engine or DEFAULT_ENGINE).name
            common = {"component": run.component.label, "engine": engine, "gpu": gpu.short_name}
            blocker = run.blocker
            needed = f"{blocker.needed or 0.0:.1f}"
            if blocker.kind == "cuda_only":
                out.append(note("block_cuda_only", **common))
            elif blocker.kind == "layout_split":
                out.append(note("block_layout_split", component=run.component.label))
            elif blocker.kind == "engine_capability":  # older than the engine supports at all
                out.append(note("block_engine_min_capability", **common, needed=needed,
                                has=gpu.compute_capability or "-"))  # fmt: skip
            else:  # a weight format from a compute capability (EngineProfile.gap)
                out.append(note("block_engine_capability", **common,
                                quant=blocker.unit or "", needed=needed,
                                has=gpu.compute_capability or "-"))  # fmt: skip
        elif not run.global_batch_made:
            out.append(
                note(
                    "block_global_batch",
                    component=run.component.label,
                    global_batch=run.component.global_batch or 0,
                    batch=run.job.batch if run.job is not None else 1,
                    hardware=hardware_label(option, count_one=True),
                )
            )
        elif run.throughput is None and run.blocker is not None:
            out.append(
                note(
                    "block_precision",
                    component=run.component.label,
                    gpu=gpu.short_name,
                    unit=run.blocker.unit or "",
                )
            )
        elif run.throughput is None and (run.serving is None or run.serving.unmet is None):
            out.append(note("block_no_model", component=run.component.label, gpu=gpu.name))
        elif run.serving is not None and run.serving.unmet is not None:
            target, best = run.serving.unmet
            limit_s = run.serving.targets.limit_s(target)
            margin = run.serving.targets.margin_of(target)
            out.append(
                note(
                    "block_latency_likely" if margin > 1 else "block_latency",
                    component=run.component.label,
                    target=target.upper(),
                    percentile=run.component.percentile,
                    limit_ms=round(1e3 * (limit_s or 0.0), 1),
                    best_ms=round(best * margin * 1e3, 1),
                    **({"point_ms": round(best * 1e3, 1)} if margin > 1 else {}),
                )
            )
        elif not run.meets_rate and run.serving is not None:
            from whichgpu.estimate.assumptions import TARGET_UTILIZATION

            point = run.serving.served_rps
            capacity = run.held_rps or 0.0  # the slow end it is held to
            slow = {"point": round(point, 2)} if capacity < point else {}
            demand = run.component.request_rate or 0.0
            out.append(note("block_rate_headroom" + ("_slow" if slow else ""),
                            component=run.component.label, capacity=round(capacity, 2),
                            demand=demand, share=demand / capacity if capacity else 1.0,
                            target=TARGET_UTILIZATION, **slow))  # fmt: skip
        elif not run.meets_rate:
            need = (run.component.request_rate or 0) * max(run.component.generate, 1)
            out.append(
                note(
                    "block_rate",
                    component=run.component.label,
                    rate=round(run.throughput or 0.0, 1),
                    need=round(need, 1),
                )
            )
    missing = [cap for cap in c.requires if not has_capability(gpu, cap)]
    if missing:
        out.append(note("block_capability", gpu=gpu.short_name, missing=", ".join(missing)))
    if option.usd_per_h is None and option.sold_as:
        out.append(
            note(
                "block_instance_shape",
                gpus=option.gpus,
                gpu=gpu.short_name,
                markets=", ".join(c.markets),
                shapes=", ".join(str(k) for k in option.sold_as),
            )
        )
    elif option.usd_per_h is None:
        markets = "purchase" if c.mode == "buy" else ", ".join(c.markets)
        out.append(note("block_unpriced", gpu=gpu.short_name, markets=markets))
    else:
        if c.budget_usd_per_h is not None and option.usd_per_h > c.budget_usd_per_h:
            out.append(
                note(
                    "block_budget_per_h",
                    usd_per_h=round(option.usd_per_h, 2),
                    budget=c.budget_usd_per_h,
                )
            )
        cost = option.cost_usd_slow if c.confidence == "likely" else option.cost_usd
        if c.budget_usd is not None and cost is not None and cost > c.budget_usd:
            if cost != option.cost_usd and option.cost_usd is not None:
                out.append(note("block_budget_likely", cost=round(cost, 2),
                                point=round(option.cost_usd, 2), budget=c.budget_usd))  # fmt: skip
            else:
                out.append(note("block_budget", cost=round(cost, 2), budget=c.budget_usd))
    time_s = option.time_high_s if c.confidence == "likely" else option.time_s
    if c.deadline_h is not None and time_s is not None and time_s > c.deadline_h * 3600:
        if time_s != option.time_s and option.time_s is not None:
            point = round(option.time_s / 3600, 1)
            out.append(note("block_deadline_likely", hours=round(time_s / 3600, 1), point=point,
                            deadline=c.deadline_h))  # fmt: skip
        else:
            out.append(note("block_deadline", hours=round(time_s / 3600, 1), deadline=c.deadline_h))
    return tuple(out)
