"""The recommend page's form as a request: its fields (text, as typed) and an uploaded
config.json's text, validated by the request types' rules into a workload, as the CLI's
flags and the API's body are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from whichgpu.errors import InvalidInput
from whichgpu.i18n import _, fmt

if TYPE_CHECKING:
    from whichgpu.inputs.requests import Ranking, Workload


@dataclass(frozen=True)
class RecommendForm:
    """The recommend form's request, validated into a workload."""

    workload: Workload
    ranking: Ranking
    config_note: str | None = None


#: The recommend form's own fields, beside its request types': the task and deadline as the
#: CLI names them, the markets' "submitted" marker, the show-all switch, the language link
#: and the upload.
RECOMMEND_FORM_ONLY = ("task", "deadline", "submitted", "all", "lang", "config", "name")
#: Request fields the form names otherwise (``task``, ``deadline``): refused as typed.
RECOMMEND_FORM_RENAMED = ("kind", "deadline_h")


def recommend_form_keys() -> tuple[str, ...]:
    """Every field the recommend page reads: a query or form field outside them is refused
    (``budget=0.5`` is no budget), as the API refuses an unknown field."""
    from whichgpu.inputs import specs
    from whichgpu.inputs.requests import Component, Constraints, Ranking

    names = [s.name for cls in (Component, Constraints, Ranking) for s in specs(cls)]
    kept = [n for n in names if n not in RECOMMEND_FORM_RENAMED]
    return tuple(dict.fromkeys([*kept, *RECOMMEND_FORM_ONLY]))


def recommend_form(
    fields: Mapping[str, str],
    lists: Mapping[str, list[str]],
    config: str | None,
    config_name: str = "",
) -> RecommendForm:
    """A workload from the form's fields (text, as typed: the rules of the request types)
    and an uploaded config.json's text. The form names the task ``task`` and the deadline
    ``deadline``, as the CLI does."""
    from whichgpu.inputs import check_fields, check_keys, parse, take
    from whichgpu.inputs.requests import Component, Constraints, Ranking
    from whichgpu.inputs.requests import Workload as Work
    from whichgpu.inputs.workload_files import make_component, make_constraints

    check_keys(fields, recommend_form_keys())  # a field the form has not is refused
    typed = {name: value.strip() for name, value in fields.items() if value.strip()}
    component = take(Component, typed)
    component["kind"] = typed.get("task", "lora")
    component["checkpointing"] = "true" if fields.get("checkpointing") else None
    component["nvlink_bridge"] = "true" if fields.get("nvlink_bridge") else None
    component["packing"] = "true" if fields.get("packing") else None
    component["name"] = None
    note = None
    if config is not None:
        from whichgpu.models import arch_from_config_text

        _config_object(config)
        arch = arch_from_config_text(config, config_name or "config.json")
        component |= {"arch": arch, "model": None, "params": None}
        note = fmt(
            _("config.json: {name}, {params:.2f} B parameters."),
            name=arch.name,
            params=arch.total_params / 1e9,
        )
    elif component["params"]:
        component["model"] = None
    constraints = take(Constraints, typed)
    constraints["deadline_h"] = typed.get("deadline")
    for name in ("markets", "requires"):
        values = [v for v in lists.get(name, []) if v.strip()]
        constraints[name] = ",".join(values) if values else None
    ranking_raw = take(Ranking, typed)
    # every field the rules refuse, shown at once (then the checks across fields)
    check_fields((Component, component), (Constraints, constraints), (Ranking, ranking_raw),
                 text=True)  # fmt: skip
    ranking: Ranking = parse(Ranking, ranking_raw, text=True)
    workload = Work(
        (make_component(component, text=True),),
        make_constraints(constraints, text=True),
        typed.get("name", ""),
    )
    return RecommendForm(workload, ranking, note)


def _config_object(text: str) -> Any:
    """A config given in a request, with the CLI's limits (size, depth, no NaN)."""
    from whichgpu.models import load_config_json

    try:
        return load_config_json(text)
    except InvalidInput as error:
        raise InvalidInput(error.code, field=("config",), **error.params) from None
