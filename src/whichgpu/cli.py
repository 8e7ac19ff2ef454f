"""The ``whichgpu`` command: thin shells that parse input, call the library, render."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from whichgpu.errors import WhichGPUError
from whichgpu.i18n import _

app = typer.Typer(
    name="whichgpu",
    help=_("Which GPU should I rent or buy for this job, how many, and what will it cost?"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

JsonFlag = Annotated[
    bool, typer.Option("--json", help=_("Print JSON (the schema is in docs/json.md)."))
]
PriceFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help=_("Your prices (CSV or TOML); they replace the catalog's for that GPU and market."),
    ),
]
SkypilotFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--skypilot-catalog",
        metavar="VMS_CSV",
        help=_("Import prices from a SkyPilot catalog vms.csv."),
    ),
]


def _catalog(prices: list[Path] | None, skypilot: list[Path] | None) -> Any:
    from whichgpu.catalog import load_catalog
    from whichgpu.userdata import catalog_with_user_data

    catalog, skipped = catalog_with_user_data(load_catalog(), prices or [], skypilot or [])
    if skipped:
        message = _("note: skipped accelerators whichgpu does not carry: {names}")
        typer.echo(message.format(names=", ".join(skipped)), err=True)
    return catalog


def _print_json(doc: object) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


@app.command()
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
    """List the GPU catalog."""
    from whichgpu.catalog.filters import filter_gpus

    catalog = _catalog(prices, skypilot)
    found = filter_gpus(catalog, min_vram, arch, feature or [])
    if json_out:
        from whichgpu.render.json_doc import gpu_list_doc

        _print_json(gpu_list_doc(found, catalog))
        return
    from whichgpu.render.tables import make_console, print_gpu_list

    print_gpu_list(found, catalog, make_console())


@app.command()
def show(
    gpu: Annotated[str, typer.Argument(help=_("A GPU name: a100, rtx-a6000, h100-pcie…"))],
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    """Show one GPU: every spec with its source, its prices with their dates."""
    from whichgpu.userdata import today

    catalog = _catalog(prices, skypilot)
    found = catalog.resolve(gpu)
    if json_out:
        from whichgpu.render.json_doc import show_doc

        _print_json(show_doc(found, catalog, today()))
        return
    from whichgpu.render.tables import make_console, print_gpu

    print_gpu(found, catalog, today(), make_console())


@app.command()
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
    """Compare GPUs side by side (the article's table, checked), with prices and ratios."""
    from whichgpu.compare import compare as compare_gpus
    from whichgpu.compare import parse_markets
    from whichgpu.userdata import today

    catalog = _catalog(prices, skypilot)
    comparison = compare_gpus(catalog, gpus, parse_markets(market))
    if json_out:
        from whichgpu.render.json_doc import compare_doc

        _print_json(compare_doc(comparison, catalog, today()))
        return
    from whichgpu.render.tables import make_console, print_compare

    print_compare(comparison, catalog, today(), make_console())


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"whichgpu: {_('error')}: {message}\n")
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; bad input is one line on stderr and exit code 2."""
    try:
        result = app(args=argv, prog_name="whichgpu", standalone_mode=False)
    except WhichGPUError as error:
        _fail(error.message())
    except (typer.Exit, typer.Abort) as error:
        raise SystemExit(getattr(error, "exit_code", 1)) from None
    except Exception as error:
        # Click's usage errors (unknown option, missing argument) carry their exit code.
        exit_code = getattr(error, "exit_code", None)
        format_message = getattr(error, "format_message", None)
        if exit_code is None or format_message is None:
            raise
        hint = _("see 'whichgpu --help'")
        _fail(f"{format_message()} ({hint})", exit_code)
    if isinstance(result, int) and result:
        raise SystemExit(result)
