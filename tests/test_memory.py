"""The memory estimator: each formula against its paper, and invariants that must hold."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from whichgpu.catalog import Catalog
from whichgpu.commands.fit import fit
from whichgpu.errors import InvalidInput
from whichgpu.estimate.activations import decoder_layer_bytes
from whichgpu.estimate.memory import (
    estimate_memory,
    gradients_bytes,
    kv_cache_bytes,
    lora_parameters,
    master_weights_bytes,
    optimizer_bytes,
    optimizer_step_temp_bytes,
    weights_bytes,
)
from whichgpu.inputs.job_input import make_job
from whichgpu.models import resolve_model
from whichgpu.models.hf import parse_config

LLAMA_7B = resolve_model("llama-2-7b")
N = LLAMA_7B.total_params


def state_bytes_per_param(**job: object) -> float:
    j = make_job(task="train", **job)
    total = (
        weights_bytes(LLAMA_7B, j)
        + master_weights_bytes(LLAMA_7B, j)
        + gradients_bytes(LLAMA_7B, j)
        + optimizer_bytes(LLAMA_7B, j)
    )
    return total / N


def test_zero_paper_mixed_precision_adam_is_16_bytes_per_parameter() -> None:
    # 2 (fp16 weights) + 2 (fp16 grads) + 12 (fp32 master, momentum, variance): ZeRO §3.1
    assert state_bytes_per_param(precision="bf16-mixed", runtime="deepspeed") == 16.0


def test_torch_autocast_keeps_fp32_weights_and_grads() -> None:
    assert state_bytes_per_param(precision="bf16-mixed") == 16.0  # 4 + 4 + 8, no master copy


def test_pure_bf16_adam_is_8_bytes_per_parameter_plus_the_step_temp() -> None:
    assert state_bytes_per_param(precision="bf16-true") == 8.0
    job = make_job(task="train", precision="bf16-true")
    assert optimizer_step_temp_bytes(LLAMA_7B, job) / N == 2.0  # ~10 B/param at step()


def test_fp32_adamw_peaks_at_20_bytes_per_parameter_in_step() -> None:
    job = make_job(task="train", precision="32-true", batch=1, seq=128)
    estimate = estimate_memory(LLAMA_7B, job)
    assert estimate.phase == "optimizer step"
    state = sum(
        estimate.components[k] for k in ("weights", "gradients", "optimizer", "optimizer_step_temp")
    )
    assert state / N == 20.0


def test_sgd_and_8bit_adam_states() -> None:
    assert (
        optimizer_bytes(LLAMA_7B, make_job(task="train", precision="32-true", optimizer="sgd")) / N
        == 4.0
    )
    eight = optimizer_bytes(LLAMA_7B, make_job(task="train", optimizer="adamw-8bit")) / N
    assert eight == pytest.approx(2.0, abs=0.01)


def test_korthikanti_equation_1_for_a_gpt_layer() -> None:
    """GPT layer, 16-bit, dropout, no recomputation: s·b·h·(34 + 5·a·s/h) bytes (eq. 1)."""
    h, a, s, b = 1024, 16, 2048, 4
    gpt = parse_config({
        "model_type": "gpt2", "n_embd": h, "n_head": a, "n_layer": 24, "vocab_size": 50257,
        "activation_function": "gelu", "resid_pdrop": 0.1, "attn_pdrop": 0.1,
    })  # fmt: skip
    job = make_job(task="train", precision="16-true", runtime="megatron", attention="eager")
    assert decoder_layer_bytes(gpt, job, b, s) == s * b * h * (34 + 5 * a * s / h)


def test_kv_cache_of_llama_3_1_8b_is_128_kib_per_token() -> None:
    arch = resolve_model("llama-3.1-8b")  # 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes
    job = make_job(task="inference", seq=8192)
    assert kv_cache_bytes(arch, job) == 32 * 8 * 128 * 2 * 2 * 8192 == 2**30
    assert kv_cache_bytes(arch, make_job(task="inference", seq=8192, kv_dtype="fp8")) == 2**29


def test_mla_caches_its_latent() -> None:
    arch = resolve_model("deepseek-v3")  # (512 + 64) × 61 layers × 2 bytes per token
    assert kv_cache_bytes(arch, make_job(task="inference", seq=1)) == (512 + 64) * 61 * 2


def test_paged_kv_cache_rounds_up_to_blocks_of_16() -> None:
    arch = resolve_model("llama-3.1-8b")
    job = make_job(task="inference", seq=17)
    assert kv_cache_bytes(arch, job, paged=True) == kv_cache_bytes(arch, job, tokens=32)


def test_lora_adapters_count() -> None:
    # Hu et al.: r·(d_in + d_out) per matrix; q, k, v, o of Llama-2-7B at r = 8
    job = make_job(task="lora", lora_rank=8, lora_targets="attention")
    assert lora_parameters(LLAMA_7B, job) == 32 * 4 * 8 * (4096 + 4096)
    # PEFT's default (LoraConfig(r=8), target_modules for llama: q_proj, v_proj)
    assert lora_parameters(LLAMA_7B, make_job(task="lora")) == 32 * 2 * 8 * (4096 + 4096)
    names = make_job(task="lora", lora_targets="q_proj,v_proj")
    assert lora_parameters(LLAMA_7B, names) == lora_parameters(LLAMA_7B, make_job(task="lora"))
    # all-linear: every linear but the head (PEFT excludes the output embedding)
    mlp = 3 * 8 * (4096 + 11008)
    all_linear = make_job(task="lora", lora_targets="all-linear")
    assert lora_parameters(LLAMA_7B, all_linear) == 32 * (4 * 8 * 8192 + mlp)


def test_lora_targets_match_as_peft_does() -> None:
    from whichgpu.models.lora_targets import adapted

    gpt2 = resolve_model("gpt2")
    # "c_proj" ends both attn.c_proj and mlp.c_proj; "attn.c_proj" only the first
    assert [lin.name for lin in adapted(gpt2, "c_proj")] == ["attn.c_proj", "mlp.c_proj"]
    assert [lin.name for lin in adapted(gpt2, "attn.c_proj")] == ["attn.c_proj"]
    assert [lin.name for lin in adapted(gpt2, "peft-default")] == ["attn.c_attn"]


def test_unknown_lora_target_is_one_line_with_the_closest_name() -> None:
    with pytest.raises(InvalidInput) as err:
        estimate_memory(LLAMA_7B, make_job(task="lora", lora_targets="q_proj,v_prj"))
    message = str(err.value)
    assert "v_prj" in message and "did you mean v_proj" in message and "\n" not in message


def test_qlora_weights_are_nf4() -> None:
    job = make_job(task="qlora")
    per_param = weights_bytes(LLAMA_7B, job) / N
    assert 0.5 < per_param < 0.6  # 4.127 bits on linears, 16 bits on embeddings and norms


def test_bitsandbytes_4bit_linears_save_their_inputs_torchao_ones_do_not() -> None:
    """bitsandbytes' MatMul4Bit keeps its input whenever it needs a gradient, the weight
    frozen or not; torchao's LinearNF4 (torchtune's QLoRA) keeps only the weight. A Llama-2-7B
    layer's frozen 4-bit linears read four tensors: the two normed inputs (q/k/v; gate/up),
    the merged heads (o_proj) and the gated product (down), each saved once in bf16."""
    bnb = make_job(task="qlora", batch=1, seq=1304)
    torchao = make_job(task="qlora", batch=1, seq=1304, kbit_saves_inputs=False)
    extra = decoder_layer_bytes(LLAMA_7B, bnb, 1, 1304) - decoder_layer_bytes(
        LLAMA_7B, torchao, 1, 1304
    )
    assert extra == 1304 * (3 * 4096 + 11008) * 2
    lora = make_job(task="lora", batch=1, seq=1304)
    assert decoder_layer_bytes(LLAMA_7B, lora, 1, 1304) == decoder_layer_bytes(
        LLAMA_7B, torchao, 1, 1304
    )


def test_inference_int4_quantization() -> None:
    # GPTQ/AWQ int4, group size 128: 4.25 bits on the linear layers; embeddings and the
    # output head stay 16-bit. Llama-2-7B: 32 × (4·4096² + 3·4096·11008) linear weights.
    linear = 32 * (4 * 4096**2 + 3 * 4096 * 11008)
    job = make_job(task="inference", quant="int4")
    assert weights_bytes(LLAMA_7B, job) == linear * 4.25 / 8 + (N - linear) * 2


jobs = st.fixed_dictionaries({
    "task": st.sampled_from(["inference", "train", "lora", "qlora"]),
    "precision": st.sampled_from(["32-true", "bf16-mixed", "bf16-true"]),
    "batch": st.integers(1, 8),
    "seq": st.integers(16, 4096),
    "attention": st.sampled_from(["sdpa", "eager"]),
    "checkpointing": st.sampled_from(["none", "full"]),
})  # fmt: skip
models = st.sampled_from(
    [
        "gpt2",
        "llama-3.2-1b",
        "qwen2.5-0.5b",
        "mixtral-8x7b",
        "deepseek-v2-lite",
        "vit-b-16",
        "resnet-50",
    ]
)


def positions_fit(model: str, seq: int) -> bool:
    """GPT-2's learned position table holds 1,024 tokens: longer jobs are refused."""
    arch = resolve_model(model)
    return not arch.learned_positions or seq <= arch.max_positions


def total(model: str, **job: object) -> float:
    return estimate_memory(resolve_model(model), make_job(**job)).tensor_bytes


@settings(max_examples=60, deadline=None)
@given(models, jobs, st.sampled_from(["batch", "seq"]))
def test_memory_never_decreases_with_batch_or_sequence(model: str, job: dict, key: str) -> None:
    bigger = {**job, key: job[key] * 2}
    assume(positions_fit(model, bigger["seq"]))
    assert total(model, **bigger) >= total(model, **job)


@settings(max_examples=40, deadline=None)
@given(jobs, st.sampled_from(["1B", "3B", "7B", "13B", "30B"]))
def test_memory_never_decreases_with_parameters(job: dict, size: str) -> None:
    sizes = ["1B", "3B", "7B", "13B", "30B", "70B"]
    bigger = sizes[sizes.index(size) + 1]
    small = estimate_memory(resolve_model(params=size), make_job(**job)).tensor_bytes
    large = estimate_memory(resolve_model(params=bigger), make_job(**job)).tensor_bytes
    assert large >= small


@settings(max_examples=40, deadline=None)
@given(models, jobs)
def test_more_precision_bits_never_need_less_memory(model: str, job: dict) -> None:
    """With SDPA. (HF's eager attention saves the fp32 softmax *and* its 16-bit cast, so a
    16-bit LoRA run with long sequences can need more than fp32 there: real, not a bug.)"""
    assume(positions_fit(model, job["seq"]))
    job = {**job, "attention": "sdpa"}
    fp32 = total(model, **{**job, "precision": "32-true"})
    assert fp32 >= total(model, **{**job, "precision": "bf16-true"})


@settings(max_examples=40, deadline=None)
@given(models, jobs, st.sampled_from([2, 4, 8]))
def test_sharding_never_increases_per_gpu_memory(model: str, job: dict, n: int) -> None:
    assume(positions_fit(model, job["seq"]))
    arch = resolve_model(model)
    base = make_job(**job)
    if base.training:
        sharded = make_job(**{**job, "zero": 3, "gpus": n})
    else:
        sharded = make_job(**{**job, "tp": n, "gpus": n})
    assert estimate_memory(arch, sharded).tensor_bytes <= estimate_memory(arch, base).tensor_bytes


@settings(max_examples=25, deadline=None)
@given(models, jobs)
def test_more_vram_never_turns_a_fit_into_a_non_fit(
    catalog: Catalog, model: str, job: dict
) -> None:
    assume(positions_fit(model, job["seq"]))
    from whichgpu.estimate.parallel import usable_bytes

    result = fit(catalog, resolve_model(model), make_job(**job))
    # by the memory each GPU's driver reports (a T4's 16 GB hold 15 GiB with ECC on)
    by_vram = sorted(result.gpus, key=lambda row: usable_bytes(row.gpu))
    for smaller, larger in itertools.pairwise(by_vram):
        if smaller.fits:
            assert larger.fits
        if smaller.min_count is not None and usable_bytes(larger.gpu) > usable_bytes(smaller.gpu):
            assert larger.min_count is not None and larger.min_count <= smaller.min_count


def test_learned_positions_cap_the_sequence() -> None:
    """GPT-2 (1,024) and BERT (512) have position tables; Llama's rotary positions do not."""
    from whichgpu.errors import InvalidInput

    with pytest.raises(InvalidInput, match="1,024 learned positions"):
        estimate_memory(resolve_model("gpt2"), make_job(task="train", seq=2048))
    estimate_memory(resolve_model("gpt2"), make_job(task="train", seq=1024))
    estimate_memory(resolve_model("llama-3.2-1b"), make_job(task="train", seq=200_000))


@settings(max_examples=60, deadline=None)
@given(
    models,
    jobs,
    st.sampled_from([0, 1, 2, 3]),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(1, 64),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from(["ethernet", "infiniband"]),
)
def test_memory_key_drops_only_what_the_estimate_does_not_read(
    model: str, job: dict, zero: int, gpus: int, accumulation: int, node: int, network: str
) -> None:
    """memory_of shares one estimate between jobs with one memory_key (the step's
    accumulation, the node size and network, without ZeRO the replica count): the estimate
    of each such job is the estimate of its key."""
    from whichgpu.estimate.memory import memory_key, memory_of

    assume(positions_fit(model, job["seq"]))
    arch = resolve_model(model)
    from whichgpu.frozen import evolve

    settings_ = {**job, "gpus": gpus, "grad_accum": accumulation, "network": network}
    spread = make_job(**settings_, zero=zero if job["task"] != "inference" else 0)
    spread = evolve(spread, gpus_per_node=node)
    direct, keyed = estimate_memory(arch, spread), estimate_memory(arch, memory_key(spread))
    assert direct.components == keyed.components
    assert (direct.phase, direct.host_bytes, direct.paged_bytes) == (
        keyed.phase,
        keyed.host_bytes,
        keyed.paged_bytes,
    )
    assert memory_of(arch, spread).job == spread  # an equal job cached earlier answers too
    assert memory_of(arch, spread).total_bytes == direct.total_bytes


def test_a_sliding_window_layer_caches_only_its_window() -> None:
    """Gemma 2 attends through a 4,096-token window on every other layer (modeling_gemma2.py,
    ``layer_idx % 2 == 0``): at 8,192 tokens its 21 local layers cache 4,096 positions each,
    its 21 global layers all 8,192, three quarters of what every layer caching the whole
    sequence would hold; within the window nothing changes."""
    from dataclasses import replace as dc_replace

    from whichgpu.estimate.kv_cache import kv_cache_bytes
    from whichgpu.inputs.job_input import make_job
    from whichgpu.models import resolve_model

    gemma = resolve_model("gemma-2-9b")
    assert (gemma.sliding_window, gemma.sliding_layers, gemma.n_layers) == (4096, 21, 42)
    whole = dc_replace(gemma, sliding_window=0, sliding_layers=0)
    long = make_job(task="inference", precision="bf16-true", prompt=8192, generate=0)
    short = make_job(task="inference", precision="bf16-true", prompt=2048, generate=0)
    assert kv_cache_bytes(gemma, long) == pytest.approx(0.75 * kv_cache_bytes(whole, long))
    assert kv_cache_bytes(gemma, short) == pytest.approx(kv_cache_bytes(whole, short))
    assert resolve_model("qwen2.5-7b").sliding_layers == 0  # use_sliding_window: false


def test_weights_quantised_on_the_gpu_are_loaded_in_16_bits_first() -> None:
    """torchao's ``quantize_`` on a model already on the GPU: the peak holds the 16-bit
    weights (shared over tensor parallelism), however small the format makes them after."""
    arch = resolve_model("llama-3.1-8b")
    on_load = estimate_memory(arch, make_job(task="inference", quant="int8"))
    in_place = estimate_memory(arch, make_job(task="inference", quant="int8", quantize_on="gpu"))
    sixteen = estimate_memory(arch, make_job(task="inference"))
    assert on_load.phase != "loading" and in_place.phase == "loading"
    assert in_place.components["weights"] == pytest.approx(sixteen.components["weights"])
    split = estimate_memory(
        arch, make_job(task="inference", quant="int8", quantize_on="gpu", tp=2, gpus=2)
    )
    assert split.components["weights"] == pytest.approx(sixteen.components["weights"] / 2)
    with pytest.raises(InvalidInput):
        make_job(task="inference", quant="int8", quantize_on="cpu")
