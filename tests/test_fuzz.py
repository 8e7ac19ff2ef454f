"""Fuzzing, bounded (issue 16): no input yields a 5xx, a traceback or an exception that is
not a one-line :class:`~whichgpu.errors.WhichGPUError`.

``FUZZ_EXAMPLES=500`` runs more (60 by default, to keep ``make test`` short). Hypothesis
builds JSON bodies for every API route (the request types' own keys with values
of every JSON kind, and junk keys), model configs (a Llama config with its sizes replaced
by any integer, float, string or nesting) and workload files."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whichgpu.catalog import load_catalog
from whichgpu.errors import WhichGPUError
from whichgpu.web import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["7B", "1e8", "2s", "100ms", "llama-3.1-8b", "a100", "lora", "inf", ""])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)

COMPONENT_KEYS = ["model", "params", "tokens", "batch", "seq", "precision", "quant",
                  "hours", "request_rate", "ttft", "tpot", "engine", "images", "frames",
                  "framework", "global_batch", "tp", "pp", "services", "prompt", "generate"]  # fmt: skip
components = st.fixed_dictionaries(
    {"kind": st.sampled_from(["lora", "train", "inference", "render", "fp64", "qlora"])},
    optional={key: values for key in COMPONENT_KEYS},
)
bodies = {
    "/api/v1/recommend": st.fixed_dictionaries(
        {"components": st.lists(components, min_size=0, max_size=3)},
        optional={
            "constraints": st.dictionaries(
                st.sampled_from(
                    ["budget_usd", "deadline_h", "max_gpus", "markets", "requires", "mode"]
                ),
                values,
                max_size=3,
            ),
            "objective": values,
            "catalog": values,
        },
    ),
    "/api/v1/fit": st.dictionaries(
        st.sampled_from(["model", "task", "batch", "seq", "precision", "quant", "gpu", "params"]),
        values,
        max_size=6,
    ),
    "/api/v1/estimate": st.dictionaries(
        st.sampled_from(["model", "task", "gpu", "count", "batch", "tokens", "request_rate"]),
        values,
        max_size=6,
    ),
    "/api/v1/mig": st.fixed_dictionaries(
        {
            "services": st.lists(
                st.dictionaries(
                    st.sampled_from(
                        ["model", "memory_gib", "replicas", "quant", "profile", "name"]
                    ),
                    values,
                    max_size=4,
                ),
                max_size=3,
            )
        },
        optional={"gpu": values, "profiles": values},
    ),
}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(load_catalog()), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.mark.parametrize("route", sorted(bodies))
def test_no_api_body_yields_a_5xx(client: TestClient, route: str) -> None:
    @SETTINGS
    @given(body=bodies[route])
    def check(body: dict[str, Any]) -> None:
        response = client.post(
            route, content=json.dumps(body), headers={"content-type": "application/json"}
        )
        assert response.status_code < 500, (body, response.text)
        if response.status_code >= 400:
            error = response.json()["error"]
            assert error["code"] and "\n" not in error["message"]

    check()


@SETTINGS
@given(garbage=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_no_raw_body_yields_a_5xx(client: TestClient, garbage: bytes) -> None:
    for route in bodies:
        response = client.post(route, content=garbage, headers={"content-type": "application/json"})
        assert response.status_code < 500


LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008}  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(changes=st.dictionaries(st.sampled_from([*sorted(LLAMA), "num_key_value_heads", "head_dim", "num_local_experts", "tie_word_embeddings"]), values, max_size=4))  # fmt: skip
def test_a_model_config_is_a_model_or_one_line(changes: dict[str, Any]) -> None:
    from whichgpu.models import arch_from_config_text

    text = json.dumps({**LLAMA, **changes})
    try:
        arch = arch_from_config_text(text, "fuzz.json")
    except WhichGPUError as error:
        assert "\n" not in error.message()
        return
    assert arch.n_layers > 0 and arch.hidden_size > 0 and arch.total_params > 0


@settings(max_examples=120, deadline=None)
@given(component=components, constraints=st.dictionaries(st.sampled_from(
    ["budget_usd", "max_gpus", "markets", "requires", "deadline_h"]), values, max_size=2))  # fmt: skip
def test_a_workload_file_is_a_recommendation_or_one_line(
    component: dict[str, Any], constraints: dict[str, Any]
) -> None:
    from whichgpu.commands.recommend import recommend
    from whichgpu.inputs.workload_files import make_workload

    try:
        workload = make_workload({"components": [component], "constraints": constraints})
        recommend(load_catalog(), workload)
    except WhichGPUError as error:
        assert "\n" not in error.message()
