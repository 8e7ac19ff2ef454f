"""Model architectures: presets, Hugging Face ``config.json`` files, generic sizes."""

from __future__ import annotations

import json

from whichgpu.errors import InvalidInput
from whichgpu.models.arch import Linear, ModelArch, ParamCounts

__all__ = ["Linear", "ModelArch", "ParamCounts", "arch_from_config_text", "resolve_model"]


def arch_from_config_text(text: str, path: str) -> ModelArch:
    """A model from the text of a ``config.json`` (parsed as JSON data, nothing executed)."""
    from whichgpu.models.hf import parse_config

    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        problem = InvalidInput("not_json", reason=error.msg)
        problem.origin = path
        raise problem from None
    name = path.rsplit("/", 1)[-1]
    return parse_config(config, name, name, path)


def resolve_model(name: str | None = None, params: str | None = None) -> ModelArch:
    """A preset by name, or a generic transformer of ``params`` parameters (``"7B"``)."""
    if (name is None) == (params is None):
        raise InvalidInput("model_or_size", field=("model",))
    if params is not None:
        from whichgpu.models.generic import generic_arch

        return generic_arch(params)
    from whichgpu.models.presets import preset_arch

    assert name is not None
    return preset_arch(name)
