"""The GPU measurement scripts' shared loop: each case measured in turn, a failing case said
on stderr and skipped, every row printed and the CSV rewritten after each (what a run cut
short at its time limit has measured stays)."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def measure_all(
    cases: Iterable[Any], measure: Callable[[Any], dict[str, Any]], out: Path, fields: list[str]
) -> int:
    rows = []
    for case in cases:
        try:
            row = measure(case)
        except Exception as err:  # record the case that failed and go on
            print(f"{case}: {type(err).__name__}: {err}"[:400], file=sys.stderr, flush=True)
            continue
        print(row, flush=True)
        rows.append(row)
        with out.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return 0
