"""``recommend``: ranked GPU choices for a workload, with cost per job, reasons and warnings."""

from __future__ import annotations

from whichgpu.commands.recommend.rank import Option, Recommendation, recommend
from whichgpu.inputs.requests import Component, Constraints, Workload

__all__ = [
    "Component",
    "Constraints",
    "Option",
    "Recommendation",
    "Workload",
    "recommend",
]
