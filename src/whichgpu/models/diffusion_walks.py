"""The walks of a diffusion pipeline's components: the denoiser (a UNet or a DiT), the text
encoders and the VAE, each walked module by module as its
``diffusers`` / ``transformers`` implementation builds it, so that the parameter count equals
``sum(p.numel() for p in module.parameters())`` (``validation/diffusion_params.csv`` records
those sums, the tests compare them) and the forward pass's FLOPs and activations follow from
the same walk at the image size asked.

Implementations followed (diffusers 0.42, transformers 5.24):

* ``UNet2DConditionModel`` (SD 1.x, SDXL; Rombach et al., 2022; Podell et al., 2023) with
  ``ResnetBlock2D``, ``Transformer2DModel`` / ``BasicTransformerBlock`` (GEGLU feed-forward);
* ``SD3Transformer2DModel`` (MMDiT, Esser et al., 2024, §3) and ``FluxTransformer2DModel``
  (FLUX.1: 19 double-stream and 38 single-stream blocks);
* ``AutoencoderKL`` (the VAE); ``CLIPTextModel`` / ``CLIPTextModelWithProjection``;
  ``T5EncoderModel`` (Raffel et al., 2020, v1.1's gated-GELU feed-forward).

A walk counts a convolution ``k×k`` from ``c_in`` to ``c_out`` at an ``h×w`` output as
``k²·c_in·c_out + c_out`` parameters and ``2·k²·c_in·c_out·h·w`` FLOPs, a linear layer as
``2·d_in·d_out`` FLOPs a token, attention as ``4·T_q·T_k·d`` FLOPs (QKᵀ and the weighted sum,
Vaswani et al., 2017). Norms and activations count parameters, not FLOPs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whichgpu.errors import InvalidInput

Config = Mapping[str, Any]


@dataclass
class Tally:
    """What a walk adds up: parameters, FLOPs of one forward of one image, and the largest
    activations alive at once (elements), as a forward without autograd frees them."""

    params: int = 0
    flops: float = 0.0
    #: the part of ``flops`` in convolutions (cuDNN's kernels; the rest are GEMMs and
    #: attention, cuBLAS's and the attention kernels'): their FP32 math takes TF32 under
    #: different switches (:func:`whichgpu.estimate.diffusion.math_seconds`)
    conv_flops: float = 0.0
    #: elements of the feature maps a UNet holds for its skip connections
    held: float = 0.0
    #: the largest set of elements one block keeps alive at once, beside ``held``
    working: float = 0.0
    #: the largest attention score matrix (T_q · T_k · heads, elements) one layer forms:
    #: materialised by eager attention, never by a fused (SDPA/FlashAttention) kernel
    scores: float = 0.0
    #: the largest single weight (parameters), what sequential CPU offload streams at once
    largest_module: int = 0
    #: the score elements of every attention layer summed (what eager attention writes and
    #: reads)
    score_total: float = 0.0
    #: Training: elements the backward pass needs, saved by the forward (each op's input:
    #: what a linear or conv needs for its weight gradient, a norm or activation for its
    #: own), and with gradient checkpointing only each checkpointed unit's input plus the
    #: largest unit's saved set, recomputed in the backward (diffusers checkpoints each
    #: ResNet and transformer block)
    saved: float = 0.0
    #: Elements the forward's memory-bound kernels read and write (norms, activation
    #: functions, residual adds, modulation, resampling, concatenation: everything but the
    #: convolutions, GEMMs and attention), as PyTorch runs them eagerly, one kernel each
    elementwise: float = 0.0
    boundaries: float = 0.0
    largest_unit: float = 0.0
    #: Named weight matrices by attribute path (what LoRA targets match): Σ (d_in + d_out)
    #: over the copies, so that a rank-r adapter on them has r times that many parameters
    named: dict[str, int] = field(default_factory=dict)

    def unit(self, saved: float, boundary: float) -> None:
        """A checkpointed unit: ``saved`` elements for its backward, ``boundary`` its input."""
        self.saved += saved
        self.boundaries += boundary
        self.largest_unit = max(self.largest_unit, saved)

    def conv(self, c_in: int, c_out: int, k: int, hw: float, bias: bool = True) -> None:
        n = k * k * c_in * c_out + (c_out if bias else 0)
        self.params += n
        self.flops += 2.0 * k * k * c_in * c_out * hw
        self.conv_flops += 2.0 * k * k * c_in * c_out * hw
        self.largest_module = max(self.largest_module, n)

    def linear(
        self, d_in: int, d_out: int, tokens: float, bias: bool = True, name: str = ""
    ) -> None:
        if name:
            self.named[name] = self.named.get(name, 0) + d_in + d_out
        n = d_in * d_out + (d_out if bias else 0)
        self.params += n
        self.flops += 2.0 * d_in * d_out * tokens
        self.largest_module = max(self.largest_module, n)

    def embedding(self, rows: int, dim: int) -> None:
        self.params += rows * dim
        self.largest_module = max(self.largest_module, rows * dim)

    def norm(self, dim: int, bias: bool = True) -> None:
        self.params += dim * (2 if bias else 1)

    def attention(self, t_q: float, t_k: float, dim: int, heads: int) -> None:
        self.flops += 4.0 * t_q * t_k * dim
        self.scores = max(self.scores, t_q * t_k * heads)
        self.score_total += t_q * t_k * heads

    def live(self, elements: float) -> None:
        self.working = max(self.working, elements)


def _ints(config: Config, key: str, n: int) -> list[int]:
    value = config.get(key)
    if value is None:
        raise InvalidInput("config_missing", family="diffusion", key=key)
    if isinstance(value, int):
        return [value] * n
    if not isinstance(value, Sequence) or len(value) != n:
        raise InvalidInput("config_whole", key=key, value=str(value)[:40])
    return [int(v) for v in value]


def _resnet(t: Tally, c_in: int, c_out: int, hw: float, temb: int | None) -> None:
    """diffusers' ``ResnetBlock2D``: GroupNorm, SiLU, 3×3 conv, (the time embedding's
    projection), GroupNorm, SiLU, 3×3 conv, a 1×1 shortcut when the widths differ. Alive at
    once, as PyTorch frees each map when the next is made: the input (kept for the
    residual) with the norm's and the activation's outputs (3 maps of the input width), or
    the input and two maps of the output width."""
    t.norm(c_in)
    t.conv(c_in, c_out, 3, hw)
    if temb:
        t.linear(temb, c_out, 1)
    t.norm(c_out)
    t.conv(c_out, c_out, 3, hw)
    if c_in != c_out:
        t.conv(c_in, c_out, 1, hw)
    t.live(max(3 * c_in, 2 * c_in + c_out, c_in + 2 * c_out) * hw)
    t.unit(3 * (c_in + c_out) * hw, c_in * hw)  # each norm's, activation's and conv's input
    # read and written: two GroupNorms and SiLUs (2 each), the time embedding's add (2),
    # the residual add (3)
    t.elementwise += (4 * c_in + (9 if temb else 7) * c_out) * hw


def _basic_block(t: Tally, inner: int, heads: int, tokens: float, context: int, cross: int) -> None:
    """``BasicTransformerBlock``: self-attention, cross-attention to the text (keys and
    values from ``cross``-wide text states), GEGLU feed-forward (4× inner, its projection
    doubled for the gate); LayerNorms before each."""
    t.norm(inner)
    for name in ("attn1.to_q", "attn1.to_k", "attn1.to_v"):
        t.linear(inner, inner, tokens, bias=False, name=name)
    t.linear(inner, inner, tokens, name="attn1.to_out.0")
    t.attention(tokens, tokens, inner, heads)
    t.norm(inner)
    t.linear(inner, inner, tokens, bias=False, name="attn2.to_q")
    t.linear(cross, inner, context, bias=False, name="attn2.to_k")
    t.linear(cross, inner, context, bias=False, name="attn2.to_v")
    t.linear(inner, inner, tokens, name="attn2.to_out.0")
    t.attention(tokens, context, inner, heads)
    t.norm(inner)
    t.linear(inner, 8 * inner, tokens, name="ff.net.0.proj")
    t.linear(4 * inner, inner, tokens, name="ff.net.2")
    t.live(tokens * (2 + 8 + 4 + 4) * inner)  # residual, norm, GEGLU projection, gate, product
    # read and written: three LayerNorms (2 each), three residual adds (3 each), GEGLU's
    # GELU of the gate (4 + 4) and its product (8 + 4)
    t.elementwise += tokens * inner * (6 + 9 + 20)
    # saved for the backward: norm inputs (3), attention inputs and Q, K, V, outputs (2 × 5),
    # the output projections' inputs (2), the feed-forward's input, projection and gate (13)
    t.unit(tokens * inner * 28, tokens * inner)


def _transformer_2d(
    t: Tally,
    channels: int,
    heads: int,
    layers: int,
    hw: float,
    context: int,
    cross: int,
    linear: bool = False,
) -> None:
    """``Transformer2DModel``: GroupNorm, a projection in (a 1×1 conv, or a linear layer
    with ``use_linear_projection``: the same weights and FLOPs, run by different kernels),
    ``layers`` basic blocks, a projection out."""
    project = t.linear if linear else (lambda c_in, c_out, n: t.conv(c_in, c_out, 1, n))
    t.norm(channels)
    project(channels, channels, hw)
    t.elementwise += 9 * channels * hw  # GroupNorm, the permutes in and out, residual add
    for _ in range(layers):
        _basic_block(t, channels, heads, hw, context, cross)
    project(channels, channels, hw)


def walk_unet(config: Config, h: int, w: int, context: int) -> Tally:
    """``UNet2DConditionModel`` at an ``h×w`` latent, cross-attending to ``context`` text
    tokens: conv_in, the time (and SDXL's added text/size) embedding, down blocks with their
    skip connections, the mid block, up blocks concatenating the skips, conv_out."""
    t = Tally()
    widths = [int(c) for c in config["block_out_channels"]]
    n = len(widths)
    down_types = list(config["down_block_types"])
    up_types = list(config["up_block_types"])
    layers = _ints(config, "layers_per_block", n)
    heads_cfg = config.get("num_attention_heads") or config.get("attention_head_dim") or 8
    heads = [int(heads_cfg)] * n if isinstance(heads_cfg, int) else [int(x) for x in heads_cfg]
    tlayers = _ints({"t": config.get("transformer_layers_per_block", 1)}, "t", n)
    cross = int(config["cross_attention_dim"])
    linear = bool(config.get("use_linear_projection", False))
    c_in = int(config.get("in_channels", 4))
    temb = widths[0] * 4
    hw = float(h * w)
    t.conv(c_in, widths[0], int(config.get("conv_in_kernel", 3)), hw)
    t.linear(widths[0], temb, 1)
    t.linear(temb, temb, 1)
    if config.get("addition_embed_type") == "text_time":
        t.linear(int(config["projection_class_embeddings_input_dim"]), temb, 1)
        t.linear(temb, temb, 1)
    skips: list[int] = [widths[0]]
    held = widths[0] * hw
    out = widths[0]
    for i, kind in enumerate(down_types):
        c = out
        out = widths[i]
        for j in range(layers[i]):
            _resnet(t, c if j == 0 else out, out, hw, temb)
            if kind.startswith("CrossAttn"):
                _transformer_2d(t, out, heads[i], tlayers[i], hw, context, cross, linear)
            skips.append(out)
            held += out * hw
        if i < n - 1:
            hw /= 4
            t.conv(out, out, 3, hw)
            skips.append(out)
            held += out * hw
    t.held = held
    mid = config.get("mid_block_type", "UNetMidBlock2DCrossAttn")
    if mid is not None:
        _resnet(t, out, out, hw, temb)
        if mid == "UNetMidBlock2DCrossAttn":
            _transformer_2d(t, out, heads[-1], tlayers[-1], hw, context, cross, linear)
        _resnet(t, out, out, hw, temb)
    rev = list(reversed(widths))
    rev_layers = list(reversed(layers))
    rev_heads = list(reversed(heads))
    rev_t = list(reversed(tlayers))
    prev = rev[0]
    for i, kind in enumerate(up_types):
        out = rev[i]
        count = rev_layers[i] + 1
        for j in range(count):
            skip = skips.pop()
            t.elementwise += 2 * ((prev if j == 0 else out) + skip) * hw  # torch.cat
            _resnet(t, (prev if j == 0 else out) + skip, out, hw, temb)
            if kind.startswith("CrossAttn"):
                _transformer_2d(t, out, rev_heads[i], rev_t[i], hw, context, cross, linear)
        if i < n - 1:
            hw *= 4
            t.elementwise += out * hw * 5 / 4  # nearest upsampling: read a quarter, write
            t.conv(out, out, 3, hw)
            t.live(2 * out * hw)
        prev = out
    t.norm(widths[0])
    t.elementwise += 4 * widths[0] * hw  # the output GroupNorm and SiLU
    t.conv(widths[0], int(config.get("out_channels", 4)), int(config.get("conv_out_kernel", 3)),
           hw)  # fmt: skip
    return t


#: Elements a token's ``dim``-wide stream reads and writes per MMDiT/FLUX double block in
#: memory-bound kernels: two adaLN-modulated LayerNorms (norm 2, modulation 2, each), two
#: gated residual adds (3 each), the 4× MLP's GELU (8); the QK norms add 4 where present
MODULATED_BLOCK = 8 + 6 + 8


def _timestep_embedding(t: Tally, d_in: int, dim: int) -> None:
    """``TimestepEmbedding`` (and ``PixArtAlphaTextProjection``): two linear layers."""
    t.linear(d_in, dim, 1)
    t.linear(dim, dim, 1)


def _joint_attention(
    t: Tally, dim: int, heads: int, tokens: float, context: float, qk_norm: bool, context_out: bool
) -> None:
    """MMDiT's joint attention: Q, K, V of the image and of the text stream (each with
    bias), one attention over both, an output projection per stream; RMS norms of the
    queries and keys per head where the config asks (SD 3.5, FLUX)."""
    for name, added in (("to_q", "add_q_proj"), ("to_k", "add_k_proj"), ("to_v", "add_v_proj")):
        t.linear(dim, dim, tokens, name=f"attn.{name}")
        t.linear(dim, dim, context, name=f"attn.{added}")
    if qk_norm:
        t.params += 4 * (dim // heads)
    t.attention(tokens + context, tokens + context, dim, heads)
    t.linear(dim, dim, tokens, name="attn.to_out.0")
    if context_out:
        t.linear(dim, dim, context, name="attn.to_add_out")


def _gelu_ff(t: Tally, dim: int, tokens: float, prefix: str = "ff") -> None:
    t.linear(dim, 4 * dim, tokens, name=f"{prefix}.net.0.proj")
    t.linear(4 * dim, dim, tokens, name=f"{prefix}.net.2")


def walk_mmdit(config: Config, h: int, w: int, context: int) -> Tally:
    """``SD3Transformer2DModel``: a patch embedding (its positions are a buffer), timestep and
    pooled-text embeddings, the text's projection, ``num_layers`` joint blocks (adaLN-Zero
    modulation of both streams; the last block keeps no text output), adaLN output, a linear
    back to patches."""
    t = Tally()
    heads = int(config["num_attention_heads"])
    dim = heads * int(config["attention_head_dim"])
    p = int(config.get("patch_size", 2))
    c_in = int(config.get("in_channels", 16))
    c_out = int(config.get("out_channels") or c_in)
    tokens = float((h // p) * (w // p))
    qk = config.get("qk_norm") is not None
    t.conv(c_in, dim, p, tokens)
    _timestep_embedding(t, 256, dim)
    _timestep_embedding(t, int(config["pooled_projection_dim"]), dim)
    t.linear(int(config["joint_attention_dim"]), int(config.get("caption_projection_dim", dim)),
             context)  # fmt: skip
    layers = int(config["num_layers"])
    for i in range(layers):
        last = i == layers - 1
        t.linear(dim, 6 * dim, 1)
        t.linear(dim, (2 if last else 6) * dim, 1)
        _joint_attention(t, dim, heads, tokens, context, qk, not last)
        _gelu_ff(t, dim, tokens)
        if not last:
            _gelu_ff(t, dim, context, "ff_context")
        t.live((tokens + context) * dim * 10)  # both streams, Q/K/V, the 4× MLP of one
        t.elementwise += (tokens + context) * dim * (MODULATED_BLOCK + (4 if qk else 0))
        # saved per token: the modulated norms' inputs and outputs (2), Q, K, V and the
        # attention's output (4, with its input), the projections' inputs (1), the MLP's
        # input, hidden and activation (1 + 4 + 4)
        t.unit((tokens + context) * dim * 17, (tokens + context) * dim)
    t.linear(dim, 2 * dim, 1)
    t.linear(dim, p * p * c_out, tokens)
    return t


def walk_flux(config: Config, h: int, w: int, context: int) -> Tally:
    """``FluxTransformer2DModel``: image and text embedders, timestep (and guidance) and
    pooled-text embeddings, double-stream blocks (as MMDiT's, with QK RMS norms), then
    single-stream blocks over the joined sequence (attention and a 4× MLP side by side,
    one output projection), adaLN output. The pipeline packs 2×2 latent patches into
    tokens: ``(h/2)·(w/2)`` image tokens."""
    t = Tally()
    heads = int(config["num_attention_heads"])
    dim = heads * int(config["attention_head_dim"])
    c_in = int(config.get("in_channels", 64))
    p = int(config.get("patch_size", 1))
    c_out = int(config.get("out_channels") or c_in)
    tokens = float((h // 2) * (w // 2))
    joined = tokens + context
    t.linear(c_in, dim, tokens)
    _timestep_embedding(t, 256, dim)
    if config.get("guidance_embeds"):
        _timestep_embedding(t, 256, dim)
    _timestep_embedding(t, int(config["pooled_projection_dim"]), dim)
    t.linear(int(config["joint_attention_dim"]), dim, context)
    for _ in range(int(config["num_layers"])):
        t.linear(dim, 6 * dim, 1)
        t.linear(dim, 6 * dim, 1)
        _joint_attention(t, dim, heads, tokens, context, True, True)
        _gelu_ff(t, dim, tokens)
        _gelu_ff(t, dim, context, "ff_context")
        t.live(joined * dim * 10)
        t.elementwise += joined * dim * (MODULATED_BLOCK + 4)
        t.unit(joined * dim * 17, joined * dim)
    for _ in range(int(config["num_single_layers"])):
        t.linear(dim, 3 * dim, 1)
        t.linear(dim, 4 * dim, joined, name="proj_mlp")
        for name in ("to_q", "to_k", "to_v"):
            t.linear(dim, dim, joined, name=f"attn.{name}")
        t.params += 2 * (dim // heads)
        t.attention(joined, joined, dim, heads)
        t.linear(5 * dim, dim, joined, name="proj_out")
        t.live(joined * dim * 12)
        # one modulated norm (4), the QK norms (4), GELU (8), the concatenation of the
        # attention and MLP outputs (10), the gated residual (3)
        t.elementwise += joined * dim * 29
        # saved per token: the norm (2), Q, K, V and the attention output (4), the MLP's
        # hidden and activation (8), the output projection's input (5)
        t.unit(joined * dim * 19, joined * dim)
    t.linear(dim, 2 * dim, 1)
    t.linear(dim, p * p * c_out, tokens)
    return t


def walk_clip(config: Config, tokens: int) -> Tally:
    """``CLIPTextModel``: token and position embeddings, pre-norm encoder layers (Q, K, V, out
    with bias; a 4× MLP), a final LayerNorm; ``CLIPTextModelWithProjection`` adds the
    pooled output's projection (no bias)."""
    t = Tally()
    h = int(config["hidden_size"])
    inter = int(config["intermediate_size"])
    t.embedding(int(config["vocab_size"]), h)
    t.embedding(int(config.get("max_position_embeddings", 77)), h)
    for _ in range(int(config["num_hidden_layers"])):
        t.norm(h)
        for _ in range(4):
            t.linear(h, h, tokens)
        t.attention(tokens, tokens, h, int(config["num_attention_heads"]))
        t.norm(h)
        t.linear(h, inter, tokens)
        t.linear(inter, h, tokens)
        t.live(tokens * (h * 3 + inter * 2))
    t.norm(h)
    if "CLIPTextModelWithProjection" in (config.get("architectures") or ()):
        t.linear(h, int(config["projection_dim"]), 1, bias=False)
    return t


def walk_t5(config: Config, tokens: int) -> Tally:
    """``T5EncoderModel``: the shared embedding, encoder layers of self-attention (no bias;
    the first layer's relative position bias table) and the gated-GELU feed-forward
    (``wi_0``, ``wi_1``, ``wo``), RMS layer norms (weights only), a final norm."""
    t = Tally()
    d = int(config["d_model"])
    inner = int(config["num_heads"]) * int(config["d_kv"])
    ff = int(config["d_ff"])
    gated = str(config.get("feed_forward_proj", "relu")).startswith("gated")
    t.embedding(int(config["vocab_size"]), d)
    for i in range(int(config["num_layers"])):
        t.norm(d, bias=False)
        for _ in range(3):
            t.linear(d, inner, tokens, bias=False)
        t.linear(inner, d, tokens, bias=False)
        t.attention(tokens, tokens, inner, int(config["num_heads"]))
        if i == 0:
            t.params += int(config.get("relative_attention_num_buckets", 32)) * int(
                config["num_heads"]
            )
        t.norm(d, bias=False)
        for _ in range(2 if gated else 1):
            t.linear(d, ff, tokens, bias=False)
        t.linear(ff, d, tokens, bias=False)
        t.live(tokens * (d * 2 + ff * 3))
    t.norm(d, bias=False)
    return t


def _vae_attention(t: Tally, c: int, hw: float) -> None:
    """The VAE mid block's single-head self-attention over every latent position."""
    t.norm(c)
    for _ in range(4):
        t.linear(c, c, hw)
    t.attention(hw, hw, c, 1)
    t.live(5 * c * hw)


#: cuDNN's workspace for the VAE decoder's upsampling 3×3 convolutions, in units of their
#: input: measured at the decode's peak with ``torch.cuda.memory._record_memory_history`` on an
#: H200 (cuDNN 9, PyTorch 2.11; ``validation/trace_vae_peak.py``) at 2.52, 2.43 and 2.50 for
#: one image of SDXL's (FP32), SD 1.5's (FP16) and FLUX.1's (BF16) VAE, 1.75 for four SDXL
#: images (``validation/measured_diffusion.csv``): their mean. The decode's peak is that
#: convolution, not the ResNet blocks around it.
UPSAMPLE_CONV_WORKSPACE = 2.3


def walk_vae(config: Config, h: int, w: int, part: str) -> Tally:
    """``AutoencoderKL``'s ``part``: ``decoder`` (post_quant_conv, conv_in, the mid block of
    two ResNet blocks around an attention, up blocks of ``layers_per_block + 1`` ResNet
    blocks with nearest-neighbour upsampling and a 3×3 conv, GroupNorm, conv_out) from an
    ``h×w`` latent, or ``encoder`` (its mirror, quant_conv) of an image 8× that size;
    ``all`` counts both (parameters)."""
    t = Tally()
    widths = [int(c) for c in config["block_out_channels"]]
    n = len(widths)
    latent = int(config.get("latent_channels", 4))
    per = int(config.get("layers_per_block", 2))
    c_img = int(config.get("out_channels", 3))
    scale = 2 ** (n - 1)
    if part in ("encoder", "all"):
        hw = float(h * w * scale * scale)
        t.conv(int(config.get("in_channels", 3)), widths[0], 3, hw)
        out = widths[0]
        for i, c in enumerate(widths):
            for j in range(per):
                _resnet(t, out if j == 0 else c, c, hw, None)
                out = c
            if i < n - 1:
                hw /= 4
                t.conv(c, c, 3, hw)
        _resnet(t, out, out, hw, None)
        _vae_attention(t, out, hw)
        _resnet(t, out, out, hw, None)
        t.norm(out)
        t.conv(out, 2 * latent, 3, hw)
        if config.get("use_quant_conv", True):
            t.conv(2 * latent, 2 * latent, 1, hw)
    if part in ("decoder", "all"):
        hw = float(h * w)
        if config.get("use_post_quant_conv", True):
            t.conv(latent, latent, 1, hw)
        rev = list(reversed(widths))
        t.conv(latent, rev[0], 3, hw)
        _resnet(t, rev[0], rev[0], hw, None)
        _vae_attention(t, rev[0], hw)
        _resnet(t, rev[0], rev[0], hw, None)
        out = rev[0]
        for i, c in enumerate(rev):
            for j in range(per + 1):
                _resnet(t, out if j == 0 else c, c, hw, None)
                out = c
            if i < n - 1:
                hw *= 4
                t.elementwise += c * hw * 5 / 4  # nearest upsampling
                t.conv(c, c, 3, hw)
                # the upsampled map, its conv's output and cuDNN's workspace, the input
                t.live(c * hw * (2 + UPSAMPLE_CONV_WORKSPACE) + c * hw / 4)
        t.norm(widths[0])
        t.elementwise += 4 * widths[0] * hw  # the output GroupNorm and SiLU
        t.conv(widths[0], c_img, 3, hw)
    return t
