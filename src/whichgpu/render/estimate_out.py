"""``estimate`` output: JSON and text."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from whichgpu.fields import format_duration
from whichgpu.i18n import _, fmt
from whichgpu.models.arch import ModelArch
from whichgpu.notes import count_label, localize
from whichgpu.render.json_doc import SCHEMA_VERSION, job_configuration, serving_doc
from whichgpu.throughput import ThroughputEstimate

if TYPE_CHECKING:
    from rich.console import Console

    from whichgpu.estimate.serving_types import ServingPlan


def estimate_doc(result: ThroughputEstimate) -> dict[str, Any]:
    rate = result.throughput
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "estimate",
        "gpu": result.gpu.id,
        "count": result.count,
        "regime": result.regime,
        "harness": result.harness,
        "throughput": {"value": rate.value, "unit": rate.unit, "low": rate.low, "high": rate.high},
        "time_s": result.time_s,
        "bound": result.bound,
        "mfu": result.mfu,
        "ttft_s": result.ttft_s,
        "tokens_per_s_per_sequence": result.tokens_per_s_per_sequence,
        "efficiency": result.efficiency,
        "efficiency_provenance": result.provenance,
        "configuration": None if result.job is None else job_configuration(result.job),
        "step": None
        if result.step is None
        else {k: getattr(result.step, k) for k in result.step.__dataclass_fields__},
        "serving": None if result.serving is None else serving_doc(result.serving, None),
    }


def print_serving(plan: ServingPlan, demand_rps: float | None, console: Console) -> None:
    """The serving plan: engine, replicas, each replica's capacity under the targets, and
    the operating point; or the target no load meets."""
    from whichgpu.engines import ENGINES

    engine = ENGINES[plan.engine].name
    if plan.unmet is not None:
        target, best = plan.unmet
        console.print(
            fmt(
                _(
                    "Serving on {engine}: no load meets the {target} target; the best is "
                    "{ms:,.1f} ms"
                ),
                engine=engine,
                target=target.upper(),
                ms=best * 1e3,
            )
        )
        return
    cap, point = plan.capacity, plan.operating
    console.print(
        fmt(
            _(
                "Serving on {engine}: {replicas} replica(s) of {gpus} GPU(s), each serving up to "
                "{rate:,.2f} requests/s ({tokens:,.0f} output tokens/s, {sequences} sequences "
                "at most); limited by {binding}"
            ),
            engine=engine,
            replicas=plan.replicas,
            gpus=plan.gpus_per_replica,
            rate=cap.rate_rps,
            tokens=cap.tokens_per_s(plan.generate),
            sequences=plan.max_sequences,
            binding=localize(plan.binding),
        )
    )
    served = plan.replicas * cap.rate_rps
    if demand_rps is not None and cap.rate_rps > 0 and served < demand_rps * (1 - 1e-9):
        needed = math.ceil(demand_rps / cap.rate_rps * (1 - 1e-9))
        console.print(
            fmt(
                _(
                    "{demand:,.2f} requests/s need {needed} such replicas ({gpus} GPUs); these "
                    "serve {served:,.2f}"
                ),
                demand=demand_rps,
                needed=needed,
                gpus=needed * plan.gpus_per_replica,
                served=served,
            )
        )
    console.print(
        fmt(
            _(
                "At {rate:,.2f} requests/s a replica: {concurrency:,.0f} in flight, time to first "
                "token {ttft:,.0f} ms, {tpot:,.1f} ms per output token ({quantile:.0%} of requests)"
            ),
            rate=point.rate_rps,
            concurrency=point.concurrency,
            ttft=point.ttft_s * 1e3,
            tpot=point.tpot_s * 1e3,
            quantile=plan.targets.quantile,
        )
    )


def print_estimate(result: ThroughputEstimate, arch: ModelArch | None, console: Console) -> None:
    from rich.text import Text

    rate = result.throughput
    gpus = count_label(result.count, result.gpu.short_name)
    what = arch.name if arch is not None else _(result.regime)
    console.print(Text(f"{what} · {result.regime} · {gpus}", style="bold"))
    console.print(
        fmt(
            _("Throughput: {value:,.1f} {unit} (likely {low:,.1f}–{high:,.1f}), {bound}-bound"),
            value=rate.value,
            unit=rate.unit,
            low=rate.low,
            high=rate.high,
            bound=_(result.bound),
        )
    )
    if result.tokens_per_s_per_sequence is not None:
        console.print(fmt(_("Per sequence: {n:,.1f} tokens/s"), n=result.tokens_per_s_per_sequence))
    if result.ttft_s is not None:
        console.print(fmt(_("Time to first token: {ms:,.0f} ms"), ms=result.ttft_s * 1e3))
    if result.mfu is not None:
        console.print(fmt(_("MFU: {mfu:.0%}"), mfu=result.mfu))
    if result.job is None and result.count > 1 and result.regime.startswith("llm-"):
        # inference over several GPUs is one model split across them, not copies of it
        console.print(
            fmt(_("Layout: tensor parallel {tp} (one copy of the model)"), tp=result.count)
        )
    if result.serving is not None:
        print_serving(result.serving, result.demand_rps, console)
    if result.job is not None and result.step is not None:
        job, step = result.job, result.step
        console.print(
            fmt(
                _(
                    "Layout: TP {tp} × PP {pp} (× {vp} virtual) × DP {dp} (ZeRO {zero}); "
                    "micro-batch {batch} × {accum} accumulated = global batch {global_batch}; "
                    "recomputation {ckpt}"
                ),
                tp=job.tp,
                pp=job.pp,
                vp=max(job.vp, 1),
                dp=job.dp,
                zero=job.zero,
                batch=job.batch,
                accum=job.grad_accum,
                global_batch=job.batch * job.dp * job.grad_accum,
                ckpt=_(job.checkpointing),
            )
        )
        comm = step.tensor_parallel_s + step.pipeline_p2p_s + step.data_parallel_s
        console.print(
            fmt(
                _(
                    "Step: {seconds:,.2f} s (pipeline bubble {bubble:.0%}, communication "
                    "{comm:.0%}, host transfers {host:.0%})"
                ),
                seconds=step.seconds,
                bubble=step.bubble_s / step.seconds,
                comm=comm / step.seconds,
                host=step.offload_s / step.seconds,
            )
        )
    if result.time_s is not None:
        low = result.time_s * rate.value / rate.high
        high = result.time_s * rate.value / rate.low
        console.print(
            fmt(
                _("Time: {t} (likely {low}–{high})"),
                t=format_duration(result.time_s),
                low=format_duration(low),
                high=format_duration(high),
            )
        )
    console.print(
        Text(
            fmt(_("Efficiency {eta:.0%} of the roofline ({provenance}; as the {harness} harness "
              "runs it). Accuracy: docs/perf-accuracy.md"), eta=result.efficiency,
                provenance=localize(result.provenance),
                harness=result.harness,
            ),
            style="dim",
        )
    )  # fmt: skip
