"""``recommend`` output: the JSON document (language-neutral: codes and numbers) and the
terminal table with the pick, its reasons, warnings and assumptions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from whichgpu.commands.recommend.rank import Option, Recommendation
from whichgpu.i18n import _, fmt, format_decimal
from whichgpu.inputs.fields import format_cost, format_duration, format_rate
from whichgpu.notes import note_doc
from whichgpu.phrases import CLAUSE_SEPARATOR, localize
from whichgpu.render.chart_data import is_service, served_rps
from whichgpu.render.json_doc import SCHEMA_VERSION, job_configuration, serving_doc
from whichgpu.render.json_doc import round_sig as _round

if TYPE_CHECKING:
    from rich.console import Console

    from whichgpu.notes import Note
    from whichgpu.plan.run import Run


def _instance_doc(option: Option) -> dict[str, Any] | None:
    """The instances a rented option is priced as: type, GPUs each, how many, their price."""
    listing = option.listing
    if listing is None or listing.instance is None:
        return None
    return {
        "type": listing.instance,
        "provider": listing.provider,
        "region": listing.region,
        "region_count": listing.region_count,
        "gpus_per_instance": listing.gpus_per_instance,
        "instances": option.hardware.instances,
        "usd_per_h": _round(listing.instance_usd_per_h),
        **_network_doc(option),
    }


def _network_doc(option: Option) -> dict[str, Any]:
    """The network between an option's instances, where it spans several
    (:func:`~whichgpu.commands.recommend.options.between_instances`)."""
    from whichgpu.commands.recommend.options import between_instances

    between = between_instances(option)
    if between is None:
        return {"network": None, "network_gbit": None, "network_fabric": None}
    return {
        "network": between.network,
        "network_gbit": between.gbit,
        "network_fabric": between.fabric,
    }


def option_doc(option: Option) -> dict[str, Any]:
    first = option.runs[0] if option.runs else None
    return {
        "gpu": option.gpu.id,
        "count": option.gpus,
        "per_service_count": option.hardware.count,
        "services": option.hardware.services,
        "mig_profile": option.hardware.mig_profile,
        "market": option.market,
        "fits": option.fits,
        "feasible": option.feasible,
        "throughput": None
        if first is None or first.throughput is None
        else {
            "value": _round(first.throughput),
            "unit": first.unit,
            "low": _round(first.throughput_low),
            "high": _round(first.throughput_high),
        },
        "time_s": _round(option.time_s),
        "usd_per_h": _round(option.usd_per_h),
        "usd_per_h_high": _round(option.usd_per_h_high),
        "cost_usd": _round(option.cost_usd),
        "cost_usd_high": _round(option.cost_usd_high),
        "purchase_usd": _round(option.purchase_usd),
        "break_even_months": _round(option.break_even_months),
        "usd_per_gpu_h": None
        if option.usd_per_h is None or option.purchase_usd is not None
        else _round(option.usd_per_h / option.gpus),
        "price": None
        if option.price_source is None
        else {
            "provider": option.price_provider,
            "source": option.price_source,
            "as_of": option.price_as_of,
            "kind": None if option.listing is None else option.listing.kind,
        },
        "instance": _instance_doc(option),
        "sold_as": list(option.sold_as) or None,
        "score": _round(option.score),
        "pareto": option.pareto,
        "tied_with_pick": option.tied,
        "extrapolated": option.extrapolated,
        "components": [
            {
                "name": run.component.label,
                "kind": run.component.kind,
                "fits": run.fits,
                "needed_gib": _round(run.needed_gib),
                "capacity_gib": _round(run.capacity_gib),
                "strategy": run.strategy,
                "batch": run.batch,
                "checkpointing": run.checkpointing,
                "configuration": None
                if run.job is None or not run.job.training
                else job_configuration(run.job),
                "throughput": _round(run.throughput),
                "unit": run.unit,
                "time_s": _round(run.time_s),
                "bound": run.bound,
                "efficiency_provenance": run.provenance or None,
                "serving": None
                if run.serving is None
                else serving_doc(run.serving, option.usd_per_h),
            }
            for run in option.runs
        ],
        "blockers": [note_doc(b) for b in option.blockers],
    }


def recommend_doc(result: Recommendation) -> dict[str, Any]:
    pick = result.pick
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "recommend",
        "workload": result.workload.name or None,
        "objective": result.objective,
        "pick": None if pick is None else option_doc(pick),
        "options": [option_doc(o) for o in result.options],
        "reasons": [note_doc(n) for n in result.reasons],
        "warnings": [note_doc(n) for n in result.warnings],
        "assumptions": [note_doc(n) for n in result.assumptions],
        "infeasible": [note_doc(n) for n in result.infeasible],
        "baseline": None if result.baseline is None else option_doc(result.baseline),
        "unpriced": list(result.unpriced),
    }


def best_per_gpu(options: tuple[Option, ...] | list[Option]) -> list[Option]:
    """One row per card, in rank order: its best feasible option, or else the one nearest
    to feasible (it fits; fewest blockers; most GPUs tried), to show what stops it."""
    best: dict[str, Option] = {}
    for option in options:
        held = best.get(option.gpu.id)
        if held is None or (not held.feasible and _nearer(option, held)):
            best[option.gpu.id] = option
    order = {id(o): i for i, o in enumerate(options)}
    return sorted(best.values(), key=lambda o: order[id(o)])


def _nearer(option: Option, held: Option) -> bool:
    if option.feasible:
        return True
    key = (option.fits, -len(option.blockers), option.usd_per_h is not None, option.gpus)
    return key > (held.fits, -len(held.blockers), held.usd_per_h is not None, held.gpus)


def shown_options(
    result: Recommendation, every: bool = False, top: int = 8, feasible_limit: int | None = 8
) -> list[Option]:
    """The rows of the table: the best option per GPU (or every option), feasible ones first
    (at most ``feasible_limit``), then blocked ones while there are fewer than ``top`` rows;
    options that cannot hold the model are no options to list (``every`` shows them, and
    they are the rows where nothing holds it: the answer then says what would)."""
    rows = list(result.options) if every else best_per_gpu(result.options)
    feasible = [o for o in rows if o.feasible][:feasible_limit]
    blocked = [o for o in rows if not o.feasible]
    if not every and any(o.fits for o in blocked + feasible):
        blocked = [o for o in blocked if o.fits]
    return feasible + blocked[: max(0, top - len(feasible))]


def status_text(option: Option, result: Recommendation, pareto: str) -> str:
    """``pick``, the Pareto label, or why the option is blocked (its first two reasons);
    an option whose speed is extrapolated says so (it is ranked at its range's slow end), and
    one priced on an undated offer where others are dated (it is ranked after every dated
    one, whatever its price; where none is dated, the assumptions say so once)."""
    if option.feasible:
        if option is result.pick:
            label = _("pick")
        elif option.tied:
            label = _("≈ pick")
        else:
            label = pareto if option.pareto else ""
        flags = [label, _("extrapolated") if option.extrapolated else ""]
        if option.price_as_of == "undated" and any(
            o.feasible and o.price_as_of not in (None, "undated") for o in result.options
        ):  # (the options come dated first: this stops at the first)
            flags.append(_("undated price"))
        return _(CLAUSE_SEPARATOR).join(x for x in flags if x)
    return _(CLAUSE_SEPARATOR).join(b.render() for b in option.blockers[:2])


def hardware_cell(option: Option, sep: str = "\n") -> str:
    """The option's GPUs, and how they are rented where that is several small instances
    (:func:`~whichgpu.render.tables.instance_shape`): four 1-GPU VMs over Ethernet are not
    a 4-GPU node, and the row says so."""
    from whichgpu.commands.recommend.options import hardware_label
    from whichgpu.render.tables import instance_shape

    label = hardware_label(option, count_one=True)
    shape = instance_shape(option)
    return f"{label}{sep}({shape})" if shape else label


Rows = tuple[list[tuple[str, str, int]], list[list[str]], list[str], int]


def _style(option: Option, result: Recommendation) -> str:
    return "bold green" if option is result.pick else ("dim" if not option.feasible else "")


def job_rows(result: Recommendation, shown: Sequence[Option]) -> Rows:
    """A job's table: each option's cost and time, $/h, status, throughput and market; the
    status column (its index last) holds prose. A narrow terminal drops the market, the
    throughput and the $/h before the status: which row is the pick and what blocks the
    others is what the cost and time are read by (cheaper rows past the deadline read as
    options without it)."""
    columns = [
        ("#", "right", 1),
        (_("GPU"), "left", 1),
        (_("cost"), "right", 1),
        (_("time"), "right", 2),
        (_("$/h"), "right", 4),
        (_("status"), "left", 3),
        (_("throughput"), "right", 5),
        (_("market"), "left", 6),
    ]
    rows = []
    for i, option in enumerate(shown, 1):
        first = option.runs[0] if option.runs else None
        rate = (
            "—"
            if first is None or first.throughput is None
            else format_rate(first.throughput, first.unit)
        )
        rows.append([str(i), hardware_cell(option), format_cost(option.cost_usd),
                     format_duration(option.time_s), format_cost(option.usd_per_h),
                     status_text(option, result, _("Pareto")), rate,
                     localize(option.market) if option.market else "—"])  # fmt: skip
    return columns, rows, [_style(o, result) for o in shown], 5


def serving_rows(result: Recommendation, shown: Sequence[Option]) -> Rows:
    """A service's table (no job size: no cost or time to state): each option's $/h, its
    :func:`serving_figures`, and status."""
    columns = [
        ("#", "right", 1),
        (_("GPU"), "left", 1),
        (_("$/h"), "right", 1),
        (_("$/M tok"), "right", 5),
        (_("serves"), "right", 1),
        (_("TTFT"), "right", 4),
        (_("TPOT"), "right", 3),
        (_("engine"), "left", 6),
        (_("status"), "left", 2),
    ]
    rows = []
    for i, option in enumerate(shown, 1):
        figures = serving_figures(option)
        cells = ["—"] * 5 if figures is None else list(figures.values())
        rows.append([str(i), hardware_cell(option), format_cost(option.usd_per_h), *cells,
                     status_text(option, result, _("Pareto"))])  # fmt: skip
    return columns, rows, [_style(o, result) for o in shown], len(columns) - 1


def serving_figures(option: Option) -> dict[str, str] | None:
    """A served option's figures as its table shows them, in its columns' order (the
    terminal's and the web page's): cost per million output tokens at the demand, the
    requests/s served under the targets that the plan counts on (the slow end of its range
    where it rests on a factor nobody measured, which it is sized with:
    :func:`~whichgpu.estimate.latency_range.held_share`), TTFT and TPOT at the demand,
    engine and layout;
    None where no plan meets the targets."""

    served = served_rps(option)
    plan = option.runs[0].serving if option.runs else None
    if served is None or plan is None:
        return None
    per_million = plan.usd_per_million_tokens(option.usd_per_h)
    capacity = format_decimal(served, 1)  # what the plan counts on (chart_data.served_rps)
    return {
        "per_million": "—" if per_million is None else format_cost(per_million),
        "capacity": fmt(_("{rps} req/s"), rps=capacity),
        "ttft": f"{format_decimal(plan.operating.ttft_s * 1e3, 0)} ms",
        "tpot": f"{format_decimal(plan.operating.tpot_s * 1e3, 1)} ms",
        "engine": f"{plan.engine} {plan.disaggregated.label()}"
        if plan.disaggregated
        else f"{plan.engine} {plan.replicas}×{plan.gpus_per_replica}",
    }


def print_recommend(
    result: Recommendation, console: Console, top: int = 8, every: bool = False
) -> None:
    from rich.text import Text

    from whichgpu.render.tables import fitted_table

    shown = shown_options(result, every, top, top)
    title = result.workload.name or _("Recommendation")
    heading = fmt(_("{title} · objective: {objective}"), title=title, objective=_(result.objective))
    rows_of = serving_rows if is_service(result) else job_rows
    columns, rows, styles, prose = rows_of(result, shown)
    console.print(fitted_table(heading, columns, rows, console.width, frozenset({prose}), styles))
    if result.pick is None:
        console.print(Text(_("No option meets every constraint."), style="bold red"))
        bullets(console, "•", [n.render() for n in result.infeasible])
    else:
        pick = fmt(_("Pick: {option}"), option=hardware_cell(result.pick, " "))
        console.print(Text(pick, style="bold"))
        bullets(console, "✓", [n.render() for n in result.reasons])
        for run in result.pick.runs:  # the front a served pick was chosen on (issue 50)
            if run.serving is None or not run.serving.front:
                continue
            from whichgpu.render.estimate_out import front_lines  # a served pick's only

            front = front_lines(run.serving.front)
            if front:
                console.print(_("The front of these GPUs' layouts, output tokens/s a user "
                                "against a GPU:"))  # fmt: skip
                bullets(console, "·", front)
    warnings = [_folded(n, every) for n in result.warnings]
    if warnings:
        console.print(Text(_("Warnings"), style="bold yellow"))
        bullets(console, "!", warnings)
    console.print(Text(_("Assumptions"), style="dim"))
    bullets(console, "·", [n.render() for n in result.assumptions], "dim")
    answer = answer_lines(result)
    if answer:  # what a terminal leaves on screen last: the answer, in a few lines
        console.print(Text(_("Answer"), style="bold green"))
        bullets(console, "→", answer, "bold")


def bullets(console: Console, marker: str, lines: Sequence[str], style: str = "") -> None:
    """``lines`` as a list, each wrapped under its own text (a hanging indent), not under
    its marker; wrapped by display cells, as a terminal counts them (Japanese takes two)."""
    from rich.text import Text

    head = f"  {marker} "
    indent = " " * len(head)
    width = max(20, console.width - len(head))
    for line in lines:
        wrapped = Text(line).wrap(console, width, overflow="fold")
        for i, part in enumerate(wrapped):
            part.rstrip()
            console.print(Text(head if i == 0 else indent, style=style) + part,
                          style=style or None, soft_wrap=True)  # fmt: skip


def _folded(warning: Note, every: bool) -> str:
    """A warning as the answer shows it: the GPUs left unranked for want of an offer folded
    into their count unless every option is asked for (``--all`` lists them)."""
    if warning.code != "warn_unpriced" or every:
        return warning.render()
    count = len(str(warning.params.get("gpus", "")).split(", "))
    return fmt(_("Not ranked, no offer in {markets}: {n} GPUs ({flag} lists them)."),
               markets=warning.params.get("markets", ""), n=count, flag="--all")  # fmt: skip


def answer_lines(result: Recommendation) -> list[str]:
    """The pick in a few lines: the hardware and its offer, each component's job as it was
    understood (its size, precision and lengths) with its time and cost or its capacity,
    and the one warning that matters most (the first that is not a list of unranked GPUs)."""
    pick = result.pick
    if pick is None:
        return []
    offer = hardware_cell(pick, " ")
    if pick.usd_per_h is not None:
        dated = pick.price_as_of not in (None, "", "undated")
        seen = fmt(_(", seen {date}"), date=pick.price_as_of) if dated else _(", undated")
        offer += fmt(_(" · {provider}, {market} · {rate}/h{seen}"),
                     provider=pick.price_provider or "—", market=localize(pick.market or "—"),
                     rate=format_cost(pick.usd_per_h), seen=seen)  # fmt: skip
    lines = [offer, *(_job_line(run) for run in pick.runs)]
    if pick.cost_usd is not None:
        lines.append(fmt(_("Cost: {cost}"), cost=format_cost(pick.cost_usd)))
    first = next((w for w in result.warnings if w.code != "warn_unpriced"), None)
    if first is not None:
        lines.append("! " + first.render())
    return lines


def _job_line(run: Run) -> str:
    """One component as understood, and what it comes to on the pick."""
    component, job = run.component, run.job
    size = component.label
    if component.tokens is not None:
        size += fmt(_(", {n} tokens"), n=_compact(component.tokens))
    if component.images is not None:
        size += fmt(_(", {n} images"), n=_compact(component.images))
    if component.request_rate is not None:
        size += fmt(_(", {rate} requests/s"), rate=format_decimal(component.request_rate, 2))
    if job is not None:
        size += fmt(_(", {precision}"), precision=job.quant or job.precision)
        if job.training:
            size += fmt(_(", {seq} tokens a sequence"), seq=format_decimal(job.seq))
        elif job.prompt or job.generate:
            size += fmt(_(", {prompt} in / {out} out"), prompt=format_decimal(job.prompt),
                        out=format_decimal(job.generate))  # fmt: skip
            if job.shared_prefix:
                size += fmt(_(" ({shared} of them a shared prefix)"),
                            shared=format_decimal(job.shared_prefix))  # fmt: skip
            if job.speculative:
                size += fmt(_(", {method} speculative decoding ({k} drafted, {tau} tokens a step)"),
                            method=job.speculative, k=job.draft_tokens,
                            tau=format_decimal(job.acceptance, 2))  # fmt: skip
    if run.serving is not None and run.throughput is not None and component.tokens is None:
        plan = run.serving  # a service: its rate and latencies (a batch of tokens: its time)
        capacity = plan.served_rps
        return size + fmt(
            _(": serves up to {rps} requests/s; at the demand, {ttft} ms to the first token "
              "and {tpot} ms a token"),
            rps=format_decimal(capacity, 2), ttft=format_decimal(plan.operating.ttft_s * 1e3, 0),
            tpot=format_decimal(plan.operating.tpot_s * 1e3, 1),
        )  # fmt: skip
    if run.time_s is None or component.hours is not None:
        return size
    slow = run.time_high_s
    held = ""
    if slow and slow > run.time_s * 1.005:  # what a deadline is held to
        held = fmt(_(" (up to {time})"), time=format_duration(slow))
    return size + fmt(_(": {time}{held}"), time=format_duration(run.time_s), held=held)


def _compact(count: float) -> str:
    """A job's size as people say it: 5B, 200M, 12,000."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if count >= scale:
            return format_decimal(count / scale, 0 if count % scale == 0 else 1) + suffix
    return format_decimal(count, 0)
