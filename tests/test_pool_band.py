"""A KV-bound served rate's range moves with the engine's own buffers
(whichgpu.estimate.kv_pool.pool_band, assumptions.BUFFER_SPREAD_GIB)."""

from __future__ import annotations

import pytest

from whichgpu.catalog import Catalog
from whichgpu.estimate.assumptions import BUFFER_SPREAD_GIB
from whichgpu.estimate.kv_pool import kv_pool_share, kv_sequences, pool_band
from whichgpu.inputs.job_input import make_job
from whichgpu.job.engines import ENGINES
from whichgpu.models import resolve_model


def test_a_tight_pool_widens_both_ends_by_the_buffers_spread(catalog: Catalog) -> None:
    # Qwen3-32B in BF16 on one H100 under vLLM, 4,000 tokens in and 200 out: GPUStack's
    # vLLM 0.11 run read +42 % against a serving band that stopped at +43 %; its pool is
    # some 10 GiB, so 2.5 GiB either way moves the batch by a quarter
    arch, gpu, engine = resolve_model("qwen3-32b"), catalog.resolve("h100-sxm"), ENGINES["vllm"]
    job = engine.served_job(make_job(task="inference", prompt=4000, generate=200, seq=4200))
    pool, _share = kv_pool_share(arch, job, gpu, 1, engine)
    held = kv_sequences(arch, job, gpu, 1, engine)
    low, high = pool_band(arch, job, gpu, 1, engine, held)
    spread = BUFFER_SPREAD_GIB * 2**30
    assert pool / 2**30 == pytest.approx(10.2, abs=0.5)
    assert low == pytest.approx((pool - spread) / pool, rel=1e-9)
    assert high == pytest.approx((pool + spread) / pool, rel=1e-9)
    assert 0.7 < low < 0.8 < 1.2 < high < 1.3
    # a run held to fewer sequences than the pool holds does not rest on it
    assert pool_band(arch, job, gpu, 1, engine, held - 1) == (1.0, 1.0)


def test_a_batch_the_engines_cap_binds_does_not_rest_on_the_pool(catalog: Catalog) -> None:
    # Llama 3.2 1B on an H200: the pool holds far more short sequences than the engine batches
    arch, gpu, engine = resolve_model("llama-3.2-1b"), catalog.resolve("h200"), ENGINES["vllm"]
    job = engine.served_job(make_job(task="inference", prompt=128, generate=128, seq=256))
    assert pool_band(arch, job, gpu, 1, engine, 10**6) == (1.0, 1.0)
