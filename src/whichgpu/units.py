"""Unit constants. Vendors quote memory in decimal GB and bandwidth in GB/s (10^9 bytes)."""

from __future__ import annotations

BYTES_PER_GB = 1e9
BYTES_PER_GIB = 2.0**30
HOURS_PER_MONTH = 730.0  # 8,760 h / 12, the convention of cloud price lists


_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_count(text: str) -> float:
    """A count as people write it: ``"7B"``, ``"350M"``, ``"1.5e9"``, ``"2T"``, ``"10k"``.

    Raises :class:`ValueError` for anything else."""
    import re

    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kmbgtKMBGT]?)\s*", text)
    if not match:
        raise ValueError(text)
    return float(match.group(1)) * _SUFFIX[match.group(2).lower()]


_DURATION_UNITS_H = {"min": 1 / 60, "m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}


_LATENCY_UNITS_S = {"ms": 1e-3, "s": 1.0, "min": 60.0}


def parse_latency_s(text: str) -> float:
    """A latency in seconds: ``2``, ``2s``, ``150ms``. Raises ValueError."""
    import re

    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|min)?\s*", text.lower())
    if not match:
        raise ValueError(text)
    return float(match.group(1)) * _LATENCY_UNITS_S[match.group(2) or "s"]


def parse_duration_h(text: str) -> float:
    """A duration in hours: ``48``, ``48h``, ``3d``, ``90min``, ``2w``. Raises ValueError."""
    import re

    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(min|m|h|d|w)?\s*", text.lower())
    if not match:
        raise ValueError(text)
    return float(match.group(1)) * _DURATION_UNITS_H[match.group(2) or "h"]
