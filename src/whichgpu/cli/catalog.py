"""Catalog commands: ``gpus``, ``show``, ``compare``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from whichgpu.cli._app import (
    JsonFlag,
    PriceFiles,
    SkypilotFiles,
    app,
    emit,
    print_json,
    user_catalog,
    warn,
)
from whichgpu.i18n import _, fmt

if TYPE_CHECKING:
    from whichgpu.catalog.pricefeed import Snapshot


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
        typer.Option(
            "--feature",
            help=_("Required: mig, nvlink, rt, fp64, display, ecc, nvenc, nvdec, cuda."),
        ),
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.catalog.filters import filter_gpus

    catalog = user_catalog(prices, skypilot)
    found = filter_gpus(catalog, min_vram, arch, feature or [])
    from whichgpu.render import tables

    def doc() -> dict[str, Any]:  # json_doc imported for --json only (cold start)
        from whichgpu.render.json_doc import gpu_list_doc

        return gpu_list_doc(found, catalog)

    emit(
        json_out,
        doc,
        lambda console: tables.print_gpu_list(found, catalog, console),
    )


@app.command(help=_("Show one GPU: every spec with its source, its prices with their dates."))
def show(
    gpu: Annotated[str, typer.Argument(help=_("A GPU name: a100, rtx-a6000, h100-pcie…"))],
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.catalog.userdata import today
    from whichgpu.models import resolve_gpu

    catalog = user_catalog(prices, skypilot)
    found = resolve_gpu(catalog, gpu)
    from whichgpu.render import tables

    def doc() -> dict[str, Any]:
        from whichgpu.render.json_doc import show_doc

        return show_doc(found, catalog, today())

    emit(
        json_out,
        doc,
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
    from whichgpu.catalog.userdata import today
    from whichgpu.commands.compare import compare as compare_gpus
    from whichgpu.commands.compare import parse_markets

    catalog = user_catalog(prices, skypilot)
    comparison = compare_gpus(catalog, gpus, parse_markets(market))
    from whichgpu.render import tables

    def doc() -> dict[str, Any]:
        from whichgpu.render.json_doc import compare_doc

        return compare_doc(comparison, catalog, today())

    emit(
        json_out,
        doc,
        lambda console: tables.print_compare(comparison, catalog, today(), console),
    )


prices_app = typer.Typer(
    help=_("Price snapshots: fetch SkyPilot's published price catalogs (opt-in network use)."),
    no_args_is_help=True,
)
app.add_typer(prices_app, name="prices")


@prices_app.command(
    "update",
    help=_(
        "Fetch SkyPilot's price catalogs (one vms.csv per cloud), check them and store them, "
        "dated, in the cache: later commands use them. A failure changes nothing."
    ),
)
def prices_update(
    cloud: Annotated[
        list[str] | None,
        typer.Option(
            "--cloud", help=_("A cloud to fetch (default: lambda, runpod, vast, nebius, aws, gcp).")
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option("--url", help=_("Where the catalogs are (default: SkyPilot's on GitHub).")),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, max=300, help=_("Seconds to wait for each file."))
    ] = 20,
    versions_url: Annotated[
        str | None,
        typer.Option(
            "--versions-url",
            help=_(
                "Where each cloud's latest version is looked up, for a --url with {commit} "
                "(default: GitHub's API)."
            ),
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    from whichgpu.catalog import load_catalog, pricefeed
    from whichgpu.catalog.userdata import today

    clouds = tuple(dict.fromkeys(cloud or pricefeed.DEFAULT_CLOUDS))
    snapshot = pricefeed.update(
        load_catalog(), clouds, url or pricefeed.CATALOG_URL, timeout, today(),
        versions_url or pricefeed.VERSIONS_URL,
    )  # fmt: skip
    doc = {
        "fetched": snapshot.fetched.isoformat(),
        "url": snapshot.url,
        "path": str(snapshot.path),
        "offers": snapshot.clouds,
        "versions": _versions_doc(snapshot),
    }
    if json_out:
        print_json(doc)
        return
    typer.echo(
        _("Stored a price snapshot of {date} in {path}:").format(
            date=doc["fetched"], path=doc["path"]
        )
    )
    for name, count in snapshot.clouds.items():
        typer.echo(_("  {cloud}: {count} offers").format(cloud=name, count=count)
                   + _version_text(snapshot, name))  # fmt: skip


def _versions_doc(snapshot: Snapshot) -> dict[str, dict[str, object]]:
    """Each cloud's version read, as JSON: its commit, the day committed, its age."""
    from whichgpu.catalog.prices import age_days
    from whichgpu.catalog.userdata import today

    return {
        cloud: {
            "commit": v.commit,
            "committed": v.committed.isoformat(),
            "age_days": age_days(v.committed, today()),
        }
        for cloud, v in (snapshot.versions or {}).items()
    }


def _version_text(snapshot: Snapshot, cloud: str) -> str:
    """``, version abc1234 of 2026-11-20 (16 days old)`` where the cloud has one."""
    from whichgpu.catalog.prices import age_days
    from whichgpu.catalog.userdata import today

    version = (snapshot.versions or {}).get(cloud)
    if version is None:
        return ""
    days = age_days(version.committed, today())
    text = _(", version {commit} of {date} ({days} days old)")
    return fmt(text, commit=version.commit[:7], date=version.committed.isoformat(), days=days)


@prices_app.command(
    "status", help=_("Which prices are in use: the snapshot's date, or the shipped ones.")
)
def prices_status(json_out: JsonFlag = False) -> None:
    from whichgpu.catalog import load_catalog, pricefeed
    from whichgpu.catalog.prices import age_days
    from whichgpu.catalog.userdata import today

    found = pricefeed.read_snapshot(load_catalog(), today())  # re-read: usable now
    for warning in found.warnings:
        warn(warning.message())
    snapshot = found.snapshot
    if snapshot is None:
        from whichgpu.catalog.prices import age_months, offer_dates

        dates = offer_dates(load_catalog())
        doc: dict[str, object] = {
            "snapshot": None,
            "providers": [
                {
                    "provider": d.provider,
                    "offers": d.offers,
                    "newest": d.newest,
                    "oldest": d.oldest,
                    "undated": d.undated,
                    "age_months": None if d.newest is None else age_months(d.newest, today()),
                }
                for d in dates
            ],
        }
        text = _(
            "No price snapshot: the shipped prices are in use "
            "('whichgpu prices update' fetches fresh ones)."
        )
        for d in dates:
            text += "\n" + (
                fmt(_("{provider}: offers {n}, none dated"), provider=d.provider, n=d.offers)
                if d.newest is None
                else fmt(
                    _(
                        "{provider}: offers {n}, seen {oldest} to {newest} (the latest "
                        "{months} months old), undated {undated}"
                    ),
                    provider=d.provider,
                    n=d.offers,
                    oldest=d.oldest,
                    newest=d.newest,
                    months=age_months(d.newest, today()),
                    undated=d.undated,
                )
            )
    else:
        days = age_days(snapshot.fetched, today())
        readable = {c.cloud: len(c.prices) for c in found.clouds if c.problem is None}
        left_out = {c.cloud: c.problem for c in found.clouds if c.problem is not None}
        doc = {
            "snapshot": {
                "fetched": snapshot.fetched.isoformat(),
                "age_days": days,
                "url": snapshot.url,
                "path": str(snapshot.path),
                "offers": readable,
                "left_out": left_out,
                "versions": _versions_doc(snapshot),
            }
        }
        text = _("Price snapshot of {date} ({days} days old), from {url}: {clouds}.").format(
            date=snapshot.fetched.isoformat(),
            days=days,
            url=snapshot.url,
            clouds=", ".join(f"{c} ({n}{_version_text(snapshot, c)})" for c, n in readable.items())
            or _("none"),
        )
        if left_out:
            text += " " + _("Left out, unreadable: {clouds}.").format(clouds=", ".join(left_out))
    if json_out:
        print_json(doc)
        return
    typer.echo(text)


@app.command(help=_("List the model presets: parameters, family, layers, heads, context."))
def models(
    family: Annotated[
        str | None,
        typer.Option("--family", help=_("Only this family (llama, qwen2, mixtral…; a prefix).")),
    ] = None,
    min_params: Annotated[
        str | None, typer.Option("--min-params", metavar="SIZE", help=_("At least: 7B."))
    ] = None,
    max_params: Annotated[
        str | None, typer.Option("--max-params", metavar="SIZE", help=_("At most: 70B."))
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    from whichgpu.errors import InvalidInput
    from whichgpu.models.presets import list_models
    from whichgpu.units import parse_count

    def size(text: str | None, flag: str) -> float | None:
        if text is None:
            return None
        try:
            return parse_count(text)
        except ValueError:
            raise InvalidInput("not_a_size", field=(flag,), value=text) from None

    from whichgpu.models.pipelines import list_pipelines
    from whichgpu.models.presets import check_family

    check_family(family)
    low, high = size(min_params, "min_params"), size(max_params, "max_params")
    found = list_models(family, low, high)
    pipes = list_pipelines(family, low, high)
    from whichgpu.render import json_doc, models_out

    emit(
        json_out,
        lambda: json_doc.models_doc(found, pipes),
        lambda console: models_out.print_models(found, console, pipes),
    )
