"""Sizing commands: ``fit`` (memory) and ``estimate`` (speed and time)."""

from __future__ import annotations

from typing import Annotated

import typer

from whichgpu.cli._app import (
    GenericSize,
    HubModel,
    JsonFlag,
    ModelName,
    app,
    emit,
    model_arch,
)
from whichgpu.i18n import _


@app.command(
    help=_("Will it fit? Memory by component, and for every GPU: fits, headroom, how many.")
)
def fit(
    model: ModelName = None,
    params: GenericSize = None,
    hub: HubModel = None,
    task: Annotated[
        str, typer.Option(help=_("inference, train, finetune, lora or qlora."))
    ] = "inference",
    precision: Annotated[
        str,
        typer.Option(help=_("32-true, 16-mixed, bf16-mixed, 16-true or bf16-true.")),
    ] = "bf16-true",
    engine: Annotated[str, typer.Option(help=_("torch, deepspeed or megatron."))] = "torch",
    quant: Annotated[
        str | None, typer.Option(help=_("Weights: int8, int4, nf4, fp8, q4_k_m…"))
    ] = None,
    batch: Annotated[int, typer.Option(help=_("Sequences per GPU (micro-batch)."))] = 1,
    seq: Annotated[int, typer.Option(help=_("Tokens per sequence."))] = 2048,
    prompt: Annotated[int, typer.Option(help=_("Inference: prompt tokens."))] = 0,
    generate: Annotated[int, typer.Option(help=_("Inference: generated tokens."))] = 0,
    optimizer: Annotated[
        str, typer.Option(help=_("adamw, adamw-8bit, sgd or adafactor."))
    ] = "adamw",
    checkpointing: Annotated[
        bool, typer.Option("--checkpointing", help=_("Full activation checkpointing."))
    ] = False,
    recompute: Annotated[
        str | None,
        typer.Option(help=_("Activation recomputation: none, selective or full.")),
    ] = None,
    attention: Annotated[str, typer.Option(help=_("sdpa or eager."))] = "sdpa",
    lora_rank: Annotated[int, typer.Option(help=_("LoRA rank."))] = 16,
    lora_targets: Annotated[str, typer.Option(help=_("attention or all-linear."))] = "attention",
    zero: Annotated[int, typer.Option(help=_("ZeRO stage 0-3 (3 = FSDP full shard)."))] = 0,
    tp: Annotated[int, typer.Option(help=_("Tensor-parallel degree."))] = 1,
    pp: Annotated[int, typer.Option(help=_("Pipeline-parallel degree."))] = 1,
    gpus: Annotated[int, typer.Option(help=_("GPUs the job runs on."))] = 1,
    kv_dtype: Annotated[str, typer.Option(help=_("KV cache: auto, fp16, bf16 or fp8."))] = "auto",
    gpu: Annotated[str | None, typer.Option("--gpu", help=_("The GPU you have in mind."))] = None,
    gpu_memory_utilization: Annotated[
        float | None,
        typer.Option(help=_("Serving: vLLM's memory fraction; prints concurrent sequences.")),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    from whichgpu.catalog import load_catalog
    from whichgpu.fitting import fit_request

    result, serving = fit_request(
        load_catalog(), model_arch(model, params, hub), gpu=gpu,
        gpu_memory_utilization=gpu_memory_utilization, recompute=recompute,
        checkpointing=checkpointing, task=task, precision=precision, engine=engine,
        quant=quant, batch=batch, seq=seq, prompt=prompt, generate=generate,
        optimizer=optimizer, attention=attention, lora_rank=lora_rank,
        lora_targets=lora_targets, zero=zero, tp=tp, pp=pp, gpus=gpus, kv_dtype=kv_dtype,
    )  # fmt: skip
    from whichgpu.render import fit_out

    emit(
        json_out,
        lambda: fit_out.fit_doc(result, serving),
        lambda console: fit_out.print_fit(result, serving, console),
    )


@app.command(help=_("How fast, how long? Throughput, time, bound and MFU, with a range."))
def estimate(
    model: ModelName = None,
    params: GenericSize = None,
    hub: HubModel = None,
    task: Annotated[
        str, typer.Option(help=_("inference, train, finetune, lora, qlora, render or fp64."))
    ] = "inference",
    gpu: Annotated[str, typer.Option("--gpu", help=_("The GPU."))] = "a100",
    count: Annotated[int, typer.Option(help=_("How many of them (data parallel)."))] = 1,
    precision: Annotated[
        str,
        typer.Option(
            help=_("32-true, 16-mixed, bf16-mixed, 16-true, bf16-true, tf32 or fp8-mixed.")
        ),
    ] = "bf16-true",
    quant: Annotated[str | None, typer.Option(help=_("Weights: int8, int4, fp8, q4_k_m…"))] = None,
    batch: Annotated[int, typer.Option(help=_("Sequences or images per GPU step."))] = 1,
    seq: Annotated[int, typer.Option(help=_("Tokens per sequence (training, prompt)."))] = 2048,
    prompt: Annotated[int, typer.Option(help=_("Inference: prompt tokens."))] = 0,
    generate: Annotated[int, typer.Option(help=_("Inference: generated tokens."))] = 256,
    checkpointing: Annotated[
        bool, typer.Option("--checkpointing", help=_("Full activation checkpointing."))
    ] = False,
    tokens: Annotated[
        float | None, typer.Option(help=_("Job size: tokens to train on or to generate."))
    ] = None,
    images: Annotated[float | None, typer.Option(help=_("Job size: images."))] = None,
    epochs: Annotated[float, typer.Option(help=_("Passes over --images."))] = 1.0,
    frames: Annotated[float | None, typer.Option(help=_("Render: frames to render."))] = None,
    samples_per_frame: Annotated[
        int, typer.Option(help=_("Render: path-tracing samples per frame."))
    ] = 1024,
    tflop: Annotated[float | None, typer.Option(help=_("FP64: work in TFLOP."))] = None,
    json_out: JsonFlag = False,
) -> None:
    from whichgpu.catalog import load_catalog
    from whichgpu.throughput import estimate_job

    arch = None if task in ("render", "fp64") else model_arch(model, params, hub)
    result = estimate_job(
        load_catalog().resolve(gpu), arch, task=task, count=count, precision=precision,
        quant=quant, batch=batch, seq=seq, prompt=prompt, generate=generate,
        checkpointing=checkpointing, tokens=tokens, images=images, epochs=epochs,
        frames=frames, samples_per_frame=samples_per_frame, tflop=tflop,
    )  # fmt: skip
    from whichgpu.render import estimate_out

    emit(
        json_out,
        lambda: estimate_out.estimate_doc(result),
        lambda console: estimate_out.print_estimate(result, arch, console),
    )
