"""``compare``: GPUs side by side, as the article's spec table, with derived ratios, prices,
and the article's figures checked wherever its GPUs appear."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from whichgpu.article import check_figures, check_rent_price
from whichgpu.catalog.prices import PriceRange, ranges_by_market, rent_range
from whichgpu.catalog.records import GPU, MARKETS, RENTAL_MARKETS, Market, PurchasePrice
from whichgpu.catalog.store import Catalog
from whichgpu.errors import InvalidInput
from whichgpu.models import resolve_gpu
from whichgpu.notes import Note


@dataclass(frozen=True)
class Derived:
    """Ratios against the baseline (the first GPU named) and value for money.

    Per-dollar figures use the rent range: the low end divides by the dearest listing,
    the high end by the cheapest. ``None`` where the GPU has no price.
    """

    bandwidth_ratio: float
    fp64_ratio: float
    fp16_tensor_ratio: float
    fp16_tflops_per_usd_per_h: tuple[float, float] | None
    gb_per_usd_per_h: tuple[float, float] | None
    hours_per_100_usd: tuple[float, float] | None


@dataclass(frozen=True)
class GpuComparison:
    gpu: GPU
    prices: dict[Market, PriceRange]
    rent: PriceRange | None
    purchase: tuple[PurchasePrice, ...]
    derived: Derived


@dataclass(frozen=True)
class Correction:
    """Where the article's figure differs: the GPU, the field (``"rent"`` for prices), why."""

    gpu: str
    field: str
    note: Note


@dataclass(frozen=True)
class Comparison:
    baseline: GPU
    gpus: tuple[GpuComparison, ...]
    corrections: tuple[Correction, ...]
    markets: tuple[Market, ...]


def parse_markets(names: Sequence[str] | None) -> tuple[Market, ...]:
    """Market kinds named by a user (default: every rental market but serverless)."""
    if not names:
        return RENTAL_MARKETS
    found: list[Market] = []
    for name in names:
        match = next((m for m in MARKETS if m == name.strip().lower()), None)
        if match is None:
            raise InvalidInput(
                "unknown_market", field=("markets",), name=name, valid=", ".join(MARKETS)
            )
        if match not in found:
            found.append(match)
    return tuple(found)


def per_dollar(amount: float, rent: PriceRange | None) -> tuple[float, float] | None:
    """``amount`` per $/h over a rent range: (at the dearest listing, at the cheapest)."""
    if rent is None:
        return None
    return amount / rent.high_usd_per_h, amount / rent.low_usd_per_h


def derive(gpu: GPU, baseline: GPU, rent: PriceRange | None) -> Derived:
    return Derived(
        bandwidth_ratio=gpu.memory_bandwidth_gb_per_s / baseline.memory_bandwidth_gb_per_s,
        fp64_ratio=gpu.fp64_tflops / baseline.fp64_tflops,
        fp16_tensor_ratio=gpu.fp16_tensor_dense_tflops / baseline.fp16_tensor_dense_tflops,
        fp16_tflops_per_usd_per_h=per_dollar(gpu.fp16_tensor_dense_tflops, rent),
        gb_per_usd_per_h=per_dollar(gpu.memory_gib, rent),
        hours_per_100_usd=per_dollar(100.0, rent),
    )


def compare(
    catalog: Catalog, names: Sequence[str], markets: Sequence[Market] = RENTAL_MARKETS
) -> Comparison:
    """Compare the GPUs ``names`` denote (forgiving names; the first is the baseline)."""
    if not names:
        raise InvalidInput("no_gpu_to_compare", field=("gpus",))
    gpus: list[GPU] = []
    for name in names:
        gpu = resolve_gpu(catalog, name)
        if gpu in gpus:
            raise InvalidInput("gpu_listed_twice", field=("gpus",), name=name, gpu=gpu.id)
        gpus.append(gpu)
    baseline = gpus[0]
    rows = []
    for gpu in gpus:
        rent = rent_range(catalog, gpu.id, markets)
        rows.append(
            GpuComparison(
                gpu=gpu,
                prices=ranges_by_market(catalog, gpu.id, markets),
                rent=rent,
                purchase=tuple(catalog.purchases_current(gpu.id)),
                derived=derive(gpu, baseline, rent),
            )
        )
    ids = {gpu.id for gpu in gpus}
    corrections = [
        Correction(check.figure.gpu, check.figure.field, check.correction)
        for check in check_figures(catalog, ids)
        if check.correction is not None
    ]
    for gpu in gpus:
        price_note = check_rent_price(catalog, gpu.id)
        if price_note is not None:
            corrections.append(Correction(gpu.id, "rent", price_note))
    return Comparison(baseline, tuple(rows), tuple(corrections), tuple(markets))
