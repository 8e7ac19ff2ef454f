"""Where whichgpu keeps what it fetches: the cache folder and the price snapshot's folder in
it (a module of its own so that a command can see there is no snapshot without importing
:mod:`whichgpu.catalog.pricefeed`, which reads and writes one)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$WHICHGPU_CACHE``, else ``$XDG_CACHE_HOME/whichgpu`` (``~/.cache/whichgpu``)."""
    explicit = os.environ.get("WHICHGPU_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "whichgpu"


def snapshot_dir() -> Path:
    """The price snapshot's folder (``whichgpu prices update`` writes it)."""
    return cache_dir() / "prices"
