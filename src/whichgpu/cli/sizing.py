"""Sizing commands: ``fit`` (memory) and ``estimate`` (speed and time). Their options are
the fields of :class:`~whichgpu.inputs.requests.FitRequest` and
:class:`~whichgpu.inputs.requests.EstimateRequest` (:mod:`whichgpu.cli.options`)."""

from __future__ import annotations

from typing import Any

from whichgpu.cli._app import HubModel, JsonFlag, app, emit, model_arch
from whichgpu.cli.options import with_fields
from whichgpu.i18n import _
from whichgpu.inputs.requests import IMAGE_KINDS, EstimateRequest, FitRequest


@app.command(
    help=_("Will it fit? Memory by component, and for every GPU: fits, headroom, how many.")
)
@with_fields(FitRequest)
def fit(fields: dict[str, Any], hub: HubModel = None, json_out: JsonFlag = False) -> None:
    from whichgpu.catalog import load_catalog
    from whichgpu.commands.fit import fit_request
    from whichgpu.inputs import parse

    request: FitRequest = parse(FitRequest, fields, text=True)
    if request.task in IMAGE_KINDS:
        from whichgpu.commands.fit import fit_image_request
        from whichgpu.render import fit_out

        image = fit_image_request(load_catalog(), request)
        emit(
            json_out,
            lambda: fit_out.image_fit_doc(image),
            lambda console: fit_out.print_image_fit(image, console),
        )
        return
    arch = model_arch(request.model, request.params, hub)
    result, serving = fit_request(load_catalog(), arch, request)
    from whichgpu.render import fit_out

    emit(
        json_out,
        lambda: fit_out.fit_doc(result, serving),
        lambda console: fit_out.print_fit(result, serving, console),
    )


@app.command(help=_("How fast, how long? Throughput, time, bound and MFU, with a range."))
@with_fields(EstimateRequest)
def estimate(fields: dict[str, Any], hub: HubModel = None, json_out: JsonFlag = False) -> None:
    from whichgpu.catalog import load_catalog
    from whichgpu.commands.estimate import estimate_job
    from whichgpu.inputs import parse
    from whichgpu.models import resolve_gpu

    request: EstimateRequest = parse(EstimateRequest, fields, text=True)
    arch = model_arch(request.model, request.params, hub) if request.uses_model else None
    result = estimate_job(resolve_gpu(load_catalog(), request.gpu), arch, request)
    from whichgpu.render import estimate_out

    emit(
        json_out,
        lambda: estimate_out.estimate_doc(result),
        lambda console: estimate_out.print_estimate(result, arch, console),
    )
