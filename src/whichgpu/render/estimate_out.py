"""``estimate`` output: JSON and text."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from whichgpu.errors import field_name
from whichgpu.estimate.diffusion import guided
from whichgpu.estimate.imaging import ImageEstimate, ImageTrainEstimate
from whichgpu.estimate.throughput import ThroughputEstimate
from whichgpu.i18n import _, fmt, ngettext
from whichgpu.inputs.fields import format_duration, format_rate
from whichgpu.models.arch import ModelArch
from whichgpu.notes import Note, count_label, note, note_doc, render
from whichgpu.phrases import localize
from whichgpu.render.json_doc import SCHEMA_VERSION, job_configuration, serving_doc
from whichgpu.render.tables import quant_shown, recomputation_of
from whichgpu.units import BYTES_PER_GIB

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.estimate.serving_types import FrontPoint, ServingPlan


class Printer(Protocol):
    """Where the text output goes: a Rich console (the CLI) or :class:`Lines` (a page)."""

    def print(self, *objects: Any, style: str | None = None) -> None: ...


class Lines:
    """The text output as plain lines, for a page to list: what the CLI prints, line for
    line, so that both shells say the same of one estimate."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def print(self, *objects: Any, style: str | None = None) -> None:
        self.texts.append(" ".join(str(o) for o in objects))


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
        "step": None if result.step is None else msgspec.structs.asdict(result.step),
        "serving": None if result.serving is None else serving_doc(result.serving, None),
        "image": None if result.image is None else image_doc(result.image),
        "image_training": None
        if result.image_training is None
        else image_training_doc(result.image_training),
        "memory_gib": result.memory_gib,
        "fits": result.fits,
        "notes": [note_doc(n) for n in result.notes],
    }


def print_serving(plan: ServingPlan, demand_rps: float | None, console: Printer) -> None:
    """The serving plan (:func:`print_plan`), then the front it was chosen on."""
    print_plan(plan, demand_rps, console)
    print_front(plan.front, console)


def print_front(front: tuple[FrontPoint, ...], console: Printer) -> None:
    """Output tokens a second a user gets against those a GPU serves, over the layouts of
    the same GPUs (:func:`~whichgpu.estimate.serving_front.serving_front`), a line a point."""
    lines = front_lines(front)
    if not lines:
        return
    console.print(_("The front of these GPUs' layouts, output tokens/s a user against a GPU:"))
    for line in lines:
        console.print("  " + line)


def front_lines(front: tuple[FrontPoint, ...]) -> list[str]:
    """:func:`print_front`'s points, a sentence each, in the reader's language."""
    out = []
    for f in front:
        if f.disaggregated:
            layout = fmt(_("{prefill}-GPU prefill and {decode}-GPU decode workers"),
                         prefill=f.prefill_gpus, decode=f.decode_gpus)  # fmt: skip
        elif f.attention_dp:
            layout = fmt(_("{gpus}-GPU replicas, attention data-parallel"), gpus=f.decode_gpus)
        else:
            layout = fmt(_("{gpus}-GPU replicas"), gpus=f.decode_gpus)
        line = fmt(
            _(
                "{user:,.1f} a user, {gpu:,.1f} a GPU: {layout} (time to first token "
                "{ttft:,.0f} ms, {tpot:,.1f} ms per output token)"
            ),
            user=f.tokens_per_s_per_user, gpu=f.tokens_per_s_per_gpu, layout=layout,
            ttft=f.ttft_s * 1e3, tpot=f.tpot_s * 1e3,
        )  # fmt: skip
        out.append(line)
    return out


def print_plan(plan: ServingPlan, demand_rps: float | None, console: Printer) -> None:
    """The serving plan: engine, replicas, each replica's capacity under the targets, and
    the operating point; or the target no load meets."""
    from whichgpu.job.engine_releases import engine_profile

    engine = engine_profile(plan.engine).name
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
    split = plan.disaggregated
    if split is not None:
        console.print(
            fmt(
                _(
                    "Serving on {engine}, disaggregated: {prefill} prefill workers of {tp_p} "
                    "GPUs and {decode} decode workers of {tp_d} serving up to {rate:,.2f} "
                    "requests/s (replicas of these GPUs: {aggregated:,.2f}); a prompt's KV cache "
                    "moves in {transfer:,.1f} ms; time to first token {ttft:,.0f} ms, {tpot:,.1f} "
                    "ms per output token ({quantile:.0%} of requests); limited by its {binding} "
                    "workers"
                ),
                engine=engine, prefill=split.prefill_workers, tp_p=split.prefill_tp,
                decode=split.decode_workers, tp_d=split.decode_tp, rate=split.capacity_rps,
                aggregated=plan.aggregated_rps, transfer=split.transfer_s * 1e3,
                ttft=split.ttft_s * 1e3, tpot=split.tpot_s * 1e3,
                quantile=plan.targets.quantile, binding=localize(split.binding),
            )
        )  # fmt: skip
        return
    console.print(
        fmt(
            ngettext(
                "Serving on {engine}: {replicas} × {gpus}-GPU replica serving up to "
                "{rate:,.2f} requests/s ({tokens:,.0f} output tokens/s, {sequences} sequences "
                "at most); limited by {binding}",
                "Serving on {engine}: {replicas} × {gpus}-GPU replicas, each serving up to "
                "{rate:,.2f} requests/s ({tokens:,.0f} output tokens/s, {sequences} sequences "
                "at most); limited by {binding}",
                plan.replicas,
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
    if plan.attention_dp:
        console.print(
            fmt(
                _(
                    "Layout: attention data-parallel and the experts expert-parallel over the "
                    "{gpus} GPUs of a replica (tensor parallelism: {other:,.2f} requests/s a "
                    "replica)"
                ),
                gpus=plan.gpus_per_replica,
                other=plan.other_layout_rps / max(plan.replicas, 1),
            )
        )
    served = plan.replicas * cap.rate_rps
    if demand_rps is not None and cap.rate_rps > 0 and served < demand_rps * (1 - 1e-9):
        needed = math.ceil(demand_rps / cap.rate_rps * (1 - 1e-9))
        console.print(
            fmt(
                ngettext(
                    "{demand:,.2f} requests/s need {needed} such replicas ({gpus} GPUs); the "
                    "{replicas} planned here serves {served:,.2f}",
                    "{demand:,.2f} requests/s need {needed} such replicas ({gpus} GPUs); the "
                    "{replicas} planned here serve {served:,.2f}",
                    plan.replicas,
                ),
                demand=demand_rps,
                needed=needed,
                gpus=needed * plan.gpus_per_replica,
                replicas=plan.replicas,
                served=served,
            )
        )
    console.print(
        fmt(
            _(
                "At {rate:,.2f} requests/s a replica: {concurrency:,.0f} in flight, time to first "
                "token {ttft:,.0f} ms (likely {ttft_low:,.0f}–{ttft_high:,.0f} ms), {tpot:,.1f} ms "
                "per output token (likely {tpot_low:,.1f}–{tpot_high:,.1f} ms) ({quantile:.0%} of "
                "requests)"
            ),
            rate=point.rate_rps,
            concurrency=point.concurrency,
            ttft=point.ttft_s * 1e3,
            ttft_low=plan.likely_s(point.ttft_s, "ttft")[0] * 1e3,
            ttft_high=plan.likely_s(point.ttft_s, "ttft")[1] * 1e3,
            tpot=point.tpot_s * 1e3,
            tpot_low=plan.likely_s(point.tpot_s, "tpot")[0] * 1e3,
            tpot_high=plan.likely_s(point.tpot_s, "tpot")[1] * 1e3,
            quantile=plan.targets.quantile,
        )
    )


def no_fit(est: ImageEstimate | ImageTrainEstimate, gpu: GPU) -> Note | None:
    """What an image job that no setting fits on ``gpu`` needs, and what to try."""
    from whichgpu.estimate.parallel import usable_bytes

    capacity = usable_bytes(gpu) / BYTES_PER_GIB
    if est.memory.total_gib <= capacity:
        return None
    from whichgpu.errors import Ref

    if est.memory.stage == "loading":  # quantised on the GPU after a 16-bit load
        return note("image_no_fit_loading", gib=round(est.memory.total_gib, 1),
                    gpu=gpu.short_name, capacity=round(capacity, 1),
                    quantize_on=Ref(("quantize_on",)))  # fmt: skip
    code = "image_no_fit" if isinstance(est, ImageEstimate) else "image_training_no_fit"
    flags = {name: Ref((name,)) for name in ("quant", "checkpointing", "optimizer",
                                             "cache_latents")}  # fmt: skip
    if code == "image_no_fit":
        flags = {"quant": flags["quant"]}
    return note(code, gib=round(est.memory.total_gib, 1), gpu=gpu.short_name,
                capacity=round(capacity, 1), **flags)  # fmt: skip


def print_chosen(chosen: tuple[str, ...], console: Printer) -> None:
    """The settings whichgpu chose where the user left them open, as their flags."""
    if chosen:
        flags = ", ".join(field_name((name,)) for name in chosen)
        console.print(fmt(_("Chosen for this GPU (left open): {settings}"), settings=flags),
                      style="dim")  # fmt: skip


def print_image(image: ImageEstimate, gpu: GPU, console: Printer) -> None:
    """An image job's settings (those whichgpu chose said so), time per image and memory,
    and a job that fits no way on the GPU said so."""
    job = image.job
    console.print(
        fmt(
            ngettext(
                "Job: {resolution}×{resolution} px, {steps} steps, {batch} image a call, "
                "{precision}{quant}; guidance: the denoiser {passes}× a step; CPU offload "
                "{offload}, VAE tiling {tiling}",
                "Job: {resolution}×{resolution} px, {steps} steps, {batch} images a call, "
                "{precision}{quant}; guidance: the denoiser {passes}× a step; CPU offload "
                "{offload}, VAE tiling {tiling}",
                job.batch,
            ),
            resolution=job.resolution,
            steps=job.steps,
            batch=job.batch,
            precision=job.precision,
            quant=quant_shown(job.quant, job.quantize_on),
            passes=guided(image.pipeline, job),
            offload=localize(job.offload),
            tiling=localize("on" if job.vae_tiling else "off"),
        )
    )
    console.print(
        fmt(
            _(
                "Per image: {seconds:,.2f} s on one GPU ({per_min:,.1f} images/min); a "
                "denoising step {step_ms:,.0f} ms"
            ),
            seconds=image.seconds_per_image,
            per_min=60 / image.seconds_per_image,
            step_ms=image.seconds_per_step * 1e3,
        )
    )
    print_chosen(image.chosen, console)
    mem = image.memory
    console.print(
        fmt(
            _("Memory: {gib:,.1f} GiB at the peak ({stage}); host memory {host:,.1f} GiB"),
            gib=mem.total_gib,
            stage=localize(mem.stage),
            host=mem.host_bytes / BYTES_PER_GIB,
        )
    )
    if (why := no_fit(image, gpu)) is not None:
        console.print(why.render(), style="bold red")


def print_image_training(est: ImageTrainEstimate, gpu: GPU, console: Printer) -> None:
    """A fine-tuning job's settings, step time, memory by part."""
    job = est.job
    console.print(
        fmt(
            ngettext(
                "Job: {method} of the denoiser ({trainable} trainable parameters), "
                "{resolution}×{resolution} px, {batch} image a GPU step, {precision}{quant}, "
                "{optimizer}, gradient checkpointing {ckpt}, latents {cached}",
                "Job: {method} of the denoiser ({trainable} trainable parameters), "
                "{resolution}×{resolution} px, {batch} images a GPU step, {precision}{quant}, "
                "{optimizer}, gradient checkpointing {ckpt}, latents {cached}",
                job.batch,
            ),
            method=_("LoRA rank {rank}").format(rank=job.lora_rank)
            if job.method == "lora"
            else _("full fine-tune"),
            trainable=f"{est.trainable_params:,}",
            resolution=job.resolution,
            batch=job.batch,
            precision=job.precision.replace("-true", "-mixed"),
            quant="" if job.quant is None else f", {job.quant} base",
            optimizer=job.optimizer,
            ckpt=localize("on" if job.checkpointing else "off"),
            cached=localize("cached" if job.cached else "encoded each step"),
        )
    )
    console.print(
        fmt(
            _("Step: {seconds:,.2f} s ({allreduce:.0%} gradient all-reduce)"),
            seconds=est.seconds_per_step,
            allreduce=est.allreduce_s / est.seconds_per_step,
        )
    )
    print_chosen(est.chosen, console)
    parts = est.memory.parts
    console.print(
        fmt(
            _(
                "Memory: {gib:,.1f} GiB a GPU (weights {weights:,.1f}, gradients "
                "{gradients:,.1f}, optimizer {optimizer:,.1f}, activations {activations:,.1f})"
            ),
            gib=est.memory.total_gib,
            **{k: parts.get(k, 0.0) / BYTES_PER_GIB
               for k in ("weights", "gradients", "optimizer", "activations")},
        )
    )  # fmt: skip
    if (why := no_fit(est, gpu)) is not None:
        console.print(why.render(), style="bold red")


def image_training_doc(est: ImageTrainEstimate) -> dict[str, Any]:
    job = est.job
    return {
        "pipeline": est.pipeline.id,
        "method": job.method,
        "resolution_px": job.resolution,
        "batch": job.batch,
        "precision": job.precision,
        "quant": job.quant,
        "lora_rank": job.lora_rank if job.method == "lora" else None,
        "optimizer": job.optimizer,
        "checkpointing": job.checkpointing,
        "cache_latents": job.cached,
        "trainable_params": est.trainable_params,
        "seconds_per_step": est.seconds_per_step,
        "allreduce_s_per_step": est.allreduce_s,
        "memory_gib": est.memory.total_gib,
        "memory_parts_gib": {k: v / BYTES_PER_GIB for k, v in est.memory.parts.items()},
        "chosen": list(est.chosen),
    }


def image_doc(image: ImageEstimate) -> dict[str, Any]:
    job = image.job
    return {
        "pipeline": image.pipeline.id,
        "resolution_px": job.resolution,
        "steps": job.steps,
        "batch": job.batch,
        "precision": job.precision,
        "quant": job.quant,
        "quantize_on": job.quantize_on,
        "cpu_offload": job.offload,
        "vae_tiling": job.vae_tiling,
        "denoiser_passes_per_step": guided(image.pipeline, job),
        "seconds_per_image": image.seconds_per_image,
        "seconds_per_step": image.seconds_per_step,
        "transfer_s_per_call": image.transfer_s,
        "memory_gib": image.memory.total_gib,
        "memory_peak_stage": image.memory.stage,
        "memory_parts_gib": {k: v / BYTES_PER_GIB for k, v in image.memory.parts.items()},
        "host_memory_gib": image.memory.host_bytes / BYTES_PER_GIB,
        "chosen": list(image.chosen),
    }


def print_estimate(result: ThroughputEstimate, arch: ModelArch | None, console: Printer) -> None:
    from rich.text import Text

    rate = result.throughput
    gpus = count_label(result.count, result.gpu.short_name)
    image = result.image
    training = result.image_training
    pipeline = image.pipeline if image is not None else (
        training.pipeline if training is not None else None)  # fmt: skip
    what = arch.name if arch is not None else (
        pipeline.name if pipeline is not None else _(result.regime))  # fmt: skip
    console.print(Text(f"{what} · {result.regime} · {gpus}", style="bold"))
    for n in result.notes:  # a job that does not fit, a precision chosen: first
        style = "bold red" if n.code == "estimate_no_fit" else "dim"
        console.print(Text(render(n), style=style))
    if pipeline is not None:  # a fraction of an image a second: two significant digits
        console.print(
            fmt(
                _("Throughput: {rate} (likely {low}–{high}), {bound}-bound"),
                rate=format_rate(rate.value, rate.unit),
                low=format_rate(rate.low, rate.unit),
                high=format_rate(rate.high, rate.unit),
                bound=localize(result.bound),
            )
        )
        if image is not None:
            print_image(image, result.gpu, console)
        if training is not None:
            print_image_training(training, result.gpu, console)
    else:
        console.print(
            fmt(
                _("Throughput: {value:,.1f} {unit} (likely {low:,.1f}–{high:,.1f}), {bound}-bound"),
                value=rate.value,
                unit=rate.unit,
                low=rate.low,
                high=rate.high,
                bound=localize(result.bound),
            )
        )
    if result.tokens_per_s_per_sequence is not None:
        console.print(fmt(_("Per sequence: {n:,.1f} tokens/s"), n=result.tokens_per_s_per_sequence))
    if result.ttft_s is not None:
        console.print(fmt(_("Time to first token: {ms:,.0f} ms"), ms=result.ttft_s * 1e3))
    if result.mfu is not None:
        console.print(fmt(_("MFU: {mfu:.0%}"), mfu=result.mfu))
    if (
        result.job is None
        and result.serving is None  # the serving plan says its replicas and their size
        and result.count > 1
        and result.regime.startswith("llm-")
    ):
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
                    "Layout: TP {tp} × PP {pp} (× {vp} virtual) × CP {cp} × DP {dp} (ZeRO "
                    "{zero}); micro-batch {batch} × {accum} accumulated = global batch "
                    "{global_batch}; recomputation {ckpt}"
                ),
                tp=job.tp,
                pp=job.pp,
                cp=job.cp,
                vp=max(job.vp, 1),
                dp=job.dp,
                zero=job.zero,
                batch=job.batch,
                accum=job.grad_accum,
                global_batch=job.global_batch,
                ckpt=recomputation_of(job),
            )
        )
        if job.gpus > job.gpus_per_node:
            from whichgpu.estimate.parallel import instance_gbit
            from whichgpu.render.tables import NETWORKS

            console.print(
                fmt(
                    _(
                        "GPUs an instance: {gpus}; {instances} instances joined by {network} "
                        "at {gbit:,g} Gb/s an instance"
                    ),
                    instances=-(-job.gpus // job.gpus_per_node),
                    gpus=job.gpus_per_node,
                    network=_(NETWORKS.get(job.network, job.network)),
                    gbit=instance_gbit(
                        result.gpu, job.network, job.gpus_per_node, job.network_gbit
                    ),
                )
            )
        if job.tp_overlap and job.tp > 1:
            console.print(
                _(
                    "Tensor-parallel collectives run under the GEMMs (tp_overlap): a stage "
                    "waits only on what its compute does not cover."
                )
            )
        comm = (
            step.tensor_parallel_s
            + step.pipeline_p2p_s
            + step.data_parallel_s
            + step.context_parallel_s
        )
        console.print(
            fmt(
                _(
                    "Step: {seconds:,.2f} s (pipeline bubble {bubble:.0%}, communication "
                    "{comm:.0%}, host transfers {host:.0%}, optimizer update {update:.0%})"
                ),
                seconds=step.seconds,
                bubble=step.bubble_s / step.seconds,
                comm=comm / step.seconds,
                host=step.offload_s / step.seconds,
                update=step.optimizer_s / step.seconds,
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
    if pipeline is not None:
        console.print(
            Text(
                fmt(_("Efficiency {eta:.0%} of the roofline ({provenance}; as the {harness} "
                      "harness runs it). Accuracy: docs/image-accuracy.md"),
                    eta=result.efficiency, provenance=localize(result.provenance),
                    harness=result.harness),
                style="dim",
            )
        )  # fmt: skip
        return
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
