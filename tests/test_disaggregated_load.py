"""Disaggregated workers at a load (issue 50): the layout timed at an offered rate and under
a benchmark's closed loop, and the published comparisons it is checked on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whichgpu.catalog import load_catalog
from whichgpu.estimate.disaggregated import split_at, split_at_concurrency
from whichgpu.estimate.parallel import one_instance
from whichgpu.estimate.queueing import mean_waiting_s, waiting_s
from whichgpu.estimate.serving_plan import replica_curve
from whichgpu.frozen import evolve
from whichgpu.inputs.job_input import make_job
from whichgpu.job.engine_releases import engine_profile
from whichgpu.models import resolve_model

ROOT = Path(__file__).parents[1]
ARCH = resolve_model("llama-3.1-8b")
GPU = load_catalog().resolve("h100-sxm")
ENGINE = engine_profile("vllm")
JOB = evolve(
    ENGINE.served_job(
        make_job(task="inference", prompt=2000, generate=200, seq=2000, all_logits=False)
    ),
    gpus_per_node=8,
)


def _split(n_p: int = 2, n_d: int = 2) -> tuple[tuple[object, int, int], tuple[object, int, int]]:
    found = replica_curve(ARCH, one_instance(JOB, 1), GPU, 1, ENGINE, 1.0, None, 0.0)
    assert found is not None
    return (found[0], n_p, 1), (found[0], n_d, 1)


def test_mean_wait_is_erlang_c_over_the_spare_servers() -> None:
    """Kleinrock eq. 3.41: M/M/1 at ρ = 0.5 waits ρ·S/(1 − ρ) = S on average."""
    assert mean_waiting_s(1, 0.5, 2.0) == pytest.approx(2.0)
    assert mean_waiting_s(1, 1.0, 2.0) == float("inf")
    assert waiting_s(1, 0.5, 2.0, 0.5) == 0.0  # the median arrival of ρ = 0.5 does not wait


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 3.0), st.floats(1.05, 2.0))
def test_more_load_never_makes_the_layout_faster(rate: float, more: float) -> None:
    split = _split()
    low = split_at(ARCH, JOB, GPU, split, rate)  # type: ignore[arg-type]
    high = split_at(ARCH, JOB, GPU, split, rate * more)  # type: ignore[arg-type]
    assert high.ttft_s >= low.ttft_s and high.tpot_s >= low.tpot_s


def test_decode_batch_obeys_littles_law() -> None:
    """Each decode worker holds B = (λ/n_d)·O·t_d(B) sequences (means: the TTFT's mean)."""
    split = _split()
    point = split_at(ARCH, JOB, GPU, split, 2.0, quantile=None)  # type: ignore[arg-type]
    decoding = 2.0 * JOB.generate * point.tpot_s  # over both decode workers
    assert point.concurrency == pytest.approx(decoding + 2.0 * point.ttft_s, rel=1e-3)


def test_a_closed_loop_holds_its_users() -> None:
    """At a concurrency of N, the rate X has X · (mean TTFT + O · TPOT) = N."""
    split = _split()
    point = split_at_concurrency(ARCH, JOB, GPU, split, 32)  # type: ignore[arg-type]
    mean = split_at(ARCH, JOB, GPU, split, point.rate_rps, quantile=None)  # type: ignore[arg-type]
    life = mean.ttft_s + JOB.generate * mean.tpot_s
    assert point.rate_rps * life == pytest.approx(32, rel=1e-3)


def test_published_disaggregated_comparisons_are_all_planned() -> None:
    """validation/published_disaggregated.csv: ten comparisons from three sources, each side
    estimated (the figures and their errors are docs/serving-accuracy.md's)."""
    from accuracy.published_disaggregated import check_disaggregated

    text = (ROOT / "validation" / "published_disaggregated.csv").read_text(encoding="utf-8")
    checks = {c.id: c for c in check_disaggregated(text)}
    assert len(checks) == 10 and len({c.source for c in checks.values()}) == 3
    for c in checks.values():
        assert all(0 < v < float("inf") for v in c.estimated) or c.id == "pd026", c.id
    # pd026: one 2-GPU prefill worker takes 4 prompts of 2,048 tokens a second, more than
    # the plan says it can (the run's median first token: 1.1 s)
    assert checks["pd026"].estimated[0] == float("inf")
    assert sum(c.same_winner for c in checks.values()) == 5
    assert checks["pd013"].tie  # 70B FP8: 55.3 tokens/s a GPU either way (87.6 / 56.3)
    assert checks["pd015"].errors[0] > 1.0  # a TP 8 decode worker's token reads 3x slow


def test_a_split_held_to_its_slow_end_says_both_figures_with_one_target() -> None:
    """At --confidence likely, a split whose binding pool no target holds is held at its
    capacity (TPOT given, the prefill workers unbound): it does not win by less than its
    wider range, and the answer names the split's figure as its slow end's."""
    from whichgpu.estimate.serving_plan import plan_service
    from whichgpu.estimate.serving_types import Targets

    long = ENGINE.served_job(
        make_job(task="inference", prompt=16000, generate=100, seq=16000, all_logits=False)
    )
    likely = Targets(None, 0.05, 0.5, 1.2)
    free = plan_service(ARCH, long, GPU, 8, ENGINE, likely, demand_rps=1)
    held = plan_service(ARCH, long, GPU, 8, ENGINE, likely, demand_rps=1, split_held=0.5)
    assert free is not None and held is not None
    assert free.disaggregated is not None  # the split wins as estimated (10.6 against 9.9)
    assert free.served_rps < 2 * free.aggregated_rps  # ... by less than its range
    assert held.disaggregated is None and held.disaggregated_held
    assert held.disaggregated_rps == pytest.approx(0.5 * free.served_rps, rel=1e-6)


def test_the_layout_is_one_setting_in_the_cli_the_api_and_files() -> None:
    """``--layout disaggregated`` plans separate workers where the split holds the model
    (8 × H100: it does; one GPU: nothing to split, said); the API takes the same field and
    refuses a bad value in one 422; a training job given one is refused in one line."""
    import warnings

    from whichgpu.catalog import load_catalog as catalog
    from whichgpu.web.app import create_app

    from .conftest import run_cli

    ask = ("estimate", "-m", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "8000",
           "--generate", "500", "--request-rate", "1", "--tpot", "30ms", "--engine", "vllm",
           "--layout", "disaggregated")  # fmt: skip
    split = run_cli(*ask, "--count", "8")
    assert split.code == 0 and "disaggregated" in split.stdout, split.stderr
    alone = run_cli(*ask, "--count", "1")
    assert alone.code == 2 and "two GPUs at least, 1 given" in alone.stderr
    tight = run_cli(*ask, "--count", "8", "--ttft", "220ms")  # no split meets it: said
    assert tight.code == 0 and "no split of these GPUs" in tight.stdout, tight.stderr
    cheap = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--request-rate",
                    "0.2", "--engine", "vllm", "--layout", "disaggregated", "--json")  # fmt: skip
    assert cheap.code == 0, cheap.stderr
    picked = json.loads(cheap.stdout)["options"][0]
    assert picked["count"] >= 2 and picked["components"][0]["serving"]["disaggregated"]
    unserved = run_cli("estimate", "-m", "llama-3.1-8b", "--gpu", "h100-sxm", "--task",
                       "inference", "--layout", "disaggregated")  # fmt: skip
    assert unserved.code == 2 and unserved.stderr.count("\n") == 1
    trained = run_cli("estimate", "-m", "llama-3.1-8b", "--task", "train", "--gpu", "h100-sxm",
                      "--layout", "disaggregated")  # fmt: skip
    assert trained.code == 2 and trained.stderr.count("\n") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

        with TestClient(create_app(catalog())) as client:
            body = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "count": 8, "prompt": 8000,
                    "generate": 500, "request_rate": 1, "tpot": "30ms", "engine": "vllm",
                    "layout": "disaggregated"}  # fmt: skip
            done = client.post("/api/v1/estimate", json=body)
            assert done.status_code == 200, done.text
            bad = client.post("/api/v1/estimate", json={**body, "layout": "sideways"})
            assert bad.status_code == 422 and "aggregated, disaggregated" in bad.text
