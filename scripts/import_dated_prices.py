#!/usr/bin/env python3
"""Date the shipped offers: turn the dated observations of ``validation/prices_dated.csv``
(each with the day it was seen, how that day is known, its source and the transcript or
dataset that carries the date) into offers of ``catalog/data/prices.csv``, and drop the
shipped rows they supersede.

* A provider's GPU in one market and shape as last seen: the observations of the latest
  day, each instance's from its most trusted source; a catalog GPU only, never a guess
  for a card the row does not name.
* A shipped offer is superseded where a dated observation of the same provider, GPU,
  market and shape (GPUs an instance; on AWS, GCP and Azure, instance type) exists and
  the shipped one is undated or no later (an older snapshot that the dated one
  contradicts or repeats); the SkyPilot excerpts ``import_skypilot_offers.py`` checks are
  kept as they are.
* Left out of the ranking for what they are, not for their date: GCP's SkyPilot rows, the
  GPU component alone, where every other offer is the whole VM (SkyPilot adds the host
  to it; skypilot-org/skypilot-catalog#31): GCP ranks on its dated all-in rows; the
  deploybase.ai RunPod table, whose "on-demand" figures are 1.76-1.77 × its "spot" ones
  (computed, not observed).

    python scripts/import_dated_prices.py          # rewrite the dated rows
    python scripts/import_dated_prices.py --check  # exit 1 if prices.csv is out of date
"""

from __future__ import annotations

import csv
import hashlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATED = ROOT / "validation" / "prices_dated.csv"
DATA = ROOT / "src" / "whichgpu" / "catalog" / "data"
RETRIEVED = "2026-12-06"
PREFIX = "dated-"

#: The dated file's provider names as the shipped offers spell them
PROVIDERS = {"Jarvis Labs": "Jarvislabs", "Verda (DataCrunch)": "DataCrunch/Verda"}
#: Of two observations of one day, the more trusted source's (the file's ``trust``)
TRUST = (
    "transcript of provider page",
    "hard-coded table in code (git-dated)",
    "tool output in a dated PR",
    "third-party dataset (per-row date)",
    "third-party transcript (per-vendor date)",
    "third-party dataset (per-file date)",
    "third-party aggregator (per-row date)",
    "blog",
)
#: Shipped sources left out of the ranking (see the module's docstring)
DROPPED_SOURCES = {"skypilot-catalog-gcp", "deploybase-runpod-2026-03"}
#: Shipped sources another import checks row by row: never superseded here
KEPT_SOURCES = {
    "skypilot-catalog-cudo-e280db6",
    "skypilot-catalog-hyperstack-fdc9d90",
    "skypilot-catalog-runpod-46062ac",
    "skypilot-catalog-seeweb-0082b04",
    "skypilot-catalog-shadeform-8e50954",
}
PRICE_COLUMNS = (
    "gpu", "kind", "market", "provider", "region", "region_count", "instance",
    "gpus_per_instance", "price_usd_per_h", "median_usd_per_h", "source", "as_of", "note",
)  # fmt: skip
SOURCE_COLUMNS = ("id", "title", "publisher", "url", "published", "retrieved", "kind")


def instance_of(row: dict[str, str]) -> str:
    """The instance type a row names, before the price text a transcript adds; AWS's,
    Azure's and GCP's before their description; an aggregator's average or median, the card it
    lists."""
    text = row["instance_or_product"].strip()
    if text.startswith(("average of", "median ")) or ", median " in text:
        return row["gpu_as_listed"].strip()  # an aggregator's summary, not an instance
    text = text.split(":")[0]  # a price transcribed after the name
    if row["provider"] in TYPED_PROVIDERS:  # an instance type, then its description
        text = text.split(" (")[0]
    for tail in (" spot", " Spot"):
        text = text.removesuffix(tail)
    return text.strip()


def source_id(row: dict[str, str]) -> str:
    """One source a URL: ``dated-<provider>-<hash>``."""
    slug = "".join(c if c.isalnum() else "-" for c in row["provider"].lower()).strip("-")
    digest = hashlib.sha256(row["source_url"].encode()).hexdigest()[:8]
    return f"{PREFIX}{slug}-{digest}"


def _trust(row: dict[str, str]) -> int:
    """A source's place in :data:`TRUST` (0 the most trusted)."""
    return TRUST.index(row["trust"]) if row["trust"] in TRUST else len(TRUST)


def observations(gpu_ids: set[str]) -> list[dict[str, str]]:
    """The offers as last seen: of a provider's GPU in one market and shape, the
    observations of the latest day (an older one is a price since changed, or the same
    one), each instance's from its most trusted source."""
    rows = []
    for row in csv.DictReader(DATED.open(encoding="utf-8")):
        if row["gpu"] in gpu_ids and row["usd_per_gpu_hour"]:
            rows.append({**row, "provider": PROVIDERS.get(row["provider"], row["provider"])})
    latest: dict[tuple[str, ...], str] = {}
    for row in rows:
        shape = (row["provider"], row["gpu"], row["market"], row["gpus_per_instance"])
        latest[shape] = max(latest.get(shape, ""), row["observed_on"])
    best: dict[tuple[str, ...], dict[str, str]] = {}
    for row in rows:
        shape = (row["provider"], row["gpu"], row["market"], row["gpus_per_instance"])
        if row["observed_on"] != latest[shape]:
            continue
        key = (*shape, instance_of(row))
        held = best.get(key)
        if held is None or _trust(row) < _trust(held):
            best[key] = row
    return [best[key] for key in sorted(best)]


def dated_rows(gpu_ids: set[str]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The dated offers as prices.csv rows, and their sources.csv rows."""
    prices, sources = [], {}
    for row in observations(gpu_ids):
        sid = source_id(row)
        shown = sources.get(sid)
        if shown is None or row["observed_on"] > shown["published"]:
            sources[sid] = {
                "id": sid,
                "title": f"{row['provider']} price list",
                "publisher": row["provider"],
                "url": row["source_url"],
                "published": row["observed_on"],
                "retrieved": RETRIEVED,
                "kind": "price list",
            }
        note = (
            f"observed {row['observed_on']} ({row['date_basis']}); via {row['via']}; "
            f"trust: {row['trust']}"
            + (f"; {row['notes']}" if row["notes"] else "")
            + (f"; listed as {row['gpu_as_listed']}" if row["gpu_as_listed"] else "")
        )
        prices.append({
            "gpu": row["gpu"], "kind": "offer", "market": row["market"],
            "provider": row["provider"], "region": row["region"], "region_count": "",
            "instance": instance_of(row), "gpus_per_instance": row["gpus_per_instance"] or "1",
            "price_usd_per_h": row["usd_per_gpu_hour"], "median_usd_per_h": "",
            "source": sid, "as_of": row["observed_on"], "note": note[:2000],
        })  # fmt: skip
    return prices, sorted(sources.values(), key=lambda s: s["id"])


#: Clouds whose instance types are distinct products (another CPU, network, generation):
#: an observation of one says nothing of another of the same GPUs
TYPED_PROVIDERS = {"AWS", "GCP", "Azure"}


def _offer(row: dict[str, str]) -> tuple[str, ...]:
    """What an observation dates: a provider's GPU in one market and shape, and on the
    clouds of :data:`TYPED_PROVIDERS` its instance type (elsewhere its name varies with
    the source that transcribes it)."""
    key = (row["provider"], row["gpu"], row["market"], row["gpus_per_instance"] or "1")
    return (*key, row["instance"]) if row["provider"] in TYPED_PROVIDERS else key


def merged(shipped: list[dict[str, str]], dated: list[dict[str, str]]) -> list[dict[str, str]]:
    """The shipped rows less those the dated offers supersede or that are left out, then
    the dated offers."""
    seen: dict[tuple[str, ...], str] = {}
    for r in dated:
        seen[_offer(r)] = max(seen.get(_offer(r), ""), r["as_of"])
    kept = []
    for row in shipped:
        if row["source"].startswith(PREFIX) or row["source"] in DROPPED_SOURCES:
            continue
        last = seen.get(_offer(row))
        superseded = (
            row["kind"] == "offer"
            and row["source"] not in KEPT_SOURCES
            and last is not None
            and (row["as_of"] == "undated" or row["as_of"] <= last)
        )
        if not superseded:
            kept.append(row)
    return kept + dated


def table(rows: list[dict[str, str]], columns: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def main() -> int:
    check = "--check" in sys.argv[1:]
    sys.path.insert(0, str(ROOT / "src"))
    from whichgpu.catalog import load_catalog
    from whichgpu.catalog.store import build_catalog  # noqa: F401  (the catalog's own check)

    gpu_ids = {gpu.id for gpu in load_catalog().gpus}
    dated, sources = dated_rows(gpu_ids)
    prices_path, sources_path = DATA / "prices.csv", DATA / "sources.csv"
    shipped = list(csv.DictReader(prices_path.open(encoding="utf-8")))
    price_text = table(merged(shipped, dated), PRICE_COLUMNS)
    known = list(csv.DictReader(sources_path.open(encoding="utf-8")))
    source_rows = [s for s in known if not s["id"].startswith(PREFIX)] + sources
    source_text = table(source_rows, SOURCE_COLUMNS)
    if check:
        stale = []
        if price_text != prices_path.read_text(encoding="utf-8"):
            stale.append("prices.csv")
        ours = {s["id"]: s for s in sources}
        theirs = {s["id"]: s for s in known if s["id"].startswith(PREFIX)}
        if ours != theirs:
            stale.append("sources.csv")
        if stale:
            print(f"{' and '.join(stale)} out of date: run scripts/import_dated_prices.py",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0
    prices_path.write_text(price_text, encoding="utf-8")
    sources_path.write_text(source_text, encoding="utf-8")
    print(f"{len(dated)} dated offers, {len(sources)} sources")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
