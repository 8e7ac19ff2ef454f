"""The roofline's work quantities against their papers (the throughput estimator's core)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from whichgpu.catalog import Catalog
from whichgpu.catalog.records import Benchmark
from whichgpu.estimate.efficiency import (
    ideal_rate,
    observe,
    observed_efficiency,
    power_density,
)
from whichgpu.estimate.efficiency_model import load_efficiency, sustained_clock
from whichgpu.estimate.parallel import allreduce_seconds, tensor_parallel_seconds
from whichgpu.estimate.perf import (
    decode_bytes_per_step,
    image_flops,
    matmul_params,
    tensor_tflops,
    train_flops_per_token,
)
from whichgpu.inputs.job_input import make_job
from whichgpu.models import resolve_model


def test_palm_training_flops_per_token() -> None:
    """PaLM App. B: 6·N + 12·L·H·Q·T (N without the embedding lookup)."""
    arch = resolve_model("llama-2-7b")
    n = arch.total_params - arch.params.embedding
    flops = train_flops_per_token(arch, make_job(task="train"), 2048)
    assert flops == 6 * n + 12 * 32 * 32 * 128 * 2048


def test_recomputation_adds_a_forward_and_lora_skips_weight_gradients() -> None:
    arch = resolve_model("llama-2-7b")
    base = train_flops_per_token(arch, make_job(task="train"), 2048)
    full = make_job(task="train", checkpointing="full")
    recompute = train_flops_per_token(arch, full, 2048, recomputed=True)
    lora = train_flops_per_token(arch, make_job(task="lora"), 2048)
    assert recompute == pytest.approx(base * 4 / 3)
    assert lora == pytest.approx(base * 2 / 3)
    # PaLM's model FLOPs, the count MFU is quoted in, leave the recomputation out: the work
    # is the same, only the hardware does more (Chowdhery et al., 2022, App. B; Korthikanti
    # et al., 2022, §6: "model FLOPs utilization" beside "hardware FLOPs utilization")
    assert train_flops_per_token(arch, full, 2048) == pytest.approx(base)
    executed = train_flops_per_token(arch, full, 2048, executed=True)
    assert executed > train_flops_per_token(arch, make_job(task="train"), 2048, executed=True)


def test_the_mfu_shown_is_palms_whatever_the_recomputation(catalog: Catalog) -> None:
    """A checkpointed step's MFU was its hardware FLOPs utilisation (×4/3)."""
    from whichgpu.estimate.throughput import estimate_throughput

    arch, gpu = resolve_model("llama-3.1-8b"), catalog.gpu("h100-sxm")
    job = make_job(task="finetune", batch=2, checkpointing="full", precision="bf16-true")
    est = estimate_throughput(arch, job, gpu)
    peak = gpu.bf16_tensor_dense_tflops * 1e12  # type: ignore[operator]
    palm = train_flops_per_token(arch, job, job.seq)
    assert est.mfu == pytest.approx(est.throughput.value * palm / peak, rel=1e-9)


def test_causal_attention_runs_half_the_score_matrix() -> None:
    """FlashAttention-2 (§3.1) skips the blocks a causal mask hides: the executed attention
    term is half PaLM's (MFU stays in PaLM's count); eager attention and an encoder's
    bidirectional attention compute all of it."""
    llama, bert = resolve_model("llama-2-7b"), resolve_model("bert-base-uncased")
    job = make_job(task="train")
    n = llama.total_params - llama.params.embedding
    attention = 12 * 32 * 32 * 128 * 2048
    assert train_flops_per_token(llama, job, 2048, executed=True) == 6 * n + attention / 2
    eager = make_job(task="train", attention="eager")
    assert train_flops_per_token(llama, eager, 2048, executed=True) == 6 * n + attention
    full = train_flops_per_token(bert, job, 512)
    assert train_flops_per_token(bert, job, 512, executed=True) == full


def test_long_sequences_train_faster_with_flash_than_eager_attention(catalog: Catalog) -> None:
    from whichgpu.estimate.throughput import estimate_throughput

    arch, gpu = resolve_model("llama-3.1-8b"), catalog.gpu("h100-sxm")
    flash = make_job(task="lora", seq=32768)
    eager = make_job(task="lora", seq=32768, attention="eager")
    fast = estimate_throughput(arch, flash, gpu).throughput.value
    slow = estimate_throughput(arch, eager, gpu).throughput.value
    assert fast > slow * 1.3  # (4N + 2/3·attention) over (4N + 1/3·attention) at 32k


def test_an_unfitted_architecture_takes_its_predecessors_factor(catalog: Catalog) -> None:
    """No benchmark has a Blackwell GPU: the B200 (HBM) inherits Hopper's factor, not 1 (an
    LLM training step Hopper's LLM training factor)."""
    from whichgpu.estimate.throughput import estimate_throughput

    job = make_job(task="train", precision="bf16-mixed")
    b200 = estimate_throughput(resolve_model("llama-3.1-8b"), job, catalog.gpu("b200"))
    h100 = estimate_throughput(resolve_model("llama-3.1-8b"), job, catalog.gpu("h100-sxm"))
    assert "Blackwell not fitted for LLM training: Hopper's training factor" in b200.provenance
    assert b200.efficiency == pytest.approx(h100.efficiency, rel=0.05)
    cnn = estimate_throughput(resolve_model("resnet-50"), make_job(task="train", batch=256),
                              catalog.gpu("b200"))  # fmt: skip
    assert "Blackwell not fitted: Hopper's factor" in cnn.provenance


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


def _decode(gpu: str, batch: int) -> Benchmark:
    return Benchmark(
        id="user-decode", gpu=gpu, regime="llm-decode", model="llama-3.1-8b",
        precision="16-true", batch=batch, seq=200, generate=128, metric="throughput",
        value=1.0, unit="tokens/s", harness="trtllm", source="whichgpu", as_of="undated",
    )  # fmt: skip


def test_a_decode_step_sums_its_kernels_each_at_its_own_bound(catalog: Catalog) -> None:
    """The per-operator roofline (Yuan et al., 2024, §2.2): at batch 256 the GEMMs are
    compute-bound and attention's KV reads come after them, each part at its own resource's
    efficiency; at batch 1 the whole step reads memory."""
    a100 = catalog.resolve("a100")
    arch = resolve_model("llama-3.1-8b")
    peak, bandwidth = 312e12, a100.memory_bandwidth_gb_per_s * 1e9
    gemm_s = 256 * 2 * matmul_params(arch) / peak
    kv_s = 32 * 2 * 8 * 128 * (200 + 64) * 256 * 2 / bandwidth  # the mean context
    big = ideal_rate(_decode(a100.id, 256), a100)
    assert big is not None and big.bound == "compute"
    assert big.rate == pytest.approx(256 / (gemm_s + kv_s), rel=1e-3)
    assert big.other_share == pytest.approx(kv_s / (gemm_s + kv_s), rel=1e-3)
    one = ideal_rate(_decode(a100.id, 1), a100)
    assert one is not None and one.bound == "memory bandwidth" and one.other_share == 0
    model, _ = load_efficiency()
    obs = observe(_decode(a100.id, 256), a100)
    assert obs is not None and (obs.factor, obs.other_factor) == ("Ampere", "hbm")
    compute, _ = model.efficiency(obs.group, "Ampere", obs.unit)
    memory, _ = model.efficiency(obs.group, "hbm", "memory")
    blended = obs.ideal_s * ((1 - obs.other_share) / compute + obs.other_share / memory)
    assert model.seconds_per_unit(obs) >= blended  # plus the harness's per-step overhead


def test_an_fp8_decode_step_reads_its_8_bit_weights_once(catalog: Catalog) -> None:
    """An fp8 run's weights are 8-bit already (quantised linear layers, 16-bit embeddings
    and head): a step of one sequence reads them once, not half of them. A KV dtype given
    with the run is kept; without one an fp8 run's cache is fp8 (TensorRT-LLM's builds)."""
    from whichgpu.estimate.memory import weights_bytes

    h100 = catalog.resolve("h100-sxm")
    arch = resolve_model("llama-3.1-8b")
    fp8 = msgspec.structs.replace(_decode(h100.id, 1), precision="fp8", seq=1, generate=2)
    weights = weights_bytes(arch, make_job(task="inference", quant="fp8"))
    assert weights / arch.total_params == pytest.approx(1.13, abs=0.01)  # embeddings, head: 16
    kv = 32 * 2 * 8 * 128 * 2 * 1.0  # two tokens' context in fp8
    one = ideal_rate(fp8, h100)
    assert one is not None and one.bound == "memory bandwidth"
    assert one.rate == pytest.approx(h100.memory_bandwidth_gb_per_s * 1e9 / (weights + kv))
    kept = ideal_rate(msgspec.structs.replace(fp8, kv_dtype="auto"), h100)
    assert kept is not None
    assert kept.rate == pytest.approx(h100.memory_bandwidth_gb_per_s * 1e9 / (weights + 2 * kv))


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
    pcie = allreduce_seconds(grads, 4, catalog.resolve("l40s"))  # PCIe 4.0 x16: 31.5 GB/s
    # NCCL's 128-byte payloads carry 0.8 of NVLink's line rate (nccl-tests#149: 240 GB/s)
    assert nvlink == pytest.approx(2 * 7 / 8 * grads / 240e9)
    # a ring between peer-to-peer cards reaches 0.66 of the link rate (nccl-tests runs,
    # validation/nccl_busbw.csv), across both sockets of a server as under one
    assert pcie == pytest.approx(2 * 3 / 4 * grads / (0.66 * 31.5e9))
    across = allreduce_seconds(grads, 8, catalog.resolve("l40s"))
    assert across == pytest.approx(2 * 7 / 8 * grads / (0.66 * 31.5e9))
    # GeForce cards have no P2P: NCCL stages through host memory, each byte crossing twice
    geforce = allreduce_seconds(grads, 4, catalog.resolve("rtx-4090"))
    assert geforce == pytest.approx(2 * 3 / 4 * grads / (31.5e9 / 2))


def test_observed_efficiencies_are_physical(catalog: Catalog) -> None:
    """Published throughput never beats the roofline by much (η ≤ 1, with measurement slack)."""
    for bench in catalog.benchmarks:
        eta = observed_efficiency(bench, catalog.gpu(bench.gpu))
        if eta is not None and "AMBIGUOUS" not in (bench.note or ""):
            assert 0 < eta <= 1.05, (bench.id, eta)


def test_a_ratio_has_no_roofline(catalog: Catalog) -> None:
    ratio = next(b for b in catalog.benchmarks if b.metric.startswith("speedup"))
    assert ideal_rate(ratio, catalog.gpu(ratio.gpu)) is None


def _render(gpu: str) -> Benchmark:
    return Benchmark(
        id="user-render", gpu=gpu, regime="render", model="blender-4.2", metric="score",
        value=1.0, unit="samples/min", harness="blender-opendata", source="whichgpu",
        as_of="undated",
    )  # fmt: skip


def test_a_render_score_has_a_roofline_and_rt_cores_speed_it_up(catalog: Catalog) -> None:
    """Path tracing ∝ FP32 rate, traversal on RT cores where there are any: a GPU without
    them is slower per TFLOPS, never impossible; the user path (observe → model) works."""
    a100, l40s = catalog.resolve("a100"), catalog.resolve("l40s")
    per_tflops = {
        g.id: ideal_rate(_render(g.id), g).rate / g.fp32_tflops  # type: ignore[union-attr]
        for g in (a100, l40s)
    }
    assert per_tflops[a100.id] < per_tflops[l40s.id] / 1.5
    model, _ = load_efficiency()
    obs = observe(_render(l40s.id), l40s)
    assert obs is not None and obs.factor == "rt:3" and obs.group[1] == "render"
    assert 0 < model.seconds_per_unit(obs) < float("inf")


def test_tensor_parallel_adds_two_allreduces_per_layer(catalog: Catalog) -> None:
    """Megatron-LM: 2 all-reduces of tokens·hidden 16-bit values per layer and forward."""
    arch, h100 = resolve_model("llama-2-70b"), catalog.resolve("h100-sxm")
    seconds = tensor_parallel_seconds(arch, 128, 4, h100)
    payload = 2 * arch.n_layers * 128 * arch.hidden_size * 2
    assert seconds == pytest.approx(allreduce_seconds(payload, 4, h100))
    assert tensor_parallel_seconds(arch, 128, 1, h100) == 0


def test_a_power_limited_card_loses_clock_and_eta_stays_physical(catalog: Catalog) -> None:
    model, _ = load_efficiency()
    a10, a40 = catalog.resolve("a10"), catalog.resolve("a40")
    assert sustained_clock(power_density(a10), model.terms) < 1.0
    assert sustained_clock(power_density(a10), model.terms) < sustained_clock(
        power_density(a40), model.terms
    )
    for bench in catalog.benchmarks:
        obs = observe(bench, catalog.gpu(bench.gpu))
        if obs is not None:
            eta, _ = model.efficiency(obs.group, obs.factor, obs.unit, obs.power_w_per_tflops)
            assert 0 < eta <= 1


def test_nvlink_domains_bridged_pairs_and_baseboards(catalog: Catalog) -> None:
    """An SXM baseboard's NVSwitch joins eight; an NVLink bridge joins two PCIe cards, only
    where the user says the pair is bridged (instances do not state it). A ring over more
    GPUs than the domain crosses PCIe; GeForce cards stage it through host memory."""
    from whichgpu.estimate.parallel import bridgeable, link_gb_per_s, nvlink_domain

    a6000, a100 = catalog.gpu("rtx-a6000"), catalog.gpu("a100-80gb-sxm")
    assert nvlink_domain(a6000) == 1 and nvlink_domain(a6000, bridged=True) == 2
    assert nvlink_domain(a100) == 8 == nvlink_domain(a100, bridged=True)
    assert nvlink_domain(catalog.gpu("l40s"), bridged=True) == 1
    assert link_gb_per_s(a6000, 2, bridged=True) == pytest.approx(112.5 / 2 * 0.8)
    # PCIe 4.0 x16, one direction, at the share NCCL reaches between P2P cards, under one
    # socket and across two alike
    assert link_gb_per_s(a6000, 2) == pytest.approx(31.5 * 0.66)
    assert link_gb_per_s(a6000, 4, bridged=True) == pytest.approx(31.5 * 0.66)
    assert link_gb_per_s(a6000, 8) == pytest.approx(31.5 * 0.66)
    assert link_gb_per_s(a100, 8) == pytest.approx(240.0)
    # two nodes: each GPU's own HDR 200 Gb/s InfiniBand NIC (DGX A100)
    assert link_gb_per_s(a100, 16) == 25.0
    # a GeForce pair without its bridge has no peer-to-peer: staged through host memory
    rtx3090 = catalog.gpu("rtx-3090")
    assert link_gb_per_s(rtx3090, 2) == pytest.approx(31.5 * 0.5)
    assert link_gb_per_s(rtx3090, 2, bridged=True) == pytest.approx(112.5 / 2 * 0.8)
    # the H100 NVL is sold as bridged pairs: planned bridged
    assert nvlink_domain(catalog.gpu("h100-nvl")) == 2
    # where bridges could join cards: two or more PCIe cards with connectors in one machine
    assert bridgeable(a6000, 2) and bridgeable(a6000, 8) and bridgeable(a6000, 4, 2)
    assert not bridgeable(a6000, 1) and not bridgeable(a6000, 2, per_instance=1)
    assert not bridgeable(a100, 2) and not bridgeable(catalog.gpu("l40s"), 2)
    assert not bridgeable(catalog.gpu("h100-nvl"), 2)


def test_a_bridged_pcie_pair_serves_faster_and_the_answer_says_which(catalog: Catalog) -> None:
    """NVIDIA's v0.14 table: 70B on 2 × A100 PCIe at 1000/1000 serves 258 tok/s, 0.55 of
    the SXM pair's 469: the pair ran over PCIe. Unbridged (the default: PCIe's bandwidth and
    its all-reduce start-up) the estimate is slower than bridged, and the answer says the
    link and the setting."""
    from whichgpu.commands.estimate import estimate_job
    from whichgpu.inputs.requests import EstimateRequest

    arch = resolve_model("llama-3.1-70b")
    gpu = catalog.resolve("a100-80gb-pcie")
    asked = dict(model="llama-3.1-70b", task="inference", gpu=gpu.id, count=2, engine="trtllm",
                 prompt=1000, generate=1000)  # fmt: skip
    plain = estimate_job(gpu, arch, EstimateRequest(**asked))  # type: ignore[arg-type]
    bridged = estimate_job(gpu, arch, EstimateRequest(**asked, nvlink_bridge=True))  # type: ignore[arg-type]
    assert plain.throughput.value == pytest.approx(379, rel=0.05)
    assert bridged.throughput.value == pytest.approx(458, rel=0.05)
    # 70B in BF16 on two 80 GB cards leaves the KV cache 14 % of their memory: said too
    assert [n.code for n in plain.notes] == ["warn_tight_kv", "note_pcie_link"]
    gain = plain.notes[1].params["gain"]
    assert gain == pytest.approx(bridged.throughput.value / plain.throughput.value - 1, abs=1e-3)
    assert "note_pcie_link" not in [n.code for n in bridged.notes]


def test_the_bridge_note_only_where_bridges_would_speed_the_job(catalog: Catalog) -> None:
    """The note is the job planned again with bridges: none where they change nothing (a
    LoRA step on 2 × RTX 3090 hides its gradient exchange; transformers splits layers, no
    all-reduce), none for cards in separate instances."""
    from whichgpu.commands.estimate import estimate_job
    from whichgpu.inputs.requests import EstimateRequest
    from whichgpu.inputs.workload_files import make_component
    from whichgpu.plan import Hardware
    from whichgpu.plan import plan as run_component
    from whichgpu.plan.jobs import model_job

    rtx3090, a6000 = catalog.resolve("rtx-3090"), catalog.resolve("rtx-a6000")
    lora = estimate_job(rtx3090, resolve_model("llama-3.1-8b"), EstimateRequest(model="llama-3.1-8b", task="lora",
                                                           gpu=rtx3090.id, count=2))  # fmt: skip
    assert "note_pcie_link" not in [n.code for n in lora.notes]
    asked = dict(model="llama-2-13b", task="inference", gpu=a6000.id, count=2, prompt=512,
                 generate=256, request_rate=2.0)  # fmt: skip
    arch = resolve_model("llama-2-13b")
    layers = estimate_job(a6000, arch, EstimateRequest(**asked, engine="transformers"))  # type: ignore[arg-type]
    joined = estimate_job(a6000, arch, EstimateRequest(**asked, engine="transformers",  # type: ignore[arg-type]
                                                       nvlink_bridge=True))  # fmt: skip
    assert layers.throughput.value == pytest.approx(joined.throughput.value)
    assert "note_pcie_link" not in [n.code for n in layers.notes]
    tensor = estimate_job(a6000, arch, EstimateRequest(**asked, engine="vllm"))  # type: ignore[arg-type]
    assert "note_pcie_link" in [n.code for n in tensor.notes]
    component = make_component({"kind": "inference", "model": "llama-2-13b", "prompt": 512,
                                "generate": 256, "request_rate": 2, "engine": "vllm",
                                "hours": 10})  # fmt: skip
    prepared = model_job(component)
    one_box = run_component(component, Hardware(a6000, 2, 1), prepared)
    two_boxes = run_component(component, Hardware(a6000, 2, 1, per_node=1), prepared)
    assert "note_pcie_link" in [n.code for n in one_box.notes]
    assert "note_pcie_link" not in [n.code for n in two_boxes.notes]


def test_a_transformer_training_token_streams_its_saved_activations(catalog: Catalog) -> None:
    """The memory-bound kernels between a training step's GEMMs pass over what each layer
    saves, 34·h bytes a token in 16 bits (Korthikanti et al., 2022, Eq. 1, no attention
    scores under FlashAttention): a share of the step that shrinks as the hidden size grows."""
    from whichgpu.estimate.streams import stream_seconds

    h100 = catalog.resolve("h100")
    small, large = resolve_model("llama-3.2-1b"), resolve_model("llama-3.1-70b")
    bench = Benchmark(
        id="user-train", gpu=h100.id, regime="llm-train", model="llama-3.2-1b",
        precision="bf16-mixed", batch=1, seq=2048, metric="throughput", value=1.0,
        unit="tokens/s", harness="mosaicml-llmfoundry", source="whichgpu", as_of="undated",
    )  # fmt: skip
    per_token = 34 * small.hidden_size * small.n_layers / (h100.memory_bandwidth_gb_per_s * 1e9)
    assert stream_seconds(bench, h100, small) == pytest.approx(per_token)
    job = make_job(task="train")
    share = {
        a.id: stream_seconds(bench, h100, a) / (train_flops_per_token(a, job, 2048) / 989e12)
        for a in (small, large)
    }
    assert share[large.id] < share[small.id] / 2  # h·L grows slower than N ∝ h²·L


def test_a_factor_fitted_on_other_work_is_said_and_widened(catalog: Catalog) -> None:
    """LLM training on Ada (no LLM training run) takes Ada's own factor, fitted on other
    work: an extrapolation (issue 44), warned and with a wider range than a measured
    architecture's (Ampere); Blackwell, fitted on nothing, is warned too."""
    from whichgpu.estimate.throughput import estimate_throughput
    from whichgpu.inputs.job_input import make_job
    from whichgpu.models import resolve_model

    arch, job = resolve_model("llama-3.1-8b"), make_job(task="lora", batch=4)

    def width(gpu: str) -> float:
        rate = estimate_throughput(arch, job, catalog.resolve(gpu)).throughput
        return (rate.high - rate.low) / rate.value

    assert width("rtx-4090") > 1.5 * width("a100-80gb-sxm")
    from whichgpu.commands.recommend import recommend
    from whichgpu.inputs.requests import Constraints, Workload
    from whichgpu.inputs.workload_files import make_component

    def warned(gpu: str) -> bool:
        component = make_component({"kind": "lora", "model": "llama-3.1-8b", "tokens": 1e8})
        only = catalog.restricted([gpu])
        result = recommend(only, Workload((component,), Constraints(max_gpus=1)))
        codes = {n.code for n in result.warnings}
        return "warn_prior_efficiency" in codes

    assert warned("rtx-4090") and warned("b200") and not warned("a100-80gb-sxm")


def test_a_pcie_ring_starts_each_all_reduce_slower_than_nvlink(catalog: Catalog) -> None:
    """TensorRT-LLM all-reduces through peer memory over NVLink and through NCCL over PCIe:
    the start-up α is fitted apart per link (the L40S's TP 4 and TP 8 rows), larger over
    PCIe, and a run's link is the one its ring crosses (an unbridged PCIe pair: PCIe)."""
    from whichgpu.estimate.collectives import tensor_parallel_link
    from whichgpu.estimate.efficiency import observe
    from whichgpu.estimate.efficiency_model import load_efficiency

    model, _ = load_efficiency()
    nvlink, pcie = model.alpha_s("trtllm"), model.alpha_s("trtllm", "pcie")
    assert 0 < nvlink < pcie < 500e-6
    assert model.alpha_s("trtllm-static", "pcie") == model.alpha_s("trtllm-static")
    l40s = [b for b in catalog.benchmarks if b.gpu == "l40s" and b.gpus > 1
            and b.regime == "llm-serve"]  # fmt: skip
    assert l40s and all(tensor_parallel_link(b, catalog.gpu("l40s")) == "pcie" for b in l40s)
    obs = observe(l40s[0], catalog.gpu("l40s"))
    assert obs is not None and obs.link == "pcie" and obs.collectives > 0
    pair = msgspec.structs.replace(l40s[0], gpu="a100-80gb-pcie", gpus=2)
    a100_pcie = catalog.gpu("a100-80gb-pcie")
    assert tensor_parallel_link(pair, a100_pcie) == "pcie"
    bridged = msgspec.structs.replace(pair, nvlink_bridge=True)
    assert tensor_parallel_link(bridged, a100_pcie) == "nvlink"


def test_the_fitted_model_is_read_once() -> None:
    """The efficiency table is parsed once a process: a recommend asks for it thousands of
    times (a decorator moved off it read it 1,794 times, 0.45 → 1.4 s)."""
    from whichgpu.estimate.efficiency_model import load_efficiency, load_framework_factors

    assert load_efficiency() is load_efficiency()
    assert load_framework_factors() is load_framework_factors()


@given(
    experts=st.integers(1, 512),
    top_k=st.integers(1, 16),
    tokens=st.integers(1, 4096),
)
def test_a_batch_reads_no_more_experts_than_it_can_route_to(
    experts: int, top_k: int, tokens: int
) -> None:
    """The experts a decode step reads: never more than the experts, nor than the routes
    its tokens take, and more with every token (the occupancy expectation)."""
    from whichgpu.estimate.perf import experts_touched

    k = min(top_k, experts)
    touched = experts_touched(experts, k, tokens)
    assert k - 1e-9 <= touched <= min(experts, k * tokens) + 1e-9
    assert experts_touched(experts, k, tokens + 1) >= touched - 1e-9


def test_four_sequences_of_deepseek_v3_read_thirty_of_its_experts() -> None:
    """4 × 8 routes over 256 experts meet on some: 30.5 are read, not 32."""
    from whichgpu.estimate.perf import experts_touched

    assert experts_touched(256, 8, 4) == pytest.approx(30.53, abs=0.01)
    assert experts_touched(8, 2, 2) == pytest.approx(3.5)


def test_tensor_parallel_gpus_each_read_the_kv_copy_they_hold() -> None:
    """MLA's latent is every head's: on 8 GPUs each holds and reads all of it; Qwen3's 4 KV
    heads on 8 GPUs sit on two GPUs each; Llama 3.1 70B's 8 split over 8 without a copy."""
    from whichgpu.estimate.kv_cache import kv_cache_bytes, kv_copies
    from whichgpu.estimate.perf import kv_read_bytes

    deepseek, qwen, llama = (resolve_model(m) for m in ("deepseek-r1", "qwen3-235b-a22b",
                                                         "llama-3.1-70b"))  # fmt: skip
    assert kv_copies(deepseek, 8) == 8.0
    assert kv_copies(qwen, 8) == 2.0
    assert kv_copies(qwen, 4) == 1.0
    assert kv_copies(llama, 8) == 1.0
    assert kv_copies(deepseek, 1) == 1.0
    job = make_job(task="inference", batch=4)
    one = kv_read_bytes(deepseek, job, 1000)
    assert one == pytest.approx(61 * 1000 * 576 * 4 * 2)
    assert kv_read_bytes(deepseek, job, 1000, tp=8) == pytest.approx(8 * one)
    # the memory a GPU holds and the bytes it reads are the same copy
    on_eight = make_job(task="inference", batch=4, tp=8, gpus=8)
    for arch in (deepseek, qwen, llama):
        held = kv_cache_bytes(arch, on_eight, tokens=1000) * 8
        assert held == pytest.approx(kv_read_bytes(arch, on_eight, 1000, tp=8))


def test_mla_decodes_over_its_latent_in_the_absorbed_form() -> None:
    """DeepSeek-V2 App. B: each of the 128 heads attends over the 576-element latent (scores)
    and its 512-element part (values): 2·128·(2·512 + 64) FLOPs a position and layer, about
    2.8 times the uncompressed form's 4·128·192."""
    from whichgpu.estimate.perf import decode_attention_flops

    deepseek, llama = resolve_model("deepseek-r1"), resolve_model("llama-3.1-8b")
    assert decode_attention_flops(deepseek, 1) == pytest.approx(61 * 2 * 128 * 1088)
    assert decode_attention_flops(llama, 100) == pytest.approx(32 * 100 * 4 * 32 * 128)


def test_the_attention_core_runs_in_the_kv_caches_precision(catalog: Catalog) -> None:
    """An FP8 model's GEMMs at the FP8 peak, its attention at the 16-bit one unless the KV
    cache is FP8 (vLLM's FlashAttention 3 then runs it in FP8); an NVFP4 model's attention at
    the FP8 peak; 16-bit GEMMs and a GPU without FP8 units: no difference."""
    from whichgpu.estimate.perf import attention_slowdown

    h100, b200, a100 = (catalog.resolve(g) for g in ("h100-sxm", "b200", "a100-80gb-sxm"))
    assert attention_slowdown(h100, "fp8", "auto") == pytest.approx(
        h100.fp8_tensor_dense_tflops / h100.bf16_tensor_dense_tflops
    )
    assert attention_slowdown(h100, "fp8", "fp8") == 1.0
    assert attention_slowdown(h100, "bf16-true", "auto") == 1.0
    assert attention_slowdown(b200, "nvfp4", "fp8") == pytest.approx(
        b200.fp4_tensor_dense_tflops / b200.fp8_tensor_dense_tflops
    )
    assert attention_slowdown(a100, "fp8", "auto") == 1.0  # no FP8 units: 16 bits throughout


def test_a_long_fp8_prompt_prefills_slower_with_a_16_bit_cache(catalog: Catalog) -> None:
    """DeepSeek-R1 (FP8) on 8 × H200, a 32,000-token prompt alone, its prefill timed on the
    calibrated (TensorRT-LLM) harness every engine's prefill is: with vLLM's and SGLang's
    default 16-bit cache its attention runs at half the FP8 peak, so the prefill takes longer than
    with an FP8 cache: by at most the attention's share of the FLOPs (over half at a
    16,000-token mean context), less what the tensor-parallel all-reduces add to both
    (1.27 here)."""
    from whichgpu.estimate.perf import attention_flops_per_token, matmul_params
    from whichgpu.estimate.throughput import prefill_seconds

    arch = resolve_model("deepseek-r1")
    gpu = catalog.resolve("h200")
    auto = make_job(task="inference", quant="fp8", prompt=32_000, generate=1, batch=1)
    fp8 = make_job(task="inference", quant="fp8", prompt=32_000, generate=1, batch=1,
                   kv_dtype="fp8")  # fmt: skip
    slow, fast = (prefill_seconds(arch, j, gpu, 8, "trtllm") for j in (auto, fp8))
    attention = attention_flops_per_token(arch, 16_000)
    share = attention / (attention + 2 * matmul_params(arch))
    assert share > 0.5
    assert 1.2 < slow / fast < 1 + share
