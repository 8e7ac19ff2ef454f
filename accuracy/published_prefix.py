"""Prefix caching's speed-up (:meth:`whichgpu.job.Job.with_prefix`, the serving planner's
cached share of each prompt) against published runs (``validation/published_prefix_caching.csv``):
each row a model on its GPUs and engine at maximum load (an offline benchmark submits every
request at once), its capacity with the shared prefix over its capacity without. Nothing is
fitted on these rows."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass


@dataclass(frozen=True)
class PrefixCheck:
    id: str
    metric: str
    shared: int
    prompt: int
    published: float
    estimated: float
    source: str

    @property
    def error(self) -> float:
        return self.estimated / self.published - 1


def estimated_speedup(row: dict[str, str]) -> float:
    """A row's requests/s at maximum load with its shared prefix cached over without (the
    same ratio for input tokens/s and for a fixed batch's wall time)."""
    from whichgpu.catalog import load_catalog
    from whichgpu.estimate.serving_plan import Targets, replica_plan
    from whichgpu.inputs.job_input import make_job
    from whichgpu.job.engine_releases import engine_profile
    from whichgpu.job.engine_times import sequence_s
    from whichgpu.models import resolve_model

    arch = resolve_model(row["model"])
    gpu = load_catalog().resolve(row["gpu"])
    engine = engine_profile(row["engine"])
    tp, prompt = int(row["gpus"]), int(row["prompt"])
    job = make_job(task="inference", prompt=prompt, generate=int(row["generate"]), seq=prompt,
                   quant=row["quant"] or None, gpus=tp, all_logits=False)  # fmt: skip

    def capacity(shared: int) -> float:
        served = engine.served_job(job.with_prefix(shared))
        plan = replica_plan(arch, served, gpu, tp, engine, Targets(), replicas=1,
                            sequence_s=sequence_s(engine.id))  # fmt: skip
        if plan is None:
            raise ValueError(f"{row['id']}: the KV cache holds no sequence")
        return plan.capacity.rate_rps

    return capacity(int(row["shared_prefix"])) / capacity(0)


def check_prefix(text: str) -> list[PrefixCheck]:
    """Every row of the CSV ``text``, estimated."""
    return [
        PrefixCheck(
            row["id"],
            row["metric"],
            int(row["shared_prefix"]),
            int(row["prompt"]),
            float(row["speedup"]),
            estimated_speedup(row),
            row["source"],
        )
        for row in csv.DictReader(io.StringIO(text))
    ]
