"""Each serving engine's fitted host time per running sequence in a decode step
(``framework_efficiency.csv``, kind ``overhead``, written by scripts/fit_frameworks.py from
the engine's own published maximum-load runs). A release of an engine
(:data:`~whichgpu.job.engines.ENGINES` ``vllm@0.6``) takes its engine's fitted time: the
runs it rests on span releases (docs/serving-accuracy.md)."""

from __future__ import annotations

from functools import cache


def family(engine: str) -> str:
    """The engine a release id belongs to: ``vllm`` for ``vllm@0.6``."""
    return engine.partition("@")[0]


@cache
def load_sequence_times() -> dict[str, tuple[float, int]]:
    """Each engine's fitted host seconds per running sequence in a decode step and the
    published maximum-load runs it rests on (``framework_efficiency.csv``, kind
    ``overhead``, regime ``llm-serve``, written by scripts/fit_frameworks.py)."""
    from whichgpu.catalog.loader import read_package_table
    from whichgpu.catalog.records import EfficiencyRow

    rows = [row for _line, row in read_package_table("framework_efficiency.csv", EfficiencyRow)]
    return {
        row.key: (row.value, row.fitted_on or 0)
        for row in rows
        if row.kind == "overhead" and row.regime == "llm-serve"
    }


def timed(engine: str) -> tuple[float, int] | None:
    """``engine``'s (or its release's engine's) fitted time and the runs it rests on."""
    return load_sequence_times().get(family(engine))


def sequence_s(engine: str) -> float:
    """``engine``'s fitted host seconds per running sequence in a decode step (0 where none
    is fitted)."""
    found = timed(engine)
    return 0.0 if found is None else found[0]
