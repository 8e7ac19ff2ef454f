"""``recommend``: ranked GPU choices for a workload, with cost per job, reasons and warnings."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whichgpu.recommender.engine import Option, Recommendation, recommend
from whichgpu.recommender.spec import (
    Component,
    Constraints,
    Workload,
    make_component,
    make_constraints,
    parse_workload_text,
)

__all__ = [
    "Component",
    "Constraints",
    "Option",
    "Recommendation",
    "Workload",
    "build_workload",
    "recommend",
]


def build_workload(
    file: Path | None, component: Mapping[str, Any], constraints: Mapping[str, Any]
) -> Workload:
    """A workload from a file, or from the CLI's flags for one component; constraint flags
    given with a file override the file's."""
    from whichgpu.errors import InvalidInput
    from whichgpu.i18n import _, fmt

    given = {k: v for k, v in component.items() if v is not None}
    limits = {k: v for k, v in constraints.items() if v is not None}
    if file is None:
        if "kind" not in given:
            raise InvalidInput(
                _("give a workload: --task (with --model or --params) or --file WORKLOAD.toml")
            )
        return Workload((make_component(given),), make_constraints(limits))
    if given:
        raise InvalidInput(
            fmt(
                _("--file describes the components; drop --{flag} or put it in the file"),
                flag=next(iter(given)).replace("_", "-"),
            )
        )
    from whichgpu.userdata import read_user_file

    workload = parse_workload_text(read_user_file(file), str(file))
    if limits:
        from dataclasses import asdict, replace

        merged = {**asdict(workload.constraints), **limits}
        workload = replace(workload, constraints=make_constraints(merged))
    return workload
