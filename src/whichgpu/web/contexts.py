"""The pages' contexts: what each template shows, built from the library's results in the
request's language (called inside it by :func:`whichgpu.web.pages._answer_page`)."""

from __future__ import annotations

from typing import Any

from whichgpu.i18n import _, fmt
from whichgpu.phrases import localize as notes_localize
from whichgpu.web.core import Service


def image_presets() -> list[tuple[str, str]]:
    """The image-generation pipelines, for the model choice of image tasks."""
    from whichgpu.models.pipelines import list_pipelines

    return [(p.id, p.name) for p in list_pipelines()]


def recommend_context(
    service: Service, fields: dict[str, str], lists: dict[str, list[str]], config_name: str
) -> dict[str, Any]:
    from whichgpu.inputs.request_fields import SERVE_LAYOUTS
    from whichgpu.inputs.requests import CAPABILITIES, DEFAULT_MARKETS, KINDS, MARKETS, OBJECTIVES
    from whichgpu.job import PRECISIONS, QUANT_BITS, SPECULATIVE_METHODS
    from whichgpu.job.engine_releases import PROFILES
    from whichgpu.job.length_presets import LENGTHS
    from whichgpu.models.presets import presets

    values = {"task": "lora", "model": "llama-2-7b", "objective": "cost", "catalog": "full"}
    values.update(fields)
    return {
        "values": values,
        "checked": {
            # a submitted form says its markets (none ticked is an answer); a page opened
            # without them (a language link, a bare query) shows the defaults ticked
            "markets": lists.get(
                "markets",
                [] if "task" in fields and "submitted" in fields else list(DEFAULT_MARKETS),
            ),
            "requires": lists.get("requires", []),
        },
        "config_name": config_name,
        "kinds": KINDS,
        "presets": sorted((p.id, p.display_name) for p in presets().values()),
        "image_presets": image_presets(),
        "precisions": PRECISIONS,
        "quants": tuple(QUANT_BITS),
        "markets": MARKETS,
        "capabilities": CAPABILITIES,
        "objectives": OBJECTIVES,
        "gpus": [(g.id, g.name) for g in service.catalog().gpus],
        "engines": [(e.id, e.labelled) for e in PROFILES],
        "speculatives": SPECULATIVE_METHODS,
        "layouts": SERVE_LAYOUTS,
        "lengths": [(p.id, p.name) for p in LENGTHS.values()],
        "percentiles": ("p50", "p95", "p99"),
    }


def pick_front(result: Any) -> list[str]:
    """The front a served pick was chosen on, a sentence a point, as the CLI prints it under
    the pick's reasons (:func:`~whichgpu.render.estimate_out.front_lines`)."""
    from whichgpu.render.estimate_out import front_lines

    pick = None if result is None else result.pick
    runs = [] if pick is None else pick.runs
    return [line for run in runs if run.serving is not None
            for line in front_lines(run.serving.front)]  # fmt: skip


def summary_of(result: Any) -> str:
    """The answer in one line, for the top of the page: ``Pick: 4 × RTX 4090 · $9.90 ·
    7.1 h`` (or that nothing meets every constraint)."""
    from whichgpu.inputs.fields import format_cost, format_duration
    from whichgpu.render.recommend_out import hardware_cell

    if result is None:
        return ""
    pick = result.pick
    if pick is None:
        return _("No option meets every constraint.")
    parts = [fmt(_("Pick: {option}"), option=hardware_cell(pick, " "))]
    if pick.cost_usd is not None:
        parts.append(format_cost(pick.cost_usd))
    elif pick.usd_per_h is not None:
        parts.append(fmt(_("{price}/h"), price=format_cost(pick.usd_per_h)))
    if pick.time_s is not None:
        parts.append(format_duration(pick.time_s))
    return " · ".join(parts)


def offer_text(option: Any) -> str:
    """The instances an option is rented as, their price and the price per GPU:
    ``2 × gpu_4x_h100_sxm5 (Lambda), $16.36/h each, $4.09/GPU·h``."""
    from whichgpu.inputs.fields import format_usd

    listing = option.listing
    if listing is None:
        return ""
    if listing.instance is None:
        return fmt(
            _("{provider}, {price}/GPU·h"),
            provider=notes_localize(listing.provider),
            price=format_usd(listing.price_usd_per_h),
        )
    return fmt(
        _("{count} × {instance} ({provider}), {price}/h each, {per_gpu}/GPU·h"),
        count=option.hardware.instances,
        instance=listing.instance,
        provider=notes_localize(listing.provider),
        price=format_usd(listing.instance_usd_per_h),
        per_gpu=format_usd(listing.price_usd_per_h),
    )


def rows_of(result: Any, every: bool, top: int = 8) -> list[dict[str, Any]]:
    """The CLI's table: the best option per GPU (or every option), feasible first."""
    from whichgpu.render.recommend_out import (
        hardware_cell,
        serving_figures,
        shown_options,
        status_text,
    )

    rows = []
    for rank, option in enumerate(shown_options(result, every, top, None if every else top), 1):
        first = option.runs[0] if option.runs else None
        rows.append(
            {
                "rank": rank,
                "hardware": hardware_cell(option, " "),
                "gpu": option.gpu.id,
                "market": option.market,
                "offer": offer_text(option),
                "usd_per_h": option.usd_per_h,
                "time_s": option.time_s,
                "cost_usd": option.cost_usd,
                "throughput": None if first is None else first.throughput,
                "unit": None if first is None else first.unit,
                "status": status_text(option, result, _("Pareto front")),
                "pick": option is result.pick,
                "pareto": option.pareto,
                "feasible": option.feasible,
                "serving": serving_figures(option),
            }
        )
    return rows


def compare_context(
    service: Service, comparison: Any, names: list[str], markets: list[str]
) -> dict[str, Any]:
    from whichgpu.catalog.records import MARKETS
    from whichgpu.render.tables import (
        SPEC_ROWS,
        _pair,
        _purchase_cell,
        _range_cell,
        _ratio,
        price_citation,
    )

    catalog = service.catalog()
    slots = [*names, "", "", "", ""][: max(4, len(names) + 1)]
    context: dict[str, Any] = {
        "slots": slots,
        "gpus": [(g.id, g.name) for g in catalog.gpus],
        "all_markets": MARKETS,
        "chosen_markets": markets,
        "comparison": comparison,
    }
    if comparison is None:
        return context
    marks: dict[tuple[str, str], list[int]] = {}
    for number, correction in enumerate(comparison.corrections, start=1):
        marks.setdefault((correction.gpu, correction.field), []).append(number)

    def cell(gpu: str, fields: tuple[str, ...], text: str) -> dict[str, Any]:
        return {"text": text, "marks": [n for f in fields for n in marks.get((gpu, f), [])]}

    rows = comparison.gpus
    table = [
        (_(label), [cell(r.gpu.id, fields, how(r.gpu)) for r in rows])
        for label, fields, how in SPEC_ROWS
    ]
    prices = []
    for index, market in enumerate(comparison.markets):
        marked = ("rent",) if index == 0 else ()
        prices.append(
            (
                fmt(_("Rent, {market}"), market=_(market)),
                [cell(r.gpu.id, marked, _range_cell(r.prices.get(market))) for r in rows],
            )
        )
    for condition in ("new", "used"):
        prices.append(
            (
                fmt(_("Buy, {condition}"), condition=_(condition)),
                [cell(r.gpu.id, (), _purchase_cell(r, condition)) for r in rows],
            )
        )
    base = comparison.baseline.short_name
    derived = [
        (fmt(_("Bandwidth vs {gpu}"), gpu=base), [_ratio(r.derived.bandwidth_ratio) for r in rows]),
        (
            fmt(_("FP16 tensor vs {gpu}"), gpu=base),
            [_ratio(r.derived.fp16_tensor_ratio) for r in rows],
        ),
        (fmt(_("FP64 vs {gpu}"), gpu=base), [_ratio(r.derived.fp64_ratio) for r in rows]),
        (_("FP16 TFLOPS per $/h"), [_pair(r.derived.fp16_tflops_per_usd_per_h) for r in rows]),
        (_("GB of VRAM per $/h"), [_pair(r.derived.gb_per_usd_per_h) for r in rows]),
        (_("Hours per $100"), [_pair(r.derived.hours_per_100_usd) for r in rows]),
    ]
    today = service.today()
    listings = []
    for r in rows:
        for market, found in r.prices.items():
            line = price_citation(found.low, catalog, today)
            if found.high_usd_per_h > found.low_usd_per_h:
                line += " … " + price_citation(found.high, catalog, today)
            listings.append((r.gpu.name, _(market), line))
    context.update(
        spec_rows=table,
        price_rows=prices,
        derived_rows=derived,
        corrections=[c.note.render() for c in comparison.corrections],
        listings=listings,
    )
    return context


def fit_context(service: Service, values: dict[str, str], result: Any) -> dict[str, Any]:
    """The fit form's choices, and the result's rows: the memory by component, and per GPU
    whether one holds it, the headroom and the fewest that do."""
    from whichgpu.commands.fit import ImageFitResult
    from whichgpu.inputs.requests import KINDS
    from whichgpu.job import PRECISIONS, QUANT_BITS
    from whichgpu.models.presets import presets
    from whichgpu.render.fit_out import COMPONENT_LABELS
    from whichgpu.units import BYTES_PER_GIB

    parts, gpus, summary = [], [], ""
    paged_text: str | None = None
    if isinstance(result, ImageFitResult):
        parts = [(_(COMPONENT_LABELS.get(k, k)), v) for k, v in result.parts_gib.items() if v > 0]
        holding = [row for row in result.gpus if row.fits]
        shown = result.target or (holding[0] if holding else None)
        summary = fmt(
            _("{model}: {gib:,.1f} GiB per GPU at the peak ({phase}); {n} of {total} GPUs hold it"
              " alone."),
            model=result.pipeline_name, gib=shown.needed_gib if shown else 0.0,
            phase=notes_localize(result.stage), n=len(holding), total=len(result.gpus),
        )  # fmt: skip
        gpus = [
            {"id": row.gpu.id, "name": row.gpu.short_name, "vram": row.gpu.memory_gib,
             "fits": row.fits, "headroom": row.headroom_gib, "count": 1 if row.fits else None,
             "strategy": row.chosen}
            for row in result.gpus
        ]  # fmt: skip
    elif result is not None:
        est = result.estimate
        parts = [
            (_(COMPONENT_LABELS.get(k, k)), v / BYTES_PER_GIB)
            for k, v in est.components.items()
            if v > 0
        ]
        from whichgpu.render.fit_out import paged_note

        paged = paged_note(est)
        if paged is not None:
            paged_text = paged.render()
        holding = [row for row in result.gpus if row.fits]
        summary = fmt(
            _("{model}: {gib:,.1f} GiB per GPU at the peak ({phase}); {n} of {total} GPUs hold it"
              " alone."),
            model=result.arch.name, gib=est.total_bytes / BYTES_PER_GIB, phase=_(est.phase),
            n=len(holding), total=len(result.gpus),
        )  # fmt: skip
        gpus = [
            {
                "id": row.gpu.id,
                "name": row.gpu.short_name,
                "vram": row.gpu.memory_gib,
                "fits": row.fits,
                "headroom": row.headroom_gib,
                "count": row.min_count,
                "strategy": notes_localize(row.strategy),
            }
            for row in result.gpus
        ]
    return {
        "values": values,
        "kinds": [k for k in KINDS if k not in ("render", "fp64")],
        "presets": [(p.id, p.display_name) for p in presets().values()],
        "image_presets": image_presets(),
        "precisions": PRECISIONS,
        "quants": sorted(QUANT_BITS),
        "parts": parts,
        "paged": paged_text,
        "rows": gpus,
        "summary": summary,
    }


def estimate_context(service: Service, values: dict[str, str], result: Any) -> dict[str, Any]:
    """The estimate form's choices, and the answer's figures as lines."""
    from whichgpu.inputs.fields import format_rate
    from whichgpu.inputs.request_fields import SERVE_LAYOUTS
    from whichgpu.inputs.requests import KINDS
    from whichgpu.job import PRECISIONS, SPECULATIVE_METHODS
    from whichgpu.job.engine_releases import PROFILES
    from whichgpu.job.length_presets import LENGTHS
    from whichgpu.job.recipes import FRAMEWORKS
    from whichgpu.models.presets import presets
    from whichgpu.render.estimate_out import Lines, no_fit, print_estimate

    summary, lines = "", []
    if result is not None:
        rate = result.throughput
        summary = fmt(
            _("{rate} on {count} × {gpu} (likely {low}–{high}), {bound}-bound"),
            rate=format_rate(rate.value, rate.unit), count=result.count,
            gpu=result.gpu.short_name, low=format_rate(rate.low, rate.unit),
            high=format_rate(rate.high, rate.unit), bound=_(result.bound),
        )  # fmt: skip
        est = result.image or result.image_training
        if result.fits is False or (est is not None and no_fit(est, result.gpu) is not None):
            summary = fmt(_("Does not fit: {summary}"), summary=summary)
        out = Lines()  # what the CLI prints of this estimate, line for line
        print_estimate(result, None, out)
        lines = out.texts[1:]  # the summary above names the GPUs and the rate
    return {
        "values": values,
        "kinds": KINDS,
        "presets": [(p.id, p.display_name) for p in presets().values()],
        "image_presets": image_presets(),
        "gpus": [(g.id, g.name) for g in service.catalog().gpus],
        "precisions": PRECISIONS,
        "frameworks": FRAMEWORKS,
        "engines": [(e.id, e.labelled) for e in PROFILES],
        "speculatives": SPECULATIVE_METHODS,
        "layouts": SERVE_LAYOUTS,
        "lengths": [(p.id, p.name) for p in LENGTHS.values()],
        "summary": summary,
        "lines": lines,
    }


def mig_context(values: dict[str, str], result: Any) -> dict[str, Any]:
    """The MIG form's choices, and the plan: the pick's GPUs and instances, its commands,
    every MIG GPU's plan and the whole cards beside them."""
    from whichgpu.inputs.fields import format_cost
    from whichgpu.job import QUANT_BITS
    from whichgpu.models.presets import presets
    from whichgpu.render.mig_out import offer_line, plan_cost, smi_commands

    summary, options, cards, pick_gpus, commands = "", [], [], [], []
    if result is not None:
        pick = result.pick
        if pick is None:
            summary = _("No MIG GPU places every service.")
        else:
            cost = None if pick.usd_per_h is None else pick.usd_per_h * pick.gpus
            summary = fmt(
                _("Pick: {gpus} × {gpu}, {instances} instances{cost}"),
                gpus=pick.gpus, gpu=pick.gpu.short_name,
                instances=sum(len(g.instances) for g in pick.plan.gpus),
                cost="" if cost is None else f" · {format_cost(cost)}/h",
            )  # fmt: skip
            if (offer := offer_line(pick)) is not None:  # the offer it is priced on
                summary = f"{summary} ({offer})"
            pick_gpus = [
                (g.index, [(i.service, i.profile.profile, i.start) for i in g.instances])
                for g in pick.plan.gpus[:16]
            ]
            commands = smi_commands(pick.plan)
        options = [
            {
                "gpu": o.gpu.short_name,
                "gpus": o.gpus,
                "cost": plan_cost(None if o.usd_per_h is None else o.usd_per_h * o.gpus, o.listing),
                "unplaced": len(o.plan.unplaced),
                "pick": o is pick,
            }
            for o in result.options
        ]
        cards = [
            (c.gpu.short_name, c.cards, plan_cost(c.usd_per_h, c.listing)) for c in result.cards[:8]
        ]
    return {
        "values": values,
        "presets": [(p.id, p.display_name) for p in presets().values()],
        "quants": sorted(QUANT_BITS),
        "summary": summary,
        "options": options,
        "cards": cards,
        "pick_gpus": pick_gpus,
        "commands": commands,
    }


def catalog_context(service: Service, found: list[Any]) -> dict[str, Any]:
    from whichgpu.catalog.filters import FEATURES
    from whichgpu.catalog.prices import rent_range
    from whichgpu.inputs.fields import format_field, format_usd_range
    from whichgpu.render.tables import gpu_features

    catalog = service.catalog()
    rows = []
    for gpu in found:
        rent = rent_range(catalog, gpu.id)
        ends = None
        if rent is not None:
            ends = [(rent.low.provider, rent.low.as_of)]
            if rent.high is not rent.low and rent.high_usd_per_h != rent.low_usd_per_h:
                ends.append((rent.high.provider, rent.high.as_of))
        rows.append(
            {
                "id": gpu.id,
                "name": gpu.short_name,
                "architecture": gpu.architecture,
                "vram": f"{format_field('memory_gib', gpu.memory_gib)} {gpu.memory_type}",
                "bandwidth": format_field(
                    "memory_bandwidth_gb_per_s", gpu.memory_bandwidth_gb_per_s
                ),
                "fp16": format_field("fp16_tensor_dense_tflops", gpu.fp16_tensor_dense_tflops),
                "fp64": format_field("fp64_tflops", gpu.fp64_tflops),
                "features": gpu_features(gpu),
                "rent": None
                if rent is None
                else format_usd_range(rent.low_usd_per_h, rent.high_usd_per_h),
                "ends": ends,
                # the numbers the table sorts on (the cells show them formatted)
                "sort": {
                    "vram": gpu.memory_gib,
                    "bandwidth": gpu.memory_bandwidth_gb_per_s,
                    "fp16": gpu.fp16_tensor_dense_tflops,
                    "fp64": gpu.fp64_tflops,
                    "rent": "" if rent is None else rent.low_usd_per_h,
                },
            }
        )
    return {
        "rows": rows,
        "features": tuple(FEATURES),
        "architectures": sorted({g.architecture for g in catalog.gpus}),
        "sources": sorted(catalog.sources, key=lambda s: (s.kind, s.id)),
        "count": len(catalog.gpus),
    }


def gpu_context(service: Service, gpu: Any) -> dict[str, Any]:
    if gpu is None:
        return {"gpu": None}
    from whichgpu.catalog.records import GPU_SPEC_FIELDS
    from whichgpu.inputs.fields import FIELDS, format_field, format_usd_range
    from whichgpu.render.tables import _range_cell, listing_markets, price_citation

    catalog, today = service.catalog(), service.today()
    specs = []
    for name in GPU_SPEC_FIELDS:
        citation = catalog.citation(gpu.id, name)
        specs.append(
            {
                "label": _(FIELDS[name][0]) if name in FIELDS else name,
                "value": format_field(name, getattr(gpu, name)),
                "source": citation.source,
                "note": citation.note,
            }
        )
    markets = []
    for market, found, listed in listing_markets(catalog, gpu.id):
        markets.append(
            (_(market), _range_cell(found), [price_citation(p, catalog, today) for p in listed])
        )
    purchases = []
    for p in catalog.purchase_for(gpu.id):
        source = catalog.source(p.source)
        purchases.append(
            (
                _(p.condition),
                format_usd_range(p.low_usd, p.high_usd),
                source.title if source else p.source,
                notes_localize(p.as_of),
            )
        )
    return {"gpu": gpu, "specs": specs, "markets": markets, "purchases": purchases}
