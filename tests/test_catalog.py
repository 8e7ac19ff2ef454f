"""The shipped catalog: it loads, every figure is cited and dated, and the figures agree with
the rules NVIDIA documents (FP64 rate by compute capability, dense = sparse / 2)."""

from __future__ import annotations

import re

import pytest

from whichgpu.catalog import Catalog
from whichgpu.catalog.records import GPU_SPEC_FIELDS

REQUIRED = [
    "a100-80gb-sxm",
    "a100-80gb-pcie",
    "a100-40gb",
    "rtx-a6000",
    "rtx-a2000-12gb",
    "a10",
    "a40",
    "l4",
    "l40s",
    "t4",
    "v100-sxm2-16gb",
    "v100-sxm2-32gb",
    "h100-sxm",
    "h100-pcie",
    "h200",
    "b200",
    "rtx-4090",
    "rtx-3090",
    # issue 15: the cards the article's readers compare
    "rtx-a4000",
    "rtx-a4500",
    "rtx-a5000",
    "rtx-a5500",
    "rtx-a2000-6gb",
    "a16",
    "a30",
    "a100-40gb-pcie",
    "l40",
    "rtx-4000-ada",
    "rtx-5000-ada",
    "rtx-6000-ada",
    "rtx-pro-6000-blackwell",
    "rtx-pro-6000-blackwell-max-q",
    "h100-nvl",
    "gh200",
    "mi300x",
    "mi325x",
    "rtx-3060-12gb",
    "rtx-3080",
    "rtx-3090-ti",
    "rtx-4060-ti-16gb",
    "rtx-4070-ti-super",
    "rtx-4080",
    "rtx-5090",
    "rtx-5080",
    "rtx-4070-super",
    # issue 47: the GPUs of late 2026 (B300 in its HGX board, a GB200 NVL72's GPU, MI355X)
    "b300",
    "gb200",
    "mi355x",
]


def test_the_issue_s_gpus_are_all_there(catalog: Catalog) -> None:
    assert [g.id for g in catalog.gpus] == REQUIRED


def test_every_figure_has_a_source_with_an_address_and_a_date(catalog: Catalog) -> None:
    for gpu in catalog.gpus:
        for field in GPU_SPEC_FIELDS:
            citation = catalog.citation(gpu.id, field)
            assert citation.source.url, (gpu.id, field)
            assert re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?|undated", citation.as_of)
            assert citation.source.retrieved.year >= 2026


def test_every_price_has_a_known_source_and_a_date(catalog: Catalog) -> None:
    for price in catalog.prices:
        assert catalog.source(price.source) is not None, price
        assert price.as_of
    for purchase in catalog.purchase_prices:
        assert catalog.source(purchase.source) is not None


# FP64 results per clock per SM relative to FP32 (CUDA C++ Programming Guide, throughput of
# native arithmetic instructions): 1:2 on GV100/GA100/GH100, 1:32 on Turing, 1:64 on GA10x/Ada.
FP64_RATIO = {"7.0": 1 / 2, "7.5": 1 / 32, "8.0": 1 / 2, "8.6": 1 / 64, "8.9": 1 / 64, "9.0": 1 / 2,
              "10.0": 1 / 2, "12.0": 1 / 64}  # fmt: skip
AMD = ("mi300x", "mi325x", "mi355x")
#: Blackwell Ultra cut FP64 to 1.25 TFLOPS a GPU (the HGX B300's 10 for 8; NVIDIA's Blackwell
#: Ultra datasheet), no ratio of the programming guide's table
NO_RATIO = ("b200", "b300")


@pytest.mark.parametrize("gpu_id", [g for g in REQUIRED if g not in (*NO_RATIO, *AMD)])
def test_fp64_follows_the_compute_capability_rate(catalog: Catalog, gpu_id: str) -> None:
    gpu = catalog.gpu(gpu_id)
    assert gpu.compute_capability is not None
    expected = gpu.fp32_tflops * FP64_RATIO[gpu.compute_capability]
    assert gpu.fp64_tflops == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize(
    ("gpu_id", "chip", "capability"),
    [
        ("a100-80gb-sxm", "GA100", "8.0"),  # C14 is right for the A100 ...
        ("rtx-a6000", "GA102", "8.6"),  # ... and wrong for GA102
        ("rtx-a2000-12gb", "GA106", "8.6"),  # ... and GA106
        ("l40s", "AD102", "8.9"),
        ("h100-sxm", "GH100", "9.0"),
        ("b200", "GB100 (two dies)", "10.0"),
    ],
)
def test_chips_and_compute_capabilities(
    catalog: Catalog, gpu_id: str, chip: str, capability: str
) -> None:
    gpu = catalog.gpu(gpu_id)
    assert (gpu.chip, gpu.compute_capability) == (chip, capability)


@pytest.mark.parametrize(
    ("gpu_id", "fp32_acc", "fp16_acc"),
    [
        ("rtx-4090", 165.2, 330.3),  # GeForce: FP32 accumulate at half rate (Ada whitepaper)
        ("rtx-3090", 71, 142),  # (GA102 whitepaper)
        ("rtx-a6000", 154.8, 154.8),  # professional card: full rate
        ("a100-80gb-sxm", 312, 312),
    ],
)
def test_geforce_cards_keep_both_accumulate_rates(
    catalog: Catalog, gpu_id: str, fp32_acc: float, fp16_acc: float
) -> None:
    gpu = catalog.gpu(gpu_id)
    assert gpu.fp16_tensor_dense_tflops == fp32_acc
    assert gpu.fp16_fp16acc_tensor_dense_tflops == fp16_acc


def test_a2000_tensor_rate_is_dense_and_derived_from_the_sparse_datasheet_figure(
    catalog: Catalog,
) -> None:
    gpu = catalog.gpu("rtx-a2000-12gb")
    assert gpu.fp16_tensor_dense_tflops == 32.0
    assert (gpu.vendor_fp16_tensor_tflops, gpu.vendor_fp16_tensor_basis) == (63.9, "sparse")
    note = catalog.citation(gpu.id, "fp16_tensor_dense_tflops").note
    assert note is not None and "sparsity" in note


def test_a100_sxm_is_400_w_and_pcie_300_w(catalog: Catalog) -> None:
    assert catalog.gpu("a100-80gb-sxm").tdp_w == 400
    assert catalog.gpu("a100-80gb-pcie").tdp_w == 300


def test_values_derived_from_a_catalog_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: what a server derives per request from its catalog (the hardware it sells
    for a set of constraints) cannot grow without bound: past the limit the oldest goes."""
    from whichgpu.catalog import load_catalog, store

    monkeypatch.setattr(store, "MAX_DERIVED", 3)
    shipped = load_catalog()
    catalog = store.Catalog(gpus=shipped.gpus, sources=shipped.sources)  # a fresh cache
    calls: list[int] = []
    for key in range(5):
        assert catalog.derived(("test", key), lambda k=key: calls.append(k) or k) == key
    assert catalog.derived(("test", 4), lambda: -1) == 4  # kept: not computed again
    assert catalog.derived(("test", 0), lambda: -1) == -1  # the oldest went
    assert calls == [0, 1, 2, 3, 4] and len(catalog._derived) == 3


def test_memory_is_what_the_driver_reports(catalog: Catalog) -> None:
    """A T4 with ECC on reports 15,360 MiB of its 16 GiB (a 16th for ECC: an L40S's 48 reads
    46,068); a planner that counts the label says "fits" where the card runs out. A MIG
    slice has its profile's memory, never its whole GPU's report."""
    from whichgpu.estimate.parallel import usable_bytes
    from whichgpu.plan.hardware import slice_gpu

    assert usable_bytes(catalog.gpu("t4")) == 15360 * 2**20
    assert usable_bytes(catalog.gpu("l40s")) / 2**30 == pytest.approx(48 * 15 / 16, abs=0.02)
    assert usable_bytes(catalog.gpu("rtx-a6000")) == 48 * 2**30  # no public report: its label
    a100 = catalog.gpu("a100-40gb")
    small = next(p for p in catalog.mig_profiles(a100.id) if p.profile == "1g.5gb")
    assert usable_bytes(slice_gpu(a100, small)) == pytest.approx(small.memory_gib * 2**30)
