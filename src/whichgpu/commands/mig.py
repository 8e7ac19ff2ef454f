"""``whichgpu mig``: services → a MIG plan on each MIG-capable GPU, the best one, and the
same services on whole smaller cards for comparison (cost and isolation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from whichgpu.catalog.records import GPU, MigProfile, Price
from whichgpu.catalog.store import Catalog
from whichgpu.errors import InvalidInput, Path, UnknownName
from whichgpu.estimate.mig_packing import MigPlan, Service, check_mix, pack
from whichgpu.estimate.parallel import usable_bytes
from whichgpu.inputs import parse
from whichgpu.inputs.mig_requests import MAX_MIG_REPLICAS, MigOptions, ServiceRequest
from whichgpu.inputs.requests import MAX_SERVICES
from whichgpu.models import resolve_gpu
from whichgpu.notes import Note, note
from whichgpu.units import BYTES_PER_GIB


@dataclass(frozen=True)
class ServiceSpec:
    service: Service
    profile: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class GpuOption:
    """One MIG GPU model: its plan and its price (the lowest dated listing in the markets,
    per GPU: :func:`~whichgpu.catalog.prices.cheapest_for`), with the listing."""

    gpu: GPU
    plan: MigPlan
    usd_per_h: float | None
    listing: Price | None = None

    @property
    def gpus(self) -> int:
        return len(self.plan.gpus)


@dataclass(frozen=True)
class CardOption:
    """The services on whole cards of a GPU without MIG, one card per replica, and the
    listing they are priced on."""

    gpu: GPU
    cards: int
    usd_per_h: float | None
    listing: Price | None = None


@dataclass(frozen=True)
class MigResult:
    services: tuple[ServiceSpec, ...]
    options: tuple[GpuOption, ...]
    pick: GpuOption | None
    cards: tuple[CardOption, ...]
    mix_check: Note | None = None


def make_service(
    raw: Mapping[str, Any], index: int = 0, path: Path = (), text: bool = False
) -> ServiceSpec:
    """A service from a mapping (a ``[[services]]`` table, a JSON body's, or the CLI's flags
    with ``text``): a model (memory from the inference estimator at its batch, prompt and
    generated tokens) or an explicit ``memory_gib``; ``replicas`` isolated copies;
    optionally a ``profile`` to use."""
    from whichgpu.estimate.memory import estimate_memory
    from whichgpu.inputs.workload_files import make_component
    from whichgpu.plan.jobs import model_job

    request: ServiceRequest = parse(ServiceRequest, raw, path, text)
    model = request.model or request.params
    name = request.name or model or f"service-{index + 1}"
    if request.memory_gib is not None:
        if model is not None:
            raise InvalidInput("service_model_and_memory", field=(*path, "memory_gib"))
        need = request.memory_gib
    else:
        fields = {
            k: getattr(request, k)
            for k in ("model", "params", "precision", "quant", "batch", "prompt", "generate")
        }
        fields["precision"] = fields["precision"] or "bf16-true"
        component = make_component({"kind": "inference", **fields}, path)
        arch, job = model_job(component)
        need = estimate_memory(arch, job).total_bytes / BYTES_PER_GIB
    return ServiceSpec(Service(name, need, request.replicas), request.profile, model)


def make_services(
    items: object, path: Path = ("services",), text: bool = False
) -> list[ServiceSpec]:
    """The services of a request: one to :data:`~whichgpu.inputs.requests.MAX_SERVICES` tables."""
    if not isinstance(items, list) or not items:
        raise InvalidInput("no_services", field=path)
    if len(items) > MAX_SERVICES:
        raise InvalidInput("too_many", field=path, n=MAX_SERVICES)
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidInput("not_a_table", field=(*path, i))
        out.append(make_service(item, i, (*path, i), text))
    return out


def check_request(
    catalog: Catalog, options: MigOptions
) -> tuple[GPU, list[MigProfile], Note | None]:
    """``options.profiles`` on ``options.gpu``: is that mix possible?"""
    if options.gpu is None:
        raise InvalidInput("profiles_need_gpu", field=("gpu",))
    target = resolve_gpu(catalog, options.gpu)
    if not options.profiles:
        raise InvalidInput("no_profiles", field=("profiles",))
    chosen, why = check_profiles(catalog, target, options.profiles)
    return target, chosen, why


def _price(catalog: Catalog, gpu_id: str, markets: Sequence[str], gpus: int) -> Price | None:
    """The cheapest dated offer (per GPU) that rents ``gpus`` of them (whole instances)."""
    from whichgpu.catalog.prices import cheapest_for

    return cheapest_for(catalog, gpu_id, gpus, markets)  # type: ignore[arg-type]


def unique_names(services: Sequence[ServiceSpec]) -> list[ServiceSpec]:
    """Services named alike (two unnamed copies of one model) get ``-2``, ``-3``…: names
    key the plan, its profiles and its Kubernetes resources."""
    seen: dict[str, int] = {}
    out = []
    for spec in services:
        name = spec.service.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            spec = replace(spec, service=replace(spec.service, name=f"{name}-{seen[name]}"))
        out.append(spec)
    return out


def plan_mig(
    catalog: Catalog,
    services: Sequence[ServiceSpec],
    gpu: GPU | None = None,
    markets: Sequence[str] = ("on-demand", "marketplace"),
) -> MigResult:
    """A plan on every MIG GPU (or ``gpu``), each with as few of that GPU as possible; the
    pick places every service for the least per hour, then with fewer GPUs and less memory
    left over. Whole cards of the GPUs without MIG are priced
    beside it: the same isolation (separate cards) without a MIG-capable GPU."""
    total = sum(spec.service.replicas for spec in services)
    if total > MAX_MIG_REPLICAS:
        raise InvalidInput(
            "too_many_replicas", field=("services",), n=MAX_MIG_REPLICAS, total=total
        )
    services = unique_names(services)

    # MIG GPUs whose profiles the catalog holds (the RTX PRO 6000's engine counts per
    # profile are not published in a source read: it is compared as whole cards)
    def plannable(g: GPU) -> bool:
        return g.has_mig and bool(catalog.mig_profiles(g.id))

    mig_gpus = [g for g in ([gpu] if gpu else catalog.gpus) if plannable(g)]
    if gpu is not None and not plannable(gpu):
        raise InvalidInput(
            "no_mig",
            field=("gpu",),
            gpu=gpu.name,
            gpus=", ".join(g.id for g in catalog.gpus if plannable(g)),
        )
    _check_profile_names(catalog, services, mig_gpus)
    options = []
    for candidate in mig_gpus:
        profiles = catalog.mig_profiles(candidate.id)
        explicit: dict[str, MigProfile] = {}
        refused: dict[str, Note] = {}
        for spec in services:
            if spec.profile is None:
                continue
            try:
                explicit[spec.service.name] = catalog.mig_profile(candidate.id, spec.profile)
            except UnknownName:
                if gpu is not None:
                    raise
                refused[spec.service.name] = note(
                    "mig_no_such_profile",
                    service=spec.service.name,
                    profile=spec.profile,
                    gpu=candidate.short_name,
                )
        plan = pack(candidate.id, profiles, [s.service for s in services], explicit, refused)
        price = _price(catalog, candidate.id, markets, max(len(plan.gpus), 1))
        per_gpu = None if price is None else price.price_usd_per_h
        options.append(GpuOption(candidate, plan, per_gpu, price))

    def rank(o: GpuOption) -> tuple[float, ...]:
        # each GPU model's plan already uses as few of its GPUs as it can, then the least
        # memory; between models the cheaper plan wins, one priced on a dated offer before
        # one priced on an undated one (as recommend ranks: a price without a date is a
        # guess), an unpriced one last
        inf = float("inf")
        cost = round(o.usd_per_h * o.gpus, 4) if o.usd_per_h is not None else inf
        undated = float(o.listing is not None and o.listing.as_of == "undated")
        return (len(o.plan.unplaced), float(cost == inf), undated, cost, o.gpus, o.plan.waste_gib)

    ordered = sorted(options, key=lambda o: (rank(o), o.gpu.id))
    pick = ordered[0] if ordered and not ordered[0].plan.unplaced else None
    cards = []
    replicas = [(s.service.memory_gib, s.service.replicas) for s in services]
    for card in catalog.gpus:
        if plannable(card):
            continue
        capacity = usable_bytes(card) / BYTES_PER_GIB  # as its driver reports it
        if all(need <= capacity for need, _n in replicas):
            count = sum(n for _need, n in replicas)
            price = _price(catalog, card.id, markets, count)
            usd_per_h = None if price is None else price.price_usd_per_h * count
            cards.append(CardOption(card, count, usd_per_h, price))

    def undated(c: CardOption) -> bool:
        return c.listing is not None and c.listing.as_of == "undated"

    cards.sort(key=lambda c: (c.usd_per_h is None, undated(c), c.usd_per_h or 0.0, c.gpu.id))
    return MigResult(tuple(services), tuple(ordered), pick, tuple(cards))


def _check_profile_names(
    catalog: Catalog, services: Sequence[ServiceSpec], gpus: Sequence[GPU]
) -> None:
    """A service's ``profile`` must name a profile of at least one GPU planned on: one that
    none has is a typo (refused with the closest names), not a service left unplaced on
    every GPU with an answer that exits 0. A profile some GPUs lack is a note on those."""
    from whichgpu.catalog.names import closest

    for index, spec in enumerate(services):
        if spec.profile is None:
            continue
        for gpu in gpus:
            try:
                catalog.mig_profile(gpu.id, spec.profile)
                break
            except UnknownName:
                if len(gpus) == 1:  # one GPU planned on: its own profiles, the closest
                    raise
                continue
        else:
            valid = sorted({p.profile for gpu in gpus for p in catalog.mig_profiles(gpu.id)})
            raise InvalidInput(
                "unknown_value",
                field=("services", index, "profile"),
                value=spec.profile,
                valid=", ".join(valid),
                hint=closest(spec.profile.lower(), valid) or "",
            )


def check_profiles(
    catalog: Catalog, gpu: GPU, names: Sequence[str]
) -> tuple[list[MigProfile], Note | None]:
    """The user's own mix of profiles on one ``gpu``: valid (None) or why not."""
    profiles = [catalog.mig_profile(gpu.id, name) for name in names]
    return profiles, check_mix(profiles)
