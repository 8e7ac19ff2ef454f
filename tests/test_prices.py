"""Prices: ranges, ages, user overrides (CSV, TOML, config file) and SkyPilot imports."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from whichgpu.catalog import Catalog
from whichgpu.catalog.prices import age_months, price_range, rent_range
from whichgpu.catalog.records import Price
from whichgpu.catalog.userprices import parse_price_file, parse_skypilot_vms
from whichgpu.comparison import per_dollar
from whichgpu.errors import CatalogError
from whichgpu.userdata import catalog_with_user_data

FIXTURES = Path(__file__).parent / "fixtures"
DAY = date(2026, 11, 29)


@pytest.mark.parametrize(
    ("as_of", "months"),
    [
        ("2026-02-26", 9),  # Crusoe's table: 9 whole months before 2026-11-29
        ("2026-11-30", 0),  # a date in the future is not negative
        ("2026-03", 8),
        ("2025", 16),  # a bare year counts from its middle
        ("undated", None),
    ],
)
def test_age_months(as_of: str, months: int | None) -> None:
    assert age_months(as_of, DAY) == months


def test_a6000_rent_range_over_public_and_article_listings(catalog: Catalog) -> None:
    found = rent_range(catalog, "rtx-a6000")
    assert found is not None
    assert (found.low_usd_per_h, found.high_usd_per_h) == (0.33, 1.09)
    assert found.low.source == "seed-article"
    assert found.high.provider == "Lambda"


def test_a_user_csv_replaces_the_shipped_prices_for_its_gpu_and_market(catalog: Catalog) -> None:
    text = "gpu,price_usd_per_h,market\nrtx a6000,0.49,on-demand\n"
    found = parse_price_file(text, "mine.csv", catalog, "user-prices-1", DAY)
    assert found.prices[0].gpu == "rtx-a6000"
    updated = catalog.with_prices(found.prices, [found.source])
    on_demand = updated.prices_for("rtx-a6000", ["on-demand"])
    assert [p.price_usd_per_h for p in on_demand] == [0.49]
    # other markets and other GPUs keep their shipped listings
    assert updated.prices_for("rtx-a6000", ["marketplace"]) == catalog.prices_for(
        "rtx-a6000", ["marketplace"]
    )
    assert updated.prices_for("h100-sxm") == catalog.prices_for("h100-sxm")
    assert updated.source("user-prices-1") is not None


def test_a_user_toml_price_file(catalog: Catalog) -> None:
    text = '[[price]]\ngpu = "a2000"\nprice_usd_per_h = 0.15\nmarket = "spot"\nprovider = "lab"\n'
    found = parse_price_file(text, "mine.toml", catalog, "user-prices-1", DAY)
    (price,) = found.prices
    assert (price.gpu, price.market, price.provider, price.as_of) == (
        "rtx-a2000-12gb",
        "spot",
        "lab",
        "2026-11-29",
    )


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        (
            "gpu,price_usd_per_h\nrtx a6000,free\n",
            "p.csv",
            "p.csv, row 2: price_usd_per_h: expected `float`, got `str` (got 'free')",
        ),
        (
            "gpu,price_usd_per_h\nrtx a6000,-1\n",
            "p.csv",
            "p.csv, row 2: price_usd_per_h: expected `float` > 0",
        ),
        (
            "gpu,price_usd_per_h\nt4,0.3\na7000,0.5\n",
            "p.csv",
            "p.csv, row 3: unknown GPU 'a7000'; closest matches: ",
        ),
        (
            "gpu,price_usd_per_h,market\nt4,0.3,reserved\n",
            "p.csv",
            "p.csv, row 2: market: invalid enum",
        ),
        ("gpu,cost\nt4,0.3\n", "p.csv", "p.csv, row 2: unknown column 'cost'; valid columns: gpu"),
        ("price_usd_per_h\n0.3\n", "p.csv", "p.csv, row 2: gpu: field required"),
        ("[[price]\n", "p.toml", "p.toml: "),
        ('[[price]]\ngpu = "t4"\n', "p.toml", "p.toml, row 1: "),
        ("", "p.csv", "p.csv: the file is empty"),
    ],
)
def test_malformed_price_files_are_one_error_naming_file_and_row(
    catalog: Catalog, text: str, path: str, message: str
) -> None:
    with pytest.raises(CatalogError) as caught:
        parse_price_file(text, path, catalog, "user-prices-1", DAY)
    assert caught.value.message().startswith(message)
    assert "\n" not in caught.value.message()


def test_skypilot_vms_csv_import(catalog: Catalog) -> None:
    text = (FIXTURES / "vms.csv").read_text()
    found = parse_skypilot_vms(text, "lambda/vms.csv", catalog, "user-skypilot-1", DAY, "lambda")
    rows = [
        (p.gpu, p.market, round(p.price_usd_per_h, 4), p.gpus_per_instance) for p in found.prices
    ]
    assert rows == [
        ("rtx-a6000", "on-demand", 0.8, 1.0),
        ("rtx-a6000", "on-demand", 0.8, 4.0),  # $3.20 / 4 GPUs
        ("rtx-a6000", "spot", 0.4, 4.0),
        ("a100-40gb", "on-demand", 1.29, 8.0),  # SkyPilot's "A100" is the 40GB
    ]
    assert found.skipped == ("GH200",)


def test_skypilot_file_without_its_columns_is_refused(catalog: Catalog) -> None:
    with pytest.raises(CatalogError, match=r"not a SkyPilot vms\.csv: missing column 'Price'"):
        parse_skypilot_vms(
            "InstanceType,AcceleratorName,AcceleratorCount\n", "v.csv", catalog, "s", DAY, "x"
        )


def test_skypilot_bad_price_names_the_row(catalog: Catalog) -> None:
    text = "InstanceType,AcceleratorName,AcceleratorCount,Price\nx,A6000,1,cheap\n"
    with pytest.raises(CatalogError) as caught:
        parse_skypilot_vms(text, "v.csv", catalog, "s", DAY, "x")
    assert caught.value.message() == "v.csv, row 2: Price: not a number (got 'cheap')"


def test_the_config_file_adds_files_and_inline_prices(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prices.csv").write_text("gpu,price_usd_per_h,market\nl4,0.31,spot\n")
    config = tmp_path / "config.toml"
    config.write_text('prices = ["prices.csv"]\n[[price]]\ngpu = "t4"\nprice_usd_per_h = 0.11\n')
    monkeypatch.setenv("WHICHGPU_CONFIG", str(config))
    updated, skipped = catalog_with_user_data(catalog, [], [])
    assert [p.price_usd_per_h for p in updated.prices_for("l4", ["spot"])] == [0.31]
    assert [p.price_usd_per_h for p in updated.prices_for("t4", ["on-demand"])] == [0.11]
    assert skipped == ()


def test_an_unknown_config_key_is_refused(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('price_files = ["x.csv"]\n')
    monkeypatch.setenv("WHICHGPU_CONFIG", str(config))
    with pytest.raises(CatalogError, match="unknown key 'price_files'; valid keys: prices"):
        catalog_with_user_data(catalog, [], [])


prices = st.floats(min_value=0.01, max_value=100, allow_nan=False)


def listing(value: float) -> Price:
    return Price(
        gpu="t4", market="spot", provider="x", price_usd_per_h=value, source="s", as_of="2026"
    )


@given(st.lists(prices, min_size=1, max_size=20))
def test_a_range_holds_every_listing(values: list[float]) -> None:
    found = price_range([listing(v) for v in values])
    assert found is not None
    assert found.low_usd_per_h == min(values)
    assert found.high_usd_per_h == max(values)
    assert found.count == len(values)


@given(prices, prices, st.floats(min_value=0.1, max_value=1e4))
def test_value_per_dollar_is_ordered_and_inverse_to_price(
    a: float, b: float, amount: float
) -> None:
    found = price_range([listing(a), listing(b)])
    pair = per_dollar(amount, found)
    assert pair is not None
    assert pair[0] <= pair[1]
    assert pair[1] * min(a, b) == pytest.approx(amount)
