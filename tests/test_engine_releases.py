"""Engine releases of early 2025 (``--engine vllm@0.7``, ``sglang@0.4.3``): their defaults,
and a DeepSeek-class model on them timed at today's kernels with the range the early
builds' published runs read at (issue 45, item 4; issue 44, honest ranges)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from whichgpu.estimate.efficiency_model import (
    EARLY_MLA_BUILD,
    EARLY_MLA_KEY,
    early_build_band,
    extrapolated,
    load_framework_spreads,
)
from whichgpu.estimate.engine_choice import serving_provenance
from whichgpu.estimate.latency_range import held_share, latency_band
from whichgpu.job.engine_releases import ENGINE_IDS, engine_profile
from whichgpu.job.engines import ENGINES
from whichgpu.models import resolve_model


def test_the_early_releases_read_their_own_defaults() -> None:
    """vLLM 0.7.3: the V0 engine at 0.9 of the memory, 256 sequences, whole prompts (MLA
    turned chunked prefill off), the context as its step budget (vllm#13620); SGLang
    0.4.3.post2: 0.81 of the memory at TP 8, 8,192-token chunks, no disaggregation; both
    in their release images, named in the answer."""
    vllm, sglang = engine_profile("vllm@0.7"), engine_profile("sglang@0.4.3")
    assert {"vllm@0.6", "vllm@0.7", "sglang@0.4.3"} <= set(ENGINE_IDS)
    assert (vllm.memory_fraction, vllm.max_sequences, vllm.prefill_chunk_tokens) == (0.9, 256, 0)
    assert "--max-num-batched-tokens {max_len}" in vllm.launch
    assert vllm.image == "vllm/vllm-openai:v0.7.3" and vllm.labelled == "vLLM 0.7.3"
    assert (sglang.memory_fraction, sglang.prefill_chunk_tokens) == (0.81, 8192)
    assert sglang.image == "lmsysorg/sglang:v0.4.3.post2-cu125"
    assert not vllm.disaggregation and not sglang.disaggregation
    assert all(engine_profile(e).early_mla for e in ("vllm@0.6", "vllm@0.7", "sglang@0.4.3"))
    assert not any(engine.early_mla for engine in ENGINES.values())


def test_an_mla_model_on_an_early_release_states_the_early_builds_range() -> None:
    """DeepSeek-R1 on SGLang 0.4.3 says its MLA kernels are older than any measured build;
    its time per output token's range reaches (1 + the early builds' 90th percentile error)
    times the estimate, without the inherited widening on top (the early runs' errors were
    read against this same estimate), and its capacity is held at the slow end. A dense
    model on the same release, and DeepSeek on today's SGLang, state no such range."""
    deepseek, llama = resolve_model("deepseek-r1"), resolve_model("llama-3.1-8b")
    early = serving_provenance(engine_profile("sglang@0.4.3"), deepseek)
    assert EARLY_MLA_BUILD in early and extrapolated(early)
    assert EARLY_MLA_BUILD not in serving_provenance(engine_profile("sglang@0.4.3"), llama)
    assert EARLY_MLA_BUILD not in serving_provenance(ENGINES["sglang"], deepseek)
    low, high = load_framework_spreads()[EARLY_MLA_KEY]
    assert early_build_band(early) == (low, high)
    assert 1.0 < low < high  # even the 10th percentile read slower than today's kernels
    assert 7.0 < high < 12.0  # SGLang v0.4.1 decoded DeepSeek-V3 ~10x slower
    assert latency_band("tpot", early)[1] == pytest.approx(1 + high)
    assert held_share(early) == pytest.approx(1 / (1 + high))


def test_the_cli_and_api_state_the_early_range() -> None:
    """End to end: ``estimate --engine sglang@0.4.3`` on 8 x H200 names the release and the
    early builds' range in its JSON, its TPOT range reaching several times the estimate."""
    done = run_cli("estimate", "--task", "inference", "-m", "deepseek-r1", "--gpu", "h200",
                   "--count", "8", "--engine", "sglang@0.4.3", "--json")  # fmt: skip
    assert done.code == 0, done.stderr
    assert EARLY_MLA_BUILD in done.stdout and "SGLang 0.4.3.post2" in done.stdout
    doc = json.loads(done.stdout)
    rate = doc["throughput"]
    assert rate["high"] / rate["low"] > 8  # today's kernels' speed to ~10x slower


def test_a_rate_held_at_the_slow_end_says_what_would_serve_it() -> None:
    """DeepSeek-R1 at 2 requests/s on vLLM 0.7.3: every 8-GPU replica serves less than
    that at its range's slow end, so nothing within 8 GPUs is feasible; the answer says how
    many copies at that slow end would serve it, on a dated offer, and what to raise (its
    blocker was not counted before: it is the slow end's variant)."""
    done = run_cli("recommend", "--task", "inference", "-m", "deepseek-r1", "--request-rate",
                   "2", "--engine", "vllm@0.7")  # fmt: skip
    assert done.code == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "No option meets every constraint." in said
    assert "8 × H200 SXM serves 1.48 requests/s at most under the targets" in said
    assert "takes 2 of it, 16 GPUs" in said and "raise --max-gpus to 16" in said
