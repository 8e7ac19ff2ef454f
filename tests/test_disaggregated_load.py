"""Disaggregated workers at a load (issue 50): the layout timed at an offered rate and under
a benchmark's closed loop, and the published comparisons it is checked on."""

from __future__ import annotations

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
    """Each decode worker holds B = (λ/n_d)·O·t_d(B) sequences."""
    split = _split()
    point = split_at(ARCH, JOB, GPU, split, 2.0)  # type: ignore[arg-type]
    decoding = 2.0 * JOB.generate * point.tpot_s  # over both decode workers
    assert point.concurrency == pytest.approx(decoding + 2.0 * point.ttft_s, rel=1e-3)


def test_a_closed_loop_holds_its_users() -> None:
    """At a concurrency of N, the rate X has X · (TTFT + O · TPOT) = N."""
    split = _split()
    point = split_at_concurrency(ARCH, JOB, GPU, split, 32)  # type: ignore[arg-type]
    life = point.ttft_s + JOB.generate * point.tpot_s
    assert point.rate_rps * life == pytest.approx(32, rel=1e-3)


def test_published_disaggregated_comparisons_are_all_planned() -> None:
    """validation/published_disaggregated.csv: ten comparisons from three sources, each side
    estimated (the figures and their errors are docs/serving-accuracy.md's)."""
    from accuracy.published_disaggregated import check_disaggregated

    text = (ROOT / "validation" / "published_disaggregated.csv").read_text(encoding="utf-8")
    checks = check_disaggregated(text)
    assert len(checks) == 10 and len({c.source for c in checks}) == 3
    for c in checks:
        assert all(v > 0 for v in c.estimated), c.id


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
    assert alone.code == 0 and "no split of these 1 GPUs" in alone.stdout, alone.stderr
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
