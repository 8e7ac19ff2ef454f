"""Compiled activation accounting against torch's own partitioner: what one Llama decoder
layer saves for its backward, eager and under torch.compile, as validation/
measure_compiled.py recorded it (validation/compiled_saved_bytes.csv)."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from whichgpu.estimate.activations import decoder_layer_bytes
from whichgpu.inputs.job_input import make_job
from whichgpu.models import arch_from_config_text

ROWS = list(
    csv.DictReader(
        (Path(__file__).parents[1] / "validation" / "compiled_saved_bytes.csv")
        .read_text()
        .splitlines()
    )
)


def _arch(row: dict[str, str]):  # type: ignore[no-untyped-def]
    config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": int(row["hidden_size"]),
        "intermediate_size": int(row["intermediate_size"]),
        "num_attention_heads": int(row["num_attention_heads"]),
        "num_key_value_heads": int(row["num_key_value_heads"]),
        "num_hidden_layers": 1,
        "vocab_size": 1000,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
    }
    return arch_from_config_text(json.dumps(config), "validation/compiled_saved_bytes.csv")


def _job(case: str, rank: str):  # type: ignore[no-untyped-def]
    task, targets, *_ = case.split(" ")
    precision = "bf16-mixed" if "mixed" in case else "bf16-true"
    if task == "lora":
        targets = "all-linear" if targets == "all-linear" else targets
        return make_job(task="lora", precision=precision, lora_rank=int(rank), lora_targets=targets)
    return make_job(task="finetune", precision=precision)


@pytest.mark.parametrize("row", ROWS, ids=[r["case"] for r in ROWS])
def test_a_compiled_layer_saves_what_the_partitioner_saves(row: dict[str, str]) -> None:
    arch, job = _arch(row), _job(row["case"], row["lora_rank"])
    tokens = int(row["tokens"])
    compiled = decoder_layer_bytes(arch, replace(job, compiled=True), 1, tokens) / tokens
    assert compiled == pytest.approx(float(row["compiled_bytes_per_token"]), rel=0.005)
    eager = decoder_layer_bytes(arch, job, 1, tokens) / tokens
    assert eager == pytest.approx(float(row["eager_bytes_per_token"]), rel=0.05)
    assert compiled < eager


def test_adapters_in_the_model_dtype_read_their_input_as_it_is() -> None:
    """torchtune builds its LoRA adapters in bf16: they save the shared 16-bit input once,
    not an fp32 copy per adapter as peft does (and their weights, gradients and states
    take half the bytes)."""
    row = next(r for r in ROWS if r["case"].startswith("lora q_proj"))
    arch, job = _arch(row), _job(row["case"], row["lora_rank"])
    h = int(row["hidden_size"])
    peft = decoder_layer_bytes(arch, job, 1, 1)
    torchtune = decoder_layer_bytes(arch, replace(job, adapters_fp32=False), 1, 1)
    # q and v read the first norm's output: two fp32 copies (8 bytes) -> one bf16 (2)
    assert peft - torchtune == pytest.approx(6 * h)
    tt = make_job(framework="torchtune", task="lora")
    assert not tt.adapters_fp32 and make_job(framework="hf", task="lora").adapters_fp32
