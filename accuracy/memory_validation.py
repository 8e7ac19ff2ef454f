"""Compare the memory estimator with recorded measurements (validation/*.csv).

A measurement row names a model preset and a job as the harness ran it; this module turns it
into a :class:`Job`, estimates, and reports the relative error of the tensor total (the
estimate without the overhead term) against the measured peak.
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass

from whichgpu.estimate.memory import MemoryEstimate, estimate_memory
from whichgpu.inputs.job_input import make_job
from whichgpu.job import Job
from whichgpu.models import resolve_model


@dataclass(frozen=True)
class Comparison:
    case: str
    model: str
    job: Job
    measured_bytes: float
    estimate: MemoryEstimate
    method: str

    @property
    def error(self) -> float:
        """(estimate − measured) / measured."""
        return self.estimate.tensor_bytes / self.measured_bytes - 1


def job_of(row: dict[str, str]) -> Job:
    generate = int(row.get("generate") or 0)
    seq = int(row["seq"])
    task = row["task"]
    targets = row.get("lora_targets") or ""
    fields: dict[str, object] = {
        "task": "lora" if task == "lora" else ("train" if task == "train" else "inference"),
        "precision": row["precision"],
        "batch": int(row["batch"]),
        "seq": seq,
        "attention": row.get("attention") or "sdpa",
        "checkpointing": "full" if row.get("checkpointing") in ("1", "true", "True") else "none",
    }
    if task == "lora":
        fields["lora_rank"] = int(row["lora_rank"])
        # the module names peft adapted ("q_proj+v_proj"), matched as peft matches them
        fields["lora_targets"] = (
            "all-linear" if targets == "all-linear" else targets.replace("+", ",")
        )
    if row.get("phase") == "generate":
        fields.update(prompt=seq, generate=generate)
    if "__logits1" in row.get("case", ""):
        fields["all_logits"] = False  # the harness's logits_to_keep=1 ablation
    return make_job(**fields)


def compare_rows(text: str) -> list[Comparison]:
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        job = job_of(row)
        arch = resolve_model(row["model"])
        out.append(
            Comparison(
                case=row["case"],
                model=row["model"],
                job=job,
                measured_bytes=float(row["peak_bytes"]),
                estimate=estimate_memory(arch, job),
                method=row.get("method", ""),
            )
        )
    return out


def summary(comparisons: list[Comparison]) -> dict[str, float]:
    errors = [abs(c.error) for c in comparisons]
    return {
        "cases": len(errors),
        "median_abs_error": statistics.median(errors) if errors else 0.0,
        "max_abs_error": max(errors) if errors else 0.0,
    }
