"""The loader rejects bad data with one error naming the file and the row."""

from __future__ import annotations

import csv
import io
from importlib import resources

import pytest

from whichgpu.catalog import loader
from whichgpu.catalog.records import GPU, Price, Source
from whichgpu.catalog.store import FILES, MODELS, build_catalog, data_path
from whichgpu.errors import CatalogError


def shipped(name: str) -> str:
    return (resources.files("whichgpu.catalog") / "data" / FILES[name]).read_text("utf-8")


def edit_gpus(change: dict[str, str], row: int = 0) -> str:
    """gpus.csv with ``change`` applied to data row ``row`` (0 = the first GPU)."""
    return edit_table("gpus", change, row)


def edit_table(name: str, change: dict[str, str], row: int = 0) -> str:
    """A shipped table's CSV with ``change`` applied to data row ``row``."""
    rows = list(csv.DictReader(io.StringIO(shipped(name))))
    rows[row].update(change)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def load_with(**texts: str) -> None:
    tables = {
        name: loader.parse_rows(texts.get(name, shipped(name)), data_path(name), model)
        for name, model in MODELS.items()
    }
    build_catalog(tables)  # type: ignore[arg-type]


def error_of(**texts: str) -> str:
    with pytest.raises(CatalogError) as caught:
        load_with(**texts)
    return caught.value.message()


@pytest.mark.parametrize(
    ("change", "row", "expected"),
    [
        # a negative number is out of range
        ({"tdp_w": "-5"}, 0, "gpus.csv, row 2: tdp_w: expected `float` > 0.0 (got '-5')"),
        # a word where a number belongs
        ({"cuda_cores": "many"}, 1, "gpus.csv, row 3: cuda_cores: expected `int | null`"),
        # an unknown enum value
        ({"vendor_fp16_tensor_basis": "sparsity"}, 0, "vendor_fp16_tensor_basis: invalid enum"),
        # a sparse figure typed as dense fails the cross-field check
        (
            {"fp16_tensor_dense_tflops": "624", "fp16_fp16acc_tensor_dense_tflops": "624"},
            0,
            "implies 312 dense TFLOPS",
        ),
        # FP64 above FP32
        ({"fp64_tflops": "40"}, 3, "gpus.csv, row 5: fp64_tflops is above fp32_tflops"),
        # a malformed date
        ({"as_of": "June 2021"}, 0, "as_of: expected `str` matching"),
        # a source id that is not in sources.csv
        (
            {"source": "nvidia-made-up"},
            2,
            "gpus.csv, row 4: source 'nvidia-made-up' is not a known",
        ),
    ],
)
def test_bad_gpu_rows_name_file_row_and_field(
    change: dict[str, str], row: int, expected: str
) -> None:
    assert expected in error_of(gpus=edit_gpus(change, row))


def test_duplicate_ids_are_refused_with_both_rows() -> None:
    text = edit_gpus({"id": "a100-80gb-sxm"}, row=1)
    assert error_of(gpus=text) == (
        "catalog/data/gpus.csv, row 3: duplicate id 'a100-80gb-sxm' (first on row 2)"
    )


def test_unknown_columns_are_refused() -> None:
    text = shipped("gpus").replace("fp32_tflops,", "fp32_tflop,", 1)
    assert "unknown column 'fp32_tflop'" in error_of(gpus=text)


def test_missing_required_columns_are_refused() -> None:
    rows = list(csv.reader(io.StringIO(shipped("gpus"))))
    index = rows[0].index("tdp_w")
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([r[:index] + r[index + 1 :] for r in rows])
    assert "missing required column 'tdp_w'" in error_of(gpus=out.getvalue())


def test_a_row_with_too_many_cells_is_refused() -> None:
    text = shipped("sources").rstrip("\n") + ",extra,cells\n"
    assert "cells but the header has 7" in error_of(sources=text)


def test_a_price_for_an_unknown_gpu_is_a_dangling_reference() -> None:
    text = shipped("prices") + "a100-90gb,offer,spot,Acme,,,,1,1.0,,seed-article,undated,\n"
    message = error_of(prices=text)
    assert message.startswith("catalog/data/prices.csv, row ")
    assert "gpu 'a100-90gb' is not a known GPU id" in message


def test_a_citation_of_an_unknown_field_is_refused() -> None:
    text = shipped("field_sources") + "rtx-a6000,fp17_tflops,nvidia-a40-datasheet,\n"
    assert "field 'fp17_tflops' is not a known GPU field" in error_of(field_sources=text)


def test_an_alias_to_an_unknown_gpu_is_refused() -> None:
    text = shipped("aliases") + "a7000,rtx-a7000,user,\n"
    assert "gpu 'rtx-a7000' is not a known GPU id" in error_of(aliases=text)


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(CatalogError, match="the file is empty"):
        loader.parse_rows("", "x.csv", Source)


def test_records_are_frozen() -> None:
    price = loader.validate(
        Price,
        {
            "gpu": "t4",
            "market": "spot",
            "provider": "x",
            "price_usd_per_h": "0.2",
            "source": "s",
            "as_of": "2026",
        },
        "x.csv",
        2,
    )
    with pytest.raises(AttributeError):
        price.price_usd_per_h = 0.1  # type: ignore[misc]
    assert isinstance(price.price_usd_per_h, float)


def test_gpu_model_rejects_unknown_fields() -> None:
    with pytest.raises(CatalogError, match="unknown field `colour`"):
        loader.validate(GPU, {"colour": "green"}, "x.csv", 2)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_table_reads_as_csv_dictreader_reads_it(name: str) -> None:
    """parse_rows reads rows with csv.reader (a cold start's twelve tables): the records
    and line numbers are DictReader's, a blank line skipped and a short row's missing
    cells not given."""
    lines = shipped(name).splitlines(keepends=True)
    # a row without its trailing empty cells (where it ends with any), and a blank line
    cells = max(csv.reader(io.StringIO("".join(lines[1:]))), key=lambda row: row.count(""))
    while cells and not cells[-1]:
        cells.pop()
    short = io.StringIO()
    csv.writer(short, lineterminator="\n").writerow(cells)
    text = "".join([lines[0], lines[1], "\n", *lines[2:], short.getvalue()])
    reader = csv.DictReader(io.StringIO(text))
    expected = [(reader.line_num, {k: v for k, v in row.items() if v}) for row in reader]
    parsed = loader.parse_rows(text, data_path(name), MODELS[name])
    assert [line for line, _record in parsed] == [line for line, _cells in expected]
    model = MODELS[name]
    assert [record for _line, record in parsed] == [
        loader.validate(model, cells, name, line) for line, cells in expected
    ]


def test_shipped_data_is_read_beside_the_package() -> None:
    """The catalog's tables are found beside the package (importlib.resources' readers
    cost a cold start ~9 ms): the same file importlib.resources names."""
    from pathlib import Path

    from whichgpu.files import shipped

    found = shipped("whichgpu.catalog", "data", "gpus.csv")
    assert isinstance(found, Path)
    expected = resources.files("whichgpu.catalog") / "data" / "gpus.csv"
    assert found.read_text("utf-8") == expected.read_text("utf-8")
