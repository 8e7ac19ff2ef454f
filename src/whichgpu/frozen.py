"""``dataclasses.replace`` for the frozen records the search makes by the thousand (jobs,
options): a copy of the instance's fields with some changed, without re-running the frozen
``__init__`` (one ``object.__setattr__`` call per field, ~15 µs for a :class:`~whichgpu.job.Job`
of 35 fields). Only for classes without ``__post_init__`` or ``__slots__``: nothing is
re-validated, so the values given must be of the fields' types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
R = TypeVar("R")


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


class memo(Generic[T, R]):
    """``functools.cached_property`` for frozen records, without the lock Python 3.11 takes on
    every first read (a recommend reads three of them on each of ~300 options): the value is
    computed once and stored in the instance's ``__dict__``, where later reads find it
    without calling the descriptor (it defines no ``__set__``). :func:`evolve` drops it from
    the copy (a memo is not a field)."""

    def __init__(self, func: Callable[[T], R]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> memo[T, R]: ...
    @overload
    def __get__(self, instance: T, owner: type | None = None) -> R: ...
    def __get__(self, instance: T | None, owner: type | None = None) -> R | memo[T, R]:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value
        return value
