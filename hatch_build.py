"""Build hook: compile the message catalogs (``.po`` → ``.mo``) into the package, for
wheels and editable installs alike (scripts/i18n.py holds the compiler)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CatalogsHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        spec = importlib.util.spec_from_file_location("whichgpu_i18n", root / "scripts" / "i18n.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        written = module.compile_catalogs(root / "src" / "whichgpu" / "i18n" / "locale")
        if version == "editable":
            return  # the package is imported from src/, where the catalogs now are
        for path in written:  # .mo files are git-ignored, so name them for the wheel
            relative = path.relative_to(root / "src").as_posix()
            build_data.setdefault("force_include", {})[str(path)] = relative
