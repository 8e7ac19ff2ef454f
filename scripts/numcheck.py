"""Compare a generated file with the committed one as numbers, not as text.

A refit on another machine (another numpy, scipy or BLAS) moves the last printed digits of
fitted values without any change to the model; a real change to the model or the data moves
them further, or changes the words. Two texts *agree* when their words are identical and each
pair of numbers is within ``RTOL`` of each other (relative), or within one unit of the last
digit printed (a value on a rounding edge can print either way). Integers without a decimal
point get no such unit: a count of measurements that changes is a change.

    python scripts/numcheck.py OLD NEW   # exit 1 and print the first difference
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

#: Relative tolerance of a generated number: fitted values agree to ~1e-6 between scipy
#: releases once the fit has converged; printed percentages to their last digit.
RTOL = 1e-3

#: A number standing on its own (``1,496`` is one number): not part of a name such as
#: ``a100`` or ``d02``.
NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")


def _unit(token: str) -> float:
    mantissa = token.lower().split("e")[0]
    if "." not in mantissa:
        return 0.0
    exponent = int(token.lower().split("e")[1]) if "e" in token.lower() else 0
    return 10.0 ** (exponent - len(mantissa.split(".")[1]))


def numbers_agree(a: str, b: str, rtol: float = RTOL) -> bool:
    a, b = a.replace(",", ""), b.replace(",", "")
    x, y = float(a), float(b)
    slack = max(rtol * max(abs(x), abs(y)), _unit(a), _unit(b))
    return math.isclose(x, y, rel_tol=0.0, abs_tol=slack * (1 + 1e-9))


def first_difference(old: str, new: str, rtol: float = RTOL) -> str | None:
    """``None`` when ``old`` and ``new`` agree, else the first line where they do not."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if len(old_lines) != len(new_lines):
        return f"{len(old_lines)} lines committed, {len(new_lines)} generated"
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if a == b:
            continue
        words_a, words_b = NUMBER.split(a), NUMBER.split(b)
        nums_a, nums_b = NUMBER.findall(a), NUMBER.findall(b)
        if (
            words_a != words_b
            or len(nums_a) != len(nums_b)
            or not all(numbers_agree(p, q, rtol) for p, q in zip(nums_a, nums_b, strict=True))
        ):
            return f"line {number}: committed {a!r}, generated {b!r}"
    return None


def check(path: Path, text: str, rtol: float = RTOL) -> str | None:
    """Why ``path`` is stale against the freshly generated ``text``, or ``None``."""
    if not path.exists():
        return f"{path.name}: missing"
    difference = first_difference(path.read_text(encoding="utf-8"), text, rtol)
    return None if difference is None else f"{path.name}: {difference}"


if __name__ == "__main__":
    old_path, new_path = sys.argv[1:3]
    problem = check(Path(old_path), Path(new_path).read_text(encoding="utf-8"))
    print(problem or "agree")
    raise SystemExit(1 if problem else 0)
