"""What the user asks ``recommend``: one or more components (a training run, a serving
fleet, a render job…) and the constraints on the whole (budget, deadline, GPUs, markets,
capabilities). Built from CLI flags or from a TOML/YAML workload file; bad input is one
:class:`~whichgpu.errors.InvalidInput` naming the file, line and field.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from whichgpu.errors import InvalidInput
from whichgpu.i18n import _, fmt
from whichgpu.models.arch import ModelArch

Kind = Literal["train", "finetune", "lora", "qlora", "inference", "render", "fp64"]
Objective = Literal["cost", "time", "value"]
Mode = Literal["rent", "buy"]
Capability = Literal["rt", "display", "ecc", "fp64", "nvlink", "mig"]

KINDS: tuple[str, ...] = get_args(Kind)
OBJECTIVES: tuple[str, ...] = get_args(Objective)
MODES: tuple[str, ...] = get_args(Mode)
CAPABILITIES: tuple[str, ...] = get_args(Capability)
MARKETS: tuple[str, ...] = ("on-demand", "spot", "marketplace", "serverless")
DEFAULT_MARKETS: tuple[str, ...] = ("on-demand", "marketplace")

#: Samples a rendered frame takes when the user does not say: Blender's benchmark scenes
#: render at this order (its score is samples per minute over those scenes).
DEFAULT_SAMPLES_PER_FRAME = 1024


@dataclass(frozen=True)
class Component:
    """One piece of the workload. Job size: ``tokens`` (train on, or generate), ``images`` ×
    ``epochs``, ``frames`` (render), ``tflop`` (FP64 work) or ``hours`` of use (serving at
    ``request_rate`` requests/s, or interactive work)."""

    kind: Kind
    name: str = ""
    model: str | None = None
    params: str | None = None
    precision: str = "bf16-mixed"
    quant: str | None = None
    batch: int = 1
    seq: int = 2048
    prompt: int = 512
    generate: int = 256
    checkpointing: bool = False
    tokens: float | None = None
    images: float | None = None
    epochs: float = 1.0
    frames: float | None = None
    samples_per_frame: int = DEFAULT_SAMPLES_PER_FRAME
    tflop: float | None = None
    hours: float | None = None
    request_rate: float | None = None
    services: int = 1
    #: A model parsed by the caller (a config.json), in place of ``model``/``params``.
    arch: ModelArch | None = field(default=None, compare=False, repr=False)

    @property
    def training(self) -> bool:
        return self.kind in ("train", "finetune", "lora", "qlora")

    @property
    def uses_model(self) -> bool:
        return self.kind not in ("render", "fp64")

    @property
    def label(self) -> str:
        return self.name or (f"{self.kind} {self.model or self.params or ''}".strip())


@dataclass(frozen=True)
class Constraints:
    budget_usd: float | None = None
    budget_usd_per_h: float | None = None
    deadline_h: float | None = None
    max_gpus: int = 8
    mode: Mode = "rent"
    markets: tuple[str, ...] = DEFAULT_MARKETS
    requires: tuple[Capability, ...] = ()
    electricity_usd_per_kwh: float | None = None
    hours_per_month: float = 730.0
    amortize_months: float = 36.0


@dataclass(frozen=True)
class Workload:
    components: tuple[Component, ...]
    constraints: Constraints = field(default_factory=Constraints)
    name: str = ""


# -- validation ---------------------------------------------------------------------------

_NUMBER_FIELDS = {
    "tokens": (1.0, 1e18),
    "images": (1.0, 1e15),
    "epochs": (1e-3, 1e6),
    "frames": (1.0, 1e9),
    "tflop": (1e-6, 1e15),
    "hours": (1e-3, 1e6),
    "request_rate": (1e-6, 1e6),
    "budget_usd": (1e-2, 1e10),
    "budget_usd_per_h": (1e-3, 1e6),
    "deadline_h": (1e-3, 1e7),
    "electricity_usd_per_kwh": (0.0, 10.0),
    "hours_per_month": (1.0, 744.0),
    "amortize_months": (1.0, 240.0),
}
_INT_FIELDS = {
    "batch": (1, 1_000_000),
    "seq": (1, 10_000_000),
    "prompt": (0, 10_000_000),
    "generate": (0, 10_000_000),
    "samples_per_frame": (1, 1_000_000),
    "services": (1, 10_000),
    "max_gpus": (1, 1024),
}
_COMPONENT_KEYS = tuple(k for k in Component.__dataclass_fields__ if k != "arch")
_CONSTRAINT_KEYS = tuple(Constraints.__dataclass_fields__)


#: Fields whose command-line flag is not the field's name.
FLAGS = {
    "kind": "task",
    "budget_usd": "budget",
    "budget_usd_per_h": "budget-per-h",
    "deadline_h": "deadline",
    "markets": "market",
    "electricity_usd_per_kwh": "electricity",
}


class Where:
    """Where a value came from, for error messages: a file and a key path, or a flag."""

    def __init__(self, origin: str = "", locate: Any = None) -> None:
        self.origin = origin
        self._locate = locate

    def at(self, *path: str | int) -> str:
        """``file:line: field a.b`` (or the flag name for CLI input)."""
        dotted = ".".join(str(p) for p in path)
        if not self.origin:
            key = str(path[-1])
            return "--" + FLAGS.get(key, key.replace("_", "-"))
        line = self._locate(path) if self._locate else None
        return f"{self.origin}:{line}: {dotted}" if line else f"{self.origin}: {dotted}"


def _bad(where: Where, path: tuple[str | int, ...], message: str) -> InvalidInput:
    return InvalidInput(f"{where.at(*path)}: {message}")


def _closest(key: str, valid: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, valid, n=1)
    return fmt(_(" (did you mean {match}?)"), match=close[0]) if close else ""


def _number(value: object, key: str, where: Where, path: tuple[str | int, ...]) -> float:
    low, high = _NUMBER_FIELDS[key]
    if isinstance(value, str):
        from whichgpu.units import parse_count

        with contextlib.suppress(ValueError):
            value = parse_count(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise _bad(
            where,
            path,
            fmt(
                _("must be a number from {low:g} to {high:g} (got {value!r})"),
                low=low,
                high=high,
                value=value,
            ),
        )
    return float(value)


def _integer(value: object, key: str, where: Where, path: tuple[str | int, ...]) -> int:
    low, high = _INT_FIELDS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(
            where,
            path,
            fmt(
                _("must be a whole number from {low} to {high:,} (got {value!r})"),
                low=low,
                high=high,
                value=value,
            ),
        )
    return value


def _bool(value: object, where: Where, path: tuple[str | int, ...]) -> bool:
    if not isinstance(value, bool):
        raise _bad(where, path, fmt(_("must be true or false (got {value!r})"), value=value))
    return value


def _choice(
    value: object, valid: tuple[str, ...], where: Where, path: tuple[str | int, ...]
) -> str:
    key = str(value).strip().lower()
    if key not in valid:
        raise _bad(
            where,
            path,
            fmt(
                _("unknown value {value!r}; valid: {valid}{hint}"),
                value=value,
                valid=", ".join(valid),
                hint=_closest(key, valid),
            ),
        )
    return key


def parse_names(
    value: object, valid: tuple[str, ...], where: Where, path: tuple[str | int, ...]
) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise _bad(where, path, fmt(_("must be a list of: {valid}"), valid=", ".join(valid)))
    return tuple(dict.fromkeys(_choice(v, valid, where, path) for v in items if str(v).strip()))


def _check_keys(
    raw: Mapping[str, Any], valid: tuple[str, ...], where: Where, *path: str | int
) -> None:
    for key in raw:
        if key not in valid:
            raise _bad(
                where,
                (*path, key),
                fmt(
                    _("unknown field; valid: {valid}{hint}"),
                    valid=", ".join(valid),
                    hint=_closest(str(key), valid),
                ),
            )


def make_component(
    raw: Mapping[str, Any],
    where: Where | None = None,
    index: int = 0,
    prefix: tuple[str | int, ...] = (),
) -> Component:
    """A :class:`Component` from a mapping (a file's table or the CLI's flags), validated."""
    where = where or Where()
    path = (*prefix, index) if prefix else ()
    raw = dict(raw)
    arch = raw.pop("arch", None)
    _check_keys(raw, _COMPONENT_KEYS, where, *path)
    if "kind" not in raw:
        raise _bad(
            where, (*path, "kind"), fmt(_("missing; one of: {valid}"), valid=", ".join(KINDS))
        )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        at = (*path, key)
        if key == "kind":
            values[key] = _choice(value, KINDS, where, at)
        elif key in _NUMBER_FIELDS:
            values[key] = _number(value, key, where, at)
        elif key in _INT_FIELDS:
            values[key] = _integer(value, key, where, at)
        elif key == "checkpointing":
            values[key] = _bool(value, where, at)
        else:
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise _bad(where, at, fmt(_("must be text (got {value!r})"), value=value))
            values[key] = str(value)
    component = Component(**values, arch=arch)
    if arch is not None:
        if component.model is not None or component.params is not None:
            raise _bad(where, (*path, "model"), _("give a model file or a preset, not both"))
        component = replace(component, model=arch.id or arch.name)
    elif component.uses_model and (component.model is None) == (component.params is None):
        raise _bad(where, (*path, "model"), _('give a model preset or a size (params = "7B")'))
    if component.request_rate is not None and component.kind != "inference":
        raise _bad(where, (*path, "request_rate"), _("a request rate is for inference"))
    if not component.uses_model and (component.model or component.params) and arch is None:
        raise _bad(
            where,
            (*path, "model"),
            fmt(_("a {kind} component takes no model"), kind=component.kind),
        )
    sizes = [
        k for k in ("tokens", "images", "frames", "tflop") if getattr(component, k) is not None
    ]
    if component.hours is not None and sizes:
        raise _bad(
            where,
            (*path, "hours"),
            fmt(_("give a job size ({size}) or hours of use, not both"), size=sizes[0]),
        )
    if component.kind == "render" and component.frames is None and component.hours is None:
        raise _bad(where, (*path, "frames"), _("a render component needs frames (or hours)"))
    if component.kind == "fp64" and component.tflop is None and component.hours is None:
        raise _bad(where, (*path, "tflop"), _("an fp64 component needs tflop of work (or hours)"))
    return component


def make_constraints(
    raw: Mapping[str, Any], where: Where | None = None, prefix: tuple[str | int, ...] = ()
) -> Constraints:
    where = where or Where()
    _check_keys(raw, _CONSTRAINT_KEYS, where, *prefix)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        at = (*prefix, key)
        if key in _NUMBER_FIELDS:
            values[key] = _number(value, key, where, at)
        elif key in _INT_FIELDS:
            values[key] = _integer(value, key, where, at)
        elif key == "mode":
            values[key] = _choice(value, MODES, where, at)
        elif key == "markets":
            values[key] = parse_names(value, MARKETS, where, at)
        elif key == "requires":
            values[key] = parse_names(value, CAPABILITIES, where, at)
    constraints = Constraints(**values)
    if not constraints.markets and constraints.mode == "rent":
        raise _bad(where, (*prefix, "markets"), _("name at least one market"))
    return constraints


def make_workload(raw: Mapping[str, Any], where: Where | None = None) -> Workload:
    """A :class:`Workload` from a parsed file: ``name``, ``[constraints]`` and
    ``[[components]]`` tables."""
    where = where or Where("workload")
    _check_keys(raw, ("name", "constraints", "components"), where)
    items = raw.get("components")
    if not isinstance(items, list) or not items:
        raise _bad(where, ("components",), _("give at least one [[components]] table"))
    components = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise _bad(where, ("components", i), _("must be a table of fields"))
        components.append(make_component(item, where, i, ("components",)))
    constraints_raw = raw.get("constraints", {})
    if not isinstance(constraints_raw, Mapping):
        raise _bad(where, ("constraints",), _("must be a table of fields"))
    constraints = make_constraints(constraints_raw, where, ("constraints",))
    return Workload(tuple(components), constraints, str(raw.get("name", "")))


# -- files ---------------------------------------------------------------------------------


def _toml_locator(text: str) -> Any:
    """Line of a key path in a TOML file: the path's tables (``[[components]]`` counted) and
    then the key, found by scanning headers and ``key =`` lines."""
    lines = text.splitlines()

    def locate(path: tuple[str | int, ...]) -> int | None:
        section: list[str | int] = []
        counts: dict[str, int] = {}
        want_table = tuple(p for p in path[:-1])
        key = str(path[-1])
        for number, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith("[["):
                name = stripped.strip("[] ")
                counts[name] = counts.get(name, -1) + 1
                section = [name, counts[name]]
                if tuple(section) == tuple(path):
                    return number
                continue
            if stripped.startswith("["):
                section = [stripped.strip("[] ")]
                if tuple(section) == tuple(path):
                    return number
                continue
            if tuple(section) == want_table and stripped.split("=")[0].strip() == key:
                return number
        return None

    return locate


def _yaml_locator(text: str) -> Any:
    import yaml

    root = yaml.compose(text, Loader=yaml.SafeLoader)

    def locate(path: tuple[str | int, ...]) -> int | None:
        node = root
        for part in path:
            if isinstance(node, yaml.MappingNode):
                found = [(k, v) for k, v in node.value if k.value == part]
                if not found:
                    return int(node.start_mark.line) + 1
                key_node, node = found[0]
                if part == path[-1]:
                    return int(key_node.start_mark.line) + 1
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    return int(node.start_mark.line) + 1
                node = node.value[part]
            else:
                break
        return int(node.start_mark.line) + 1 if node is not None else None

    return locate


def load_table_file(path: Any) -> dict[str, Any]:
    """A TOML or YAML file of tables, parsed as data (safe loaders only)."""
    from whichgpu.userdata import read_user_file

    raw, _locate = _parse(read_user_file(path), str(path))
    return dict(raw)


def parse_workload_text(text: str, origin: str) -> Workload:
    """Parse a TOML (``.toml``) or YAML (``.yaml``/``.yml``) workload as data (safe loaders
    only) and validate it."""
    raw, locate = _parse(text, origin)
    return make_workload(raw, Where(origin, locate))


def _parse(text: str, origin: str) -> tuple[Mapping[str, Any], Any]:
    if origin.endswith((".yaml", ".yml")):
        import yaml

        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            problem = getattr(error, "problem", None) or str(error)
            raise InvalidInput(f"{origin}{line}: {_('not valid YAML')}: {problem}") from None
        locate = _yaml_locator(text)
    else:
        import tomllib

        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise InvalidInput(f"{origin}: {_('not valid TOML')}: {error}") from None
        locate = _toml_locator(text)
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{origin}: {_('a workload file is a table of fields')}")
    return raw, locate
