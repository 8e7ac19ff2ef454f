"""The MIG planner: NVIDIA's placement rules, the article's D4, mixes valid and refused, and
every emitted plan valid (property test)."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import golden, run_cli
from whichgpu.catalog import Catalog
from whichgpu.commands.mig import make_service, plan_mig
from whichgpu.estimate.mig_packing import Service, check_gpu, check_mix, pack


def profiles(catalog: Catalog, gpu_id: str, *names: str) -> list[object]:
    return [catalog.mig_profile(gpu_id, name) for name in names]


def test_d4_seven_1g_10gb_on_one_a100_80gb(catalog: Catalog) -> None:
    """D4: one A100 80GB as 7 isolated instances, each 1g.10gb, on memory slots 0–6."""
    service = make_service({"name": "llm", "model": "llama-3.1-8b", "quant": "int4",
                            "replicas": 7})  # fmt: skip
    result = plan_mig(catalog, [service], catalog.gpu("a100-80gb-sxm"))
    assert result.pick is not None and result.pick.gpus == 1
    (gpu,) = result.pick.plan.gpus
    assert [(i.profile.profile, i.start) for i in gpu.instances] == [
        ("1g.10gb", slot) for slot in range(7)
    ]
    assert gpu.compute_used == 7 and gpu.memory_used == 7


def test_mixed_profiles_are_placed_validly(catalog: Catalog) -> None:
    """2 × 1g + 1 × 2g + 1 × 3g: the 3g must take slots 4–7 (its starts are 0 and 4) for the
    1g instances to find starts (1g cannot start on slot 7)."""
    mix = profiles(catalog, "a100-80gb-sxm", "1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb")
    assert check_mix(mix) is None  # type: ignore[arg-type]
    services = [Service("a", 8, 2), Service("b", 15), Service("c", 30)]
    two_g = catalog.mig_profile("a100-80gb-sxm", "2g.20gb")
    plan = pack("a100-80gb-sxm", catalog.mig_profiles("a100-80gb-sxm"), services, {"b": two_g})
    assert len(plan.gpus) == 1
    placed = {(i.profile.profile, i.start) for i in plan.gpus[0].instances}
    assert ("3g.40gb", 4) in placed
    assert check_gpu(plan.gpus[0].instances) is None


def test_impossible_mix_is_refused_with_the_reason(catalog: Catalog) -> None:
    mix = profiles(catalog, "a100-80gb-sxm", "4g.40gb", "4g.40gb")
    why = check_mix(mix)  # type: ignore[arg-type]
    assert why is not None and why.code == "mig_compute"
    assert why.params == {"compute": 8, "limit": 7}
    result = run_cli("mig", "--gpu", "a100-80gb", "--profiles", "4g.40gb,4g.40gb", "--json")
    doc = json.loads(result.stdout)
    assert result.code == 1 and doc["valid"] is False  # a failed check exits non-zero
    assert doc["valid"] is False and doc["reason"]["code"] == "mig_compute"
    crowded = profiles(catalog, "a100-80gb-sxm", "3g.40gb", "3g.40gb", "1g.10gb")
    assert check_mix(crowded).code == "mig_memory"  # type: ignore[arg-type, union-attr]


def test_h200_profiles_use_nvidia_names(catalog: Catalog) -> None:
    names = [p.profile for p in catalog.mig_profiles("h200")]
    for expected in ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"):
        assert expected in names
    result = run_cli("mig", "--gpu", "h200", "--memory", "30", "--replicas", "3", "--json")
    doc = json.loads(result.stdout)
    assert {i["profile"] for g in doc["pick"]["plan"]["gpus"] for i in g["instances"]} == {
        "1g.35gb"
    }


def test_too_big_for_any_profile_is_unplaced_with_reason(catalog: Catalog) -> None:
    result = plan_mig(catalog, [make_service({"name": "big", "memory_gib": 100})],
                      catalog.gpu("a100-80gb-sxm"))  # fmt: skip
    assert result.pick is None
    (service, why) = result.options[0].plan.unplaced[0]
    assert service == "big" and why.code == "mig_too_big" and why.params["largest"] == "7g.80gb"


def test_exports_of_the_plan(catalog: Catalog) -> None:
    result = run_cli("mig", "-m", "llama-3.1-8b", "--quant", "int4", "--replicas", "7",
                     "--gpu", "a100-80gb-sxm", "--json")  # fmt: skip
    doc = json.loads(result.stdout)["pick"]
    assert doc["commands"] == [
        "sudo nvidia-smi -i 0 -mig 1",
        "sudo nvidia-smi mig -i 0 -cgi " + ",".join(["1g.10gb"] * 7) + " -C",
    ]
    config = yaml.safe_load(doc["mig_parted"])
    assert config == {
        "version": "v1",
        "mig-configs": {
            "whichgpu": [{"devices": [0], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]
        },
    }
    assert doc["kubernetes"] == {"llama-3.1-8b": {"nvidia.com/mig-1g.10gb": 1}}


def test_whole_cards_are_compared(catalog: Catalog) -> None:
    service = make_service({"name": "llm", "memory_gib": 8, "replicas": 7})
    result = plan_mig(catalog, [service])
    cards = {c.gpu.id: c for c in result.cards}
    assert cards["rtx-a2000-12gb"].cards == 7
    assert "rtx-a2000-12gb" in cards and "a100-80gb-sxm" not in cards
    # a card holds what its driver reports: an L4's 24 GB are 22.5 GiB with ECC on
    big = {c.gpu.id for c in plan_mig(catalog, [make_service({"memory_gib": 23})]).cards}
    assert "rtx-4090" in big and not {"l4", "a10"} & big


def test_text_golden() -> None:
    result = run_cli("mig", "-m", "llama-3.1-8b", "--quant", "int4", "--replicas", "7")
    assert result.code == 0
    golden("mig_d4.txt", result.stdout)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--profiles", "1g.10gb"], "--gpu: profiles need the gpu they are for"),
        (["--gpu", "a100-80gb", "--profiles", "1g.11gb"], "closest"),
        (["--gpu", "rtx-a6000", "--memory", "5"], "has no MIG"),
        ([], "give a service"),
        (["--memory", "5", "--replicas", "0"], "replicas"),
    ],
)
def test_bad_input_exit_2(args: list[str], expected: str) -> None:
    result = run_cli("mig", *args)
    assert result.code == 2 and expected in result.stderr


@given(
    gpu_id=st.sampled_from(["a100-40gb", "a100-80gb-sxm", "h100-sxm", "h200", "b200"]),
    needs=st.lists(
        st.tuples(st.floats(min_value=0.5, max_value=150), st.integers(1, 4)),
        min_size=1,
        max_size=6,
    ),
)
@settings(max_examples=150, deadline=None)
def test_every_plan_is_valid(catalog: Catalog, gpu_id: str, needs: list[tuple[float, int]]) -> None:
    services = [Service(f"s{i}", gib, n) for i, (gib, n) in enumerate(needs)]
    plan = pack(gpu_id, catalog.mig_profiles(gpu_id), services)
    placed = [i for g in plan.gpus for i in g.instances]
    for gpu in plan.gpus:
        assert check_gpu(gpu.instances) is None
        assert gpu.compute_used <= 7 and gpu.memory_used <= 8
    unplaced = {name for name, _why in plan.unplaced}
    for service in services:
        mine = [i for i in placed if i.service.split("#")[0] == service.name]
        if service.name in unplaced:
            assert not mine
        else:
            assert len(mine) == service.replicas
            assert all(i.profile.memory_gib >= service.memory_gib for i in mine)


def test_explicit_profiles_are_checked_and_names_kept_apart(catalog: Catalog) -> None:
    services = [
        make_service({"name": "big", "memory_gib": 35, "profile": "1g.10gb"}),
        make_service({"model": "llama-3.1-8b", "quant": "int8", "profile": "2g.20gb"}),
        make_service({"model": "llama-3.1-8b", "quant": "int4"}),
    ]
    result = plan_mig(catalog, services, catalog.gpu("a100-80gb-sxm"))
    plan = result.options[0].plan
    assert [(s, n.code) for s, n in plan.unplaced] == [("big", "mig_profile_too_small")]
    placed = {i.service: i.profile.profile for g in plan.gpus for i in g.instances}
    assert placed == {"llama-3.1-8b": "2g.20gb", "llama-3.1-8b-2": "1g.10gb"}


def test_a_profile_some_gpus_lack_is_planned_where_it_exists(catalog: Catalog) -> None:
    result = plan_mig(catalog, [make_service({"memory_gib": 15, "profile": "2g.20gb"})])
    assert result.pick is not None and result.pick.gpu.id in ("a100-80gb-pcie", "a100-80gb-sxm",
                                                              "h100-sxm", "h100-pcie")  # fmt: skip
    h200 = next(o for o in result.options if o.gpu.id == "h200")
    assert h200.plan.unplaced[0][1].code == "mig_no_such_profile"


def test_memory_must_be_a_finite_positive_number() -> None:
    import math

    for value in (math.nan, math.inf, -1):
        with pytest.raises(Exception, match="memory_gib"):
            make_service({"memory_gib": value})


def test_recommend_and_mig_agree_on_a_slice_s_memory(catalog: Catalog) -> None:
    """A 1g.10gb slice holds 10 GB (9.31 GiB) in both the recommender and the planner."""
    from whichgpu.plan import slice_gpu

    profile = catalog.mig_profile("a100-80gb-sxm", "1g.10gb")
    sliced = slice_gpu(catalog.gpu("a100-80gb-sxm"), profile)
    assert sliced.memory_gib == pytest.approx(profile.memory_gib)


def test_plans_rank_on_dated_offers_and_say_which(catalog: Catalog) -> None:
    """D4 on every MIG GPU: the pick was one A100 80GB PCIe at $0.87/h, an undated Vast.ai
    scrape, where recommend ranks only dated offers first ('a price without a date is a
    guess'). The plans are priced on the cheapest dated offer a GPU has (RunPod's $1.19,
    2026-11-09), a plan priced on an undated one ranks after the dated ones (4 × A30 on
    Seeweb's undated $0.29), and each says its listing."""
    service = make_service({"name": "llm", "model": "llama-3.1-8b", "quant": "int4",
                            "replicas": 7})  # fmt: skip
    result = plan_mig(catalog, [service])
    pick = result.pick
    assert pick is not None and pick.gpu.id == "a100-80gb-pcie" and pick.listing is not None
    assert pick.listing.as_of != "undated" and pick.usd_per_h == pytest.approx(1.19)
    dated = [o.listing is not None and o.listing.as_of != "undated" for o in result.options]
    assert dated == sorted(dated, reverse=True)  # every dated plan before any undated one
    a30 = next(o for o in result.options if o.gpu.id == "a30")
    assert a30.listing is not None and a30.listing.as_of == "undated"
    doc = json.loads(run_cli("mig", "-m", "llama-3.1-8b", "--quant", "int4", "--replicas", "7",
                             "--json").stdout)  # fmt: skip
    assert doc["pick"]["price"]["provider"] == "RunPod" and doc["pick"]["price"]["as_of"]
    assert all("price" in o for o in doc["options"]) and all(
        "price" in c for c in doc["whole_cards"]
    )


def test_an_unpriced_plan_ranks_after_one_priced_on_an_undated_offer(catalog: Catalog) -> None:
    """85 GiB in the spot market: no spot offer prices the H100 NVL or the GH200, an undated
    one prices the H200 at $1.45/h. A plan with no price at all ranked before it (the
    dated-first key put 'undated' before 'unpriced'), and became the pick."""
    result = plan_mig(catalog, [make_service({"memory_gib": 85})], markets=("spot",))
    assert result.pick is not None and result.pick.usd_per_h is not None
    placed = [o for o in result.options if not o.plan.unplaced]
    priced = [o.usd_per_h is not None for o in placed]
    assert priced == sorted(priced, reverse=True)  # every priced plan before any unpriced one
    assert not all(priced) and result.pick.gpu.id == "h200"
