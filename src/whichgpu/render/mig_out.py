"""``mig`` output: the plan as a table and slot map, the ``nvidia-smi`` commands that create
it, an NVIDIA ``mig-parted`` config, and the Kubernetes resource each service requests."""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import TYPE_CHECKING, Any

from whichgpu.catalog.records import MigProfile, Price
from whichgpu.commands.mig import GpuOption, MigResult
from whichgpu.estimate.mig_packing import GpuPlan, MigPlan
from whichgpu.i18n import _, fmt, format_decimal
from whichgpu.inputs.fields import format_cost
from whichgpu.notes import Note, count_label, render
from whichgpu.render.json_doc import SCHEMA_VERSION, price_doc

if TYPE_CHECKING:
    from rich.console import Console


def slot_map(gpu: GpuPlan) -> str:
    """The 8 memory slots as ``[1g 1g 2g── 3g──────]``-style cells, one per slot."""
    cells = ["·"] * 8
    for inst in gpu.instances:
        for slot in inst.slots:
            cells[slot] = inst.profile.profile.split(".")[0]
    return "[" + " ".join(f"{c:>2}" for c in cells) + "]"


def smi_commands(plan: MigPlan) -> list[str]:
    """``nvidia-smi`` commands: enable MIG, then create each GPU's instances (GPU and
    compute instance, ``-C``), larger first as the placement search placed them."""
    out = [f"sudo nvidia-smi -i {','.join(str(g.index) for g in plan.gpus)} -mig 1"]
    for gpu in plan.gpus:
        ordered = sorted(gpu.instances, key=lambda i: (-i.profile.memory_slices, i.start))
        profiles = ",".join(i.profile.profile for i in ordered)
        out.append(f"sudo nvidia-smi mig -i {gpu.index} -cgi {profiles} -C")
    return out


def mig_parted_config(plan: MigPlan, name: str = "whichgpu") -> str:
    """An NVIDIA mig-parted config (``version: v1``, ``mig-configs``) with one entry per
    distinct GPU layout; apply with ``nvidia-mig-parted apply -f FILE -c whichgpu``."""
    import yaml

    layouts: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for gpu in plan.gpus:
        counts = tuple(sorted(Counter(i.profile.profile for i in gpu.instances).items()))
        layouts.setdefault(counts, []).append(gpu.index)
    entries = [
        {"devices": devices, "mig-enabled": True, "mig-devices": dict(counts)}
        for counts, devices in layouts.items()
    ]
    return yaml.safe_dump({"version": "v1", "mig-configs": {name: entries}}, sort_keys=False)


def k8s_resources(plan: MigPlan) -> dict[str, dict[str, int]]:
    """Per service, the extended resource the NVIDIA device plugin (``mixed`` strategy)
    advertises for its MIG profile: ``nvidia.com/mig-1g.10gb: 1`` per replica."""
    out: dict[str, dict[str, int]] = {}
    for gpu in plan.gpus:
        for inst in gpu.instances:
            service = inst.service.split("#")[0]
            key = f"nvidia.com/mig-{inst.profile.profile}"
            out.setdefault(service, {})
            out[service][key] = 1
    return out


def mig_check_doc(gpu_id: str, profiles: list[MigProfile], why: Note | None) -> dict[str, Any]:
    """``mig --profiles --json``: whether a mix of profiles fits one GPU, and why not."""
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "mig-check",
        "gpu": gpu_id,
        "profiles": [p.profile for p in profiles],
        "valid": why is None,
        "reason": None
        if why is None
        else {"code": why.code, "params": dict(why.params), "text": render(why)},
    }


def mig_doc(result: MigResult, today: date) -> dict[str, Any]:
    """The MIG plans as JSON: the pick with its commands and configs, every GPU's plan and
    the whole cards, each priced with the listing it is priced on (as ``show`` lists them:
    :func:`~whichgpu.render.json_doc.price_doc`, its age against ``today``)."""

    def listing(price: Price | None) -> dict[str, Any] | None:  # the offer it is priced on
        return None if price is None else price_doc(price, today)

    def plan_doc(plan: MigPlan) -> dict[str, Any]:
        return {
            "gpus": [
                {
                    "index": g.index,
                    "instances": [
                        {
                            "service": i.service,
                            "profile": i.profile.profile,
                            "start": i.start,
                            "memory_slices": i.profile.memory_slices,
                            "compute_slices": i.profile.compute_slices,
                        }
                        for i in g.instances
                    ],
                }
                for g in plan.gpus
            ],
            "unplaced": [
                {"service": s, "code": n.code, "params": dict(n.params)} for s, n in plan.unplaced
            ],
            "needed_gib": round(plan.needed_gib, 2),
            "allotted_gib": round(plan.allotted_gib, 2),
        }

    pick = result.pick
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "mig",
        "services": [
            {
                "name": s.service.name,
                "memory_gib": round(s.service.memory_gib, 2),
                "replicas": s.service.replicas,
                "profile": s.profile,
                "model": s.model,
            }
            for s in result.services
        ],
        "pick": None
        if pick is None
        else {
            "gpu": pick.gpu.id,
            "gpus": pick.gpus,
            "usd_per_h": None if pick.usd_per_h is None else round(pick.usd_per_h * pick.gpus, 4),
            "price": listing(pick.listing),
            "plan": plan_doc(pick.plan),
            "commands": smi_commands(pick.plan),
            "mig_parted": mig_parted_config(pick.plan),
            "kubernetes": k8s_resources(pick.plan),
        },
        "options": [
            {
                "gpu": o.gpu.id,
                "gpus": o.gpus,
                "usd_per_h": None
                if o.usd_per_h is None or not o.gpus
                else round(o.usd_per_h * o.gpus, 4),
                "price": listing(o.listing),
                "plan": plan_doc(o.plan),
            }
            for o in result.options
        ],
        "whole_cards": [
            {
                "gpu": c.gpu.id,
                "cards": c.cards,
                "usd_per_h": None if c.usd_per_h is None else round(c.usd_per_h, 4),
                "price": listing(c.listing),
            }
            for c in result.cards
        ],
    }


def plan_cost(usd_per_h: float | None, listing: Price | None, per_hour: bool = False) -> str:
    """A plan's or a whole-card line's price as shown (the CLI and the web page): ``undated``
    after one read from a listing without a date, which ranks after the dated ones."""
    cost = format_cost(usd_per_h)
    if usd_per_h is None:
        return cost
    if per_hour:
        cost = f"{cost}/h"
    if listing is not None and listing.as_of == "undated":
        cost = fmt(_("{cost}, undated"), cost=cost)
    return cost


def offer_line(pick: GpuOption) -> str | None:
    """The offer the pick is priced on: its $/h a GPU, seller, market and date."""
    if pick.listing is None or pick.usd_per_h is None:
        return None
    seen = pick.listing.as_of if pick.listing.as_of != "undated" else _("undated")
    return fmt(_("{usd_per_h}/h a GPU from {provider} ({market}), seen {seen}"),
               usd_per_h=format_cost(pick.usd_per_h), provider=pick.listing.provider,
               market=_(pick.listing.market), seen=seen)  # fmt: skip


def print_mig(result: MigResult, console: Console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=_("MIG plans"), title_justify="left", box=box.SIMPLE_HEAD)
    for header in (_("GPU"), _("GPUs"), _("$/h"), _("memory used"), _("unplaced")):
        table.add_column(header)
    for o in result.options:
        cost = plan_cost(None if o.usd_per_h is None or not o.gpus else o.usd_per_h * o.gpus,
                         o.listing)  # fmt: skip
        used = (
            f"{format_decimal(o.plan.needed_gib, 1)} / {format_decimal(o.plan.allotted_gib, 1)} GiB"
        )
        table.add_row(
            o.gpu.short_name,
            str(o.gpus),
            cost,
            used,
            str(len(o.plan.unplaced)) or "0",
            style="bold green" if o is result.pick else "",
        )
    console.print(table)
    pick = result.pick
    if pick is None:
        console.print(Text(_("No MIG GPU places every service."), style="bold red"))
        # the reasons on the GPU with the most memory (its largest profile is the largest)
        roomiest = sorted(result.options, key=lambda o: (-o.gpu.memory_gib, o.gpu.id))[:1]
        for option in roomiest:
            for service, why in option.plan.unplaced:
                console.print(f"  • {service}: {why.render()}")
    else:
        console.print(
            Text(fmt(_("Plan: {gpus} × {gpu}"), gpus=pick.gpus, gpu=pick.gpu.name), style="bold")
        )
        if (offer := offer_line(pick)) is not None:  # the offer it is priced on
            console.print(f"  {offer}", markup=False)
        for gpu in pick.plan.gpus:  # the slot map, then one instance a line
            console.print(f"  GPU {gpu.index} {slot_map(gpu)}", markup=False)
            for i in gpu.instances:
                console.print(
                    f"    {i.service} → {i.profile.profile} @{i.start} "
                    f"({format_decimal(i.profile.memory_gib, 1)} GiB)",
                    markup=False,
                )
        console.print(Text(_("Commands"), style="bold"))
        for line in smi_commands(pick.plan):  # never wrapped: copied and pasted whole
            console.print(f"  {line}", markup=False, soft_wrap=True)
        console.print(Text(_("mig-parted config"), style="bold"))
        console.print(mig_parted_config(pick.plan).rstrip(), markup=False)
        console.print(Text(_("Kubernetes requests (device plugin, mixed strategy)"), style="bold"))
        for service, resources in k8s_resources(pick.plan).items():
            items = ", ".join(f"{k}: {v}" for k, v in resources.items())
            console.print(f"  {service}: {items}", markup=False)
    if result.cards:
        console.print(Text(_("The same services on whole cards (one per replica)"), style="bold"))
        for card in result.cards[:5]:
            cost = "—" if card.usd_per_h is None else plan_cost(card.usd_per_h, card.listing, True)
            console.print(f"  {count_label(card.cards, card.gpu.short_name, True)}: {cost}")
        console.print(
            Text(
                _(
                    "MIG instances are isolated in hardware (SMs, L2, memory and its bandwidth); "
                    "separate cards are isolated too, at one card per replica."
                ),
                style="dim",
            )
        )


def print_mix(gpu_name: str, names: list[str], why: Note | None, console: Console) -> None:
    from rich.text import Text

    if why is None:
        text = fmt(_("Valid on one {gpu}: {mix}"), gpu=gpu_name, mix=", ".join(names))
        console.print(Text(text, style="bold green"))
    else:
        text = fmt(_("Refused on one {gpu}: {why}"), gpu=gpu_name, why=why.render())
        console.print(Text(text, style="bold red"))
