"""The catalog: every table, cross-checked, with lookups. Immutable; overrides return copies."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, TypeVar

from whichgpu.catalog import loader
from whichgpu.catalog.names import build_index, resolve_name
from whichgpu.catalog.records import (
    GPU,
    GPU_SPEC_FIELDS,
    Alias,
    ArticleFigure,
    Benchmark,
    CapacityClaim,
    Claim,
    FieldSource,
    InstanceNetwork,
    Market,
    MigProfile,
    PerfClaim,
    Price,
    PurchasePrice,
    Record,
    Source,
)
from whichgpu.errors import CatalogError, InvalidInput
from whichgpu.i18n import _, fmt

T = TypeVar("T")

FILES = {
    "gpus": "gpus.csv",
    "sources": "sources.csv",
    "field_sources": "gpu_field_sources.csv",
    "aliases": "aliases.csv",
    "prices": "prices.csv",
    "purchase_prices": "purchase_prices.csv",
    "instance_networks": "instance_networks.csv",
    "article_figures": "article_figures.csv",
    "claims": "claims.csv",
    "capacity_claims": "capacity_claims.csv",
    "benchmarks": "benchmarks.csv",
    "perf_claims": "perf_claims.csv",
    "mig_profiles": "mig_profiles.csv",
}


def data_path(name: str) -> str:
    """How errors name a shipped table: ``catalog/data/gpus.csv``."""
    return f"catalog/data/{FILES[name]}"


@dataclass(frozen=True)
class Citation:
    """Where one figure comes from: its source and, if it was worked out, how."""

    source: Source
    as_of: str
    note: str | None = None


#: Values :meth:`Catalog.derived` keeps per catalog, at most (the oldest dropped past it):
#: what requests ask varies (counts, markets), the memory a server holds must not
MAX_DERIVED = 8192
_MISSING: Any = object()


@dataclass(frozen=True)
class Catalog:
    """GPUs, their sources, prices and the article's figures, validated together."""

    gpus: tuple[GPU, ...]
    sources: tuple[Source, ...]
    field_sources: tuple[FieldSource, ...] = ()
    aliases: tuple[Alias, ...] = ()
    prices: tuple[Price, ...] = ()
    purchase_prices: tuple[PurchasePrice, ...] = ()
    #: The network each instance type is sold with (:meth:`network_of`)
    instance_networks: tuple[InstanceNetwork, ...] = ()
    article_figures: tuple[ArticleFigure, ...] = ()
    claims: tuple[Claim, ...] = ()
    capacity_claims: tuple[CapacityClaim, ...] = ()
    perf_claims: tuple[PerfClaim, ...] = ()
    #: Every GPU's MIG profiles; :meth:`mig_profiles` gives one GPU's.
    all_mig_profiles: tuple[MigProfile, ...] = ()
    #: Rank on claims as well as offers: the article's scenario prices on its own ranges.
    rank_claims: bool = False
    #: The price snapshot in use (``whichgpu prices update``): its date and its providers
    price_snapshot: tuple[str, tuple[str, ...]] | None = None
    #: The offers each GPU had before the user's own prices replaced some
    #: (:meth:`with_prices`): a family name (``a100``) keeps reading as the variant it read
    #: as when those prices were resolved, however few offers the user's leave it
    family_offers: tuple[tuple[str, int], ...] | None = None
    _by_id: dict[str, GPU] = field(init=False, repr=False, compare=False)
    _mig: dict[str, tuple[MigProfile, ...]] = field(init=False, repr=False, compare=False)
    _prices: dict[str, tuple[Price, ...]] = field(init=False, repr=False, compare=False)
    _sources: dict[str, Source] = field(init=False, repr=False, compare=False)
    _cited: dict[tuple[str, str], FieldSource] = field(init=False, repr=False, compare=False)
    _networks: dict[tuple[str, str], InstanceNetwork] = field(init=False, repr=False, compare=False)
    _indexes: dict[str, dict[str, tuple[str, ...]]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    _derived: dict[Hashable, Any] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {gpu.id: gpu for gpu in self.gpus})
        object.__setattr__(self, "_sources", {source.id: source for source in self.sources})
        object.__setattr__(
            self, "_cited", {(cite.gpu, cite.field): cite for cite in self.field_sources}
        )
        object.__setattr__(self, "_indexes", {})
        object.__setattr__(self, "_derived", {})
        object.__setattr__(
            self, "_networks", {(n.provider, n.instance): n for n in self.instance_networks}
        )
        mig: dict[str, list[MigProfile]] = {}
        for profile in self.all_mig_profiles:
            mig.setdefault(profile.gpu, []).append(profile)
        object.__setattr__(self, "_mig", {gpu_id: tuple(rows) for gpu_id, rows in mig.items()})
        by_gpu: dict[str, list[Price]] = {}
        for price in self.prices:
            by_gpu.setdefault(price.gpu, []).append(price)
        object.__setattr__(self, "_prices", {gpu_id: tuple(r) for gpu_id, r in by_gpu.items()})

    @property
    def benchmarks(self) -> tuple[Benchmark, ...]:
        """The published measurements the throughput model is fitted on
        (:func:`shipped_benchmarks`; read on first use: no answer reads them, the fitted
        efficiencies are their summary)."""
        return shipped_benchmarks()

    # lookups -------------------------------------------------------------------------
    def gpu(self, gpu_id: str) -> GPU:
        return self._by_id[gpu_id]

    def source(self, source_id: str) -> Source | None:
        return self._sources.get(source_id)

    def resolve(self, name: str, scope: str = "user") -> GPU:
        """The GPU a user's name denotes (see :mod:`whichgpu.catalog.names`); a family name
        (``h100``, ``a100``, ``v100``) the variant most offers rent, the choice recorded
        (:func:`~whichgpu.catalog.names.say_family_choice`) for the answer to say."""
        from whichgpu.catalog.names import normalize

        index = self._index(scope)
        variants = self._families().get(normalize(name))
        if variants and normalize(name) not in index:
            return self._by_id[self._family_variant(name, variants)]
        stand_in = self._stand_ins().get(normalize(name))
        if stand_in and normalize(name) not in index:
            from whichgpu.catalog.names import FamilyChoice, say_family_choice

            say_family_choice(FamilyChoice(name, stand_in[0], (), 0, 0, variant=True))
            return self._by_id[stand_in[0]]
        return self._by_id[resolve_name(name, index, self._by_id)]

    def _stand_ins(self) -> dict[str, tuple[str, ...]]:
        """Variants with no row of their own (aliases of scope ``variant``) to the GPU they
        are read as."""
        return self._scoped("variant")

    def _families(self) -> dict[str, tuple[str, ...]]:
        """Family names (aliases of scope ``family``) to their variants in this catalog."""
        return self._scoped("family")

    def _scoped(self, scope: str) -> dict[str, tuple[str, ...]]:
        """The names of aliases of ``scope`` to the GPUs of this catalog they name."""
        key = f"@{scope}"
        if key not in self._indexes:
            found = build_index((a.alias, a.gpu) for a in self.aliases if a.scope == scope)
            self._indexes[key] = {
                k: tuple(i for i in ids if i in self._by_id) for k, ids in found.items()
            }
        return self._indexes[key]

    def _family_variant(self, typed: str, variants: tuple[str, ...]) -> str:
        """The variant of a family most offers rent (the first listed on a tie), said."""
        from whichgpu.catalog.names import FamilyChoice, say_family_choice

        held = dict(self.family_offers or ())
        offers = {v: held[v] if v in held else self._offers_of(v) for v in variants}
        chosen = max(variants, key=lambda v: offers[v])
        others = tuple(v for v in variants if v != chosen)
        if others:
            say_family_choice(FamilyChoice(typed, chosen, others, offers[chosen],
                                           sum(offers.values())))  # fmt: skip
        return chosen

    def _offers_of(self, gpu_id: str) -> int:
        return sum(p.kind == "offer" for p in self.listings_for(gpu_id))

    def citation(self, gpu_id: str, field_name: str) -> Citation:
        """The source of ``gpu_id``'s ``field_name`` figure."""
        gpu = self._by_id[gpu_id]
        cite = self._cited.get((gpu_id, field_name))
        if cite is None:
            return Citation(self._sources[gpu.source], gpu.as_of)
        source = self._sources[cite.source]
        return Citation(source, source.published, cite.note)

    def prices_for(self, gpu_id: str, markets: Iterable[Market] | None = None) -> list[Price]:
        """The prices a ranking may use for ``gpu_id``: offers, or the claims too in a
        scenario that prices on claims (``--catalog article``)."""
        return [
            p for p in self.listings_for(gpu_id, markets) if p.kind == "offer" or self.rank_claims
        ]

    def listings_for(self, gpu_id: str, markets: Iterable[Market] | None = None) -> list[Price]:
        """Every price row of ``gpu_id``, offers and claims (what ``show`` and ``compare``
        list)."""
        rows = self._prices.get(gpu_id, ())
        if markets is None:
            return list(rows)
        allowed = set(markets)
        return [p for p in rows if p.market in allowed]

    def derived(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, once per catalog and ``key``: a value that depends on this catalog
        alone (:func:`~whichgpu.catalog.prices.shape_range`, which every request's
        candidates ask for by the hundred)."""
        derived = self._derived
        value: T = derived.get(key, _MISSING)
        if value is _MISSING:
            value = compute()
            if len(derived) >= MAX_DERIVED:
                # the oldest goes: a bound, whatever is asked; the server's threads share
                # the catalog, and another may have taken it (or be adding) meanwhile
                with suppress(KeyError, RuntimeError, StopIteration):
                    del derived[next(iter(derived))]
            derived[key] = value
        return value

    def network_of(self, price: Price) -> InstanceNetwork | None:
        """The network ``price``'s instance type is sold with between instances, where the
        catalog cites one (:class:`~whichgpu.catalog.records.InstanceNetwork`)."""
        if price.instance is None:
            return None
        return self._networks.get((price.provider, price.instance))

    def purchase_for(self, gpu_id: str) -> list[PurchasePrice]:
        """Every purchase price of ``gpu_id``, offers and claims (what ``show`` lists)."""
        return [p for p in self.purchase_prices if p.gpu == gpu_id]

    def purchases_current(self, gpu_id: str) -> list[PurchasePrice]:
        """``gpu_id``'s purchase prices as they stand: of each kind and condition (new,
        used) the latest dated ones, an older or undated figure superseded by a later
        observation (a 2022 launch price is not today's); what compare shows."""
        rows = self.purchase_for(gpu_id)
        latest: dict[tuple[str, str], str] = {}
        for p in rows:
            if p.as_of != "undated":
                key = (p.kind, p.condition)
                latest[key] = max(latest.get(key, ""), p.as_of)
        return [p for p in rows if latest.get((p.kind, p.condition), p.as_of) == p.as_of]

    def purchases_ranked(self, gpu_id: str) -> list[PurchasePrice]:
        """The purchase prices a ranking may use: the current offers
        (:meth:`purchases_current`), or the claims too in a scenario that prices on claims
        (``--catalog article``), as :meth:`prices_for`."""
        return [p for p in self.purchases_current(gpu_id)
                if p.kind == "offer" or self.rank_claims]  # fmt: skip

    def mig_profiles(self, gpu_id: str) -> tuple[MigProfile, ...]:
        """``gpu_id``'s MIG profiles, smallest first as NVIDIA lists them; empty without MIG."""
        self._by_id[gpu_id]  # an unknown id is a KeyError, as in :meth:`gpu`
        return self._mig.get(gpu_id, ())

    def mig_profile(self, gpu_id: str, name: str) -> MigProfile:
        """``gpu_id``'s MIG profile called ``name``: ``1g.10gb``, ``MIG 1g.10gb``, ``1G.10GB+ME``.

        Raises :class:`~whichgpu.errors.UnknownName` with the closest profile names, or
        :class:`~whichgpu.errors.InvalidInput` for a GPU without MIG.
        """
        gpu = self._by_id[gpu_id]
        profiles = self.mig_profiles(gpu_id)
        if not profiles:
            raise InvalidInput("no_mig", field=("gpu",), gpu=gpu.name, gpus=", ".join(self._mig))
        by_name = {p.profile: p for p in profiles}
        pairs = [(p.profile, p.profile) for p in profiles]
        index = build_index(pairs + [(f"MIG {profile}", profile) for profile, _id in pairs])
        kind = fmt(_("MIG profile of the {gpu}"), gpu=gpu.short_name)
        return by_name[resolve_name(name, index, by_name, kind)]

    # derived catalogs ----------------------------------------------------------------
    def with_prices(self, extra: Sequence[Price], extra_sources: Sequence[Source] = ()) -> Catalog:
        """A catalog where ``extra`` prices replace the shipped ones for the same GPU and market.

        A user who prices the A6000 on-demand says what they pay: the shipped on-demand rows
        for the A6000 no longer apply. Other GPUs and markets keep their shipped prices.
        """
        overridden = {(p.gpu, p.market) for p in extra}
        kept = tuple(p for p in self.prices if (p.gpu, p.market) not in overridden)
        known = {s.id for s in self.sources}
        sources = self.sources + tuple(s for s in extra_sources if s.id not in known)
        # the user's prices were resolved against this catalog's family variants: keep them
        offers = self.family_offers or tuple((g.id, self._offers_of(g.id)) for g in self.gpus)
        return replace(self, prices=kept + tuple(extra), sources=sources, family_offers=offers)

    def with_offers(self, extra: Sequence[Price], extra_sources: Sequence[Source] = ()) -> Catalog:
        """A catalog where ``extra`` offers (a fresher price catalog) replace the shipped
        offers of the same providers; claims and other providers stay."""
        providers = {p.provider for p in extra}
        kept = tuple(p for p in self.prices if p.kind != "offer" or p.provider not in providers)
        known = {s.id for s in self.sources}
        sources = self.sources + tuple(s for s in extra_sources if s.id not in known)
        return replace(self, prices=kept + tuple(extra), sources=sources)

    def restricted(self, gpu_ids: Iterable[str], price_source: str | None = None) -> Catalog:
        """A catalog of only ``gpu_ids`` (and, given ``price_source``, only its prices):
        ``recommend --catalog article`` is the article's three GPUs at the article's prices."""
        keep = set(gpu_ids)

        def priced(source: str) -> bool:
            return price_source is None or source == price_source

        return replace(
            self,
            gpus=tuple(g for g in self.gpus if g.id in keep),
            aliases=tuple(a for a in self.aliases if a.gpu in keep),
            prices=tuple(p for p in self.prices if p.gpu in keep and priced(p.source)),
            purchase_prices=tuple(
                p for p in self.purchase_prices if p.gpu in keep and priced(p.source)
            ),
            all_mig_profiles=tuple(m for m in self.all_mig_profiles if m.gpu in keep),
            rank_claims=price_source is not None,
        )

    def _index(self, scope: str) -> dict[str, tuple[str, ...]]:
        """Normalised names to ids: ids, names and user aliases, then the scope's own
        aliases, which win where they differ (SkyPilot's bare "A100" is the 40GB)."""
        if scope not in self._indexes:
            pairs = [(g.id, g.id) for g in self.gpus] + [(g.name, g.id) for g in self.gpus]
            pairs += [(a.alias, a.gpu) for a in self.aliases if a.scope == "user"]
            index = build_index(pairs)
            if scope != "user":
                index |= build_index((a.alias, a.gpu) for a in self.aliases if a.scope == scope)
            self._indexes[scope] = index
        return self._indexes[scope]


def check_references(tables: dict[str, list[loader.Row[Record]]]) -> None:
    """Duplicate ids and dangling references, reported with the file and row (of the tables
    given: ``benchmarks`` is checked apart, on first use)."""

    def ids(name: str, key: str) -> set[str]:
        seen: dict[str, int] = {}
        for row, record in tables.get(name, ()):
            value = getattr(record, key)
            if value in seen:
                raise CatalogError(
                    data_path(name),
                    row,
                    fmt(
                        _("duplicate {key} {value!r} (first on row {first})"),
                        key=key,
                        value=value,
                        first=seen[value],
                    ),
                )
            seen[value] = row
        return set(seen)

    gpu_ids = ids("gpus", "id")
    source_ids = ids("sources", "id")

    def refer(name: str, key: str, valid: set[str], what: str) -> None:
        for row, record in tables.get(name, ()):
            value = getattr(record, key)
            if value is not None and value not in valid:
                raise CatalogError(
                    data_path(name),
                    row,
                    fmt(
                        _("{key} {value!r} is not a known {what}"), key=key, value=value, what=what
                    ),
                )

    ids("benchmarks", "id")
    for name in (
        "gpus",
        "field_sources",
        "purchase_prices",
        "instance_networks",
        "claims",
        "prices",
        "benchmarks",
        "mig_profiles",
    ):
        refer(name, "source", source_ids, _("source id"))
    refer("mig_profiles", "placements_source", source_ids, _("source id"))
    for name in (
        "field_sources",
        "aliases",
        "prices",
        "purchase_prices",
        "article_figures",
        "capacity_claims",
        "benchmarks",
        "mig_profiles",
    ):
        refer(name, "gpu", gpu_ids, _("GPU id"))
    refer("perf_claims", "gpu", gpu_ids, _("GPU id"))
    refer("perf_claims", "baseline", gpu_ids, _("GPU id"))
    spec_fields = set(GPU_SPEC_FIELDS)
    for name in ("field_sources", "article_figures"):
        refer(name, "field", spec_fields, _("GPU field"))
    seen_cites: dict[tuple[str, str], int] = {}
    for row, record in tables.get("field_sources", ()):
        assert isinstance(record, FieldSource)
        key = (record.gpu, record.field)
        if key in seen_cites:
            raise CatalogError(
                data_path("field_sources"),
                row,
                fmt(
                    _("duplicate citation for {gpu} {field} (first on row {first})"),
                    gpu=record.gpu,
                    field=record.field,
                    first=seen_cites[key],
                ),
            )
        seen_cites[key] = row
    check_mig_profiles(tables)


def check_mig_profiles(tables: dict[str, list[loader.Row[Record]]]) -> None:
    """MIG profiles against their GPU: one row per (GPU, profile), only on MIG GPUs, no more
    memory than the GPU has, no more instances than its ``mig_max_instances``."""
    gpus: dict[str, GPU] = {}
    for _row, record in tables["gpus"]:
        assert isinstance(record, GPU)
        gpus[record.id] = record
    seen: dict[tuple[str, str], int] = {}
    for row, record in tables.get("mig_profiles", ()):
        assert isinstance(record, MigProfile)
        gpu = gpus[record.gpu]  # the reference was checked before

        def fail(problem: str, row: int = row) -> None:
            raise CatalogError(data_path("mig_profiles"), row, problem)

        key = (record.gpu, record.profile)
        if key in seen:
            fail(
                fmt(
                    _("duplicate MIG profile {profile} for {gpu} (first on row {first})"),
                    profile=record.profile,
                    gpu=record.gpu,
                    first=seen[key],
                )
            )
        seen[key] = row
        if not gpu.has_mig:
            fail(fmt(_("{gpu} has mig_max_instances 0 in gpus.csv"), gpu=record.gpu))
        if record.memory_gb > gpu.memory_gib:
            fail(
                fmt(
                    _("memory_gb {memory:g} is above {gpu}'s memory_gib {vram:g}"),
                    memory=record.memory_gb,
                    gpu=record.gpu,
                    vram=gpu.memory_gib,
                )
            )
        if record.max_instances > gpu.mig_max_instances:
            fail(
                fmt(
                    _("max_instances {count} is above {gpu}'s mig_max_instances {limit}"),
                    count=record.max_instances,
                    gpu=record.gpu,
                    limit=gpu.mig_max_instances,
                )
            )


def build_catalog(tables: dict[str, list[loader.Row[Record]]]) -> Catalog:
    """Cross-check parsed tables and assemble the catalog."""
    check_references(tables)

    def records(name: str) -> tuple[Record, ...]:
        return tuple(record for _row, record in tables[name])

    return Catalog(
        gpus=records("gpus"),  # type: ignore[arg-type]
        sources=records("sources"),  # type: ignore[arg-type]
        field_sources=records("field_sources"),  # type: ignore[arg-type]
        aliases=records("aliases"),  # type: ignore[arg-type]
        prices=records("prices"),  # type: ignore[arg-type]
        purchase_prices=records("purchase_prices"),  # type: ignore[arg-type]
        instance_networks=records("instance_networks"),  # type: ignore[arg-type]
        article_figures=records("article_figures"),  # type: ignore[arg-type]
        claims=records("claims"),  # type: ignore[arg-type]
        capacity_claims=records("capacity_claims"),  # type: ignore[arg-type]
        perf_claims=records("perf_claims"),  # type: ignore[arg-type]
        all_mig_profiles=records("mig_profiles"),  # type: ignore[arg-type]
    )


MODELS: dict[str, type[Record]] = {
    "gpus": GPU,
    "sources": Source,
    "field_sources": FieldSource,
    "aliases": Alias,
    "prices": Price,
    "purchase_prices": PurchasePrice,
    "instance_networks": InstanceNetwork,
    "article_figures": ArticleFigure,
    "claims": Claim,
    "capacity_claims": CapacityClaim,
    "perf_claims": PerfClaim,
    "mig_profiles": MigProfile,
}


@cache
def shipped_benchmarks() -> tuple[Benchmark, ...]:
    """``benchmarks.csv``, read and checked (ids, GPUs, sources) once per process, on first
    use: the calibration scripts and the tests read it; a command's answer does not."""
    tables: dict[str, list[loader.Row[Record]]] = {
        name: loader.read_package_table(FILES[name], model)
        for name, model in (("gpus", GPU), ("sources", Source), ("benchmarks", Benchmark))
    }
    check_references(tables)
    return tuple(r for _row, r in tables["benchmarks"] if isinstance(r, Benchmark))


@cache
def load_catalog() -> Catalog:
    """The shipped catalog, read and validated once per process (on first call)."""
    tables: dict[str, list[loader.Row[Record]]] = {
        name: loader.read_package_table(FILES[name], model) for name, model in MODELS.items()
    }
    return build_catalog(tables)
