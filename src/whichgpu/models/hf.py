"""Hugging Face ``config.json`` files, parsed as plain data into :class:`ModelArch`.

Never ``trust_remote_code``, never pickle: a config is a JSON object read key by key. The
parameter count of each family follows the module structure of its Hugging Face
``transformers`` implementation (``modeling_<family>.py``), weight by weight, so that it equals
``sum(p.numel() for p in model.parameters())`` of the real model; validation/param_counts.csv
records those sums and the tests compare them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from whichgpu.errors import InvalidInput
from whichgpu.models.arch import AttentionKind, Linear, ModelArch, ParamCounts
from whichgpu.models.hf_fields import (
    Config,
    attention_kind,
    attention_window,
    first_of,
    numerics_fields,
    text_config,
)
from whichgpu.models.hf_fields import (
    config_int as _int,
)
from whichgpu.models.hf_moe import gpt_oss, llama4

#: DeepSeek-V3's architecture (MLA, fine-grained MoE with shared experts): Kimi K2 ships it
#: under its own ``model_type`` (moonshotai/Kimi-K2-Instruct: DeepseekV3ForCausalLM)
MLA_FAMILIES = ("deepseek_v2", "deepseek_v3", "kimi_k2")


def _llama_like(config: Config, family: str) -> ModelArch:
    """Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Qwen3, Qwen3-MoE, Gemma 2, Phi-3,
    DeepSeek-V2/V3 and Kimi K2 (pre-norm, RMSNorm, rotary positions, gated MLP; MoE and MLA
    where the config says so)."""
    h = _int(config, "hidden_size")
    n_layers = _int(config, "num_hidden_layers")
    n_heads = _int(config, "num_attention_heads")
    n_kv = _int(config, "num_key_value_heads", default=n_heads)
    head_dim = _int(config, "head_dim", default=h // n_heads if n_heads else 0)
    vocab = _int(config, "vocab_size")
    inter = _int(config, "intermediate_size")
    tied = bool(first_of(config, "tie_word_embeddings", default=family in GEMMA_FAMILIES))
    bias_all = bool(first_of(config, "attention_bias", default=False))
    qkv_bias = family in ("qwen2", "qwen2_moe") or bias_all
    mlp_bias = bool(first_of(config, "mlp_bias", default=False))
    # Gemma 2 and 3 norm each block's input and output (input_layernorm,
    # post_attention_layernorm, pre_ and post_feedforward_layernorm)
    norms_per_layer = 4 if family in ("gemma2", *GEMMA3_FAMILIES) else 2
    # Qwen3's and Gemma 3's RMSNorm of each head's queries and keys (q_norm, k_norm:
    # transformers' modeling_qwen3.py Qwen3Attention, modeling_gemma3.py Gemma3Attention),
    # head_dim weights each
    qk_norms = 2 * head_dim if family in ("qwen3", "qwen3_moe", *GEMMA3_FAMILIES) else 0

    attention = 0
    kind: AttentionKind = attention_kind(n_heads, n_kv)
    kv_lora = rope_dim = 0
    linears: list[Linear] = []
    if family in MLA_FAMILIES:
        kind = "mla"
        q_lora = _int(config, "q_lora_rank", default=0)
        kv_lora = _int(config, "kv_lora_rank")
        nope = _int(config, "qk_nope_head_dim")
        rope_dim = _int(config, "qk_rope_head_dim")
        v_dim = _int(config, "v_head_dim")
        q_head = nope + rope_dim
        per_layer_norms = kv_lora + (q_lora if q_lora else 0)  # kv_a / q_a layernorms
        q = (h * q_lora + q_lora * n_heads * q_head) if q_lora else h * n_heads * q_head
        if q_lora:
            linears += [
                Linear("attn", h, q_lora, n_layers, "self_attn.q_a_proj"),
                Linear("attn", q_lora, n_heads * q_head, n_layers, "self_attn.q_b_proj", "inner"),
            ]
        else:
            linears.append(Linear("attn", h, n_heads * q_head, n_layers, "self_attn.q_proj"))
        linears += [
            Linear("attn", h, kv_lora + rope_dim, n_layers, "self_attn.kv_a_proj_with_mqa"),
            Linear(
                "attn", kv_lora, n_heads * (nope + v_dim), n_layers, "self_attn.kv_b_proj", "inner"
            ),
            Linear("attn", n_heads * v_dim, h, n_layers, "self_attn.o_proj", "inner"),
        ]
        attention = n_layers * (
            q + h * (kv_lora + rope_dim) + kv_lora * n_heads * (nope + v_dim) + n_heads * v_dim * h
        )
        head_dim = q_head
    else:
        per_layer_norms = 0
        q_out, kv_out = n_heads * head_dim, n_kv * head_dim
        if family == "phi3":  # fused qkv_proj
            linears.append(Linear("attn", h, q_out + 2 * kv_out, n_layers, "self_attn.qkv_proj"))
        else:
            linears += [
                Linear("attn", h, q_out, n_layers, "self_attn.q_proj"),
                Linear("attn", h, kv_out, n_layers, "self_attn.k_proj"),
                Linear("attn", h, kv_out, n_layers, "self_attn.v_proj"),
            ]
        linears.append(Linear("attn", q_out, h, n_layers, "self_attn.o_proj", "inner"))
        attention = n_layers * (
            h * q_out + 2 * h * kv_out + q_out * h
            + ((q_out + 2 * kv_out) if qkv_bias else 0)
            + (h if bias_all else 0)
        )  # fmt: skip

    def glu(width: int) -> int:
        return 3 * h * width + ((2 * width + h) if mlp_bias else 0)

    mlp = experts = router = other = 0
    n_experts = per_token = shared = moe_width = n_moe = 0
    if family == "mixtral":
        n_experts = _int(config, "num_local_experts")
        per_token = _int(config, "num_experts_per_tok")
        moe_width, n_moe = inter, n_layers
        experts = n_layers * n_experts * glu(inter)
        router = n_layers * h * n_experts
    elif family in ("qwen2_moe", "qwen3_moe"):
        n_experts = _int(config, "num_experts")
        per_token = _int(config, "num_experts_per_tok")
        moe_width = _int(config, "moe_intermediate_size")
        shared_width = _int(config, "shared_expert_intermediate_size", default=0)
        step = _int(config, "decoder_sparse_step", default=1) or 1
        dense_only = set(first_of(config, "mlp_only_layers", default=[]))
        for layer in range(n_layers):
            if layer not in dense_only and (layer + 1) % step == 0:
                n_moe += 1
                experts += n_experts * glu(moe_width)
                router += h * n_experts
                mlp += glu(shared_width) + (h if shared_width else 0)  # shared expert + its gate
            else:
                mlp += glu(inter)
        shared = 1 if shared_width else 0
    elif family in MLA_FAMILIES:
        n_experts = _int(config, "n_routed_experts", default=0)
        per_token = _int(config, "num_experts_per_tok", default=0)
        moe_width = _int(config, "moe_intermediate_size", default=0)
        shared = _int(config, "n_shared_experts", default=0)
        first_dense = _int(config, "first_k_dense_replace", default=0)
        freq = _int(config, "moe_layer_freq", default=1) or 1
        for layer in range(n_layers):
            if n_experts and layer >= first_dense and layer % freq == 0:
                n_moe += 1
                experts += n_experts * glu(moe_width)
                router += h * n_experts  # (V3's e_score_correction_bias is a buffer in HF)
                mlp += glu(moe_width * shared) if shared else 0
            else:
                mlp += glu(inter)
    else:
        mlp = n_layers * glu(inter)

    def glu_linears(role: str, width: int, count: int, parent: str) -> list[Linear]:
        if not count or not width:
            return []
        if family == "phi3":  # fused gate_up_proj
            return [
                Linear(role, h, 2 * width, count, "mlp.gate_up_proj"),
                Linear(role, width, h, count, "mlp.down_proj", "inner"),
            ]
        # Mixtral's experts name their matrices w1 (gate), w3 (up) and w2 (down)
        gate, up, down = (
            ("w1", "w3", "w2") if role == "expert" and family == "mixtral"
            else ("gate_proj", "up_proj", "down_proj")
        )  # fmt: skip
        return [
            Linear(role, h, width, count, f"{parent}.{gate}"),
            Linear(role, h, width, count, f"{parent}.{up}"),
            Linear(role, width, h, count, f"{parent}.{down}", "inner"),
        ]

    dense_layers = n_layers - n_moe
    linears += glu_linears("mlp", inter, dense_layers, "mlp")
    if n_moe:
        linears += glu_linears("expert", moe_width, n_moe * n_experts, "experts")
        if family == "qwen2_moe" and shared:
            shared_width = _int(config, "shared_expert_intermediate_size")
            linears += glu_linears("mlp", shared_width, n_moe, "shared_expert")
        elif shared:
            linears += glu_linears("mlp", moe_width * shared, n_moe, "shared_experts")
    if not tied:
        linears.append(Linear("head", h, vocab, 1, "lm_head"))
    embedding = vocab * h
    params = ParamCounts(
        embedding=embedding,
        attention=attention,
        mlp=mlp,
        experts=experts,
        router=router,
        norms=n_layers * (norms_per_layer * h + per_layer_norms + qk_norms) + h,
        head=0 if tied else vocab * h,
        other=other,
    )
    active = params.total
    if n_experts:
        active -= experts - (experts // n_experts) * per_token if n_moe else 0
    return ModelArch(
        family=family,
        kind="decoder",
        params=params,
        active_params=active,
        n_layers=n_layers,
        hidden_size=h,
        n_heads=n_heads,
        n_kv_heads=n_kv,
        head_dim=head_dim,
        intermediate_size=moe_width if family == "mixtral" else inter,
        ffn_kind="glu",
        norm="rmsnorm",
        vocab_size=vocab,
        tied_embeddings=tied,
        max_positions=_int(config, "max_position_embeddings", default=0),
        attention=kind,
        n_experts=n_experts,
        experts_per_token=per_token,
        n_shared_experts=shared,
        moe_intermediate_size=moe_width,
        n_moe_layers=n_moe,
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=rope_dim,
        linears=tuple(linears),
    )


def _gpt_dims(config: Config) -> tuple[int, int, int, int, int]:
    """Hidden size, layers, heads, MLP width and vocabulary under GPT-2's key names (which
    GPT-J shares), or the newer names."""
    h = _int(config, "n_embd", "hidden_size")
    return (
        h,
        _int(config, "n_layer", "num_hidden_layers"),
        _int(config, "n_head", "num_attention_heads"),
        _int(config, "n_inner", default=4 * h),
        _int(config, "vocab_size"),
    )


def _gpt2(config: Config, family: str) -> ModelArch:
    """GPT-2: learned positions, LayerNorm with bias, Conv1D layers with bias, tied head."""
    h, n_layers, n_heads, inter, vocab = _gpt_dims(config)
    positions = _int(config, "n_positions", "max_position_embeddings", default=1024)
    per_layer = (3 * h * h + 3 * h) + (h * h + h)
    params = ParamCounts(
        embedding=vocab * h + positions * h,
        attention=n_layers * per_layer,
        mlp=n_layers * (h * inter + inter + inter * h + h),
        norms=n_layers * 4 * h + 2 * h,
        head=0,
    )
    return _dense(family, params, n_layers, h, n_heads, n_heads, inter, vocab, True, positions,
                  "layernorm", (("attn.c_attn", h, 3 * h), ("attn.c_proj", h, h)),
                  ("mlp.c_fc", "mlp.c_proj"))  # fmt: skip


def _gptj(config: Config, family: str) -> ModelArch:
    """GPT-J: parallel attention and MLP after one LayerNorm, no attention biases, untied
    head with a bias."""
    h, n_layers, n_heads, inter, vocab = _gpt_dims(config)
    tied = bool(first_of(config, "tie_word_embeddings", default=False))
    params = ParamCounts(
        embedding=vocab * h,
        attention=n_layers * 4 * h * h,
        mlp=n_layers * (h * inter + inter + inter * h + h),
        norms=n_layers * 2 * h + 2 * h,
        head=0 if tied else vocab * h + vocab,
    )
    return _dense(family, params, n_layers, h, n_heads, n_heads, inter, vocab, tied,
                  _int(config, "n_positions", default=2048), "layernorm",
                  (("attn.q_proj", h, h), ("attn.k_proj", h, h), ("attn.v_proj", h, h),
                   ("attn.out_proj", h, h)), ("mlp.fc_in", "mlp.fc_out"))  # fmt: skip


def _gpt_neox(config: Config, family: str) -> ModelArch:
    """GPT-NeoX / Pythia: two LayerNorms, fused QKV with bias, untied output embedding."""
    h = _int(config, "hidden_size")
    n_layers = _int(config, "num_hidden_layers")
    n_heads = _int(config, "num_attention_heads")
    inter = _int(config, "intermediate_size", default=4 * h)
    vocab = _int(config, "vocab_size")
    tied = bool(first_of(config, "tie_word_embeddings", default=False))
    params = ParamCounts(
        embedding=vocab * h,
        attention=n_layers * (3 * h * h + 3 * h + h * h + h),
        mlp=n_layers * (h * inter + inter + inter * h + h),
        norms=n_layers * 4 * h + 2 * h,
        head=0 if tied else vocab * h,
    )
    return _dense(family, params, n_layers, h, n_heads, n_heads, inter, vocab, tied,
                  _int(config, "max_position_embeddings", default=2048), "layernorm",
                  (("attention.query_key_value", h, 3 * h), ("attention.dense", h, h)),
                  ("mlp.dense_h_to_4h", "mlp.dense_4h_to_h"), "embed_out")  # fmt: skip


def _falcon(config: Config, family: str) -> ModelArch:
    """Falcon: multi-query (7B) or grouped (40B, ``new_decoder_architecture``) attention,
    parallel attention and MLP, tied head."""
    h = _int(config, "hidden_size", "n_embd")
    n_layers = _int(config, "num_hidden_layers", "n_layer")
    n_heads = _int(config, "num_attention_heads", "n_head")
    head_dim = h // n_heads
    new_arch = bool(first_of(config, "new_decoder_architecture", default=False))
    if new_arch:
        n_kv = _int(config, "num_kv_heads", "n_head_kv", default=n_heads)
    else:
        n_kv = 1 if first_of(config, "multi_query", default=True) else n_heads
    bias = bool(first_of(config, "bias", default=False))
    parallel = bool(first_of(config, "parallel_attn", default=True))
    inter = _int(config, "ffn_hidden_size", default=4 * h)
    vocab = _int(config, "vocab_size")
    tied = bool(first_of(config, "tie_word_embeddings", default=True))
    qkv = h * (n_heads + 2 * n_kv) * head_dim + ((n_heads + 2 * n_kv) * head_dim if bias else 0)
    norms_per_layer = 4 * h if (new_arch or not parallel) else 2 * h
    params = ParamCounts(
        embedding=vocab * h,
        attention=n_layers * (qkv + h * h + (h if bias else 0)),
        mlp=n_layers * (2 * h * inter + ((inter + h) if bias else 0)),
        norms=n_layers * norms_per_layer + 2 * h,
        head=0 if tied else vocab * h,
    )
    return _dense(family, params, n_layers, h, n_heads, n_kv, inter, vocab, tied,
                  _int(config, "max_position_embeddings", default=2048), "layernorm",
                  (("self_attention.query_key_value", h, (n_heads + 2 * n_kv) * head_dim),
                   ("self_attention.dense", h, h)),
                  ("mlp.dense_h_to_4h", "mlp.dense_4h_to_h"))  # fmt: skip


def _mpt(config: Config, family: str) -> ModelArch:
    """MPT: ALiBi (no position embeddings), LayerNorms without bias when ``no_bias``."""
    h = _int(config, "d_model")
    n_layers = _int(config, "n_layers")
    n_heads = _int(config, "n_heads")
    attn = first_of(config, "attn_config", default={}) or {}
    n_kv = int(attn.get("kv_n_heads") or n_heads)
    ratio = first_of(config, "expansion_ratio", default=4)
    inter = int(ratio * h)
    vocab = _int(config, "vocab_size")
    no_bias = bool(first_of(config, "no_bias", default=True))
    head_dim = h // n_heads
    qkv = h * (h + 2 * n_kv * head_dim)
    norm = h if no_bias else 2 * h
    params = ParamCounts(
        embedding=vocab * h,
        attention=n_layers * (qkv + h * h + (0 if no_bias else qkv // h + h)),
        mlp=n_layers * (2 * h * inter + (0 if no_bias else inter + h)),
        norms=n_layers * 2 * norm + norm,
        head=0,
    )
    return _dense(family, params, n_layers, h, n_heads, n_kv, inter, vocab, True,
                  _int(config, "max_seq_len", default=2048),
                  "layernorm-nobias" if no_bias else "layernorm",
                  (("attn.Wqkv", h, h + 2 * n_kv * head_dim), ("attn.out_proj", h, h)),
                  ("ffn.up_proj", "ffn.down_proj"))  # fmt: skip


def _bert(config: Config, family: str) -> ModelArch:
    """BERT encoder with its pooler (``BertModel``): word, position and token-type
    embeddings, post-norm layers with biases."""
    h = _int(config, "hidden_size")
    n_layers = _int(config, "num_hidden_layers")
    n_heads = _int(config, "num_attention_heads")
    inter = _int(config, "intermediate_size")
    vocab = _int(config, "vocab_size")
    positions = _int(config, "max_position_embeddings", default=512)
    types = _int(config, "type_vocab_size", default=2)
    params = ParamCounts(
        embedding=(vocab + positions + types) * h,
        attention=n_layers * (4 * h * h + 4 * h),
        mlp=n_layers * (h * inter + inter + inter * h + h),
        norms=n_layers * 4 * h + 2 * h,
        other=h * h + h,  # pooler
    )
    arch = _dense(family, params, n_layers, h, n_heads, n_heads, inter, vocab, True, positions,
                  "layernorm",
                  (("self.query", h, h), ("self.key", h, h), ("self.value", h, h),
                   ("attention.output.dense", h, h)),
                  ("intermediate.dense", "output.dense"))  # fmt: skip
    return _replace_kind(arch, "encoder")


def _dense(
    family: str,
    params: ParamCounts,
    n_layers: int,
    h: int,
    n_heads: int,
    n_kv: int,
    inter: int,
    vocab: int,
    tied: bool,
    positions: int,
    norm: str,
    attn: tuple[tuple[str, int, int], ...],
    mlp: tuple[str, str],
    head: str = "lm_head",
) -> ModelArch:
    """A dense model whose MLP is ``h → inter → h``: ``attn`` lists its attention matrices
    as ``(module name, d_in, d_out)``, the last one the output projection; ``mlp`` names its
    two matrices, ``head`` the untied output embedding (Hugging Face's attribute names)."""
    linears = [
        Linear("attn", d_in, d_out, n_layers, name, "inner" if i == len(attn) - 1 else "x")
        for i, (name, d_in, d_out) in enumerate(attn)
    ]
    linears += [
        Linear("mlp", h, inter, n_layers, mlp[0]),
        Linear("mlp", inter, h, n_layers, mlp[1], "inner"),
    ]
    if not tied:
        linears.append(Linear("head", h, vocab, 1, head))
    return ModelArch(
        family=family,
        kind="decoder",
        params=params,
        active_params=params.total,
        n_layers=n_layers,
        hidden_size=h,
        n_heads=n_heads,
        n_kv_heads=n_kv,
        head_dim=h // n_heads,
        intermediate_size=inter,
        ffn_kind="mlp",
        norm=norm,  # type: ignore[arg-type]
        vocab_size=vocab,
        tied_embeddings=tied,
        max_positions=positions,
        attention=attention_kind(n_heads, n_kv),
        linears=tuple(linears),
    )


def _replace_kind(arch: ModelArch, kind: str) -> ModelArch:
    from dataclasses import replace

    return replace(arch, kind=kind)  # type: ignore[arg-type]


#: The families whose embeddings are tied unless the config says otherwise
GEMMA3_FAMILIES = ("gemma3", "gemma3_text")
GEMMA_FAMILIES = ("gemma", "gemma2", *GEMMA3_FAMILIES)

#: Gemma3TextConfig's defaults, which Google's config.json files leave out (transformers'
#: models/gemma3/configuration_gemma3.py: the 4B's text_config states no heads, none of the
#: multimodal ones a vocabulary, head width or context)
GEMMA3_TEXT_DEFAULTS: dict[str, object] = {
    "vocab_size": 262_208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131_072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
    "tie_word_embeddings": True,
    "hidden_activation": "gelu_pytorch_tanh",
}


def gemma3(config: Config, family: str) -> ModelArch:
    """Google's Gemma 3 (transformers' modeling_gemma3.py): the language model as Gemma 2's
    block with each head's queries and keys RMS-normed (:func:`_llama_like`), its config's
    gaps filled with :data:`GEMMA3_TEXT_DEFAULTS`; a multimodal checkpoint
    (``Gemma3ForConditionalGeneration``) also holds its SigLIP vision tower and the projector
    into the text width (:func:`siglip_params`), counted as ``other``: loaded with the model,
    run once an image, not a text token's work."""
    from dataclasses import replace

    arch = _llama_like({**GEMMA3_TEXT_DEFAULTS, **config}, "gemma3_text")  # (parse_config's too)
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping):
        return arch
    other = siglip_params(vision) + _int(vision, "hidden_size") * arch.hidden_size
    other += _int(vision, "hidden_size")  # the projector's mm_soft_emb_norm
    return replace(arch, params=replace(arch.params, other=arch.params.other + other))


def siglip_params(config: Config) -> int:
    """A SigLIP vision encoder's parameters (transformers' modeling_siglip.py, without its
    pooling head where ``vision_use_head`` is false): the patch convolution and its bias,
    one learned position a patch, each layer's attention (four projections with biases),
    MLP (two with biases) and two LayerNorms, and the final LayerNorm. Gemma 3's tower
    (1,152 wide, 27 layers, 896-pixel images in 14-pixel patches) is 416,866,032."""
    h = _int(config, "hidden_size")
    inter = _int(config, "intermediate_size")
    layers = _int(config, "num_hidden_layers")
    patch = _int(config, "patch_size")
    side = _int(config, "image_size") // patch if patch else 0
    channels = _int(config, "num_channels", default=3)
    embeddings = channels * patch * patch * h + h + side * side * h
    layer = 4 * (h * h + h) + (h * inter + inter) + (inter * h + h) + 2 * 2 * h
    head = 0
    if config.get("vision_use_head", True):  # the pooling head: a probe, attention, LN, MLP
        head = h + 4 * (h * h + h) + 2 * h + (h * inter + inter) + (inter * h + h)
    return embeddings + layers * layer + 2 * h + head


def _vision(config: Config, family: str) -> ModelArch:
    from whichgpu.models.vision import parse_resnet, parse_vit

    return parse_vit(config) if family == "vit" else parse_resnet(config)


FAMILIES: dict[str, Callable[[Config, str], ModelArch]] = {
    "llama": _llama_like,
    "mistral": _llama_like,
    "mixtral": _llama_like,
    "qwen2": _llama_like,
    "qwen2_moe": _llama_like,
    "qwen3": _llama_like,
    "qwen3_moe": _llama_like,
    "gemma2": _llama_like,
    "gemma3": gemma3,
    "gemma3_text": gemma3,
    "phi3": _llama_like,
    "deepseek_v2": _llama_like,
    "deepseek_v3": _llama_like,
    "kimi_k2": _llama_like,
    "gpt_oss": gpt_oss,
    "llama4": llama4,
    "llama4_text": llama4,
    "gpt2": _gpt2,
    "gptj": _gptj,
    "gpt_neox": _gpt_neox,
    "falcon": _falcon,
    "RefinedWebModel": _falcon,
    "RefinedWeb": _falcon,
    "mpt": _mpt,
    "bert": _bert,
    "vit": _vision,
    "resnet": _vision,
}


def parse_config(config: Config, model_id: str = "", name: str = "", source: str = "") -> ModelArch:
    """A :class:`ModelArch` from a Hugging Face ``config.json`` object."""
    from dataclasses import replace

    if not isinstance(config, Mapping):
        raise InvalidInput("config_not_object")
    family = config.get("model_type")
    if not isinstance(family, str) or not family:
        raise InvalidInput("config_no_model_type")
    config = text_config(config)  # a multimodal wrapper's language model
    if family in GEMMA3_FAMILIES:  # what Google's files leave to Gemma3TextConfig
        config = {**GEMMA3_TEXT_DEFAULTS, **config}
    parser = FAMILIES.get(family)
    if parser is None:
        raise InvalidInput("config_model_type", family=family, valid=", ".join(sorted(FAMILIES)))
    arch = parser(config, family)
    if arch.kind in ("decoder", "encoder"):
        if arch.n_heads == 0 or arch.hidden_size == 0 or arch.n_layers == 0:
            raise InvalidInput("config_positive")
        if arch.n_kv_heads > arch.n_heads or (arch.n_kv_heads and arch.n_heads % arch.n_kv_heads):
            raise InvalidInput("config_kv_heads", heads=arch.n_heads, kv_heads=arch.n_kv_heads)
        explicit_head_dim = any(k in config for k in ("head_dim", "kv_lora_rank"))
        if not explicit_head_dim and arch.hidden_size % arch.n_heads:
            raise InvalidInput("config_heads", hidden=arch.hidden_size, heads=arch.n_heads)
    return replace(
        arch,
        id=model_id,
        name=name or model_id,
        source=source,
        **numerics_fields(config, family),
        **attention_window(config, family, arch.n_layers),
    )
