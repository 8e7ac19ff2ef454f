"""The fields of a Hugging Face ``config.json`` beyond a model's shapes (:mod:`whichgpu.models.hf`
counts those): the activation and dropouts training runs with, the weight format the
checkpoint ships in, and which layers attend through a sliding window. Parsed as plain
data, as the shapes are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whichgpu.errors import InvalidInput

Config = Mapping[str, Any]
MISSING = object()


def first_of(config: Config, *keys: str, default: Any = MISSING) -> Any:
    """The first of ``keys`` present in ``config`` (families name the same thing differently)."""
    for key in keys:
        value = config.get(key)
        if value is not None:
            return value
    if default is MISSING:
        raise InvalidInput("config_missing", family=config.get("model_type", "?"), key=keys[0])
    return default


def numerics_fields(config: Config, family: str) -> dict[str, Any]:
    """Activation function and the dropout probabilities that training runs with."""
    act = first_of(config, "hidden_act", "activation_function", "hidden_activation", default=None)
    if act is None:
        act = {"gpt2": "gelu_new", "gptj": "gelu_new", "falcon": "gelu", "mpt": "gelu",
               "bert": "gelu", "vit": "gelu", "resnet": "relu"}.get(family, "silu")  # fmt: skip
    hidden = first_of(config, "resid_pdrop", "hidden_dropout_prob", "hidden_dropout", default=0.0)
    attn = first_of(config, "attn_pdrop", "attention_probs_dropout_prob", "attention_dropout",
                default=0.0)  # fmt: skip
    if family == "mpt":
        hidden = first_of(config, "resid_pdrop", default=0.0)
        attn = float((first_of(config, "attn_config", default={}) or {}).get("attn_pdrop", 0.0))
    return {
        "activation": str(act),
        "hidden_dropout": float(hidden or 0.0),
        "attention_dropout": float(attn or 0.0),
        "checkpoint_quant": _checkpoint_quant(config),
    }


#: A ``quantization_config``'s ``quant_method`` → the weight format whichgpu plans it in:
#: FP8 checkpoints (DeepSeek-V3's block-scaled e4m3; transformers' ``FineGrainedFP8Config``
#: and ``fbgemm_fp8``) served as FP8 weights.
CHECKPOINT_FORMATS = {"fp8": "fp8", "fbgemm_fp8": "fp8"}


def _checkpoint_quant(config: Config) -> str | None:
    """The weight format a checkpoint ships in, from its ``quantization_config`` (None for
    16-bit checkpoints and formats whichgpu does not plan from the config)."""
    quantization = config.get("quantization_config")
    if not isinstance(quantization, Mapping):
        return None
    method = quantization.get("quant_method")
    return CHECKPOINT_FORMATS.get(method) if isinstance(method, str) else None


def attention_window(config: Config, family: str, layers: int) -> dict[str, Any]:
    """Which layers attend through a sliding window, and its width, as transformers builds
    the model: ``layer_types`` where the config lists them (``sliding_attention``); else
    Gemma 2's every other layer (modeling_gemma2.py: ``layer_idx % 2 == 0``), Gemma 3's
    ``sliding_window_pattern`` (five local layers in six), Mistral's ``sliding_window`` on
    every layer; none where the config sets no window or turns it off (Qwen2's
    ``use_sliding_window: false``)."""
    window = config.get("sliding_window")
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        return {"sliding_window": 0, "sliding_layers": 0}
    if config.get("use_sliding_window") is False:
        return {"sliding_window": 0, "sliding_layers": 0}
    kinds = config.get("layer_types")
    if isinstance(kinds, list) and kinds:
        local = sum(kind == "sliding_attention" for kind in kinds)
    elif family == "gemma2":
        local = (layers + 1) // 2
    elif family in ("gemma3", "gemma3_text"):
        pattern = config.get("sliding_window_pattern", 6)
        every = pattern if isinstance(pattern, int) and pattern > 0 else 6
        local = layers - layers // every
    elif family in ("mistral", "mixtral"):
        local = layers
    else:
        return {"sliding_window": 0, "sliding_layers": 0}
    return {"sliding_window": window, "sliding_layers": min(local, layers)}
