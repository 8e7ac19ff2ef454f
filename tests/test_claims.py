"""The article's claims, checked: the verdicts whichgpu reaches, and the docs page is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from whichgpu.article.claims import check_claims
from whichgpu.catalog import Catalog

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def verdicts(catalog: Catalog) -> dict[str, str]:
    return {check.claim.claim: check.verdict for check in check_claims(catalog)}


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("C1", "confirmed"),  # CUDA cores
        ("C5", "confirmed"),  # 2,039 GB/s is the SXM figure
        ("C7", "corrected"),  # the A2000's ~64 is sparse
        ("C8", "confirmed"),  # 0.6 and 0.1 TFLOPS FP64 (1:64 on GA10x) are right
        ("C9", "corrected"),  # 300 W is the PCIe A100
        ("C14", "corrected"),  # compute capability 8.6 on GA102/GA106; GA100 is not GA10x
        ("C20", "corrected"),  # public listings fall outside the article's ranges
        ("C21", "confirmed"),  # its arithmetic on its own prices is right
        ("C22", "corrected"),  # 1/3 and "40–50 %" cannot both hold
        ("C30", "confirmed"),  # 2,039 / 768 = 2.65
        ("C31", "confirmed"),  # 9.7 / 0.605 = 16.0
        ("C33", "corrected"),  # 11,500 images/s is an 8-GPU total (the ~2× ratio holds)
        ("C34", "corrected"),  # the A6000 trains at ~50–58 % of the A100, not 65 %
        ("C35", "corrected"),  # inference: the A6000 is nearer 55 % than 37 %
        ("C38", "corrected"),  # 80–90 % of the A100 holds for no modelled regime
        ("C39", "corrected"),  # an L40S is not 2–4× an A100 (1.2× training; slower decoding)
        ("C40", "confirmed"),  # 7–13B on an A6000: with LoRA (full fine-tuning tops out ~2.4B)
        ("C41", "corrected"),  # ~20B holds for 16-bit inference, not mixed-precision training
        ("C42", "corrected"),  # full fine-tuning on 12 GB tops out near 0.5B, LoRA near 5B
        ("C43", "confirmed"),  # a 4-bit 7B model serves on 12 GB
        ("C44", "confirmed"),
    ],
)
def test_verdicts(verdicts: dict[str, str], claim: str, verdict: str) -> None:
    assert verdicts[claim] == verdict


def test_every_claim_of_the_ledger_is_checked(verdicts: dict[str, str]) -> None:
    ledger = [f"C{n}" for n in (*range(1, 16), 20, 21, 22, *range(30, 45))]
    assert list(verdicts) == ledger


def test_docs_are_generated_from_the_current_data() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_importing_the_core_loads_no_heavy_module() -> None:
    code = (
        "import sys, whichgpu; "
        "heavy = [m for m in ('rich', 'typer', 'pydantic', 'torch', 'fastapi') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_an_answer_reads_no_calibration_table() -> None:
    """``benchmarks.csv`` (the fit's measurements, a third of the catalog's parsing) is
    read on first use: a recommendation does not, the calibration scripts and the tests do."""
    code = (
        "from whichgpu.catalog import store; from whichgpu.commands.recommend import recommend; "
        "from whichgpu.inputs.requests import Workload; from whichgpu.inputs.workload_files import "
        "make_component; c = store.load_catalog(); "
        "recommend(c, Workload((make_component({'kind': 'lora', 'model': 'llama-2-7b', "
        "'tokens': 1e8}),))); print(store.shipped_benchmarks.cache_info().currsize, "
        "len(c.benchmarks))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    before, after = result.stdout.split()
    assert before == "0" and int(after) > 500  # read when asked for
