"""Reasons, warnings and corrections as data: a code and its parameters.

Results carry :class:`Note` objects, never sentences; the CLI, the web app and translations
render them through :data:`MESSAGES`, so a new message is one entry here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from whichgpu.i18n import N_, _

Param = str | int | float


@dataclass(frozen=True)
class Note:
    """A reason, warning or correction: ``code`` names the message, ``params`` fill it."""

    code: str
    params: Mapping[str, Param] = field(default_factory=lambda: MappingProxyType({}))

    def render(self) -> str:
        return render(self)


MESSAGES: dict[str, str] = {
    "article_differs": N_(
        "{claim} {gpu}, {field}: the article says {article}; the figure is {value} ({source})."
    ),
    "article_range_for_one_part": N_(
        "{claim} {gpu}, {field}: the article gives a range, {article}; this part is {value} "
        "({source}). {other}."
    ),
    "article_sparse_figure": N_(
        "{claim} {gpu}, {field}: the article's {article} is the 2:4-sparsity figure; the dense "
        "rate, comparable with the other cards' figures, is {value} ({source})."
    ),
    "article_price_unconfirmed": N_(
        "{claim} {gpu}: no public listing confirms the article's {article}; whichgpu shows the "
        "article's range for this card, marked as its source."
    ),
    "article_price_differs": N_(
        "{claim} {gpu}: the article says {article}; public listings run from {low} ({low_where}) "
        "to {high} ({high_where})."
    ),
    "change_shorter_sequence": N_("shorten the sequence to {seq} tokens"),
    "change_batch_1": N_(
        "use a micro-batch of {batch} (keep the global batch with gradient accumulation)"
    ),
    "change_checkpointing": N_("turn on activation checkpointing"),
    "change_lora": N_("fine-tune with LoRA (rank {rank}) instead of all weights"),
    "change_qlora": N_("fine-tune with QLoRA (NF4 base weights)"),
    "change_bf16_true": N_("train in pure bf16 (bf16-true)"),
    "change_zero3": N_(
        "shard weights, gradients and optimizer state with ZeRO-3 / FSDP over {gpus} GPUs"
    ),
    "change_quantize": N_("serve {quant} quantized weights"),
    "change_tensor_parallel": N_("split the model with tensor parallelism over {tp} GPUs"),
    "change_bigger_gpu": N_("use a GPU with more memory: the {gpu}"),
}


def render(note: Note) -> str:
    """The note in the current language."""
    template = MESSAGES.get(note.code)
    if template is None:
        raise KeyError(f"no message for note code {note.code!r}")
    return _(template).format(**note.params)


def note(code: str, **params: Param) -> Note:
    if code not in MESSAGES:
        raise KeyError(f"no message for note code {code!r}")
    return Note(code, MappingProxyType(dict(params)))
