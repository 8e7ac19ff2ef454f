"""Warm compute time per command (not a test): the library call each CLI command makes,
in one process after a first call, without rendering. Median and min of RUNS calls of the
same request, and the median of RUNS requests that differ in their sequence length (or
image count), which no cache of an earlier answer serves: the per-request figure.

    python bench/compute.py [--runs 20]

Target (issue 48): a one-component recommend over the full catalog in <= 20 ms of CPU,
warm, for a distinct request (issue 16 asked 30 ms).
The cold CLI start per command is bench/coldstart.py.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import whichgpu
from whichgpu.catalog import load_catalog
from whichgpu.commands.recommend import recommend
from whichgpu.inputs.requests import Workload
from whichgpu.inputs.workload_files import make_component


def cases(variant: int = 0) -> dict[str, Callable[[], object]]:
    """The calls; ``variant`` > 0 changes each request's lengths (sequence, prompt, steps) so
    that it is a request no earlier call made."""
    catalog = load_catalog()
    model = whichgpu.resolve_model("llama-3.1-8b")
    seq = 2048 + 16 * variant
    lora = whichgpu.make_job(task="lora", batch=4, seq=seq)
    h100 = catalog.resolve("h100")

    def workload(raw: dict[str, object]) -> Workload:
        return Workload((make_component(raw),))

    train = workload({"kind": "lora", "model": "llama-2-7b", "tokens": 1e8, "seq": seq})
    serve = workload(
        {"kind": "inference", "model": "llama-3.1-70b", "request_rate": 5, "ttft": "2s",
         "tpot": "100ms", "hours": 720, "prompt": 1000 + variant}
    )  # fmt: skip
    image = workload({"kind": "image", "model": "sdxl", "images": 10_000, "steps": 30 + variant})
    image_lora = workload(
        {"kind": "image-lora", "model": "flux.1-dev", "images": 2_000,
         "resolution": 1024 - 32 * (variant % 8)}
    )  # fmt: skip
    services = [whichgpu.make_service({"model": "llama-3.1-8b", "quant": "int4", "replicas": 7})]
    return {
        "gpus (catalog load, cached)": lambda: load_catalog(),
        "fit llama-3.1-8b lora": lambda: whichgpu.fit(catalog, model, lora),
        "estimate llama-3.1-8b lora on h100": lambda: whichgpu.estimate_throughput(
            model, lora, h100
        ),
        "compare a100 a6000 a2000": lambda: whichgpu.compare(catalog, ["a100", "a6000", "a2000"]),
        "recommend lora llama-2-7b 1e8 (full catalog)": lambda: recommend(catalog, train),
        "recommend serve llama-3.1-70b 5 req/s (full catalog)": lambda: recommend(catalog, serve),
        "recommend image sdxl 10k images (full catalog)": lambda: recommend(catalog, image),
        "recommend image-lora flux.1-dev 2k images (full catalog)": lambda: recommend(
            catalog, image_lora
        ),
        "mig 7 × llama-3.1-8b int4": lambda: whichgpu.plan_mig(catalog, services),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(
        f"{'command':58} {'min ms':>8} {'median ms':>10} {'distinct ms':>12}"
        f"  ({args.runs} warm runs each)"
    )
    distinct = [cases(i) for i in range(1, args.runs + 1)]
    for name, call in cases().items():
        call()  # the first call loads what it needs (tables, fits): that is the cold start
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1e3)
        fresh = []
        for other in distinct:
            started = time.perf_counter()
            other[name]()
            fresh.append((time.perf_counter() - started) * 1e3)
        print(
            f"{name:58} {min(times):8.1f} {statistics.median(times):10.1f}"
            f" {statistics.median(fresh):12.1f}"
        )


if __name__ == "__main__":
    main()
