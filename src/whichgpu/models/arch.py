"""A model's architecture as the estimators need it: shapes, attention kind, experts, and
exact parameter counts by component."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

AttentionKind = Literal["mha", "gqa", "mqa", "mla"]
ModelKind = Literal["decoder", "encoder", "vit", "cnn"]
NormKind = Literal["rmsnorm", "layernorm", "layernorm-nobias", "batchnorm"]
FfnKind = Literal["glu", "mlp"]


@dataclass(frozen=True)
class ParamCounts:
    """Parameters by component. ``experts`` are the routed experts of every MoE layer."""

    embedding: int = 0
    attention: int = 0
    mlp: int = 0
    experts: int = 0
    router: int = 0
    norms: int = 0
    head: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.attention
            + self.mlp
            + self.experts
            + self.router
            + self.norms
            + self.head
            + self.other
        )


@dataclass(frozen=True)
class Linear:
    """A weight matrix of the model: ``count`` copies of ``d_in × d_out`` in the model.

    ``role`` groups them: ``attn`` (query/key/value/output projections, fused or not as the
    implementation has them), ``mlp``, ``expert`` (routed experts), ``head``. ``name`` is the
    module's attribute name in the Hugging Face implementation (``q_proj``, ``c_attn``,
    ``query_key_value``…), what PEFT's ``target_modules`` match; ``reads`` says which tensor it
    reads: ``x`` the block's (normalised) input, shared with the block's other ``x`` readers,
    or ``inner`` a tensor of its own (attention's merged heads, the MLP's hidden product, an
    MLA latent).
    """

    role: str
    d_in: int
    d_out: int
    count: int
    name: str = ""
    reads: str = "x"


@dataclass(frozen=True, kw_only=True)
class ModelArch:
    """One model. Transformer fields are 0 for a CNN; ``params`` is exact for known families.
    ``id`` and ``name`` are set by whoever knows them (a preset, a file path)."""

    id: str = ""
    name: str = ""
    family: str
    kind: ModelKind
    params: ParamCounts
    active_params: int
    n_layers: int = 0
    hidden_size: int = 0
    n_heads: int = 0
    n_kv_heads: int = 0
    head_dim: int = 0
    intermediate_size: int = 0
    ffn_kind: FfnKind = "mlp"
    norm: NormKind = "layernorm"
    vocab_size: int = 0
    tied_embeddings: bool = False
    max_positions: int = 0
    attention: AttentionKind = "mha"
    #: MoE: routed experts, experts used per token, per-expert FFN width, MoE layer count
    n_experts: int = 0
    experts_per_token: int = 0
    n_shared_experts: int = 0
    moe_intermediate_size: int = 0
    n_moe_layers: int = 0
    #: MLA (DeepSeek-V2/V3): the cached latent and the decoupled RoPE key per token and layer
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    #: Sliding-window attention: the positions a local layer attends to (and caches), and how
    #: many of the layers are local (Gemma 2 every other one, Gemma 3 five in six, gpt-oss
    #: half; Mistral 7B v0.1 all); 0 where every layer attends to the whole context
    sliding_window: int = 0
    sliding_layers: int = 0
    #: Vision: tokens per image (ViT patches + class token), image side, channels
    image_size: int = 0
    tokens_per_image: int = 0
    #: ResNet bottleneck stages: (blocks, output width) per stage; stem width
    stages: tuple[tuple[int, int], ...] = ()
    stem_width: int = 0
    #: The weight format the checkpoint ships in where it is not 16-bit (``fp8``: DeepSeek-V3's
    #: ``quantization_config``), what it is served in unless another is asked
    checkpoint_quant: str | None = None
    #: Multi-token prediction modules the checkpoint ships beside the model (DeepSeek-V3's
    #: ``num_nextn_predict_layers``): draft heads for speculative decoding, not counted in
    #: ``params``
    mtp_layers: int = 0
    #: Activation function (``hidden_act``) and dropout probabilities active in training
    activation: str = "silu"
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    #: The weight matrices, for LoRA adapters and factored optimizer states
    linears: tuple[Linear, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __hash__(self) -> int:
        """The dataclass hash of every field, computed once: models key the estimators'
        caches, and a model's fields (its linears, its parameter counts) are many."""
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def learned_positions(self) -> bool:
        """A learned position table (GPT-2, BERT) caps sequences at ``max_positions``;
        rotary and ALiBi models run longer ones (their quality is another matter)."""
        return self.family in ("gpt2", "bert") and self.max_positions > 0

    @property
    def total_params(self) -> int:
        return self.params.total

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    def layer_positions(self, context: float) -> float:
        """Positions the layers attend to and cache, summed over the layers, for a sequence
        of ``context`` tokens: every layer's ``context``, a local layer's at most its window
        (Beltagy et al., 2020, "Longformer", §3.1: a window of w keys a query; the engines
        keep only those in the cache: vLLM's hybrid KV cache manager, llama.cpp's SWA
        cache, transformers' HybridCache)."""
        local = min(self.sliding_layers, self.n_layers) if self.sliding_window else 0
        return (self.n_layers - local) * context + local * min(context, self.sliding_window)

    @property
    def kv_dim(self) -> int:
        """Elements cached per token and layer: 2·kv_heads·head_dim, or MLA's latent."""
        if self.attention == "mla":
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.n_kv_heads * self.head_dim
