"""Convert the collected price table (shared/reference/prices.csv) into whichgpu's prices.csv.

One-off import kept for provenance: it records how each shipped price row was derived from
the reference collection (market kinds folded to on-demand / spot / marketplace /
serverless, GPU names mapped to catalog ids, sources to ids in sources.csv). Rows for GPUs
that whichgpu does not carry, or whose SKU the source does not state, are skipped and listed.

Usage: python scripts/import_reference_prices.py ../shared/reference/prices.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "src" / "whichgpu" / "catalog" / "data"

GPU_IDS = {
    "A100 40GB": "a100-40gb",
    "A100 80GB SXM": "a100-80gb-sxm",
    "A100 80GB PCIe": "a100-80gb-pcie",
    "RTX A6000": "rtx-a6000",
    "A10": "a10",
    "A40": "a40",
    "L4": "l4",
    "L40S": "l40s",
    "T4": "t4",
    "V100 16GB": "v100-sxm2-16gb",
    "V100 32GB": "v100-sxm2-32gb",
    "H100 SXM": "h100-sxm",
    "H100 PCIe": "h100-pcie",
    "H200": "h200",
    "B200": "b200",
    "RTX 4090": "rtx-4090",
    "RTX 3090": "rtx-3090",
}

MARKETS = {
    "on-demand hyperscaler": "on-demand",
    "on-demand GPU cloud": "on-demand",
    "on-demand GPU cloud (serverless flex)": "serverless",
    "community/marketplace": "marketplace",
    "spot/interruptible": "spot",
}


def source_id(url: str) -> str:
    if "skypilot-catalog" in url:
        cloud = url.split("/catalogs/")[1].split("/")[1]
        return f"skypilot-catalog-{cloud}"
    for key, sid in (
        ("deploybase.ai", "deploybase-runpod-2026-03"),
        ("docs.runpod.io", "runpod-serverless-pricing"),
        ("gpuhunt", "gpuhunt-crusoe"),
        ("e2enetworks", "e2e-networks-blog"),
    ):
        if key in url:
            return sid
    raise SystemExit(f"no source id for {url}")


def as_of(date: str) -> str:
    head = date.split(" ")[0]
    return head if head[:4].isdigit() else "undated"


def main(path: str) -> None:
    out = DATA / "prices.csv"
    skipped: list[str] = []
    with open(path, newline="") as fh, open(out, "w", newline="") as dst:
        writer = csv.writer(dst, lineterminator="\n")
        writer.writerow(
            [
                "gpu",
                "market",
                "provider",
                "region",
                "instance",
                "gpus_per_instance",
                "price_usd_per_h",
                "source",
                "as_of",
                "note",
            ]
        )
        for row in csv.DictReader(fh):
            gpu = GPU_IDS.get(row["gpu"])
            instance = row["instance"]
            if gpu == "a100-40gb" and "PCIe" in instance:
                gpu = None  # the A100 40GB PCIe is a different SKU (250 W); not carried
            if gpu is None:
                skipped.append(f"{row['gpu']} ({row['provider']}, {instance})")
                continue
            writer.writerow(
                [
                    gpu,
                    MARKETS[row["market"]],
                    row["provider"],
                    row["region"],
                    instance,
                    row["gpus_per_instance"],
                    row["usd_per_gpu_hour"],
                    source_id(row["source"]),
                    as_of(row["date"]),
                    row["notes"],
                ]
            )
        article = [
            ("a100-80gb-sxm", "0.96", "low end of the article's range (marketplace or spot)"),
            ("a100-80gb-sxm", "2.29", "high end of the article's range (marketplace or spot)"),
            ("rtx-a6000", "0.33", "low end of the article's range (marketplace)"),
            ("rtx-a6000", "0.80", "high end of the article's range (marketplace)"),
            ("rtx-a2000-12gb", "0.10", "low end of the article's range (marketplace)"),
            ("rtx-a2000-12gb", "0.25", "high end of the article's range (marketplace)"),
        ]
        for gpu, price, note in article:
            writer.writerow(
                [
                    gpu,
                    "marketplace",
                    "the article (C20)",
                    "",
                    "",
                    "1",
                    price,
                    "seed-article",
                    "undated",
                    note,
                ]
            )
    print(f"wrote {out}")
    print("skipped (not in the catalog or SKU not stated):", *skipped, sep="\n  ")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/prices.csv")
