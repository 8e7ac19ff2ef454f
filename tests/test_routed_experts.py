"""A served MoE's routed experts at their own efficiency (whichgpu.estimate.routed_experts):
the fitted law, what it changes, and what it leaves alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from whichgpu.estimate.perf import forward_flops_per_token, routed_active_params
from whichgpu.estimate.routed_experts import (
    REFERENCE_GEMM_SIZE,
    expert_gemm_size,
    fitting,
    routed_efficiency,
    served_flops_per_token,
)
from whichgpu.models import resolve_model

ROOT = Path(__file__).resolve().parents[1]


def test_the_law_rises_with_the_experts_gemm_size() -> None:
    # the shipped fit (framework_efficiency.csv): η₀ 0.292 at 10M elements, slope 0.35
    small, large = resolve_model("qwen3-30b-a3b"), resolve_model("llama-4-maverick")
    assert expert_gemm_size(small) == 2048 * 768
    assert expert_gemm_size(large) == 5120 * 8192
    assert routed_efficiency(small) == pytest.approx(0.292 * (2048 * 768 / 1e7) ** 0.35, rel=0.01)
    assert routed_efficiency(small) < routed_efficiency(resolve_model("deepseek-r1"))
    assert routed_efficiency(resolve_model("deepseek-r1")) < routed_efficiency(large)
    assert routed_efficiency(large) < routed_efficiency(resolve_model("mixtral-8x7b")) < 1.0


def test_a_dense_model_keeps_its_flops() -> None:
    dense = resolve_model("llama-3.1-8b")
    assert served_flops_per_token(dense, 512) == forward_flops_per_token(dense, 512)


@given(st.floats(min_value=0.05, max_value=1.0))
def test_the_routed_share_is_counted_at_its_efficiency(eta: float) -> None:
    moe = resolve_model("deepseek-r1")
    with fitting(eta):
        extra = served_flops_per_token(moe, 0) - forward_flops_per_token(moe, 0)
    routed = 2 * routed_active_params(moe)
    assert extra == pytest.approx(routed * (1 / eta - 1), rel=1e-9, abs=routed * 1e-12)


def test_the_law_carries_to_a_model_left_out() -> None:
    # leave one model out: each model's runs planned at the law the other four fit
    sys.path.insert(0, str(ROOT))
    from accuracy.published_serving import fit_routed_efficiency

    fitted = fit_routed_efficiency((ROOT / "validation" / "published_serving.csv").read_text())
    assert fitted is not None
    eta0, slope, runs, low, high = fitted
    assert runs == 38  # 30 of TensorRT-LLM's post-v1.0 page, 8 Mixtral 8x7B rows of v0.17's
    assert eta0 == pytest.approx(0.292, abs=0.01)
    assert slope == pytest.approx(0.35, abs=0.02)
    assert -0.35 < low < 0 < high < 0.45
    assert REFERENCE_GEMM_SIZE == 1e7
