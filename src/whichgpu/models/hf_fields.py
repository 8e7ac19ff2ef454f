"""The fields of a Hugging Face ``config.json`` beyond a model's shapes (:mod:`whichgpu.models.hf`
counts those): the activation and dropouts training runs with, the weight format the
checkpoint ships in, and which layers attend through a sliding window. Parsed as plain
data, as the shapes are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whichgpu.errors import InvalidInput
from whichgpu.models.arch import AttentionKind

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


#: The largest value a config's sizes may take: beyond any model built (Llama 3.1 405B has
#: 126 layers, hidden 16,384, 128 heads; DeepSeek-V3 256 experts; vocabularies reach
#: 256,000): a bound on the work, and a typo caught (num_hidden_layers: 1e12).
CONFIG_LIMITS: dict[str, int] = {
    "num_hidden_layers": 1_000, "n_layer": 1_000, "n_layers": 1_000,
    "num_attention_heads": 4_096, "n_head": 4_096, "n_heads": 4_096,
    "num_key_value_heads": 4_096, "num_kv_heads": 4_096,
    "hidden_size": 1 << 20, "n_embd": 1 << 20, "head_dim": 1 << 14,
    "vocab_size": 10_000_000,
    "num_experts": 65_536, "num_local_experts": 65_536, "n_routed_experts": 65_536,
    "num_nextn_predict_layers": 64,
}  # fmt: skip
#: Any other size: far beyond every model, still a safe float.
CONFIG_MAX = 1 << 40
#: Sizes a model cannot have zero of (a transformer with no key/value heads or an empty
#: vocabulary is no model): at least 1.
CONFIG_POSITIVE = frozenset({
    "num_hidden_layers", "n_layer", "n_layers", "num_attention_heads", "n_head", "n_heads",
    "num_key_value_heads", "num_kv_heads", "hidden_size", "n_embd", "head_dim", "vocab_size",
    "intermediate_size", "n_inner",
})  # fmt: skip


def config_int(config: Config, *keys: str, default: Any = MISSING) -> int:
    """A whole size from the first of ``keys`` present, within :data:`CONFIG_LIMITS`."""
    value = first_of(config, *keys, default=default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput("config_whole", key=keys[0], value=_short(value))
    high = next((CONFIG_LIMITS[k] for k in keys if k in CONFIG_LIMITS), CONFIG_MAX)
    if value == 0 and keys[0] in CONFIG_POSITIVE:
        raise InvalidInput("config_positive_key", key=keys[0], value=value)
    if value > high:
        raise InvalidInput("config_too_large", key=keys[0], high=high, value=_short(value))
    return value


def _short(value: object) -> object:
    """A value for an error line: a number of a thousand digits is cut."""
    text = repr(value)
    return value if len(text) <= 40 else text[:20] + "…"


def numerics_fields(config: Config, family: str) -> dict[str, Any]:
    """Activation function and the dropout probabilities that training runs with, the
    checkpoint's weight format and its multi-token prediction modules."""
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
        "mtp_layers": config_int(config, "num_nextn_predict_layers", default=0),
    }


#: A ``quantization_config``'s ``quant_method`` → the weight format whichgpu plans it in:
#: FP8 checkpoints (DeepSeek-V3's block-scaled e4m3; transformers' ``FineGrainedFP8Config``
#: and ``fbgemm_fp8``) served as FP8 weights; gpt-oss's ``mxfp4`` (its experts in MXFP4, the
#: rest in BF16: the config's ``modules_to_not_convert``) as MXFP4 experts; TensorRT Model
#: Optimizer's (``quant_method`` ``modelopt``, the format in its ``quant_algo``: NVIDIA's
#: NVFP4 and FP8 checkpoints, e.g. nvidia/DeepSeek-R1-0528-FP4) as that format.
CHECKPOINT_FORMATS = {"fp8": "fp8", "fbgemm_fp8": "fp8", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4"}
MODELOPT_ALGOS = {"NVFP4": "nvfp4", "FP8": "fp8"}


def _checkpoint_quant(config: Config) -> str | None:
    """The weight format a checkpoint ships in, from its ``quantization_config`` (None for
    16-bit checkpoints and formats whichgpu does not plan from the config)."""
    quantization = config.get("quantization_config")
    if not isinstance(quantization, Mapping):
        return None
    method, algo = quantization.get("quant_method"), quantization.get("quant_algo")
    if method == "modelopt" and isinstance(algo, str):
        return MODELOPT_ALGOS.get(algo)
    return CHECKPOINT_FORMATS.get(method) if isinstance(method, str) else None


def attention_kind(n_heads: int, n_kv_heads: int) -> AttentionKind:
    """Multi-head, multi-query or grouped-query attention, by the key/value heads."""
    if n_kv_heads == n_heads:
        return "mha"
    return "mqa" if n_kv_heads == 1 else "gqa"


def text_config(config: Config) -> Config:
    """The language model of a multimodal wrapper (Llama 4's ``Llama4ForConditionalGeneration``
    keeps it under ``text_config``), with the wrapper's keys it does not repeat (the
    checkpoint's ``quantization_config``); ``config`` itself where there is none."""
    inner = config.get("text_config")
    if not isinstance(inner, Mapping):
        return config
    return {**{k: v for k, v in config.items() if k != "text_config"}, **inner}


#: Llama 4's RoPE layers attend within chunks of ``attention_chunk_size`` tokens; every
#: ``no_rope_layer_interval``-th layer attends globally without RoPE (transformers'
#: Llama4TextConfig: ``no_rope_layers`` from an interval of 4). vLLM caches a chunked layer as
#: a local window of the chunk (``ChunkedLocalAttention``, its KV spec a sliding window).
LLAMA4_NOPE_INTERVAL = 4


def attention_window(config: Config, family: str, layers: int) -> dict[str, Any]:
    """Which layers attend through a sliding window, and its width, as transformers builds
    the model: ``layer_types`` where the config lists them (``sliding_attention``); else
    Gemma 2's every other layer (modeling_gemma2.py: ``layer_idx % 2 == 0``), Gemma 3's
    ``sliding_window_pattern`` (five local layers in six), Mistral's ``sliding_window`` on
    every layer, Llama 4's chunked layers (:data:`LLAMA4_NOPE_INTERVAL`); none where the
    config sets no window or turns it off (Qwen2's ``use_sliding_window: false``)."""
    if family in ("llama4", "llama4_text"):
        chunk = config.get("attention_chunk_size")
        if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk <= 0:
            return {"sliding_window": 0, "sliding_layers": 0}
        flags = config.get("no_rope_layers")
        if isinstance(flags, list) and len(flags) == layers:
            local = sum(bool(flag) for flag in flags)  # 1: a RoPE layer, chunked
        else:
            local = layers - layers // LLAMA4_NOPE_INTERVAL
        return {"sliding_window": chunk, "sliding_layers": local}
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
