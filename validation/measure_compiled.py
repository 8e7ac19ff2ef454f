#!/usr/bin/env python3
"""What one decoder layer saves for its backward pass, eager and under torch.compile.

Ground truth for whichgpu's compiled activation accounting
(``whichgpu.estimate.activations``, ``job.compiled``); it does not use whichgpu. A Hugging
Face ``LlamaDecoderLayer`` (SDPA attention; full fine-tuning in bf16, under bf16 autocast
over fp32 weights, and peft LoRA on q/v and on every linear) runs one forward:

* eager: every tensor autograd saves, seen by ``torch.autograd.graph.saved_tensors_hooks``
  (one entry per storage);
* compiled: ``torch.compile`` with an AOTAutograd backend that partitions the joint graph as
  Inductor does (``min_cut_rematerialization_partition(compiler="inductor")``) and runs the
  graphs as they are; the saved tensors are the backward graph's inputs that are not
  tangents.

Counted as whichgpu counts activations: tensors with a token dimension, less the rotary
tables (computed once for the whole model), the LoRA A outputs (rank wide) and the
per-token norm scales (one number a token). Bytes a token go to
``validation/compiled_saved_bytes.csv``.

Usage: ``python validation/measure_compiled.py`` (torch, transformers and peft installed:
see validation/README.md; CPU only, about a minute).
"""

from __future__ import annotations

import csv
import functools
import sys
from pathlib import Path

import torch
from peft import LoraConfig, get_peft_model
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.partitioners import min_cut_rematerialization_partition
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

TOKENS = 384  # a size no weight dimension shares, so token-sized tensors are recognisable
SHAPE = {"hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
         "num_key_value_heads": 4}  # fmt: skip
RANK = 8
CASES = [
    ("full bf16-true", "bf16", None),
    ("full bf16-mixed", "autocast", None),
    ("lora q_proj,v_proj bf16-true", "bf16", "q_proj,v_proj"),
    (
        "lora all-linear bf16-true",
        "bf16",
        "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
    ),
]


class Layer(torch.nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.layer = LlamaDecoderLayer(cfg, 0)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        out = self.layer(x, position_embeddings=(cos, sin))
        return out[0] if isinstance(out, tuple) else out


def counted(shape: tuple[int, ...], is_rope: bool) -> bool:
    return TOKENS in shape and not is_rope and shape[-1] not in (1, RANK)


def measure(mode: str, numerics: str, targets: str | None) -> float:
    torch.manual_seed(0)
    cfg = LlamaConfig(**SHAPE, num_hidden_layers=1, vocab_size=1000)
    cfg._attn_implementation = "sdpa"
    weights = torch.float32 if numerics == "autocast" else torch.bfloat16
    model: torch.nn.Module = Layer(cfg).to(weights)
    if targets:
        model = get_peft_model(model, LoraConfig(r=RANK, target_modules=targets.split(",")))
    x = torch.randn(1, TOKENS, cfg.hidden_size, dtype=weights, requires_grad=True)
    cos, sin = (t.to(weights) for t in LlamaRotaryEmbedding(cfg)(x, torch.arange(TOKENS)[None]))
    rope = {cos.untyped_storage().data_ptr(), sin.untyped_storage().data_ptr()}
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=numerics == "autocast")
    if mode == "eager":
        saved: dict[int, int] = {}

        def pack(t: torch.Tensor) -> torch.Tensor:
            ptr = t.untyped_storage().data_ptr()
            if counted(tuple(t.shape), ptr in rope):
                saved[ptr] = t.untyped_storage().nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast:
            model(x, cos, sin)
        return sum(saved.values()) / TOKENS
    box: dict[str, float] = {}

    def backward(gm: torch.fx.GraphModule, _inputs: object) -> object:
        total = 0
        for node in gm.graph.nodes:
            value = node.meta.get("val")
            if node.op != "placeholder" or node.name.startswith("tangents"):
                continue
            if isinstance(value, torch.Tensor):
                is_rope = value.dim() == 3 and value.shape[-1] == cos.shape[-1]
                if counted(tuple(value.shape), is_rope):
                    total += value.numel() * value.element_size()
        box["bytes"] = total
        return gm.forward

    backend = aot_autograd(
        fw_compiler=lambda gm, _: gm.forward,
        bw_compiler=backward,
        partition_fn=functools.partial(min_cut_rematerialization_partition, compiler="inductor"),
    )
    with autocast:
        out = torch.compile(model, backend=backend)(x, cos, sin)
    out.sum().backward()
    return box["bytes"] / TOKENS


def main() -> int:
    out = Path(__file__).with_name("compiled_saved_bytes.csv")
    rows = []
    for name, numerics, targets in CASES:
        eager, compiled = (measure(mode, numerics, targets) for mode in ("eager", "compiled"))
        rows.append({"case": name, **SHAPE, "tokens": TOKENS,
                     "lora_rank": RANK if targets else "",
                     "eager_bytes_per_token": round(eager),
                     "compiled_bytes_per_token": round(compiled),
                     "torch": torch.__version__})  # fmt: skip
        print(f"{name}: eager {eager:,.0f}, compiled {compiled:,.0f} a token", file=sys.stderr)
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
