"""The HTTP API and the pages, in-process (FastAPI's TestClient): every route with good and
bad input, and the API's JSON equal to the CLI's ``--json`` for the same input."""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from whichgpu.catalog import load_catalog
from whichgpu.web import create_app

with warnings.catch_warnings():  # starlette's TestClient announces a move to httpx2
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SCENARIOS = Path(__file__).parent / "scenarios"
PRESET = Path(__file__).parents[1] / "src/whichgpu/models/presets/llama-3.1-8b.json"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(load_catalog())) as test_client:
        yield test_client


def cli_json(*args: str) -> Any:
    result = run_cli(*args, "--json")
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def without(body: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``body`` less ``keys`` (a field left out: the API refuses ``null`` for "not given")."""
    return {k: v for k, v in body.items() if k not in keys}


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["message"] and "Traceback" not in response.text
    return dict(body)


# -- the API equals the CLI ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "args"),
    [
        ("", ()),
        ("?min_vram=40&feature=mig", ("--min-vram", "40", "--feature", "mig")),
        (
            "?arch=ampere&feature=nvlink&feature=fp64",
            ("--arch", "ampere", "--feature", "nvlink", "--feature", "fp64"),
        ),
    ],
)
def test_gpus_equal_cli(client: TestClient, query: str, args: tuple[str, ...]) -> None:
    assert ok(client.get(f"/api/v1/gpus{query}")) == cli_json("gpus", *args)


def test_show_equals_cli(client: TestClient) -> None:
    assert ok(client.get("/api/v1/gpus/A100")) == cli_json("show", "A100")


def test_compare_get_and_post_equal_cli(client: TestClient) -> None:
    expected = cli_json("compare", "a100-80gb-sxm", "rtx-a6000", "rtx-a2000", "--market", "spot")
    query = "gpu=a100-80gb-sxm&gpu=rtx-a6000&gpu=rtx-a2000&market=spot"
    assert ok(client.get(f"/api/v1/compare?{query}")) == expected
    body = {"gpus": ["a100-80gb-sxm", "rtx-a6000", "rtx-a2000"], "markets": ["spot"]}
    assert ok(client.post("/api/v1/compare", json=body)) == expected
    assert expected["corrections"], "the article's GPUs carry corrections"


@pytest.mark.parametrize(
    ("body", "args"),
    [
        (
            {"model": "llama-3.1-8b", "task": "lora", "gpu": "a6000"},
            ("--model", "llama-3.1-8b", "--task", "lora", "--gpu", "a6000"),
        ),
        (
            {"params": "13B", "task": "train", "zero": 3, "gpus": 8, "checkpointing": True},
            ("--params", "13B", "--task", "train", "--zero", "3", "--gpus", "8", "--checkpointing"),
        ),
        (
            {
                "model": "llama-3.1-8b",
                "prompt": 1024,
                "generate": 512,
                "gpu_memory_utilization": 0.9,
                "gpu": "l40s",
            },
            (
                "--model",
                "llama-3.1-8b",
                "--prompt",
                "1024",
                "--generate",
                "512",
                "--gpu-memory-utilization",
                "0.9",
                "--gpu",
                "l40s",
            ),
        ),
    ],
)
def test_fit_equals_cli(client: TestClient, body: dict[str, Any], args: tuple[str, ...]) -> None:
    assert ok(client.post("/api/v1/fit", json=body)) == cli_json("fit", *args)


def test_fit_with_a_config_object_equals_cli_with_the_file(
    client: TestClient, tmp_path: Path
) -> None:
    config = json.loads(PRESET.read_text())
    config.pop("_whichgpu")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    body = {"config": config, "task": "qlora"}
    doc = ok(client.post("/api/v1/fit", json=body))
    expected = cli_json("fit", "--model", str(path), "--task", "qlora")
    # the CLI names the model after its file path; the API after "config.json"
    for key in ("id", "name"):
        doc["model"].pop(key), expected["model"].pop(key)
    # and the notes of what was chosen name the component after it
    assert [n["code"] for n in doc.pop("chosen")] == [n["code"] for n in expected.pop("chosen")]
    assert doc == expected


@pytest.mark.parametrize(
    ("body", "args"),
    [
        (
            {"model": "llama-3.1-8b", "gpu": "h100", "tokens": 1e6},
            ("--model", "llama-3.1-8b", "--gpu", "h100", "--tokens", "1e6"),
        ),
        (
            {
                "model": "resnet-50",
                "task": "train",
                "batch": 256,
                "images": 1.28e6,
                "epochs": 2,
                "count": 4,
            },
            (
                "--model",
                "resnet-50",
                "--task",
                "train",
                "--batch",
                "256",
                "--images",
                "1.28e6",
                "--epochs",
                "2",
                "--count",
                "4",
            ),
        ),
        (
            {"model": "bert-base-uncased", "task": "finetune", "seq": 512, "tokens": 1e9},
            ("-m", "bert-base-uncased", "--task", "finetune", "--seq", "512", "--tokens", "1e9"),
        ),
        (
            {"task": "render", "gpu": "a6000", "frames": 100},
            ("--task", "render", "--gpu", "a6000", "--frames", "100"),
        ),
        (
            {"task": "fp64", "gpu": "a100", "tflop": 1e4},
            ("--task", "fp64", "--gpu", "a100", "--tflop", "1e4"),
        ),
    ],
)
def test_estimate_equals_cli(
    client: TestClient, body: dict[str, Any], args: tuple[str, ...]
) -> None:
    assert ok(client.post("/api/v1/estimate", json=body)) == cli_json("estimate", *args)


def test_recommend_flags_equal_cli(client: TestClient) -> None:
    body = {
        "components": [{"kind": "lora", "model": "llama-2-7b", "tokens": "1e8"}],
        "constraints": {"budget_usd": 500, "deadline_h": 48},
        "objective": "time",
        "baseline": "a100",
    }
    expected = cli_json("recommend", "--task", "lora", "--model", "llama-2-7b", "--tokens", "1e8",
                        "--budget", "500", "--deadline", "48h", "--objective", "time", "--baseline", "a100")  # fmt: skip
    assert ok(client.post("/api/v1/recommend", json=body)) == expected
    assert expected["pick"] is not None and expected["baseline"] is not None


@pytest.mark.parametrize("scenario", ["d04-inference-at-scale.toml", "d07-mixed-ai-rendering.toml"])
def test_recommend_workload_file_equals_cli(client: TestClient, scenario: str) -> None:
    """The body is the workload file's structure: the same file as JSON, the same answer."""
    path = SCENARIOS / scenario
    body = tomllib.loads(path.read_text())
    assert ok(client.post("/api/v1/recommend", json=body)) == cli_json(
        "recommend", "--file", str(path)
    )


def test_recommend_article_catalog_equals_cli(client: TestClient) -> None:
    body = {
        "components": [{"kind": "train", "params": "3B", "tokens": "1e9"}],
        "catalog": "article",
    }
    expected = cli_json(
        "recommend", "--task", "train", "--params", "3B", "--tokens", "1e9", "--catalog", "article"
    )
    doc = ok(client.post("/api/v1/recommend", json=body))
    assert doc == expected
    assert {o["gpu"] for o in doc["options"]} <= {"a100-80gb-sxm", "rtx-a6000", "rtx-a2000-12gb"}


def test_mig_plan_and_check_equal_cli(client: TestClient) -> None:
    body = {"services": [{"model": "llama-3.1-8b", "replicas": 3}]}
    expected = cli_json("mig", "--model", "llama-3.1-8b", "--replicas", "3")
    assert ok(client.post("/api/v1/mig", json=body)) == expected
    body = {"gpu": "a100", "profiles": ["1g.10gb", "2g.20gb", "3g.40gb"]}
    expected = cli_json("mig", "--gpu", "a100", "--profiles", "1g.10gb,2g.20gb,3g.40gb")
    assert ok(client.post("/api/v1/mig", json=body)) == expected


def test_answers_are_memoised_and_stable(client: TestClient) -> None:
    body = {"components": [{"kind": "inference", "model": "llama-3.1-8b", "hours": 10}]}
    service = client.app.state.service  # type: ignore[attr-defined]
    first = client.post("/api/v1/recommend", json=body).content
    hits = service.memo.hits
    assert client.post("/api/v1/recommend", json=body).content == first
    assert service.memo.hits == hits + 1


# -- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url", "body", "field", "words"),
    [
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "lora", "model": "llama-2-7b", "tokns": 1}]},
            "components.0.tokns",
            ["unknown field", "tokens"],
        ),
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "dance", "model": "llama-2-7b"}]},
            "components.0.kind",
            ["train", "inference"],
        ),
        ("post", "/api/v1/recommend", {"components": []}, "components", ["at least one"]),
        (
            "post",
            "/api/v1/recommend",
            {
                "components": [
                    {
                        "kind": "inference",
                        "model": "llama-3.1-70b",
                        "request_rate": 5,
                        "ttft": "1ms",
                        "hours": 10,
                    }
                ]
            },
            "components.0.ttft",
            ["out of reach", "the nearest is"],
        ),
        (
            "post",
            "/api/v1/estimate",
            {"model": "llama-3.1-8b", "gpu": "h100-sxm", "tpot": "1ms"},
            "tpot",
            ["out of reach", "at the lightest load"],
        ),
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "lora", "model": "llama-2-7b"}], "objective": "fast"},
            "objective",
            ["cost", "time", "value"],
        ),
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "lora", "model": "llama-2-7b", "tokens": "lots"}]},
            "components.0.tokens",
            ["components.0.tokens", "size like 7B"],
        ),
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "lora"}]},
            None,
            ["components.0.model", "params"],
        ),
        (
            "post",
            "/api/v1/recommend",
            {
                "components": [{"kind": "lora", "model": "llama-2-7b"}],
                "constraints": {"markets": ["moon"]},
            },
            "constraints.markets.0",
            ["on-demand"],
        ),
        (
            "post",
            "/api/v1/fit",
            {"model": "llama-3.1-8b", "batch": 0},
            "batch",
            ["from 1 to 1,000,000"],
        ),
        ("post", "/api/v1/fit", {"model": "llama-3.1-8b", "params": "7B"}, None, ["model", "size"]),
        (
            "post",
            "/api/v1/fit",
            {"model": "llama-3.1-8b", "task": "inference", "zero": 2},
            None,
            ["ZeRO"],
        ),
        (
            "post",
            "/api/v1/fit",
            {"config": {"model_type": "llama"}},
            None,
            ["config.json", "hidden_size"],
        ),
        (
            "post",
            "/api/v1/estimate",
            {"model": "llama-3.1-8b", "precision": "fp4"},
            "precision",
            ["bf16-true"],
        ),
        (
            "post",
            "/api/v1/estimate",
            {"model": "llama-2-70b", "gpu": "a100", "count": 8, "tp": 2},
            "tp",
            ["4 copies of the model on 8 GPUs", "engine"],
        ),
        (
            "post",
            "/api/v1/estimate",
            {"model": "llama-2-70b", "gpu": "a100", "count": 8, "pp": 2, "engine": "vllm"},
            "pp",
            ["a served model is split with tp"],
        ),
        ("post", "/api/v1/mig", {"profiles": ["1g.10gb"]}, "gpu", ["gpu"]),
        (
            "post",
            "/api/v1/mig",
            {"services": [{"memory_gib": 10, "model": "llama-3.1-8b"}]},
            None,
            ["not both"],
        ),
        (
            "post",
            "/api/v1/compare",
            {"gpus": ["a100", "a100-80gb-sxm"]},
            None,
            ["already in the comparison"],
        ),
        ("get", "/api/v1/gpus?feature=wings", None, "feature.0", ["mig", "nvlink"]),
        ("get", "/api/v1/gpus?arch=pascal", None, "arch", ["closest matches"]),
        ("get", "/api/v1/gpus?min_vram=-1", None, "min_vram", ["greater than or equal to 0"]),
        ("get", "/api/v1/compare", None, "gpu", ["required"]),
    ],
)
def test_bad_input_is_422_naming_the_field(
    client: TestClient, method: str, url: str, body: Any, field: str | None, words: list[str]
) -> None:
    response = client.request(method.upper(), url, json=body)
    found = error(response, 422)
    if field is not None:
        assert found["field"] == field
    for word in words:
        assert word in found["message"], found["message"]


def test_invalid_json_is_422(client: TestClient) -> None:
    response = client.post(
        "/api/v1/fit", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert "not valid JSON" in error(response, 422)["message"]


@pytest.mark.parametrize(
    ("method", "url", "body", "closest"),
    [
        ("get", "/api/v1/gpus/a10O", None, "a10"),
        ("post", "/api/v1/compare", {"gpus": ["a100", "rtx-a6001"]}, "rtx-a6000"),
        ("get", "/api/v1/compare?gpu=h10O", None, "h100-sxm"),
        ("post", "/api/v1/fit", {"model": "llama-3.1-8bb"}, "llama-3.1-8b"),
        ("post", "/api/v1/estimate", {"model": "llama-3.1-8b", "gpu": "h2000"}, "h200"),
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "lora", "model": "lama-2-7b"}]},
            "llama-2-7b",
        ),
        (
            "post",
            "/api/v1/recommend",
            {"components": [{"kind": "lora", "model": "llama-2-7b"}], "baseline": "a6001"},
            "a6000",
        ),
        (
            "post",
            "/api/v1/mig",
            {"services": [{"model": "llama-3.1-8b", "profile": "1g.11gb"}], "gpu": "a100"},
            "1g.10gb",
        ),
    ],
)
def test_unknown_names_are_404_with_closest(
    client: TestClient, method: str, url: str, body: Any, closest: str
) -> None:
    found = error(client.request(method.upper(), url, json=body), 404)
    assert found["code"] == "unknown_name"
    assert any(closest in c for c in found["closest"]), found


def test_a_family_name_is_read_as_its_most_rented_variant_and_said(client: TestClient) -> None:
    """Issue 49, item 3: ``v100`` was a 422 (ambiguous); one policy for every family name
    now, the API saying what it read the name as in ``read_as``."""
    found = client.get("/api/v1/gpus/v100")
    assert found.status_code == 200
    read = found.json()["read_as"]
    assert [(r["typed"], r["gpu"], r["others"]) for r in read] == [
        ("v100", "v100-sxm2-16gb", ["v100-sxm2-32gb"])
    ]
    assert "read_as" not in client.get("/api/v1/gpus/v100-sxm2-16gb").json()


def test_large_bodies_are_413(client: TestClient) -> None:
    big = {"components": [{"kind": "lora", "model": "llama-2-7b", "name": "x" * 70_000}]}
    found = error(client.post("/api/v1/recommend", json=big), 413)
    assert "64 KiB" in found["message"]
    # without a Content-Length (chunked): counted as it streams
    chunks = iter([b'{"gpus": ["' + b"a" * 40_000, b"a" * 40_000 + b'"]}'])
    response = client.post(
        "/api/v1/compare", content=chunks, headers={"content-type": "application/json"}
    )
    assert error(response, 413)["code"] == "too_large"


def test_unknown_api_route_is_json_404(client: TestClient) -> None:
    assert error(client.get("/api/v1/nothing"), 404)["code"] == "not_found"


def test_openapi_describes_every_route(client: TestClient) -> None:
    spec = ok(client.get("/openapi.json"))
    routes = {(m, p) for p, item in spec["paths"].items() for m in item}
    for route in [("get", "/api/v1/gpus"), ("get", "/api/v1/gpus/{gpu}"), ("get", "/api/v1/compare"),
                  ("post", "/api/v1/compare"), ("post", "/api/v1/fit"), ("post", "/api/v1/estimate"),
                  ("post", "/api/v1/recommend"), ("post", "/api/v1/mig")]:  # fmt: skip
        assert route in routes
        responses = spec["paths"][route[1]][route[0]]["responses"]
        assert {"200", "404", "422"} <= set(responses)
    assert "RecommendDoc" in spec["components"]["schemas"]


# -- language --------------------------------------------------------------------------------


def test_language_from_query_cookie_and_header(client: TestClient) -> None:
    response = client.get("/catalog?lang=ja")
    assert response.headers["content-language"] == "ja"
    assert "whichgpu_lang=ja" in response.headers["set-cookie"]
    assert '<html lang="ja">' in response.text
    client.cookies.clear()
    response = client.get("/catalog", headers={"accept-language": "de, fr;q=0.8, en;q=0.5"})
    assert response.headers["content-language"] == "fr"
    response = client.get("/catalog", headers={"cookie": "whichgpu_lang=ja"})
    assert response.headers["content-language"] == "ja"
    assert client.get("/catalog?lang=xx").headers["content-language"] == "en"
    client.cookies.clear()


def test_language_is_restored_after_a_request(client: TestClient) -> None:
    import whichgpu.i18n as i18n

    before = i18n.current_language()
    client.get("/api/v1/gpus/a10O?lang=fr")
    client.cookies.clear()
    assert i18n.current_language() == before


def test_languages_are_per_context_with_no_lock() -> None:
    """Threads speaking different languages at once each get their own messages and numbers:
    the language is a context variable, not a process-wide switch."""
    import threading

    from whichgpu.i18n import _, fmt, speaking

    barrier = threading.Barrier(3)
    seen: dict[str, list[str]] = {}

    def speak(language: str) -> None:
        with speaking(language):
            barrier.wait()  # all three inside their language at the same time
            seen[language] = [_("Tensor-parallel degree."), fmt("{n:,.1f}", n=1234.5)]
            barrier.wait()

    threads = [threading.Thread(target=speak, args=(lang,)) for lang in ("en", "fr", "ja")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen["en"] == ["Tensor-parallel degree.", "1,234.5"]
    assert (
        seen["fr"][0] == "Degré de parallélisme tensoriel."
        and seen["fr"][1].replace("\u202f", " ") == "1 234,5"
    )
    assert seen["ja"] == ["テンソル並列度。", "1,234.5"]


# -- pages -----------------------------------------------------------------------------------


def test_pages_render(client: TestClient) -> None:
    for url, words in [
        ("/", ["recommend-form", "llama-2-7b", "?lang=fr"]),
        ("/compare", ["comparison", "✗[1]", "correction-1"]),
        ("/compare?gpu=h100&gpu=a100&market=spot", ["H100", "Rent, spot"]),
        ("/catalog", ["catalog", "sources", "Retrieved"]),
        ("/catalog?min_vram=48&feature=mig", ["a100-80gb-sxm"]),
        ("/catalog/rtx-a6000", ["RTX A6000", "retrieved", "Vast.ai"]),
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in response.headers["content-security-policy"]
        for word in words:
            assert word in response.text, (url, word)


def test_static_assets_are_served(client: TestClient) -> None:
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/static/app.js").status_code == 200
    page = client.get("/").text
    assert "http://" not in page.split("<main>")[0] and "https://" not in page.split("<main>")[0]


def test_recommend_page_with_query(client: TestClient) -> None:
    response = client.get("/recommend?task=lora&model=llama-2-7b&tokens=1e8&budget_usd=500")
    assert response.status_code == 200
    text = response.text
    assert 'id="ranked"' in text and 'class="pick"' in text
    assert text.count("<svg") == 2 and "Pareto" in text


def test_recommend_page_with_uploaded_config(client: TestClient) -> None:
    fields = {"task": "inference", "hours": "100", "objective": "cost", "markets": "on-demand"}
    files = {"config": ("my-llama.json", PRESET.read_bytes(), "application/json")}
    response = client.post("/recommend", data=fields, files=files)
    assert response.status_code == 200, response.text
    assert "my-llama.json, 8.03 B parameters" in response.text
    assert 'id="ranked"' in response.text and "inference my-llama.json" in response.text


def test_recommend_page_escapes_user_text(client: TestClient) -> None:
    response = client.get(
        "/recommend?task=lora&model=llama-2-7b&tokens=1e8&name=<script>x</script>"
    )
    assert response.status_code == 200
    assert "<script>x" not in response.text and "&lt;script&gt;x" in response.text


@pytest.mark.parametrize(
    ("fields", "status", "words"),
    [
        ({"task": "lora", "model": "llama-2-7b", "batch": "two"}, 422, ["batch", "whole number"]),
        ({"task": "lora", "model": "llama-2-7b", "deadline": "soon"}, 422, ["deadline", "48h"]),
        ({"task": "lora", "model": "lama-2-7b"}, 404, ["llama-2-7b"]),
        ({"task": "lora", "model": "llama-2-7b", "baseline": "a1000"}, 404, ["closest"]),
    ],
)
def test_recommend_page_bad_input(
    client: TestClient, fields: dict[str, str], status: int, words: list[str]
) -> None:
    response = client.post("/recommend", data=fields)
    assert response.status_code == status
    assert 'role="alert"' in response.text and "Traceback" not in response.text
    for word in words:
        assert word in response.text


def test_recommend_page_bad_config(client: TestClient) -> None:
    files = {"config": ("config.json", b"{nope", "application/json")}
    response = client.post("/recommend", data={"task": "lora"}, files=files)
    assert response.status_code == 422 and "not valid JSON" in response.text
    files = {"config": ("config.json", b"x" * (1024 * 1024 + 10), "application/json")}
    response = client.post("/recommend", data={"task": "lora"}, files=files)
    assert response.status_code == 413 and "1,024 KiB" in response.text


def test_pages_404(client: TestClient) -> None:
    response = client.get("/catalog/zz-top")
    assert response.status_code == 404 and 'role="alert"' in response.text
    assert client.get("/nowhere").status_code == 404
    assert client.get("/compare?gpu=a100&gpu=rtx-a6001").status_code == 404


def test_recommend_with_a_config_json_object(client: Any) -> None:
    """A component may carry a config.json object (parsed as data), in place of a preset."""
    config = json.loads(
        (Path(__file__).parents[1] / "src/whichgpu/models/presets/qwen2.5-1.5b.json").read_text()
    )
    body = {"components": [{"kind": "lora", "config": config, "tokens": 1e8}]}
    by_config = client.post("/api/v1/recommend", json=body)
    by_name = client.post(
        "/api/v1/recommend",
        json={"components": [{"kind": "lora", "model": "qwen2.5-1.5b", "tokens": 1e8}]},
    )
    assert by_config.status_code == 200, by_config.text
    a, b = by_config.json()["pick"], by_name.json()["pick"]
    assert a["gpu"] == b["gpu"] and a["cost_usd"] == pytest.approx(b["cost_usd"])


def test_models_route_equals_the_cli(client: TestClient) -> None:
    api = ok(client.get("/api/v1/models", params={"family": "llama", "min_params": 7e9}))
    assert api == cli_json("models", "--family", "llama", "--min-params", "7B")
    assert [m["id"] for m in api["models"]][:2] == ["llama-3.1-8b", "llama-2-13b"]


def test_the_markets_stay_ticked_across_a_language_link(client: TestClient) -> None:
    """Issue 18: every market rendered unticked after any query string (?lang=fr)."""
    import re

    for url in ("/recommend?lang=fr", "/recommend?lang=ja&model=llama-2-7b"):
        text = client.get(url).text
        ticked = re.findall(r'name="markets" value="([a-z-]+)" checked', text)
        assert ticked == ["on-demand", "marketplace"], url


LEAKED = ("undated", "sparse", "the article", "marketplace", "on-demand", "claim, not an offer",
          "retrieved", "months old", "no offer")  # fmt: skip


@pytest.mark.parametrize("language", ["fr", "ja"])
@pytest.mark.parametrize(
    "url",
    ["/catalog", "/catalog/a100", "/catalog/a2000", "/compare?gpu=a100&gpu=a6000&gpu=a2000",
     "/recommend?task=lora&model=llama-2-7b&tokens=1e8&catalog=article"],
)  # fmt: skip
def test_no_english_word_leaks_into_a_translated_page(
    client: TestClient, url: str, language: str
) -> None:
    """Issue 18: French and Japanese pages left 'undated', 'sparse', 'the article (C20)'…
    (source titles and publishers are names, kept as published)."""
    import re

    text = client.get(url + ("&" if "?" in url else "?") + f"lang={language}").text
    text = re.sub(r"<a [^>]*>[^<]*</a>", " ", text)  # linked source titles are names
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"SkyPilot catalog[^)]*\)", " ", text)  # a source's title, inside a citation
    found = [word for word in LEAKED if re.search(rf"\b{re.escape(word)}\b", text)]
    context = [
        m.group(0) for w in found for m in re.finditer(rf".{{60}}\b{w}\b.{{20}}", text, re.S)
    ]
    assert found == [], context[:2]


def test_a_paged_optimizer_s_states_are_said_beside_the_peak(client: TestClient) -> None:
    """torchtune's full single-device recipe keeps PagedAdamW8bit's states (2 bytes a
    parameter) in CUDA unified memory, beside the peak PyTorch's allocator measures: the
    review found fit's breakdown silent on 15 GiB of them. The API, the page and the CLI
    say them, in one sentence."""
    body = {
        "model": "llama-3.1-8b",
        "task": "finetune",
        "framework": "torchtune",
        "gpu": "a100-40gb",
    }
    api = ok(client.post("/api/v1/fit", json=body))
    assert api["paged_gib"] == pytest.approx(8.03e9 * 2 / 2**30, rel=0.01)
    assert api["total_gib"] < 25  # the peak the allocator sees, as torchtune reports it
    page = client.get("/fit", params={**body, "lang": "en"})
    assert "Beside the total: 15.0 GiB of paged optimizer states" in page.text
    cli = run_cli("fit", "-m", "llama-3.1-8b", "--task", "finetune", "--framework", "torchtune",
                  "--gpu", "a100-40gb")  # fmt: skip
    assert "Beside the total: 15.0 GiB of paged optimizer states" in " ".join(cli.stdout.split())
    lora = ok(client.post("/api/v1/fit", json={"model": "llama-3.1-8b", "task": "lora"}))
    assert lora["paged_gib"] == 0


def test_the_fit_page_answers_on_one_screen(client: TestClient) -> None:
    """Issue 18: there was no fit page (the HF 'Model Memory Usage' space answers memory on
    one screen). The page's figures are the API's."""
    import re

    page = client.get(
        "/fit", params={"model": "llama-3.1-8b", "task": "lora", "seq": "4096", "lang": "en"}
    )
    assert page.status_code == 200
    api = ok(
        client.post("/api/v1/fit", json={"model": "llama-3.1-8b", "task": "lora", "seq": 4096})
    )
    summary = re.search(r'<p id="summary"[^>]*><a [^>]*>([^<]+)</a>', page.text)
    assert summary is not None
    assert f"{api['total_gib']:,.1f} GiB per GPU" in summary.group(1)
    holding = sum(1 for g in api["gpus"] if g["fits"])
    assert f"{holding} of {len(api['gpus'])} GPUs hold it alone" in summary.group(1)
    assert page.text.count('<tr class="pick"') == holding
    bad = client.get("/fit", params={"model": "llama-3.1-8b", "batch": "two", "lang": "en"})
    assert bad.status_code == 422 and "Batch: must be a whole number" in bad.text
    assert client.get("/fit").status_code == 200  # the form alone


def test_the_mig_page_plans_the_article_s_d4(client: TestClient) -> None:
    """Issue 18: there was no MIG page. Seven isolated int4 8B services, as the API plans."""
    import re

    page = client.get(
        "/mig", params={"model": "llama-3.1-8b", "quant": "int4", "replicas": "7", "lang": "en"}
    )
    assert page.status_code == 200
    api = ok(client.post("/api/v1/mig", json={"services": [
        {"model": "llama-3.1-8b", "quant": "int4", "replicas": 7}]}))  # fmt: skip
    pick = api["pick"]
    assert f"Pick: {pick['gpus']} ×" in page.text
    for command in pick["commands"]:
        assert command in page.text
    assert re.search(r"<tr class=\"pick\"><td>", page.text)
    bad = client.get("/mig", params={"model": "llama-3.1-8b", "replicas": "99999", "lang": "en"})
    assert bad.status_code == 422 and "replicas" in bad.text


def test_the_estimate_page_gives_the_api_s_rate(client: TestClient) -> None:
    """Issue 18: there was no estimate page."""
    params = {"model": "llama-3.1-8b", "task": "lora", "gpu": "rtx-a6000", "tokens": "1e8",
              "batch": "2"}  # fmt: skip
    page = client.get("/estimate", params={**params, "lang": "en"})
    assert page.status_code == 200
    body = {**params, "tokens": 1e8, "batch": 2}
    api = ok(client.post("/api/v1/estimate", json=body))
    assert f"{api['throughput']['value']:,.0f} tok/s on 1 × RTX A6000" in page.text
    assert client.get("/estimate", params={**params, "gpu": "zzz"}).status_code == 404


@pytest.mark.parametrize(
    ("lang", "task", "precision"),
    [
        ("en", "LoRA fine-tune (lora)", "BF16 mixed precision (bf16-mixed)"),
        ("fr", "Affinage LoRA (lora)", "Précision mixte BF16 (bf16-mixed)"),
        ("ja", "LoRA ファインチューニング (lora)", "BF16 混合精度 (bf16-mixed)"),
    ],
)
def test_forms_name_their_choices_in_the_readers_language(
    client: TestClient, lang: str, task: str, precision: str
) -> None:
    """Tasks and precisions read as words, their codes (the CLI's values) beside them."""
    for page in ("/recommend", "/estimate", "/fit"):
        text = client.get(page, params={"lang": lang}).text
        assert f">{task}</option>" in text, page
    assert f">{precision}</option>" in client.get("/recommend", params={"lang": lang}).text


def test_a_refused_form_names_every_field_at_fault_by_its_label(client: TestClient) -> None:
    """Issue 18: every error of the form at once, named as the form names the field (not
    'budget_usd'), each marked with the input it belongs to."""
    query = "task=lora&model=llama-2-7b&tokens=abc&deadline=soon&budget_usd=lots"
    for language, label in (("en", "Budget, US$:"), ("fr", "Budget, $ US :")):
        page = client.get(f"/recommend?{query}&lang={language}")
        assert page.status_code == 422
        items = re.findall(r'<li data-field="(\w+)" data-text="[^"]+">([^<]+)</li>', page.text)
        assert [name for name, _ in items] == ["tokens", "budget_usd", "deadline"]
        assert any(text.startswith(label) for _, text in items)
    page = client.get(f"/recommend?{query}&lang=en").text
    assert "Tokens (train on or generate): takes a size" in page


def test_pages_speak_in_their_own_words_not_in_cli_flags(client: TestClient) -> None:
    """Issue 18: no '--flag', no 'whichgpu …' command and no field code on the pages (the
    CLI says '--quant', a page 'Quantized weights'); launch commands aside."""
    pages = [
        "/recommend?task=lora&model=llama-2-7b&tokens=1e8",
        "/recommend?task=lora&model=sdxl&tokens=1e8",
        "/recommend?task=lora&model=llama-2-7b&tokens=1e8&max_gpus=0",
        "/catalog/zzzqqq",
        "/fit?task=image-finetune&model=flux.1-dev",
        "/estimate?task=image-finetune&model=flux.1-dev&gpu=t4",
    ]
    for path in pages:
        text = client.get(path).text
        visible = re.sub(r"<(script|style|pre|code)\b.*?</\1>|<[^>]+>", " ", text, flags=re.S)
        assert not re.search(r"(?<![\w-])--[a-z]", visible), (
            path,
            re.findall(r"--[a-z-]+", visible),
        )
        assert "'whichgpu " not in visible.replace("'whichgpu prices update'", ""), path
        assert not re.search(r"\b(max_gpus|min_vram|budget_usd|deadline_h)\b", visible), path


def test_the_pages_name_fields_as_their_forms_label_them() -> None:
    """web/labels.FIELD_LABELS (how page messages name a field) says what the templates'
    labels say, for every field both have."""
    from importlib import resources

    from whichgpu.web.labels import FIELD_LABELS

    seen: dict[str, set[str]] = {}
    for template in resources.files("whichgpu.web").joinpath("templates").iterdir():
        text = template.read_text(encoding="utf-8")
        pattern = (r'<label[^>]*>\s*(?:<input type="checkbox" name="(\w+)"[^>]*>\s*)?'
                   r'\{\{ _\("([^"]+)"\) \}\}\s*(?:<input[^>]*name="(\w+)"|\s*<select name="(\w+)")?')  # fmt: skip
        for match in re.finditer(pattern, text):
            name = match.group(1) or match.group(3) or match.group(4)
            if name:
                seen.setdefault(name, set()).add(match.group(2))
        for match in re.finditer(r'f\.choice\("(\w+)", _\("([^"]+)"\)', text):
            seen.setdefault(match.group(1), set()).add(match.group(2))
    assert len(seen) > 25
    for name, labels in seen.items():
        if name in FIELD_LABELS:
            assert labels == {FIELD_LABELS[name]}, name


def test_a_posted_form_keeps_its_answers_across_language_links(client: TestClient) -> None:
    """Issue 18: after submitting, the language links were bare ('/recommend?lang=fr'): the
    markets ticked and every field reset in the other language."""
    data = {"task": "lora", "model": "llama-2-7b", "tokens": "1e8", "markets": ["spot"]}
    page = client.post("/recommend?lang=en", data=data)
    link = re.search(r'href="(/recommend\?[^"]*lang=fr[^"]*)"', page.text)
    assert link is not None
    french = client.get(link.group(1).replace("&amp;", "&"))
    assert french.status_code == 200 and 'lang="fr"' in french.text
    assert re.search(r'name="markets" value="spot" checked', french.text)
    assert not re.search(r'name="markets" value="on-demand" checked', french.text)
    assert 'value="1e8"' in french.text and 'id="result"' in french.text


def test_the_estimate_form_shows_the_fields_of_its_task(client: TestClient) -> None:
    """Issue 18: the estimate page offered every task's fields (and then refused them) and
    had none for a render's frames or an FP64 job's TFLOP."""

    def shown(query: str) -> list[str]:
        page = client.get(f"/estimate?{query}&lang=en")
        assert page.status_code == 200, page.text
        pattern = r'<label data-tasks="[^"]*"(?! class="hidden")>[^<]+<input name="(\w+)"'
        return re.findall(pattern, page.text)

    lora = shown("task=lora&model=llama-3.1-8b&gpu=rtx-a6000")
    assert "frames" not in lora and "tflop" not in lora and "resolution" not in lora
    assert {"batch", "seq", "tokens", "epochs"} <= set(lora)
    assert shown("task=render&gpu=rtx-a6000&frames=100") == ["frames", "scene_gib"]
    assert shown("task=fp64&gpu=a100&tflop=1e5") == ["tflop"]
    assert {"prompt", "generate"} <= set(shown("task=inference&model=llama-3.1-8b&gpu=h100"))
    assert "steps" in shown("task=image&model=sdxl&gpu=rtx-4090")


def test_the_chart_says_throughput_when_the_hours_are_fixed(client: TestClient) -> None:
    """Issue 18: with the hours given, the x axis is throughput but the title said time."""
    page = client.get("/recommend?task=inference&model=llama-3.1-8b&hours=100&lang=en").text
    assert "Cost against throughput" in page and "Cost against time" not in page
    job = client.get("/recommend?task=lora&model=llama-2-7b&tokens=1e8&lang=en").text
    assert "Cost against time" in job


@pytest.mark.parametrize(
    ("path", "fields"),
    [("/fit?model=llama-3.1-8b&batch=two&seq=long", ["batch", "seq"]),
     ("/estimate?gpu=a100&tokens=x&batch=y&epochs=z", ["batch", "tokens", "epochs"]),
     ("/mig?model=llama-3.1-8b&quant=int9&replicas=0", ["quant", "replicas"])],
)  # fmt: skip
def test_every_page_shows_all_its_refused_fields(
    client: TestClient, path: str, fields: list[str]
) -> None:
    page = client.get(f"{path}&lang=fr")
    assert page.status_code == 422
    assert re.findall(r'<li data-field="(\w+)"', page.text) == fields
    assert "<strong>Erreur :</strong>" in page.text  # French puts its space before a colon


def test_the_estimate_page_says_what_the_cli_says(client: TestClient) -> None:
    """One estimate, one text: the page lists the CLI's lines (the serving plan's replicas,
    a training job's layout and step), and its form takes the GPU count, the framework,
    the layout and the serving targets."""
    from tests.conftest import run_cli

    query = {"model": "llama-2-70b", "task": "inference", "gpu": "a100-80gb-sxm", "count": "8",
             "engine": "trtllm", "tp": "8", "prompt": "512", "generate": "512"}  # fmt: skip
    page = client.get("/estimate", params={**query, "lang": "en"}).text
    cli = run_cli("estimate", *(f"--{k}={v}" for k, v in query.items()))
    plan = next(line for line in cli.stdout.splitlines() if line.startswith("Serving on"))
    assert plan.startswith("Serving on TensorRT-LLM: 1 × 8-GPU replica")
    assert "Serving on TensorRT-LLM: 1 × 8-GPU replica serving up to" in page
    assert "one copy of the model" not in page
    for name in ("count", "framework", "tp", "pp", "global_batch", "engine", "ttft", "tpot"):
        assert f'name="{name}"' in page, name
    train = client.get("/estimate", params={"model": "llama-2-13b", "task": "train",
                                            "gpu": "h100", "count": "8", "tp": "2",
                                            "tokens": "2e9", "lang": "en"}).text  # fmt: skip
    assert "Layout: TP 2 × PP 1" in train and "Step: " in train


def test_a_bridged_pair_is_a_field_of_the_api_and_a_box_on_the_forms(client: TestClient) -> None:
    """A pair of A100 PCIe cards serves over PCIe unless the request says it is bridged: the
    API's ``nvlink_bridge``, the estimate and recommend forms' box (ticked: the field "1");
    unticked, the answer says how much bridges would speed it."""
    body = {"model": "llama-3.1-70b", "task": "inference", "gpu": "a100-80gb-pcie", "count": 2,
            "engine": "trtllm", "prompt": 1000, "generate": 1000}  # fmt: skip
    plain = ok(client.post("/api/v1/estimate", json=body))
    bridged = ok(client.post("/api/v1/estimate", json={**body, "nvlink_bridge": True}))
    assert bridged["throughput"]["value"] > plain["throughput"]["value"] * 1.1
    assert [n["code"] for n in plain["notes"]] == ["warn_tight_kv", "note_pcie_link"]
    assert [n["code"] for n in bridged["notes"]] == ["warn_tight_kv"]
    said = "NVLink bridges joining the NVIDIA A100 80GB PCIe cards in pairs"
    page = client.get("/estimate", params={**body, "lang": "en", "nvlink_bridge": "1"})
    assert page.status_code == 200 and said not in page.text
    assert 'name="nvlink_bridge" value="1" checked' in page.text
    assert said in client.get("/estimate", params={**body, "lang": "en"}).text
    asked = {"task": "inference", "model": "llama-2-13b", "prompt": "512", "generate": "256",
             "request_rate": "2", "ttft": "2s", "tpot": "100ms", "hours": "720",
             "catalog": "article", "lang": "en"}  # fmt: skip
    unticked = client.get("/recommend", params=asked)
    ticked = client.get("/recommend", params={**asked, "nvlink_bridge": "1"})
    assert unticked.status_code == ticked.status_code == 200
    assert "NVLink bridges joining the NVIDIA RTX A6000 cards" in unticked.text
    assert "NVLink bridges joining" not in ticked.text
    assert 'name="nvlink_bridge" value="1" checked' in ticked.text


def test_a_datasets_lengths_are_its_means_in_the_api_and_the_pages(client: TestClient) -> None:
    """Issue 14: a serving workload as users state it, lengths by a dataset's name. The API,
    the estimate page and recommend's page plan the same means; tokens given as well are one
    field at fault (422), not a guess at which wins."""
    body = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "request_rate": 10, "lengths": "sharegpt"}
    named = ok(client.post("/api/v1/estimate", json=body))
    typed = ok(client.post("/api/v1/estimate", json={**without(body, "lengths"), "prompt": 227,
                                                     "generate": 189}))  # fmt: skip
    assert named["serving"] == typed["serving"]
    assert any(
        "ShareGPT's mean lengths, 227 tokens in and 189 out" in r["text"] for r in named["notes"]
    )
    found = error(client.post("/api/v1/estimate", json={**body, "prompt": 100}), 422)
    assert found["field"] == "lengths" and "not both" in found["message"]
    page = client.get("/estimate", params={"model": "llama-3.1-8b", "gpu": "h100-sxm",
                                           "request_rate": "10", "lengths": "sharegpt"})  # fmt: skip
    assert page.status_code == 200 and '<option value="sharegpt" selected>' in page.text
    plan = ok(client.post("/api/v1/recommend", json={"components": [
        {"kind": "inference", "model": "llama-3.1-8b", "request_rate": 10,
         "lengths": "openorca"}]}))  # fmt: skip
    assert any("222 tokens in and 294 out" in a["text"] for a in plan["assumptions"])
    bad = client.post("/api/v1/recommend", json={"components": [
        {"kind": "inference", "model": "llama-3.1-8b", "lengths": "openorca", "generate": 99}]})  # fmt: skip
    assert error(bad, 422)["field"] == "components.0.lengths"


def test_the_favicon_is_served(client: TestClient) -> None:
    """Issue 49, item 6: /favicon.ico answered 404; it leads to the icon the pages link."""
    found = client.get("/favicon.ico")
    assert found.status_code == 200 and found.headers["content-type"].startswith("image/svg")
    assert 'rel="icon"' in client.get("/catalog").text


def test_the_form_offers_worked_examples_that_answer(client: TestClient) -> None:
    """Issue 49, item 6: a newcomer facing ~30 inputs gets examples to start from; each
    link answers with a ranked table."""
    import re

    page = client.get("/recommend").text
    examples = re.search(r'<p class="examples">(.*?)</p>', page, re.S)
    assert examples is not None
    links = re.findall(r'href="([^"]+)"', examples.group(1))
    assert len(links) == 3
    for link in links:
        answer = client.get(link.replace("&amp;", "&"))
        assert answer.status_code == 200 and 'id="ranked"' in answer.text


def test_a_service_s_table_shows_serving_figures(client: TestClient) -> None:
    """Issue 49, item 5: the web table of a service showed time and cost as "—"; it shows
    what the terminal's does: $ per million tokens, requests/s served, TTFT and TPOT at the
    demand, and the engine with its replicas × GPUs."""
    import re

    page = client.get("/recommend?task=inference&model=llama-3.1-70b&request_rate=5"
                      "&ttft=2s&tpot=100ms").text  # fmt: skip
    head = re.search(r"<thead>(.*?)</thead>", page, re.S)
    assert head is not None
    for title in ("$/M tok", "serves", "TTFT", "TPOT", "engine"):
        assert f">{title}<" in head.group(1)
    assert ">time<" not in head.group(1)
    pick = re.search(r'<tr class="pick".*?</tr>', page, re.S)
    assert pick is not None and re.search(r"\d req/s", pick.group(0))
    assert re.search(r"\d ms", pick.group(0)) and "×" in pick.group(0)


def test_the_cost_chart_says_per_hour_where_no_hours_were_given(client: TestClient) -> None:
    """Issue 49, item 6: the serving chart's caption said "the hours are fixed" when none
    were given; it says the cost is per hour then, and over the hours where they were given,
    each against the requests/s an option serves, the demand drawn."""
    import re

    def caption(query: str) -> str:
        page = client.get(f"/recommend?task=inference&model=llama-3.1-70b&request_rate=5&{query}")
        found = re.search(r"<figcaption>(.*?)</figcaption>", page.text)
        assert found is not None
        return found.group(1)

    assert caption("ttft=2s").startswith("Cost per hour against the requests/s")
    assert "fixed" not in caption("ttft=2s") and "demand" in caption("ttft=2s")
    assert caption("hours=100h").startswith("Cost over the hours given against the requests/s")
