"""Catalog commands: ``gpus``, ``show``, ``compare``."""

from __future__ import annotations

from typing import Annotated

import typer

from whichgpu.cli._app import (
    JsonFlag,
    PriceFiles,
    SkypilotFiles,
    app,
    emit,
    user_catalog,
)
from whichgpu.i18n import _


@app.command(help=_("List the GPU catalog."))
def gpus(
    min_vram: Annotated[
        float | None, typer.Option("--min-vram", metavar="GB", help=_("At least this much VRAM."))
    ] = None,
    arch: Annotated[
        str | None, typer.Option("--arch", help=_("Architecture (Ampere, Hopper, Ada…)."))
    ] = None,
    feature: Annotated[
        list[str] | None,
        typer.Option("--feature", help=_("Required: mig, nvlink, rt, fp64, display, ecc.")),
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.catalog.filters import filter_gpus

    catalog = user_catalog(prices, skypilot)
    found = filter_gpus(catalog, min_vram, arch, feature or [])
    from whichgpu.render import json_doc, tables

    emit(
        json_out,
        lambda: json_doc.gpu_list_doc(found, catalog),
        lambda console: tables.print_gpu_list(found, catalog, console),
    )


@app.command(help=_("Show one GPU: every spec with its source, its prices with their dates."))
def show(
    gpu: Annotated[str, typer.Argument(help=_("A GPU name: a100, rtx-a6000, h100-pcie…"))],
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.userdata import today

    catalog = user_catalog(prices, skypilot)
    found = catalog.resolve(gpu)
    from whichgpu.render import json_doc, tables

    emit(
        json_out,
        lambda: json_doc.show_doc(found, catalog, today()),
        lambda console: tables.print_gpu(found, catalog, today(), console),
    )


@app.command(
    help=_("Compare GPUs side by side (the article's table, checked), with prices and ratios.")
)
def compare(
    gpus: Annotated[
        list[str], typer.Argument(help=_("Two or more GPU names; the first is the baseline."))
    ],
    market: Annotated[
        list[str] | None,
        typer.Option(
            "--market", help=_("Market kinds to price: on-demand, spot, marketplace, serverless.")
        ),
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.comparison import compare as compare_gpus
    from whichgpu.comparison import parse_markets
    from whichgpu.userdata import today

    catalog = user_catalog(prices, skypilot)
    comparison = compare_gpus(catalog, gpus, parse_markets(market))
    from whichgpu.render import json_doc, tables

    emit(
        json_out,
        lambda: json_doc.compare_doc(comparison, catalog, today()),
        lambda console: tables.print_compare(comparison, catalog, today(), console),
    )
