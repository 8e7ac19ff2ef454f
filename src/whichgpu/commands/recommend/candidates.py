"""Candidates: every GPU × count × (whole card or MIG slice) × instance shape of the
catalog, each planned by :func:`whichgpu.plan.plan` and priced per market
(:mod:`whichgpu.estimate.cost`). Pure functions over plain data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whichgpu.catalog.prices import ANY_LINK, rents_as, shape_links, shape_range
from whichgpu.catalog.records import GPU
from whichgpu.estimate.parallel import gpu_counts
from whichgpu.frozen import evolve
from whichgpu.inputs.requests import Component, Constraints
from whichgpu.plan import Hardware

if TYPE_CHECKING:
    from whichgpu.catalog.store import Catalog


def has_capability(gpu: GPU, capability: str) -> bool:
    """``gpu`` has ``capability`` (:data:`whichgpu.catalog.filters.FEATURES`, the one list
    ``gpus --feature`` and ``--requires`` share); a KeyError for an unknown one."""
    from whichgpu.catalog.filters import FEATURES

    return FEATURES[capability](gpu)


def instance_shapes(catalog: Catalog, gpu: GPU, gpus: int, markets: tuple[str, ...]) -> list[int]:
    """GPUs per instance of the offers that rent ``gpus`` of ``gpu`` whole: one instance of
    ``gpus``, or several of a shape that divides it, joined by a network (never a slice of
    a bigger box: nobody rents one GPU of an 8-GPU instance). Marketplace hosts are separate
    machines: only one of them serves a candidate."""
    return sorted(
        {
            shape
            for price in catalog.prices_for(gpu.id, markets)  # type: ignore[arg-type]
            if (shape := rents_as(price, gpus)) is not None
        },
        reverse=True,
    )


def _rented(catalog: Catalog, hw: Hardware, constraints: Constraints) -> list[Hardware]:
    """``hw`` once per instance shape its GPUs can be rented as, and where that takes several
    instances, once per network their offers are sold with (unchanged when bought, or when
    no offer rents that many: the option is then unpriced, and says why)."""
    if constraints.mode == "buy":
        return [hw]
    out: list[Hardware] = []
    for k in instance_shapes(catalog, hw.gpu, hw.gpus, constraints.markets):
        shaped = evolve(hw, per_node=k)
        if shaped.node_gpus is None:
            out.append(shaped)
            continue
        links = shape_links(catalog, hw.gpu.id, constraints.markets, hw.gpus, k)  # type: ignore[arg-type]
        out.extend(evolve(shaped, link=link) for link in links)
    return out or [hw]


def hardware_for(
    catalog: Catalog, gpu: GPU, components: tuple[Component, ...], constraints: Constraints
) -> tuple[Hardware, ...]:
    """Whole-card counts 1, 2, 4, 8… up to ``max_gpus`` (per service × services), each once
    per instance shape it can be rented as, and for workloads that only serve models, one
    MIG slice per service of every profile: what the catalog sells, the same for every job
    that asks with these constraints, so listed once per catalog (:meth:`Catalog.derived`)."""
    services = max(c.services for c in components)
    serving_only = all(c.kind == "inference" for c in components)
    # what max_gpus decides: the counts, gpu_counts(max_gpus // services), and which MIG
    # plans fit under it (a plan takes at most one GPU a service)
    counts = len(gpu_counts(constraints.max_gpus // services))
    key = ("hardware_for", gpu.id, services, serving_only, constraints.mode,
           tuple(constraints.markets), counts, min(constraints.max_gpus, services))  # fmt: skip
    return catalog.derived(
        key, lambda: tuple(_hardware(catalog, gpu, services, serving_only, constraints))
    )


def _hardware(
    catalog: Catalog, gpu: GPU, services: int, serving_only: bool, constraints: Constraints
) -> list[Hardware]:
    whole = [
        Hardware(gpu, count, services) for count in gpu_counts(constraints.max_gpus // services)
    ]
    out = [rented for hw in whole for rented in _rented(catalog, hw, constraints)]
    if constraints.mode != "buy" and catalog.prices_for(gpu.id, constraints.markets):  # type: ignore[arg-type]
        # a count no offer rents is left out (it cannot be had), unless none can: then the
        # smallest stays, to say how the GPU is sold
        shaped = [hw for hw in out if hw.per_node is not None]
        out = shaped or out[:1]
    if gpu.has_mig and serving_only:
        profiles = getattr(catalog, "mig_profiles", None)
        for profile in profiles(gpu.id) if profiles else ():
            if profile.profile.endswith(("+me", "+me.all", "+gfx", "-me")):
                continue  # media extensions add decoders, not capacity
            hw = Hardware(gpu, 1, services, profile)
            if (
                profile.compute_slices < profile.gpu_compute_slices
                and hw.gpus <= constraints.max_gpus
            ):
                out.extend(_rented(catalog, hw, constraints))
    return out


def dated_floor_usd_per_h(catalog: Catalog, hw: Hardware, constraints: Constraints) -> float:
    """The least ``hw`` rents for an hour on a dated offer of ``constraints``' markets (the
    $/h its cheapest option is priced at: a market's lowest price for the shape, times the
    GPUs, as :func:`~whichgpu.commands.recommend.rank.evaluate` prices it); infinite where
    no dated offer rents it (an undated price ranks after every dated one)."""
    if hw.per_node is None or constraints.mode == "buy":
        return float("inf")
    link = ANY_LINK if hw.node_gpus is None else hw.link
    lows = [
        found.low_usd_per_h * hw.gpus
        for market in constraints.markets
        if (found := shape_range(catalog, hw.gpu.id, market, hw.gpus, hw.per_node, link))  # type: ignore[arg-type]
        is not None and found.low.as_of != "undated"
    ]  # fmt: skip
    return min(lows, default=float("inf"))
