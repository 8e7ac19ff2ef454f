#!/usr/bin/env python3
"""Turn the published image-generation measurements (``validation/published_diffusion.csv``,
each row quoted from its source) into ``diffusion-infer`` rows of
``catalog/data/benchmarks.csv``: speed rows the efficiency fit uses, with the harness their
software is (diffusers with fused or eager attention, torch.compile, TensorRT, ONNX Runtime,
AITemplate, OneDiff, stable-fast). Rows whose work whichgpu does not model are left out and
counted: several GPUs, caching (FBCache), distilled variants (Turbo, LCM), quantised or
offloaded runs (their memory is validated, not their speed), GPUs outside the catalog.

    python scripts/import_diffusion.py          # rewrite the imported rows
    python scripts/import_diffusion.py --check  # exit 1 if benchmarks.csv is out of date
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "validation" / "published_diffusion.csv"
TABLE = ROOT / "src" / "whichgpu" / "catalog" / "data" / "benchmarks.csv"
PREFIX = "pd-"

#: Published GPU names to catalog ids (a name with no form factor takes the SXM part, the
#: one cloud benchmark fleets run; the row's note says so)
GPUS = {
    "rtx 4090": "rtx-4090", "4090": "rtx-4090", "nvidia geforce rtx 4090": "rtx-4090",
    "a100 80g sxm": "a100-80gb-sxm", "a100-sxm-80gb": "a100-80gb-sxm",
    "a100 80gb 400w": "a100-80gb-sxm", "a100": "a100-80gb-sxm", "a100 80gb": "a100-80gb-sxm",
    "a100 (80 gb)": "a100-80gb-sxm", "a100 (80gb)": "a100-80gb-sxm",
    "a100 (40 gb)": "a100-40gb", "a100-sxm4-40gb": "a100-40gb", "a100-40gb": "a100-40gb",
    "a100-pcie-80gb": "a100-80gb-pcie",
    "nvidia h100 80gb": "h100-sxm", "h100": "h100-sxm",
    "t4": "t4", "nvidia tesla t4": "t4", "t4 (google colab free tier)": "t4",
    "v100": "v100-sxm2-16gb",
    "rtx 3090": "rtx-3090", "3090": "rtx-3090", "nvidia geforce rtx 3090": "rtx-3090",
    "3090 ti": "rtx-3090-ti", "rtx 4080": "rtx-4080",
    "rtx 3060 (windows 11)": "rtx-3060-12gb", "nvidia 3060 rtx": "rtx-3060-12gb",
    "rtx 3060 12gb": "rtx-3060-12gb", "a10": "a10", "nvidia rtx a6000": "rtx-a6000",
    "rtx 3080-10gb": "rtx-3080", "nvidia l4 24gb": "l4", "rtx 4060 ti 16gb": "rtx-4060-ti-16gb",
}  # fmt: skip
MODELS = {"sd-1.5", "sd-1.4", "sdxl", "sd-3-medium", "sd-3.5-large", "flux.1-dev",
          "flux.1-schnell"}  # fmt: skip
PRECISIONS = {"fp16": "16-true", "bf16": "bf16-true", "fp32": "32-true", "tf32": "tf32"}
#: Architectures newer than the CUDA 11.7 libraries PyTorch 1.13 ships (cuDNN 8.5, cuBLAS
#: 11.10; Ada and Hopper came with CUDA 11.8 and cuDNN 8.6): a run on PyTorch 1.x measures
#: untuned kernels, not the card. diffusers' own table shows it (optimization/torch2.0.mdx
#: @a39d42b, SD 1.4 fp16 batch 1): torch 1.13.1 + xFormers and torch 2.0 SDPA read 2.26 and
#: 2.19 s on a 3090 Ti, 3.98 and 1.28 s on a 4090. Such rows are left out.
NEWER_THAN_TORCH_1 = ("Ada Lovelace", "Hopper", "Blackwell")
#: Work whichgpu does not model as published (the speed row is left out)
SKIP = ("xdit", "context parallel", "paraattention", "fbcache", "lcm", "turbo", "offload",
        "quant", "bitsandbytes", "bnb", "gguf", "torchao", "int8", "layerwise", "taesd",
        "autoencodertiny", "slicing", "t5 text encoder dropped", "ulysses", "(ring)", "ring_degree",
        "flashattention2", "datadreamer", "traced", "cuda graph", "webui", "comfyui")  # fmt: skip


def harness(engine: str) -> str:
    """The software a row ran: what sets how close it gets to the roofline."""
    e = engine.lower()
    for key, name in (("tensorrt", "tensorrt"), ("onnxruntime", "onnxruntime"),
                      ("aitemplate", "aitemplate"), ("onediff", "onediff"),
                      ("oneflow", "onediff"), ("stable-fast", "stable-fast")):  # fmt: skip
        if key in e:
            return name
    if re.search(r"(?<!no )(?<!no torch\.)compile", e):  # not "sdpa (no compile)"
        return "diffusers-compile"
    eager = ("vanilla", "default attention", "pytorch 1.12 eager", "default (vanilla)")
    if any(k in e for k in eager) or ("torch 1.13" in e and "xformers" not in e):
        return "diffusers-eager"
    return "diffusers"


def architecture(gpu: str) -> str:
    from whichgpu.catalog import load_catalog

    return load_catalog().gpu(gpu).architecture


def convert(row: dict[str, str]) -> tuple[dict[str, str] | None, str]:
    """A benchmark row, or None and why not."""
    text = " ".join((row["engine"], row["notes"])).lower()
    if row["metric"].startswith("peak_memory"):
        return None, "memory (validated apart)"
    if row["gpus"] != "1":
        return None, "several GPUs"
    if any(k in text for k in SKIP):
        return None, "work not modelled"
    gpu = GPUS.get(row["gpu"].strip().lower())
    if gpu is None:
        return None, "GPU not in the catalog"
    if re.search(r"torch 1\.\d", row["engine"].lower()) and architecture(gpu) in NEWER_THAN_TORCH_1:
        return None, "PyTorch 1.x on a GPU newer than its libraries"
    if row["model"] not in MODELS or row["precision"] not in PRECISIONS:
        return None, "model or precision"
    if not row["resolution"] or not row["steps"] or not row["batch"]:
        return None, "size not stated"
    batch, value = int(row["batch"]), float(row["value"])
    metric = row["metric"]
    if metric == "seconds_per_image" and batch == 1:
        unit, shown = "s", value
    elif metric == "seconds_per_image":
        unit, shown = "images/s", 1 / value
    elif metric == "seconds_per_call":
        unit, shown = "s", value
    elif metric == "it_per_s":
        unit, shown = "it/s", value
    elif metric == "seconds_per_it":
        unit, shown = "it/s", 1 / value
    elif metric == "images_per_s":
        unit, shown = "images/s", value
    else:
        return None, f"metric {metric}"
    source = source_id(row["source_url"])
    return {
        "id": f"{PREFIX}{int(row['id']):03d}",
        "gpu": gpu,
        "gpus": "1",
        "regime": "diffusion-infer",
        "model": row["model"],
        "precision": PRECISIONS[row["precision"]],
        "batch": str(batch),
        "metric": "latency" if unit == "s" else "throughput",
        "value": f"{shown:.6g}",
        "unit": unit,
        "harness": harness(row["engine"]),
        "software": row["engine"],
        "source": source,
        "as_of": as_of(row["date"]),
        "note": f"validation/published_diffusion.csv row {row['id']} ({row['gpu']}): "
        + row["notes"][:300],
        "resolution": row["resolution"],
        "steps": row["steps"],
    }, "imported"


SOURCES = ROOT / "src" / "whichgpu" / "catalog" / "data" / "sources.csv"


def as_of(text: str) -> str:
    """The row's date as the catalog writes dates: ``YYYY-MM`` or ``YYYY``, else undated."""
    import re

    found = re.match(r"(\d{4})(-\d{2})?", text or "")
    return found.group(0) if found else "undated"


def source_id(url: str) -> str:
    """One source per document and commit: ``pd-<repository>-<commit>``."""
    import re

    repo = url.split("github.com/")[-1].split("/")[1] if "github.com/" in url else "web"
    commit = re.search(r"/(?:blob|commit|tree)/([0-9a-f]{7,40})", url)
    tag = commit.group(1)[:8] if commit else re.sub(r"[^a-z0-9]+", "-", url.lower())[-24:]
    return re.sub(r"[^a-z0-9-]+", "-", f"pd-{repo}-{tag}".lower()).strip("-")


def sources_text(rows: list[dict[str, str]]) -> str:
    """sources.csv with one row per imported source (replacing earlier ``pd-`` rows)."""
    text = SOURCES.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith(PREFIX)]
    seen: dict[str, dict[str, str]] = {}
    for row in rows:
        seen.setdefault(source_id(row["source_url"]), row)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for sid, row in sorted(seen.items()):
        url = row["source_url"].split("#")[0]
        path = url.split("/blob/")[-1].split("/", 1)[-1] if "/blob/" in url else url
        repo = url.split("github.com/")[-1].split("/blob/")[0] if "github.com/" in url else url
        date = as_of(row["date"])
        writer.writerow([sid, f"{repo}: {path}", repo.split("/")[0], url, date, "2026-12-01",
                         "benchmark"])  # fmt: skip
    return "\n".join(lines) + "\n" + buffer.getvalue()


def observed(row: dict[str, str]) -> float | None:
    """The row's η against its roofline (whichgpu's model of the stated settings)."""
    from whichgpu.catalog import load_catalog
    from whichgpu.catalog.loader import validate
    from whichgpu.catalog.records import Benchmark
    from whichgpu.estimate.efficiency import observed_efficiency

    values = {k: v for k, v in row.items() if v not in ("", None)}
    bench = validate(Benchmark, values, "benchmarks.csv", None)
    return observed_efficiency(bench, load_catalog().gpu(bench.gpu))


def build() -> str:
    text = TABLE.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    header = list(reader.fieldnames or [])
    for extra in ("resolution", "steps"):
        if extra not in header:
            header.append(extra)
    kept = [r for r in reader if not r["id"].startswith(PREFIX)]
    why: Counter[str] = Counter()
    new = []
    used = []
    for row in csv.DictReader(SOURCE.open(encoding="utf-8")):
        out, reason = convert(row)
        if out is not None and (eta := observed(out)) is not None and eta > 1.0:
            # faster than the roofline at the settings the source states: not the settings it
            # ran (a resolution or a step count "not restated"); kept, out of the fit
            out["note"] = (
                f"AMBIGUOUS: faster than the roofline at the stated settings (η = {eta:.2f}); "
                + out["note"]
            )
            reason = "imported, ambiguous"
        why[reason] += 1
        if out is not None:
            new.append(out)
            used.append(row)
    global SOURCES_TEXT
    SOURCES_TEXT = sources_text(used)
    print(", ".join(f"{n} {k}" for k, n in why.most_common()), file=sys.stderr)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for r in [*kept, *new]:
        writer.writerow({k: r.get(k) or "" for k in header})
    return buffer.getvalue()


SOURCES_TEXT = ""


def main(argv: list[str]) -> int:
    text = build()
    if "--check" in argv:
        stale = TABLE.read_text(encoding="utf-8") != text
        stale = stale or SOURCES.read_text(encoding="utf-8") != SOURCES_TEXT
        if stale:
            print("benchmarks.csv or sources.csv is out of date: run scripts/import_diffusion.py")
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    SOURCES.write_text(SOURCES_TEXT, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
