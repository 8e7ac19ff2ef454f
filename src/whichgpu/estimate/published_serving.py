"""The serving planner against published serving runs it was not fitted on
(validation/published_serving.csv): maximum-load throughput (TensorRT-LLM's performance
overviews of v0.14 and v0.20; SGLang's and vLLM's ShareGPT runs), latency at an offered
rate (TensorRT-LLM's online-serving table; SGLang's comparison with vLLM) and MLPerf's server
scenario (a rate sustained under TTFT and TPOT limits at p99).

The serving roofline is fitted on TensorRT-LLM's v0.5/v0.6.1, v0.17 and v1.0 tables
(``catalog/data/benchmarks.csv``); none of these rows is, so every error here is out of
sample. Each row is planned as its source ran it: the engine's profile, the precision, the
GPUs split into replicas of ``tp``, the lengths (ShareGPT runs at the vLLM blog's means, 202
in and 179 out).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass


@dataclass(frozen=True)
class ServingCheck:
    id: str
    kind: str
    engine: str
    source: str
    metric: str
    estimated: float | None
    measured: float
    gpus: int
    tp: int
    #: Why the row could not be planned ("" when it was)
    excluded: str = ""

    @property
    def error(self) -> float | None:
        if self.estimated is None or not self.measured:
            return None
        return self.estimated / self.measured - 1

    @property
    def link(self) -> str:
        return "pcie" if self.gpus > 1 and "pcie" in self.id else "nvlink"


def check_serving(text: str) -> list[ServingCheck]:
    """Plan every row of the CSV ``text`` and compare with what its source measured."""
    from whichgpu.catalog import load_catalog
    from whichgpu.engines import ENGINES
    from whichgpu.errors import WhichGPUError
    from whichgpu.estimate.serving_plan import Targets, replica_plan
    from whichgpu.models import resolve_model
    from whichgpu.requests import make_job

    catalog = load_catalog()
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        gpu = catalog.resolve(row["gpu"])
        arch = resolve_model(row["model"])
        gpus, tp = int(row["gpus"]), int(row["tp"])
        precision = row["precision"]
        quant = precision if precision in ("fp8", "int8", "int4") else None
        job = make_job(
            task="inference",
            precision=None if quant else precision,
            quant=quant,
            prompt=int(row["prompt"]),
            generate=int(row["generate"]),
            seq=int(row["prompt"]),
            all_logits=False,
        )
        kind, metric = row["kind"], row["metric"]
        replicas = max(1, gpus // tp)
        engine = ENGINES[row["engine"]]
        targets = Targets()
        demand = None
        if kind == "server":
            targets = Targets(
                float(row["ttft_limit_s"]), float(row["tpot_limit_s"]), float(row["percentile"])
            )
        elif kind == "online":
            demand = float(row["rate_rps"])
            targets = Targets(quantile=0.5)
        estimated: float | None = None
        excluded = ""
        try:
            plan = replica_plan(arch, job, gpu, tp, engine, targets, demand_rps=demand,
                                replicas=1 if kind != "server" else replicas)  # fmt: skip
        except WhichGPUError as err:
            plan, excluded = None, str(err)
        if plan is None:
            excluded = excluded or "the KV cache holds no sequence"
        elif kind == "max":
            estimated = plan.capacity.tokens_per_s(job.generate) * replicas
        elif kind == "server":
            estimated = plan.capacity.rate_rps * replicas
        elif plan.capacity.rate_rps < (demand or 0):
            excluded = "the offered rate is beyond the replica's capacity"
        else:
            estimated = plan.operating.ttft_s if metric == "ttft_s" else plan.operating.tpot_s
        out.append(
            ServingCheck(
                row["id"],
                kind,
                row["engine"],
                row["source"],
                metric,
                estimated,
                float(row["value"]),
                gpus,
                tp,
                excluded=excluded,
            )
        )
    return out
