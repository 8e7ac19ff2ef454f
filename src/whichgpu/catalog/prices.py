"""Price ranges and price ages, from the catalog's price rows. Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from whichgpu.catalog.records import RENTAL_MARKETS, Market, Price
from whichgpu.catalog.store import Catalog


@dataclass(frozen=True)
class PriceRange:
    """The cheapest and dearest listing among some price rows, each kept with its source."""

    low: Price
    high: Price
    count: int

    @property
    def low_usd_per_h(self) -> float:
        return self.low.price_usd_per_h

    @property
    def high_usd_per_h(self) -> float:
        return self.high.price_usd_per_h


def price_range(prices: Sequence[Price]) -> PriceRange | None:
    """Min and max of ``prices`` (ties broken by provider, for stable output); None if empty."""
    if not prices:
        return None
    ordered = sorted(prices, key=lambda p: (p.price_usd_per_h, p.provider, p.region or ""))
    return PriceRange(low=ordered[0], high=ordered[-1], count=len(ordered))


def ranges_by_market(
    catalog: Catalog, gpu_id: str, markets: Iterable[Market] = RENTAL_MARKETS
) -> dict[Market, PriceRange]:
    """One range per market kind that has listings for ``gpu_id``, in ``markets`` order."""
    out: dict[Market, PriceRange] = {}
    for market in markets:
        found = price_range(catalog.prices_for(gpu_id, [market]))
        if found is not None:
            out[market] = found
    return out


def rent_range(
    catalog: Catalog, gpu_id: str, markets: Iterable[Market] = RENTAL_MARKETS
) -> PriceRange | None:
    """The range over all the given markets together (serverless is excluded by default)."""
    return price_range(catalog.prices_for(gpu_id, markets))


@dataclass(frozen=True)
class ProviderDates:
    """How old one provider's offers are: how many, the newest and oldest day they were
    seen, how many have no date (``prices status``)."""

    provider: str
    offers: int
    newest: str | None
    oldest: str | None
    undated: int


def offer_dates(catalog: Catalog) -> list[ProviderDates]:
    """Each provider's offers in the catalog by date, the staleest newest first: what a
    buyer should re-check before acting on a price."""
    by: dict[str, list[str]] = {}
    for gpu in catalog.gpus:
        for price in catalog.prices_for(gpu.id):
            if price.kind == "offer":
                by.setdefault(price.provider, []).append(price.as_of)
    out = []
    for provider, days in by.items():
        dated = sorted(d for d in days if d != "undated")
        out.append(
            ProviderDates(
                provider,
                len(days),
                dated[-1] if dated else None,
                dated[0] if dated else None,
                len(days) - len(dated),
            )
        )
    return sorted(out, key=lambda p: (p.newest is not None, p.newest or "", p.provider))


def age_months(as_of: str, today: date) -> int | None:
    """Whole months between a ``YYYY[-MM[-DD]]`` date and ``today``; None when undated.

    A year alone counts from its middle (July), a month from its first day.
    """
    if as_of == "undated":
        return None
    parts = [int(part) for part in as_of.split("-")]
    year, month = parts[0], parts[1] if len(parts) > 1 else 7
    day = parts[2] if len(parts) > 2 else 1
    months = (today.year - year) * 12 + (today.month - month) - (1 if today.day < day else 0)
    return max(months, 0)


def age_days(day: date, today: date) -> int:
    """Whole days from ``day`` to ``today`` (0 for a day in the future)."""
    return max((today - day).days, 0)


def rents_as(price: Price, gpus: int) -> int | None:
    """The instance shape (GPUs per instance) in which ``price`` rents ``gpus`` GPUs, or None
    when it cannot (see :func:`instance_shapes`). A price with no instance named is a rate
    per GPU at any count (a user's own price, the article's ranges)."""
    k = price.gpus_per_instance
    if price.instance is None:
        return gpus
    if k == gpus or (k < gpus and gpus % k == 0 and price.market != "marketplace"):
        return k
    return None


@dataclass(frozen=True, order=True)
class Link:
    """The network between the instances of an offer, as the catalog cites it
    (:class:`~whichgpu.catalog.records.InstanceNetwork`): GPUDirect or not, Gb/s an
    instance, and the provider's name for it. Offers sold with the same link plan alike."""

    gpudirect: bool
    gbit: float
    fabric: str


#: :func:`shape_range` over every offer of a shape, whatever its network
ANY_LINK = Link(False, -1.0, "")


def link_of(catalog: Catalog, price: Price) -> Link | None:
    """The network ``price``'s instances are sold with, or None where the catalog cites
    none (the planner then assumes :func:`whichgpu.estimate.parallel.instance_gbit`)."""
    sold = catalog.network_of(price)
    return None if sold is None else Link(sold.gpudirect, sold.network_gbit, sold.fabric)


def shape_links(
    catalog: Catalog, gpu_id: str, markets: Iterable[Market], gpus: int, per_node: int
) -> list[Link | None]:
    """The networks the offers renting ``gpus`` of ``gpu_id`` as instances of ``per_node``
    are sold with (None: uncited), fastest first: each is a candidate of its own."""
    links = {
        link_of(catalog, p)
        for p in catalog.prices_for(gpu_id, markets)
        if rents_as(p, gpus) == per_node
    }
    return sorted(links, key=_link_order, reverse=True)


def _link_order(link: Link | None) -> tuple[float, bool]:
    return (0.0, False) if link is None else (link.gbit, link.gpudirect)


def shape_range(
    catalog: Catalog,
    gpu_id: str,
    market: Market,
    gpus: int,
    per_node: int,
    link: Link | None = ANY_LINK,
) -> PriceRange | None:
    """The range of ``market``'s prices for ``gpu_id`` that rent ``gpus`` GPUs in instances
    of ``per_node`` (:func:`rents_as`), of those sold with ``link`` between instances
    (:data:`ANY_LINK`: every one), once per catalog (:meth:`Catalog.derived`): of the dated
    offers where one is (an undated one is a guess at today's price: :func:`dated_first`)."""

    def compute() -> PriceRange | None:
        rows = catalog.prices_for(gpu_id, [market])
        return price_range(
            dated_first(
                [
                    p
                    for p in rows
                    if rents_as(p, gpus) == per_node
                    and (link == ANY_LINK or link_of(catalog, p) == link)
                ]
            )
        )

    return catalog.derived(("shape_range", gpu_id, market, gpus, per_node, link), compute)


def dated_first(prices: Sequence[Price]) -> list[Price]:
    """``prices``' dated rows where there are any, else all of them: a price without a date
    is a guess, and a dated offer of the same shape outranks it."""
    dated = [p for p in prices if p.as_of != "undated"]
    return dated or list(prices)


def cheapest_for(
    catalog: Catalog, gpu_id: str, gpus: int, markets: Iterable[Market] = RENTAL_MARKETS
) -> Price | None:
    """The cheapest offer (per GPU) that rents ``gpus`` of ``gpu_id`` whole (:func:`rents_as`),
    among its dated offers where it has any (:func:`dated_first`, as recommend prices an
    option: a price without a date is a guess)."""
    rows = dated_first(
        [p for p in catalog.prices_for(gpu_id, markets) if rents_as(p, gpus) is not None]
    )
    found = price_range(rows)
    return None if found is None else found.low
