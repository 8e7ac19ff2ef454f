"""A generic dense transformer of a given size, for ``--params 7B``.

Shape rule (documented in docs/methodology.md): a Llama-style decoder (RMSNorm, gated MLP,
rotary positions, multi-head attention, untied 32,000-token vocabulary) whose width grows as
the cube root of the size with an aspect ratio of 128 (hidden / layers, as Llama 2 7B and 13B
have), the hidden size rounded to a multiple of 256, 128-wide heads, and a gated MLP of
8h/3 rounded up to 256 so each layer holds ≈ 12·h² parameters (Kaplan et al., 2020, §2.1:
N ≈ 12·n_layer·d_model²). The layer count then matches the requested total.
"""

from __future__ import annotations

import math

from whichgpu.errors import InvalidInput
from whichgpu.i18n import _, fmt
from whichgpu.models.arch import ModelArch
from whichgpu.models.hf import parse_config

ASPECT_RATIO = 128
VOCAB = 32_000
HEAD_DIM = 128


def parse_param_count(text: str) -> int:
    """``"7B"`` → 7,000,000,000; ``"350M"``, ``"1.5b"``, ``"7000000000"``."""
    from whichgpu.units import parse_count

    try:
        value = parse_count(text)
    except ValueError:
        raise InvalidInput("not_a_size", field=("params",), value=text) from None
    if not 1e6 <= value <= 1e13:
        raise InvalidInput("params_range", field=("params",), value=text)
    return int(value)


def generic_config(n_params: int) -> dict[str, int | str | bool | float]:
    h = max(256, round((n_params * ASPECT_RATIO / 12) ** (1 / 3) / 256) * 256)
    inter = math.ceil(8 * h / 3 / 256) * 256
    per_layer = 4 * h * h + 3 * h * inter + 2 * h
    layers = max(1, round((n_params - 2 * VOCAB * h) / per_layer))
    return {
        "model_type": "llama",
        "hidden_size": h,
        "intermediate_size": inter,
        "num_hidden_layers": layers,
        "num_attention_heads": h // HEAD_DIM,
        "num_key_value_heads": h // HEAD_DIM,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "max_position_embeddings": 4096,
    }


def generic_arch(text: str) -> ModelArch:
    n_params = parse_param_count(text)
    arch = parse_config(generic_config(n_params), f"generic-{text.strip().lower()}",
                        fmt(_("generic {size} transformer"), size=text.strip()),
                        "whichgpu shape rule (models/generic.py)")  # fmt: skip
    return arch
