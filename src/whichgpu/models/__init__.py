"""Model architectures: presets, Hugging Face ``config.json`` files, generic sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from whichgpu.errors import InvalidInput, Ref

if TYPE_CHECKING:
    from whichgpu.catalog.records import GPU
    from whichgpu.catalog.store import Catalog
    from whichgpu.models.arch import Linear, ModelArch, ParamCounts

__all__ = [
    "Linear",
    "ModelArch",
    "ParamCounts",
    "arch_from_config_text",
    "resolve_gpu",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    """The architecture's types, imported when first asked (PEP 562): resolving a GPU's
    name (``compare``, ``show``) needs no model, and their module's dataclasses cost a
    cold start ~3 ms to build."""
    if name in ("Linear", "ModelArch", "ParamCounts"):
        from whichgpu.models import arch

        return getattr(arch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def resolve_gpu(catalog: Catalog, name: str) -> GPU:
    """The GPU ``name`` denotes (:meth:`~whichgpu.catalog.store.Catalog.resolve`); a model's
    name in its place (``show deepseek-ai/DeepSeek-R1``, ``estimate --gpu llama-3.1-8b``)
    is said to be one, with where to ask about it, where its closest GPU names would
    mislead: the one place every command, the API and the pages resolve a GPU a user
    named."""
    from whichgpu.errors import UnknownName, WhichGPUError

    try:
        return catalog.resolve(name)
    except UnknownName as unknown:
        try:
            arch = resolve_model(name)
        except WhichGPUError:
            raise unknown from None
        raise InvalidInput("gpu_is_model", name=name, model=arch.name, fit=Ref(("@fit",)),
                           models=Ref(("@models",))) from None  # fmt: skip
