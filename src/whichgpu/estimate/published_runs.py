"""whichgpu against published training runs it was not fitted on (validation/
published_training.csv): single-GPU fine-tunes as torchtune, PEFT and lit-gpt publish them,
and 3D-parallel pretraining as NeMo, Megatron-Bridge and the Llama 3 paper do.

Each row is estimated as its source ran it: the framework's recipe (``framework``), then the
settings the source states (precision, optimizer, micro-batch, accumulation, sequence,
recomputation, LoRA rank and targets, the layout ``tp × pp × dp``). Context parallelism is
counted as data parallelism (the same GPUs, the same per-GPU work; its ring attention traffic
is not modelled). No parameter of whichgpu is fitted on these rows, so every error is out of
sample, and leaving a source out changes nothing: the leave-one-source-out figure equals the
plain one (the fit's own leave-one-out and leave-one-GPU-out are in docs/perf-accuracy.md).
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class RunCheck:
    id: str
    kind: str
    source: str
    memory_error: float | None
    rate_error: float | None
    estimated_gib: float | None
    measured_gib: float | None
    estimated_rate: float | None
    measured_rate: float | None
    #: Why whichgpu cannot estimate the row as published (an uneven pipeline split), or ""
    excluded: str = ""


def check_runs(text: str) -> list[RunCheck]:
    """Estimate every row of the CSV ``text`` and compare."""
    from whichgpu.catalog import load_catalog
    from whichgpu.errors import InvalidInput
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.estimate.parallel import check_layout
    from whichgpu.models import resolve_model
    from whichgpu.requests import make_job
    from whichgpu.throughput import estimate_throughput
    from whichgpu.units import BYTES_PER_GIB

    catalog = load_catalog()
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        extra = set(filter(None, (row.get("extra") or "").split(";")))
        gpus = int(row["gpus"])
        fields: dict[str, object] = {
            "framework": row["framework"] or None,
            "task": row["task"],
            "precision": row["precision"] or None,
            "optimizer": row["optimizer"] or None,
            "batch": int(row["batch"]),
            "grad_accum": int(row["grad_accum"]),
            "seq": int(row["seq"]),
            "checkpointing": row["checkpointing"] or None,
            "lora_rank": int(row["lora_rank"]) if row["lora_rank"] else None,
            "lora_targets": row["lora_targets"] or None,
            "tp": int(row["tp"]),
            "pp": int(row["pp"]),
            "gpus": gpus,
            "zero": 1 if gpus > 1 and row["framework"] == "megatron" else None,
        }
        for flag in ("chunked_loss", "optimizer_in_backward", "activation_offload"):
            if flag in extra:
                fields[flag] = True
        job = make_job(**fields)
        arch = resolve_model(row["model"])
        try:
            check_layout(arch, job)
        except InvalidInput as err:
            out.append(
                RunCheck(
                    row["id"],
                    row["kind"],
                    row["source"],
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    excluded=str(err),
                )
            )
            continue
        gpu = catalog.resolve(row["gpu"])
        memory_error = estimated_gib = measured_gib = None
        if row["memory_gib"]:
            estimate = estimate_memory(arch, job)
            estimated_gib = estimate.tensor_bytes / BYTES_PER_GIB
            measured_gib = float(row["memory_gib"])
            memory_error = estimated_gib / measured_gib - 1
        rate_error = estimated_rate = measured_rate = None
        if row["tokens_per_s_per_gpu"]:
            estimated_rate = estimate_throughput(arch, job, gpu, gpus).throughput.value / gpus
            measured_rate = float(row["tokens_per_s_per_gpu"])
            rate_error = estimated_rate / measured_rate - 1
        out.append(
            RunCheck(
                row["id"],
                row["kind"],
                row["source"],
                memory_error,
                rate_error,
                estimated_gib,
                measured_gib,
                estimated_rate,
                measured_rate,
            )
        )
    return out


def spread(errors: list[float]) -> tuple[float, float]:
    """Median and 90th percentile of the absolute errors."""
    values = sorted(abs(e) for e in errors)
    if not values:
        return 0.0, 0.0
    p90 = values[min(len(values) - 1, max(0, round(0.9 * len(values) + 0.5) - 1))]
    return statistics.median(values), p90
