"""The package's layers (issue 43; ARCHITECTURE in docs/methodology.md): each folder imports
only the layers below it, function-level imports included, so that the estimators never
load the request layer, the commands or the shells, and the catalog nothing above the
ground floor."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "whichgpu"
#: The ground floor: codes, units, messages, bounded parsing and files, helpers.
GROUND = {
    "errors",
    "notes",
    "note_messages",
    "phrases",
    "units",
    "frozen",
    "files",
    "untrusted",
    "i18n",
}
#: The entry points, which may import anything: the public API and ``python -m whichgpu``.
ENTRY = {"whichgpu", "whichgpu.__main__"}

_BELOW_PLAN = {"ground", "catalog", "models", "job", "estimate"}
#: What each layer may import, besides itself.
ALLOWED: dict[str, set[str]] = {
    "ground": set(),
    "catalog": {"ground"},
    "models": {"ground", "catalog"},
    "job": {"ground", "catalog", "models"},
    "estimate": {"ground", "catalog", "models", "job"},
    # the request layer and plan meet at the job a request describes: a workload file is
    # checked against its model's jobs (plan.jobs.prepare), and plan reads the request types
    "inputs": {*_BELOW_PLAN, "plan"},
    "plan": {*_BELOW_PLAN, "inputs"},
    "article": {*_BELOW_PLAN, "inputs", "plan"},
    "commands": {*_BELOW_PLAN, "inputs", "plan", "article"},
    "render": {*_BELOW_PLAN, "inputs", "plan", "article", "commands"},
    "web": {*_BELOW_PLAN, "inputs", "plan", "article", "commands", "render"},
    "cli": {*_BELOW_PLAN, "inputs", "plan", "article", "commands", "render", "web"},
}


def _layer(module: str) -> str:
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else ""
    return "ground" if head in GROUND else head


def _imports() -> list[tuple[str, int, str]]:
    """Every import of a whichgpu module in the package: (importer, line, imported), at any
    depth of the code (a function's lazy import counts as the module's)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("whichgpu"):
                assert node.module is not None
                found.append((module, node.lineno, node.module))
            elif isinstance(node, ast.Import):
                found += [(module, node.lineno, a.name) for a in node.names
                          if a.name.startswith("whichgpu")]  # fmt: skip
    return found


def test_every_module_belongs_to_a_layer() -> None:
    layers = {_layer(m) for m, _line, _target in _imports() if m not in ENTRY}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = [
        f"{module}:{line} imports {target}"
        for module, line, target in _imports()
        if module not in ENTRY
        and _layer(target) != _layer(module)
        and _layer(target) not in ALLOWED[_layer(module)]
    ]
    assert not wrong, "\n".join(wrong)


def test_the_estimators_and_the_catalog_stand_alone() -> None:
    """The two rules the architecture rests on, said apart: the estimators load nothing of
    the request layer, the commands or the shells; the catalog nothing above the ground."""
    above = {"inputs", "commands", "article", "plan", "render", "cli", "web"}
    assert not ALLOWED["estimate"] & above
    assert ALLOWED["catalog"] == {"ground"}
    assert len([p for p in PACKAGE.glob("*.py")]) <= 10  # loose modules: the ground floor
