"""Opt-in: fresh prices from SkyPilot's published price catalogs (``whichgpu prices update``).

SkyPilot's bot scrapes the providers' price APIs into one ``vms.csv`` per cloud in the
``skypilot-org/skypilot-catalog`` repository (``catalogs/v8/<cloud>/vms.csv``). ``update``
downloads the clouds asked for, each with a timeout and a size limit, checks that every file
imports (:func:`~whichgpu.catalog.userprices.parse_skypilot_vms`), and only then replaces the
snapshot in the user's cache, dated the day it was fetched: a failure changes nothing.
Every later command reads the snapshot (:func:`snapshot_prices`); its offers replace the
shipped ones of the same provider. Nothing here runs at import time or without the command.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from whichgpu.catalog.records import Price, Source
from whichgpu.catalog.store import Catalog
from whichgpu.catalog.userprices import parse_skypilot_vms
from whichgpu.errors import InvalidInput

#: Where SkyPilot publishes its catalogs (raw files of the repository's default branch).
CATALOG_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"
#: The clouds fetched by default: GPU clouds and hyperscalers whose rows whichgpu reads.
DEFAULT_CLOUDS = ("lambda", "runpod", "vast", "nebius", "aws", "gcp")
TIMEOUT_S = 20
#: The largest file read (AWS's vms.csv is ~3.7 MB): a bound on memory and time.
MAX_BYTES = 32 * 1024 * 1024
SNAPSHOT_FILE = "snapshot.json"


@dataclass(frozen=True)
class Snapshot:
    """A stored set of SkyPilot catalogs: when they were fetched, from where, per cloud the
    offers it holds."""

    fetched: date
    url: str
    clouds: dict[str, int]
    path: Path


def cache_dir() -> Path:
    """``$WHICHGPU_CACHE``, else ``$XDG_CACHE_HOME/whichgpu`` (``~/.cache/whichgpu``)."""
    explicit = os.environ.get("WHICHGPU_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "whichgpu"


def snapshot_dir() -> Path:
    return cache_dir() / "prices"


def _fetch(url: str, timeout_s: float) -> bytes:
    """One file, or one :class:`InvalidInput` line (network, HTTP status, size)."""
    from urllib.error import URLError
    from urllib.request import Request, urlopen

    try:
        with urlopen(Request(url, headers={"User-Agent": "whichgpu"}), timeout=timeout_s) as r:
            data: bytes = r.read(MAX_BYTES + 1)
    except (URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise InvalidInput("price_fetch", url=url, reason=str(reason)) from None
    if len(data) > MAX_BYTES:
        raise InvalidInput("price_fetch", url=url, reason=f"larger than {MAX_BYTES} bytes")
    return data


def update(
    catalog: Catalog,
    clouds: tuple[str, ...] = DEFAULT_CLOUDS,
    url: str = CATALOG_URL,
    timeout_s: float = TIMEOUT_S,
    today: date | None = None,
) -> Snapshot:
    """Fetch ``clouds``' catalogs from ``url``, check them, and store them as the snapshot
    (replacing the last one only once every file has been fetched and read)."""
    import shutil
    import tempfile

    fetched = today or date.today()
    target = snapshot_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".prices-", dir=target.parent))
    try:
        counts: dict[str, int] = {}
        for cloud in clouds:
            source_url = f"{url.rstrip('/')}/{cloud}/vms.csv"
            text = _fetch(source_url, timeout_s).decode("utf-8", errors="replace")
            path = staging / cloud / "vms.csv"
            path.parent.mkdir()
            found = parse_skypilot_vms(text, str(path), catalog, f"skypilot-{cloud}", fetched)
            counts[cloud] = len(found.prices)
            path.write_text(text, encoding="utf-8")
        meta = {"fetched": fetched.isoformat(), "url": url, "clouds": counts}
        (staging / SNAPSHOT_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        old = target.with_name(".prices-old")
        if target.exists():
            shutil.rmtree(old, ignore_errors=True)
            target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Snapshot(fetched, url, counts, target)


def load_snapshot() -> Snapshot | None:
    """The stored snapshot, or None when there is none (or it cannot be read)."""
    meta_path = snapshot_dir() / SNAPSHOT_FILE
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        fetched = date.fromisoformat(meta["fetched"])
        clouds = {str(k): int(v) for k, v in dict(meta["clouds"]).items()}
        return Snapshot(fetched, str(meta["url"]), clouds, meta_path.parent)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def snapshot_prices(catalog: Catalog) -> tuple[tuple[Price, ...], tuple[Source, ...]]:
    """The snapshot's offers and their sources (none without a snapshot)."""
    snapshot = load_snapshot()
    if snapshot is None:
        return (), ()
    prices: list[Price] = []
    sources: list[Source] = []
    for cloud in snapshot.clouds:
        path = snapshot.path / cloud / "vms.csv"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        found = parse_skypilot_vms(text, str(path), catalog, f"skypilot-{cloud}-snapshot",
                                   snapshot.fetched)  # fmt: skip
        source = found.source
        sources.append(
            Source(
                id=source.id,
                title=f"SkyPilot catalog {cloud}/vms.csv, fetched {snapshot.fetched.isoformat()}",
                publisher="SkyPilot (skypilot-org/skypilot-catalog)",
                url=f"{snapshot.url.rstrip('/')}/{cloud}/vms.csv",
                published=snapshot.fetched.isoformat(),
                retrieved=snapshot.fetched,
                kind="price catalog",
            )
        )
        prices += found.prices
    return tuple(prices), tuple(sources)
