"""MIG profiles: NVIDIA's tables as catalog data, checked against their GPU, with lookups."""

from __future__ import annotations

import csv
import io

import pytest

from tests.test_loader import edit_table, shipped
from whichgpu.catalog import Catalog, loader
from whichgpu.catalog.records import MigProfile
from whichgpu.catalog.store import MODELS, build_catalog, data_path
from whichgpu.errors import CatalogError, InvalidInput, UnknownName

MIG_GPUS = ["a100-80gb-sxm", "a100-80gb-pcie", "a100-40gb", "h100-sxm", "h100-pcie", "h200", "b200",
            "a30", "a100-40gb-pcie", "h100-nvl", "gh200"]  # fmt: skip
#: MIG GPUs whose per-profile engine counts no source read gives: compared as whole cards
#: MIG GPUs whose profiles (instances and placements) no shipped table lists yet: the RTX PRO
#: 6000's (both editions); the B300's and GB200's (NVIDIA's GPU Operator names B300's profiles, 1g.34gb to
#: 7g.269gb, not their placements)
MIG_WITHOUT_PROFILES = ["rtx-pro-6000-blackwell", "rtx-pro-6000-blackwell-max-q", "b300", "gb200"]


def edit_mig(change: dict[str, str], row: int = 0) -> str:
    """mig_profiles.csv with ``change`` applied to data row ``row`` (0 = the first profile)."""
    return edit_table("mig_profiles", change, row)


def error_of(**texts: str) -> str:
    with pytest.raises(CatalogError) as caught:
        tables = {
            name: loader.parse_rows(texts.get(name, shipped(name)), data_path(name), model)
            for name, model in MODELS.items()
        }
        build_catalog(tables)
    return caught.value.message()


def names(catalog: Catalog, gpu_id: str) -> list[str]:
    return [p.profile for p in catalog.mig_profiles(gpu_id)]


# real values ---------------------------------------------------------------------------
def test_every_mig_gpu_has_profiles_and_no_other_gpu_has_any(catalog: Catalog) -> None:
    for gpu in catalog.gpus:
        assert bool(catalog.mig_profiles(gpu.id)) == (gpu.id in MIG_GPUS), gpu.id
        assert gpu.has_mig == (gpu.id in MIG_GPUS + MIG_WITHOUT_PROFILES), gpu.id


def test_a100_80gb_profiles(catalog: Catalog) -> None:
    assert names(catalog, "a100-80gb-sxm") == [
        "1g.10gb",
        "1g.10gb+me",
        "1g.20gb",
        "2g.20gb",
        "3g.40gb",
        "4g.40gb",
        "7g.80gb",
    ]
    small = catalog.mig_profile("a100-80gb-sxm", "1g.10gb")
    assert (small.max_instances, small.compute_slices, small.memory_slices) == (7, 1, 1)
    assert small.start_slots == (0, 1, 2, 3, 4, 5, 6)
    full = catalog.mig_profile("a100-80gb-sxm", "7g.80gb")
    assert (full.max_instances, full.memory_gb, full.start_slots) == (1, 80, (0,))
    assert full.compute_fraction == 1 and full.memory_fraction == 1
    assert (full.decoders, full.jpeg, full.ofa) == (5, 1, 1)


def test_a100_pcie_and_sxm_share_their_profiles(catalog: Catalog) -> None:
    def table(gpu_id: str) -> list[tuple[object, ...]]:
        fields = [f for f in MigProfile.__struct_fields__ if f not in ("gpu", "note")]
        return [tuple(getattr(p, f) for f in fields) for p in catalog.mig_profiles(gpu_id)]

    assert table("a100-80gb-pcie") == table("a100-80gb-sxm")
    assert table("h100-pcie") == table("h100-sxm")


def test_a100_40gb_1g_10gb_takes_two_memory_slices(catalog: Catalog) -> None:
    """NVIDIA's table prints 1/8; 10 GB of 40 GB and the -lgipp placements say 2/8."""
    profile = catalog.mig_profile("a100-40gb", "1g.10gb")
    assert profile.memory_slices == 2 and profile.memory_fraction == 0.25
    assert profile.start_slots == (0, 2, 4, 6)
    assert profile.max_instances == 4
    assert "typo" in (profile.note or "")


def test_h200_profile_names(catalog: Catalog) -> None:
    assert names(catalog, "h200") == [
        "1g.18gb",
        "1g.18gb+me",
        "1g.35gb",
        "2g.35gb",
        "3g.71gb",
        "4g.71gb",
        "7g.141gb",
    ]
    with pytest.raises(UnknownName) as caught:
        catalog.mig_profile("h200", "2g.25gb")  # a third-party name that NVIDIA never used
    assert "2g.35gb" in caught.value.suggestions


def test_b200_profiles(catalog: Catalog) -> None:
    assert names(catalog, "b200") == [
        "1g.23gb",
        "1g.23gb+me",
        "1g.45gb",
        "2g.45gb",
        "3g.90gb",
        "4g.90gb",
        "7g.180gb",
    ]


@pytest.mark.parametrize(
    ("profile", "starts"),
    [
        ("1g.5gb", (0, 1, 2, 3, 4, 5, 6)),
        ("2g.10gb", (0, 2, 4)),
        ("3g.20gb", (0, 4)),
        ("4g.20gb", (0,)),
        ("7g.40gb", (0,)),
    ],
)
def test_a100_placements(catalog: Catalog, profile: str, starts: tuple[int, ...]) -> None:
    assert catalog.mig_profile("a100-40gb", profile).start_slots == starts


def test_every_profile_fits_its_gpu(catalog: Catalog) -> None:
    for profile in catalog.all_mig_profiles:
        gpu = catalog.gpu(profile.gpu)
        assert profile.memory_gb <= gpu.memory_gib
        assert profile.max_instances <= gpu.mig_max_instances
        assert all(stop <= profile.gpu_memory_slices for _start, stop in profile.placement_ranges)
        assert catalog.source(profile.source) is not None
        assert catalog.source(profile.placements_source or profile.source) is not None
        assert profile.media_extensions == profile.profile.endswith("+me")
    for gpu_id in MIG_GPUS:
        full = catalog.mig_profiles(gpu_id)[-1]
        whole = f"{full.gpu_compute_slices}g."  # 7g on the A100/H100 class, 4g on an A30
        assert full.profile.startswith(whole) and full.memory_gb == catalog.gpu(gpu_id).memory_gib


# lookups --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["1g.10gb+me", "MIG 1g.10gb+me", "1G.10GB+ME", "mig-1g.10gb+me"])
def test_profile_lookup_forgives_case_and_the_mig_prefix(catalog: Catalog, name: str) -> None:
    assert catalog.mig_profile("h100-sxm", name).profile == "1g.10gb+me"


def test_an_unknown_profile_names_the_closest(catalog: Catalog) -> None:
    with pytest.raises(UnknownName) as caught:
        catalog.mig_profile("a100-80gb-sxm", "1g.5gb")
    message = caught.value.message()
    assert message.startswith("unknown MIG profile of the A100 80GB SXM '1g.5gb'")
    assert "1g.10gb" in caught.value.suggestions


def test_a_gpu_without_mig(catalog: Catalog) -> None:
    assert catalog.mig_profiles("rtx-a6000") == ()
    with pytest.raises(InvalidInput, match="gpu: NVIDIA RTX A6000 has no MIG; MIG GPUs: a100"):
        catalog.mig_profile("rtx-a6000", "1g.10gb")
    with pytest.raises(KeyError):
        catalog.mig_profiles("a100-90gb")


# validation ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "row", "expected"),
    [
        ({"compute_slices": "8"}, 0, "row 2: compute_slices: expected `int` <= 7 (got '8')"),
        ({"memory_slices": "9"}, 0, "memory_slices: expected `int` <= 8"),
        ({"placements": "0,2,4"}, 0, "placements: expected `str` matching"),
        # a placement that runs past the eighth memory slot
        (
            {"placements": "0;4;6", "max_instances": "2"},
            5,  # a100-40gb 3g.20gb: 4 memory slices
            "row 7: placement 6 + 4 memory slices runs past slot 8",
        ),
        ({"placement_slices": "1"}, 2, "placement_slices 1 differs from memory_slices 2"),
        ({"placements": "2;0;4"}, 3, "are not distinct and ascending"),
        ({"max_instances": "4"}, 3, "max_instances 4 exceeds the 3 placements"),
        (
            {"placements": "0;1;2;3;4;5;6", "max_instances": "5"},
            2,
            "5 instances of 2 memory slices exceed the 8 slices",
        ),
        ({"compute_slices": "2"}, 0, "profile 1g.5gb names 1 compute slices"),
        ({"memory_gb": "6"}, 0, "profile 1g.5gb names 5 GB, not memory_gb 6"),
        ({"profile": "1g.5gb+xx"}, 0, "profile: expected `str` matching"),
    ],
)
def test_bad_rows_name_file_row_and_field(change: dict[str, str], row: int, expected: str) -> None:
    message = error_of(mig_profiles=edit_mig(change, row))
    assert message.startswith("catalog/data/mig_profiles.csv, row ")
    assert expected in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"gpu": "a100-90gb"}, "gpu 'a100-90gb' is not a known GPU id"),
        ({"source": "nvidia-made-up"}, "source 'nvidia-made-up' is not a known source id"),
        ({"placements_source": "made-up"}, "placements_source 'made-up' is not a known source"),
        ({"gpu": "rtx-a6000"}, "rtx-a6000 has mig_max_instances 0 in gpus.csv"),
        # row 8 is the A100 40GB's 7g.40gb: 80 GB is more than the card has
        (
            {"gpu": "a100-40gb", "profile": "7g.80gb", "memory_gb": "80"},
            "above a100-40gb's memory_gib",
        ),
    ],
)
def test_references_are_checked_against_gpus_and_sources(
    change: dict[str, str], expected: str
) -> None:
    row = 6 if "memory_gb" in change else 0  # data row 6 = file row 8
    assert expected in error_of(mig_profiles=edit_mig(change, row))


def test_more_instances_than_the_gpu_allows_is_refused() -> None:
    rows = list(csv.DictReader(io.StringIO(shipped("gpus"))))
    for row in rows:
        if row["id"] == "a100-40gb":
            row["mig_max_instances"] = "4"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    message = error_of(gpus=out.getvalue())
    assert message == (
        "catalog/data/mig_profiles.csv, row 2: "
        "max_instances 7 is above a100-40gb's mig_max_instances 4"
    )


def test_a_duplicate_profile_is_refused() -> None:
    text = shipped("mig_profiles")
    first_row = text.splitlines()[1]
    message = error_of(mig_profiles=text + first_row + "\n")
    assert "duplicate MIG profile 1g.5gb for a100-40gb (first on row 2)" in message


def test_the_a30_splits_into_4_compute_and_4_memory_slices(catalog: Catalog) -> None:
    """NVIDIA's MIG guide: the A30 has 4 slices of each, not the A100's 7 and 8."""
    profiles = {p.profile: p for p in catalog.mig_profiles("a30")}
    assert sorted(profiles) == ["1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"]
    one = profiles["1g.6gb"]
    assert (one.compute_fraction, one.memory_fraction, one.max_instances) == (0.25, 0.25, 4)
    assert profiles["4g.24gb"].compute_fraction == 1.0
