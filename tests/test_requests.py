"""One request, one path: every door (CLI flags, workload files, the web form, the JSON API)
takes the same fields with the same rules, because all of them are built from the request
types of whichgpu.inputs.requests; and the library never imports a shell."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.conftest import run_cli
from whichgpu.cli.options import with_fields
from whichgpu.errors import InvalidInput
from whichgpu.inputs import Input, given, json_schema, parse, specs
from whichgpu.inputs.requests import (
    Component,
    Constraints,
    EstimateRequest,
    FitRequest,
    MigOptions,
    Ranking,
    ServiceRequest,
)
from whichgpu.inputs.workload_files import build_workload, make_workload, parse_workload_text

SRC = Path(__file__).resolve().parents[1] / "src" / "whichgpu"


# -- the import graph ----------------------------------------------------------------------


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every whichgpu module ``path`` imports, at the top or inside a function
    (``from pkg import submodule`` counts as the submodule)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("whichgpu"):
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
            found |= subs
            if len(subs) < len(node.names):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
    return found & modules.keys()


SHELLS = ("whichgpu.cli", "whichgpu.web", "whichgpu.render", "whichgpu.__main__")


def test_no_library_module_imports_a_shell() -> None:
    modules = _modules()
    wrong = [
        (name, target)
        for name, path in modules.items()
        if not name.startswith(SHELLS)
        for target in _imports(path, modules)
        if target.startswith(SHELLS)
    ]
    assert wrong == []


def test_no_import_cycle() -> None:
    modules = _modules()
    graph = {name: _imports(path, modules) for name, path in modules.items()}
    done: set[str] = set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise AssertionError(" → ".join((*stack[stack.index(name) :], name)))
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, (*stack, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())


# -- one declaration, every door -----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ComponentPlus(Component):
    """A component with one more field, declared the one way fields are."""

    gradient_accumulation: int | None = given(
        None, Input("int", "Micro-batches per optimizer step.", low=1, high=4096)
    )


def test_a_field_added_to_a_request_type_reaches_every_door(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the CLI: the option is there, with its help and its range enforced
    app = typer.Typer()

    @app.command()
    @with_fields(ComponentPlus, Constraints)
    def recommend(fields: dict[str, Any]) -> None:
        parse(
            ComponentPlus, {k: fields[k] for k in (s.name for s in specs(ComponentPlus))}, text=True
        )

    runner = CliRunner()
    help_text = runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert "--gradient-accumulation" in help_text and "Micro-batches per optimizer" in help_text
    bad = runner.invoke(
        app, ["--task", "lora", "--model", "llama-2-7b", "--gradient-accumulation", "0"]
    )
    assert isinstance(bad.exception, InvalidInput) and bad.exception.code == "out_of_range_int"
    # the API's schema
    import whichgpu.inputs.requests as requests
    import whichgpu.inputs.workload_files as files
    from whichgpu.web.api import request_schemas

    monkeypatch.setattr(requests, "Component", ComponentPlus)
    monkeypatch.setattr(files, "Component", ComponentPlus)
    schema = request_schemas()["ComponentIn"]["properties"]["gradient_accumulation"]
    assert schema["type"] == "integer" and (schema["minimum"], schema["maximum"]) == (1, 4096)
    # the workload-file parser
    text = '[[components]]\nkind = "lora"\nmodel = "llama-2-7b"\ngradient_accumulation = 8\n'
    workload = parse_workload_text(text, "job.toml")
    assert workload.components[0].gradient_accumulation == 8  # type: ignore[attr-defined]
    with pytest.raises(InvalidInput) as caught:
        parse_workload_text(text.replace("= 8", "= 0"), "job.toml")
    assert caught.value.code == "out_of_range_int" and "job.toml:4" in str(caught.value)


def test_cli_options_are_the_request_types_field_for_field() -> None:
    from typer.main import get_command

    from whichgpu.cli import app, register

    register([])  # every command (a run registers only its own)
    group = get_command(app)
    commands: dict[str, tuple[type, ...]] = {
        "fit": (FitRequest,),
        "estimate": (EstimateRequest,),
        "recommend": (Component, Constraints, Ranking),
        "mig": (ServiceRequest, MigOptions),
    }
    skipped = {"recommend": {"name"}, "mig": {"name", "profile"}}
    for command, parts in commands.items():
        options = {o for p in group.commands[command].params for o in p.opts}  # type: ignore[attr-defined]
        flags = {
            s.flag
            for part in parts
            for s in specs(part)
            if s.name not in skipped.get(command, set())
        }
        assert flags <= options, (command, flags - options)


def test_the_openapi_document_describes_the_request_types() -> None:
    from whichgpu.web import create_app  # type: ignore[attr-defined]

    document = TestClient(create_app()).get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    for name, cls in (
        ("FitRequest", FitRequest),
        ("EstimateRequest", EstimateRequest),
        ("ComponentIn", Component),
        ("ConstraintsIn", Constraints),
        ("ServiceIn", ServiceRequest),
    ):
        assert set(json_schema(cls)["properties"]) <= set(schemas[name]["properties"]), name
    body = document["paths"]["/api/v1/recommend"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RecommendRequest"
    }


# -- twenty good workloads and twenty bad ones, through every door ---------------------------

LORA = {"kind": "lora", "model": "llama-2-7b"}

GOOD: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({**LORA, "tokens": 1e8}, {}),
    ({**LORA, "tokens": "2B"}, {"budget_usd": 500}),
    ({"kind": "train", "params": "7B", "tokens": 1e9, "batch": 4, "seq": 4096}, {}),
    ({"kind": "qlora", "model": "llama-3.1-8b", "tokens": 5e7}, {"deadline_h": "48h"}),
    ({"kind": "finetune", "model": "gpt2", "tokens": 1e7, "checkpointing": True}, {}),
    ({"kind": "inference", "model": "llama-3.1-8b", "hours": 200}, {"max_gpus": 4}),
    ({"kind": "inference", "model": "llama-3.1-8b", "hours": "30d", "request_rate": 2}, {}),
    (
        {
            "kind": "inference",
            "model": "llama-3.1-8b",
            "quant": "int4",
            "hours": 100,
            "services": 7,
        },
        {},
    ),
    (
        {
            "kind": "inference",
            "model": "mixtral-8x7b",
            "prompt": 1000,
            "generate": 200,
            "tokens": 1e6,
        },
        {"markets": ["spot"]},
    ),
    (
        {"kind": "train", "model": "resnet-50", "images": 1281167, "epochs": 90, "batch": 256},
        {"deadline_h": 24},
    ),
    ({"kind": "render", "frames": 2000}, {"requires": ["rt"]}),
    ({"kind": "render", "frames": 100, "samples_per_frame": 4096}, {"mode": "buy"}),
    ({"kind": "fp64", "tflop": 1e6}, {"requires": ["fp64", "ecc"]}),
    ({"kind": "fp64", "hours": 10}, {"budget_usd_per_h": 5}),
    ({**LORA, "tokens": 1e8, "precision": "bf16-true"}, {"markets": ["on-demand", "spot"]}),
    (
        {**LORA, "tokens": 1e8},
        {
            "mode": "buy",
            "electricity_usd_per_kwh": 0.25,
            "amortize_months": 24,
            "hours_per_month": 300,
        },
    ),
    (
        {"kind": "train", "model": "llama-2-13b", "tokens": "2B", "precision": "fp8-mixed"},
        {"deadline_h": "3d"},
    ),
    ({"kind": "inference", "model": "bert-base-uncased", "tokens": 1e9, "seq": 512}, {}),
    ({"kind": "lora", "model": "qwen2.5-7b", "tokens": 1e8, "batch": 8, "seq": 1024}, {}),
    ({"kind": "train", "model": "vit-b-16", "images": 1e6, "epochs": 1.5}, {"max_gpus": 16}),
]

#: (component, constraints, the error code, the field at fault)
BAD: list[tuple[dict[str, Any], dict[str, Any], str, str]] = [
    ({**LORA, "batch": 0}, {}, "out_of_range_int", "batch"),
    ({**LORA, "tokens": -1}, {}, "out_of_range", "tokens"),
    ({**LORA, "tokens": "lots"}, {}, "not_a_size", "tokens"),
    ({"kind": "dance", "model": "llama-2-7b"}, {}, "unknown_value", "kind"),
    ({**LORA, "precision": "fp4"}, {}, "unknown_value", "precision"),
    ({**LORA, "quant": "int3"}, {}, "unknown_value", "quant"),
    (
        {"kind": "inference", "model": "llama-2-7b", "hours": "soon"},
        {},
        "not_a_duration",
        "hours",
    ),
    ({**LORA, "model": "llama-2-7b", "params": "7B"}, {}, "model_or_size", "model"),
    ({"kind": "lora"}, {}, "model_or_size", "model"),
    ({"kind": "render"}, {}, "render_frames", "frames"),
    ({"kind": "fp64"}, {}, "fp64_tflop", "tflop"),
    ({**LORA, "request_rate": 2}, {}, "rate_for_inference", "request_rate"),
    ({**LORA, "tokens": 1e8, "hours": 5}, {}, "size_or_hours", "hours"),
    ({"kind": "render", "frames": 10, "model": "gpt2"}, {}, "takes_no_model", "model"),
    ({**LORA, "epochs": 0}, {}, "out_of_range", "epochs"),
    (
        {"kind": "render", "frames": 10, "samples_per_frame": 0},
        {},
        "out_of_range_int",
        "samples_per_frame",
    ),
    ({**LORA}, {"budget_usd": -1}, "out_of_range", "budget_usd"),
    ({**LORA}, {"markets": ["moon"]}, "unknown_value", "markets"),
    ({**LORA}, {"mode": "lease"}, "unknown_value", "mode"),
    ({**LORA}, {"max_gpus": 0}, "out_of_range_int", "max_gpus"),
    ({**LORA}, {"deadline_h": "never"}, "not_a_duration", "deadline_h"),
    ({**LORA}, {"electricity_usd_per_kwh": 100}, "out_of_range", "electricity_usd_per_kwh"),
    ({**LORA}, {"requires": ["wings"]}, "unknown_value", "requires"),
]


def _as_text(value: Any) -> Any:
    """A value as a person types it on the command line or in a form field."""
    if isinstance(value, bool):
        return value or None
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def _toml(component: dict[str, Any], constraints: dict[str, Any]) -> str:
    def line(key: str, value: Any) -> str:
        return f"{key} = {json.dumps(value) if not isinstance(value, bool) else str(value).lower()}"

    lines = [
        "[constraints]",
        *(line(k, v) for k, v in constraints.items()),
        "",
        "[[components]]",
        *(line(k, v) for k, v in component.items()),
    ]
    return "\n".join(lines) + "\n"


def _through_every_door(component: dict[str, Any], constraints: dict[str, Any]) -> list[Any]:
    """What each door makes of one workload: the Workload, or the error's (code, field)."""
    from whichgpu.web.forms import recommend_form

    def attempt(build: Any) -> Any:
        try:
            return build()
        except InvalidInput as error:
            return (error.code, [p for p in error.field or () if isinstance(p, str)][-1])

    text_component = {k: _as_text(v) for k, v in component.items()}
    text_constraints = {k: _as_text(v) for k, v in constraints.items()}
    if isinstance(constraints.get("deadline_h"), int | float):  # typed as --deadline 24h
        text_constraints["deadline_h"] = f"{constraints['deadline_h']}h"
    form = {
        ("task" if k == "kind" else k): ("on" if v is True else v)
        for k, v in text_component.items()
        if v
    }
    form |= {
        ("deadline" if k == "deadline_h" else k): v
        for k, v in text_constraints.items()
        if k not in ("markets", "requires")
    }
    lists = {k: [v] for k, v in text_constraints.items() if k in ("markets", "requires")}
    if "markets" not in lists:  # the form's market boxes, as it shows them checked
        lists["markets"] = ["on-demand", "marketplace"]
    body = {"components": [component], "constraints": constraints}
    return [
        attempt(lambda: parse_workload_text(_toml(component, constraints), "job.toml")),
        attempt(lambda: make_workload(body)),
        attempt(lambda: build_workload(None, text_component, text_constraints)),
        attempt(lambda: recommend_form(form, lists, None).workload),
    ]


@pytest.mark.parametrize(("component", "constraints"), GOOD)
def test_good_workloads_mean_the_same_through_every_door(
    component: dict[str, Any], constraints: dict[str, Any]
) -> None:
    results = _through_every_door(component, constraints)
    assert all(not isinstance(r, tuple) for r in results), results
    assert all(r == results[0] for r in results[1:]), results


@pytest.mark.parametrize(("component", "constraints", "code", "field"), BAD)
def test_bad_workloads_get_the_same_code_through_every_door(
    component: dict[str, Any], constraints: dict[str, Any], code: str, field: str
) -> None:
    results = _through_every_door(component, constraints)
    if "model" in component and "params" in component:
        # the form's preset menu always holds a model: a size typed beside it takes over
        results = results[:3]
    assert results == [(code, field)] * len(results)


@pytest.mark.parametrize(("component", "constraints", "code", "field"), BAD[:8])
def test_bad_flags_name_the_flag_and_exit_2(
    component: dict[str, Any], constraints: dict[str, Any], code: str, field: str
) -> None:
    from whichgpu.inputs import flag_names

    flags = flag_names(Component, Constraints)
    args = ["recommend"]
    for key, value in {**component, **constraints}.items():
        text = _as_text(value)
        args += [flags[key]] if text is True else [flags[key], text]
    result = run_cli(*args)
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"whichgpu: error: {flags[field]}: "), result.stderr


@pytest.mark.parametrize(("component", "constraints", "code", "field"), BAD[:8])
def test_bad_bodies_are_422_with_the_code_and_path(
    component: dict[str, Any], constraints: dict[str, Any], code: str, field: str
) -> None:
    from whichgpu.web import create_app  # type: ignore[attr-defined]

    client = TestClient(create_app())
    body = {"components": [component], "constraints": constraints}
    response = client.post("/api/v1/recommend", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == code
    assert error["field"] == f"components.0.{field}"


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (("serve",), "web"),
        (("recommend", "--task", "lora", "--model", "llama-2-7b", "--plot", "x.png"), "plot"),
    ],
)
def test_a_missing_extra_is_one_line(
    monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], extra: str
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    hidden = {"fastapi", "uvicorn", "jinja2", "multipart", "matplotlib"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in hidden else real(name, *a)
    )
    result = run_cli(*args)
    assert result.code == 2 and result.stdout == ""
    assert f"pip install 'whichgpu[{extra}]'" in result.stderr
    assert result.stderr.count("\n") == 1


def test_checkpointing_given_either_way_on_the_command_line_is_kept() -> None:
    for flag, mode in (("--checkpointing", "full"), ("--no-checkpointing", "none")):
        args = [
            "recommend",
            "--task",
            "train",
            "--model",
            "gpt2",
            "--tokens",
            "1e7",
            "--seq",
            "1024",
            "--batch",
            "8",
        ]
        result = run_cli(*args, flag, "--json")
        assert result.code == 0, result.stderr
        runs = [c for o in json.loads(result.stdout)["options"] for c in o["components"]]
        assert {c["checkpointing"] for c in runs if c["checkpointing"]} == {mode}
        assert {c["batch"] for c in runs if c["batch"]} == {8}
