"""Model architectures: presets, Hugging Face ``config.json`` files, generic sizes."""

from __future__ import annotations

import json
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
MAX_CONFIG_DEPTH = 32


def load_config_json(text: str) -> Any:
    """A config.json's text as JSON data, within :data:`MAX_CONFIG_CHARS` and
    :data:`MAX_CONFIG_DEPTH` (checked before parsing: a deeply nested file would exhaust the
    parser's recursion); numbers stay Python numbers, bounded later by the parser."""
    import re

    if len(text) > MAX_CONFIG_CHARS:
        raise InvalidInput("too_long", n=MAX_CONFIG_CHARS)
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", re.sub(r'"(?:\\.|[^"\\])*"', "", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_CONFIG_DEPTH:
            raise InvalidInput("config_too_deep", depth=MAX_CONFIG_DEPTH)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise InvalidInput("not_json", reason=error.msg) from None
    except RecursionError:
        raise InvalidInput("config_too_deep", depth=MAX_CONFIG_DEPTH) from None


def _no_constant(name: str) -> object:
    """``NaN``, ``Infinity``: not JSON, refused (Python's json would take them)."""
    raise InvalidInput("not_json", reason=f"{name} is not a JSON number")


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
