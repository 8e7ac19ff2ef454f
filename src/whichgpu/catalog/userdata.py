"""The user's own data, read from disk: price files, SkyPilot catalogs and the config file.

This is the shell around the pure catalog: it reads files (only when a command asks for it)
and hands their text to :mod:`whichgpu.catalog.userprices`.

The config file is ``$WHICHGPU_CONFIG``, else ``$XDG_CONFIG_HOME/whichgpu/config.toml``
(``~/.config/whichgpu/config.toml``). It may hold::

    prices = ["~/gpu-prices.csv"]            # price files, CSV or TOML
    skypilot_catalogs = ["~/sky/lambda/vms.csv"]

    [[price]]                                # and prices inline
    gpu = "rtx-a6000"
    price_usd_per_h = 0.49
    market = "marketplace"
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from whichgpu.catalog.records import Price, Source
from whichgpu.catalog.store import Catalog
from whichgpu.catalog.userprices import (
    parse_price_file,
    parse_skypilot_vms,
    price_tables,
    prices_from_entries,
)
from whichgpu.errors import CatalogError, InvalidInput
from whichgpu.i18n import _, fmt

CONFIG_KEYS = ("prices", "skypilot_catalogs", "price")


def today() -> date:
    """Today, or ``$WHICHGPU_TODAY`` (ISO date) for reproducible output."""
    fixed = os.environ.get("WHICHGPU_TODAY")
    if fixed:
        try:
            return date.fromisoformat(fixed)
        except ValueError:
            raise InvalidInput("bad_today", value=fixed) from None
    return date.today()


def config_path() -> Path:
    explicit = os.environ.get("WHICHGPU_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "whichgpu" / "config.toml"


#: The largest file read, by kind: a workload or a config.json is a few KB (1 MiB
#: allowed); a price file or a SkyPilot catalog a few MB (AWS's vms.csv is 3.7 MB).
MAX_FILE_BYTES = 1024 * 1024
MAX_PRICE_FILE_BYTES = 32 * 1024 * 1024


def read_user_file(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """A user's text file (workload, config.json): a regular file of UTF-8 text, at most
    ``limit`` bytes; anything else is one clear error naming the file, found before the file
    is read (a named pipe, a device, a size) or by the bounded read."""
    return _read(path, limit)[0]


def _read(path: Path, limit: int = MAX_PRICE_FILE_BYTES) -> tuple[str, date]:
    """A user's file as text (:func:`whichgpu.files.read_text`: a regular file, bounded,
    UTF-8) and the day it was last modified, today at the latest (the date of the prices it holds
    that give none: a clock set wrong or ``touch`` must not date them in the future)."""
    from whichgpu.files import read_text

    text = read_text(path, limit)
    now = today()
    try:
        modified = min(datetime.fromtimestamp(path.stat().st_mtime).date(), now)
    except (OSError, ValueError, OverflowError):  # gone since, or a time out of range
        modified = now
    return text, modified


@dataclass(frozen=True)
class UserData:
    #: From price files and the config file: what the user pays
    prices: tuple[Price, ...]
    sources: tuple[Source, ...]
    skipped: tuple[str, ...]
    #: From SkyPilot catalogs: providers' offers
    skypilot: tuple[Price, ...] = ()


def read_user_data(
    catalog: Catalog, price_files: list[Path], skypilot_files: list[Path], use_config: bool = True
) -> UserData:
    """Prices from the config file, then ``--prices`` files, then ``--skypilot-catalog`` files."""
    prices: list[Price] = []
    offers: list[Price] = []
    sources: list[Source] = []
    skipped: list[str] = []
    config = config_path()
    explicit = os.environ.get("WHICHGPU_CONFIG")
    if use_config and explicit and not config.is_file():
        # a config the user names must be a file (the default one is optional)
        problem = InvalidInput("config_missing_file", path=str(config))
        problem.origin = "WHICHGPU_CONFIG"
        raise problem
    # the default one, where something is there, is read whatever it is: a named pipe or a
    # directory in its place is one line, not a config silently left out
    if use_config and config.exists():
        text, modified = _read(config)
        from whichgpu.untrusted import load_toml

        data = load_toml(text, str(config))  # within the limits on data from outside
        unknown = [key for key in data if key not in CONFIG_KEYS]
        if unknown:
            raise CatalogError(
                str(config),
                None,
                fmt(
                    _("unknown key {key!r}; valid keys: {valid}"),
                    key=unknown[0],
                    valid=", ".join(CONFIG_KEYS),
                ),
            )
        if "price" in data:
            entries = price_tables(data["price"], str(config))
            found = prices_from_entries(
                entries, str(config), catalog, "user-config", modified, today()
            )
            prices += found.prices
            sources.append(found.source)
        price_files = [*_paths(data, "prices", config), *price_files]
        skypilot_files = [*_paths(data, "skypilot_catalogs", config), *skypilot_files]
    for number, path in enumerate(price_files, start=1):
        text, modified = _read(path)
        found = parse_price_file(
            text, str(path), catalog, f"user-prices-{number}", modified, today()
        )
        prices += found.prices
        sources.append(found.source)
    for number, path in enumerate(skypilot_files, start=1):
        text, modified = _read(path)
        found = parse_skypilot_vms(text, str(path), catalog, f"user-skypilot-{number}", modified)
        if not found.prices:  # a catalog given that prices nothing whichgpu carries
            skipped_text = ", ".join(found.skipped) or _("none")
            raise CatalogError(
                str(path),
                None,
                fmt(
                    _("no offer for a GPU whichgpu carries (accelerators: {names})"),
                    names=skipped_text,
                ),
            )
        offers += found.prices
        sources.append(found.source)
        skipped += found.skipped
    return UserData(tuple(prices), tuple(sources), tuple(skipped), tuple(offers))


def _paths(data: dict[str, object], key: str, config: Path) -> list[Path]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CatalogError(str(config), None, fmt(_("{key} must be a list of paths"), key=key))
    return [config.parent / Path(str(v)).expanduser() for v in value]


def catalog_with_user_data(
    catalog: Catalog,
    price_files: list[Path],
    skypilot_files: list[Path],
    warn: Callable[[str], None] | None = None,
) -> tuple[Catalog, tuple[str, ...]]:
    """The catalog with the price snapshot (``whichgpu prices update``) and the user's prices
    applied, and the accelerator names skipped. SkyPilot catalogs, fetched or given, replace
    their providers' shipped offers; a price file replaces the GPU's prices in its market.
    A part of the snapshot that cannot be read is left out, with one line to ``warn`` (by
    default the ``whichgpu`` logger's warning: a server's log)."""
    from whichgpu.catalog.cache_paths import snapshot_dir

    snapshot: tuple[Price, ...] = ()
    snapshot_sources: tuple[Source, ...] = ()
    warnings: tuple[InvalidInput, ...] = ()
    if os.path.lexists(snapshot_dir()):  # none (the usual case): its reader is not imported
        from whichgpu.catalog.pricefeed import snapshot_prices

        snapshot, snapshot_sources, warnings = snapshot_prices(catalog, today())
    for warning in warnings:
        if warn is None:
            import logging

            warn = logging.getLogger("whichgpu").warning
        warn(warning.message())
    if snapshot:
        from dataclasses import replace

        fetched = snapshot_sources[0].published if snapshot_sources else "undated"
        providers = tuple(sorted({p.provider for p in snapshot}))
        catalog = replace(
            catalog.with_offers(snapshot, snapshot_sources), price_snapshot=(fetched, providers)
        )
    data = read_user_data(catalog, price_files, skypilot_files)
    if data.skypilot:
        catalog = catalog.with_offers(data.skypilot, data.sources)
    if data.prices:
        catalog = catalog.with_prices(data.prices, data.sources)
    return catalog, data.skipped
