"""The pages' forms follow the request types (issue 43): a field a request type gains is on
its page's form, or named here as one the page leaves to the CLI, the API and workload
files; and a field shows for the kinds of work the request layer lets it apply to (the one
table, ``inputs.workload_files.APPLIES``, which the templates read)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from whichgpu.catalog import load_catalog
from whichgpu.inputs import specs
from whichgpu.inputs.requests import (
    Component,
    Constraints,
    EstimateRequest,
    FitRequest,
    Ranking,
    ServiceRequest,
)
from whichgpu.inputs.workload_files import APPLIES, CHECKED
from whichgpu.web import create_app
from whichgpu.web.labels import FORM_NAMES

#: The fields each page leaves to the CLI, the API and workload files: the training
#: knobs of experts (framework recipes' overrides), the buying-only and multi-service
#: settings, what the page fixes itself (recommend: one component; fit: one GPU's memory).
NOT_ON_PAGE: dict[str, frozenset[str]] = {
    "recommend": frozenset({
        "activation_offload", "amortize_months", "attention", "cache_latents", "chunked_loss",
        "compiled",
        "confidence",
        "cpu_offload", "electricity_usd_per_kwh", "framework", "global_batch", "hours_per_month",
        "lora_rank", "lora_targets", "name", "network", "network_gbit", "offload", "optimizer",
        "optimizer_in_backward", "samples_per_frame", "services", "tp_overlap", "vae_tiling",
        "vp", "recompute_layers",
    }),
    "estimate": frozenset({
        "activation_offload", "attention", "cache_latents", "checkpointing", "chunked_loss",
        "compiled", "cpu_offload", "lora_rank", "lora_targets", "network", "network_gbit", "offload",
        "optimizer", "optimizer_in_backward", "params", "percentile", "quant", "quantize_on", "samples_per_frame",
        "tp_overlap", "vae_tiling", "vp",
    }),
    "fit": frozenset({
        "activation_offload", "attention", "cache_latents", "checkpointing", "chunked_loss",
        "compiled", "cpu_offload", "framework", "generate", "global_batch", "gpu",
        "gpu_memory_utilization", "gpus", "kv_dtype", "lora_rank", "lora_targets", "network",
        "network_gbit", "nvlink_bridge", "offload", "optimizer", "optimizer_in_backward", "packing",
        "params", "pp", "cp",
        "prompt", "recompute", "resolution", "runtime", "steps", "tp", "tp_overlap", "vae_tiling",
        "vp", "recompute_layers", "memory_format",
        "zero",
    }),
    "mig": frozenset({"batch", "generate", "memory_gib", "name", "params", "precision",
                      "profile", "prompt"}),
}  # fmt: skip
PAGES = {
    "recommend": (Component, Constraints, Ranking),
    "estimate": (EstimateRequest,),
    "fit": (FitRequest,),
    "mig": (ServiceRequest,),
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(load_catalog()))


def _form_fields(html: str) -> set[str]:
    return set(re.findall(r'name="([a-z_]+)"', html))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_request_field_is_on_its_page_or_named(client: TestClient, page: str) -> None:
    on_form = _form_fields(client.get(f"/{page}").text)
    fields = {FORM_NAMES.get(s.name, s.name) for cls in PAGES[page] for s in specs(cls)}
    missing = fields - on_form - NOT_ON_PAGE[page]
    assert not missing, f"/{page} has no field for {sorted(missing)}: add it, or to NOT_ON_PAGE"
    stale = NOT_ON_PAGE[page] & on_form
    assert not stale, f"/{page} has {sorted(stale)}: take them out of NOT_ON_PAGE"


@pytest.mark.parametrize("page", ["recommend", "estimate"])
def test_a_field_shows_for_the_kinds_that_read_it(client: TestClient, page: str) -> None:
    html = client.get(f"/{page}").text
    seen = 0
    for match in re.finditer(r"<label([^>]*)>(.*?)</label>", html, re.S):
        attributes, inside = match.groups()
        tasks = re.search(r'data-tasks="([^"]*)"', attributes)
        shown = set(tasks.group(1).split()) if tasks else None
        if shown is None and 'class="inference"' in attributes:
            shown = {"inference"}  # recommend's serving fieldset
        for name in _form_fields(inside) & set(CHECKED):
            reads = {kind for kind, fields in APPLIES.items() if name in fields}
            assert shown == reads, (page, name, shown, reads)
            seen += 1
    assert seen >= 8


def test_the_mig_page_prices_as_the_cli_does(client: TestClient) -> None:
    """The MIG page showed each plan's $/h with no date, where the CLI and the JSON say the
    offer and mark an undated price (render.mig_out.plan_cost and offer_line, shared)."""
    page = client.get("/mig", params={"model": "llama-3.1-8b", "quant": "int4", "replicas": 7})
    assert page.status_code == 200
    assert "$1.19/h a GPU from RunPod (marketplace), seen 2026-11-09" in page.text
    assert re.search(r"\$1\.16, undated", page.text)  # 4 × A30 on an undated offer


def test_a_model_named_as_a_gpu_is_said_to_be_one_on_the_page_and_in_the_api(
    client: TestClient,
) -> None:
    """The same resolution as the CLI's show (models.resolve_gpu): a model's name
    in a GPU's place is one line saying so, 422, not a 404 with GPU names near it."""
    page = client.get("/catalog/deepseek-r1")
    assert page.status_code == 422 and "names the model DeepSeek-R1" in page.text
    api = client.get("/api/v1/gpus/deepseek-r1")
    assert api.status_code == 422 and api.json()["error"]["code"] == "gpu_is_model"
    assert "POST /api/v1/fit" in api.json()["error"]["message"]
    assert client.get("/api/v1/gpus/zzz").status_code == 404
    estimated = client.post(
        "/api/v1/estimate", json={"model": "llama-3.1-8b", "gpu": "llama-3.1-8b"}
    )
    assert estimated.status_code == 422 and estimated.json()["error"]["code"] == "gpu_is_model"
    page = client.get("/estimate", params={"model": "llama-3.1-8b", "gpu": "deepseek-r1"})
    assert page.status_code == 422 and "names the model DeepSeek-R1" in page.text
