"""Terminal output (Rich, imported on first use): the catalog list, one GPU, a comparison."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import TYPE_CHECKING

from whichgpu.catalog.prices import PriceRange, age_months, price_range
from whichgpu.catalog.records import GPU, GPU_SPEC_FIELDS, MARKETS, Market, Price
from whichgpu.catalog.store import Catalog
from whichgpu.i18n import N_, _, fmt, format_decimal, ngettext
from whichgpu.inputs.fields import FIELDS, format_field, format_number, format_usd, format_usd_range

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from whichgpu.commands.compare import Comparison, GpuComparison
    from whichgpu.commands.recommend.options import Option
    from whichgpu.job import Job


#: A training job's activation recomputation (``Job.checkpointing``), as a value in a
#: sentence ("recomputation full"): a word of the reader's language, not the code.
RECOMPUTATION_MODES = {"none": N_("none"), "selective": N_("selective"), "full": N_("full")}


def recomputation_mode(mode: str) -> str:
    """``mode`` (none, selective, full) in the reader's language."""
    return _(RECOMPUTATION_MODES[mode]) if mode in RECOMPUTATION_MODES else mode


def recomputation_of(job: Job) -> str:
    """``job``'s recomputation in the reader's language, with the layers of each chunk it
    recomputes where that is not every one (:attr:`~whichgpu.job.Job.recompute_layers`)."""
    mode = recomputation_mode(job.checkpointing)
    if job.checkpointing == "full" and job.recompute_layers:
        return fmt(_("{mode}, the first {layers} layers of each chunk"), mode=mode,
                   layers=job.recompute_layers)  # fmt: skip
    return mode


def quant_shown(quant: str | None, quantize_on: str) -> str:
    """A job's weight format after its precision (``, fp8``), and where it is made when it
    is quantised on the GPU after a 16-bit load (:data:`whichgpu.job.QuantizeOn`)."""
    if quant is None:
        return ""
    return ", " + (fmt(_("{quant} quantised on the GPU"), quant=quant) if quantize_on == "gpu"
                   else quant)  # fmt: skip


#: The network between the instances of an option rented as several (Job.network).
NETWORKS = {"ethernet": N_("Ethernet"), "infiniband": N_("InfiniBand")}


def instance_shape(option: Option) -> str:
    """How an option rented as several instances is built, for its table row: ``4
    instances, Ethernet`` under "4 × H100 SXM" (the GPUs shared among them; the network
    :func:`whichgpu.commands.recommend.reasons._nodes_reason` explains); empty for one instance or
    a node. Several small instances joined by Ethernet run slower than one node of the same
    GPUs, so the row says which it is."""
    from whichgpu.commands.recommend.options import between_instances

    hw = option.hardware
    between = between_instances(option)
    if between is None or hw.instances <= 1:
        return ""
    network = between.network
    return fmt(
        _("{instances} instances, {network}"),
        instances=hw.instances,
        network=between.fabric or _(NETWORKS.get(network, network)),
    )


def add_columns(table: Table, columns: Iterable[tuple[str, str]], whole: bool = False) -> None:
    """The ``(header, justify)`` columns of ``table``; ``whole``: never wrapped, never
    narrower than the header (a number or a name is not cut)."""
    for header, justify in columns:
        if whole:
            table.add_column(header, justify=justify, no_wrap=True, min_width=len(header))  # type: ignore[arg-type]
        else:
            table.add_column(header, justify=justify)  # type: ignore[arg-type]


def make_console() -> Console:
    from rich.console import Console

    return Console(highlight=False, emoji=False)


def _gen(count: int | None, gen: int | None) -> str:
    if count is None:
        return _("not published")
    if count == 0:
        return _("none")
    return (
        format_number(count)
        if gen is None
        else fmt(_("{count} (gen {gen})"), count=format_number(count), gen=gen)
    )


def _headline(gpu: GPU) -> str:
    figure = format_field("vendor_fp16_tensor_tflops", gpu.vendor_fp16_tensor_tflops)
    return f"{figure} ({_(gpu.vendor_fp16_tensor_basis)})"


def _optional(field: str) -> Callable[[GPU], str]:
    return lambda g: format_field(field, getattr(g, field))


#: (label, fields it shows, how) — the article's table order, then what it left out.
SPEC_ROWS: list[tuple[str, tuple[str, ...], Callable[[GPU], str]]] = [
    (N_("Architecture (chip)"), ("architecture", "chip"), lambda g: f"{g.architecture} ({g.chip})"),
    (N_("Compute capability"), ("compute_capability",), lambda g: g.compute_capability or "—"),
    (N_("CUDA cores"), ("cuda_cores",), lambda g: _gen(g.cuda_cores, None)),
    (
        N_("Tensor cores"),
        ("tensor_cores", "tensor_core_gen"),
        lambda g: _gen(g.tensor_cores, g.tensor_core_gen),
    ),
    (N_("RT cores"), ("rt_cores", "rt_core_gen"), lambda g: _gen(g.rt_cores, g.rt_core_gen)),
    (
        N_("VRAM"),
        ("memory_gib", "memory_type"),
        lambda g: f"{format_field('memory_gib', g.memory_gib)} {g.memory_type}",
    ),
    (
        N_("Memory bandwidth"),
        ("memory_bandwidth_gb_per_s",),
        _optional("memory_bandwidth_gb_per_s"),
    ),
    (N_("FP32"), ("fp32_tflops",), _optional("fp32_tflops")),
    (
        N_("FP16 tensor, dense"),
        ("fp16_tensor_dense_tflops",),
        _optional("fp16_tensor_dense_tflops"),
    ),
    (
        N_("  with FP16 accumulate"),
        ("fp16_fp16acc_tensor_dense_tflops",),
        _optional("fp16_fp16acc_tensor_dense_tflops"),
    ),
    (
        N_("  vendor headline"),
        ("vendor_fp16_tensor_tflops", "vendor_fp16_tensor_basis"),
        lambda g: _headline(g),
    ),
    (
        N_("BF16 tensor, dense"),
        ("bf16_tensor_dense_tflops",),
        _optional("bf16_tensor_dense_tflops"),
    ),
    (
        N_("TF32 tensor, dense"),
        ("tf32_tensor_dense_tflops",),
        _optional("tf32_tensor_dense_tflops"),
    ),
    (N_("FP8 tensor, dense"), ("fp8_tensor_dense_tflops",), _optional("fp8_tensor_dense_tflops")),
    (N_("FP4 tensor, dense"), ("fp4_tensor_dense_tflops",), _optional("fp4_tensor_dense_tflops")),
    (N_("INT8 tensor, dense"), ("int8_tensor_dense_tops",), _optional("int8_tensor_dense_tops")),
    (N_("FP64"), ("fp64_tflops",), _optional("fp64_tflops")),
    (N_("FP64 tensor"), ("fp64_tensor_tflops",), _optional("fp64_tensor_tflops")),
    (N_("TDP"), ("tdp_w",), _optional("tdp_w")),
    (
        N_("NVLink"),
        ("nvlink_gb_per_s",),
        lambda g: format_field("nvlink_gb_per_s", g.nvlink_gb_per_s) if g.has_nvlink else _("no"),
    ),
    (
        N_("MIG"),
        ("mig_max_instances",),
        lambda g: fmt(_("up to {n} instances"), n=g.mig_max_instances) if g.has_mig else _("no"),
    ),
    (N_("ECC memory"), ("ecc",), _optional("ecc")),
    (
        N_("Display outputs"),
        ("display_outputs", "display_connectors"),
        lambda g: g.display_connectors or _("none"),
    ),
    (
        N_("PCIe generation"),
        ("pcie_gen",),
        lambda g: fmt(_("Gen {n}"), n=g.pcie_gen) if g.pcie_gen else _("not published"),
    ),
    (N_("Launch year"), ("launch_year",), lambda g: str(g.launch_year)),
]


def listing_markets(
    catalog: Catalog, gpu_id: str
) -> list[tuple[Market, PriceRange | None, list[Price]]]:
    """Per market with listings: the range of its offers (None when only claims are
    listed) and every listing, cheapest first."""
    out: list[tuple[Market, PriceRange | None, list[Price]]] = []
    for market in MARKETS:
        listed = sorted(catalog.listings_for(gpu_id, [market]), key=lambda p: p.price_usd_per_h)
        if listed:
            found = price_range([p for p in listed if p.kind == "offer" or catalog.rank_claims])
            out.append((market, found, listed))
    return out


def _range_cell(found: PriceRange | None) -> str:
    if found is None:
        return _("no offer")
    return fmt(
        _("{range}/h ({n})"),
        range=format_usd_range(found.low_usd_per_h, found.high_usd_per_h),
        n=found.count,
    )


def _pair(values: tuple[float, float] | None, suffix: str = "") -> str:
    if values is None:
        return _("unpriced")
    low, high = (format_number(round(v, 0 if v >= 10 else 2)) for v in values)
    return f"{low}{suffix}" if low == high else f"{low}–{high}{suffix}"  # one listing: one value


def _ratio(value: float) -> str:
    return f"{format_decimal(value, 2)}×"


def price_date(price: Price, catalog: Catalog, today: date) -> str:
    """``as of 2026-02-26, 9 months old`` or ``undated, retrieved 2026-11-29``."""
    months = age_months(price.as_of, today)
    if months is None:
        source = catalog.source(price.source)
        retrieved = source.retrieved.isoformat() if source else "?"
        return fmt(_("undated, retrieved {date}"), date=retrieved)
    return fmt(_("as of {date}, {months} months old"), date=price.as_of, months=months)


def price_citation(price: Price, catalog: Catalog, today: date) -> str:
    """One listing: its per-GPU price, the instance it is sold as, where, when and whose;
    a claim says it is one (rankings use offers)."""
    region = price.region
    if price.region_count > 1:
        more = price.region_count - 1
        region = fmt(
            ngettext("{region} and {more} more region", "{region} and {more} more regions", more),
            region=region or "",
            more=more,
        )
    from whichgpu.phrases import localize

    where = ", ".join(part for part in (localize(price.provider), region, price.instance) if part)
    source = catalog.source(price.source)
    title = source.title if source else price.source
    text = fmt(
        _("{price}/h {where} ({date}; {source})"),
        price=format_usd(price.price_usd_per_h),
        where=where,
        date=price_date(price, catalog, today),
        source=title,
    )
    if price.gpus_per_instance > 1:
        text = fmt(
            _("{listing}; sold as {gpus} GPUs at {price}/h"),
            listing=text,
            gpus=price.gpus_per_instance,
            price=format_usd(price.instance_usd_per_h),
        )
    if price.kind == "claim":
        text = fmt(_("claim, not an offer: {listing}"), listing=text)
    return text


def print_compare(comparison: Comparison, catalog: Catalog, today: date, console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    marks: dict[tuple[str, str], list[int]] = {}
    for number, correction in enumerate(comparison.corrections, start=1):
        marks.setdefault((correction.gpu, correction.field), []).append(number)

    def cell(row: GpuComparison, fields: tuple[str, ...], text: str) -> Text:
        found = [n for f in fields for n in marks.get((row.gpu.id, f), [])]
        out = Text(text)
        if found:
            out.append(" ✗" + "".join(f"[{n}]" for n in found), style="bold red")
        return out

    table = Table(title=fmt(_("GPU comparison (baseline: {gpu})"), gpu=comparison.baseline.name))
    table.add_column(_("Spec"), style="bold")
    for row in comparison.gpus:
        table.add_column(row.gpu.short_name, overflow="fold")
    for label, fields, how in SPEC_ROWS:
        table.add_row(_(label), *(cell(row, fields, how(row.gpu)) for row in comparison.gpus))
    table.add_section()
    for index, market in enumerate(comparison.markets):
        marked = ("rent",) if index == 0 else ()
        table.add_row(
            fmt(_("Rent, {market}"), market=_(market)),
            *(cell(row, marked, _range_cell(row.prices.get(market))) for row in comparison.gpus),
        )
    for condition in ("new", "used"):
        table.add_row(
            fmt(_("Buy, {condition}"), condition=_(condition)),
            *(_purchase_cell(row, condition) for row in comparison.gpus),
        )
    table.add_section()
    base = comparison.baseline.short_name
    table.add_row(
        fmt(_("Bandwidth vs {gpu}"), gpu=base),
        *(_ratio(r.derived.bandwidth_ratio) for r in comparison.gpus),
    )
    table.add_row(
        fmt(_("FP16 tensor vs {gpu}"), gpu=base),
        *(_ratio(r.derived.fp16_tensor_ratio) for r in comparison.gpus),
    )
    table.add_row(
        fmt(_("FP64 vs {gpu}"), gpu=base),
        *(_ratio(r.derived.fp64_ratio) for r in comparison.gpus),
    )
    table.add_row(
        _("FP16 TFLOPS per $/h"),
        *(_pair(r.derived.fp16_tflops_per_usd_per_h) for r in comparison.gpus),
    )
    table.add_row(
        _("GB of VRAM per $/h"), *(_pair(r.derived.gb_per_usd_per_h) for r in comparison.gpus)
    )
    table.add_row(
        _("Hours per $100"), *(_pair(r.derived.hours_per_100_usd) for r in comparison.gpus)
    )
    console.print(table)

    if comparison.corrections:
        console.print(Text(_("Where the article differs from the sources:"), style="bold"))
        for number, correction in enumerate(comparison.corrections, start=1):
            console.print(Text(f"[{number}] {correction.note.render()}"))
    console.print(
        Text(_("Rent ranges (cheapest and dearest listing of each market):"), style="bold")
    )
    for row in comparison.gpus:
        for market, found in row.prices.items():
            low = price_citation(found.low, catalog, today)
            line = f"{row.gpu.name}, {_(market)}: {low}"
            if found.high_usd_per_h > found.low_usd_per_h:
                line += " … " + price_citation(found.high, catalog, today)
            console.print(Text(line))
        if not row.prices:
            console.print(
                Text(
                    fmt(
                        _("{gpu}: no rental listing in the catalog; add yours with --prices."),
                        gpu=row.gpu.name,
                    )
                )
            )
    console.print(
        Text(
            _(
                "Tensor figures are dense (no 2:4 sparsity). "
                "'whichgpu show GPU' lists every source."
            ),
            style="dim",
        )
    )


def _purchase_cell(row: GpuComparison, condition: str) -> str:
    found = [p for p in row.purchase if p.condition == condition]
    if not found:
        return _("no source")
    parts = []
    for price in found:
        text = format_usd_range(price.low_usd, price.high_usd)
        parts.append(text + (" " + _("(article)") if price.source == "seed-article" else ""))
    from whichgpu.phrases import CLAUSE_SEPARATOR

    return _(CLAUSE_SEPARATOR).join(parts)


#: The width a prose column (a status, a reason) is given at least; it wraps beyond.
PROSE_MIN_WIDTH = 18


def fitted_table(
    title: str,
    columns: Sequence[tuple[str, str, int]],
    rows: Sequence[Sequence[str]],
    width: int,
    prose: frozenset[int] = frozenset(),
    styles: Sequence[str] = (),
) -> Table:
    """A light table whose cells are never wrapped: a number, a date or an id is never cut.
    ``columns`` are ``(header, justify, priority)``; while the table is wider than
    ``width``, the column of the highest priority number goes (1 is kept last). Columns in
    ``prose`` hold sentences: they wrap at word boundaries, in the width left to them."""
    from rich import box
    from rich.cells import cell_len  # terminal cells: a Japanese character takes two
    from rich.table import Table

    def needed(i: int) -> int:
        widest = max(  # a cell of several lines is as wide as its widest line
            [cell_len(columns[i][0])] + [cell_len(line) for r in rows for line in r[i].split("\n")]
        )
        return min(widest, PROSE_MIN_WIDTH) if i in prose else widest

    keep = list(range(len(columns)))
    while len(keep) > 1 and sum(needed(i) + 2 for i in keep) > width:
        keep.remove(max(keep, key=lambda i: columns[i][2]))
    table = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
        collapse_padding=True,
    )  # fmt: skip
    for i in keep:
        header, justify, _priority = columns[i]
        if i in prose:
            table.add_column(header, justify=justify, min_width=needed(i), ratio=1)  # type: ignore[arg-type]
        else:
            table.add_column(header, justify=justify, no_wrap=True, min_width=needed(i))  # type: ignore[arg-type]
    for n, row in enumerate(rows):
        table.add_row(*(row[i] for i in keep), style=styles[n] if n < len(styles) else None)
    return table


def print_gpu_list(gpus: list[GPU], catalog: Catalog, console: Console) -> None:
    """``whichgpu gpus``: the columns that fit the terminal, the least needed dropped first
    (at 80 columns: the id, memory, rent, FP16 and bandwidth)."""
    from whichgpu.catalog.prices import rent_range

    columns = [
        (_("GPU"), "left", 1),
        (_("VRAM"), "right", 2),
        (_("rent $/h"), "right", 3),
        (_("FP16 TFLOPS"), "right", 4),
        (_("GB/s"), "right", 5),
        (_("features"), "left", 6),
        (_("FP64"), "right", 7),
        (_("name"), "left", 8),
        (_("cheapest … dearest listing (date)"), "left", 9),
    ]
    rows = []
    for gpu in gpus:
        rent = rent_range(catalog, gpu.id)
        rows.append(
            [
                gpu.id,
                f"{format_field('memory_gib', gpu.memory_gib)} {gpu.memory_type}",
                _("unpriced")
                if rent is None
                else format_usd_range(rent.low_usd_per_h, rent.high_usd_per_h),
                _listed(gpu.fp16_tensor_dense_tflops),
                _listed(gpu.memory_bandwidth_gb_per_s),
                ",".join(gpu_features(gpu)) or "—",
                _listed(gpu.fp64_tflops),
                gpu.short_name,
                "—" if rent is None else _listing_ends(rent),
            ]
        )
    title = fmt(_("GPU catalog ({n} GPUs)"), n=len(gpus))
    console.print(fitted_table(title, columns, rows, console.width))
    console.print(
        _("Rent: the range of the offers; 'whichgpu show GPU' cites each one."),
        style="dim",
    )


def _listing_ends(rent: PriceRange) -> str:
    from whichgpu.phrases import localize

    low = f"{localize(rent.low.provider)} ({localize(rent.low.as_of)})"
    if rent.high is rent.low or rent.high_usd_per_h == rent.low_usd_per_h:
        return low
    return f"{low} … {localize(rent.high.provider)} ({localize(rent.high.as_of)})"


def gpu_features(gpu: GPU) -> list[str]:
    """The capability flags ``gpus --feature`` filters on, in a fixed order; the software
    stack shown only where it is not CUDA (``rocm``: every other GPU has ``cuda``)."""
    from whichgpu.catalog.filters import FEATURES

    found = [name for name, test in FEATURES.items() if test(gpu) and name != "cuda"]
    return found if gpu.cuda else [*found, "rocm"]


def print_gpu(gpu: GPU, catalog: Catalog, today: date, console: Console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # each figure cites its source by number (the sources listed once below, their
    # addresses on lines of their own, never broken): the table fits 80 columns
    order: dict[str, int] = {}
    for name in GPU_SPEC_FIELDS:
        order.setdefault(catalog.citation(gpu.id, name).source.id, len(order) + 1)
    table = Table(title=gpu.name, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(_("Spec"), overflow="fold")
    table.add_column(_("Value"), overflow="fold")
    table.add_column(_("Source"), overflow="fold")
    for name in GPU_SPEC_FIELDS:
        citation = catalog.citation(gpu.id, name)
        where = f"[{order[citation.source.id]}]" + (f" {citation.note}" if citation.note else "")
        label = _(FIELDS[name][0]) if name in FIELDS else name
        table.add_row(label, format_field(name, getattr(gpu, name)), Text(where))
    console.print(table)
    console.print(Text(_("Sources:"), style="bold"))
    for source_id, number in order.items():
        source = catalog.source(source_id)
        assert source is not None
        console.print(Text(f"[{number}] {source.title}, {source.publisher}, {source.published}"))
        console.print(Text(f"    {source.url}"), soft_wrap=True)
    console.print(Text(_("Rent:"), style="bold"))
    markets = listing_markets(catalog, gpu.id)
    if not markets:
        console.print(Text(_("no rental listing in the catalog; add yours with --prices.")))
    for market, found, listed in markets:
        console.print(Text(f"- {_(market)}: {_range_cell(found)}"))
        if listed:  # a hanging indent: a listing's wrapped lines stay under its first
            grid = Table.grid()
            grid.add_column(width=4)
            grid.add_column(overflow="fold")
            for price in listed:
                grid.add_row("", Text(price_citation(price, catalog, today)))
            console.print(grid)
    purchases = catalog.purchase_for(gpu.id)
    if purchases:
        console.print(Text(_("Buy:"), style="bold"))
        for p in purchases:
            source = catalog.source(p.source)
            title = source.title if source else p.source
            amount = format_usd_range(p.low_usd, p.high_usd)
            console.print(Text(f"- {_(p.condition)}: {amount} ({p.as_of}; {title})"))


def _listed(value: float | None) -> str:
    """A figure in a list of GPUs, to three significant digits at most (362, 31.2, 9.75), so
    that a column reads alike (``show`` gives each exactly, with its source)."""
    if value is None:
        return "—"
    decimals = 0 if value >= 100 else (1 if value >= 10 else 2)
    return format_number(round(value, decimals))
