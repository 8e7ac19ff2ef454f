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


def shape_range(
    catalog: Catalog, gpu_id: str, market: Market, gpus: int, per_node: int
) -> PriceRange | None:
    """The range of ``market``'s prices for ``gpu_id`` that rent ``gpus`` GPUs in instances
    of ``per_node`` (:func:`rents_as`), once per catalog (:meth:`Catalog.derived`)."""

    def compute() -> PriceRange | None:
        rows = catalog.prices_for(gpu_id, [market])
        return price_range([p for p in rows if rents_as(p, gpus) == per_node])

    return catalog.derived(("shape_range", gpu_id, market, gpus, per_node), compute)


def cheapest_for(
    catalog: Catalog, gpu_id: str, gpus: int, markets: Iterable[Market] = RENTAL_MARKETS
) -> Price | None:
    """The cheapest offer (per GPU) that rents ``gpus`` of ``gpu_id`` whole (:func:`rents_as`)."""
    rows = [p for p in catalog.prices_for(gpu_id, markets) if rents_as(p, gpus) is not None]
    found = price_range(rows)
    return None if found is None else found.low
