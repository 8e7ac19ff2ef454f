"""The front of a served model's layouts: output tokens a second a GPU serves against those a
user gets (issue 50), as estimate states it in the terminal, JSON and the web."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import run_cli
from whichgpu.catalog import Catalog
from whichgpu.estimate.serving_front import STEP, pareto, serving_front
from whichgpu.estimate.serving_plan import Targets
from whichgpu.estimate.serving_types import FrontPoint
from whichgpu.inputs.job_input import make_job
from whichgpu.job.engines import ENGINES
from whichgpu.models import resolve_model

LLAMA_70B = resolve_model("llama-3.1-70b")


def _front(catalog: Catalog, prompt: int, engine: str) -> tuple[FrontPoint, ...]:
    served = ENGINES[engine]
    job = served.served_job(make_job(task="inference", prompt=prompt, generate=500, seq=prompt))
    return serving_front(LLAMA_70B, job, catalog.gpu("h100-sxm"), 8, served,
                         Targets(2.0, 0.03, 0.5))  # fmt: skip


def test_long_prompts_put_separate_workers_on_the_front_and_short_ones_do_not_lead_it(
    catalog: Catalog,
) -> None:
    """Llama 3.1 70B on 8 × H100 SXM under a 2 s TTFT and a 30 ms TPOT (issue 50's example):
    with 8,000-token prompts separate prefill and decode workers serve the most a GPU (each
    decode step no longer stretched by prefills, DistServe §2.2); with 500-token prompts
    replicas do. Every point meets the targets, users' speed falls as a GPU's rises."""
    long = _front(catalog, 8000, "vllm")
    assert long and long[-1].disaggregated
    assert long[-1].prefill_gpus + long[-1].decode_gpus <= 8
    short = _front(catalog, 500, "vllm")
    assert short and not short[-1].disaggregated
    assert short[-1].tokens_per_s_per_gpu > 3 * long[-1].tokens_per_s_per_gpu
    for front in (long, short):
        for p in front:
            assert p.tpot_s <= 0.03 and p.ttft_s <= 2.0
            assert abs(p.tokens_per_s_per_user * p.tpot_s - 1) < 1e-9
        users = [p.tokens_per_s_per_user for p in front]
        per_gpu = [p.tokens_per_s_per_gpu for p in front]
        assert users == sorted(users, reverse=True) and per_gpu == sorted(per_gpu)


def _point(user: float, per_gpu: float) -> FrontPoint:
    return FrontPoint(1, 0, user, per_gpu, 0.1, 1 / user)


@given(st.lists(st.tuples(st.floats(1, 1e3), st.floats(1, 1e4)), min_size=1, max_size=40))
def test_the_front_keeps_what_no_point_beats(raw: list[tuple[float, float]]) -> None:
    """Every point is matched by one the front keeps, to within the thinning step on a
    user's speed, at as much a GPU or more; no kept point beats another on both axes."""
    points = [_point(u, g) for u, g in raw]
    front = pareto(points)
    for p in points:
        assert any(q.tokens_per_s_per_gpu >= p.tokens_per_s_per_gpu
                   and q.tokens_per_s_per_user * (1 + STEP) >= p.tokens_per_s_per_user
                   for q in front)  # fmt: skip
    for a, b in itertools.pairwise(front):
        assert a.tokens_per_s_per_user > b.tokens_per_s_per_user
        assert a.tokens_per_s_per_gpu < b.tokens_per_s_per_gpu


def test_estimate_states_the_front_in_the_terminal_and_json() -> None:
    """The front follows the plan in estimate's answer, a line a point, and in its JSON."""
    args = ("estimate", "--task", "inference", "-m", "llama-3.1-70b", "--gpu", "h100-sxm",
            "--count", "8", "--prompt", "8000", "--generate", "500", "--request-rate", "20",
            "--ttft", "2s", "--tpot", "35ms", "--engine", "vllm")  # fmt: skip
    done = run_cli(*args, "--json")
    assert done.code == 0, done.stderr
    front = json.loads(done.stdout)["serving"]["front"]
    assert front[-1]["layout"] == "disaggregated"
    assert front[-1]["gpus_per_prefill_worker"] + front[-1]["gpus_per_worker"] <= 8
    speeds = [f["output_tokens_per_s_per_user"] for f in front]
    assert speeds == sorted(speeds, reverse=True)
    text = run_cli(*args).stdout
    assert "output tokens/s a user against a GPU" in text
    assert "prefill and 4-GPU decode workers" in text


def test_recommend_gives_its_pick_the_front_and_no_other_option() -> None:
    """The pick's served model carries its front in recommend's JSON (the same function as
    estimate's); the other candidates of the search do not compute one."""
    done = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-70b", "--request-rate",
                   "5", "--tpot", "100ms", "--json")  # fmt: skip
    assert done.code == 0, done.stderr
    options = json.loads(done.stdout)["options"]
    front = options[0]["components"][0]["serving"]["front"]
    assert front and all(f["tpot_s"] <= 0.1 for f in front)
    assert all(not (o["components"][0]["serving"] or {}).get("front") for o in options[1:])


def test_recommend_states_the_picks_front_in_the_terminal_and_on_its_page() -> None:
    """Issue 50: the front shows where a reader of recommend looks, under the pick's reasons
    (each point a hanging-indented line), and on the web page, as estimate states it."""
    from fastapi.testclient import TestClient

    from whichgpu.catalog import load_catalog
    from whichgpu.web import create_app

    args = ("recommend", "--task", "inference", "-m", "llama-3.1-70b", "--request-rate", "5",
            "--tpot", "100ms")  # fmt: skip
    doc = json.loads(run_cli(*args, "--json").stdout)
    front = doc["options"][0]["components"][0]["serving"]["front"]
    text = run_cli(*args).stdout
    heading = "The front of these GPUs' layouts, output tokens/s a user against a GPU:"
    assert heading in text
    lines = text[text.index(heading) :].splitlines()[1:]
    block = lines[: next(i for i, line in enumerate(lines) if not line.startswith(" "))]
    points = [line for line in block if line.startswith("  · ")]
    assert len(points) == len(front)
    # the terminal's figure, to its tenth, is the JSON's (rounded to four digits: checked as
    # a number, not as text, which rounds 35.65 to 35.6 where the terminal's 35.653 is 35.7)
    said = float(points[0].removeprefix("  · ").split(" a user")[0].replace(",", ""))
    assert said == pytest.approx(front[0]["output_tokens_per_s_per_user"], abs=0.051)
    page = TestClient(create_app(load_catalog())).post(
        "/recommend", data={"task": "inference", "model": "llama-3.1-70b", "request_rate": "5",
                            "tpot": "100ms"},
    ).text  # fmt: skip
    assert heading.replace("'", "&#39;") in page or heading in page
    assert page.count(" a user, ") >= len(front)
