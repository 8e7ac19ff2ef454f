"""Forgiving GPU name resolution: ``a100``, ``A100-80GB``, ``rtx a6000``, ``a6000``.

A name is normalised (case, spaces and punctuation dropped, vendor words such as "NVIDIA" or
"GeForce" removed) and matched exactly against ids, names and aliases. There is no prefix
matching: ``l40`` is not the L40S. An alias listed for two GPUs (``v100``) is ambiguous on
purpose. Unknown names get the closest matches (difflib), so a typo costs one more try.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from whichgpu.errors import AmbiguousName, UnknownName
from whichgpu.i18n import _, fmt

_VENDOR_WORDS = ("nvidia", "geforce", "tesla", "quadro", "amd", "instinct")


def normalize(name: str) -> str:
    """``"NVIDIA GeForce RTX 4090"`` → ``"rtx4090"``; ``"A100-80GB"`` → ``"a10080gb"``."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    for word in _VENDOR_WORDS:
        if key.startswith(word) and len(key) > len(word):
            key = key[len(word) :]
    return key


def build_index(entries: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """Map each normalised name to the ids it denotes, from ``(name, id)`` pairs; a name of
    the RTX line also without its "RTX" (``4060 ti 16gb`` as people type it), where that
    names nothing else."""
    index: dict[str, list[str]] = {}
    for name, gpu_id in entries:
        targets = index.setdefault(normalize(name), [])
        if gpu_id not in targets:
            targets.append(gpu_id)
    for key, ids in list(index.items()):
        bare = key[3:]
        if key.startswith("rtx") and bare[:1].isdigit() and bare not in index:
            index[bare] = ids
    return {key: tuple(ids) for key, ids in index.items()}


def resolve_name(
    name: str,
    index: Mapping[str, tuple[str, ...]],
    ids: Iterable[str],
    kind: str = "",
    listing: str = "@gpus",
) -> str:
    """The id that ``name`` denotes; :class:`UnknownName` (naming the command that lists the
    valid names) or :class:`AmbiguousName` if none."""
    kind = kind or _("GPU")
    matches = index.get(normalize(name), ())
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise AmbiguousName(kind, name, matches)
    raise UnknownName(kind, name, suggest(name, index, ids), listing)


def suggest(
    name: str, index: Mapping[str, tuple[str, ...]], ids: Iterable[str], n: int = 3
) -> tuple[str, ...]:
    """Up to ``n`` ids whose names are closest to ``name``."""

    found: list[str] = []
    key = normalize(name)
    # the names of the same model first (``h100 80gb``: the H100s, not the A100 80GB)
    model = next((t for t in re.findall(r"[a-z0-9]+", name.lower()) if re.search(r"\d", t)), "")
    same = [k for k in index if model and k.startswith(model)]
    close = suggestions(key, same, len(same), 0.0) if same else ()
    for near in (*close, *suggestions(key, list(index), n * 2)):
        for gpu_id in index[near]:
            if gpu_id not in found:
                found.append(gpu_id)
    return tuple(found[:n]) or suggestions(name, list(ids), n)


#: How alike a name must be to be suggested (difflib's ratio): the one cutoff of every
#: "did you mean" and "closest matches" in whichgpu.
SUGGEST_CUTOFF = 0.5


def suggestions(
    key: str, valid: Sequence[str], n: int = 3, cutoff: float = SUGGEST_CUTOFF
) -> tuple[str, ...]:
    """Up to ``n`` valid names nearest to ``key``, nearest first (case ignored)."""
    import difflib

    return tuple(difflib.get_close_matches(key.lower(), list(valid), n=n, cutoff=cutoff))


def closest(key: str, valid: Sequence[str]) -> str | None:
    """The valid name nearest to ``key``, for "did you mean"."""
    found = suggestions(key, valid, 1)
    return found[0] if found else None


@dataclass(frozen=True)
class FamilyChoice:
    """A family name read as one of its variants: what was typed, the variant taken (the
    one most offers rent), the others, and the offers that decided it."""

    typed: str
    chosen: str
    others: tuple[str, ...]
    offers: int
    total: int
    #: A variant with no row of its own, read as the GPU it shares chip and memory with
    variant: bool = False


_family_choices: ContextVar[list[FamilyChoice] | None] = ContextVar(
    "whichgpu_family_choices", default=None
)


@contextmanager
def recording_family_choices() -> Iterator[list[FamilyChoice]]:
    """Inside the block, each family name resolved is recorded in the list yielded (what the
    answer says it read the name as)."""
    said: list[FamilyChoice] = []
    token = _family_choices.set(said)
    try:
        yield said
    finally:
        _family_choices.reset(token)


def say_family_choice(choice: FamilyChoice) -> None:
    """Record ``choice`` where a caller is recording (once per name typed)."""
    said = _family_choices.get()
    if said is not None and all(c.typed != choice.typed for c in said):
        said.append(choice)


def family_choice_text(choice: FamilyChoice, name: str) -> str:
    """What the answer says of ``choice`` (``name``: the chosen GPU's name), one line."""
    if choice.variant:
        return fmt(
            _("{typed} read as the {gpu}: the same chip, memory and bandwidth, rated and "
              "priced as it; its own tensor rates are not published, so a compute-bound "
              "estimate may be off"),
            typed=choice.typed, gpu=name,
        )  # fmt: skip
    return fmt(
        _("{typed} read as the {gpu}, the variant most offers rent ({n} of {total}); name "
          "{others} for another"),
        typed=choice.typed, gpu=name, n=choice.offers, total=choice.total,
        others=_(" or ").join(choice.others),
    )  # fmt: skip


def family_choices_said() -> list[FamilyChoice]:
    """The family names resolved so far where a caller is recording (none elsewhere)."""
    return list(_family_choices.get() or ())
