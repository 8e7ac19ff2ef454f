"""Model presets: Hugging Face ``config.json`` copies shipped in ``models/presets/``, each with
a ``_whichgpu`` object naming its source, and a forgiving name lookup."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from whichgpu.catalog.names import build_index, normalize, resolve_name
from whichgpu.errors import InvalidInput
from whichgpu.files import shipped
from whichgpu.i18n import _
from whichgpu.models.arch import ModelArch
from whichgpu.models.hf import parse_config


@dataclass(frozen=True)
class Preset:
    """A shipped model config and where it comes from."""

    id: str
    hf_id: str
    display_name: str
    source: str
    retrieved: str
    config_exact: str
    published_params: int | None
    published_active_params: int | None
    published_params_source: str
    config: dict[str, Any]
    #: Other Hugging Face ids the same model was published under (PresetMeta.hf_aliases)
    hf_aliases: tuple[str, ...] = ()


def _read(name: str, text: str) -> Preset:
    from whichgpu.catalog.loader import validate
    from whichgpu.catalog.records import PresetMeta

    data = json.loads(text)
    raw = data.pop("_whichgpu", None)
    if not isinstance(raw, dict):
        raise InvalidInput("preset_metadata", name=name)
    meta = validate(PresetMeta, raw, f"models/presets/{name}", None)
    config = {key: value for key, value in data.items() if not key.startswith("_")}
    return Preset(
        id=meta.id,
        hf_id=meta.hf_id,
        display_name=meta.display_name or meta.id,
        source=meta.source,
        retrieved=meta.retrieved or "",
        config_exact=meta.config_exact,
        published_params=meta.published_params,
        published_active_params=meta.published_active_params,
        published_params_source=meta.published_params_source,
        hf_aliases=meta.hf_aliases,
        config=config,
    )


@cache
def presets() -> dict[str, Preset]:
    """Every shipped preset by id, read on first call."""
    folder = shipped("whichgpu.models", "presets")
    found: dict[str, Preset] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            preset = _read(entry.name, entry.read_text(encoding="utf-8"))
            found[preset.id] = preset
    return found


@cache
def _index() -> dict[str, tuple[str, ...]]:
    pairs: list[tuple[str, str]] = []
    for preset in presets().values():
        pairs += [(preset.id, preset.id), (preset.display_name, preset.id)]
        for hf_id in (preset.hf_id, *preset.hf_aliases):
            if hf_id:
                pairs += [(hf_id, preset.id), (hf_id.split("/")[-1], preset.id)]
    return build_index(pairs)


#: Words a Hugging Face repository adds to a model's name for a variant of the same
#: architecture (chat and instruction tunes, the base weights, ``-hf`` conversions): the
#: Hub's own naming (meta-llama/Llama-3.1-8B-Instruct, google/gemma-2-9b-it,
#: meta-llama/Llama-2-7b-chat-hf, Qwen/Qwen3-8B-Base)
VARIANT_WORDS = ("instruct", "chat", "base", "hf", "it")


def base_name(name: str) -> str:
    """``name`` (a Hub id as people paste it) without its organisation and the variant words
    of :data:`VARIANT_WORDS`, case kept: ``meta-llama/Llama-3.1-8B-Instruct`` →
    ``Llama-3.1-8B``; ``mistralai/Mixtral-8x7B-Instruct-v0.1`` → ``Mixtral-8x7B-v0.1``."""
    last = name.strip().rsplit("/", 1)[-1]
    words = [w for w in last.split("-") if w.lower() not in VARIANT_WORDS]
    return "-".join(words) or last


def find_preset(name: str) -> Preset:
    """The preset ``name`` denotes (id, display name or Hugging Face id, forgivingly; a Hub
    id of a chat, instruction or base variant names its architecture: :func:`base_name`)."""
    from whichgpu.errors import UnknownName

    try:
        found = resolve_name(name, _index(), presets(), kind=_("model"), listing="@models")
    except UnknownName:
        base = base_name(name)
        if base == name or normalize(base) not in _index():
            raise
        found = resolve_name(base, _index(), presets(), kind=_("model"), listing="@models")
    return presets()[found]


def preset_arch(name: str) -> ModelArch:
    return _preset_arch(find_preset(name).id)


@cache
def _preset_arch(preset_id: str) -> ModelArch:
    """Parsed once per process: ModelArch is frozen, so callers share it."""
    preset = presets()[preset_id]
    arch = parse_config(preset.config, preset.id, preset.display_name, preset.source)
    return replace(arch, notes=(f"config: {preset.hf_id or preset.id} ({preset.config_exact})",))


@dataclass(frozen=True)
class ModelSummary:
    """One preset as ``whichgpu models`` lists it."""

    preset: Preset
    arch: ModelArch

    @property
    def id(self) -> str:
        return self.preset.id


def check_family(family: str | None) -> None:
    """A ``family`` filter that no preset or pipeline has (not even as a prefix) is one
    line listing the families, the closest first."""
    if family is None:
        return
    from whichgpu.catalog.names import suggestions
    from whichgpu.errors import InvalidInput
    from whichgpu.models.pipelines import pipelines

    names = {_preset_arch(p).family.lower() for p in presets()}
    names |= {p.family.lower() for p in pipelines().values()}
    if any(name.startswith(family.lower()) for name in names):
        return
    near = suggestions(family, sorted(names))
    valid = ", ".join([*near, *sorted(names - set(near))])
    raise InvalidInput("unknown_family", field=("family",), value=family, valid=valid)


def list_models(
    family: str | None = None, min_params: float | None = None, max_params: float | None = None
) -> list[ModelSummary]:
    """The presets, smallest first, of ``family`` (``llama``, ``qwen2_moe``… as the config's
    ``model_type`` says; a prefix matches: ``qwen`` takes both Qwen families) and within
    ``min_params``–``max_params`` parameters."""
    found = []
    for preset in presets().values():
        arch = _preset_arch(preset.id)
        if family is not None and not arch.family.lower().startswith(family.lower()):
            continue
        if min_params is not None and arch.total_params < min_params:
            continue
        if max_params is not None and arch.total_params > max_params:
            continue
        found.append(ModelSummary(preset, arch))
    return sorted(found, key=lambda m: (m.arch.total_params, m.id))
