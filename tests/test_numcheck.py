"""Generated files are checked as numbers within a tolerance (scripts/numcheck.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from numcheck import RTOL, first_difference, numbers_agree


@pytest.mark.parametrize(
    ("old", "new", "agree"),
    [
        ("eta,cublas,gemm,0.663294,fraction,1", "eta,cublas,gemm,0.663248,fraction,1", True),
        ("| 15.7% |", "| 15.8% |", True),  # one unit of the last printed digit: a rounding edge
        ("| 15.7% |", "| 16.1% |", False),  # a real move of the accuracy figure
        ("| a100 | 34 |", "| a100 | 35 |", False),  # a count is exact
        ("likely 1,496–2,403", "likely 1,495–2,403", True),  # thousands, within RTOL
        ("likely 1,496–2,403", "likely 1,396–2,403", False),
        ("term,tp:latency_s,,0.000157,s,", "term,tp:latency_s,,0.000157,s,", True),
        ("spread_low,,*,-0.255202,error,", "spread_low,,*,-0.257050,error,", False),
        ("| rtx-a6000 | 4 |", "| rtx-a5000 | 4 |", False),  # digits in a name are words
        ("8 × A100", "8 × H100", False),
        ("1.0e-3 s", "1.0005e-3 s", True),
    ],
)
def test_numbers_compare_within_tolerance(old: str, new: str, agree: bool) -> None:
    assert (first_difference(old, new) is None) is agree


def test_a_changed_line_count_is_a_difference() -> None:
    assert first_difference("a\nb\n", "a\n") == "2 lines committed, 1 generated"


@given(st.floats(min_value=1e-6, max_value=1e9), st.floats(min_value=-0.9, max_value=0.9))
def test_relative_tolerance_is_symmetric_and_tight(x: float, change: float) -> None:
    a, b = f"{x:.9e}", f"{x * (1 + change * RTOL):.9e}"
    assert numbers_agree(a, b) and numbers_agree(b, a)
    far = f"{x * (1 + 3 * RTOL):.9e}"
    assert not numbers_agree(a, far)


def test_readme_quotes_the_generated_accuracy_figures() -> None:
    """The README's throughput accuracy sentence matches docs/perf-accuracy.md's headings."""
    import re

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "perf-accuracy.md").read_text(encoding="utf-8")
    heading = re.compile(r"## Leave-one-(?:GPU-)?out: \d+ measurements, median \|error\| "
                         r"([\d.]+)%, 90th percentile ([\d.]+)%")  # fmt: skip
    figures = [value for match in heading.finditer(page) for value in match.groups()]
    readme = (root / "README.md").read_text(encoding="utf-8")
    sentence = re.search(
        r"median error ([\d.]+) %, 90th percentile ([\d.]+) %; each GPU held out\s+"
        r"whole, ([\d.]+) % and ([\d.]+) %",
        readme,
    )
    assert sentence is not None
    assert len(figures) == 4
    assert all(numbers_agree(a, b) for a, b in zip(figures, sentence.groups(), strict=True))


@pytest.mark.parametrize(
    ("old", "new", "agree"),
    [
        # a refit on another machine (committed fit against this sandbox's, 2026-12-02)
        ("spread_low,,cnn-infer,-0.222308,error,", "spread_low,,cnn-infer,-0.221822,error,", True),
        (
            "| cnn-infer | nvidia-dle-mxnet | 5 | 19.5% | 648.2% |",
            "| cnn-infer | nvidia-dle-mxnet | 5 | 19.5% | 608.7% |",
            True,
        ),
        (
            "eta,nvidia-dle-pytorch,cnn-infer,0.868163,fraction,8",
            "eta,nvidia-dle-pytorch,cnn-infer,0.866158,fraction,8",
            True,
        ),
        # what a change to the model or the data does
        (
            "## Leave-one-out: 517 measurements, median |error| 11.0%, 90th percentile 31.4%",
            "## Leave-one-out: 517 measurements, median |error| 12.4%, 90th percentile 31.4%",
            False,
        ),
        (
            "## Leave-one-out: 517 measurements, median |error| 11.0%",
            "## Leave-one-out: 518 measurements, median |error| 11.0%",
            False,
        ),
        ("spread_high,,cnn-infer,0.323315,error,", "spread_high,,cnn-infer,0.260834,error,", False),
        # a share printed without decimals is not a count: a row on a range's edge moves it
        ("| one at a time | 529 | 90% | 61% |", "| one at a time | 529 | 91% | 61% |", True),
        ("| one at a time | 529 | 90% | 61% |", "| one at a time | 529 | 75% | 61% |", False),
        # a fold that leaves a factor free: several times the measurement, within half
        (
            "| cnn-infer | tf1 | 10 | 33.0% | 478.1% |",
            "| cnn-infer | tf1 | 10 | 34.6% | 714.1% |",
            True,
        ),
        (
            "| cnn-infer | tf1 | 10 | 33.0% | 478.1% |",
            "| cnn-infer | tf1 | 10 | 34.6% | 1,014% |",
            False,
        ),
        # the wide tolerance is the large figure's alone: the line's median keeps its own
        (
            "| cnn-infer | tf1 | 10 | 33.0% | 478.1% |",
            "| cnn-infer | tf1 | 10 | 45.0% | 478.1% |",
            False,
        ),
        (
            "eta,torch-copy,bandwidth,0.823138,fraction,6",
            "eta,torch-copy,bandwidth,0.843138,fraction,6",
            False,
        ),
    ],
)
def test_a_refit_is_compared_at_the_width_the_fit_pins_down(
    old: str, new: str, agree: bool
) -> None:
    from fit_efficiency import refit_tolerance

    assert (first_difference(old, new, tolerance=refit_tolerance) is None) is agree


def test_a_line_tolerance_leaves_its_counts_at_the_default() -> None:
    def wide(_line: str, _number: str, _share: bool) -> tuple[float, float]:
        return 0.5, 1.0

    assert first_difference("| 0.1% | 7 |", "| 0.9% | 7 |", tolerance=wide) is None
    assert first_difference("| 0.1% | 7 |", "| 0.1% | 8 |", tolerance=wide) is not None
