"""JSON documents for ``--json``: language-neutral codes and numbers, units in key names.

The shapes are documented in docs/json.md and pinned by golden tests; scripts rely on them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from whichgpu.catalog.prices import PriceRange, age_months
from whichgpu.catalog.records import GPU, GPU_SPEC_FIELDS, Price, PurchasePrice
from whichgpu.catalog.store import Catalog

if TYPE_CHECKING:
    from whichgpu.commands.compare import Comparison, GpuComparison
    from whichgpu.estimate.serving_types import ServingPlan, ServingPoint
    from whichgpu.job import Job
    from whichgpu.models.diffusion import DiffusionPipeline
    from whichgpu.models.presets import ModelSummary

SCHEMA_VERSION = 1

#: The settings of a training job as whichgpu estimated it (``configuration``).
CONFIGURATION_FIELDS = (
    "precision",
    "math",
    "runtime",
    "batch",
    "grad_accum",
    "checkpointing",
    "optimizer",
    "optimizer_in_backward",
    "offload",
    "activation_offload",
    "tp_overlap",
    "chunked_loss",
    "compiled",
    "lora_rank",
    "lora_targets",
    "tp",
    "pp",
    "cp",
    "vp",
    "recompute_layers",
    "memory_format",
    "zero",
    "network",
    "network_gbit",
    "gpus_per_node",
    "nvlink_bridge",
)


def round_sig(value: float | None, digits: int = 4) -> float | None:
    """``value`` to ``digits`` significant figures (JSON numbers a reader can compare); the
    format spec built once per precision (a full-catalog recommendation's document rounds
    some 5,000 numbers)."""
    return None if value is None else float(format(value, _SIGNIFICANT[digits]))


#: ``format`` specs by significant figures
_SIGNIFICANT = {digits: f".{digits}g" for digits in range(1, 18)}


def job_configuration(job: Job) -> dict[str, Any]:
    """A training job's settings, its data-parallel degree and its global batch."""
    return dict(_configuration(job))


@lru_cache(maxsize=1024)
def _configuration(job: Job) -> tuple[tuple[str, Any], ...]:
    """:func:`job_configuration`'s items, once per job: a recommendation's options on one
    count of GPUs share the configured jobs of the layout search."""
    items = [(k, getattr(job, k)) for k in CONFIGURATION_FIELDS]
    return (*items, ("dp", job.dp), ("global_batch", job.global_batch))


def gpu_doc(gpu: GPU, catalog: Catalog) -> dict[str, Any]:
    """Every spec of ``gpu`` plus ``sources`` (each with the fields it backs) and notes."""
    doc: dict[str, Any] = {"id": gpu.id}
    doc.update({name: getattr(gpu, name) for name in GPU_SPEC_FIELDS})
    doc["memory_gib"] = gpu.memory_gib
    sources: dict[str, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    for name in GPU_SPEC_FIELDS:
        citation = catalog.citation(gpu.id, name)
        source = citation.source
        entry = sources.setdefault(
            source.id,
            {
                "id": source.id,
                "title": source.title,
                "publisher": source.publisher,
                "url": source.url,
                "published": source.published,
                "retrieved": source.retrieved.isoformat(),
                "fields": [],
            },
        )
        entry["fields"].append(name)
        if citation.note:
            notes[name] = citation.note
    doc["sources"] = list(sources.values())
    doc["field_notes"] = notes
    return doc


def price_doc(price: Price, today: date) -> dict[str, Any]:
    return {
        "gpu": price.gpu,
        "kind": price.kind,
        "market": price.market,
        "provider": price.provider,
        "region": price.region,
        "instance": price.instance,
        "gpus_per_instance": price.gpus_per_instance,
        "instance_usd_per_h": price.instance_usd_per_h,
        "price_usd_per_h": price.price_usd_per_h,
        "median_usd_per_h": price.median_usd_per_h,
        "region_count": price.region_count,
        "source": price.source,
        "as_of": price.as_of,
        "age_months": age_months(price.as_of, today),
        "note": price.note,
    }


def range_doc(found: PriceRange | None, today: date) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "low": found.low_usd_per_h,
        "high": found.high_usd_per_h,
        "listings": found.count,
        "low_listing": price_doc(found.low, today),
        "high_listing": price_doc(found.high, today),
    }


def purchase_doc(price: PurchasePrice) -> dict[str, Any]:
    return {
        "condition": price.condition,
        "low_usd": price.low_usd,
        "high_usd": price.high_usd,
        "source": price.source,
        "as_of": price.as_of,
        "note": price.note,
    }


def pair(values: tuple[float, float] | None) -> dict[str, float] | None:
    return None if values is None else {"low": values[0], "high": values[1]}


def compared_gpu_doc(row: GpuComparison, catalog: Catalog, today: date) -> dict[str, Any]:
    doc = gpu_doc(row.gpu, catalog)
    rent = range_doc(row.rent, today)
    doc["price_usd_per_h"] = None if rent is None else {"low": rent["low"], "high": rent["high"]}
    doc["prices_by_market"] = {market: range_doc(r, today) for market, r in row.prices.items()}
    doc["purchase_usd"] = [purchase_doc(p) for p in row.purchase]
    derived = row.derived
    doc["derived"] = {
        "bandwidth_ratio": derived.bandwidth_ratio,
        "fp16_tensor_ratio": derived.fp16_tensor_ratio,
        "fp64_ratio": derived.fp64_ratio,
        "fp16_tflops_per_usd_per_h": pair(derived.fp16_tflops_per_usd_per_h),
        "gb_per_usd_per_h": pair(derived.gb_per_usd_per_h),
        "hours_per_100_usd": pair(derived.hours_per_100_usd),
    }
    return doc


def compare_doc(comparison: Comparison, catalog: Catalog, today: date) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "compare",
        "baseline": comparison.baseline.id,
        "markets": list(comparison.markets),
        "gpus": [compared_gpu_doc(row, catalog, today) for row in comparison.gpus],
        "corrections": [
            {
                "gpu": c.gpu,
                "field": c.field,
                "code": c.note.code,
                "params": dict(c.note.params),
            }
            for c in comparison.corrections
        ],
    }


def gpu_list_doc(gpus: list[GPU], catalog: Catalog) -> dict[str, Any]:
    from whichgpu.catalog.prices import rent_range

    docs = []
    for gpu in gpus:
        doc = gpu_doc(gpu, catalog)
        rent = rent_range(catalog, gpu.id)
        doc["price_usd_per_h"] = (
            None if rent is None else {"low": rent.low_usd_per_h, "high": rent.high_usd_per_h}
        )
        docs.append(doc)
    return {"schema_version": SCHEMA_VERSION, "kind": "gpus", "gpus": docs}


def models_doc(
    models: Sequence[ModelSummary], pipelines: Sequence[DiffusionPipeline] = ()
) -> dict[str, Any]:
    """``whichgpu models --json``: each preset's shape and where its config comes from; the
    image-generation pipelines with their components' parameters."""
    return {
        "pipelines": [
            {
                "id": p.id,
                "name": p.name,
                "family": p.family,
                "params": p.total_params,
                "components": {
                    c.role: {"class": c.class_name, "params": c.params} for c in p.components
                },
                "resolution_px": p.default_resolution,
                "steps": p.default_steps,
                "guidance_passes": 2 if p.cfg else 1,
                "precision": p.default_precision,
                "source": p.source,
            }
            for p in pipelines
        ],
        "schema_version": SCHEMA_VERSION,
        "kind": "models",
        "models": [
            {
                "id": m.id,
                "name": m.preset.display_name,
                "hf_id": m.preset.hf_id or None,
                "family": m.arch.family,
                "kind": m.arch.kind,
                "params": m.arch.total_params,
                "active_params": m.arch.active_params,
                "published_params": m.preset.published_params,
                "layers": m.arch.n_layers,
                "hidden_size": m.arch.hidden_size,
                "heads": m.arch.n_heads,
                "kv_heads": m.arch.n_kv_heads,
                "attention": m.arch.attention,
                "experts": m.arch.n_experts,
                "context": m.arch.max_positions or None,
                "source": m.preset.source,
                "config_exact": m.preset.config_exact,
            }
            for m in models
        ],
    }


def show_doc(gpu: GPU, catalog: Catalog, today: date) -> dict[str, Any]:
    doc = gpu_doc(gpu, catalog)
    doc["prices"] = [price_doc(p, today) for p in catalog.listings_for(gpu.id)]
    doc["purchase_usd"] = [purchase_doc(p) for p in catalog.purchase_for(gpu.id)]
    return {"schema_version": SCHEMA_VERSION, "kind": "gpu", "gpu": doc}


def serving_doc(plan: ServingPlan, usd_per_h: float | None) -> dict[str, Any]:
    """A served model's plan: engine, replicas × GPUs, each replica's capacity under the
    targets and its operating point, and the cost per million output tokens there."""

    def point(p: ServingPoint) -> dict[str, Any]:
        finite = math.isfinite(p.ttft_s)

        def likely(value_s: float, target: str) -> list[float | None] | None:
            return [round_sig(t) for t in plan.likely_s(value_s, target)] if finite else None

        return {
            "requests_per_s": round_sig(p.rate_rps),
            "output_tokens_per_s": round_sig(p.tokens_per_s(plan.generate)),
            "concurrency": round_sig(p.concurrency),
            "ttft_s": round_sig(p.ttft_s) if finite else None,
            "ttft_s_likely": likely(p.ttft_s, "ttft"),
            "tpot_s": round_sig(p.tpot_s) if finite else None,
            "tpot_s_likely": likely(p.tpot_s, "tpot"),
        }

    per_million = plan.usd_per_million_tokens(usd_per_h)
    return {
        "engine": plan.engine,
        "replicas": plan.replicas,
        "gpus_per_replica": plan.gpus_per_replica,
        "layout": "attention-dp-ep" if plan.attention_dp else "tensor-parallel",
        "other_layout_requests_per_s": round_sig(plan.other_layout_rps)
        if plan.other_layout_rps
        else None,
        "max_sequences": plan.max_sequences,
        "kv_dtype": plan.kv_dtype,
        "binding": plan.binding,
        "targets": {
            "ttft_s": plan.targets.ttft_s,
            "tpot_s": plan.targets.tpot_s,
            "quantile": plan.targets.quantile,
        },
        "capacity_per_replica": point(plan.capacity),
        "operating_point": point(plan.operating),
        "usd_per_million_output_tokens": round_sig(per_million),
        "unmet": None if plan.unmet is None else {"target": plan.unmet[0], "best": plan.unmet[1]},
        "disaggregated": None if plan.disaggregated is None else {
            "prefill_workers": plan.disaggregated.prefill_workers,
            "gpus_per_prefill_worker": plan.disaggregated.prefill_tp,
            "decode_workers": plan.disaggregated.decode_workers,
            "gpus_per_decode_worker": plan.disaggregated.decode_tp,
            "kv_transfer_s": round_sig(plan.disaggregated.transfer_s),
            "binding": plan.disaggregated.binding,
            "aggregated_requests_per_s": round_sig(plan.aggregated_rps),
        },
        "front": [{
            "layout": "disaggregated" if f.disaggregated else (
                "attention-dp-ep" if f.attention_dp else "tensor-parallel"),
            "gpus_per_worker": f.decode_gpus,
            "gpus_per_prefill_worker": f.prefill_gpus or None,
            "output_tokens_per_s_per_user": round_sig(f.tokens_per_s_per_user),
            "output_tokens_per_s_per_gpu": round_sig(f.tokens_per_s_per_gpu),
            "ttft_s": round_sig(f.ttft_s),
            "tpot_s": round_sig(f.tpot_s),
        } for f in plan.front],
    }  # fmt: skip
