"""The lower-format searches (FP8, NVFP4) plan GPU counts and instance shapes cheapest dated
offer first and stop where no further shape could come first (issue 48: they cost more than
the main search): their first option is the full search's."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from whichgpu.catalog import load_catalog
from whichgpu.catalog.records import GPU
from whichgpu.commands.recommend.alternatives import _ranked, in_lower_format
from whichgpu.commands.recommend.candidates import hardware_for
from whichgpu.commands.recommend.options import Option
from whichgpu.commands.recommend.rank import evaluate, rank
from whichgpu.estimate.perf import runs_natively
from whichgpu.inputs.requests import Workload
from whichgpu.inputs.workload_files import make_component
from whichgpu.plan import Hardware


@pytest.mark.parametrize(
    "raw",
    [
        {"kind": "inference", "model": "llama-3.1-70b", "request_rate": 5, "tpot": "100ms"},
        {"kind": "inference", "model": "llama-3.1-8b", "request_rate": 20, "tpot": "50ms"},
        {"kind": "inference", "model": "mixtral-8x7b", "request_rate": 10, "hours": 100},
    ],
)
@pytest.mark.parametrize("quant", ["fp8", "nvfp4"])
def test_the_cheapest_first_search_finds_the_full_searchs_first(raw: dict[str, object],
                                                                quant: str) -> None:  # fmt: skip
    catalog = load_catalog()
    lower = in_lower_format(Workload((make_component(raw),)), quant)
    assert lower is not None
    able = [g for g in catalog.gpus if runs_natively(g, quant)]
    full = rank(evaluate(catalog, lower, able), "cost")
    shapes = [hw for g in able for hw in hardware_for(catalog, g, lower.components,
                                                      lower.constraints)]  # fmt: skip
    searched: list[Hardware] = []

    def options_on(w: Workload, gpus: list[GPU], only: Collection[Hardware] | None) -> list[Option]:
        searched.extend(only if only is not None else
                        [hw for g in gpus for hw in hardware_for(catalog, g, w.components,
                                                                   w.constraints)])  # fmt: skip
        return evaluate(catalog, w, gpus, only)

    found = _ranked(catalog, lower, able, "cost", (options_on, lambda o: rank(o, "cost")))
    assert full[0].feasible and found[0].feasible
    same = ("gpu", "gpus", "usd_per_h", "price_provider", "price_as_of")
    assert [getattr(found[0], k) for k in same] == [getattr(full[0], k) for k in same]
    # it planned each shape at most once, and stopped before the dearest
    assert len(set(searched)) == len(searched) < len(shapes)


def test_where_nothing_is_feasible_every_shape_is_planned_once() -> None:
    """No feasible option on a dated offer bounds the search: every shape is planned (a GPU
    no dated offer rents, whole), each once, and the first option is the full search's."""
    catalog = load_catalog()
    raw = {"kind": "inference", "model": "llama-3.1-405b", "request_rate": 500, "tpot": "5ms"}
    lower = in_lower_format(Workload((make_component(raw),)), "fp8")
    assert lower is not None
    able = [g for g in catalog.gpus if runs_natively(g, "fp8")]
    full = rank(evaluate(catalog, lower, able), "cost")
    planned: list[Option] = []

    def options_on(w: Workload, gpus: list[GPU], only: Collection[Hardware] | None) -> list[Option]:
        found = evaluate(catalog, w, gpus, only)
        planned.extend(found)
        return found

    found = _ranked(catalog, lower, able, "cost", (options_on, lambda o: rank(o, "cost")))
    assert not full[0].feasible and not found[0].feasible
    assert len(planned) == len(full)
    same = ("gpu", "gpus", "usd_per_h", "price_provider", "market")
    assert [[getattr(o, k) for k in same] for o in found] == [
        [getattr(o, k) for k in same] for o in full
    ]
