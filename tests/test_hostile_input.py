"""Hostile input (issue 48): values nested, multiplied or lengthened to break a parser, the
compute pool or a message are refused in one line, before anything else sees them; the
compute pool survives any request. Bounded and loopback only."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import serving
from whichgpu.catalog import load_catalog
from whichgpu.errors import InvalidInput
from whichgpu.untrusted import MAX_DEPTH, MAX_VALUES, check_tree, load_json, load_toml, load_yaml
from whichgpu.web import create_app

from .test_cli import run_cli

FIT = {"model": "llama-3.1-8b", "task": "lora", "gpu": "a6000"}
#: A bound that tells a refusal from a hang or an expansion (milliseconds against minutes),
#: loose enough for a loaded machine: the figures themselves are in the closing notes
HANG_S = 5.0


def _nested_list(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _nested_config(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def _alias_bomb(levels: int = 9) -> str:
    """A "billion laughs" YAML file: 1.4 KB that stands for 9^9 strings."""
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    lines.append(f"name: *a{levels - 1}")
    lines.append("components:\n  - kind: lora\n    model: llama-2-7b\n    tokens: 1e8")
    return "\n".join(lines) + "\n"


# the parsers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("load", "text"),
    [
        (load_json, _nested_list(600).decode()),
        (load_json, _nested_list(100_000).decode()),
        (load_toml, "x = " + _nested_list(5_000).decode()),
        (load_toml, "x = " + _nested_list(MAX_DEPTH + 1).decode()),
        (load_yaml, "x: " + _nested_list(5_000).decode()),
        (load_yaml, "x: " + _nested_list(MAX_DEPTH + 1).decode()),
    ],
)
def test_deep_nesting_is_one_line(load: Any, text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        load(text, "in.txt")
    assert caught.value.code == "too_deep"
    assert caught.value.message() == f"in.txt: nested more than {MAX_DEPTH} levels deep"


def test_nesting_within_the_limit_and_brackets_in_strings_are_data() -> None:
    assert load_json(_nested_list(MAX_DEPTH)) == json.loads(_nested_list(MAX_DEPTH))
    assert load_json('{"a": "' + "[" * 500 + '"}') == {"a": "[" * 500}


@pytest.mark.parametrize(
    ("load", "text"),
    [
        (load_json, '{"batch": ' + "9" * 5_000 + "}"),
        (load_json, '{"batch": -' + "9" * 31 + "}"),
        (load_toml, "batch = " + "9" * 5_000),
        (load_toml, "batch = " + "9" * 4_000),
        (load_yaml, "batch: " + "9" * 5_000),
        (load_yaml, "batch: " + "9" * 4_000),
    ],
)
def test_integers_past_thirty_digits_are_one_line(load: Any, text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        load(text)
    assert caught.value.code == "number_too_long"
    assert caught.value.message() == "holds a number of more than 30 digits"


def test_thirty_digits_and_json_constants() -> None:
    assert load_json('{"n": ' + "9" * 30 + "}") == {"n": int("9" * 30)}
    with pytest.raises(InvalidInput) as caught:
        load_json('{"n": NaN}')
    assert caught.value.code == "not_json"


def test_a_yaml_alias_bomb_is_refused_at_once() -> None:
    started = time.perf_counter()
    with pytest.raises(InvalidInput) as caught:
        load_yaml(_alias_bomb(), "bomb.yaml")
    assert time.perf_counter() - started < HANG_S  # refused, not expanded or hung
    assert caught.value.message() == (
        f"bomb.yaml: holds more than {MAX_VALUES:,} values "
        "(a YAML alias counts each time it is used)"
    )


def test_a_shared_value_is_counted_each_time_it_is_reached() -> None:
    leaf = list(range(100))
    layer: Any = leaf
    for _ in range(3):  # 100^3 leaves behind 3 small lists
        layer = [layer] * 100
    with pytest.raises(InvalidInput):
        check_tree(layer)
    assert check_tree([leaf] * 100) == [leaf] * 100  # 10,101 values: within


# the CLI ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bomb.yaml", _alias_bomb(), "holds more than 100,000 values"),
        ("deep.yaml", "x: " + _nested_list(5_000).decode(), "nested more than 32 levels"),
        ("deep.toml", "x = " + _nested_list(5_000).decode(), "nested more than 32 levels"),
        ("big.yaml", "components:\n  - kind: lora\n    tokens: " + "9" * 5_000, "30 digits"),
        ("big.toml", "[[components]]\nkind = 'lora'\ntokens = " + "9" * 5_000, "30 digits"),
    ],
)
def test_hostile_workload_files_are_one_line_and_exit_2_at_once(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    started = time.perf_counter()
    result = run_cli("recommend", "--file", str(path))
    assert time.perf_counter() - started < HANG_S  # refused, not expanded or hung
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert result.stderr.startswith(f"whichgpu: error: {path}")


def test_a_model_name_longer_than_a_file_name_is_one_line() -> None:
    """``recommend -m`` asks whether the name is a config.json file before it is a preset's
    name: a name the system refuses as a path (ENAMETOOLONG past 255 bytes) is no file."""
    result = run_cli("recommend", "--task", "lora", "-m", "v" * 256, "--tokens", "1e8")
    assert result.code == 2 and result.stdout == "", result
    assert result.stderr == "whichgpu: error: --model: must be at most 200 characters\n"


def test_top_is_refused_past_its_stated_range() -> None:
    result = run_cli("recommend", "--task", "lora", "-m", "llama-2-7b", "--top", "2000000")
    assert result.code == 2
    assert "--top: must be a whole number from 1 to 1,000,000 (got 2000000)" in result.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "must be above 0 (got '-1')"), ("0", "must be above 0 (got '0')"),
     ("nan", "must be a finite number (got 'nan')"), ("1e309", "must be a finite number")],
)  # fmt: skip
def test_a_bare_number_no_unit_could_mend_is_refused_for_what_it_is(
    value: str, message: str
) -> None:
    """``--ttft -1`` asked for a unit ("e.g. -1ms or -1s"), then refused the ``-1ms`` it
    suggested."""
    result = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b",
                     "--request-rate", "2", "--ttft", value)  # fmt: skip
    assert result.code == 2
    assert result.stderr == f"whichgpu: error: --ttft: {message}\n" or message in result.stderr
    assert "what?" not in result.stderr


def test_fit_refuses_a_sequence_past_the_context_as_estimate_does() -> None:
    result = run_cli("fit", "-m", "llama-2-7b", "--task", "inference", "--seq", "100000")
    assert result.code == 2
    assert result.stderr == (
        "whichgpu: error: --seq: Llama 2 7B reads 4,096 tokens at most; asked for 100,000\n"
    )


def test_an_unknown_body_field_lists_the_ranking_fields_too(client: TestClient) -> None:
    body = {"objectiv": "cost", "components": [{"kind": "lora", "model": "llama-2-7b"}]}
    response = client.post("/api/v1/recommend", json=body)
    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert "valid: name, constraints, components, objective, catalog, baseline" in message
    assert "(did you mean objective?)" in message


def test_an_unknown_hub_id_says_how_to_read_its_config() -> None:
    """A Hub id no preset is (a review: ``Qwen/Qwen2.5-Coder-32B-Instruct``) says how the
    CLI reads its architecture: ``--hub`` (opt-in network) or a downloaded config.json."""
    result = run_cli("fit", "-m", "Qwen/Qwen2.5-Coder-32B-Instruct", "--task", "inference")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert result.stderr.endswith(
        "; --hub Qwen/Qwen2.5-Coder-32B-Instruct reads its config.json from the Hub, or -m PATH"
        " a downloaded copy\n"
    )
    plain = run_cli("fit", "-m", "qwen-nope", "--task", "inference")
    assert "--hub" not in plain.stderr  # a preset's name mistyped: the closest presets only


def test_a_long_name_is_echoed_shortened() -> None:
    result = run_cli("show", "a" * 10_000)
    assert result.code == 2 and len(result.stderr) < 200, len(result.stderr)
    assert "'aaaa" in result.stderr and "aaa...aaa" in result.stderr


def test_an_unknown_mig_profile_in_a_services_file_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "services.toml"
    path.write_text('[[services]]\nmodel = "llama-3.1-8b"\nreplicas = 2\nprofile = "3g.40gbb"\n')
    result = run_cli("mig", "--file", str(path))
    assert result.code == 2
    assert f"{path}:4: services.0.profile: unknown value '3g.40gbb'" in result.stderr
    assert "(did you mean 3g.40gb?)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("recommend", "--task", "inference", "-m", "llama-2-7b", "--prompt", "100000"),
            "--prompt: Llama 2 7B reads 4,096 tokens at most; --prompt + --generate asks for "
            "100,256",
        ),
        (
            ("fit", "-m", "llama-2-7b", "--task", "inference", "--prompt", "100000"),
            "Llama 2 7B reads 4,096 tokens at most; --prompt + --generate asks for 100,000",
        ),
        (
            ("estimate", "-m", "llama-2-7b", "--gpu", "a100", "--prompt", "100000"),
            "Llama 2 7B reads 4,096 tokens at most; --prompt + --generate asks for 100,256",
        ),
    ],
)
def test_a_prompt_past_the_context_is_refused_by_every_command(
    args: tuple[str, ...], message: str
) -> None:
    result = run_cli(*args)
    assert result.code == 2 and message in result.stderr, result.stderr


def test_a_learned_position_model_plans_at_its_table_s_length() -> None:
    """GPT-2 (1,024 positions) and BERT (512) are planned at their lengths when none is given,
    not refused for whichgpu's own default of 2,048; BERT, an encoder, generates nothing."""
    from whichgpu.job import default_seq, generated_tokens
    from whichgpu.models import resolve_model

    gpt2, bert, llama = (resolve_model(m) for m in ("gpt2", "bert-base-uncased", "llama-2-7b"))
    assert (default_seq(gpt2, None), default_seq(bert, None), default_seq(llama, None)) == (
        1024,
        512,
        None,
    )
    assert default_seq(gpt2, 256) == 256
    assert (generated_tokens(bert, 256), generated_tokens(gpt2, 256)) == (0, 256)
    result = run_cli("estimate", "--task", "inference", "-m", "bert-base-uncased",
                     "--seq", "512", "--gpu", "a100", "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    result = run_cli("recommend", "--task", "finetune", "-m", "gpt2", "--tokens", "1e7", "--json")
    assert result.code == 0, result.stderr


# the API and the pages ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(load_catalog()))


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/api/v1/mig", b'{"services": ' + _nested_list(600) + b"}"),
        ("/api/v1/fit", b'{"model": "x", "config": ' + _nested_config(600) + b"}"),
        (
            "/api/v1/recommend",
            b'{"components": [{"kind": "lora", "name": ' + _nested_list(40) + b"}]}",
        ),
    ],
)
def test_a_deep_body_is_422_naming_the_body(client: TestClient, route: str, body: bytes) -> None:
    response = client.post(route, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "too_deep"
    assert response.json()["error"]["message"] == "body: nested more than 32 levels deep"


def test_a_5000_digit_integer_is_422(client: TestClient) -> None:
    body = b'{"model": "llama-3.1-8b", "task": "lora", "batch": ' + b"9" * 5_000 + b"}"
    response = client.post(
        "/api/v1/fit", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "number_too_long"
    config = b'{"config": {"model_type": "llama", "hidden_size": ' + b"9" * 5_000 + b"}}"
    response = client.post("/api/v1/fit", content=config, headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/api/v1/fit", {**FIT, "gpu": None}, "gpu"),
        ("/api/v1/recommend", {"components": [{"kind": "lora", "model": None}]}, "components.0.model"),
        ("/api/v1/mig", {"services": [None]}, "services.0"),
    ],
)  # fmt: skip
def test_null_is_refused_where_the_schema_has_none(
    client: TestClient, route: str, body: dict[str, Any], field: str
) -> None:
    response = client.post(route, json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("null_value", field)


def test_null_inside_a_config_is_a_value(client: TestClient) -> None:
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
              "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008,
              "rope_scaling": None}  # fmt: skip
    response = client.post("/api/v1/fit", json={"task": "lora", "gpu": "a6000", "config": config})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "path",
    [
        "/recommend?task=lora&model=llama-2-7b&tokens=1e8&budget=0.5",
        "/fit?model=llama-3.1-8b&task=lora&budgett=1",
        "/estimate?model=llama-3.1-8b&gpu=a100&foo=1",
        "/mig?model=llama-3.1-8b&gpu=a100",
    ],
)
def test_a_page_refuses_a_field_it_has_not(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 422, path
    assert "unknown field" in response.text


def test_the_recommend_page_names_the_field_it_meant(client: TestClient) -> None:
    response = client.get("/recommend?task=lora&model=llama-2-7b&tokens=1e8&budget_usdd=5")
    assert response.status_code == 422 and "budget_usd" in response.text


# the compute pool ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pooled() -> Iterator[str]:
    """A server with one compute process, as ``whichgpu serve`` runs it."""
    from whichgpu.web.pool import ComputePool

    pool = ComputePool(1, start_method="fork")
    try:
        with serving(create_app(pool=pool)) as port:
            yield f"http://127.0.0.1:{port}"
    finally:
        pool.close()


def _post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, body, {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_depth_600_request_is_422_and_the_next_computes(pooled: str) -> None:
    """Issue 48's critical item: the 1.2 KB body that killed the pool's scheduler thread (and
    every computing route after it) is refused at once; the next request computes."""
    started = time.perf_counter()
    status, body = _post(f"{pooled}/api/v1/mig", b'{"services": ' + _nested_list(600) + b"}")
    assert status == 422 and body["error"]["code"] == "too_deep"
    assert time.perf_counter() - started < HANG_S  # refused, not expanded or hung
    status, body = _post(f"{pooled}/api/v1/fit", b'{"config": ' + _nested_config(600) + b"}")
    assert status == 422
    status, body = _post(f"{pooled}/api/v1/fit", json.dumps(FIT).encode())
    assert status == 200 and body["kind"] == "fit"


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/api/v1/recommend",
         b'{"name": "\\ud800", "components": [{"kind": "lora", "model": "llama-2-7b"}]}'),
        ("/api/v1/mig", b'{"services": [{"model": "llama-3.1-8b", "name": "a\\udfff"}]}'),
        ("/api/v1/fit", b'{"model": "llama-3.1-8b", "task": "lora", "\\ud83d": 1}'),
    ],
)  # fmt: skip
def test_an_unpaired_surrogate_is_422_and_the_connection_serves_the_next(
    pooled: str, route: str, body: bytes
) -> None:
    """JSON's ``\\ud800`` escape is no character: Python holds it but cannot encode it, and
    the first writer of it (the pool, a log line) failed with a 500 that reset the client's
    connection. It is refused as the body is read, a value or a key."""
    status, answer = _post(f"{pooled}{route}", body)
    assert status == 422 and answer["error"]["code"] == "lone_surrogate", answer
    assert "half of a UTF-16 surrogate pair" in answer["error"]["message"]
    status, answer = _post(f"{pooled}/api/v1/fit", json.dumps(FIT).encode())
    assert status == 200 and answer["kind"] == "fit"


def test_the_pool_survives_what_it_cannot_pickle_and_a_broken_scheduler() -> None:
    """Past validation, the pool still holds: arguments that cannot be pickled fail their own
    request (500), and a pool whose threads died is replaced for the next request."""
    import asyncio

    from pebble.pool.base_pool import PoolStatus

    from whichgpu.web.pool import ComputePool

    pool = ComputePool(1, start_method="fork")
    try:
        deep: Any = []
        for _ in range(5_000):
            deep = [deep]
        value, problem = asyncio.run(pool.call("en", "fit_doc", (deep,), 10.0))
        assert value is None and problem is not None and problem.status == 500
        pool._pool._context.status = PoolStatus.ERROR  # as when its scheduler thread dies
        value, problem = asyncio.run(pool.call("en", "fit_doc", (FIT,), 20.0))
        assert problem is None and json.loads(value)["kind"] == "fit"
    finally:
        pool.close()


@pytest.mark.parametrize(
    ("load", "text", "origin"),
    [
        (load_json, '{"tokens": 1e8, "kind": "lora", "tokens": 1e12}', "body"),
        (load_json, '{"config": {"hidden_size": 4096, "hidden_size": 8}}', "body"),
        (load_yaml, "kind: lora\ntokens: 1e8\nbatch: 2\ntokens: 1e12\n", "w.yaml:4"),
    ],
)
def test_a_key_given_twice_is_refused_not_overwritten(load: Any, text: str, origin: str) -> None:
    """JSON's and YAML's parsers keep the last of a key given twice: the answer would be for a
    request the user did not write in full. TOML's parser refuses it itself."""
    with pytest.raises(InvalidInput) as caught:
        load(text, origin.split(":")[0])
    assert caught.value.code == "duplicate_key"
    key = "hidden_size" if "hidden" in text else "tokens"
    assert caught.value.message() == f"{origin}: gives the key {key!r} twice: give each key once"


def test_a_yaml_merge_key_may_be_overridden() -> None:
    """``<<`` merges a mapping's keys in; a key given beside it overrides the merged one, as
    YAML means it (not a key given twice)."""
    text = "base: &b {kind: lora, batch: 2}\nrun:\n  <<: *b\n  batch: 4\n"
    assert load_yaml(text)["run"] == {"kind": "lora", "batch": 4}


def test_a_body_with_a_key_given_twice_gets_a_422_naming_it(client: TestClient) -> None:
    body = b'{"components": [{"kind": "lora", "model": "llama-2-7b", "model": "llama-2-13b"}]}'
    response = client.post(
        "/api/v1/recommend", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["message"] == (
        "body: gives the key 'model' twice: give each key once"
    )


def test_a_workload_file_with_a_key_given_twice_exits_2_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("components:\n  - kind: lora\n    model: llama-2-7b\n    model: llama-2-13b\n")
    result = run_cli("recommend", "--file", str(path))
    assert result.code == 2 and result.stdout == ""
    assert result.stderr == (
        f"whichgpu: error: {path}:4: gives the key 'model' twice: give each key once\n"
    )
