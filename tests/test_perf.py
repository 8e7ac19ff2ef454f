"""The roofline's work quantities against their papers (the throughput estimator's core)."""

from __future__ import annotations

import pytest

from whichgpu.catalog import Catalog
from whichgpu.estimate.efficiency import ideal_rate, observed_efficiency
from whichgpu.estimate.perf import (
    allreduce_seconds,
    decode_bytes_per_step,
    image_flops,
    tensor_tflops,
    train_flops_per_token,
)
from whichgpu.models import resolve_model
from whichgpu.workload import make_job


def test_palm_training_flops_per_token() -> None:
    """PaLM App. B: 6·N + 12·L·H·Q·T (N without the embedding lookup)."""
    arch = resolve_model("llama-2-7b")
    n = arch.total_params - arch.params.embedding
    flops = train_flops_per_token(arch, make_job(task="train"), 2048)
    assert flops == 6 * n + 12 * 32 * 32 * 128 * 2048


def test_recomputation_adds_a_forward_and_lora_skips_weight_gradients() -> None:
    arch = resolve_model("llama-2-7b")
    base = train_flops_per_token(arch, make_job(task="train"), 2048)
    recompute = train_flops_per_token(arch, make_job(task="train", checkpointing="full"), 2048)
    lora = train_flops_per_token(arch, make_job(task="lora"), 2048)
    assert recompute == pytest.approx(base * 4 / 3)
    assert lora == pytest.approx(base * 2 / 3)


def test_resnet50_is_4_09_gmacs_a_forward() -> None:
    arch = resolve_model("resnet-50")
    assert image_flops(arch, training=False) == pytest.approx(8.18e9)
    assert image_flops(arch, training=True) == pytest.approx(3 * 8.18e9)


def test_decode_reads_the_weights_and_the_kv_cache_once_a_step() -> None:
    arch = resolve_model("llama-3.1-8b")
    job = make_job(task="inference", batch=4)
    weights = 2 * arch.total_params
    kv = 32 * 2 * 8 * 128 * 1000 * 4 * 2
    assert decode_bytes_per_step(arch, job, 1000) == weights + kv


@pytest.mark.parametrize(
    ("gpu", "precision", "tflops"),
    [
        ("a100", "bf16-mixed", 312),
        ("a100", "32-true", 19.5),  # PyTorch keeps FP32 matmuls off TF32 by default
        ("a100", "tf32", 156),
        ("rtx-4090", "16-mixed", 165.2),  # GeForce: FP32 accumulate at half rate
        ("h100", "fp8", 1978.9),
        ("v100-32gb", "bf16-mixed", 15.7),  # no BF16 tensor cores: FP32 cores
        ("t4", "q4_k_m", 65),  # weight-only quantisation computes in FP16
    ],
)
def test_the_peak_a_precision_runs_at(
    catalog: Catalog, gpu: str, precision: str, tflops: float
) -> None:
    assert tensor_tflops(catalog.resolve(gpu), precision) == tflops


def test_ring_allreduce_over_nvlink_and_pcie(catalog: Catalog) -> None:
    grads = 2 * 7e9  # bf16 gradients of a 7B model
    nvlink = allreduce_seconds(grads, 8, catalog.resolve("a100"))  # 600 GB/s: 300 each way
    pcie = allreduce_seconds(grads, 8, catalog.resolve("l40s"))  # PCIe 4.0 x16: 31.5 GB/s
    assert nvlink == pytest.approx(2 * 7 / 8 * grads / 300e9)
    assert pcie / nvlink == pytest.approx(300 / 31.5)


def test_observed_efficiencies_are_physical(catalog: Catalog) -> None:
    """Published throughput never beats the roofline by much (η ≤ 1, with measurement slack)."""
    for bench in catalog.benchmarks:
        eta = observed_efficiency(bench, catalog.gpu(bench.gpu))
        if eta is not None and "AMBIGUOUS" not in (bench.note or ""):
            assert 0 < eta <= 1.05, (bench.id, eta)


def test_a_score_has_no_roofline(catalog: Catalog) -> None:
    render = next(b for b in catalog.benchmarks if b.workload == "render")
    assert ideal_rate(render, catalog.gpu(render.gpu)) is None
