"""Users' own prices: a CSV or TOML price file, and SkyPilot catalog ``vms.csv`` imports.

Parsing is pure: the caller reads the file and passes its text, path and date. Each row is
validated like the shipped catalog; a bad row is one :class:`CatalogError` naming the file
and the row. GPU names are resolved forgivingly (SkyPilot's names in SkyPilot's sense).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from whichgpu.catalog.loader import validate
from whichgpu.catalog.records import GPU, Market, Price, Source
from whichgpu.catalog.store import Catalog
from whichgpu.errors import AmbiguousName, CatalogError, InvalidInput, UnknownName
from whichgpu.i18n import _, fmt

#: Columns (CSV) or keys (TOML ``[[price]]`` tables) of a user price file.
USER_PRICE_KEYS = (
    "gpu",
    "price_usd_per_h",
    "market",
    "provider",
    "region",
    "instance",
    "gpus_per_instance",
    "as_of",
    "note",
)


#: The most rows a CSV of prices is read to. SkyPilot's largest catalog, AWS's ``vms.csv``
#: (every instance type in every region), holds tens of thousands; past this a file is no
#: catalog, and reading it would hold the command for minutes (200,000 rows: 31 s).
MAX_CSV_ROWS = 200_000
#: The most prices one user price file states: a team's own rates for the GPUs and markets
#: it rents, a few hundred at most (each price is a row every answer ranks).
MAX_USER_PRICES = 5_000
#: Characters a price's text may not hold: the C0 controls but tab and newline, DEL and the
#: C1 controls. A terminal takes ESC and CSI sequences as commands (colours, its title, the
#: clipboard), and a price's provider, instance and note are printed.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def csv_rows(
    text: str, path: str, limit: int = MAX_CSV_ROWS
) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """A CSV text's header and rows (each with its line), read as untrusted: a cell past
    the csv module's size limit, more than ``limit`` rows or a control character in a cell
    (:func:`plain_text`) is one :class:`CatalogError` naming the file and the row."""
    reader = csv.DictReader(io.StringIO(text))
    rows: list[tuple[int, dict[str, Any]]] = []
    try:
        header = list(reader.fieldnames or ())
        for entry in reader:
            if len(rows) == limit:
                raise CatalogError(path, reader.line_num, fmt(_("more than {n} rows"), n=limit))
            rows.append((reader.line_num, entry))
    except csv.Error as error:
        # the row being read when the module gave up: the one after the last it finished
        raise CatalogError(path, reader.line_num + 1,
                           fmt(_("not CSV: {reason}"), reason=str(error))) from None  # fmt: skip
    for cell in header:
        plain_text(cell, path, 1)
    for line, entry in rows:
        for value in entry.values():
            if isinstance(value, str):
                plain_text(value, path, line)
    return header, rows


def plain_text(value: str, path: str, row: int | None) -> str:
    """``value`` itself, once it holds no control character (:data:`_CONTROL`)."""
    found = _CONTROL.search(value)
    if found is not None:
        raise CatalogError(path, row, fmt(
            _("holds the control character U+{code}: a price's text is printed, and "
              "terminals run control characters as commands"),
            code=f"{ord(found.group()):04X}"))  # fmt: skip
    return value


@dataclass(frozen=True)
class PriceImport:
    """Prices read from one file, the source they cite, and what was left out and why."""

    prices: tuple[Price, ...]
    source: Source
    skipped: tuple[str, ...] = ()


def file_source(source_id: str, path: str, kind: str, file_date: date) -> Source:
    return Source(
        id=source_id,
        title=fmt(_("{kind}: {path}"), kind=kind, path=path),
        publisher=_("you"),
        url=path,
        published=file_date.isoformat(),
        retrieved=file_date,
        kind=kind,
    )


def _resolve(catalog: Catalog, name: str, path: str, row: int, scope: str = "user") -> str:
    try:
        return catalog.resolve(name, scope).id
    except (UnknownName, AmbiguousName) as error:
        raise CatalogError(path, row, error.message()) from None


def _price(values: dict[str, Any], path: str, row: int | None) -> Price:
    return validate(Price, values, path, row)


def parse_price_file(
    text: str,
    path: str,
    catalog: Catalog,
    source_id: str,
    file_date: date,
    today: date | None = None,
) -> PriceImport:
    """A user price file: CSV (header row) or TOML (``[[price]]`` tables), told by ``path``;
    its dates are checked against ``today`` (:func:`prices_from_entries`)."""
    if path.lower().endswith(".toml"):
        entries = _toml_price_rows(text, path)
    else:
        entries = _csv_price_rows(text, path)
    if not entries:  # a file that prices nothing would change nothing, without a word
        raise CatalogError(path, None, _("no prices in the file"))
    return prices_from_entries(entries, path, catalog, source_id, file_date, today)


#: The earliest date a price may carry: GPU rental prices older than 2000 do not exist, and
#: a year such as 1970 or 0001 is a mistake (a clock at zero, a typing slip).
EARLIEST_PRICE_DATE = date(2000, 1, 1)
#: How far past today a date may be: a clock a little ahead, a time zone a day ahead of UTC.
CLOCK_SKEW = timedelta(days=1)
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def date_problem(value: str, today: date) -> InvalidInput | None:
    """What is wrong with a price's date ``value`` (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or
    ``undated``), or None: it must be a real date (no month 13, no 30 February), not later
    than ``today`` (a day of clock skew allowed; a month or a year counts from its first
    day), not before :data:`EARLIEST_PRICE_DATE`. A date in the future would read "0 months
    old" and rank as the freshest price."""
    if value == "undated":
        return None
    found = _DATE.fullmatch(value)
    try:
        if found is None:
            raise ValueError(value)
        year, month, day = found.groups()
        first = date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return InvalidInput("not_a_date", value=value)
    if first > today + CLOCK_SKEW:
        return InvalidInput("date_in_future", value=value, today=today.isoformat())
    if first < EARLIEST_PRICE_DATE:
        return InvalidInput("date_too_old", value=value, low=EARLIEST_PRICE_DATE.isoformat())
    return None


def _as_of(value: object, path: str, row: int, today: date) -> object:
    """An entry's ``as_of`` checked (:func:`date_problem`); a TOML date (``as_of =
    2026-11-01``, unquoted) is taken as its ISO text. Other types are left to the record's
    validation, which names them."""
    if isinstance(value, date) and not isinstance(value, datetime):
        value = value.isoformat()
    if isinstance(value, str):
        problem = date_problem(value.strip(), today)
        if problem is not None:
            raise CatalogError(
                path, row, fmt(_("{field}: {problem}"), field="as_of", problem=problem.text())
            )
        return value.strip()
    return value


def prices_from_entries(
    entries: list[tuple[int, dict[str, Any]]],
    path: str,
    catalog: Catalog,
    source_id: str,
    file_date: date,
    today: date | None = None,
) -> PriceImport:
    """Validate price entries (row number, keys of :data:`USER_PRICE_KEYS`) into prices;
    a date given (``as_of``) is checked against ``today`` (:func:`date_problem`; the
    clock's date by default: the CLI passes :func:`whichgpu.catalog.userdata.today`)."""
    if today is None:
        today = date.today()
    source = file_source(source_id, path, _("price file"), file_date)
    if len(entries) > MAX_USER_PRICES:
        raise CatalogError(path, None, fmt(_("more than {n} prices"), n=MAX_USER_PRICES))
    prices = []
    for row, entry in entries:
        for value in entry.values():
            if isinstance(value, str):
                plain_text(value, path, row)
        unknown = [key for key in entry if key not in USER_PRICE_KEYS]
        if unknown:
            raise CatalogError(
                path,
                row,
                fmt(
                    _("unknown column {column!r}; valid columns: {valid}"),
                    column=unknown[0],
                    valid=", ".join(USER_PRICE_KEYS),
                ),
            )
        if "gpu" not in entry:
            raise CatalogError(path, row, _("gpu: field required"))
        if "as_of" in entry:
            entry = {**entry, "as_of": _as_of(entry["as_of"], path, row, today)}
        values = {
            "market": "on-demand",
            "provider": _("you"),
            "as_of": file_date.isoformat(),
            **entry,
            "gpu": _resolve(catalog, str(entry["gpu"]), path, row),
            "source": source_id,
        }
        prices.append(_price(values, path, row))
    return PriceImport(tuple(prices), source)


def _csv_price_rows(text: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    header, entries = csv_rows(text, path, MAX_USER_PRICES)
    if not header:
        raise CatalogError(path, None, _("the file is empty; expected a header row"))
    rows = []
    for line, entry in entries:
        if None in entry:
            raise CatalogError(path, line, _("more cells than the header has"))
        rows.append((line, {k: v for k, v in entry.items() if v not in ("", None)}))
    return rows


def _toml_price_rows(text: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    from whichgpu.untrusted import load_toml

    try:
        data = load_toml(text)  # within the limits on data from outside
    except InvalidInput as error:  # a price file's problem names its file, as the rows do
        raise CatalogError(path, None, error.text()) from None
    return price_tables(data.get("price", []), path)


def price_tables(tables: object, path: str) -> list[tuple[int, dict[str, Any]]]:
    """``[[price]]`` tables of a TOML document, numbered from 1 (the "row" in errors)."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise CatalogError(path, None, _("expected [[price]] tables"))
    return list(enumerate(tables, start=1))


SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price")

#: SkyPilot's cloud directory names (``catalogs/v8/<cloud>/vms.csv``) and the provider each
#: is; a directory not listed is the provider's name as written.
SKYPILOT_PROVIDERS = {
    "aws": "AWS",
    "gcp": "GCP",
    "azure": "Azure",
    "oci": "OCI",
    "lambda": "Lambda",
    "runpod": "RunPod",
    "vast": "Vast.ai",
    "nebius": "Nebius",
    "paperspace": "Paperspace",
    "fluidstack": "FluidStack",
    "cudo": "Cudo Compute",
    "do": "DigitalOcean",
    "hyperbolic": "Hyperbolic",
    "jarvislabs": "Jarvislabs",
    "verda": "DataCrunch/Verda",
    "datacrunch": "DataCrunch/Verda",
    "scp": "Samsung Cloud Platform",
    "ibm": "IBM Cloud",
    "hyperstack": "Hyperstack",
    "seeweb": "Seeweb",
    "shadeform": "Shadeform",
}
#: Clouds whose listings are hosts of a marketplace (each a separate machine), not a
#: provider's own instances.
SKYPILOT_MARKETPLACES = frozenset({"vast"})
#: The longest ``GpuInfo`` cell read (SkyPilot's are under 300 characters).
GPU_INFO_MAX_CHARS = 4096
#: The highest hourly price of one GPU a price record holds (``Price.price_usd_per_h``'s
#: bound in :mod:`whichgpu.catalog.records`): a row above it is an error naming the row,
#: not a file refused for its median.
MAX_USD_PER_GPU_H = 500.0


def skypilot_provider(path: str) -> tuple[str, str]:
    """The cloud directory of a SkyPilot ``vms.csv`` path and the provider it names:
    ``~/.sky/catalogs/v8/lambda/vms.csv`` is Lambda; a bare ``vms.csv`` is "SkyPilot"."""
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    cloud = parts[-2].lower() if len(parts) >= 2 else ""
    if not cloud or cloud in (".", ".."):
        return "", "SkyPilot"
    return cloud, SKYPILOT_PROVIDERS.get(cloud, parts[-2])


def gpu_info(cell: str | None) -> tuple[str, float | None]:
    """The GPU name and memory (in GB, as marketed) of a SkyPilot ``GpuInfo`` cell, a Python
    literal such as ``{'Gpus': [{'Name': 'H100 PCIe', 'MemoryInfo': {'SizeInMiB': 81920}}]}``
    (read with :func:`ast.literal_eval`: data only, never code). RunPod's catalog writes
    gigabytes in ``SizeInMiB`` (80 for an 80 GB card): a figure under 1,024 is read as GB.
    Anything unreadable is no information ("", None)."""
    data = _gpu_info_literal(cell)
    gpus = data.get("Gpus")
    first = gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) else {}
    found = first.get("Name")
    name = found if isinstance(found, str) else ""
    memory = first.get("MemoryInfo")
    size = _size(memory.get("SizeInMiB") if isinstance(memory, dict) else None)
    if size is None:
        return name, None
    return name, _gb(size)


def per_gpu_memory_gb(cell: str | None, count: int) -> tuple[float, ...]:
    """The memory one GPU of a row may have, in GB: ``GpuInfo``'s ``SizeInMiB`` is per GPU
    on most clouds and the instance's total on Vast's, so both readings stand, unless
    ``TotalGpuMemoryInMiB`` is ``count`` times it (Seeweb's 2 × A100 row: 81,920 of
    163,840): then it is per GPU. Nothing when the cell gives no size."""
    _name, memory = gpu_info(cell)
    if memory is None:
        return ()
    if count > 1:
        data = _gpu_info_literal(cell)
        gpus = data.get("Gpus")
        first = gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) else {}
        info = first.get("MemoryInfo")
        size = _size(info.get("SizeInMiB") if isinstance(info, dict) else None)
        total = _size(data.get("TotalGpuMemoryInMiB"))
        if size is not None and total is not None and abs(total / (size * count) - 1) < 0.02:
            return (memory,)
    return (memory, memory / count)


def _gpu_info_literal(cell: str | None) -> dict[str, object]:
    """A ``GpuInfo`` cell read with :func:`ast.literal_eval` (data only, never code); {}
    when unreadable."""
    import ast

    if not cell or len(cell) > GPU_INFO_MAX_CHARS:
        return {}
    try:
        data = ast.literal_eval(cell)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def _size(value: object) -> float | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < 1e9:
        return None
    return float(value)


def _gb(size: float) -> float:
    """RunPod's catalog writes gigabytes in ``SizeInMiB`` (80 for an 80 GB card): a figure
    under 1,024 is GB."""
    return size / 1024 if size >= 1024 else size


def _form(hints: str) -> str | None:
    for form in ("nvl", "pcie", "sxm"):
        if form in hints:
            return form
    return None


def _has_form(gpu: GPU, form: str) -> bool:
    if form == "nvl":
        return "nvl" in gpu.name.lower()
    if form == "pcie":
        return gpu.form_factor.lower().startswith("pcie") and "nvl" not in gpu.name.lower()
    return "sxm" in gpu.form_factor.lower() or "sxm" in gpu.name.lower()


def _model_token(gpu: GPU) -> str:
    """The word of a GPU's name that names the model: ``H100``, ``A100``, ``4090``."""
    return next((w for w in gpu.short_name.split() if any(c.isdigit() for c in w)), gpu.id)


def skypilot_variant(
    catalog: Catalog, base: GPU, hints: str, memory_gb: tuple[float, ...]
) -> GPU | None:
    """The catalog GPU a SkyPilot row denotes: its accelerator name resolves to ``base``;
    the form factor named in the instance type or ``GpuInfo`` (``_pcie``, ``SXM``, ``NVL``)
    and the memory it reports (``memory_gb``: per GPU, or the instance's total over its
    GPUs, as Vast's catalog writes it) choose among the cards of the same chip (Lambda's
    ``H100`` rows are SXM or PCIe by instance type only; RunPod's ``H100`` is
    ``H100 PCIe``). The base is kept when it agrees with both; a variant is another card of
    the base's chip and model (an H100 NVL, not an L40S for a 48 GB RTX 4090). None when no
    carried card agrees, or several do: the row is skipped, never filed under a guess."""
    form = _form(hints.lower())

    def agrees(gpu: GPU) -> bool:
        fits_form = form is None or _has_form(gpu, form)
        fits_memory = not memory_gb or any(abs(gpu.memory_gib / m - 1) <= 0.1 for m in memory_gb)
        return fits_form and fits_memory

    if agrees(base):
        return base
    token = _model_token(base)
    siblings = [g for g in catalog.gpus if g.chip == base.chip and token in g.short_name.split()]
    agreeing = [g for g in siblings if agrees(g)]
    # two cards that agree (an 80 GB A100 whose row names no form: SXM or PCIe?) are a guess
    return agreeing[0] if len(agreeing) == 1 else None


@dataclass
class _Listing:
    gpu: str
    market: Market
    instance: str
    count: int
    note: str | None
    prices: dict[str, float]  # region → lowest per-GPU price there


def parse_skypilot_vms(
    text: str,
    path: str,
    catalog: Catalog,
    source_id: str,
    file_date: date,
    provider: str | None = None,
) -> PriceImport:
    """A SkyPilot catalog ``vms.csv``: one offer per instance type and market, with the
    number of regions that list it, its lowest and its median price per GPU.

    Columns are read by name (clouds order them differently). The GPU is the accelerator
    name resolved in SkyPilot's sense, then its variant by instance type and ``GpuInfo``
    (:func:`skypilot_variant`). The per-GPU price is the instance price over
    ``AcceleratorCount``; a ``SpotPrice`` counts only where it is below the on-demand price
    (RunPod's catalog repeats the on-demand price there). GCP lists a GPU's price apart from
    its VM (``InstanceType`` empty): such rows are the GPUs alone, and say so. CPU rows are
    ignored; accelerators whichgpu does not carry are skipped and listed.
    """
    source = file_source(source_id, path, _("SkyPilot catalog"), file_date)
    header, entries = csv_rows(text, path)
    missing = [column for column in SKYPILOT_COLUMNS if column not in header]
    if missing:
        raise CatalogError(
            path,
            1,
            fmt(_("not a SkyPilot vms.csv: missing column {column!r}"), column=missing[0]),
        )
    cloud, named = skypilot_provider(path)
    provider = provider or named
    marketplace = cloud in SKYPILOT_MARKETPLACES
    listings: dict[tuple[str, str, str], _Listing] = {}
    skipped: dict[str, None] = {}
    for row, entry in entries:
        name = (entry.get("AcceleratorName") or "").strip()
        if not name:
            continue
        count = _number(entry.get("AcceleratorCount"), "AcceleratorCount", path, row)
        if count is None or count <= 0 or count > 64:
            raise CatalogError(path, row, _("AcceleratorCount must be a number above 0, to 64"))
        if count != int(count):
            skipped[f"{name} ×{count:g}"] = None  # a share of one GPU (AWS g6f): not a card
            continue
        instance = (entry.get("InstanceType") or "").strip()
        # Vast names its types {count}x-{GPU}-{vCPUs}-{MiB}, the GPU more exactly than
        # AcceleratorName does (RTX_4070S_Ti under "RTX4070")
        vast = re.match(r"^\d+x-(.+)-\d+-\d+$", instance)
        try:
            base = catalog.resolve(vast.group(1) if vast else name, "skypilot")
        except (UnknownName, AmbiguousName):
            try:
                base = catalog.resolve(name, "skypilot")
            except (UnknownName, AmbiguousName):
                skipped[name] = None
                continue
        info_name, _memory = gpu_info(entry.get("GpuInfo"))
        sizes = per_gpu_memory_gb(entry.get("GpuInfo"), int(count))
        gpu = skypilot_variant(catalog, base, f"{instance} {name} {info_name}", sizes)
        if gpu is None:
            skipped[instance or name] = None
            continue
        note = None
        if not instance:
            instance = f"{name} x{int(count)}"
            note = _("the GPUs alone: the VM's vCPUs and memory are billed on top")
        # Vast.ai's regions lack their city at times (", US, NA"): the parts that are there
        parts = [part.strip() for part in (entry.get("Region") or "").split(",")]
        region = ", ".join(part for part in parts if part) or "-"
        on_demand = _instance_price(entry.get("Price"), "Price", count, path, row)
        spot = _instance_price(entry.get("SpotPrice"), "SpotPrice", count, path, row)
        if spot is not None and on_demand is not None and spot >= on_demand:
            spot = None  # not a discount: the catalog repeats the on-demand price
        markets: tuple[tuple[Market, float | None], ...] = (
            (("marketplace", on_demand),) if marketplace else (("on-demand", on_demand),)
        ) + (("spot", spot),)
        for market, instance_price in markets:
            if instance_price is None or instance_price <= 0:
                continue
            key = (gpu.id, market, instance)
            listing = listings.setdefault(
                key, _Listing(gpu.id, market, instance, int(count), note, {})
            )
            per_gpu = instance_price / count
            listing.prices[region] = min(per_gpu, listing.prices.get(region, per_gpu))
    prices = [
        _offer(listing, provider, source_id, file_date, path) for listing in listings.values()
    ]
    return PriceImport(tuple(prices), source, tuple(skipped))


def _offer(listing: _Listing, provider: str, source_id: str, file_date: date, path: str) -> Price:
    import statistics

    region, low = min(listing.prices.items(), key=lambda item: (item[1], item[0]))
    values = {
        "gpu": listing.gpu,
        "kind": "offer",
        "market": listing.market,
        "provider": provider,
        "region": region,
        "region_count": len(listing.prices),
        "instance": listing.instance,
        "gpus_per_instance": listing.count,
        "price_usd_per_h": low,
        "median_usd_per_h": statistics.median(listing.prices.values()),
        "source": source_id,
        "as_of": file_date.isoformat(),
        "note": listing.note,
    }
    return _price(values, path, None)


def _instance_price(
    cell: str | None, column: str, count: float, path: str, row: int
) -> float | None:
    """An instance's hourly price cell (:func:`_number`), at most ``count`` GPUs at
    :data:`MAX_USD_PER_GPU_H`; a price of 0 or less is no offer (kept as read: skipped)."""
    value = _number(cell, column, path, row)
    if value is not None and value > MAX_USD_PER_GPU_H * count:
        problem = InvalidInput(
            "out_of_range", low=0, high=MAX_USD_PER_GPU_H * count, value=cell
        ).text()
        raise CatalogError(path, row, fmt(_("{field}: {problem}"), field=column, problem=problem))
    return value


def _number(cell: str | None, column: str, path: str, row: int) -> float | None:
    """A numeric cell of a SkyPilot row, None when empty; text, ``nan`` and ``inf`` (and a
    figure too large for a float, which reads as ``inf``) are one error naming the row."""
    if cell is None or cell.strip() == "":
        return None
    try:
        value = float(cell)
    except ValueError:
        raise CatalogError(
            path, row, fmt(_("{column}: not a number (got {value!r})"), column=column, value=cell)
        ) from None
    if not math.isfinite(value):
        problem = InvalidInput("not_finite", value=cell).text()
        raise CatalogError(path, row, fmt(_("{field}: {problem}"), field=column, problem=problem))
    return value
