"""Image-generation pipeline presets: the published configs of each pipeline's components,
shipped in ``models/pipelines/`` with a ``_whichgpu`` object naming their sources and the
defaults of the pipeline's diffusers call; a forgiving name lookup."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import Any

from whichgpu.catalog.names import build_index, resolve_name
from whichgpu.errors import InvalidInput
from whichgpu.files import shipped
from whichgpu.i18n import _
from whichgpu.models.diffusion import ComponentKind, DiffusionComponent, DiffusionPipeline

#: A component's class, as its config names it, to the walk that counts it.
CLASS_KINDS: dict[str, ComponentKind] = {
    "UNet2DConditionModel": "unet",
    "SD3Transformer2DModel": "mmdit",
    "FluxTransformer2DModel": "flux",
    "CLIPTextModel": "clip",
    "CLIPTextModelWithProjection": "clip",
    "T5EncoderModel": "t5",
    "AutoencoderKL": "vae",
}


def _class_name(config: dict[str, Any]) -> str:
    name = config.get("_class_name")
    if isinstance(name, str):
        return name
    archs = config.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        return archs[0]
    return ""


def parse_pipeline(data: dict[str, Any], name: str) -> DiffusionPipeline:
    """A pipeline from a preset file's data: ``_whichgpu`` (id, names, defaults) and
    ``components`` (role → the component's config.json)."""
    meta = data.get("_whichgpu")
    components = data.get("components")
    if not isinstance(meta, dict) or not isinstance(components, dict):
        raise InvalidInput("preset_metadata", name=name)
    parsed = []
    for role, config in components.items():
        kind = CLASS_KINDS.get(_class_name(config))
        if kind is None:
            raise InvalidInput("preset_metadata", name=f"{name}: {role}")
        parsed.append(DiffusionComponent(role, kind, config, _class_name(config)))
    vae = components["vae"]
    defaults = meta["defaults"]
    return DiffusionPipeline(
        id=meta["id"],
        name=meta.get("display_name") or meta["id"],
        family=meta["family"],
        components=tuple(parsed),
        vae_scale=2 ** (len(vae["block_out_channels"]) - 1),
        latent_channels=int(vae.get("latent_channels", 4)),
        default_resolution=int(defaults["resolution"]),
        default_steps=int(defaults["steps"]),
        default_precision=str(defaults["precision"]),
        cfg=bool(defaults["cfg"]),
        text_tokens={str(k): int(v) for k, v in meta["text_tokens"].items()},
        vae_upcast=bool(meta.get("vae_upcast", False)),
        source=meta["source"],
    )


@cache
def pipeline_data() -> dict[str, dict[str, Any]]:
    """Every shipped pipeline preset's data by id, read on first call."""
    folder = shipped("whichgpu.models", "pipelines")
    found: dict[str, dict[str, Any]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            found[data["_whichgpu"]["id"]] = data
    return found


@cache
def _pipeline(pipeline_id: str) -> DiffusionPipeline:
    return parse_pipeline(pipeline_data()[pipeline_id], pipeline_id)


def pipelines() -> dict[str, DiffusionPipeline]:
    return {pid: _pipeline(pid) for pid in pipeline_data()}


@cache
def _index() -> dict[str, tuple[str, ...]]:
    pairs: list[tuple[str, str]] = []
    for pid, data in pipeline_data().items():
        meta = data["_whichgpu"]
        pairs += [(pid, pid), (meta.get("display_name") or pid, pid)]
        for alias in (meta.get("hf_id", ""), *meta.get("aliases", ())):
            if alias:
                pairs += [(alias, pid), (alias.split("/")[-1], pid)]
    return build_index(pairs)


@lru_cache(maxsize=256)
def is_pipeline(name: str) -> bool:
    """``name`` denotes an image-generation pipeline preset (exactly or forgivingly)."""
    try:
        find_pipeline(name)
    except InvalidInput:
        return False
    except Exception:  # an unknown or ambiguous name: not a pipeline
        return False
    return True


@lru_cache(maxsize=256)
def find_pipeline(name: str) -> DiffusionPipeline:
    """The pipeline ``name`` denotes (id, display name or Hugging Face id, forgivingly);
    found names are remembered (a name that is not one raises, and is not)."""
    found = resolve_name(name, _index(), pipeline_data(), kind=_("image model"), listing="@models")
    return _pipeline(found)


def list_pipelines(
    family: str | None = None, min_params: float | None = None, max_params: float | None = None
) -> list[DiffusionPipeline]:
    """The image-generation pipelines, smallest first, as :func:`~whichgpu.models.presets.
    list_models` filters the language and vision presets (``family``: ``sd1``, ``sdxl``,
    ``sd3``, ``flux``, a prefix; sizes over all components)."""
    found = [
        p
        for p in pipelines().values()
        if (family is None or p.family.lower().startswith(family.lower()))
        and (min_params is None or p.total_params >= min_params)
        and (max_params is None or p.total_params <= max_params)
    ]
    return sorted(found, key=lambda p: (p.total_params, p.id))
