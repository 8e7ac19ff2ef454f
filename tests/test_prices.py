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
from whichgpu.catalog.userdata import catalog_with_user_data
from whichgpu.catalog.userprices import (
    gpu_info,
    parse_price_file,
    parse_skypilot_vms,
    per_gpu_memory_gb,
)
from whichgpu.commands.compare import per_dollar
from whichgpu.errors import CatalogError

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


def test_a6000_rent_range_is_over_offers_not_the_article_s_claim(catalog: Catalog) -> None:
    """The article's $0.33 is a claim: listed (``show``), checked (``compare``), not ranked."""
    found = rent_range(catalog, "rtx-a6000")
    assert found is not None
    assert (found.low_usd_per_h, found.high_usd_per_h) == (0.4, 1.09)
    assert found.low.provider == "Hyperstack" and found.high.provider == "Lambda"
    assert found.low.market == "spot" and found.low.as_of == "2026-08-26"
    claims = [p for p in catalog.listings_for("rtx-a6000") if p.kind == "claim"]
    assert sorted(p.price_usd_per_h for p in claims) == [0.33, 0.8]
    assert {p.source for p in claims} == {"seed-article"}


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
    found = parse_skypilot_vms(text, "lambda/vms.csv", catalog, "user-skypilot-1", DAY)
    rows = [
        (p.gpu, p.market, round(p.price_usd_per_h, 4), p.gpus_per_instance, p.provider)
        for p in found.prices
    ]
    assert rows == [
        ("rtx-a6000", "on-demand", 0.8, 1, "Lambda"),  # the provider from the cloud directory
        ("rtx-a6000", "on-demand", 0.8, 4, "Lambda"),  # $3.20 / 4 GPUs
        ("rtx-a6000", "spot", 0.4, 4, "Lambda"),
        ("a100-40gb", "on-demand", 1.29, 8, "Lambda"),  # SkyPilot's "A100" is the 40GB
        ("gh200", "on-demand", 1.49, 1, "Lambda"),
    ]
    assert found.skipped == ()


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


SKYPILOT = FIXTURES / "skypilot"


def _imported(catalog: Catalog, relative: str) -> list[Price]:
    path = SKYPILOT / relative
    return list(parse_skypilot_vms(path.read_text(), str(path), catalog, "s", DAY).prices)


def _by_instance(prices: list[Price]) -> dict[tuple[str, str], Price]:
    return {(p.instance or "", p.market): p for p in prices}


def test_lambda_excerpt_tells_h100_sxm_from_pcie_by_instance_type(catalog: Catalog) -> None:
    """Real rows of SkyPilot's catalogs/v8/lambda/vms.csv: Lambda names every H100 'H100';
    only the instance type says SXM5 or PCIe."""
    rows = _by_instance(_imported(catalog, "v8/lambda/vms.csv"))
    assert rows[("gpu_1x_h100_pcie", "on-demand")].gpu == "h100-pcie"
    for shape in ("1x", "2x", "4x", "8x"):
        assert rows[(f"gpu_{shape}_h100_sxm5", "on-demand")].gpu == "h100-sxm"
    assert rows[("gpu_8x_a100_80gb_sxm4", "on-demand")].gpu == "a100-80gb-sxm"
    assert rows[("gpu_1x_a100_sxm4", "on-demand")].gpu == "a100-40gb"  # 40960 MiB, SXM4
    eight = rows[("gpu_8x_h100_sxm5", "on-demand")]
    assert (eight.provider, eight.gpus_per_instance) == ("Lambda", 8)
    assert eight.instance_usd_per_h == pytest.approx(31.92)
    assert eight.region_count == 3  # three regions list it in the excerpt, one row here
    assert not any(p.market == "spot" for p in rows.values())  # Lambda lists no spot price


def test_runpod_excerpt_reads_the_variant_from_gpu_info(catalog: Catalog) -> None:
    """RunPod's plain 'H100' is the PCIe card and 'A100-80GB' the PCIe A100 (GpuInfo says
    so); its SpotPrice repeats the on-demand price and is no spot offer."""
    prices = _imported(catalog, "v8/runpod/vms.csv")
    rows = _by_instance(prices)
    assert rows[("8x_H100_SECURE", "on-demand")].gpu == "h100-pcie"
    assert rows[("8x_H100-SXM_SECURE", "on-demand")].gpu == "h100-sxm"
    assert rows[("1x_A100-80GB_SECURE", "on-demand")].gpu == "a100-80gb-pcie"
    assert rows[("2x_A100-80GB-SXM_SECURE", "on-demand")].gpu == "a100-80gb-sxm"
    assert rows[("8x_H200-SXM_SECURE", "on-demand")].gpu == "h200"
    assert {p.provider for p in prices} == {"RunPod"}
    assert not any(p.market == "spot" for p in prices)
    one = rows[("1x_A100-80GB_SECURE", "on-demand")]
    assert (one.price_usd_per_h, one.region_count) == (1.39, 3)  # CA, IN, US in the excerpt


def test_runpod_v7_spot_below_on_demand_is_a_spot_offer(catalog: Catalog) -> None:
    rows = _by_instance(_imported(catalog, "v7/runpod/vms.csv"))
    spot, on_demand = (
        rows[("1x_A100-80GB_SECURE", "spot")],
        rows[("1x_A100-80GB_SECURE", "on-demand")],
    )
    assert (spot.price_usd_per_h, on_demand.price_usd_per_h) == (1.19, 1.64)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (
            "{'Gpus': [{'Name': 'H100 PCIe', 'MemoryInfo': {'SizeInMiB': 81920}}]}",
            ("H100 PCIe", 80.0),
        ),
        ("{'Gpus': [{'Name': 'A100 SXM', 'MemoryInfo': {'SizeInMiB': 80}}]}", ("A100 SXM", 80.0)),
        ("A100-80GB", ("", None)),  # RunPod v7: a bare name
        ("__import__('os').system('true')", ("", None)),  # data only, never code
        ("[" * 5000, ("", None)),
        ("", ("", None)),
    ],
)
def test_gpu_info_cells(cell: str, expected: tuple[str, float | None]) -> None:
    assert gpu_info(cell) == expected


# prices update: recorded fixtures (file:// URLs), never the network --------------------
def _update(*args: str) -> object:
    from tests.conftest import run_cli

    url = (SKYPILOT / "v8").resolve().as_uri()
    return run_cli("prices", "update", "--url", url, *args)


def test_prices_update_writes_a_dated_snapshot_the_next_recommend_uses() -> None:
    import json
    import os

    from tests.conftest import run_cli

    result = _update("--cloud", "lambda", "--cloud", "runpod", "--json")
    assert result.code == 0, result.stderr  # type: ignore[attr-defined]
    doc = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert doc["fetched"] == "2026-11-29" and doc["offers"] == {"lambda": 20, "runpod": 38}
    snapshot = Path(os.environ["WHICHGPU_CACHE"]) / "prices"
    assert (snapshot / "snapshot.json").is_file() and (snapshot / "lambda" / "vms.csv").is_file()
    answer = json.loads(
        run_cli(
            "recommend", "--task", "lora", "-m", "llama-2-7b", "--tokens", "1e8", "--json"
        ).stdout
    )
    origin = answer["assumptions"][-1]
    assert origin["code"] == "assume_prices_snapshot"
    assert origin["params"]["fetched"] == "2026-11-29"
    assert origin["params"]["providers"] == "Lambda, RunPod"
    status = run_cli("prices", "status")
    assert "Price snapshot of 2026-11-29 (0 days old)" in status.stdout
    # the snapshot's Lambda offers replaced the shipped ones, and carry its date
    shown = json.loads(run_cli("show", "h100", "--json").stdout)["gpu"]["prices"]
    lambda_rows = [p for p in shown if p["provider"] == "Lambda"]
    assert lambda_rows and {p["as_of"] for p in lambda_rows} == {"2026-11-29"}


def test_prices_update_reads_each_cloud_at_its_version_and_dates_its_offers_so(
    tmp_path: Path,
) -> None:
    """Issue 47, item 3: with a ``{commit}`` in the URL, each cloud is read at its latest
    commit (GitHub's "List commits", a recorded-shape fixture) and its offers carry that
    commit's day, not the day they were read; the snapshot records the version, ``prices
    status`` shows its date and age, and a version lookup that fails changes nothing."""
    import json
    import os
    import shutil

    from tests.conftest import run_cli

    sha = "3f9c2a7e1b0d4c6a8e5f7a9b1c3d5e7f9a1b3c5d"
    for cloud in ("lambda", "runpod"):
        (tmp_path / sha / cloud).mkdir(parents=True)
        shutil.copy(SKYPILOT / "v8" / cloud / "vms.csv", tmp_path / sha / cloud / "vms.csv")
    template = tmp_path.as_uri() + "/{commit}"
    versions = (SKYPILOT / "commits").resolve().as_uri() + "/{cloud}.json"
    args = ("prices", "update", "--url", template, "--versions-url", versions,
            "--cloud", "lambda", "--cloud", "runpod")  # fmt: skip
    result = run_cli(*args, "--json")
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["versions"]["lambda"]["commit"] == sha
    assert doc["versions"]["runpod"]["committed"] == "2026-11-20"
    assert doc["versions"]["runpod"]["age_days"] == 9  # the clock is 2026-11-29
    shown = json.loads(run_cli("show", "h100", "--json").stdout)["gpu"]["prices"]
    assert {p["as_of"] for p in shown if p["provider"] == "Lambda"} == {"2026-11-20"}
    status = run_cli("prices", "status")
    assert "version 3f9c2a7 of 2026-11-20 (9 days old)" in status.stdout
    snapshot = Path(os.environ["WHICHGPU_CACHE"]) / "prices" / "snapshot.json"
    before = snapshot.read_text()
    (tmp_path / "broken.json").write_text('{"message": "API rate limit exceeded"}')
    broken = run_cli(*args[:4], "--versions-url", (tmp_path / "broken.json").as_uri())
    assert broken.code == 2 and "not a list of commits" in broken.stderr
    assert snapshot.read_text() == before


def test_prices_update_with_the_network_down_is_one_line_and_changes_nothing() -> None:
    import os

    from tests.conftest import run_cli

    assert _update("--cloud", "lambda").code == 0  # type: ignore[attr-defined]
    snapshot = Path(os.environ["WHICHGPU_CACHE"]) / "prices" / "snapshot.json"
    before = snapshot.read_text()
    down = run_cli("prices", "update", "--url", "http://127.0.0.1:9/", "--timeout", "2")
    assert down.code == 2 and down.stdout == ""
    assert down.stderr.count("\n") == 1 and "could not fetch" in down.stderr
    assert "nothing changed" in down.stderr
    assert snapshot.read_text() == before
    missing = _update("--cloud", "no-such-cloud")
    assert missing.code == 2 and snapshot.read_text() == before  # type: ignore[attr-defined]


def test_a_catalog_that_is_not_skypilot_s_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    import os

    from tests.conftest import run_cli

    (tmp_path / "lambda").mkdir()
    (tmp_path / "lambda" / "vms.csv").write_text("not,a,catalog\n1,2,3\n")
    result = run_cli("prices", "update", "--url", tmp_path.as_uri(), "--cloud", "lambda")
    assert result.code == 2 and "not a SkyPilot vms.csv" in result.stderr
    assert not (Path(os.environ["WHICHGPU_CACHE"]) / "prices").exists()


def test_total_gpu_memory_settles_whether_memory_info_is_per_gpu() -> None:
    seeweb = (
        "{'Gpus': [{'Name': 'A100', 'Count': 2.0, 'MemoryInfo': {'SizeInMiB': 81920}}], "
        "'TotalGpuMemoryInMiB': 163840}"
    )
    assert per_gpu_memory_gb(seeweb, 2) == (80.0,)
    vast = (
        "{'Gpus': [{'Name': 'H200', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 287542}}], "
        "'TotalGpuMemoryInMiB': 287542}"
    )
    total = 287542 / 1024
    assert per_gpu_memory_gb(vast, 2) == (total, total / 2)  # the instance's total, or not
    assert per_gpu_memory_gb(None, 4) == ()


def test_a_row_that_names_no_form_between_two_cards_is_skipped(catalog: Catalog) -> None:
    """Seeweb's 80 GB A100 names neither SXM nor PCIe: both cards agree, so it is a guess."""
    text = (Path(__file__).parent.parent / "validation/skypilot/seeweb-0082b04/vms.csv").read_text()
    result = parse_skypilot_vms(text, "catalogs/v8/seeweb/vms.csv", catalog, "s", date(2026, 12, 1))
    assert "ECS1GPU3" in result.skipped and "ECS2GPU3" in result.skipped
    assert not any(p.gpu.startswith("a100") for p in result.prices)
    assert {p.gpu for p in result.prices} >= {"a30", "h200", "l4", "l40s", "rtx-a6000"}


def test_a_dated_offer_outranks_an_undated_one(catalog: Catalog) -> None:
    """Issue 47: a price without a date is a guess. Of one shape the dated offers set the
    price (dated_first), and across options those priced on a dated offer rank first: the
    LoRA fine-tune of the README picks a dated offer, though 8 × V100 on an undated Vast.ai
    listing would cost less, and that one is ranked after every dated option."""
    from whichgpu.catalog.prices import dated_first
    from whichgpu.commands.recommend import recommend
    from whichgpu.inputs.requests import Component, Constraints, Workload

    shipped = catalog.prices_for("rtx-a6000")
    assert all(p.as_of != "undated" for p in dated_first(shipped))
    undated = [p for p in shipped if p.as_of == "undated"]
    assert dated_first(undated) == undated  # none dated: all of them, marked
    job = Component(kind="lora", model="llama-2-7b", tokens=1e8)
    result = recommend(catalog, Workload((job,), Constraints()))
    assert result.pick is not None and result.pick.price_as_of not in (None, "undated")
    ranked = [o for o in result.options if o.feasible and o.price_as_of is not None]
    first_undated = next(i for i, o in enumerate(ranked) if o.price_as_of == "undated")
    assert all(o.price_as_of == "undated" for o in ranked[first_undated:])
    v100 = next(o for o in ranked if o.gpu.id == "v100-sxm2-16gb" and o.gpus == 8
                and o.market == "marketplace")  # fmt: skip
    assert v100.price_as_of == "undated" and (v100.cost_usd or 0) < (result.pick.cost_usd or 0)


def test_gcp_is_ranked_on_its_all_in_prices(catalog: Catalog) -> None:
    """Issue 47: GCP's SkyPilot rows were the GPU component alone (the host billed on top),
    ranked against every other cloud's whole VM: H100 4.20 shipped against 10.98 all-in.
    They are left out; GCP ranks on its dated all-in rows."""
    gcp = [p for gpu in catalog.gpus for p in catalog.prices_for(gpu.id) if p.provider == "GCP"]
    assert gcp and all(p.source != "skypilot-catalog-gcp" and p.as_of != "undated" for p in gcp)
    h100 = min(p.price_usd_per_h for p in gcp if p.gpu == "h100-sxm" and p.market == "on-demand")
    assert h100 == pytest.approx(10.9791)


def test_buying_ranks_no_claim_and_names_the_rental_it_breaks_even_against(
    catalog: Catalog,
) -> None:
    """Issue 47, item 4: the article's unsourced $500 used A2000 (C13) is a claim: listed,
    not ranked (it ranks in the article's own scenario); the break-even names the rental it
    is against, with its date."""
    from whichgpu.commands.recommend import recommend
    from whichgpu.commands.recommend.options import hw_text
    from whichgpu.inputs.requests import Component, Constraints, Workload

    a2000 = catalog.purchase_for("rtx-a2000-12gb")
    assert a2000 and all(p.kind == "claim" for p in a2000)
    assert catalog.purchases_ranked("rtx-a2000-12gb") == []
    job = Component(kind="inference", model="llama-3.1-8b", quant="int4", services=7, hours=100)
    result = recommend(catalog, Workload((job,), Constraints(mode="buy")))
    assert all(o.gpu.id != "rtx-a2000-12gb" or o.purchase_usd is None for o in result.options)
    assert result.pick is not None and result.pick.rent_compared is not None
    said = next(n for n in result.reasons if n.code == "reason_buy")
    params = dict(said.params)
    assert params["provider"] == result.pick.rent_compared.provider and params["as_of"] != ""
    # and against the rental that would do the same job best (another GPU, here)
    versus = dict(next(n for n in result.reasons if n.code == "reason_buy_vs_rental").params)
    rented = recommend(catalog, Workload((job,), Constraints(mode="rent"))).pick
    assert rented is not None and versus["rented"] == hw_text(rented)
    assert versus["usd_per_h"] == pytest.approx(rented.usd_per_h, abs=0.01)
    assert 0 < float(versus["months"]) < 120


def test_prices_status_shows_each_providers_dates_and_ages() -> None:
    """Issue 47, item 3: with the shipped prices in use, `prices status` says how old each
    provider's offers are (the newest and oldest day seen, how many have no date), the
    staleest first."""
    import json

    from tests.conftest import run_cli

    doc = json.loads(run_cli("prices", "status", "--json").stdout)
    by = {p["provider"]: p for p in doc["providers"]}
    assert by["Azure"]["newest"] == "2026-11-09" and by["Azure"]["undated"] == 0
    assert by["Hyperbolic"]["newest"] is None and by["Hyperbolic"]["undated"] == 1
    order = [p["newest"] for p in doc["providers"] if p["newest"] is not None]
    assert order == sorted(order) and doc["providers"][0]["newest"] is None
    text = run_cli("prices", "status").stdout
    assert "Azure: offers 6, seen 2026-11-09 to 2026-11-09" in text


def test_a_later_dated_street_price_supersedes_an_older_one(catalog: Catalog) -> None:
    """Buying ranks on street prices as they stand: the RTX 4090's 2022 launch price
    ($1,599) gives way to 2026's street price ($1,800-2,000 new), an A100's undated or
    year-only used figure to a dated 2026 one; every ranked purchase offer has a date and a
    source, and the article's claims stay out of the ranking."""
    current = catalog.purchases_current("rtx-4090")
    new = [p for p in current if p.condition == "new"]
    assert [p.low_usd for p in new] == [1800] and new[0].as_of == "2026-05"
    used = [p for p in catalog.purchases_ranked("a100-80gb-sxm") if p.condition == "used"]
    assert [(p.low_usd, p.as_of) for p in used] == [(4000, "2026-03-20")]
    for gpu in catalog.gpus:
        for p in catalog.purchases_ranked(gpu.id):
            assert p.kind == "offer" and p.source
