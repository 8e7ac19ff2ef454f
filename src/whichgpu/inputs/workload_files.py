"""A :class:`~whichgpu.inputs.requests.Workload` from a mapping, from a TOML or YAML workload file,
or from one component's flags; the cross-field rules of components and constraints. Field
rules (types, ranges, choices) are the request types' own (:mod:`whichgpu.inputs`); bad input
is one :class:`~whichgpu.errors.InvalidInput` naming the field, and for a file its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from whichgpu.errors import InvalidInput, Path, Ref, field_name
from whichgpu.inputs import check_keys, parse
from whichgpu.inputs.requests import IMAGE_KINDS, MAX_COMPONENTS, Component, Constraints, Workload
from whichgpu.job.length_presets import apply_lengths


def make_component(raw: Mapping[str, Any], path: Path = (), text: bool = False) -> Component:
    """A :class:`Component` from a mapping (a file's table, the CLI's flags with ``text``, a
    form, a JSON body), validated; ``arch`` may carry a model parsed by the caller."""
    raw = dict(raw)
    arch = raw.pop("arch", None)
    component: Component = parse(Component, raw, path, text, arch=arch)
    if arch is not None:
        if component.model is not None or component.params is not None:
            raise InvalidInput("model_file_and_preset", field=(*path, "model"))
        component = replace(component, model=arch.id or arch.name)
    elif component.uses_model and (component.model is None) == (component.params is None):
        raise InvalidInput("model_or_size", field=(*path, "model"))
    if component.request_rate is not None and component.kind != "inference":
        raise InvalidInput("rate_for_inference", field=(*path, "request_rate"))
    # the KV cache's default ("auto", what a form's select sends) asks nothing of any kind
    check_applies(component.kind, {**raw, "kv_dtype": None} if component.kv_dtype == "auto"
                  else raw, path)  # fmt: skip
    if component.lengths is not None:  # a dataset's means set the lengths
        prompt, generate = apply_lengths(component.lengths, component.prompt,
                                         component.generate, path)  # fmt: skip
        component = replace(component, prompt=prompt, generate=generate)
    if component.kind in IMAGE_KINDS:
        check_image_model(component.model, component.params, path)
    elif not component.uses_model and (component.model or component.params) and arch is None:
        raise InvalidInput("takes_no_model", field=(*path, "model"), kind=component.kind)
    sizes = [
        k for k in ("tokens", "images", "frames", "tflop") if getattr(component, k) is not None
    ]
    if component.hours is not None and sizes:
        raise InvalidInput("size_or_hours", field=(*path, "hours"), size=Ref((*path, sizes[0])))
    if component.kind == "render" and component.frames is None and component.hours is None:
        raise InvalidInput("render_frames", field=(*path, "frames"))
    if component.kind == "fp64" and component.tflop is None and component.hours is None:
        raise InvalidInput("fp64_tflop", field=(*path, "tflop"))
    return component


def check_image_model(model: str | None, params: str | None, path: Path = ()) -> None:
    """Image generation names one of the pipeline presets (``whichgpu models``)."""
    if params is not None:
        raise InvalidInput(
            "image_needs_pipeline", field=(*path, "params"), listing=Ref(("@models",))
        )
    if model is None:
        raise InvalidInput(
            "image_needs_pipeline", field=(*path, "model"), listing=Ref(("@models",))
        )
    from whichgpu.models.pipelines import find_pipeline

    find_pipeline(model)


def make_constraints(raw: Mapping[str, Any], path: Path = (), text: bool = False) -> Constraints:
    constraints: Constraints = parse(Constraints, raw, path, text)
    if not constraints.markets and constraints.mode == "rent":
        raise InvalidInput("no_market", field=(*path, "markets"))
    if constraints.mode != "buy" and raw.get("electricity_usd_per_kwh") is not None:
        raise InvalidInput("buy_only", field=(*path, "electricity_usd_per_kwh"))
    return constraints


#: The size and shape fields each kind of work reads (a field given to a kind that does not
#: read it would be ignored: it is refused instead).
APPLIES: dict[str, frozenset[str]] = {
    "render": frozenset({"frames", "samples_per_frame", "scene_gib"}),
    "fp64": frozenset({"tflop"}),
    "image": frozenset({"images", "resolution", "steps", "cpu_offload", "vae_tiling"}),
    "image-lora": frozenset(
        {"images", "epochs", "resolution", "cache_latents", "lora_rank", "lora_targets"}
    ),
    "image-finetune": frozenset({"images", "epochs", "resolution", "cache_latents"}),
    "inference": frozenset(
        {
            "tokens",
            "images",
            "prompt",
            "generate",
            "shared_prefix",
            "speculative",
            "layout",
            "draft_tokens",
            "acceptance",
            "lengths",
            "kv_dtype",
            "seq",
            "engine",
            "request_rate",
            "ttft",
            "tpot",
        }
    ),
    "train": frozenset({"tokens", "images", "epochs", "seq", "memory_format"}),
    "finetune": frozenset({"tokens", "images", "epochs", "seq", "packing", "memory_format"}),
    **{
        kind: frozenset(
            {
                "tokens",
                "images",
                "epochs",
                "seq",
                "lora_rank",
                "lora_targets",
                "packing",
                "memory_format",
            }
        )
        for kind in ("lora", "qlora")
    },
}
CHECKED = ("tokens", "images", "epochs", "frames", "samples_per_frame", "scene_gib", "tflop",
           "prompt", "generate", "shared_prefix", "speculative", "layout", "draft_tokens",
           "acceptance",
           "lengths", "kv_dtype", "seq", "resolution",
           "steps", "cpu_offload", "vae_tiling", "cache_latents", "engine", "request_rate",
           "ttft", "tpot", "lora_rank", "lora_targets", "packing",
           "memory_format")  # fmt: skip


def check_applies(
    kind: str, raw: Mapping[str, Any], path: Path = (), among: Sequence[str] = CHECKED
) -> None:
    """A field given for a kind of work that does not read it (``frames`` for a LoRA job,
    ``prompt`` for training) is one line naming what that kind takes of ``among`` (the
    fields the request has)."""
    allowed = APPLIES.get(kind)
    if allowed is None:
        return
    for key in CHECKED:
        if raw.get(key) is not None and key not in allowed:
            names = [field_name((*path, k)) for k in among if k in allowed]
            if not names:
                raise InvalidInput("not_for_kind_at_all", field=(*path, key), kind=kind)
            valid = ", ".join(names)
            raise InvalidInput("not_for_kind", field=(*path, key), kind=kind, valid=valid)
    sizes = [k for k in ("tokens", "images") if k in allowed and k in among]
    if raw.get("epochs") is not None and sizes and all(raw.get(k) is None for k in sizes):
        either = " / ".join(field_name((*path, k)) for k in sizes)
        raise InvalidInput("epochs_without_size", field=(*path, "epochs"), sizes=either)


def make_workload(raw: Mapping[str, Any], beside: Sequence[str] = ()) -> Workload:
    """A :class:`Workload` from a parsed file or a JSON body: ``name``, ``constraints`` and
    ``components`` (one to :data:`~whichgpu.inputs.requests.MAX_COMPONENTS`). ``beside``:
    the other keys the caller took from the same table (an API body's ranking fields), named
    among the valid ones where a key is not."""
    check_keys(raw, ("name", "constraints", "components", *beside))
    items = raw.get("components")
    if not isinstance(items, list) or not items:
        raise InvalidInput("no_components", field=("components",))
    if len(items) > MAX_COMPONENTS:
        raise InvalidInput("too_many", field=("components",), n=MAX_COMPONENTS)
    components = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidInput("not_a_table", field=("components", i))
        components.append(make_component(item, ("components", i)))
    constraints_raw = raw.get("constraints", {})
    if not isinstance(constraints_raw, Mapping):
        raise InvalidInput("not_a_table", field=("constraints",))
    constraints = make_constraints(constraints_raw, ("constraints",))
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise InvalidInput("not_text", field=("name",), value=name)
    return Workload(tuple(components), constraints, name)


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


def load_table(path: Any) -> tuple[dict[str, Any], Any]:
    """A TOML or YAML file of tables, parsed as data (safe loaders only), and the locator of
    its keys' lines (for :func:`located`)."""
    from whichgpu.catalog.userdata import read_user_file

    raw, locate = _parse(read_user_file(path), str(path))
    return dict(raw), locate


def parse_workload_text(text: str, origin: str) -> Workload:
    """Parse a TOML (``.toml``) or YAML (``.yaml``/``.yml``) workload as data (safe loaders
    only) and validate it; an error names the file, the line and the field."""
    raw, locate = _parse(text, origin)
    with located(origin, locate):
        workload = make_workload(raw)
        from whichgpu.plan.jobs import prepare

        prepare(workload)  # what only the model can check (a global batch, an engine's formats)
        return workload


@contextmanager
def located(origin: str, locate: Any = None) -> Iterator[None]:
    """Errors raised inside name ``origin`` (a file) and the line of their field."""
    try:
        yield
    except InvalidInput as error:
        if error.origin is None:
            path = error.field or ()
            found: list[int | None] = (
                [locate(path[:n]) for n in range(len(path), 0, -1)] if locate else []
            )
            line = next((n for n in found if n), None)
            error.origin = f"{origin}:{line}" if line else origin
        raise


def _parse(text: str, origin: str) -> tuple[Mapping[str, Any], Any]:
    """A workload file's tables, parsed as data within the limits on data from outside
    (:mod:`whichgpu.untrusted`: depth, values counted through YAML aliases, digits), and
    the locator of its keys' lines."""
    from whichgpu.untrusted import load_toml, load_yaml

    if origin.endswith((".yaml", ".yml")):
        raw = load_yaml(text, origin)
        locate = _yaml_locator(text)
    else:
        raw = load_toml(text, origin)
        locate = _toml_locator(text)
    if not isinstance(raw, Mapping):
        problem = InvalidInput("not_a_workload")
        problem.origin = origin
        raise problem
    return raw, locate


def build_workload(
    file: Any | None, component: Mapping[str, Any], constraints: Mapping[str, Any]
) -> Workload:
    """A workload from a file, or from one component's flags (text, as typed); constraint
    flags given with a file override the file's."""
    given = {k: v for k, v in component.items() if v is not None}
    limits = {k: v for k, v in constraints.items() if v is not None}
    if file is None:
        if "kind" not in given:
            raise InvalidInput(
                "give_workload",
                task=Ref(("kind",)),
                model=Ref(("model",)),
                params=Ref(("params",)),
                file=Ref(("file",)),
            )
        return Workload((make_component(given, text=True),), make_constraints(limits, text=True))
    if given:
        raise InvalidInput(
            "file_and_flags",
            field=(next(iter(given)),),
            file=Ref(("file",)),
            flag=Ref((next(iter(given)),)),
        )
    from whichgpu.catalog.userdata import read_user_file

    workload = parse_workload_text(read_user_file(file), str(file))
    if limits:
        from dataclasses import asdict

        merged = {**asdict(workload.constraints), **limits}
        workload = replace(workload, constraints=make_constraints(merged, text=True))
    return workload
