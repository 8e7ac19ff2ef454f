"""The fields a user gives, declared once on the request types, and parsed the same way
from every door: CLI flags, workload files, the web form and the JSON API.

A request type is a frozen dataclass whose fields carry an :class:`Input` in their metadata
(:func:`given`): its kind (whole number, number, size, duration, choice…), its range or
choices, its help text and its CLI flag. From that one declaration:

* :func:`parse` validates a mapping into the dataclass (unknown fields, types, ranges,
  choices), raising :class:`~whichgpu.errors.InvalidInput` with a code and the field's path;
* :func:`json_schema` describes it for the OpenAPI document;
* :mod:`whichgpu.cli.options` builds the command's options from it.

Values from text (flags, form fields) are parsed from strings; values from data (TOML, YAML,
JSON) must have the right JSON type, except sizes (``"2B"``) and durations (``"48h"``), which
are written as text everywhere. Booleans are never numbers, and numbers are always finite.
Pure: no I/O, nothing heavy imported.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from whichgpu.errors import InvalidInput, Path

Kind = Literal[
    "int", "number", "size", "duration", "latency", "bool", "choice", "names", "list", "text"
]


@dataclass(frozen=True)
class Input:
    """How one request field is given: its kind, range or choices, help and CLI flag."""

    kind: Kind
    help: str  # a message id (N_): translated where it is shown
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    #: The CLI's long flag, when it is not the field's name with dashes.
    flag: str = ""
    short: str = ""
    max_length: int = 200
    #: False for fields only the library's callers set (a parsed config.json).
    public: bool = True


def given(default: Any, spec: Input) -> Any:
    """A dataclass field carrying its :class:`Input` (``batch: int = given(1, BATCH)``);
    ``dataclasses.MISSING`` for a required field."""
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={"input": spec})
    return dataclasses.field(default=default, metadata={"input": spec})


@dataclass(frozen=True)
class Spec:
    """One field of a request type: its name, default, and :class:`Input`."""

    name: str
    default: Any
    input: Input
    required: bool

    @property
    def flag(self) -> str:
        return "--" + (self.input.flag or self.name.replace("_", "-"))


@cache
def specs(cls: type) -> tuple[Spec, ...]:
    """The public fields of request type ``cls``, in declaration order (read once a type)."""
    out = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("input")
        if spec is None or not spec.public:
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = None if f.default is dataclasses.MISSING else f.default
        out.append(Spec(f.name, default, spec, required))
    return tuple(out)


def take(cls: type, values: MutableMapping[str, Any], remove: bool = False) -> dict[str, Any]:
    """The fields of request type ``cls`` among ``values`` (None where not given), taken out
    of ``values`` with ``remove``."""
    names = [s.name for s in specs(cls)]
    if remove:
        return {n: values.pop(n, None) for n in names}
    return {n: values.get(n) for n in names}


def flag_names(*classes: type) -> dict[str, str]:
    """Field name → CLI flag for the request types (for naming fields in CLI errors)."""
    return {s.name: s.flag for cls in classes for s in specs(cls)}


# -- parsing -------------------------------------------------------------------------------


def _closest(key: str, valid: Sequence[str]) -> str | None:
    """:func:`whichgpu.catalog.names.closest`, imported when a name is wrong (the catalog
    package is not loaded for a request that is right)."""
    from whichgpu.catalog.names import closest

    return closest(key, valid)


def check_keys(raw: Mapping[str, Any], valid: Sequence[str], path: Path = ()) -> None:
    for key in raw:
        if key not in valid:
            raise InvalidInput(
                "unknown_field",
                field=(*path, str(key)),
                valid=", ".join(valid),
                hint=_closest(str(key), valid) or "",
            )


def _bare_in_range(value: object, spec: Input, path: Path) -> None:
    """A bare number that no unit could make valid (negative, zero where the range starts
    above it, not finite) is refused for what it is, not asked for a unit that would not
    help (``-1`` suggested ``-1ms``, then refused)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return
    _finite(number, path, value)
    if number < 0 or (number == 0 and (spec.low or 0) > 0):
        raise InvalidInput("not_positive", field=path, value=value)


def _finite(number: float, path: Path, value: object) -> float:
    if not math.isfinite(number):
        raise InvalidInput("not_finite", field=path, value=value)
    return number


def _in_range(number: float, spec: Input, path: Path, value: object) -> None:
    low = -math.inf if spec.low is None else spec.low
    high = math.inf if spec.high is None else spec.high
    if not low <= number <= high:
        if high == math.inf:
            raise InvalidInput("at_least", field=path, low=low, value=value)
        if spec.kind == "int":
            raise InvalidInput(
                "out_of_range_int", field=path, low=int(low), high=int(high), value=value
            )
        raise InvalidInput("out_of_range", field=path, low=low, high=high, value=value)


def value_of(spec: Input, value: object, path: Path, text: bool = False) -> Any:
    """``value`` checked against ``spec``; ``text``: it comes from a flag or a form field."""
    from whichgpu.units import parse_count, parse_duration_h, parse_latency_s

    kind = spec.kind
    if kind in ("int", "number", "size", "duration", "latency") and isinstance(value, bool):
        raise InvalidInput(
            "not_a_number" if kind != "int" else "not_whole", field=path, value=value
        )
    if kind == "int":
        if isinstance(value, str) and text:
            try:
                value = int(value.strip())
            except ValueError:
                raise InvalidInput("not_whole", field=path, value=value) from None
        if not isinstance(value, int):
            raise InvalidInput("not_whole", field=path, value=value)
        _in_range(value, spec, path, value)
        return value
    if kind in ("number", "size", "duration", "latency"):
        number: float
        if (
            kind in ("duration", "latency")
            and _bare_number(value, text)
            and not (_unit_named(spec, path, text))
        ):  # 30 what? a unit the field's name does not give is never guessed
            _bare_in_range(value, spec, path)  # -1 or nan: no unit would make it one
            example = f"{value}ms or {value}s" if kind == "latency" else f"{value}h or {value}d"
            raise InvalidInput("unit_required", field=path, value=value, example=example)
        if isinstance(value, str):
            parser = {
                "size": parse_count,
                "duration": parse_duration_h,
                "latency": parse_latency_s,
            }.get(kind)
            try:
                if text or parser is not None:
                    try:  # a plain number, signed or not (then the range says what is wrong)
                        number = float(value.strip())
                    except ValueError:
                        if parser is None:
                            raise
                        number = parser(value)
                else:
                    raise ValueError(value)
            except (ValueError, OverflowError):
                code = {
                    "size": "not_a_size",
                    "duration": "not_a_duration",
                    "latency": "not_a_latency",
                }.get(kind)
                raise InvalidInput(code or "not_a_number", field=path, value=value) from None
        elif isinstance(value, int | float):
            try:
                number = float(value)
            except OverflowError:
                raise InvalidInput("not_finite", field=path, value=value) from None
        else:
            raise InvalidInput("not_a_number", field=path, value=value)
        _finite(number, path, value)
        _in_range(number, spec, path, value)
        return number
    if kind == "bool":
        if isinstance(value, str) and text:
            word = value.strip().lower()
            if word in ("true", "yes", "on", "1"):
                return True
            if word in ("false", "no", "off", "0"):
                return False
        if not isinstance(value, bool):
            raise InvalidInput("not_bool", field=path, value=value)
        return value
    if kind == "choice":
        return choice(value, spec.choices, path)
    if kind in ("names", "list"):
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise InvalidInput("not_a_list", field=path, valid=", ".join(spec.choices))
        if len(items) > (spec.high or 64):
            raise InvalidInput("too_many", field=path, n=int(spec.high or 64))
        kept = [(i, v) for i, v in enumerate(items) if not (isinstance(v, str) and not v.strip())]
        if kind == "list":
            return tuple(
                value_of(Input("text", spec.help, max_length=spec.max_length), v, (*path, i), text)
                for i, v in kept
            )
        return tuple(dict.fromkeys(choice(v, spec.choices, (*path, i)) for i, v in kept))
    # text: a string (a number written bare in a file, such as params = 7e9, reads as text)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidInput("not_text", field=path, value=value)
    written = value if isinstance(value, str) else repr(value)
    if len(written) > spec.max_length:
        raise InvalidInput("too_long", field=path, n=spec.max_length)
    return written.strip()


def _bare_number(value: object, text: bool) -> bool:
    """A number given without a unit: a JSON or TOML number, or text that is only digits."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        try:
            float(value.strip())
        except ValueError:
            return False
        return True
    return False


def _unit_named(spec: Input, path: Path, text: bool) -> bool:
    """Whether the field's name, as the user wrote it, says the unit: the key of a file or a
    body (``deadline_h``, ``hours``), the flag or form field of typed text (``--hours``;
    ``--deadline``, ``ttft`` and ``tpot`` do not)."""
    name = str(path[-1]) if path and isinstance(path[-1], str) else ""
    written = (spec.flag or name).replace("-", "_") if text else name
    return written == "hours" or written.endswith(("_h", "_s", "_ms"))


#: Words people use for a choice whichgpu names otherwise: suggested (never taken) where
#: the word is not valid itself (``--task serve``: "did you mean inference?")
SYNONYMS = {
    "serve": "inference", "serving": "inference", "infer": "inference", "chat": "inference",
    "generate": "inference", "pretrain": "train", "pretraining": "train", "training": "train",
    "sft": "finetune", "fine-tune": "finetune", "finetuning": "finetune",
    "fine-tuning": "finetune", "peft": "lora", "rendering": "render", "diffusion": "image",
}  # fmt: skip


def choice(value: object, valid: Sequence[str], path: Path) -> str:
    """One of ``valid`` (case and surrounding spaces ignored); a word of :data:`SYNONYMS`
    gets its choice suggested."""
    if not isinstance(value, str):
        raise InvalidInput(
            "unknown_value", field=path, value=value, valid=", ".join(valid), hint=""
        )
    key = value.strip().lower()
    if key not in valid:
        raise InvalidInput(
            "unknown_value",
            field=path,
            value=value,
            valid=", ".join(valid),
            hint=(SYNONYMS.get(key) if SYNONYMS.get(key) in valid else None)
            or _closest(key, valid)
            or "",
        )
    return key


def parse(
    cls: type, raw: Mapping[str, Any], path: Path = (), text: bool = False, **extra: Any
) -> Any:
    """An instance of request type ``cls`` from ``raw`` (None values are "not given");
    ``extra`` are fields the caller sets itself (not user input)."""
    fields = specs(cls)
    check_keys(raw, [s.name for s in fields], path)
    values: dict[str, Any] = {}
    for spec in fields:
        value = raw.get(spec.name)
        if value is None:
            if spec.required:
                raise InvalidInput(
                    "missing_field", field=(*path, spec.name), valid=", ".join(spec.input.choices)
                )
            continue
        values[spec.name] = value_of(spec.input, value, (*path, spec.name), text)
    return cls(**values, **extra)


def field_errors(
    cls: type, raw: Mapping[str, Any], path: Path = (), text: bool = False
) -> list[Any]:
    """Every field of ``raw`` whose value ``cls``'s rules refuse, each its
    :class:`~whichgpu.errors.InvalidInput` (:func:`parse` stops at the first; a form shows
    them all at once)."""
    out = []
    for spec in specs(cls):
        value = raw.get(spec.name)
        if value is None:
            continue
        try:
            value_of(spec.input, value, (*path, spec.name), text)
        except InvalidInput as error:
            out.append(error)
    return out


def check_fields(*parts: tuple[type, Mapping[str, Any]], text: bool = False) -> None:
    """Refuse at once every field of several requests' ``(cls, raw)`` that its rules refuse
    (:class:`~whichgpu.errors.InvalidInputs` when more than one is)."""
    from whichgpu.errors import InvalidInputs

    errors = [error for cls, raw in parts for error in field_errors(cls, raw, text=text)]
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InvalidInputs(errors)


# -- JSON Schema ---------------------------------------------------------------------------

_SIZE_PATTERN = r"^\s*[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?\s*[kmbgtKMBGT]?\s*$"
_DURATION_PATTERN = r"^\s*[0-9]*\.?[0-9]+\s*(min|m|h|d|w|MIN|M|H|D|W)?\s*$"
_LATENCY_PATTERN = r"^\s*[0-9]*\.?[0-9]+\s*(ms|s|min|MS|S|MIN)\s*$"


def field_schema(spec: Spec, english: bool = True) -> dict[str, Any]:
    """The JSON Schema of one field (help in English: the OpenAPI document's language)."""
    i = spec.input
    bounds: dict[str, Any] = {}
    if i.low is not None:
        bounds["minimum"] = i.low
    if i.high is not None:
        bounds["maximum"] = i.high
    schema: dict[str, Any]
    if i.kind == "int":
        schema = {"type": "integer", **bounds}
    elif i.kind == "number":
        schema = {"type": "number", **bounds}
    elif i.kind == "size":
        schema = {
            "anyOf": [
                {"type": "number", **bounds},
                {"type": "string", "pattern": _SIZE_PATTERN, "maxLength": 40},
            ]
        }
    elif i.kind == "latency":  # a unit always: no latency field's name gives one
        schema = {"type": "string", "pattern": _LATENCY_PATTERN, "maxLength": 40}
    elif i.kind == "duration":
        schema = {
            "anyOf": [
                {"type": "number", **bounds},
                {"type": "string", "pattern": _DURATION_PATTERN, "maxLength": 40},
            ]
        }
    elif i.kind == "bool":
        schema = {"type": "boolean"}
    elif i.kind == "choice":
        schema = {"type": "string", "enum": list(i.choices)}
    elif i.kind == "names":
        schema = {
            "type": "array",
            "items": {"type": "string", "enum": list(i.choices)},
            "maxItems": len(i.choices),
        }
    elif i.kind == "list":
        schema = {
            "type": "array",
            "items": {"type": "string", "maxLength": i.max_length},
            "maxItems": int(i.high or 64),
        }
    else:
        schema = {"type": "string", "maxLength": i.max_length}
    schema["description"] = i.help
    if spec.default is not None and spec.default != ():
        schema["default"] = list(spec.default) if isinstance(spec.default, tuple) else spec.default
    return schema


def json_schema(cls: type, title: str | None = None) -> dict[str, Any]:
    """The JSON Schema of request type ``cls`` (unknown fields are refused)."""
    fields = specs(cls)
    return {
        "type": "object",
        "title": title or cls.__name__,
        "description": (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " "),
        "properties": {s.name: field_schema(s) for s in fields},
        "required": [s.name for s in fields if s.required],
        "additionalProperties": False,
    }
