"""Reasons, warnings and corrections as data: a code and its parameters.

Results carry :class:`Note` objects, never sentences; the CLI, the web app and translations
render them through :data:`MESSAGES` (:mod:`whichgpu.note_messages`), so a new message is
one entry there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from whichgpu.errors import Ref, api_name, naming_fields, ref_name
from whichgpu.i18n import N_, Plural, _, current_language, fmt
from whichgpu.note_messages import MESSAGES
from whichgpu.phrases import LIST_SEPARATOR, localize

Param = str | int | float | Ref


@dataclass(frozen=True)
class Note:
    """A reason, warning or correction: ``code`` names the message, ``params`` fill it."""

    code: str
    params: Mapping[str, Param] = field(default_factory=lambda: MappingProxyType({}))

    def render(self) -> str:
        return render(self)


#: Labels of the feature codes a ``features`` parameter lists (comma-separated codes).
FEATURES: dict[str, str] = {
    "vram": N_("VRAM beyond need"),
    "hbm": N_("HBM bandwidth"),
    "nvlink": N_("NVLink"),
    "mig": N_("MIG"),
    "fp64": N_("FP64 units"),
}


def render(note: Note, english: bool = False) -> str:
    """The note in the current language (a ``features`` parameter's codes as labels), or in
    the English source with plain numbers for language-neutral output (JSON). Rendered once
    per code, parameters and language (:func:`_render`): a full-catalog serving answer says
    ~390 blockers, ~155 of them distinct."""
    if note.code not in MESSAGES:
        raise KeyError(f"no message for note code {note.code!r}")
    # a field named as the shell names it (naming_fields), here: the rendering is kept by it
    params = tuple(
        (k, ref_name(v) if isinstance(v, Ref) else v, type(v)) for k, v in note.params.items()
    )
    return _render(note.code, params, english, "en" if english else current_language())


@lru_cache(maxsize=4096)
def _render(
    code: str, items: tuple[tuple[str, Param, type], ...], english: bool, language: str
) -> str:
    """:func:`render` of a note's code and parameters (each with its type: ``1`` and
    ``1.0`` are equal keys but not one text) in ``language``, the current one."""
    message = MESSAGES[code]
    params: dict[str, Param] = {k: v for k, v, _type in items}
    translate = (lambda text: text) if english else _
    if isinstance(message, Plural):  # translated here: its form follows its count
        template = message.form(int(params[message.counted]), translate=not english)  # type: ignore[arg-type]
    else:
        template = translate(message)
    if "features" in params:
        codes = str(params["features"]).split(",")
        separator = translate(LIST_SEPARATOR)
        params["features"] = separator.join(
            translate(FEATURES[c]) if c in FEATURES else c for c in codes
        )
    if english:
        return template.format(**params)
    params = {k: localize(v) if isinstance(v, str) else v for k, v in params.items()}
    return fmt(template, **params)


def note_doc(n: Note) -> dict[str, object]:
    """A note as JSON, the same from every shell (the CLI's --json and the HTTP API): its
    code, its parameters (a field by its JSON path, an action by its endpoint), both
    language-neutral, and the sentence in the reader's language (the request's, ``--lang``;
    English by default)."""
    with naming_fields(api_name):
        params = {k: ref_name(v) if isinstance(v, Ref) else v for k, v in n.params.items()}
        return {"code": n.code, "params": params, "text": render(n)}


def count_label(count: int, name: str, count_one: bool = False) -> str:
    """The one way whichgpu writes a number of GPUs: ``2 × RTX A6000``; one card is its name
    alone unless ``count_one`` (a table column that always shows the count)."""
    return f"{count} × {name}" if count > 1 or count_one else name


def note(code: str, **params: Param) -> Note:
    if code not in MESSAGES:
        raise KeyError(f"no message for note code {code!r}")
    return Note(code, MappingProxyType(dict(params)))
