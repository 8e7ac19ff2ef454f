"""The Python API as documented: ``whichgpu.<name>`` is the same object however often it is
used and whatever was imported before, and the README's example runs."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import types
from pathlib import Path

import pytest

import whichgpu
from whichgpu.catalog import Catalog

ROOT = Path(__file__).resolve().parents[1]

#: The public names, pinned: adding or removing one is a decision, made here too.
PUBLIC = {
    "AmbiguousName", "Catalog", "CatalogError", "Comparison", "Component", "Constraints",
    "FitResult", "GPU", "InvalidInput", "Job", "MigResult", "ModelArch", "Recommendation",
    "ServiceSpec", "ThroughputEstimate", "UnknownName", "WhichGPUError", "Workload",
    "compare", "estimate_memory", "estimate_throughput", "fit", "load_catalog", "make_job",
    "make_service", "make_workload", "plan_mig", "recommend", "resolve_model", "list_models",
}  # fmt: skip


def _import_every_submodule() -> None:
    for info in pkgutil.walk_packages(whichgpu.__path__, "whichgpu."):
        if not info.name.endswith("__main__"):  # runs the CLI
            importlib.import_module(info.name)


def test_public_names_are_pinned() -> None:
    assert set(whichgpu.__all__) == PUBLIC
    assert set(dir(whichgpu)) >= PUBLIC


def test_no_submodule_shadows_a_public_name() -> None:
    """Importing a submodule sets it as an attribute of its package: a submodule named like a
    public function would replace the function (``whichgpu.fit`` became the module)."""
    submodules = {info.name for info in pkgutil.iter_modules(whichgpu.__path__)}
    assert not submodules & PUBLIC
    _import_every_submodule()
    for name in sorted(PUBLIC):
        value = getattr(whichgpu, name)
        assert not isinstance(value, types.ModuleType), name
        assert value.__module__.startswith("whichgpu."), name


def test_functions_work_any_number_of_times(catalog: Catalog) -> None:
    model = whichgpu.resolve_model("llama-3.1-8b")
    job = whichgpu.make_job(task="lora", batch=4, seq=2048)
    workload = whichgpu.make_workload(
        {"components": [{"kind": "lora", "model": "llama-2-7b", "tokens": 1e8}]}
    )
    gpu = catalog.resolve("a6000")
    for _ in range(3):
        _import_every_submodule()
        assert whichgpu.fit(catalog, model, job).estimate.total_gib > 0
        assert [g.gpu.id for g in whichgpu.compare(catalog, ["a100", "a6000"]).gpus] == [
            "a100-80gb-sxm",
            "rtx-a6000",
        ]
        assert whichgpu.estimate_throughput(model, job, gpu).throughput.value > 0
        assert whichgpu.recommend(catalog, workload).pick is not None
        services = [whichgpu.make_service({"memory_gib": 9, "replicas": 2})]
        assert whichgpu.plan_mig(catalog, services).pick is not None


@pytest.mark.parametrize(
    "call",
    [
        lambda c: whichgpu.compare(c, ["a100", "b9000"]),
        lambda c: whichgpu.compare(c, ["a100", "a100-80gb"]),
        lambda c: whichgpu.make_job(task="lora", batch=0),
        lambda c: whichgpu.resolve_model("llama-9"),
        lambda c: whichgpu.make_workload({"components": [{"kind": "train", "tokenz": 1}]}),
        lambda c: whichgpu.recommend(
            c, whichgpu.make_workload({"components": [{"kind": "fp64", "tflop": 1}]}), "costt"
        ),
    ],
)
def test_str_of_every_error_is_its_one_line_message(catalog: Catalog, call) -> None:
    with pytest.raises(whichgpu.WhichGPUError) as caught:
        call(catalog)
    text = str(caught.value)
    assert text == caught.value.message()
    assert "\n" not in text and not text.startswith("(")


def test_readme_python_api_example_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    test = doctest.DocTestParser().get_doctest(block.group(1), {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 10 and result.failed == 0
