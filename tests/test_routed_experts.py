"""A served MoE's routed experts at their own efficiency (whichgpu.estimate.routed_experts):
the fitted law, what it changes, and what it leaves alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whichgpu.estimate.perf import forward_flops_per_token, routed_active_params
from whichgpu.estimate.routed_experts import (
    REFERENCE_GEMM_SIZE,
    expert_gemm_size,
    fitting,
    routed_efficiency,
    routed_engines,
    served_flops_per_token,
)
from whichgpu.models import resolve_model

ROOT = Path(__file__).resolve().parents[1]


def test_tensorrt_llms_law_rises_with_the_experts_gemm_size() -> None:
    # the shipped fit (framework_efficiency.csv): η₀ 0.298 at 10M elements, slope 0.36
    small, large = resolve_model("qwen3-30b-a3b"), resolve_model("llama-4-maverick")
    assert expert_gemm_size(small) == 2048 * 768
    assert expert_gemm_size(large) == 5120 * 8192

    def trt(model: str) -> float:
        return routed_efficiency(resolve_model(model), "trtllm")

    assert routed_efficiency(small, "trtllm") == pytest.approx(
        0.298 * (2048 * 768 / 1e7) ** 0.36, rel=0.01
    )
    assert trt("qwen3-30b-a3b") < trt("deepseek-r1") < trt("llama-4-maverick")
    assert trt("llama-4-maverick") < trt("mixtral-8x7b") < 1.0


def test_an_engine_without_a_law_runs_its_experts_as_dense() -> None:
    # fitted on every source together, the law did not carry from one to the next: vLLM
    # and SGLang have none of their own (validation/published_serving_gathered.csv holds
    # their MoE runs, g202-g208)
    moe = resolve_model("deepseek-r1")
    assert routed_engines() == ("trtllm",)
    for engine in ("vllm", "sglang", "llamacpp"):
        assert routed_efficiency(moe, engine) == 1.0
        assert served_flops_per_token(moe, 0, engine) == forward_flops_per_token(moe, 0)


def test_a_dense_model_keeps_its_flops() -> None:
    dense = resolve_model("llama-3.1-8b")
    assert served_flops_per_token(dense, 512, "trtllm") == forward_flops_per_token(dense, 512)


# no deadline: each example clears every memoised curve (fitting), and the first one on a
# loaded machine took 271 ms against hypothesis's 200 (16 ms the next time)
@settings(deadline=None)
@given(st.floats(min_value=0.05, max_value=1.0))
def test_the_routed_share_is_counted_at_its_efficiency(eta: float) -> None:
    moe = resolve_model("deepseek-r1")
    with fitting(eta):
        extra = served_flops_per_token(moe, 0, "trtllm") - forward_flops_per_token(moe, 0)
    routed = 2 * routed_active_params(moe)
    assert extra == pytest.approx(routed * (1 / eta - 1), rel=1e-9, abs=routed * 1e-12)


def test_the_law_carries_to_a_model_left_out() -> None:
    # TensorRT-LLM's MoE runs come from two publications, one holding four of the five
    # models: each model's runs planned at the law the other four fit
    sys.path.insert(0, str(ROOT))
    from accuracy.published_serving import fit_routed_efficiency

    text = (ROOT / "validation" / "published_serving.csv").read_text()
    assert fit_routed_efficiency(text, "vllm") is None  # no MoE run of vLLM's to fit
    fitted = fit_routed_efficiency(text, "trtllm")
    assert fitted is not None
    eta0, slope, runs, low, high = fitted
    assert runs == 38  # 30 of TensorRT-LLM's post-v1.0 page, 8 Mixtral 8x7B rows of v0.17's
    assert eta0 == pytest.approx(0.298, abs=0.01)
    assert slope == pytest.approx(0.36, abs=0.02)
    assert -0.35 < low < 0 < high < 0.45
    assert REFERENCE_GEMM_SIZE == 1e7
