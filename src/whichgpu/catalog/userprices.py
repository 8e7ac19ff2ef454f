"""Users' own prices: a CSV or TOML price file, and SkyPilot catalog ``vms.csv`` imports.

Parsing is pure: the caller reads the file and passes its text, path and date. Each row is
validated like the shipped catalog; a bad row is one :class:`CatalogError` naming the file
and the row. GPU names are resolved forgivingly (SkyPilot's names in SkyPilot's sense).
"""

from __future__ import annotations

import csv
import io
import tomllib
from dataclasses import dataclass
from datetime import date
from typing import Any

from whichgpu.catalog.loader import validate
from whichgpu.catalog.records import Price, Source
from whichgpu.catalog.store import Catalog
from whichgpu.errors import AmbiguousName, CatalogError, UnknownName
from whichgpu.i18n import _, fmt

#: Columns (CSV) or keys (TOML ``[[price]]`` tables) of a user price file.
USER_PRICE_KEYS = (
    "gpu",
    "price_usd_per_h",
    "market",
    "provider",
    "region",
    "instance",
    "gpus_per_instance",
    "as_of",
    "note",
)


@dataclass(frozen=True)
class PriceImport:
    """Prices read from one file, the source they cite, and what was left out and why."""

    prices: tuple[Price, ...]
    source: Source
    skipped: tuple[str, ...] = ()


def file_source(source_id: str, path: str, kind: str, file_date: date) -> Source:
    return Source(
        id=source_id,
        title=fmt(_("{kind}: {path}"), kind=kind, path=path),
        publisher=_("you"),
        url=path,
        published=file_date.isoformat(),
        retrieved=file_date,
        kind=kind,
    )


def _resolve(catalog: Catalog, name: str, path: str, row: int, scope: str = "user") -> str:
    try:
        return catalog.resolve(name, scope).id
    except (UnknownName, AmbiguousName) as error:
        raise CatalogError(path, row, error.message()) from None


def _price(values: dict[str, Any], path: str, row: int) -> Price:
    return validate(Price, values, path, row)


def parse_price_file(
    text: str, path: str, catalog: Catalog, source_id: str, file_date: date
) -> PriceImport:
    """A user price file: CSV (header row) or TOML (``[[price]]`` tables), told by ``path``."""
    if path.lower().endswith(".toml"):
        entries = _toml_price_rows(text, path)
    else:
        entries = _csv_price_rows(text, path)
    return prices_from_entries(entries, path, catalog, source_id, file_date)


def prices_from_entries(
    entries: list[tuple[int, dict[str, Any]]],
    path: str,
    catalog: Catalog,
    source_id: str,
    file_date: date,
) -> PriceImport:
    """Validate price entries (row number, keys of :data:`USER_PRICE_KEYS`) into prices."""
    source = file_source(source_id, path, _("price file"), file_date)
    prices = []
    for row, entry in entries:
        unknown = [key for key in entry if key not in USER_PRICE_KEYS]
        if unknown:
            raise CatalogError(
                path,
                row,
                fmt(
                    _("unknown column {column!r}; valid columns: {valid}"),
                    column=unknown[0],
                    valid=", ".join(USER_PRICE_KEYS),
                ),
            )
        if "gpu" not in entry:
            raise CatalogError(path, row, _("gpu: field required"))
        values = {
            "market": "on-demand",
            "provider": _("you"),
            "as_of": file_date.isoformat(),
            **entry,
            "gpu": _resolve(catalog, str(entry["gpu"]), path, row),
            "source": source_id,
        }
        prices.append(_price(values, path, row))
    return PriceImport(tuple(prices), source)


def _csv_price_rows(text: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise CatalogError(path, None, _("the file is empty; expected a header row"))
    rows = []
    for entry in reader:
        if None in entry:
            raise CatalogError(path, reader.line_num, _("more cells than the header has"))
        rows.append((reader.line_num, {k: v for k, v in entry.items() if v not in ("", None)}))
    return rows


def _toml_price_rows(text: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CatalogError(path, None, str(error)) from None
    return price_tables(data.get("price", []), path)


def price_tables(tables: object, path: str) -> list[tuple[int, dict[str, Any]]]:
    """``[[price]]`` tables of a TOML document, numbered from 1 (the "row" in errors)."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise CatalogError(path, None, _("expected [[price]] tables"))
    return list(enumerate(tables, start=1))


SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price")


def parse_skypilot_vms(
    text: str, path: str, catalog: Catalog, source_id: str, file_date: date, provider: str
) -> PriceImport:
    """A SkyPilot catalog ``vms.csv``: one on-demand and one spot price per GPU instance.

    Columns are read by name (clouds order them differently and some add
    ``AvailabilityZone``). The per-GPU price is the instance price divided by
    ``AcceleratorCount``. Rows without an accelerator (CPU instances) are ignored; rows for
    accelerators whichgpu does not carry are skipped and listed.
    """
    source = file_source(source_id, path, _("SkyPilot catalog"), file_date)
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [column for column in SKYPILOT_COLUMNS if column not in header]
    if missing:
        raise CatalogError(
            path,
            1,
            fmt(_("not a SkyPilot vms.csv: missing column {column!r}"), column=missing[0]),
        )
    prices: list[Price] = []
    skipped: dict[str, None] = {}
    for entry in reader:
        row = reader.line_num
        name = (entry.get("AcceleratorName") or "").strip()
        if not name:
            continue
        try:
            gpu = catalog.resolve(name, "skypilot").id
        except (UnknownName, AmbiguousName):
            skipped[name] = None
            continue
        count = _number(entry.get("AcceleratorCount"), "AcceleratorCount", path, row)
        if count is None or count <= 0:
            raise CatalogError(path, row, _("AcceleratorCount must be a positive number"))
        for column, market in (("Price", "on-demand"), ("SpotPrice", "spot")):
            instance_price = _number(entry.get(column), column, path, row)
            if instance_price is None or instance_price <= 0:
                continue
            values = {
                "gpu": gpu,
                "market": market,
                "provider": provider,
                "region": entry.get("Region") or None,
                "instance": entry.get("InstanceType") or None,
                "gpus_per_instance": count,
                "price_usd_per_h": instance_price / count,
                "source": source_id,
                "as_of": file_date.isoformat(),
            }
            prices.append(_price(values, path, row))
    return PriceImport(tuple(prices), source, tuple(skipped))


def _number(cell: str | None, column: str, path: str, row: int) -> float | None:
    if cell is None or cell.strip() == "":
        return None
    try:
        return float(cell)
    except ValueError:
        raise CatalogError(
            path, row, fmt(_("{column}: not a number (got {value!r})"), column=column, value=cell)
        ) from None
