"""The lower-format searches (FP8, NVFP4) plan GPUs cheapest offer first and stop where no
further GPU could come first (issue 48: they cost more than the main search): their first
option is the full search's."""

from __future__ import annotations

import pytest

from whichgpu.catalog import load_catalog
from whichgpu.catalog.records import GPU
from whichgpu.commands.recommend.alternatives import _ranked, in_lower_format
from whichgpu.commands.recommend.options import Option
from whichgpu.commands.recommend.rank import evaluate, rank
from whichgpu.estimate.perf import runs_natively
from whichgpu.inputs.requests import Workload
from whichgpu.inputs.workload_files import make_component


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
    searched: list[int] = []

    def options_on(w: Workload, gpus: list[GPU]) -> list[Option]:
        searched.extend(range(len(gpus)))
        return evaluate(catalog, w, gpus)

    found = _ranked(catalog, lower, able, "cost", (options_on, lambda o: rank(o, "cost")))
    assert full[0].feasible and found[0].feasible
    same = ("gpu", "gpus", "usd_per_h", "price_provider", "price_as_of")
    assert [getattr(found[0], k) for k in same] == [getattr(full[0], k) for k in same]
    assert len(searched) < len(able)  # it stopped before the last GPU
