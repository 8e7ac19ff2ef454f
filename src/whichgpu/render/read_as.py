"""The family names an answer read (``h100``) and as which variant, as the JSON of the CLI
and of the API state them: a module of its own, so that a command printing text does not
import the JSON documents' module to say it (cold start)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from whichgpu.catalog.names import family_choice_text

if TYPE_CHECKING:
    from whichgpu.catalog.names import FamilyChoice


def read_as_doc(choices: Sequence[FamilyChoice]) -> list[dict[str, object]]:
    """The family names an answer read, each as the variant it was read as and why (the
    JSON of the CLI and of the API alike)."""
    from whichgpu.catalog import load_catalog

    catalog = load_catalog()
    return [
        {"typed": c.typed, "gpu": c.chosen, "others": list(c.others), "offers": c.offers,
         "of_offers": c.total, "text": family_choice_text(c, catalog.gpu(c.chosen).name)}
        for c in choices
    ]  # fmt: skip
