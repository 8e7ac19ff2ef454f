"""Disaggregated serving (:mod:`whichgpu.estimate.disaggregated`) against published runs
(``validation/published_disaggregated.csv``): each row a prefill/decode layout and the
aggregated replicas its source measured beside it, on the same GPUs and workload, at a stated
load; the layout timed by :func:`~whichgpu.estimate.disaggregated.split_at` (a rate) or
:func:`~whichgpu.estimate.disaggregated.split_at_concurrency` (a benchmark's concurrency),
the replicas by :func:`~whichgpu.estimate.serving_plan.replica_plan`, as the serving checks
read them (:mod:`accuracy.published_serving`). Nothing is fitted on these rows.

Checked: each side's figure against the published one, and whether whichgpu says the same
side wins (the lower time, the higher throughput)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.catalog import Catalog
    from whichgpu.estimate.serving_types import ServingPoint


@dataclass(frozen=True)
class SplitCheck:
    """One published comparison: the disaggregated layout's figure and the replicas', each
    published and estimated."""

    id: str
    metric: str
    published: tuple[float, float]  # disaggregated, aggregated
    estimated: tuple[float, float]
    source: str

    @property
    def errors(self) -> tuple[float, float]:
        """Each side's estimate over its published figure, less 1."""
        return (
            self.estimated[0] / self.published[0] - 1,
            self.estimated[1] / self.published[1] - 1,
        )

    @property
    def tie(self) -> bool:
        """The estimate puts the two sides within 1 % of each other: it picks neither."""
        low, high = sorted(self.estimated)
        return high <= low * 1.01

    @property
    def same_winner(self) -> bool:
        """Whether the estimate picks the side the run measured as better on this metric."""
        higher = self.metric.endswith("per_gpu")

        def first_wins(pair: tuple[float, float]) -> bool:
            return pair[0] > pair[1] if higher else pair[0] < pair[1]

        return not self.tie and first_wins(self.published) == first_wins(self.estimated)


def _figure(point: ServingPoint, metric: str, generate: int, gpus: int) -> float:
    if metric == "ttft_s":
        return point.ttft_s
    if metric == "tpot_s":
        return point.tpot_s
    if metric == "e2e_s":
        return point.ttft_s + (generate - 1) * point.tpot_s
    return point.rate_rps * generate / gpus  # output tokens a second a GPU


def check_disaggregated(text: str) -> list[SplitCheck]:
    """Every row of the CSV ``text``, estimated on both sides."""
    from whichgpu.catalog import load_catalog

    catalog = load_catalog()
    return [_check(catalog, row) for row in csv.DictReader(io.StringIO(text))]


def _check(catalog: Catalog, row: dict[str, str]) -> SplitCheck:
    from dataclasses import replace

    from whichgpu.estimate.disaggregated import split_at, split_at_concurrency
    from whichgpu.estimate.parallel import one_instance
    from whichgpu.estimate.serving_plan import replica_curve, replica_plan
    from whichgpu.estimate.serving_types import Targets
    from whichgpu.frozen import evolve
    from whichgpu.inputs.job_input import make_job
    from whichgpu.job.engine_releases import engine_profile
    from whichgpu.job.engine_times import sequence_s
    from whichgpu.models import resolve_model

    arch, gpu = resolve_model(row["model"]), catalog.resolve(row["gpu"])
    engine = engine_profile(row["engine"])
    prompt, generate = int(row["prompt"]), int(row["generate"])
    job = make_job(task="inference", quant=row["quant"] or None, prompt=prompt,
                   generate=generate, seq=prompt, all_logits=False)  # fmt: skip
    job = evolve(engine.served_job(job), gpus_per_node=int(row["gpus_per_node"]))
    host_s = sequence_s(engine.id)
    quantile = 0.5  # the replicas' planner states quantiles: both sides at the median wait
    by_pool = []
    for pool in ("prefill", "decode"):
        workers, tp = int(row[f"{pool}_workers"]), int(row[f"{pool}_tp"])
        found = replica_curve(arch, one_instance(job, tp), gpu, tp, engine, 1.0, None, host_s)
        if found is None:
            raise ValueError(f"{row['id']}: {arch.name} does not fit {tp} × {gpu.id}")
        by_pool.append((found[0], workers, tp))
    split = (by_pool[0], by_pool[1])
    closed = row["load"] == "concurrency"
    load = float(row["disagg_load"])
    apart = (split_at_concurrency(arch, job, gpu, split, int(load), quantile) if closed
             else split_at(arch, job, gpu, split, load, quantile))  # fmt: skip
    replicas, tp = int(row["replicas"]), int(row["replica_tp"])
    agg_load = float(row["agg_load"])
    alone = one_instance(job, tp)
    if closed:  # every slot of each replica busy: its capacity there
        plan = replica_plan(arch, alone, gpu, tp, engine, Targets(), sequence_s=host_s,
                            max_sequences=int(agg_load) // replicas)  # fmt: skip
    else:  # the offered rate spread over the replicas, each at its share
        plan = replica_plan(arch, alone, gpu, tp, engine, Targets(quantile=0.5),
                            demand_rps=agg_load / replicas, sequence_s=host_s)  # fmt: skip
    if plan is None:
        raise ValueError(f"{row['id']}: no aggregated replica of {arch.name} on {gpu.id}")
    point = plan.capacity if closed else plan.operating
    together = replace(point, rate_rps=point.rate_rps * replicas)
    metric = row["metric"]
    return SplitCheck(
        row["id"],
        metric,
        (float(row["disagg_value"]), float(row["agg_value"])),
        (
            _figure(apart, metric, generate, sum(n * t for _c, n, t in split)),
            _figure(together, metric, generate, replicas * tp),
        ),
        row["source"],
    )
