"""GB200 NVL72 as clouds sell it (issue 47, item 5): trays of 4 GPUs in one 72-GPU NVLink
domain, whose rings between the trays stay on NVLink where an HGX node's leave by the
network."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from whichgpu.catalog import load_catalog
from whichgpu.estimate.parallel import collective_gb_per_s, nvlink_domain


def test_an_nvl72_ring_stays_on_nvlink_across_its_trays() -> None:
    catalog = load_catalog()
    gb200, b200 = catalog.gpu("gb200"), catalog.gpu("b200")
    assert nvlink_domain(gb200) == 72 and nvlink_domain(b200) == 8
    on_nvlink = collective_gb_per_s(gb200, 4, per_node=4)
    assert collective_gb_per_s(gb200, 72, per_node=4) == on_nvlink  # 18 trays, one domain
    assert collective_gb_per_s(gb200, 144, per_node=4) < on_nvlink / 10  # two racks: the network
    assert collective_gb_per_s(b200, 16, per_node=8) < on_nvlink / 10  # two HGX nodes


def test_a_pick_of_gb200_trays_says_its_rings_stay_on_nvlink() -> None:
    """The table row, the JSON and the reason read one place (between_instances)."""
    args = ("recommend", "--task", "train", "-m", "llama-3.1-70b", "--tokens", "2e10",
            "--max-gpus", "16", "--objective", "time")  # fmt: skip
    doc = json.loads(run_cli(*args, "--json").stdout)
    gb200 = next(o for o in doc["options"] if o["gpu"] == "gb200" and o["count"] == 16)
    assert gb200["instance"]["network"] == "nvlink"
    assert gb200["instance"]["gpus_per_instance"] == 4
    assert doc["options"][0]["gpu"] == "gb200"  # over NVLink it finishes first
    said = [r for r in doc["reasons"] if r["code"] == "reason_nodes_nvlink"]
    assert said and said[0]["params"]["domain"] == 72
    text = run_cli(*args).stdout
    assert "instances, NVLink" in text


@pytest.mark.parametrize("gpu", ["b200", "h100-sxm"])
def test_other_gpus_have_no_rack_scale_domain(gpu: str) -> None:
    assert load_catalog().gpu(gpu).nvlink_domain_gpus is None
