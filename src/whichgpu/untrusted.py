"""Data from outside, parsed within limits: JSON bodies and uploads, TOML and YAML files.

Every value a user sends or names passes here before anything else sees it (a request type,
a compute pool's pickling, an error message's formatter), and is refused in one line when it
is nested too deep, holds too many values or carries a number too long to be a quantity:

- **Depth** (:data:`MAX_DEPTH`): a recursive consumer (``pickle``, ``copy``, ``repr``, a
  recursive parser) exhausts Python's stack near 1,000 levels, and the pool's scheduler
  thread died pickling a 600-level body. JSON text is scanned for its brackets before it is
  parsed; TOML and YAML parsers recurse, so their ``RecursionError`` is caught and the parsed
  tree walked again (iteratively) for its depth.
- **Values** (:data:`MAX_VALUES`): YAML aliases share one object among many places, so a
  1.4 KB file can stand for 10^9 values; every walk that expands them (rendering one in a
  message) would never end. The walk counts each value as often as it is reached and stops
  at the limit.
- **Numbers** (:data:`MAX_INT_DIGITS`): Python refuses to convert integers of more than
  4,300 digits (``ValueError``, CVE-2020-10735's limit), and anything past a few dozen digits
  is no quantity whichgpu reads. JSON integers are checked as text, before conversion.
- **Keys**: JSON and YAML parsers keep the last of a key given twice in one object, so
  ``{"tokens": 1e8, "tokens": 1e12}`` would be answered as if the first were not there; a
  key given twice is refused, naming it (TOML's parser refuses it already).
- **Text**: JSON's ``\ud800`` escape (and YAML's) makes an unpaired UTF-16 surrogate, which
  is no character: Python holds it in a ``str`` but cannot encode it, so the first writer of
  it (a log line, a response, a pool's pickling) would fail. Every string and key is checked.

Nothing here imports a parser at import time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from whichgpu.errors import InvalidInput

if TYPE_CHECKING:
    from yaml import SafeLoader

#: The deepest nesting accepted: a workload's ``components[0].config.rope_scaling`` is 4
#: levels, a config.json's deepest (``quantization_config``'s module lists) 4–5.
MAX_DEPTH = 32
#: The most values (scalars and containers, each counted as often as it is reached) in one
#: document: a config.json with a 1,000-class ``id2label`` holds ~2,100; a 1 MiB JSON text
#: cannot hold more than ~500,000.
MAX_VALUES = 100_000
#: The longest integer, in digits: 10^30 is far past every count, size or price whichgpu
#: reads (the largest, a token count, is ~10^13).
MAX_INT_DIGITS = 30
_INT_BOUND = 10**MAX_INT_DIGITS
#: A string in a JSON text (``"..."`` with escapes): skipped by the bracket scan.
_JSON_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_BRACKET = re.compile(r"[\[\]{}]")


def load_json(text: str | bytes, origin: str | None = None) -> Any:
    """JSON text as data: nesting checked on the text before it is parsed, integers on their
    digits before they are converted, ``NaN``/``Infinity`` refused (Python's ``json`` takes
    them; JSON has no such numbers), then the tree's values counted (:func:`check_tree`).
    An error names ``origin`` (a file, ``body``) where one is given."""
    import json

    with _from(origin):
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput("not_utf8") from None
        _check_bracket_depth(text)
        try:
            data = json.loads(
                text,
                parse_int=_json_int,
                parse_constant=_no_constant,
                object_pairs_hook=_unique_keys,
            )
        except json.JSONDecodeError as error:
            raise InvalidInput("not_json", reason=error.msg) from None
        except RecursionError:  # unreachable after the scan; kept as the parser's own limit
            raise InvalidInput("too_deep", depth=MAX_DEPTH) from None
        return check_tree(data)


def load_toml(text: str, origin: str | None = None) -> Any:
    """TOML text as data (``tomllib``), within the limits: its ``RecursionError`` (nested
    inline arrays) and integer conversion errors are one line each, naming ``origin``."""
    import tomllib

    with _from(origin):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise InvalidInput("not_toml", reason=str(error)) from None
        except RecursionError:
            raise InvalidInput("too_deep", depth=MAX_DEPTH) from None
        except ValueError:  # an integer past Python's 4,300-digit conversion limit
            raise InvalidInput("number_too_long", digits=MAX_INT_DIGITS) from None
        return check_tree(data)


def load_yaml(text: str, origin: str | None = None) -> Any:
    """YAML text as data (PyYAML's safe loader: plain types only), within the limits;
    aliases are counted each time they are used (a "billion laughs" file is refused, not
    expanded). A syntax error, or a key given twice in one mapping, names ``origin`` and
    its line."""
    import yaml

    with _from(origin):
        try:
            data = _safe_data(text)
        except _DuplicateKey as error:
            problem = InvalidInput("duplicate_key", key=error.key)
            if origin is not None:
                problem.origin = f"{origin}:{error.line + 1}"
            raise problem from None
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            reason = getattr(error, "problem", None) or str(error)
            problem = InvalidInput("not_yaml", reason=reason)
            if origin is not None and mark is not None:
                problem.origin = f"{origin}:{mark.line + 1}"
            raise problem from None
        except RecursionError:
            raise InvalidInput("too_deep", depth=MAX_DEPTH) from None
        except (ValueError, OverflowError):  # a number the constructor cannot convert
            raise InvalidInput("number_too_long", digits=MAX_INT_DIGITS) from None
        return check_tree(data)


def check_tree(data: Any) -> Any:
    """``data`` itself, once its depth, the values it reaches and its integers are within
    the limits (one :class:`InvalidInput` otherwise). The walk is iterative and stops at the
    first value past a limit, so it is bounded whatever ``data`` is."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise InvalidInput("too_many_values", n=MAX_VALUES)
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list | tuple):
            children = value
        else:
            _check_scalar(value)
            continue
        if depth > MAX_DEPTH:
            raise InvalidInput("too_deep", depth=MAX_DEPTH)
        if isinstance(value, dict):
            for key in value:
                _check_scalar(key)
        stack.extend((child, depth + 1) for child in children)
    return data


@contextmanager
def _from(origin: str | None) -> Iterator[None]:
    """Errors raised inside name ``origin`` (a file, ``body``), unless they name one."""
    try:
        yield
    except InvalidInput as error:
        if error.origin is None:
            error.origin = origin
        raise


def _check_scalar(value: Any) -> None:
    """An integer within :data:`MAX_INT_DIGITS`, a string of characters (no unpaired
    surrogate: :func:`check_text`)."""
    if isinstance(value, str):
        check_text(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        _check_int_size(value)


def check_text(value: str) -> str:
    """``value`` itself, once it encodes as UTF-8: an unpaired surrogate is refused in one
    line that names it as an escape (it cannot be printed)."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            code = ord(value[error.start])
            raise InvalidInput("lone_surrogate", escape=f"\\u{code:04x}") from None
    return value


def _check_int_size(value: int) -> None:
    """An integer of at most :data:`MAX_INT_DIGITS` digits (compared with a power of ten:
    no conversion to text, which Python refuses past 4,300 digits)."""
    if abs(value) >= _INT_BOUND:
        raise InvalidInput("number_too_long", digits=MAX_INT_DIGITS)


def _json_int(text: str) -> int:
    """A JSON integer, refused on its digits before Python converts it."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise InvalidInput("number_too_long", digits=MAX_INT_DIGITS)
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members as a dict, refused where a key is given twice."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise InvalidInput("duplicate_key", key=key)
            seen.add(key)
    return data


class _DuplicateKey(Exception):
    """A YAML mapping's key given twice, and the line (from 0) of its second use."""

    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key = key
        self.line = line


def _safe_data(text: str) -> Any:
    """The one document of ``text`` as plain data, built by a subclass of PyYAML's
    ``SafeLoader`` (:func:`_unique_key_loader`), never a loader that constructs objects: what
    ``yaml.safe_load`` does, with that loader."""
    loader = _unique_key_loader()(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@lru_cache(maxsize=1)
def _unique_key_loader() -> type[SafeLoader]:
    """PyYAML's ``SafeLoader``, refusing a mapping that gives one key twice (the safe loader
    keeps the last). Keys merged in with ``<<`` are not counted: an explicit key overrides
    a merged one by design. Built on first use: nothing imports PyYAML at import time."""
    import yaml

    merge = "tag:yaml.org,2002:merge"

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: set[tuple[str, str]] = set()
            for key_node, _value in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != merge:
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        raise _DuplicateKey(key_node.value, key_node.start_mark.line)
                    seen.add(key)
            mapping: dict[Any, Any] = super().construct_mapping(node, deep)
            return mapping

    return UniqueKeyLoader


def _no_constant(name: str) -> object:
    """``NaN``, ``Infinity``: not JSON, refused (Python's json would take them)."""
    raise InvalidInput("not_json", reason=f"{name} is not a JSON number")


def _check_bracket_depth(text: str) -> None:
    """Refuse JSON text nested past :data:`MAX_DEPTH`, from its brackets outside strings,
    before a recursive parser sees it."""
    depth = 0
    for bracket in _BRACKET.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            raise InvalidInput("too_deep", depth=MAX_DEPTH)
