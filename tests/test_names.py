"""Forgiving names: what a user types resolves to one GPU, or fails in one helpful line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from whichgpu.catalog import Catalog, load_catalog
from whichgpu.catalog.names import normalize
from whichgpu.errors import AmbiguousName, UnknownName


@pytest.mark.parametrize(
    ("typed", "gpu_id"),
    [
        ("a100", "a100-80gb-sxm"),  # the article's A100
        ("A100-80GB", "a100-80gb-sxm"),  # SkyPilot's spelling, typed by a user
        ("a100 pcie", "a100-80gb-pcie"),
        ("A100 40GB SXM", "a100-40gb"),  # the full name
        ("rtx a6000", "rtx-a6000"),
        ("a6000", "rtx-a6000"),
        ("RTX-A6000", "rtx-a6000"),
        ("a2000", "rtx-a2000-12gb"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("4090", "rtx-4090"),
        ("h100", "h100-sxm"),
        ("H100_PCIe", "h100-pcie"),
        ("Tesla T4", "t4"),
        ("v100 32gb", "v100-sxm2-32gb"),
        ("v100", "v100-sxm2-16gb"),  # a family name: its most rented variant
        ("a100", "a100-80gb-sxm"),
        # issue 49, item 3: size-qualified names without "RTX", and nvidia-smi's names
        ("4060 ti 16gb", "rtx-4060-ti-16gb"),
        ("3090", "rtx-3090"),
        ("A100-SXM4-80GB", "a100-80gb-sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("H100-80GB-HBM3", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
    ],
)
def test_names_resolve(catalog: Catalog, typed: str, gpu_id: str) -> None:
    assert catalog.resolve(typed).id == gpu_id


@pytest.mark.parametrize(
    ("typed", "gpu_id"),
    [
        ("A100", "a100-40gb"),  # SkyPilot's bare A100 is the 40GB
        ("A100-80GB", "a100-80gb-sxm"),
        ("RTXA6000", "rtx-a6000"),
        ("A6000", "rtx-a6000"),
        ("A10G", "a10"),
        ("V100", "v100-sxm2-16gb"),
        ("V100-32GB", "v100-sxm2-32gb"),
        ("H100-MEGA", "h100-sxm"),
    ],
)
def test_skypilot_names_resolve_in_skypilot_s_sense(
    catalog: Catalog, typed: str, gpu_id: str
) -> None:
    assert catalog.resolve(typed, "skypilot").id == gpu_id


def test_an_ambiguous_name_names_every_gpu_it_matches() -> None:
    """A name two GPUs share is refused, naming both (no shipped name is ambiguous since
    family names read as their most rented variant: the rule, on an index of its own)."""
    from whichgpu.catalog.names import build_index, resolve_name

    index = build_index([("v100", "v100-sxm2-16gb"), ("v100", "v100-sxm2-32gb")])
    with pytest.raises(AmbiguousName) as caught:
        resolve_name("v100", index, ["v100-sxm2-16gb", "v100-sxm2-32gb"])
    assert caught.value.message() == (
        "ambiguous GPU 'v100': it matches v100-sxm2-16gb, v100-sxm2-32gb; name one of them"
    )


def test_l40_is_not_the_l40s(catalog: Catalog) -> None:
    assert catalog.resolve("l40").id == "l40" and catalog.resolve("l40s").id == "l40s"
    with pytest.raises(UnknownName) as caught:
        catalog.resolve("l4s")  # no prefix or fuzzy match: a suggestion, never a guess
    assert "l4" in caught.value.suggestions


def test_a_typo_gets_the_closest_matches(catalog: Catalog) -> None:
    with pytest.raises(UnknownName) as caught:
        catalog.resolve("a6001")
    assert caught.value.suggestions[0] == "rtx-a6000"
    assert caught.value.message().startswith("unknown GPU 'a6001'; closest matches: rtx-a6000")


def test_nonsense_still_gets_one_line(catalog: Catalog) -> None:
    with pytest.raises(UnknownName) as caught:
        catalog.resolve("zzzz")
    assert "\n" not in caught.value.message()


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA A100 80GB SXM", "a10080gbsxm"),
        ("GeForce RTX 3090", "rtx3090"),
        ("nvidia", "nvidia"),
    ],
)
def test_normalize(name: str, key: str) -> None:
    assert normalize(name) == key


@given(st.data())
def test_every_gpu_resolves_from_its_id_and_name_however_it_is_typed(data: st.DataObject) -> None:
    catalog = load_catalog()
    gpu = data.draw(st.sampled_from(catalog.gpus))
    text = data.draw(st.sampled_from([gpu.id, gpu.name]))
    # random case, and random separators between the characters the user keeps
    typed = "".join(
        data.draw(st.sampled_from([ch.lower(), ch.upper()]))
        + data.draw(st.sampled_from(["", "", "", " ", "-", "_"]))
        for ch in text
    )
    assert catalog.resolve(typed).id == gpu.id


def test_an_unknown_name_suggests_its_own_model_first(catalog: Catalog) -> None:
    """``h100 80gb`` suggested the A100 80GB first; the H100s come first now."""
    with pytest.raises(UnknownName) as raised:
        catalog.resolve("h100 80gb")
    assert all(s.startswith("h100") for s in raised.value.suggestions)


@given(st.text(max_size=40))
def test_suggestions_never_fail(text: str) -> None:
    from whichgpu.catalog.names import suggest

    cat = load_catalog()
    found = suggest(text, cat._index("user"), [g.id for g in cat.gpus])
    assert len(found) <= 3
