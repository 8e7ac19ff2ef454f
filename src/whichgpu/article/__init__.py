"""The seed article's figures checked against the catalog (claim ids from CLAIMS.md).

Every check is general: a figure is confirmed when the catalog value, rounded to the
precision the article wrote, falls in the article's range; a dense tensor figure that is twice
the catalog's is the vendor's sparsity figure; a range given for one part is imprecise, and
the sibling part that has the other end is named. No answer is typed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from whichgpu.catalog.prices import price_range
from whichgpu.catalog.records import GPU, RENTAL_MARKETS, ArticleFigure
from whichgpu.catalog.store import Catalog, Citation
from whichgpu.i18n import _, fmt
from whichgpu.inputs.fields import (
    DENSE_TENSOR_FIELDS,
    FIELDS,
    format_field,
    format_usd,
    format_usd_range,
)
from whichgpu.notes import Note, note

ARTICLE_SOURCE = "seed-article"


@dataclass(frozen=True)
class FigureCheck:
    """One article figure against the catalog: confirmed, or corrected with a :class:`Note`."""

    figure: ArticleFigure
    value: object
    citation: Citation
    correction: Note | None

    @property
    def confirmed(self) -> bool:
        return self.correction is None


def written_decimals(text: str) -> int:
    """Decimals of the first number the article wrote (``"~155 TFLOPS"`` → 0, ``"0.1"`` → 1)."""
    found = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
    return len(found.group(1)) if found and found.group(1) else 0


def as_text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "unknown" if value is None else str(value)


def check_figure(catalog: Catalog, figure: ArticleFigure) -> FigureCheck:
    gpu = catalog.gpu(figure.gpu)
    value = getattr(gpu, figure.field)
    citation = catalog.citation(gpu.id, figure.field)
    params = {
        "claim": figure.claim,
        "gpu": gpu.name,
        "field": _(FIELDS[figure.field][0]),
        "article": figure.article_text,
        "value": format_field(figure.field, value),
        "source": citation.source.title,
    }
    if figure.accepted is not None:
        ok = as_text(value) in figure.accepted.split("|")
        return FigureCheck(
            figure, value, citation, None if ok else note("article_differs", **params)
        )
    assert figure.low is not None
    if not isinstance(value, int | float):
        return FigureCheck(figure, value, citation, note("article_differs", **params))
    shown = round(float(value), written_decimals(figure.article_text))
    high = figure.high if figure.high is not None else float("inf")
    if figure.low <= shown <= high:
        if figure.high is not None and figure.low != figure.high:
            other = _sibling_with_value(catalog, gpu, figure)
            return FigureCheck(
                figure,
                value,
                citation,
                note("article_range_for_one_part", other=other, **params),
            )
        return FigureCheck(figure, value, citation, None)
    if (
        figure.field in DENSE_TENSOR_FIELDS
        and value
        and abs(figure.low / (2 * float(value)) - 1) < 0.03
    ):
        return FigureCheck(figure, value, citation, note("article_sparse_figure", **params))
    return FigureCheck(figure, value, citation, note("article_differs", **params))


def _sibling_with_value(catalog: Catalog, gpu: GPU, figure: ArticleFigure) -> str:
    """Name the part of the same chip whose value is the range's other end, if any."""
    value = getattr(gpu, figure.field)
    ends = {figure.low, figure.high} - {value}
    for other in catalog.gpus:
        if other.id != gpu.id and other.chip == gpu.chip and getattr(other, figure.field) in ends:
            found = getattr(other, figure.field)
            return fmt(
                _("{value} is the {gpu}'s figure"),
                value=format_field(figure.field, found),
                gpu=other.name,
            )
    return fmt(_("no other part of the {chip} has the other end"), chip=gpu.chip)


def check_figures(catalog: Catalog, gpu_ids: set[str] | None = None) -> list[FigureCheck]:
    """Every article figure (for ``gpu_ids`` only, when given), in the article's order."""
    return [
        check_figure(catalog, figure)
        for figure in catalog.article_figures
        if gpu_ids is None or figure.gpu in gpu_ids
    ]


def article_gpu_ids(catalog: Catalog) -> list[str]:
    """The GPUs the article compares, in its order."""
    seen: dict[str, None] = {}
    for figure in catalog.article_figures:
        seen.setdefault(figure.gpu)
    return list(seen)


def check_rent_price(catalog: Catalog, gpu_id: str) -> Note | None:
    """C20: the article's price range for ``gpu_id`` against public listings."""
    rows = catalog.listings_for(gpu_id, RENTAL_MARKETS)
    article = price_range([p for p in rows if p.source == ARTICLE_SOURCE])
    if article is None:
        return None
    public = price_range([p for p in rows if p.kind == "offer"])
    gpu = catalog.gpu(gpu_id)
    article_text = format_usd_range(article.low_usd_per_h, article.high_usd_per_h) + "/h"
    if public is None:
        return note("article_price_unconfirmed", claim="C20", gpu=gpu.name, article=article_text)
    if (
        public.low_usd_per_h >= article.low_usd_per_h
        and public.high_usd_per_h <= article.high_usd_per_h
    ):
        return None
    said = {"claim": "C20", "gpu": gpu.name, "article": article_text}
    low = format_usd(public.low_usd_per_h) + "/h"
    low_where = _where(public.low.provider, public.low.market)
    if public.low is public.high:
        return note("article_price_one_listing", **said, price=low, where=low_where)
    return note(
        "article_price_differs",
        **said,
        low=low,
        low_where=low_where,
        high=format_usd(public.high_usd_per_h) + "/h",
        high_where=_where(public.high.provider, public.high.market),
    )


def _where(provider: str, market: str) -> str:
    return f"{provider}, {_(market)}"
