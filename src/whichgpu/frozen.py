"""``dataclasses.replace`` for the frozen records the search makes by the thousand (jobs,
options): a copy of the instance's fields with some changed, without re-running the frozen
``__init__`` (one ``object.__setattr__`` call per field, ~15 µs for a :class:`~whichgpu.job.Job`
of 35 fields). Only for classes without ``__post_init__`` or ``__slots__``: nothing is
re-validated, so the values given must be of the fields' types."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def evolve(record: T, **changes: Any) -> T:
    """``record`` with ``changes`` (field names of its dataclass); a TypeError names an
    unknown field, as ``dataclasses.replace`` does."""
    cls = type(record)
    fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
    if not changes.keys() <= fields.keys():
        unknown = next(name for name in changes if name not in fields)
        raise TypeError(f"{cls.__name__} has no field {unknown!r}")
    state = record.__dict__.copy()
    if len(state) > len(fields):  # memos (a cached hash, cached properties): not the copy's
        state.pop("_hash", None)  # the usual one, without comparing every key
        if len(state) > len(fields):
            for memo in state.keys() - fields.keys():
                del state[memo]
    state.update(changes)
    new = object.__new__(cls)
    object.__setattr__(new, "__dict__", state)
    return new
