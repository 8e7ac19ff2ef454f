"""A finite run of requests sent at once drains (whichgpu.estimate.burst): the harness plans
published bursts so, and a served job of a fixed size says what its drain costs."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accuracy.published_serving import check_serving
from tests.conftest import run_cli
from whichgpu.catalog import load_catalog
from whichgpu.estimate.burst import drain_s
from whichgpu.estimate.parallel import one_instance
from whichgpu.estimate.serving_curve import Curve
from whichgpu.estimate.serving_plan import replica_curve
from whichgpu.inputs.job_input import make_job
from whichgpu.job.engines import ENGINES
from whichgpu.models import resolve_model

ROOT = Path(__file__).resolve().parents[1]


def _curve() -> Curve:
    """Llama 3.1 8B on one H100 under vLLM at ShareGPT's means: a replica's serving curve."""
    arch, gpu = resolve_model("llama-3.1-8b"), load_catalog().gpu("h100-sxm")
    job = make_job(task="inference", prompt=227, generate=189, seq=227, all_logits=False)
    found = replica_curve(arch, one_instance(job, 1), gpu, 1, ENGINES["vllm"], 1.0, None, 0.0)
    assert found is not None
    return found[0]


def test_fixed_lengths_drain_only_their_last_partial_wave() -> None:
    """Equal lengths fill and empty the slots in waves: a whole number of waves costs nothing
    beyond the full batch's pace; the last partial wave of ``r`` runs ``mean`` steps at ``r``."""
    curve = _curve()
    slots, mean = curve.b_max, 189.0
    assert drain_s(curve, 3 * slots, "fixed", mean, mean) == 0.0
    left = 7
    expected = mean * (curve.step_s(left) - left * curve.step_s(slots) / slots)
    assert drain_s(curve, 3 * slots + left, "fixed", mean, mean) == pytest.approx(expected)


def test_an_exponential_drain_is_memoryless_past_the_slots() -> None:
    """Past a full set of slots, the sequences in flight when the queue empties have the same
    exponential residuals whatever ran before: 2,000 and 20,000 requests drain alike; fewer
    than the slots drain less. A single request runs its mean length alone."""
    curve = _curve()
    slots, mean, longest = curve.b_max, 189.0, 1821.0
    full = drain_s(curve, slots, "exponential", mean, longest)
    assert drain_s(curve, 10 * slots, "exponential", mean, longest) == pytest.approx(full)
    assert 0 < drain_s(curve, slots // 4, "exponential", mean, longest) < full
    one = mean * (curve.step_s(1.0) - curve.step_s(slots) / slots)
    assert drain_s(curve, 1, "exponential", mean, longest) == pytest.approx(one)


@settings(max_examples=40, deadline=None)
@given(
    requests=st.integers(1, 50_000),
    mean=st.floats(1.0, 4096.0),
    law=st.sampled_from(["fixed", "exponential"]),
)
def test_a_drain_is_never_negative_nor_longer_than_running_alone(
    requests: int, mean: float, law: str
) -> None:
    """However many requests and however long: no drain is negative, and none is longer
    than its sequences run one at a time (every step at ``t_d(1)``, the longest one)."""
    curve = _curve()
    longest = mean if law == "fixed" else 10 * mean
    seconds = drain_s(curve, requests, law, mean, longest)  # type: ignore[arg-type]
    n = min(requests, curve.b_max)
    assert 0.0 <= seconds <= n * longest * curve.step_s(1.0) + 1e-9


def test_published_sharegpt_bursts_are_planned_with_their_drain() -> None:
    """GPUStack's bursts of 1,000 ShareGPT requests at an infinite rate (vLLM 0.11, SGLang 0.5,
    8 × H200, DeepSeek-R1): as steady states they read the run's peak, two to three times its
    mean (vLLM: 7,451 output tokens/s at the peak, 2,621 over 76.6 s); planned as the finite
    runs they were, each within its stated range."""
    path = ROOT / "validation" / "published_serving_heldout.csv"
    text = path.read_text(encoding="utf-8")
    runs = {r.id: r for r in check_serving(text)}
    rows = list(csv.DictReader(io.StringIO(text)))
    steady = io.StringIO()
    writer = csv.DictWriter(steady, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows({**r, "requests": ""} for r in rows if r["id"] in ("h036", "h038"))
    as_steady = {r.id: r for r in check_serving(steady.getvalue())}
    for run in ("h036", "h038"):
        burst, flat = runs[run], as_steady[run]
        assert burst.estimated is not None and flat.estimated is not None
        assert flat.measured / flat.estimated < 0.45  # the peak, not the run
        assert burst.band[0] <= burst.measured / burst.estimated <= burst.band[1]


def test_a_served_job_of_a_fixed_size_says_what_its_drain_costs() -> None:
    """``--tokens`` on a served model with no request rate is a batch of requests sent at
    once: its time is their work at the replica's full-batch pace plus the drain, and the
    answer says how long the drain is and what share of the time."""
    done = run_cli("estimate", "-m", "llama-3.1-8b", "--task", "inference", "--gpu", "h100-sxm",
                   "--lengths", "sharegpt", "--tokens", "200000", "--engine", "vllm",
                   "--json")  # fmt: skip
    assert done.code == 0, done.stderr
    out = json.loads(done.stdout)
    drained = [n for n in out["notes"] if n["code"] == "chosen_drain"]
    assert len(drained) == 1
    params = drained[0]["params"]
    assert params["requests"] == math.ceil(200_000 / 189) and params["longest"] == 1821
    steady_s = 200_000 / out["throughput"]["value"]
    assert out["time_s"] == pytest.approx(steady_s + params["drain_s"], rel=1e-6)
    assert 0.05 < params["share"] < 0.9
    fr = run_cli("--lang", "fr", "estimate", "-m", "llama-3.1-8b", "--task", "inference",
                 "--gpu", "h100-sxm", "--lengths", "sharegpt", "--tokens", "200000",
                 "--engine", "vllm")  # fmt: skip
    assert fr.code == 0 and "requêtes envoyées d’un coup" in " ".join(fr.stdout.split())
    # a steady stream at a request rate never drains
    stream = run_cli("estimate", "-m", "llama-3.1-8b", "--task", "inference", "--gpu",
                     "h100-sxm", "--lengths", "sharegpt", "--tokens", "200000",
                     "--request-rate", "5", "--json")  # fmt: skip
    assert stream.code == 0
    assert not [n for n in json.loads(stream.stdout)["notes"] if n["code"] == "chosen_drain"]


def test_a_decoders_job_of_tokens_is_an_offline_batch_an_encoders_is_not() -> None:
    """A job of tokens to generate with no batch of the user's runs as engines run an
    offline batch (every slot busy, then the drain), not one sequence at a time: 2 million
    ShareGPT tokens of Llama 3.1 8B take minutes on one RTX 4090, not the 11 hours a single
    sequence would; a batch the user fixes keeps their batch, and an encoder's tokens (BERT
    reads them, it does not generate) keep the one-copy estimate."""
    done = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--lengths",
                   "sharegpt", "--tokens", "2e6", "--json")  # fmt: skip
    assert done.code == 0, done.stderr
    answer = json.loads(done.stdout)
    run = answer["pick"]["components"][0]
    assert run["serving"] is not None and run["time_s"] < 3600
    assert any(n["code"] == "chosen_drain" for n in answer["reasons"])
    fixed = run_cli("estimate", "-m", "llama-3.1-8b", "--task", "inference", "--gpu",
                    "rtx-4090", "--tokens", "2e6", "--batch", "1", "--json")  # fmt: skip
    assert fixed.code == 0 and json.loads(fixed.stdout)["serving"] is None
    bert = run_cli("estimate", "-m", "bert-base-uncased", "--task", "inference", "--gpu",
                   "a100-80gb-sxm", "--tokens", "1e6", "--json")  # fmt: skip
    assert bert.code == 0 and json.loads(bert.stdout)["regime"] == "llm-prefill"
