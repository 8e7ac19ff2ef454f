"""Speculative decoding's speed-up (:mod:`whichgpu.estimate.speculative`) against published
runs (``validation/published_speculative.csv``): each row a model on its GPUs and engine at a
fixed batch, its decode step with and without the drafter, as the serving planner times them
(:func:`whichgpu.estimate.serving_plan.static_batch_s`). The one value fitted on these rows is
EAGLE-3's default acceptance length (the row marked ``fitted``); the others are out of
sample."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass


@dataclass(frozen=True)
class SpeculativeCheck:
    id: str
    method: str
    batch: int
    published: float
    estimated: float
    fitted: bool
    source: str

    @property
    def error(self) -> float:
        return self.estimated / self.published - 1


def estimated_speedup(row: dict[str, str]) -> float:
    """A row's decode step without speculation over its step with it, at its batch."""
    from whichgpu.catalog import load_catalog
    from whichgpu.estimate.serving_plan import static_batch_s
    from whichgpu.inputs.job_input import make_job
    from whichgpu.job.engine_releases import engine_profile
    from whichgpu.models import resolve_model

    arch = resolve_model(row["model"])
    gpu = load_catalog().resolve(row["gpu"])
    engine = engine_profile(row["engine"])
    tp, batch = int(row["gpus"]), int(row["batch"])
    job = make_job(task="inference", prompt=int(row["prompt"]), generate=int(row["generate"]),
                   seq=int(row["prompt"]), quant=row["quant"] or None, gpus=tp)  # fmt: skip
    acceptance = float(row["acceptance"]) if row["acceptance"] else None
    drafted = job.with_speculation(arch, row["method"], int(row["draft_tokens"]), acceptance)
    plain = static_batch_s(arch, engine.served_job(job), gpu, tp, engine, batch)[1]
    spec = static_batch_s(arch, engine.served_job(drafted), gpu, tp, engine, batch)[1]
    return plain / spec


def check_speculative(text: str) -> list[SpeculativeCheck]:
    """Every row of the CSV ``text``, estimated."""
    return [
        SpeculativeCheck(
            row["id"],
            row["method"],
            int(row["batch"]),
            float(row["speedup"]),
            estimated_speedup(row),
            bool(row["fitted"]),
            row["source"],
        )
        for row in csv.DictReader(io.StringIO(text))
    ]
