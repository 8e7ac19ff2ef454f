"""The pages that compute (recommend, fit, estimate, MIG), each a function of plain values
(the language, the path, the form's fields) to its status and HTML: no request object, so
that a page is computed and rendered wherever there is a core for it, in the server's
compute processes (:mod:`whichgpu.web.pool`, ``whichgpu serve --workers N``) or a worker
thread, and only the HTML crosses back. The routes (:mod:`whichgpu.web.pages`) read the
request and pick :data:`VIEWS`' entry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlencode

from whichgpu.errors import naming_fields
from whichgpu.i18n import speaking
from whichgpu.render.chart_data import by_time
from whichgpu.web.charts import recommendation_charts
from whichgpu.web.contexts import (
    estimate_context,
    fit_context,
    mig_context,
    pick_front,
    recommend_context,
    rows_of,
    summary_of,
)
from whichgpu.web.core import LANGUAGES, Problem, Service, run
from whichgpu.web.forms import recommend_form
from whichgpu.web.labels import page_field_name
from whichgpu.web.templating import render

#: A page's answer: its HTTP status and its HTML
Page = tuple[int, str]


def chrome(language: str, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """What every page's frame needs: languages with links, navigation."""
    links = {}
    for code in LANGUAGES:
        kept = {k: v for k, v in query.items() if k != "lang"}
        kept["lang"] = [code]
        links[code] = f"{path}?{urlencode(kept, doseq=True)}"
    return {"language": language, "languages": LANGUAGES, "language_links": links, "path": path}


def html_page(
    language: str,
    path: str,
    query: dict[str, list[str]],
    template: str,
    context: Callable[[], dict[str, Any]],
    problem: Problem | None = None,
) -> Page:
    """A page in ``language`` (its context built in it: labels are translated) with the
    problem, and its status, if there is one; its language links carry ``query``, so that
    switching language keeps what the form asked."""
    with speaking(language), naming_fields(page_field_name):
        html = render(template, **chrome(language, path, query), problem=problem, **context())
    return (problem.status if problem is not None else 200), html


def computed(language: str, compute: Callable[[], Any]) -> tuple[Any, Problem | None]:
    """``compute()`` in ``language``, a user error as a problem naming the form's labels."""
    return run(language, compute, namer=page_field_name)


def recommend_view(
    service: Service,
    language: str,
    path: str,
    fields: dict[str, str],
    lists: dict[str, list[str]],
    config: str | None,
    config_name: str,
    computing: bool,
    problem: Problem | None,
    failed: Problem | None = None,
) -> Page:
    """The recommend form, and once it asks (``computing``: a POST, or a query with a task)
    the ranked options with their charts; ``problem``: the form's own (an upload that is not
    UTF-8); ``failed``: why the computation has no answer (past its time limit), the form
    shown with it."""
    problem = problem or failed
    result: Any = None
    charts: Any = None
    built_form: Any = None
    if computing and problem is None:

        def compute() -> Any:
            built = recommend_form(fields, lists, config, config_name)
            found = service.recommendation(built.workload, built.ranking)
            return built, found, recommendation_charts(found)

        value, problem = computed(language, compute)
        if value is not None:
            built_form, result, charts = value
    from whichgpu.render.chart_data import is_service

    # a posted form's fields ride on the language links (not an uploaded file)
    posted = {k: [v for v in vs if v.strip()] for k, vs in lists.items()}
    return html_page(
        language,
        path,
        {k: vs for k, vs in posted.items() if vs},
        "recommend.html",
        lambda: {
            **recommend_context(service, fields, lists, config_name),
            "form": built_form,
            "result": result,
            "rows": rows_of(result, bool(fields.get("all"))) if result is not None else [],
            "served": result is not None and is_service(result),  # its serving columns
            "summary": summary_of(result),
            "front": pick_front(result),
            "charts": charts,
            "charts_by_time": result is not None and by_time(result),
        },
        problem,
    )


@dataclass(frozen=True)
class FormPage:
    """A GET form that computes once its fields ask (fit, estimate, MIG): its template,
    the values its empty form shows, the fields whose presence asks, what it computes from
    the fields and the context its template gets."""

    template: str
    defaults: dict[str, str]
    triggers: tuple[str, ...]
    compute: Callable[[Service, dict[str, str]], Any]
    context: Callable[[Service, dict[str, str], Any], dict[str, Any]]


def _fit(service: Service, fields: dict[str, str]) -> Any:
    """Will it fit? The memory at the job's peak by component, and every GPU: fits on one,
    headroom, the fewest that hold it (``whichgpu fit`` on one screen)."""
    from whichgpu.commands.fit import fit_image_request, fit_request
    from whichgpu.inputs import check_fields, check_keys, parse, specs, take
    from whichgpu.inputs.requests import IMAGE_KINDS, FitRequest
    from whichgpu.web.core import model_arch

    check_keys(fields, [s.name for s in specs(FitRequest)])  # a field the form has not
    request_fields = take(FitRequest, dict(fields))
    check_fields((FitRequest, request_fields), text=True)  # every field at once
    parsed: FitRequest = parse(FitRequest, request_fields, text=True)
    if parsed.task in IMAGE_KINDS:
        return fit_image_request(service.catalog(), parsed)
    arch = model_arch(parsed.model, parsed.params, None)
    return fit_request(service.catalog(), arch, parsed)[0]


def _estimate(service: Service, fields: dict[str, str]) -> Any:
    """How fast, how long? A job on one GPU model: the throughput with its range, the bound,
    the time for a size, the MFU (``whichgpu estimate`` on one screen)."""
    from whichgpu.commands.estimate import estimate_job
    from whichgpu.inputs import check_fields, check_keys, parse, specs, take
    from whichgpu.inputs.requests import EstimateRequest
    from whichgpu.models import resolve_gpu
    from whichgpu.web.core import model_arch

    check_keys(fields, [s.name for s in specs(EstimateRequest)])  # a field the form has not
    raw = take(EstimateRequest, dict(fields))
    check_fields((EstimateRequest, raw), text=True)  # every field at once
    parsed: EstimateRequest = parse(EstimateRequest, raw, text=True)
    arch = model_arch(parsed.model, parsed.params, None) if parsed.uses_model else None
    return estimate_job(resolve_gpu(service.catalog(), parsed.gpu), arch, parsed)


def _mig(service: Service, fields: dict[str, str]) -> Any:
    """MIG: isolated services packed onto the fewest MIG GPUs, the plan per GPU, the
    commands that create it, and whole smaller cards priced beside it."""
    from whichgpu.commands.mig import make_services, plan_mig
    from whichgpu.inputs import check_fields, check_keys
    from whichgpu.inputs.mig_requests import ServiceRequest

    wanted = ("model", "quant", "replicas", "memory_gib", "precision")
    check_keys(fields, wanted)  # a field the form has not
    spec = {k: fields[k] for k in wanted if k in fields}
    check_fields((ServiceRequest, spec), text=True)  # every field at once
    return plan_mig(service.catalog(), make_services([spec], text=True))


FORMS: dict[str, FormPage] = {
    "fit": FormPage(
        "fit.html", {"model": "llama-3.1-8b", "task": "lora"}, ("model", "params"), _fit,
        fit_context,
    ),
    "estimate": FormPage(
        "estimate.html", {"model": "llama-3.1-8b", "task": "lora", "gpu": "rtx-a6000"},
        ("gpu",), _estimate, estimate_context,
    ),
    "mig": FormPage(
        "mig.html", {"model": "llama-3.1-8b", "quant": "int4", "replicas": "7"},
        ("model", "memory_gib"), _mig, lambda _service, values, result: mig_context(values, result),
    ),
}  # fmt: skip


def computes(name: str, fields: dict[str, str]) -> bool:
    """Whether the GET form ``name`` (fit, estimate, MIG) asks for a computation."""
    return any(key in fields for key in FORMS[name].triggers)


def form_view(
    name: str,
    service: Service,
    language: str,
    path: str,
    query: dict[str, list[str]],
    fields: dict[str, str],
    failed: Problem | None = None,
) -> Page:
    """The GET form ``name`` (:data:`FORMS`): the empty form, or once its fields ask, what it
    computes; ``failed``: why the computation has no answer (past its time limit), the form
    shown with it."""
    form = FORMS[name]
    values = {**form.defaults, **fields}
    result, problem = None, failed
    if failed is None and computes(name, fields):
        result, problem = computed(language, lambda: form.compute(service, fields))
    return html_page(
        language,
        path,
        query,
        form.template,
        lambda: form.context(service, values, result),
        problem,
    )


#: The computing pages by name: what a route asks the compute pool or a thread to render
VIEWS: dict[str, Callable[..., Page]] = {
    "recommend": recommend_view,
    **{name: partial(form_view, name) for name in FORMS},
}
