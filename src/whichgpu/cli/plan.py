"""Planning commands: ``recommend``, ``mig``, ``export``, ``serve``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from whichgpu.cli._app import (
    HubModel,
    Image,
    JobName,
    JsonFlag,
    PriceFiles,
    RunCommand,
    SkypilotFiles,
    app,
    emit,
    model_arch,
    names_a_file,
    user_catalog,
)
from whichgpu.cli.options import with_fields
from whichgpu.errors import InvalidInput, Ref
from whichgpu.i18n import _
from whichgpu.inputs.mig_requests import MigOptions, ServiceRequest
from whichgpu.inputs.requests import Component, Constraints, Ranking


@app.command(
    help=_("Which GPU, how many, how long, what cost: ranked options with reasons and warnings.")
)
@with_fields(Component, Constraints, Ranking, skip=("name",))
def recommend(
    fields: dict[str, Any],
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help=_("A workload file (TOML or YAML) with components.")),
    ] = None,
    hub: HubModel = None,
    top: Annotated[int, typer.Option(help=_("Rows to show."))] = 8,
    all_rows: Annotated[
        bool, typer.Option("--all", help=_("Every count and market, not the best per GPU."))
    ] = False,
    plot: Annotated[
        Path | None, typer.Option(help=_("Draw the charts to FILE.png or FILE.svg."))
    ] = None,
    export_format: Annotated[
        str | None,
        typer.Option(
            "--export", help=_("Print the pick as skypilot, kubernetes, slurm, dynamo or llm-d.")
        ),
    ] = None,
    job_name: JobName = "whichgpu-job",
    run_command: RunCommand = None,
    image: Image = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.catalog.userdata import today
    from whichgpu.commands.recommend import recommend as run_recommend
    from whichgpu.inputs import parse, take
    from whichgpu.inputs.workload_files import build_workload

    component, constraints = take(Component, fields), take(Constraints, fields)
    ranking: Ranking = parse(Ranking, take(Ranking, fields), text=True)
    if not 1 <= top <= 10**6:
        raise InvalidInput("out_of_range_int", field=("top",), low=1, high=10**6, value=top)
    if json_out and export_format is not None:
        raise InvalidInput("json_and_export", field=("json",))
    if plot is not None and plot.suffix.lower() not in (".png", ".svg"):
        raise InvalidInput("plot_format", field=("plot",), path=str(plot))
    if plot is not None:
        from whichgpu.errors import need_extra

        need_extra("plot", "--plot", "matplotlib")
    model = component["model"]
    if hub is not None or (model is not None and names_a_file(model)):
        component |= {"arch": model_arch(model if hub is None else None, None, hub), "model": None}
    workload = build_workload(file, component, constraints)
    catalog = user_catalog(prices, skypilot)
    if ranking.catalog == "article":
        from whichgpu.article import ARTICLE_SOURCE, article_gpu_ids

        catalog = catalog.restricted(article_gpu_ids(catalog), ARTICLE_SOURCE)
    from whichgpu.models import resolve_gpu

    base = resolve_gpu(catalog, ranking.baseline) if ranking.baseline else None
    result = run_recommend(catalog, workload, ranking.objective, base, today())
    if plot is not None:
        from whichgpu.render.plot import plot_recommendation

        plot_recommendation(result, plot)
    if export_format is not None:
        from whichgpu.commands.export import export as export_pick

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
@with_fields(ServiceRequest, MigOptions, skip=("name", "profile"))
def mig(
    fields: dict[str, Any],
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help=_("Services: a TOML/YAML file of [[services]].")),
    ] = None,
    json_out: JsonFlag = False,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    from whichgpu.commands.mig import check_request, make_services, plan_mig
    from whichgpu.inputs import parse, take

    options: MigOptions = parse(MigOptions, take(MigOptions, fields, remove=True), text=True)
    service = {k: v for k, v in fields.items() if v is not None}
    catalog = user_catalog(prices, skypilot)
    if options.profiles is not None:
        if service or file is not None:
            raise InvalidInput("services_and_profiles", field=("profiles",))
        target, chosen, why = check_request(catalog, options)
        from whichgpu.render import mig_out

        emit(
            json_out,
            lambda: mig_out.mig_check_doc(target.id, chosen, why),
            lambda console: mig_out.print_mix(
                target.name, [p.profile for p in chosen], why, console
            ),
        )
        if why is not None:  # a check that fails exits non-zero (scripts can test it)
            raise typer.Exit(1)
        return
    if file is None:
        if not {"model", "params", "memory_gib"} & service.keys():
            raise InvalidInput(
                "give_service",
                model=Ref(("model",)),
                params=Ref(("params",)),
                memory=Ref(("memory_gib",)),
                file=Ref(("file",)),
            )
        services = make_services([service], path=(), text=True)
    else:
        if service:
            raise InvalidInput(
                "file_and_service_flags", field=(next(iter(service)),), file=Ref(("file",))
            )
        from whichgpu.inputs.workload_files import load_table, located

        text, locate = load_table(file)
        with located(str(file), locate):
            if "services" not in text:
                raise InvalidInput("no_service_tables", field=("services",))
            services = make_services(text["services"])
    from whichgpu.models import resolve_gpu

    chosen_gpu = resolve_gpu(catalog, options.gpu) if options.gpu else None
    if file is None:
        result = plan_mig(catalog, services, chosen_gpu, options.markets)
    else:  # a service's profile that no GPU has is named at its line
        with located(str(file), locate):
            result = plan_mig(catalog, services, chosen_gpu, options.markets)
    from whichgpu.catalog.userdata import today
    from whichgpu.render import mig_out

    emit(
        json_out,
        lambda: mig_out.mig_doc(result, today()),
        lambda console: mig_out.print_mig(result, console),
    )


@app.command(
    help=_(
        "The recommended pick for a workload file as a SkyPilot task, a Kubernetes "
        "manifest, a Slurm batch script or an NVIDIA Dynamo deployment (same as recommend "
        "--export)."
    )
)
def export(
    export_format: Annotated[
        str, typer.Argument(help=_("skypilot, kubernetes, slurm, dynamo or llm-d."))
    ],
    file: Annotated[
        Path, typer.Option("--file", "-f", help=_("The workload file (TOML or YAML)."))
    ],
    objective: Annotated[str, typer.Option(help=_("cost, time or value."))] = "cost",
    catalog_name: Annotated[
        str, typer.Option("--catalog", help=_("full, or article: its three GPUs at its prices."))
    ] = "full",
    job_name: JobName = "whichgpu-job",
    run_command: RunCommand = None,
    image: Image = None,
    prices: PriceFiles = None,
    skypilot: SkypilotFiles = None,
) -> None:
    recommend(
        file=file,
        objective=objective,
        catalog=catalog_name,
        export_format=export_format,
        job_name=job_name,
        run_command=run_command,
        image=image,
        prices=prices,
        skypilot=skypilot,
    )


@app.command(help=_("Start the web app and HTTP API (http://HOST:PORT/, API under /api/v1/)."))
def serve(
    host: Annotated[str, typer.Option(help=_("Address to listen on."))] = "127.0.0.1",
    port: Annotated[int, typer.Option(help=_("Port to listen on."))] = 8000,
    workers: Annotated[
        int, typer.Option(help=_("Processes that compute the API's answers (one a core)."))
    ] = 1,
) -> None:
    if not 0 < port < 65536:
        raise InvalidInput("out_of_range_int", field=("port",), low=1, high=65535, value=port)
    if not 0 < workers <= 64:
        raise InvalidInput("out_of_range_int", field=("workers",), low=1, high=64, value=workers)
    from whichgpu.errors import need_extra

    need_extra("web", "whichgpu serve", "fastapi", "uvicorn", "jinja2", "multipart", "matplotlib")
    from whichgpu.web import serve as run_server  # type: ignore[import-not-found,unused-ignore]

    run_server(host, port, workers)
