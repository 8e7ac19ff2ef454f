"""Mixture-of-experts families whose modules differ from Llama's (:mod:`whichgpu.models.hf`
counts the others): OpenAI's gpt-oss and Meta's Llama 4. Each count follows the module
structure of its ``transformers`` implementation weight by weight, as
:mod:`whichgpu.models.hf` does, so that it equals ``sum(p.numel() for p in
model.parameters())``; validation/param_counts.csv records the sums the tests compare."""

from __future__ import annotations

from whichgpu.models.arch import Linear, ModelArch, ParamCounts
from whichgpu.models.hf_fields import Config, attention_kind, config_int, first_of


def _shapes(config: Config) -> tuple[int, int, int, int, int, int, int]:
    """Hidden size, layers, heads, key/value heads, head width, vocabulary, MLP width."""
    h = config_int(config, "hidden_size")
    heads = config_int(config, "num_attention_heads")
    return (
        h,
        config_int(config, "num_hidden_layers"),
        heads,
        config_int(config, "num_key_value_heads", default=heads),
        config_int(config, "head_dim", default=h // heads),
        config_int(config, "vocab_size"),
        config_int(config, "intermediate_size"),
    )


def _attention(
    h: int, heads: int, kv: int, head_dim: int, layers: int, bias: bool
) -> tuple[int, list[Linear]]:
    """Separate q, k, v and o projections (with biases where ``bias``), their parameters
    and their modules."""
    q_out, kv_out = heads * head_dim, kv * head_dim
    per_layer = h * q_out + 2 * h * kv_out + q_out * h
    if bias:
        per_layer += q_out + 2 * kv_out + h
    linears = [
        Linear("attn", h, q_out, layers, "self_attn.q_proj"),
        Linear("attn", h, kv_out, layers, "self_attn.k_proj"),
        Linear("attn", h, kv_out, layers, "self_attn.v_proj"),
        Linear("attn", q_out, h, layers, "self_attn.o_proj", "inner"),
    ]
    return layers * per_layer, linears


def gpt_oss(config: Config, family: str) -> ModelArch:
    """OpenAI's gpt-oss (transformers' modeling_gpt_oss.py): attention with biases and one
    learned sink per head (``GptOssAttention.sinks``); every layer a mixture of experts,
    ``GptOssExperts`` holding each expert's fused gate/up projection and its down projection
    with biases, routed by ``GptOssTopKRouter`` (a weight and a bias per expert); no shared
    expert; RMSNorm before attention and MLP, and at the end; untied embeddings."""
    h, layers, heads, kv, head_dim, vocab, inter = _shapes(config)
    experts_n = config_int(config, "num_local_experts")
    per_token = config_int(config, "num_experts_per_tok", "experts_per_token")
    tied = bool(first_of(config, "tie_word_embeddings", default=False))
    attention, linears = _attention(
        h, heads, kv, head_dim, layers, bool(first_of(config, "attention_bias", default=True))
    )
    # gate_up_proj [E, h, 2·inter] + its bias [E, 2·inter]; down_proj [E, inter, h] + [E, h]
    per_expert = h * 2 * inter + 2 * inter + inter * h + h
    count = layers * experts_n
    linears += [
        Linear("expert", h, 2 * inter, count, "experts.gate_up_proj"),
        Linear("expert", inter, h, count, "experts.down_proj", "inner"),
    ]
    if not tied:
        linears.append(Linear("head", h, vocab, 1, "lm_head"))
    params = ParamCounts(
        embedding=vocab * h,
        attention=attention,
        experts=count * per_expert,
        router=layers * (h * experts_n + experts_n),
        norms=layers * 2 * h + h,
        head=0 if tied else vocab * h,
        other=layers * heads,  # the attention sinks
    )
    return _moe_arch(
        config, family, params, per_expert * layers * per_token, layers, h, heads, kv,
        head_dim, inter, vocab, tied, experts_n, per_token, 0, layers, tuple(linears),
    )  # fmt: skip


def llama4(config: Config, family: str) -> ModelArch:
    """Meta's Llama 4 language model (transformers' modeling_llama4.py, ``text_config`` of
    the multimodal wrapper: :func:`~whichgpu.models.hf_fields.text_config`): every
    ``interleave_moe_layer_step``-th layer a mixture of experts (``Llama4TextMoe``: fused
    expert weights without biases, a bias-free router, and a shared expert of
    ``intermediate_size``), the others a dense MLP of ``intermediate_size_mlp``; queries and
    keys L2-normed without weights (``Llama4TextL2Norm``); untied embeddings. The vision
    encoder, where the config holds one, is not counted."""
    h, layers, heads, kv, head_dim, vocab, inter = _shapes(config)
    inter_mlp = config_int(config, "intermediate_size_mlp", default=inter)
    experts_n = config_int(config, "num_local_experts")
    per_token = config_int(config, "num_experts_per_tok")
    step = config_int(config, "interleave_moe_layer_step", default=1) or 1
    tied = bool(first_of(config, "tie_word_embeddings", default=False))
    moe_layers = first_of(config, "moe_layers", default=None)
    if not isinstance(moe_layers, list):  # Llama4TextConfig's default
        moe_layers = list(range(step - 1, layers, step))
    n_moe = sum(1 for i in moe_layers if isinstance(i, int) and 0 <= i < layers)
    dense = layers - n_moe
    attention, linears = _attention(
        h, heads, kv, head_dim, layers, bool(first_of(config, "attention_bias", default=False))
    )
    glu = 3 * h * inter  # an expert, and the shared expert, at intermediate_size
    linears += [
        Linear("expert", h, 2 * inter, n_moe * experts_n, "experts.gate_up_proj"),
        Linear("expert", inter, h, n_moe * experts_n, "experts.down_proj", "inner"),
    ]
    for name, width, count in (("shared_expert", inter, n_moe), ("mlp", inter_mlp, dense)):
        if count:
            linears += [
                Linear("mlp", h, width, count, f"feed_forward.{name}.gate_proj"),
                Linear("mlp", h, width, count, f"feed_forward.{name}.up_proj"),
                Linear("mlp", width, h, count, f"feed_forward.{name}.down_proj", "inner"),
            ]
    if not tied:
        linears.append(Linear("head", h, vocab, 1, "lm_head"))
    params = ParamCounts(
        embedding=vocab * h,
        attention=attention,
        mlp=n_moe * glu + dense * 3 * h * inter_mlp,
        experts=n_moe * experts_n * glu,
        router=n_moe * h * experts_n,
        norms=layers * 2 * h + h,
        head=0 if tied else vocab * h,
    )
    return _moe_arch(
        config, family, params, glu * n_moe * per_token, layers, h, heads, kv, head_dim,
        inter, vocab, tied, experts_n, per_token, 1, n_moe, tuple(linears),
    )  # fmt: skip


def _moe_arch(
    config: Config,
    family: str,
    params: ParamCounts,
    active_experts: int,
    layers: int,
    h: int,
    heads: int,
    kv: int,
    head_dim: int,
    inter: int,
    vocab: int,
    tied: bool,
    experts_n: int,
    per_token: int,
    shared: int,
    n_moe: int,
    linears: tuple[Linear, ...],
) -> ModelArch:
    """The decoder record of an MoE family: its active parameters are all but the routed
    experts a token does not reach (``active_experts``: those it does)."""
    return ModelArch(
        family=family,
        kind="decoder",
        params=params,
        active_params=params.total - params.experts + active_experts,
        n_layers=layers,
        hidden_size=h,
        n_heads=heads,
        n_kv_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        ffn_kind="glu",
        norm="rmsnorm",
        vocab_size=vocab,
        tied_embeddings=tied,
        max_positions=config_int(config, "max_position_embeddings", default=0),
        attention=attention_kind(heads, kv),
        n_experts=experts_n,
        experts_per_token=per_token,
        n_shared_experts=shared,
        moe_intermediate_size=inter,
        n_moe_layers=n_moe,
        linears=linears,
    )
