"""The server-rendered pages (recommend, compare, catalog, one GPU): their routes, the
frame every page shares (languages, navigation) and the context each template gets."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from starlette.datastructures import UploadFile

from whichgpu.i18n import _, fmt, speaking
from whichgpu.notes import localize as notes_localize
from whichgpu.web.core import (
    LANGUAGES,
    MAX_CONFIG_BYTES,
    Problem,
    Service,
    memo_key,
    recommend_form,
    run_off_loop,
    too_large,
)
from whichgpu.web.templating import render


def error_page(problem: Problem, language: str) -> str:
    return render("error.html", problem=problem, **chrome(language, "/", {}))


def chrome(language: str, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """What every page's frame needs: languages with links, navigation."""
    links = {}
    for code in LANGUAGES:
        kept = {k: v for k, v in query.items() if k != "lang"}
        kept["lang"] = [code]
        links[code] = f"{path}?{urlencode(kept, doseq=True)}"
    return {"language": language, "languages": LANGUAGES, "language_links": links, "path": path}


def query_fields(request: Request) -> dict[str, str]:
    """A GET form's fields as typed (the last value of each, empty ones and the language
    switch left out)."""
    fields = {k: v[-1] for k, v in parse_qs(request.url.query).items() if v[-1].strip()}
    fields.pop("lang", None)
    return fields


def _answer_page(
    request: Request,
    template: str,
    problem: Problem | None,
    context: Callable[[], dict[str, Any]],
) -> HTMLResponse:
    """A page in the request's language (its context built in it: labels are translated),
    with the problem, and its status, if there is one."""
    with speaking(request.state.language):
        status = problem.status if problem else 200
        return _page(request, template, status=status, problem=problem, **context())


def _page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    language = request.state.language
    query = parse_qs(request.url.query)
    with speaking(language):
        html = render(template, **chrome(language, request.url.path, query), **context)
    return HTMLResponse(html, status)


def add_pages(app: FastAPI) -> None:
    """The server-rendered pages: recommend (and /), compare, catalog, one GPU."""

    @app.get("/", include_in_schema=False)
    async def home(request: Request) -> Response:
        return await recommend_page(request)

    @app.get("/recommend", include_in_schema=False)
    @app.post("/recommend", include_in_schema=False)
    async def recommend_page(request: Request) -> Response:
        fields: dict[str, str] = {}
        lists: dict[str, list[str]] = {}
        config: str | None = None
        config_name = ""
        problem: Problem | None = None
        if request.method == "POST":
            form = await request.form(max_files=1, max_fields=80)
            for key, value in form.multi_items():
                if isinstance(value, UploadFile):
                    if key == "config" and value.filename:
                        data = await value.read(MAX_CONFIG_BYTES + 1)
                        if len(data) > MAX_CONFIG_BYTES:
                            with speaking(request.state.language):
                                problem = too_large("/recommend", MAX_CONFIG_BYTES)
                        elif data.strip():
                            config_name = value.filename
                            try:
                                config = data.decode("utf-8")
                            except UnicodeDecodeError:
                                with speaking(request.state.language):
                                    problem = Problem(
                                        422,
                                        "invalid_input",
                                        _("config: a config.json is UTF-8 JSON text"),
                                        "config",
                                    )
                    continue
                lists.setdefault(key, []).append(value)
                fields[key] = value
            await form.close()
        else:
            for key, values in parse_qs(request.url.query).items():
                lists[key] = values
                fields[key] = values[-1]
        computing = request.method == "POST" or "task" in fields
        service: Service = request.app.state.service
        language = request.state.language
        digest = hashlib.sha256((config or "").encode()).hexdigest()
        # the file's name reaches the page ("uploaded: NAME"): it is part of the key, so
        # one user's name is never shown to another who uploads the same content
        key = memo_key(
            "page-recommend", fields, lists, digest, config_name, language, service.today()
        )
        if computing and problem is None:
            cached = service.memo.get(key)
            if cached is not None:
                return HTMLResponse(cached)
        result: Any = None
        svgs: Any = None
        built_form: Any = None
        if computing and problem is None:

            def compute() -> Any:
                built = recommend_form(fields, lists, config, config_name)
                found = service.recommendation(built.workload, built.ranking)
                from whichgpu.render.plot import recommendation_svgs

                return built, found, recommendation_svgs(found)

            value, problem = await run_off_loop(language, compute)
            if value is not None:
                built_form, result, svgs = value
        if problem is not None and problem.status == 413:
            return HTMLResponse(error_page(problem, language), 413)
        with speaking(language):
            response = _page(
                request,
                "recommend.html",
                status=problem.status if problem is not None else 200,
                **recommend_context(service, fields, lists, config_name),
                problem=problem,
                form=built_form,
                result=result,
                rows=rows_of(result, bool(fields.get("all"))) if result is not None else [],
                summary=summary_of(result),
                charts=None if svgs is None else tuple((n, Markup(s)) for n, s in svgs),
            )
        if result is not None:
            service.memo.put(key, bytes(response.body))
        return response

    @app.get("/compare", include_in_schema=False)
    async def compare_page(request: Request) -> Response:
        service: Service = request.app.state.service
        query = parse_qs(request.url.query)
        names = [n for n in query.get("gpu", []) if n.strip()]
        markets = [m for m in query.get("market", []) if m.strip()]
        if not names:
            from whichgpu.article import article_gpu_ids

            names = article_gpu_ids(service.catalog())
        value, problem = await run_off_loop(
            request.state.language, lambda: service.comparison(names, markets or None)
        )
        return _answer_page(
            request,
            "compare.html",
            problem,
            lambda: compare_context(service, value, names, markets),
        )

    @app.get("/catalog", include_in_schema=False)
    async def catalog_page(request: Request) -> Response:
        service: Service = request.app.state.service
        query = parse_qs(request.url.query)
        min_vram = (query.get("min_vram") or [""])[-1].strip()
        arch = (query.get("arch") or [""])[-1].strip()
        features = [f for f in query.get("feature", []) if f.strip()]

        def compute() -> Any:
            from whichgpu.catalog.filters import filter_gpus
            from whichgpu.inputs import Input, value_of

            rule = Input("number", "", low=0.0)
            vram = value_of(rule, min_vram, ("min_vram",), text=True) if min_vram else None
            return filter_gpus(service.catalog(), vram, arch or None, features)

        found, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(
            request,
            "catalog.html",
            problem,
            lambda: {
                **catalog_context(service, found or []),
                "filters": {"min_vram": min_vram, "arch": arch, "features": features},
            },
        )

    @app.get("/fit", include_in_schema=False)
    async def fit_page(request: Request) -> Response:
        """Will it fit? The memory at the job's peak by component, and every GPU: fits on
        one, headroom, the fewest that hold it (``whichgpu fit`` on one screen)."""
        service: Service = request.app.state.service
        fields = query_fields(request)
        values = {"model": "llama-3.1-8b", "task": "lora", **fields}
        result = None
        problem = None
        if "model" in fields or "params" in fields:

            def compute() -> Any:
                from whichgpu.fitting import fit_request
                from whichgpu.inputs import parse, take
                from whichgpu.requests import FitRequest
                from whichgpu.web.core import model_arch

                request_fields = take(FitRequest, dict(fields))
                parsed: FitRequest = parse(FitRequest, request_fields, text=True)
                arch = model_arch(parsed.model, parsed.params, None)
                return fit_request(service.catalog(), arch, parsed)[0]

            result, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(
            request,
            "fit.html",
            problem,
            lambda: fit_context(service, values, result),
        )

    @app.get("/estimate", include_in_schema=False)
    async def estimate_page(request: Request) -> Response:
        """How fast, how long? A job on one GPU model: the throughput with its range, the
        bound, the time for a size, the MFU (``whichgpu estimate`` on one screen)."""
        service: Service = request.app.state.service
        fields = query_fields(request)
        values = {"model": "llama-3.1-8b", "task": "lora", "gpu": "rtx-a6000", **fields}
        result = None
        problem = None
        if "gpu" in fields:

            def compute() -> Any:
                from whichgpu.inputs import parse, take
                from whichgpu.requests import EstimateRequest
                from whichgpu.sizing import estimate_job
                from whichgpu.web.core import model_arch

                parsed: EstimateRequest = parse(
                    EstimateRequest, take(EstimateRequest, dict(fields)), text=True
                )
                arch = model_arch(parsed.model, parsed.params, None) if parsed.uses_model else None
                return estimate_job(service.catalog().resolve(parsed.gpu), arch, parsed)

            result, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(
            request, "estimate.html", problem, lambda: estimate_context(service, values, result)
        )

    @app.get("/mig", include_in_schema=False)
    async def mig_page(request: Request) -> Response:
        """MIG: isolated services packed onto the fewest MIG GPUs, the plan per GPU, the
        commands that create it, and whole smaller cards priced beside it."""
        service: Service = request.app.state.service
        fields = query_fields(request)
        values = {"model": "llama-3.1-8b", "quant": "int4", "replicas": "7", **fields}
        result = None
        problem = None
        if "model" in fields or "memory_gib" in fields:

            def compute() -> Any:
                from whichgpu.mig_planner import make_services, plan_mig

                wanted = ("model", "quant", "replicas", "memory_gib", "precision")
                spec = {k: fields[k] for k in wanted if k in fields}
                return plan_mig(service.catalog(), make_services([spec], text=True))

            result, problem = await run_off_loop(request.state.language, compute)
        return _answer_page(request, "mig.html", problem, lambda: mig_context(values, result))

    @app.get("/catalog/{gpu}", include_in_schema=False)
    async def gpu_page(request: Request, gpu: str) -> Response:
        service: Service = request.app.state.service
        found, problem = await run_off_loop(
            request.state.language, lambda: service.catalog().resolve(gpu)
        )
        return _answer_page(
            request,
            "gpu.html",
            problem,
            lambda: gpu_context(service, found),
        )


# -- page contexts -------------------------------------------------------------------------


def recommend_context(
    service: Service, fields: dict[str, str], lists: dict[str, list[str]], config_name: str
) -> dict[str, Any]:
    from whichgpu.engines import ENGINES
    from whichgpu.job import PRECISIONS, QUANT_BITS
    from whichgpu.models.presets import presets
    from whichgpu.requests import CAPABILITIES, DEFAULT_MARKETS, KINDS, MARKETS, OBJECTIVES

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
        "precisions": PRECISIONS,
        "quants": tuple(QUANT_BITS),
        "markets": MARKETS,
        "capabilities": CAPABILITIES,
        "objectives": OBJECTIVES,
        "gpus": [(g.id, g.name) for g in service.catalog().gpus],
        "engines": [(e.id, e.name) for e in ENGINES.values()],
        "percentiles": ("p50", "p95", "p99"),
    }


def summary_of(result: Any) -> str:
    """The answer in one line, for the top of the page: ``Pick: 4 × RTX 4090 · $9.90 ·
    7.1 h`` (or that nothing meets every constraint)."""
    from whichgpu.fields import format_cost, format_duration
    from whichgpu.render.recommend_out import hardware_cell

    if result is None:
        return ""
    pick = result.pick
    if pick is None:
        return _("No option meets every constraint.")
    parts = [fmt(_("Pick: {option}"), option=hardware_cell(pick))]
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
    from whichgpu.fields import format_usd

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
    from whichgpu.render.recommend_out import hardware_cell, shown_options, status_text

    rows = []
    for rank, option in enumerate(shown_options(result, every, top, None if every else top), 1):
        first = option.runs[0] if option.runs else None
        rows.append(
            {
                "rank": rank,
                "hardware": hardware_cell(option),
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
    from whichgpu.job import PRECISIONS, QUANT_BITS
    from whichgpu.models.presets import presets
    from whichgpu.render.fit_out import COMPONENT_LABELS
    from whichgpu.requests import KINDS
    from whichgpu.units import BYTES_PER_GIB

    parts, gpus, summary = [], [], ""
    if result is not None:
        est = result.estimate
        parts = [
            (_(COMPONENT_LABELS.get(k, k)), v / BYTES_PER_GIB)
            for k, v in est.components.items()
            if v > 0
        ]
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
                "strategy": row.strategy,
            }
            for row in result.gpus
        ]
    return {
        "values": values,
        "kinds": [k for k in KINDS if k not in ("render", "fp64")],
        "presets": [(p.id, p.display_name) for p in presets().values()],
        "precisions": PRECISIONS,
        "quants": sorted(QUANT_BITS),
        "parts": parts,
        "rows": gpus,
        "summary": summary,
    }


def estimate_context(service: Service, values: dict[str, str], result: Any) -> dict[str, Any]:
    """The estimate form's choices, and the answer's figures as lines."""
    from whichgpu.fields import format_duration, format_rate
    from whichgpu.job import PRECISIONS
    from whichgpu.models.presets import presets
    from whichgpu.requests import KINDS

    summary, lines = "", []
    if result is not None:
        rate = result.throughput
        summary = fmt(
            _("{rate} on {count} × {gpu} (likely {low}–{high}), {bound}-bound"),
            rate=format_rate(rate.value, rate.unit), count=result.count,
            gpu=result.gpu.short_name, low=format_rate(rate.low, rate.unit),
            high=format_rate(rate.high, rate.unit), bound=_(result.bound),
        )  # fmt: skip
        if result.time_s is not None:
            lines.append(fmt(_("Time: {time}"), time=format_duration(result.time_s)))
        if result.mfu is not None:
            lines.append(fmt(_("MFU: {mfu:.0%}"), mfu=result.mfu))
        if result.ttft_s is not None:
            lines.append(fmt(_("Time to first token: {ms:,.0f} ms"), ms=result.ttft_s * 1e3))
        lines.append(
            fmt(
                _("Efficiency {eta:.0%} of the roofline ({provenance})."),
                eta=result.efficiency,
                provenance=result.provenance,
            )
        )
    return {
        "values": values,
        "kinds": KINDS,
        "presets": [(p.id, p.display_name) for p in presets().values()],
        "gpus": [(g.id, g.name) for g in service.catalog().gpus],
        "precisions": PRECISIONS,
        "summary": summary,
        "lines": lines,
    }


def mig_context(values: dict[str, str], result: Any) -> dict[str, Any]:
    """The MIG form's choices, and the plan: the pick's GPUs and instances, its commands,
    every MIG GPU's plan and the whole cards beside them."""
    from whichgpu.fields import format_cost
    from whichgpu.job import QUANT_BITS
    from whichgpu.models.presets import presets
    from whichgpu.render.mig_out import smi_commands

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
            pick_gpus = [
                (g.index, [(i.service, i.profile.profile, i.start) for i in g.instances])
                for g in pick.plan.gpus[:16]
            ]
            commands = smi_commands(pick.plan)
        options = [
            {
                "gpu": o.gpu.short_name,
                "gpus": o.gpus,
                "cost": format_cost(None if o.usd_per_h is None else o.usd_per_h * o.gpus),
                "unplaced": len(o.plan.unplaced),
                "pick": o is pick,
            }
            for o in result.options
        ]
        cards = [(c.gpu.short_name, c.cards, format_cost(c.usd_per_h)) for c in result.cards[:8]]
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
    from whichgpu.fields import format_field, format_usd_range
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
    from whichgpu.fields import FIELDS, format_field, format_usd_range
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
