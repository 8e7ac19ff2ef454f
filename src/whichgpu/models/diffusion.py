"""Text-to-image diffusion pipelines from their published configs, parsed as data: a
pipeline's components (denoiser, text encoders, VAE) with their configs, a component's
:class:`Walk` at an image size (:mod:`whichgpu.models.diffusion_walks` walks them as diffusers
and transformers build them), and the LoRA adapters the training scripts put on a denoiser.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from whichgpu.frozen import memo
from whichgpu.models.diffusion_walks import (
    walk_clip,
    walk_flux,
    walk_mmdit,
    walk_t5,
    walk_unet,
    walk_vae,
)

ComponentKind = Literal["unet", "mmdit", "flux", "clip", "t5", "vae"]


@dataclass(frozen=True)
class Walk:
    """A component's tally at one image size (per image; the batch multiplies FLOPs and
    activations, not parameters)."""

    params: int
    flops: float
    activation_elements: float
    score_elements: float
    largest_module: int
    score_total: float = 0.0
    saved_elements: float = 0.0
    #: elements read and written by the forward's memory-bound kernels (Tally.elementwise)
    elementwise_elements: float = 0.0
    checkpointed_elements: float = 0.0
    named: Mapping[str, int] = field(default_factory=dict, compare=False)
    #: the convolutions' part of ``flops`` (Tally.conv_flops)
    conv_flops: float = 0.0


@dataclass(frozen=True, eq=False)
class DiffusionComponent:
    """One module of a pipeline: its role (``denoiser``, ``text_encoder``…), its class and
    config; its walk at an image size is :func:`walk`. Compared and hashed by identity: each
    preset's components are built once (:func:`whichgpu.models.pipelines.find_pipeline`), and
    the walks' caches key on them."""

    role: str
    kind: ComponentKind
    config: Mapping[str, Any]
    #: the published config's class (``_class_name`` / ``architectures``)
    class_name: str = ""

    @memo
    def params(self) -> int:
        """Parameters: the same at every image size (one walk, kept)."""
        return walk(self, 8, 8, 8).params


@dataclass(frozen=True)
class DiffusionPipeline:
    """A text-to-image pipeline: its components and the defaults of its diffusers pipeline
    call (``num_inference_steps``, the resolution its denoiser was trained at, whether
    classifier-free guidance runs the denoiser on a doubled batch)."""

    id: str
    name: str
    family: str
    components: tuple[DiffusionComponent, ...]
    #: pixels per latent side: 2^(VAE down blocks − 1), 8 for every shipped VAE
    vae_scale: int
    latent_channels: int
    default_resolution: int
    default_steps: int
    #: the dtype the pipeline's documentation loads it in (``torch_dtype``)
    default_precision: str
    #: classifier-free guidance: the denoiser runs on the prompt and the negative prompt
    #: (Ho & Salimans, 2022), a batch of 2 an image; guidance-distilled models (FLUX.1) don't
    cfg: bool
    #: text tokens each encoder reads, by role (CLIP's 77; T5's max_sequence_length)
    text_tokens: Mapping[str, int] = field(compare=False, hash=False)
    #: the pipeline decodes with the VAE in FP32 when loaded in FP16 (SDXL's
    #: ``force_upcast``: its VAE overflows in FP16)
    vae_upcast: bool = False
    source: str = ""

    def component(self, role: str) -> DiffusionComponent:
        return next(c for c in self.components if c.role == role)

    @property
    def denoiser(self) -> DiffusionComponent:
        return self.component("denoiser")

    @property
    def text_encoders(self) -> tuple[DiffusionComponent, ...]:
        return tuple(c for c in self.components if c.role.startswith("text_encoder"))

    @property
    def total_params(self) -> int:
        return sum(c.params for c in self.components)

    def latent_side(self, pixels: int) -> int:
        return pixels // self.vae_scale

    @property
    def stride_px(self) -> int:
        """Pixels an image side must be a multiple of: the VAE's scale times the
        denoiser's own (UNet down-samplings; a DiT's patch, FLUX's 2×2 packing)."""
        cfg = self.denoiser.config
        if self.denoiser.kind == "unet":
            return int(self.vae_scale * 2 ** (len(cfg["block_out_channels"]) - 1))
        if self.denoiser.kind == "flux":
            return self.vae_scale * 2
        return self.vae_scale * int(cfg.get("patch_size", 2))


def walk(component: DiffusionComponent, h: int, w: int, context: int) -> Walk:
    """``component``'s tally for one image: the denoiser and the VAE decoder at an ``h×w``
    latent, the denoiser reading ``context`` text tokens, a text encoder encoding them;
    parameters are the whole module's (the VAE's encoder included)."""
    cfg = component.config
    kind = component.kind
    if kind == "unet":
        t = walk_unet(cfg, h, w, context)
    elif kind == "mmdit":
        t = walk_mmdit(cfg, h, w, context)
    elif kind == "flux":
        t = walk_flux(cfg, h, w, context)
    elif kind == "clip":
        t = walk_clip(cfg, context)
    elif kind == "t5":
        t = walk_t5(cfg, context)
    else:
        t = walk_vae(cfg, h, w, "decoder")
        params = walk_vae(cfg, 1, 1, "all").params
        return Walk(
            params, t.flops, t.working, t.scores, t.largest_module, t.score_total,
            elementwise_elements=t.elementwise, conv_flops=t.conv_flops,
        )  # fmt: skip
    return Walk(
        t.params, t.flops, t.held + t.working, t.scores, t.largest_module, t.score_total,
        saved_elements=t.saved, elementwise_elements=t.elementwise,
        checkpointed_elements=t.boundaries + t.largest_unit, named=t.named,
        conv_flops=t.conv_flops,
    )  # fmt: skip


#: The LoRA target modules of the diffusers training scripts (examples/dreambooth,
#: examples/text_to_image at 58eb52c0): ``["to_k", "to_q", "to_v", "to_out.0"]`` for the
#: UNet scripts (train_dreambooth_lora_sdxl.py, train_text_to_image_lora.py; the SD3 script
#: takes the same), and train_dreambooth_lora_flux.py's attention and feed-forward layers.
DEFAULT_LORA_TARGETS: dict[str, tuple[str, ...]] = {
    "unet": ("to_k", "to_q", "to_v", "to_out.0"),
    "mmdit": ("to_k", "to_q", "to_v", "to_out.0"),
    "flux": (
        "attn.to_k", "attn.to_q", "attn.to_v", "attn.to_out.0", "attn.add_k_proj",
        "attn.add_q_proj", "attn.add_v_proj", "attn.to_add_out", "ff.net.0.proj", "ff.net.2",
        "ff_context.net.0.proj", "ff_context.net.2",
    ),
}  # fmt: skip


@lru_cache(maxsize=256)
def lora_params(component: DiffusionComponent, rank: int, targets: tuple[str, ...]) -> int:
    """Parameters of rank-``rank`` LoRA adapters (Hu et al., 2021: ``r·(d_in + d_out)`` a
    matrix) on the modules whose path ends with one of ``targets``, as PEFT matches
    ``target_modules`` (a suffix after a dot)."""
    named = walk(component, 8, 8, 8).named
    total = 0
    for path, width in named.items():
        if any(path == t or path.endswith("." + t) for t in targets):
            total += width
    return rank * total
