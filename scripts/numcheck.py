"""Compare a generated file with the committed one as numbers, not as text.

A refit on another machine (another numpy, scipy or BLAS) moves the last printed digits of
fitted values without any change to the model; a real change to the model or the data moves
them further, or changes the words. Two texts *agree* when their words are identical and each
pair of numbers is within ``RTOL`` of each other (relative), or within one unit of the last
digit printed (a value on a rounding edge can print either way). Integers without a decimal
point get no such unit: a count of measurements that changes is a change; under a
generator's tolerance (below), a percentage (``90%``) is a share, not a count, whether or
not it prints decimals: a row on a range's edge moves a cross-validated one a point from
one BLAS build to the next.

A generator may give some numbers a wider tolerance (``tolerance``: a function of the
committed line and the number, returning its relative tolerance and an absolute one in its
printed units), for figures that the computation pins down only to that width whatever the
machine (scripts/fit_efficiency.py says why for its fits). Counts stay exact.

    python scripts/numcheck.py OLD NEW   # exit 1 and print the first difference
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
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


def _is_share(line: str, match: re.Match[str]) -> bool:
    """Whether a number printed without decimals is a percentage (followed by ``%``)."""
    return line[match.end() : match.end() + 1] == "%"


#: The (relative, absolute) tolerance of one number of a committed line: the line, the
#: number as printed, and whether it is a share (printed with ``%``)
Tolerance = Callable[[str, str, bool], tuple[float, float]]


def numbers_agree(a: str, b: str, rtol: float = RTOL, atol: float = 0.0) -> bool:
    """``a`` and ``b`` within ``rtol`` of each other, ``atol``, or one unit of their last
    printed digit."""
    a, b = a.replace(",", ""), b.replace(",", "")
    x, y = float(a), float(b)
    slack = max(rtol * max(abs(x), abs(y)), atol, _unit(a), _unit(b))
    return math.isclose(x, y, rel_tol=0.0, abs_tol=slack * (1 + 1e-9))


def _agree(
    line: str, p: re.Match[str], q: re.Match[str], rtol: float, tolerance: Tolerance | None
) -> bool:
    """Whether the committed number ``p`` of ``line`` and the generated ``q`` agree: at
    ``tolerance``'s width where it is given and the number is a decimal or a share, else
    within ``rtol``."""
    share = _is_share(line, p)
    if tolerance is None or not (_unit(p[0]) or _unit(q[0]) or share):
        return numbers_agree(p[0], q[0], rtol)
    return numbers_agree(p[0], q[0], *tolerance(line, p[0], share))


def first_difference(
    old: str, new: str, rtol: float = RTOL, tolerance: Tolerance | None = None
) -> str | None:
    """``None`` when ``old`` and ``new`` agree, else the first line where they do not;
    ``tolerance``, where given, sets the tolerance of each decimal number and each share
    (a percentage, printed with or without decimals); other integers keep ``rtol``: a count
    does not move with the numerics."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if len(old_lines) != len(new_lines):
        return f"{len(old_lines)} lines committed, {len(new_lines)} generated"
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=True), start=1):
        if a == b:
            continue
        words_a, words_b = NUMBER.split(a), NUMBER.split(b)
        nums_a, nums_b = list(NUMBER.finditer(a)), list(NUMBER.finditer(b))

        if (
            words_a != words_b
            or len(nums_a) != len(nums_b)
            or not all(
                _agree(a, p, q, rtol, tolerance) for p, q in zip(nums_a, nums_b, strict=True)
            )
        ):
            return f"line {number}: committed {a!r}, generated {b!r}"
    return None


def check(
    path: Path, text: str, rtol: float = RTOL, tolerance: Tolerance | None = None
) -> str | None:
    """Why ``path`` is stale against the freshly generated ``text``, or ``None``."""
    if not path.exists():
        return f"{path.name}: missing"
    difference = first_difference(path.read_text(encoding="utf-8"), text, rtol, tolerance)
    return None if difference is None else f"{path.name}: {difference}"


if __name__ == "__main__":
    old_path, new_path = sys.argv[1:3]
    problem = check(Path(old_path), Path(new_path).read_text(encoding="utf-8"))
    print(problem or "agree")
    raise SystemExit(1 if problem else 0)
