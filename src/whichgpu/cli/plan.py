"""Planning commands: ``recommend``, ``mig``, ``export``, ``serve``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from whichgpu.cli._app import (
    GenericSize,
    HubModel,
    Image,
    JobName,
    JsonFlag,
    ModelName,
    PriceFiles,
    RunCommand,
    SkypilotFiles,
    app,
    emit,
    model_arch,
    user_catalog,
)
from whichgpu.errors import InvalidInput
from whichgpu.i18n import _, fmt


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
    model: ModelName = None,
    params: GenericSize = None,
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
    from whichgpu.recommender import build_workload
    from whichgpu.recommender import recommend as run_recommend
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
        component |= {"arch": model_arch(model if hub is None else None, None, hub), "model": None}
    workload = build_workload(file, component, constraints)
    catalog = user_catalog(prices, skypilot)
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

    emit(
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
    from whichgpu.mig_planner import check_profiles, make_service, plan_mig

    catalog = user_catalog(prices, skypilot)
    if profiles is not None:
        if gpu is None:
            raise InvalidInput(_("--profiles needs the --gpu they are for"))
        target = catalog.resolve(gpu)
        names = [p.strip() for p in profiles.split(",") if p.strip()]
        if not names:
            raise InvalidInput(_("--profiles needs at least one profile: 1g.10gb,3g.40gb"))
        chosen, why = check_profiles(catalog, target, names)
        from whichgpu.render import mig_out

        emit(
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
    from whichgpu.recommender.spec import DEFAULT_MARKETS, MARKETS, Where, parse_names

    markets = (
        parse_names(",".join(market), MARKETS, Where(), ("market",)) if market else DEFAULT_MARKETS
    )
    result = plan_mig(catalog, services, target, markets)
    from whichgpu.render import mig_out

    emit(
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
    from whichgpu.recommender.spec import load_table_file

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
