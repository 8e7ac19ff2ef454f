"""``estimate`` output: JSON and text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whichgpu.fields import format_duration
from whichgpu.i18n import _, fmt
from whichgpu.models.arch import ModelArch
from whichgpu.notes import count_label, localize
from whichgpu.render.json_doc import SCHEMA_VERSION, job_configuration
from whichgpu.throughput import ThroughputEstimate

if TYPE_CHECKING:
    from rich.console import Console


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
    }


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
