"""trtllm-bench's batch heuristic (whichgpu.estimate.bench_batch), the batch limit of the
published TensorRT-LLM maximum-throughput tables that state none."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whichgpu.catalog import Catalog
from whichgpu.estimate.bench_batch import (
    DEFAULT_MAX_BATCH,
    REQUEST_CAP,
    bench_max_batch,
    bench_requests,
    checkpoint_elements,
)
from whichgpu.inputs.job_input import make_job
from whichgpu.job import Job
from whichgpu.job.engines import ENGINES
from whichgpu.models import resolve_model


def _job(quant: str | None, prompt: int, generate: int, precision: str | None = None) -> Job:
    job = make_job(task="inference", precision=precision, quant=quant, prompt=prompt,
                   generate=generate, seq=prompt, all_logits=False)  # fmt: skip
    return ENGINES["trtllm"].served_job(job)  # FP8 KV for an FP8 or NVFP4 checkpoint


def test_mla_is_counted_as_128_heads_of_56_and_nvfp4_at_a_quarter(catalog: Catalog) -> None:
    """DeepSeek-R1 in NVFP4 on 4 × B200 at 1000/1000: the header counts about 378 billion
    elements (PR #13498 printed 183.70 "GB" at half a byte each for V3.2's: 394 billion),
    2 · 61 · 128 · 56 bytes a token in FP8, so 298 requests, rounded up to 384."""
    arch, job = resolve_model("deepseek-r1"), _job("nvfp4", 1000, 1000)
    b200 = catalog.resolve("b200")
    assert checkpoint_elements(arch, job) == pytest.approx(378.3e9, rel=1e-3)
    assert bench_requests(arch, job, b200, 4, 0.9) == pytest.approx(298.4, rel=1e-3)
    assert bench_max_batch(arch, job, b200, 4) == 384


def test_small_models_reach_the_4096_cap_and_untuned_formats_the_default(
    catalog: Catalog,
) -> None:
    h100 = catalog.resolve("h100-sxm")
    llama8 = resolve_model("llama-3.1-8b")
    assert bench_requests(llama8, _job("fp8", 128, 128), h100, 1, 0.9) > REQUEST_CAP
    assert bench_max_batch(llama8, _job("fp8", 128, 128), h100, 1) == REQUEST_CAP
    llama70 = resolve_model("llama-3.1-70b")
    # 276 requests of 2,000 tokens in FP8 on 2 × H100: rounded up to a multiple of 128
    assert bench_max_batch(llama70, _job("fp8", 1000, 1000), h100, 2) == 384
    # 41 in 16 bits: the floor of 64
    assert bench_max_batch(llama70, _job(None, 1000, 1000, "16-true"), h100, 2) == 64
    assert bench_max_batch(llama70, _job("int4", 1000, 1000), h100, 2) == DEFAULT_MAX_BATCH


@settings(max_examples=40, deadline=None)
@given(
    prompt=st.integers(min_value=64, max_value=16_384),
    generate=st.integers(min_value=64, max_value=16_384),
    more=st.integers(min_value=1, max_value=8_192),
)
def test_longer_requests_never_get_a_larger_batch(prompt: int, generate: int, more: int) -> None:
    from whichgpu.catalog import load_catalog

    h200, arch = load_catalog().resolve("h200"), resolve_model("llama-3.1-8b")
    short = bench_max_batch(arch, _job("fp8", prompt, generate), h200, 1)
    long = bench_max_batch(arch, _job("fp8", prompt + more, generate), h200, 1)
    assert 64 <= long <= short <= REQUEST_CAP
    assert short % 32 == 0


def test_a_calibration_row_runs_at_the_heuristics_batch(catalog: Catalog) -> None:
    """The v0.17 table's Llama 3.1 8B FP8 at 128/128 on one H100: its KV cache holds 4,012
    sequences, which trtllm-bench's 4,096 let it batch (2,048, the engine's default, did not)."""
    from whichgpu.estimate.efficiency import observe

    bench = next(b for b in catalog.benchmarks
                 if b.id == "trtllm017-llama-31-8b-fp8-s128-g128-h100-sxm-1")  # fmt: skip
    found = observe(bench, catalog.gpu(bench.gpu))
    assert found is not None and found.bench.batch == 4012


def test_tensorrt_llm_caps_each_attention_dp_rank(catalog: Catalog) -> None:
    """TensorRT-LLM's max_batch_size is an attention-DP rank's (ai-dynamo/dynamo#11982): a
    DEP4 replica batches 4 × 2,048 sequences, a TP4 one 2,048."""
    from whichgpu.estimate.kv_pool import sequence_cap
    from whichgpu.frozen import evolve

    engine, b200, job = ENGINES["trtllm"], catalog.resolve("b200"), _job("nvfp4", 1000, 1000)
    assert sequence_cap(job, b200, 4, engine) == 2048
    assert sequence_cap(evolve(job, attention_dp=True), b200, 4, engine) == 4 * 2048
