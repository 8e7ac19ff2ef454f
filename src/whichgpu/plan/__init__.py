"""The one place a job meets hardware: :func:`plan` (``plan(component, hardware, prepared)
-> Run``). ``recommend`` is a loop of it over the catalog's hardware × offers, ranked."""

from whichgpu.plan.core import plan
from whichgpu.plan.hardware import Hardware, slice_gpu
from whichgpu.plan.run import Blocker, Run

__all__ = ["Blocker", "Hardware", "Run", "plan", "slice_gpu"]
