"""torch.compile's speed-up: fitted on runs published with and without it
(catalog/data/compile_pairs.csv), the share it removes shrinking as the model widens."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from whichgpu.catalog import load_catalog
from whichgpu.estimate.compile_speed import (
    MAX_REMOVED_SHARE,
    compile_pairs,
    compile_speedup,
    removed_share,
    width_constant,
)
from whichgpu.estimate.throughput import estimate_throughput
from whichgpu.inputs.job_input import make_job
from whichgpu.models import resolve_model


def test_the_constant_averages_each_sources_pairs() -> None:
    # torchtune (3B, h 3,072): 1 - 7,075/8,998 = 0.2137; torchtitan (8B, h 4,096):
    # 1 - 5,762/6,667 = 0.1357 and 1 - 5,605/6,514 = 0.1395
    torchtune = (1 - 7075 / 8998) * 3072
    torchtitan = ((1 - 5762 / 6667) + (1 - 5605 / 6514)) / 2 * 4096
    k, sources = width_constant()
    assert sources == 2
    assert k == pytest.approx((torchtune + torchtitan) / 2)
    assert width_constant("torchtune")[0] == pytest.approx(torchtitan)
    assert width_constant("torchtitan")[0] == pytest.approx(torchtune)


def test_each_source_predicts_the_other_within_five_percent() -> None:
    for pair in compile_pairs():
        arch = resolve_model(pair.model)
        predicted = compile_speedup(arch, pair.framework)
        measured = pair.compiled_tokens_per_s_per_gpu / pair.eager_tokens_per_s_per_gpu
        assert predicted == pytest.approx(measured, rel=0.05), pair
        assert 0 < removed_share(pair) < MAX_REMOVED_SHARE


@pytest.mark.parametrize("gpu", ["rtx-4090", "rtx-a6000", "a100-80gb-sxm", "h100-sxm", "l40s"])
def test_a_compiled_fine_tune_runs_faster_and_says_why(gpu: str) -> None:
    arch, card = resolve_model("llama-3.1-8b"), load_catalog().resolve(gpu)
    job = make_job(task="lora", batch=2, seq=2048, checkpointing="full")
    eager = estimate_throughput(arch, job, card)
    compiled = estimate_throughput(arch, make_job(task="lora", batch=2, seq=2048,
                                                  checkpointing="full", compiled=True), card)  # fmt: skip
    assert compiled.throughput.value / eager.throughput.value == pytest.approx(
        compile_speedup(arch), rel=0.01
    )
    assert "for torch.compile, fitted on 2 sources' paired runs" in compiled.provenance


@given(st.integers(min_value=64, max_value=65536), st.integers(min_value=64, max_value=65536))
def test_a_wider_model_gains_less(h1: int, h2: int) -> None:
    a, b = resolve_model("llama-3.2-1b"), resolve_model("llama-3.1-70b")
    assert compile_speedup(a) > compile_speedup(b) > 1
    from dataclasses import replace

    narrow, wide = sorted((h1, h2))
    assert compile_speedup(replace(a, hidden_size=narrow)) >= compile_speedup(
        replace(a, hidden_size=wide)
    )
    assert compile_speedup(replace(a, hidden_size=narrow)) <= 1 / (1 - MAX_REMOVED_SHARE)
