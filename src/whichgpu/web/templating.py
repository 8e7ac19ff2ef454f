"""Jinja2 templates, autoescaped, with whichgpu's gettext installed (``{{ _("…") }}`` and
``{% trans %}``), rendered in the request's language by :func:`whichgpu.web.core.speaking`."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from whichgpu.i18n import N_, _, fmt, format_decimal, ngettext
from whichgpu.inputs.fields import format_cost, format_duration, format_rate
from whichgpu.phrases import localize
from whichgpu.web.labels import form_name


def _gettext(message: str) -> str:
    return _(message)


def _ngettext(singular: str, plural: str, n: int) -> str:
    return ngettext(singular, plural, n)


usd = format_cost
rate = format_rate

#: What the forms' choices are called for a reader (the code beside it: the CLI's value)
OPTION_LABELS: dict[str, str] = {
    "inference": N_("Inference: serve or chat"),
    "train": N_("Train from scratch"),
    "finetune": N_("Full fine-tune"),
    "lora": N_("LoRA fine-tune"),
    "qlora": N_("QLoRA fine-tune (4-bit base)"),
    "image": N_("Image generation"),
    "image-lora": N_("Image model, LoRA fine-tune"),
    "image-finetune": N_("Image model, full fine-tune"),
    "render": N_("3D rendering"),
    "fp64": N_("FP64 simulation"),
    "32-true": N_("FP32"),
    "16-mixed": N_("FP16 mixed precision"),
    "bf16-mixed": N_("BF16 mixed precision"),
    "16-true": N_("FP16"),
    "bf16-true": N_("BF16"),
    "tf32": N_("TF32 (FP32 storage)"),
    "fp8-mixed": N_("FP8 (Transformer Engine)"),
}


def label(code: str) -> str:
    """A choice's name in the reader's language, its code beside it (``lora``): a task or a
    precision (:data:`OPTION_LABELS`), or a capability (its word in the notes' table)."""
    name = OPTION_LABELS.get(code)
    if name is not None:
        return f"{_(name)} ({code})"
    word = localize(code)
    return code if word == code else f"{word} ({code})"


def number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    return format_decimal(value, digits)


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("whichgpu.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_callables(  # type: ignore[attr-defined]
        _gettext, _ngettext, newstyle=True
    )
    env.filters.update(
        usd=usd,
        rate=rate,
        number=number,
        duration=format_duration,
        localize=localize,
        fmt=fmt,
        label=label,
        form_name=lambda path: form_name(tuple(str(path).split("."))) or "",
    )
    env.globals["applies"] = applies
    return env


def applies(field: str) -> str:
    """The kinds of work that read ``field``, space-separated, from the one table the
    request layer checks them by (:data:`whichgpu.inputs.workload_files.APPLIES`): what a
    form's ``data-tasks`` shows the field for."""
    from whichgpu.inputs.requests import KINDS
    from whichgpu.inputs.workload_files import APPLIES

    return " ".join(kind for kind in KINDS if field in APPLIES.get(kind, ()))


def render(name: str, **context: Any) -> str:
    """Render template ``name`` (call while speaking the request's language)."""
    return environment().get_template(name).render(**context)
