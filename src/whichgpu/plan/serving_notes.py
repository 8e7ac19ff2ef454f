"""What a served plan says it chose (:mod:`whichgpu.plan.core`'s serving runs): the engine,
replicas × GPUs or separate prefill and decode workers, sequences in flight and the
latencies at the operating point, and why this split of the GPUs over the next best."""

from __future__ import annotations

import math

from whichgpu.estimate.serving_types import ServingPlan
from whichgpu.inputs.requests import Component
from whichgpu.notes import Note, note


def serving_notes(component: Component, engine: str, plan: ServingPlan) -> tuple[Note, ...]:
    """What the planner chose: the engine, replicas × GPUs, sequences in flight, and the
    latencies at the operating point; and why this split of the GPUs (the next best)."""
    notes = [serving_note(component, engine, plan)]
    if plan.attention_dp:
        notes.append(note("chosen_attention_dp", component=component.label,
                          gpus=plan.gpus_per_replica, rate=round(plan.served_rps, 2),
                          other_rate=round(plan.other_layout_rps, 2)))  # fmt: skip
    if plan.alternatives:
        gpus, replicas, rate = plan.alternatives[0]
        notes.append(
            note(
                "chosen_split",
                component=component.label,
                replicas=plan.replicas,
                gpus=plan.gpus_per_replica,
                rate=round(plan.served_rps, 2),
                other_replicas=replicas,
                other_gpus=gpus,
                other_rate=round(rate, 2),
            )
        )
    return tuple(notes)


def serving_note(component: Component, engine: str, plan: ServingPlan) -> Note:
    """The engine, replicas × GPUs, sequences in flight, and the latencies at the operating
    point."""
    point = plan.operating
    split = plan.disaggregated
    if split is not None:
        return note(
            "chosen_disaggregated",
            component=component.label,
            engine=engine,
            prefill=split.prefill_workers,
            prefill_gpus=split.prefill_tp,
            decode=split.decode_workers,
            decode_gpus=split.decode_tp,
            rate=round(split.capacity_rps, 2),
            aggregated=round(plan.aggregated_rps, 2),
            transfer_ms=round(split.transfer_s * 1e3, 1),
            ttft_ms=round(split.ttft_s * 1e3),
            tpot_ms=round(split.tpot_s * 1e3, 1),
            percentile=component.percentile,
            binding=split.binding,
        )
    return note(
        "chosen_serving",
        component=component.label,
        engine=engine,
        replicas=plan.replicas,
        gpus=plan.gpus_per_replica,
        rate=round(point.rate_rps, 2),
        concurrency=max(1, math.ceil(point.concurrency)),
        ttft_ms=round(point.ttft_s * 1e3),
        tpot_ms=round(point.tpot_s * 1e3, 1),
        percentile=component.percentile,
        binding=plan.binding,
    )
