"""Model architectures: presets, Hugging Face ``config.json`` files, generic sizes."""

from __future__ import annotations

from typing import Any

from whichgpu.errors import InvalidInput, Ref
from whichgpu.models.arch import Linear, ModelArch, ParamCounts

__all__ = ["Linear", "ModelArch", "ParamCounts", "arch_from_config_text", "resolve_model"]


def arch_from_config_text(text: str, path: str) -> ModelArch:
    """A model from the text of a ``config.json`` (parsed as JSON data, nothing executed)."""
    from whichgpu.models.hf import parse_config

    try:
        config = load_config_json(text)
    except InvalidInput as problem:
        problem.origin = path
        raise
    name = path.rsplit("/", 1)[-1]
    return parse_config(config, name, name, path)


#: A config.json is a few KB; nested a few levels (``rope_scaling``, ``quantization_config``).
MAX_CONFIG_CHARS = 1024 * 1024


def load_config_json(text: str) -> Any:
    """A config.json's text as JSON data, within :data:`MAX_CONFIG_CHARS` and the limits
    on any data from outside (:func:`whichgpu.untrusted.load_json`: depth checked before
    parsing, integers on their digits, no NaN); numbers stay Python numbers, bounded later
    by the parser."""
    from whichgpu.untrusted import load_json

    if len(text) > MAX_CONFIG_CHARS:
        raise InvalidInput("too_long", n=MAX_CONFIG_CHARS)
    return load_json(text)


def resolve_model(name: str | None = None, params: str | None = None) -> ModelArch:
    """A preset by name, or a generic transformer of ``params`` parameters (``"7B"``)."""
    if (name is None) == (params is None):
        raise InvalidInput("model_or_size", field=("model",))
    if params is not None:
        from whichgpu.models.generic import generic_arch

        return generic_arch(params)
    from whichgpu.errors import UnknownName
    from whichgpu.models.presets import preset_arch

    assert name is not None
    try:
        return preset_arch(name)
    except UnknownName:
        from whichgpu.models.pipelines import find_pipeline, is_pipeline

        if is_pipeline(name):  # an image pipeline named where a language model is asked
            raise InvalidInput(
                "model_is_pipeline",
                field=("model",),
                name=find_pipeline(name).name,
                task=Ref(("task",)),
            ) from None
        raise
