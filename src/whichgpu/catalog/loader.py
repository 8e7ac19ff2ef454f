"""Read CSV tables into records, failing on the first bad row with its file and row number.

Parsing is pure (text in, records out); only :func:`read_package_table` touches the package's
data directory, and only when called.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import TypeVar

import msgspec

from whichgpu.catalog.records import Record
from whichgpu.errors import CatalogError
from whichgpu.files import shipped
from whichgpu.i18n import _, fmt

R = TypeVar("R", bound=Record)

#: A record with the (1-based, header = 1) line it was read from, for later cross-checks.
Row = tuple[int, R]


def explain_validation_error(error: msgspec.ValidationError, values: Mapping[str, object]) -> str:
    """msgspec's message as ``field: problem (got value)``: "Expected `float` > 0.0 - at
    `$.tdp_w`" becomes "tdp_w: expected `float` > 0.0 (got '-5')"."""
    text = str(error)
    problem, _sep, where = text.partition(" - at `$.")
    if not where:
        return text[:1].lower() + text[1:]
    name = where.rstrip("`").split(".")[0].split("[")[0]
    problem = problem[:1].lower() + problem[1:]
    if name in values:
        return fmt(
            _("{field}: {problem} (got {value!r})"), field=name, problem=problem, value=values[name]
        )
    return fmt(_("{field}: {problem}"), field=name, problem=problem)


def validate(model: type[R], values: Mapping[str, object], path: str, row: int | None) -> R:
    """One record from text cells (lax conversion: "19.5" is a float), or a CatalogError."""
    try:
        return msgspec.convert(values, model, strict=False)
    except msgspec.ValidationError as error:
        raise CatalogError(path, row, explain_validation_error(error, values)) from None


def parse_rows(text: str, path: str, model: type[R]) -> list[Row[R]]:
    """Parse CSV ``text`` into ``model`` records. Empty cells are "not given"."""
    # csv.reader, not DictReader (whose rows are built in Python): a cold start reads
    # twelve tables
    reader = csv.reader(io.StringIO(text))
    header: Sequence[str] = next(reader, [])
    if not header:
        raise CatalogError(path, None, _("the file is empty; expected a header row"))
    known = set(model.__struct_fields__)
    unknown = [name for name in header if name not in known]
    if unknown:
        raise CatalogError(
            path,
            1,
            fmt(
                _("unknown column {column!r}; valid columns: {valid}"),
                column=unknown[0],
                valid=", ".join(model.__struct_fields__),
            ),
        )
    missing = [name for name in model.required_fields() if name not in header]
    if missing:
        raise CatalogError(path, 1, fmt(_("missing required column {column!r}"), column=missing[0]))
    lines: list[int] = []
    cells: list[dict[str, str]] = []
    for row in reader:
        if not row:
            continue  # a blank line, as DictReader skips it
        if len(row) > len(header):
            raise CatalogError(
                path,
                reader.line_num,
                fmt(
                    _("{count} cells but the header has {expected}"),
                    count=len(row),
                    expected=len(header),
                ),
            )
        lines.append(reader.line_num)
        # a short row: its missing cells not given, as DictReader leaves them
        cells.append({key: value for key, value in zip(header, row, strict=False) if value})
    try:  # the whole table in one conversion: msgspec builds the record type's plan once
        records = msgspec.convert(cells, list[model], strict=False)  # type: ignore[valid-type]
    except msgspec.ValidationError:
        # name the first bad row and field, as one row's conversion does
        records = [validate(model, v, path, line) for line, v in zip(lines, cells, strict=True)]
    return list(zip(lines, records, strict=True))


def read_package_table(name: str, model: type[R]) -> list[Row[R]]:
    """Read ``whichgpu/catalog/data/<name>``, the shipped catalog."""
    resource = shipped("whichgpu.catalog", "data", name)
    return parse_rows(resource.read_text(encoding="utf-8"), f"catalog/data/{name}", model)
