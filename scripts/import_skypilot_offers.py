#!/usr/bin/env python3
"""Turn the verbatim SkyPilot catalog excerpts in ``validation/skypilot/`` into offers of
``catalog/data/prices.csv``, through the same parser ``--prices`` and ``prices update`` use
(:func:`whichgpu.catalog.userprices.parse_skypilot_vms`): one offer per instance type and
market, with its region count and lowest and median price per GPU; a row whose card the
parser cannot tell (an 80 GB A100 with no form named) is skipped, never guessed.

Each excerpt is ``validation/skypilot/<cloud>-<commit>/vms.csv``: the header and the GPU
rows of ``catalogs/v8/<cloud>/vms.csv`` of skypilot-org/skypilot-catalog at that commit, for
the GPUs the shipped snapshot had no offer for (RTX A4000, RTX A5000, A16, A30) and the
whole GPU list of a cloud it did not read (Seeweb). The files carry no date of their own:
the offers are undated, retrieved on the date below.

    python scripts/import_skypilot_offers.py          # rewrite the imported rows
    python scripts/import_skypilot_offers.py --check  # exit 1 if prices.csv is out of date
"""

from __future__ import annotations

import csv
import io
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXCERPTS = ROOT / "validation" / "skypilot"
DATA = ROOT / "src" / "whichgpu" / "catalog" / "data"
RETRIEVED = date(2026, 12, 1)

#: Excerpt directory → the full commit of skypilot-org/skypilot-catalog it was read at
COMMITS = {
    "cudo-e280db6": "e280db6c2d70d4828c039527b027ea3a14a88073",
    "hyperstack-fdc9d90": "fdc9d908ab0b2af9f468f139fb3f662c8c6b3257",
    "runpod-46062ac": "46062acbb2c0fa0be210b99bf750678bed18de42",
    "seeweb-0082b04": "0082b0435f3912ae4c566856b272455cc78f4f61",
    "shadeform-8e50954": "8e50954d565e52ffb31cb3f84c04e0cebbb15c1d",
}
PRICE_COLUMNS = (
    "gpu", "kind", "market", "provider", "region", "region_count", "instance",
    "gpus_per_instance", "price_usd_per_h", "median_usd_per_h", "source", "as_of", "note",
)  # fmt: skip


def source_id(excerpt: str) -> str:
    return f"skypilot-catalog-{excerpt}"


def imported() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The offers of every excerpt, as prices.csv rows, and their sources.csv rows."""
    sys.path.insert(0, str(ROOT / "src"))
    from whichgpu.catalog import load_catalog
    from whichgpu.catalog.userprices import parse_skypilot_vms

    catalog = load_catalog()
    prices, sources = [], []
    for excerpt, commit in sorted(COMMITS.items()):
        cloud = excerpt.split("-")[0]
        path = f"catalogs/v8/{cloud}/vms.csv"
        text = (EXCERPTS / excerpt / "vms.csv").read_text(encoding="utf-8")
        result = parse_skypilot_vms(text, path, catalog, source_id(excerpt), RETRIEVED)
        for p in sorted(result.prices, key=lambda p: (p.gpu, p.market, p.gpus_per_instance)):
            regions = p.region_count or 1
            prices.append(
                {
                    "gpu": p.gpu,
                    "kind": "offer",
                    "market": p.market,
                    "provider": p.provider,
                    "region": p.region,
                    "region_count": str(regions),
                    "instance": p.instance or "",
                    "gpus_per_instance": str(p.gpus_per_instance),
                    "price_usd_per_h": f"{p.price_usd_per_h:.4g}",
                    "median_usd_per_h": f"{p.median_usd_per_h or p.price_usd_per_h:.4g}",
                    "source": source_id(excerpt),
                    "as_of": "undated",
                    "note": (
                        f"SkyPilot catalog ({p.provider}): instance "
                        f"${p.price_usd_per_h * p.gpus_per_instance:.4g}/h for "
                        f"{p.gpus_per_instance} GPU(s), the lowest of {regions} region(s)"
                    ),
                }
            )
        sources.append(
            {
                "id": source_id(excerpt),
                "title": f"SkyPilot catalog v8 {result.prices[0].provider} vms.csv @{commit[:7]}",
                "publisher": "SkyPilot",
                "url": f"https://github.com/skypilot-org/skypilot-catalog/blob/{commit}/{path}",
                "published": "undated",
                "retrieved": RETRIEVED.isoformat(),
                "kind": "price catalog",
            }
        )
    return prices, sources


def merged(table: Path, rows: list[dict[str, str]], key: str, ours: set[str]) -> str:
    """``table`` with its rows whose ``key`` is one of ``ours`` replaced by ``rows``, placed
    after the other SkyPilot rows (scripts/import_diffusion.py keeps its own rows last: each
    script leaves the other's where they are)."""
    with table.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = list(reader.fieldnames or [])
        kept = [r for r in reader if r[key] not in ours]
    after = max(
        (i + 1 for i, r in enumerate(kept) if r[key].startswith("skypilot-catalog-")),
        default=len(kept),
    )
    out = io.StringIO()
    writer = csv.DictWriter(out, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(kept[:after] + rows + kept[after:])
    return out.getvalue()


def main() -> int:
    check = "--check" in sys.argv[1:]
    prices, sources = imported()
    ids = {source_id(e) for e in COMMITS}
    outputs = {
        DATA / "prices.csv": merged(DATA / "prices.csv", prices, "source", ids),
        DATA / "sources.csv": merged(DATA / "sources.csv", sources, "id", ids),
    }
    stale = [p for p, text in outputs.items() if p.read_text(encoding="utf-8") != text]
    if check:
        for path in stale:
            print(f"stale: {path.name}: run 'python scripts/import_skypilot_offers.py'")
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    print(f"{len(prices)} offers from {len(COMMITS)} excerpts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
