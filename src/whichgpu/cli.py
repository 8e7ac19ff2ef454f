"""The ``whichgpu`` command: thin shells that parse input, call the library, render."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from whichgpu.errors import InvalidInput, WhichGPUError
from whichgpu.i18n import _, fmt, set_language


def split_language(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--lang fr`` (or ``--lang=fr``) anywhere on the command line, and the rest."""
    language, rest, i = None, [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--lang":
            language, i = (argv[i + 1] if i + 1 < len(argv) else ""), i + 2
            continue
        if arg.startswith("--lang="):
            language = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    return language, rest


# Help texts are built when this module loads: pick the language first (--lang, then
# LANGUAGE / LC_ALL / LANG).
_argv_language = split_language(sys.argv[1:])[0]
if _argv_language:
    set_language(_argv_language)

app = typer.Typer(
    name="whichgpu",
    epilog=_("Add --lang en|fr|ja to any command (default: LANGUAGE, LC_ALL or LANG)."),
    help=_("Which GPU should I rent or buy for this job, how many, and what will it cost?"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

JobName = Annotated[str, typer.Option("--name", help=_("Export: the job's name."))]
RunCommand = Annotated[str, typer.Option("--run", help=_("Export: the command to run."))]
Image = Annotated[str, typer.Option("--image", help=_("Export (kubernetes): container image."))]
HubModel = Annotated[
    str | None,
    typer.Option("--hub", metavar="ORG/NAME", help=_("Fetch config.json from the Hub.")),
]
JsonFlag = Annotated[
    bool, typer.Option("--json", help=_("Print JSON (the schema is in docs/json.md)."))
]
PriceFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help=_("Your prices (CSV or TOML); they replace the catalog's for that GPU and market."),
    ),
]
SkypilotFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--skypilot-catalog",
        metavar="VMS_CSV",
        help=_("Import prices from a SkyPilot catalog vms.csv."),
    ),
]


def _catalog(prices: list[Path] | None, skypilot: list[Path] | None) -> Any:
    from whichgpu.catalog import load_catalog
    from whichgpu.userdata import catalog_with_user_data

    catalog, skipped = catalog_with_user_data(load_catalog(), prices or [], skypilot or [])
    if skipped:
        message = _("note: skipped accelerators whichgpu does not carry: {names}")
        typer.echo(message.format(names=", ".join(skipped)), err=True)
    return catalog


def _print_json(doc: object) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def _emit(json_out: bool, doc: Callable[[], object], show: Callable[[Any], None]) -> None:
    """A command's answer: its JSON document with ``--json``, else the tables (Rich is
    imported only then)."""
    if json_out:
        _print_json(doc())
        return
    from whichgpu.render.tables import make_console

    show(make_console())


@app.command(help=_("List the GPU catalog."))
def gpus(
    min_vram: Annotated[
        float | None, typer.Option("--min-vram", metavar="GB", help=_("At least this much VRAM."))
    ] = None,
    arch: Annotated[
        str | None, typer.Option("--arch", help=_("Architecture (Ampere, Hopper, Ada…)."))
    ] = None,
    feature: Annotated[
        list[str] | None,
        typer.Option("--feature", help=_("Required: mig, nvlink, rt, fp64, display, ecc.")),
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.catalog.filters import filter_gpus

    catalog = _catalog(prices, skypilot)
    found = filter_gpus(catalog, min_vram, arch, feature or [])
    from whichgpu.render import json_doc, tables

    _emit(
        json_out,
        lambda: json_doc.gpu_list_doc(found, catalog),
        lambda console: tables.print_gpu_list(found, catalog, console),
    )


@app.command(help=_("Show one GPU: every spec with its source, its prices with their dates."))
def show(
    gpu: Annotated[str, typer.Argument(help=_("A GPU name: a100, rtx-a6000, h100-pcie…"))],
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.userdata import today

    catalog = _catalog(prices, skypilot)
    found = catalog.resolve(gpu)
    from whichgpu.render import json_doc, tables

    _emit(
        json_out,
        lambda: json_doc.show_doc(found, catalog, today()),
        lambda console: tables.print_gpu(found, catalog, today(), console),
    )


@app.command(
    help=_("Compare GPUs side by side (the article's table, checked), with prices and ratios.")
)
def compare(
    gpus: Annotated[
        list[str], typer.Argument(help=_("Two or more GPU names; the first is the baseline."))
    ],
    market: Annotated[
        list[str] | None,
        typer.Option(
            "--market", help=_("Market kinds to price: on-demand, spot, marketplace, serverless.")
        ),
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.compare import compare as compare_gpus
    from whichgpu.compare import parse_markets
    from whichgpu.userdata import today

    catalog = _catalog(prices, skypilot)
    comparison = compare_gpus(catalog, gpus, parse_markets(market))
    from whichgpu.render import json_doc, tables

    _emit(
        json_out,
        lambda: json_doc.compare_doc(comparison, catalog, today()),
        lambda console: tables.print_compare(comparison, catalog, today(), console),
    )


def _model(model: str | None, params: str | None, hub: str | None) -> Any:
    """A preset name, a config.json path, a Hub id (opt-in) or a generic size."""
    from whichgpu.models import arch_from_config_text, resolve_model

    if hub is not None:
        from whichgpu.models.hub import hub_arch

        return hub_arch(hub)
    if model is not None and (model.endswith(".json") or Path(model).is_file()):
        from whichgpu.userdata import read_user_file

        return arch_from_config_text(read_user_file(Path(model)), model)
    return resolve_model(model, params)


@app.command(
    help=_("Will it fit? Memory by component, and for every GPU: fits, headroom, how many.")
)
def fit(
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help=_("A preset (llama-3.1-8b…) or a config.json path.")),
    ] = None,
    params: Annotated[
        str | None, typer.Option("--params", help=_("A generic transformer of this size: 7B."))
    ] = None,
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
    from whichgpu.fit import fit as fit_job
    from whichgpu.workload import make_job

    job = make_job(
        task=task, precision=precision, engine=engine, quant=quant, batch=batch, seq=seq,
        prompt=prompt, generate=generate, optimizer=optimizer,
        checkpointing=recompute or ("full" if checkpointing else "none"), attention=attention,
        lora_rank=lora_rank, lora_targets=lora_targets, zero=zero, tp=tp, pp=pp, gpus=gpus,
        kv_dtype=kv_dtype,
    )  # fmt: skip
    catalog = load_catalog()
    arch = _model(model, params, hub)
    target = catalog.resolve(gpu) if gpu else None
    serving = None
    if gpu_memory_utilization is not None:
        from whichgpu.estimate.serving import serving_capacity

        if not 0 < gpu_memory_utilization <= 1:
            raise InvalidInput(
                fmt(
                    _("--gpu-memory-utilization must be in (0, 1] (got {value})"),
                    value=gpu_memory_utilization,
                )
            )
        if job.training:
            raise InvalidInput(_("--gpu-memory-utilization is for --task inference"))
        serving = serving_capacity(
            arch, job, target or catalog.resolve("a100"), gpu_memory_utilization
        )
    result = fit_job(catalog, arch, job, target)
    from whichgpu.render import fit_out

    _emit(
        json_out,
        lambda: fit_out.fit_doc(result, serving),
        lambda console: fit_out.print_fit(result, serving, console),
    )


@app.command(help=_("How fast, how long? Throughput, time, bound and MFU, with a range."))
def estimate(
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help=_("A preset (llama-3.1-8b, resnet-50…).")),
    ] = None,
    params: Annotated[
        str | None, typer.Option("--params", help=_("A generic transformer of this size: 7B."))
    ] = None,
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
    from whichgpu.throughput import estimate_throughput
    from whichgpu.workload import make_job

    sizes = {"frames": frames, "tflop": tflop, "samples-per-frame": samples_per_frame,
             "tokens": tokens, "images": images, "epochs": epochs}  # fmt: skip
    for name, value in sizes.items():
        if value is not None and value <= 0:
            raise InvalidInput(
                fmt(_("--{name} must be positive (got {value})"), name=name, value=value)
            )
    if task in ("render", "fp64"):
        from whichgpu.throughput import estimate_model_free

        if count < 1:
            raise InvalidInput(fmt(_("--count must be at least 1 (got {value})"), value=count))
        result = estimate_model_free(task, load_catalog().resolve(gpu), count, frames,
                                     samples_per_frame, tflop)  # fmt: skip
        arch = None
    else:
        job = make_job(
            task=task, precision=precision, quant=quant, batch=batch, seq=seq,
            prompt=prompt or (seq if task == "inference" else 0),
            generate=generate if task == "inference" else 0,
            checkpointing="full" if checkpointing else "none", gpus=count,
        )  # fmt: skip
        catalog = load_catalog()
        arch = _model(model, params, hub)
        from whichgpu.throughput import job_size

        work = job_size(arch, job, tokens, None if images is None else images * epochs)
        result = estimate_throughput(arch, job, catalog.resolve(gpu), count, work=work)
    from whichgpu.render import estimate_out

    _emit(
        json_out,
        lambda: estimate_out.estimate_doc(result),
        lambda console: estimate_out.print_estimate(result, arch, console),
    )


def _hours(text: str | None, flag: str) -> float | None:
    """``48``, ``48h``, ``3d``, ``90min``, ``2w`` → hours."""
    if text is None:
        return None
    from whichgpu.units import parse_duration_h

    try:
        return parse_duration_h(text)
    except ValueError:
        raise InvalidInput(
            fmt(
                _("--{flag} takes a duration like 48h, 3d or 90min (got {value!r})"),
                flag=flag,
                value=text,
            )
        ) from None


@app.command(
    help=_("Which GPU, how many, how long, what cost: ranked options with reasons and warnings.")
)
def recommend(
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help=_("A workload file (TOML or YAML) with components.")),
    ] = None,
    task: Annotated[
        str | None,
        typer.Option(help=_("train, finetune, lora, qlora, inference, render or fp64.")),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help=_("A preset (llama-3.1-8b…)."))
    ] = None,
    params: Annotated[
        str | None, typer.Option("--params", help=_("A generic transformer of this size: 7B."))
    ] = None,
    hub: HubModel = None,
    precision: Annotated[
        str | None,
        typer.Option(
            help=_("32-true, 16-mixed, bf16-mixed, 16-true, bf16-true, tf32 or fp8-mixed.")
        ),
    ] = None,
    quant: Annotated[str | None, typer.Option(help=_("Weights: int8, int4, fp8, q4_k_m…"))] = None,
    batch: Annotated[int | None, typer.Option(help=_("Sequences or images per step."))] = None,
    seq: Annotated[int | None, typer.Option(help=_("Tokens per training sequence."))] = None,
    prompt: Annotated[int | None, typer.Option(help=_("Inference: prompt tokens."))] = None,
    generate: Annotated[int | None, typer.Option(help=_("Inference: generated tokens."))] = None,
    checkpointing: Annotated[
        bool, typer.Option("--checkpointing", help=_("Full activation checkpointing."))
    ] = False,
    tokens: Annotated[
        str | None, typer.Option(help=_("Job size: tokens to train on or generate (1e9, 2B)."))
    ] = None,
    images: Annotated[str | None, typer.Option(help=_("Job size: images per epoch."))] = None,
    epochs: Annotated[float | None, typer.Option(help=_("Passes over --images."))] = None,
    frames: Annotated[str | None, typer.Option(help=_("Render: frames to render."))] = None,
    samples_per_frame: Annotated[
        int | None, typer.Option(help=_("Render: path-tracing samples per frame."))
    ] = None,
    tflop: Annotated[
        str | None, typer.Option(help=_("FP64: work in TFLOP (1e6 = 1 EFLOP)."))
    ] = None,
    hours: Annotated[
        str | None, typer.Option(help=_("Hours of use (serving, interactive work): 200h, 30d."))
    ] = None,
    request_rate: Annotated[
        float | None, typer.Option(help=_("Serving: requests per second to sustain."))
    ] = None,
    services: Annotated[
        int | None, typer.Option(help=_("Isolated copies of this service (MIG or separate GPUs)."))
    ] = None,
    budget: Annotated[float | None, typer.Option(help=_("Total budget in US$."))] = None,
    budget_per_h: Annotated[float | None, typer.Option(help=_("Budget in US$ per hour."))] = None,
    deadline: Annotated[str | None, typer.Option(help=_("Deadline: 48h, 3d, 90min."))] = None,
    max_gpus: Annotated[int | None, typer.Option(help=_("At most this many GPUs."))] = None,
    mode: Annotated[str | None, typer.Option(help=_("rent or buy."))] = None,
    market: Annotated[
        list[str] | None,
        typer.Option("--market", help=_("Markets to rent in: on-demand, spot, marketplace.")),
    ] = None,
    requires: Annotated[
        list[str] | None,
        typer.Option("--requires", help=_("Required: rt, display, ecc, fp64, nvlink, mig.")),
    ] = None,
    electricity: Annotated[
        float | None, typer.Option(help=_("Buying: electricity price in US$ per kWh."))
    ] = None,
    amortize_months: Annotated[
        float | None, typer.Option(help=_("Buying: months the cards are written off over (36)."))
    ] = None,
    hours_per_month: Annotated[
        float | None, typer.Option(help=_("Buying: hours of use a month for the break-even."))
    ] = None,
    objective: Annotated[str, typer.Option(help=_("cost, time or value."))] = "cost",
    catalog_name: Annotated[
        str,
        typer.Option("--catalog", help=_("full, or article: its three GPUs at its prices.")),
    ] = "full",
    baseline: Annotated[
        str | None, typer.Option(help=_("A GPU you had in mind: is it over-provisioned?"))
    ] = None,
    top: Annotated[int, typer.Option(help=_("Rows to show."))] = 8,
    all_rows: Annotated[
        bool, typer.Option("--all", help=_("Every count and market, not the best per GPU."))
    ] = False,
    plot: Annotated[
        Path | None, typer.Option(help=_("Draw the charts to FILE.png or FILE.svg."))
    ] = None,
    export_format: Annotated[
        str | None,
        typer.Option("--export", help=_("Print the pick as skypilot, kubernetes or slurm.")),
    ] = None,
    job_name: JobName = "whichgpu-job",
    run_command: RunCommand = "python train.py",
    image: Image = "nvcr.io/nvidia/pytorch:24.10-py3",
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.recommend import build_workload
    from whichgpu.recommend import recommend as run_recommend
    from whichgpu.userdata import today

    component = {
        "kind": task, "model": model, "params": params, "precision": precision, "quant": quant,
        "batch": batch, "seq": seq, "prompt": prompt, "generate": generate,
        "checkpointing": checkpointing or None, "tokens": tokens, "images": images,
        "epochs": epochs, "frames": frames, "samples_per_frame": samples_per_frame,
        "tflop": tflop, "hours": _hours(hours, "hours"), "request_rate": request_rate,
        "services": services,
    }  # fmt: skip
    constraints = {
        "budget_usd": budget, "budget_usd_per_h": budget_per_h,
        "deadline_h": _hours(deadline, "deadline"), "max_gpus": max_gpus, "mode": mode,
        "markets": [m for item in market for m in item.split(",")] if market else None,
        "requires": [r for item in requires for r in item.split(",")] if requires else None,
        "electricity_usd_per_kwh": electricity, "hours_per_month": hours_per_month,
        "amortize_months": amortize_months,
    }  # fmt: skip
    if objective not in ("cost", "time", "value"):
        raise InvalidInput(
            fmt(_("unknown objective {value!r}; valid: cost, time, value"), value=objective)
        )
    if catalog_name not in ("full", "article"):
        raise InvalidInput(
            fmt(_("unknown catalog {value!r}; valid: full, article"), value=catalog_name)
        )
    if top < 1:
        raise InvalidInput(fmt(_("--top must be at least 1 (got {value})"), value=top))
    if plot is not None and plot.suffix.lower() not in (".png", ".svg"):
        raise InvalidInput(fmt(_("--plot writes .png or .svg files (got {path})"), path=plot))
    if hub is not None or (
        model is not None and (model.endswith(".json") or Path(model).is_file())
    ):
        component |= {"arch": _model(model if hub is None else None, None, hub), "model": None}
    workload = build_workload(file, component, constraints)
    catalog = _catalog(prices, skypilot)
    if catalog_name == "article":
        from whichgpu.article import ARTICLE_SOURCE, article_gpu_ids

        catalog = catalog.restricted(article_gpu_ids(catalog), ARTICLE_SOURCE)
    base = catalog.resolve(baseline) if baseline else None
    result = run_recommend(catalog, workload, objective, base, today())
    if plot is not None:
        from whichgpu.render.plot import plot_recommendation

        plot_recommendation(result, plot)
    if export_format is not None:
        from whichgpu.export import export as export_pick

        sys.stdout.write(export_pick(catalog, result, export_format, job_name, run_command, image))
        return
    from whichgpu.render import recommend_out

    _emit(
        json_out,
        lambda: recommend_out.recommend_doc(result),
        lambda console: recommend_out.print_recommend(result, console, top, all_rows),
    )


@app.command(
    help=_("Pack inference services onto MIG instances: the plan, its commands and configs.")
)
def mig(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help=_("A service's model preset."))
    ] = None,
    params: Annotated[str | None, typer.Option(help=_("Or a generic size: 7B."))] = None,
    memory_gib: Annotated[
        float | None, typer.Option("--memory", help=_("Or the memory a replica needs, GiB."))
    ] = None,
    precision: Annotated[str | None, typer.Option(help=_("16-true, bf16-true…"))] = None,
    quant: Annotated[str | None, typer.Option(help=_("Weights: int8, int4, fp8…"))] = None,
    batch: Annotated[int | None, typer.Option(help=_("Concurrent sequences."))] = None,
    prompt: Annotated[int | None, typer.Option(help=_("Prompt tokens."))] = None,
    generate: Annotated[int | None, typer.Option(help=_("Generated tokens."))] = None,
    replicas: Annotated[int, typer.Option(help=_("Isolated copies of the service."))] = 1,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help=_("Services: a TOML/YAML file of [[services]].")),
    ] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help=_("Plan on this MIG GPU only."))] = None,
    profiles: Annotated[
        str | None,
        typer.Option(help=_("Check a mix of profiles on one --gpu: 1g.10gb,2g.20gb,3g.40gb.")),
    ] = None,
    market: Annotated[
        list[str] | None, typer.Option("--market", help=_("Markets to price in."))
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.mig import check_profiles, make_service, plan_mig

    catalog = _catalog(prices, skypilot)
    if profiles is not None:
        if gpu is None:
            raise InvalidInput(_("--profiles needs the --gpu they are for"))
        target = catalog.resolve(gpu)
        names = [p.strip() for p in profiles.split(",") if p.strip()]
        if not names:
            raise InvalidInput(_("--profiles needs at least one profile: 1g.10gb,3g.40gb"))
        chosen, why = check_profiles(catalog, target, names)
        from whichgpu.render import mig_out

        _emit(
            json_out,
            lambda: mig_out.mig_check_doc(target.id, chosen, why),
            lambda console: mig_out.print_mix(
                target.name, [p.profile for p in chosen], why, console
            ),
        )
        return
    raws = _service_inputs(file, model, params, memory_gib, precision, quant, batch, prompt,
                           generate, replicas)  # fmt: skip
    origin = str(file) if file is not None else ""
    services = [make_service(raw, i, origin) for i, raw in enumerate(raws)]
    target = catalog.resolve(gpu) if gpu else None
    from whichgpu.recommend.spec import DEFAULT_MARKETS, MARKETS, Where, parse_names

    markets = (
        parse_names(",".join(market), MARKETS, Where(), ("market",)) if market else DEFAULT_MARKETS
    )
    result = plan_mig(catalog, services, target, markets)
    from whichgpu.render import mig_out

    _emit(
        json_out,
        lambda: mig_out.mig_doc(result),
        lambda console: mig_out.print_mig(result, console),
    )


def _service_inputs(file: Path | None, model: str | None, params: str | None,
                    memory_gib: float | None, precision: str | None, quant: str | None,
                    batch: int | None, prompt: int | None, generate: int | None,
                    replicas: int) -> list[dict[str, Any]]:  # fmt: skip
    flags = {"model": model, "params": params, "memory_gib": memory_gib, "precision": precision,
             "quant": quant, "batch": batch, "prompt": prompt, "generate": generate}  # fmt: skip
    given = {k: v for k, v in flags.items() if v is not None}
    if file is None:
        if not {"model", "params", "memory_gib"} & given.keys():
            raise InvalidInput(_("give a service: --model, --params or --memory (or --file)"))
        return [{**given, "replicas": replicas}]
    if given:
        raise InvalidInput(_("--file describes the services; drop the service flags"))
    from whichgpu.recommend.spec import load_table_file

    raw = load_table_file(file)
    items = raw.get("services")
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        raise InvalidInput(fmt(_("{path}: give at least one [[services]] table"), path=file))
    return items


@app.command(
    help=_(
        "The recommended pick for a workload file as a SkyPilot task, a Kubernetes "
        "manifest or a Slurm batch script (same as recommend --export)."
    )
)
def export(
    export_format: Annotated[str, typer.Argument(help=_("skypilot, kubernetes or slurm."))],
    file: Annotated[
        Path, typer.Option("--file", "-f", help=_("The workload file (TOML or YAML)."))
    ],
    objective: Annotated[str, typer.Option(help=_("cost, time or value."))] = "cost",
    catalog_name: Annotated[
        str, typer.Option("--catalog", help=_("full, or article: its GPUs at its prices."))
    ] = "full",
    job_name: JobName = "whichgpu-job",
    run_command: RunCommand = "python train.py",
    image: Image = "nvcr.io/nvidia/pytorch:24.10-py3",
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    recommend(file=file, objective=objective, catalog_name=catalog_name,
              export_format=export_format, job_name=job_name, run_command=run_command,
              image=image, prices=prices, skypilot=skypilot)  # fmt: skip


@app.command(help=_("Start the web app and HTTP API (http://HOST:PORT/, API under /api/v1/)."))
def serve(
    host: Annotated[str, typer.Option(help=_("Address to listen on."))] = "127.0.0.1",
    port: Annotated[int, typer.Option(help=_("Port to listen on."))] = 8000,
) -> None:
    if not 0 < port < 65536:
        raise InvalidInput(fmt(_("--port must be from 1 to 65535 (got {port})"), port=port))
    from whichgpu.web import serve as run_server  # type: ignore[import-not-found,unused-ignore]

    run_server(host, port)


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"whichgpu: {_('error')}: {message}\n")
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; bad input is one line on stderr and exit code 2."""
    language, args = split_language(sys.argv[1:] if argv is None else argv)
    if language is not None:
        from whichgpu.i18n import LANGUAGES, normalize_language

        if normalize_language(language) is None:
            _fail(
                fmt(
                    _("unknown language {value!r}; valid: {valid}"),
                    value=language,
                    valid=", ".join(LANGUAGES),
                )
            )
        set_language(language)
    try:
        result = app(args=args, prog_name="whichgpu", standalone_mode=False)
    except WhichGPUError as error:
        _fail(error.message())
    except (typer.Exit, typer.Abort) as error:
        raise SystemExit(getattr(error, "exit_code", 1)) from None
    except Exception as error:
        # Click's usage errors (unknown option, missing argument) carry their exit code.
        exit_code = getattr(error, "exit_code", None)
        format_message = getattr(error, "format_message", None)
        if exit_code is None or format_message is None:
            raise
        hint = _("see 'whichgpu --help'")
        _fail(f"{format_message()} ({hint})", exit_code)
    if isinstance(result, int) and result:
        raise SystemExit(result)
