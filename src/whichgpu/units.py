"""Unit constants. Vendors quote memory in decimal GB and bandwidth in GB/s (10^9 bytes)."""

from __future__ import annotations

BYTES_PER_GB = 1e9
BYTES_PER_GIB = 2.0**30
HOURS_PER_MONTH = 730.0  # 8,760 h / 12, the convention of cloud price lists


def gb_to_gib(gb: float) -> float:
    """Decimal gigabytes (a datasheet's GB) to binary gibibytes (what allocators report)."""
    return gb * BYTES_PER_GB / BYTES_PER_GIB
