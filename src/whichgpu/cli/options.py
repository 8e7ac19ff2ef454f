"""Command options built from the request types (:mod:`whichgpu.inputs.requests`): each field's
flag, help and default come from its declaration, so a field added there is a flag here.

Every generated option is read as the text the user typed (``--batch 4``, ``--tokens 2B``,
``--deadline 48h``) and parsed by the library, exactly as a form field or a file's value is;
a flag left out is ``None`` (not given), a boolean flag ``True`` or ``None``, a repeatable
list flag (``--market spot --market on-demand`` or ``--market spot,on-demand``) the joined
text.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

from whichgpu.errors import action_of
from whichgpu.i18n import N_, _
from whichgpu.inputs import Spec, flag_names, specs

#: The help's headings, in the order a reader needs them, and the fields under each (Typer's
#: ``rich_help_panel``): what every question needs first, what it is held to, then the
#: knobs an expert turns. A field not listed goes under :data:`OTHER_PANEL`.
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (N_("The job"), ("kind", "model", "params", "tokens", "images", "epochs", "hours",
                     "request_rate", "frames", "samples_per_frame", "tflop", "services")),
    (N_("Its shape"), ("seq", "batch", "prompt", "generate", "lengths", "resolution",
                       "steps")),
    (N_("Limits and ranking"), ("budget_usd", "budget_usd_per_h", "deadline_h", "ttft",
                                "tpot", "percentile", "confidence", "max_gpus", "mode",
                                "markets", "requires", "objective", "catalog", "baseline")),
    (N_("Precision and recipe"), ("precision", "quant", "kv_dtype", "framework", "engine",
                                  "optimizer", "lora_rank", "lora_targets", "global_batch",
                                  "checkpointing")),
)  # fmt: skip
#: The heading of the expert knobs (layouts, kernels, offload, networks, buying)
OTHER_PANEL = N_("Expert settings")


def panel_of(name: str) -> tuple[int, str]:
    """A field's heading and its place among the headings (:data:`PANELS`)."""
    for place, (title, names) in enumerate(PANELS):
        if name in names:
            return place, title
    return len(PANELS), OTHER_PANEL


def option_parameter(spec: Spec) -> inspect.Parameter:
    """The Typer option of one request field, under its heading (:func:`panel_of`)."""
    i = spec.input
    panel = _(panel_of(spec.name)[1])
    names = [spec.flag] + ([i.short] if i.short else [])
    shown = spec.default
    if isinstance(shown, tuple):
        shown = ",".join(shown)
    help_text = _(i.help)
    if shown not in (None, "", False):
        help_text += f"  [default: {shown}]"
    annotation: Any
    if i.kind == "bool":  # --flag / --no-flag; neither: not given (the library chooses)
        flag = spec.flag
        option = typer.Option(
            f"{flag}/--no-{flag[2:]}", help=help_text, show_default=False, rich_help_panel=panel
        )
        annotation = Annotated[bool | None, option]
        return inspect.Parameter(
            spec.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
        )
    metavar = {
        "int": "N",
        "number": "X",
        "size": "N",
        "duration": "TIME",
        "latency": "SECONDS",
    }.get(i.kind)
    if i.kind in ("names", "list"):
        option = typer.Option(*names, help=help_text, show_default=False, rich_help_panel=panel)
        annotation = Annotated[list[str] | None, option]
    else:
        option = typer.Option(*names, help=help_text, show_default=False,
                              metavar=metavar or "TEXT", rich_help_panel=panel)  # fmt: skip
        annotation = Annotated[str | None, option]
    return inspect.Parameter(
        spec.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


def given_text(spec: Spec, value: Any) -> Any:
    """A flag's value as the library reads text: None when not given."""
    if spec.input.kind == "bool":
        return value  # True, False or None (not given)
    if isinstance(value, list):
        return ",".join(value) if value else None
    return value


def with_fields(
    *parts: type, skip: Sequence[str] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the options of request types ``parts`` (minus ``skip``): the
    command's first parameter, ``fields``, receives them as ``{name: text or None}``; its
    other parameters are its own options."""
    fields = [s for part in parts for s in specs(part) if s.name not in skip]
    by_name = {s.name: s for s in fields}  # a later part's field of the same name wins

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        own = list(inspect.signature(func, eval_str=True).parameters.values())[1:]
        taken = {p.name for p in own}
        chosen = [s for s in by_name.values() if s.name not in taken]
        chosen.sort(key=lambda s: panel_of(s.name)[0])  # what every question needs first
        generated = [option_parameter(s) for s in chosen]

        def command(**kwargs: Any) -> Any:
            values = {
                n: given_text(by_name[n], kwargs.pop(n))
                for n in list(kwargs)
                if n in by_name and n not in taken
            }
            return func(values, **kwargs)

        keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        command.__signature__ = inspect.Signature(generated + keyword)  # type: ignore[attr-defined]
        command.__name__ = func.__name__
        command.__doc__ = func.__doc__
        command.__module__ = func.__module__
        return command

    return wrap


def flag_namer(*parts: type) -> Callable[..., str]:
    """Name a field path by its CLI flag (``("deadline_h",)`` → ``--deadline``)."""
    flags = flag_names(*parts)

    def name(path: tuple[str | int, ...]) -> str:
        action = action_of(path)
        if action is not None:  # '@prices-update' → 'whichgpu prices update'
            return f"'whichgpu {action[1:].replace('-', ' ')}'"
        keys = [p for p in path if isinstance(p, str)]
        key = keys[-1] if keys else ".".join(str(p) for p in path)
        return flags.get(key, "--" + key.replace("_", "-"))

    return name
