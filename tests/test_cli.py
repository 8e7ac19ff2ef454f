"""The CLI as a user meets it: outputs (goldens), JSON contracts, and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import golden, run_cli

ARTICLE = ("a100-80gb-sxm", "rtx-a6000", "rtx-a2000-12gb")


def test_compare_the_article_s_three(tmp_path: Path) -> None:
    result = run_cli("compare", *ARTICLE)
    assert result.code == 0, result.stderr
    golden("compare_article.txt", result.stdout)


def test_compare_flags_every_wrong_figure_of_the_article() -> None:
    out = run_cli("compare", *ARTICLE).stdout
    # C14: compute capability of GA102 and GA106; "GA10x" for the GA100
    assert "RTX A6000, Compute capability: the article says CUDA compute capability 8.0" in out
    assert "RTX A2000 12GB, Compute capability: the article says CUDA compute capability" in out
    assert "A100 80GB SXM, Chip: the article says GA10x silicon; the figure is GA100" in out
    # C7: the A2000's ~64 is the sparse rate
    assert "the article's ~64 TFLOPS is the 2:4-sparsity figure" in out
    # C9: 300 W is the PCIe card
    assert "this part is 400 W" in out and "300 W is the NVIDIA A100 80GB PCIe's figure" in out


def compare_json(*names: str) -> dict[str, Any]:
    result = run_cli("compare", *names, "--json")
    assert result.code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_compare_json_golden() -> None:
    golden("compare_article.json", json.dumps(compare_json(*ARTICLE), indent=2) + "\n")


STABLE_KEYS = {
    "id", "name", "architecture", "compute_capability", "cuda_cores", "tensor_cores",
    "rt_cores", "memory_gib", "memory_type", "memory_bandwidth_gb_per_s", "fp32_tflops",
    "fp16_tensor_dense_tflops", "bf16_tensor_dense_tflops", "fp64_tflops", "tdp_w",
    "nvlink_gb_per_s", "mig_max_instances", "ecc", "display_outputs", "price_usd_per_h",
    "sources",
}  # fmt: skip


def test_compare_json_has_the_stable_keys_and_values() -> None:
    doc = compare_json("a100", "a6000", "a2000")
    a100, a6000, a2000 = doc["gpus"]
    for gpu in doc["gpus"]:
        assert gpu.keys() >= STABLE_KEYS
    assert a100["compute_capability"] == "8.0" and a6000["compute_capability"] == "8.6"
    assert a2000["nvlink_gb_per_s"] == 0 and a2000["mig_max_instances"] == 0
    assert a100["mig_max_instances"] == 7
    assert a6000["price_usd_per_h"] == {"low": 0.4, "high": 1.09}
    assert a6000["derived"]["bandwidth_ratio"] == pytest.approx(768 / 2039)
    # the article's $0.10–0.25 is a claim; the one offer is Vast's 2-GPU box at $0.665 a GPU
    assert a2000["derived"]["hours_per_100_usd"] == pytest.approx(
        {"low": 100 / 0.665, "high": 100 / 0.665}
    )
    codes = {(c["gpu"], c["field"], c["code"]) for c in doc["corrections"]}
    assert ("rtx-a2000-12gb", "fp16_tensor_dense_tflops", "article_sparse_figure") in codes
    assert ("a100-80gb-sxm", "tdp_w", "article_range_for_one_part") in codes
    assert ("rtx-a6000", "compute_capability", "article_differs") in codes


def test_compare_of_gpus_the_article_does_not_cover_has_no_corrections() -> None:
    doc = compare_json("h100", "l40s", "l4")
    assert doc["corrections"] == []
    assert doc["baseline"] == "h100-sxm"


def test_compare_market_filter() -> None:
    doc = compare_json("h100", "a100", "--market", "spot")
    assert doc["markets"] == ["spot"]
    assert set(doc["gpus"][0]["prices_by_market"]) == {"spot"}


def test_gpus_list_golden() -> None:
    result = run_cli("gpus")
    assert result.code == 0
    golden("gpus.txt", result.stdout)


@pytest.mark.parametrize(
    ("args", "ids"),
    [
        (("--feature", "mig"), ["a100-80gb-sxm", "a100-80gb-pcie", "a100-40gb", "h100-sxm", "h100-pcie", "h200", "b200", "a30", "a100-40gb-pcie", "rtx-pro-6000-blackwell", "rtx-pro-6000-blackwell-max-q", "h100-nvl", "gh200", "b300", "gb200"]),
        (("--feature", "rt", "--feature", "nvlink"), ["rtx-a6000", "a40", "rtx-3090", "rtx-a4500", "rtx-a5000", "rtx-a5500", "rtx-3090-ti"]),
        (("--feature", "fp64", "--min-vram", "80"), ["a100-80gb-sxm", "a100-80gb-pcie", "h100-sxm", "h100-pcie", "h200", "b200", "h100-nvl", "gh200", "mi300x", "mi325x", "gb200", "mi355x"]),  # not B300: 1.25 TFLOPS FP64
        (("--arch", "ada"), ["l4", "l40s", "rtx-4090", "l40", "rtx-4000-ada", "rtx-5000-ada", "rtx-6000-ada", "rtx-4060-ti-16gb", "rtx-4070-ti-super", "rtx-4080", "rtx-4070-super"]),
        (("--feature", "display", "--min-vram", "40"), ["rtx-a6000", "a40", "l40s", "l40", "rtx-6000-ada", "rtx-pro-6000-blackwell", "rtx-pro-6000-blackwell-max-q"]),
        (("--feature", "nvenc", "--min-vram", "80"), ["rtx-pro-6000-blackwell", "rtx-pro-6000-blackwell-max-q"]),  # A100, H100: no NVENC
        (("--feature", "fp64", "--arch", "cdna 3"), ["mi300x", "mi325x"]),
    ],
)  # fmt: skip
def test_gpus_filters(args: tuple[str, ...], ids: list[str]) -> None:
    result = run_cli("gpus", *args, "--json")
    assert result.code == 0, result.stderr
    assert [g["id"] for g in json.loads(result.stdout)["gpus"]] == ids


def test_show_names_every_source() -> None:
    result = run_cli("show", "a2000")
    assert result.code == 0
    golden("show_a2000.txt", result.stdout)


def test_show_json_lists_prices_with_dates() -> None:
    doc = json.loads(run_cli("show", "l40s", "--json").stdout)["gpu"]
    crusoe = [p for p in doc["prices"] if p["provider"] == "Crusoe"]
    # Crusoe's spot rows as gpuhunt read them in February; its on-demand L40S as its page
    # showed it in September (validation/prices_dated.csv)
    assert {p["as_of"] for p in crusoe} == {"2026-02-26", "2026-09-20"}
    assert {p["age_months"] for p in crusoe} == {9, 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("compare", "a100", "l50"), "whichgpu: error: unknown GPU 'l50'; closest matches: l40, l40s, rtx-5090"),
        (("compare", "a100", "a100-80gb"), "which is already in the comparison"),
        (("compare", "a100", "t4", "--market", "reserved"), "unknown market 'reserved'; valid markets: on-demand"),
        (("compare",), "whichgpu: error: Missing argument"),
        (("compare", "a100", "--bogus"), "whichgpu: error: No such option"),
        (("gpus", "--feature", "raytracing"), "unknown feature 'raytracing'; valid features: mig, nvlink, rt"),
        (("gpus", "--min-vram", "-1"), "--min-vram: must be a number from 0 to 1e+06 (got -1.0)"),
            (("gpus", "--min-vram", "nan"), "--min-vram: must be a number from 0 to 1e+06 (got nan)"),
        (("gpus", "--min-vram", "lots"), "whichgpu: error: Invalid value for '--min-vram'"),
        (("gpus", "--arch", "Pascal"), "unknown architecture 'Pascal'"),
        (("show", "a100", "--prices", "/nonexistent/prices.csv"), "/nonexistent/prices.csv: cannot read it"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_code_2(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr


def test_a_malformed_price_file_is_one_line_naming_file_and_row(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("gpu,price_usd_per_h\nt4,0.2\nrtx a6000,abc\n")
    result = run_cli("compare", "a100", "a6000", "--prices", str(path))
    assert result.code == 2 and result.stdout == ""
    assert result.stderr == (
        f"whichgpu: error: {path}, row 3: price_usd_per_h: expected `float`, got `str` "
        "(got 'abc')\n"
    )


def test_user_prices_override_and_are_cited(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('[[price]]\ngpu = "a2000"\nprice_usd_per_h = 0.18\nmarket = "marketplace"\n')
    doc = json.loads(run_cli("compare", "a100", "a2000", "--prices", str(path), "--json").stdout)
    a2000 = doc["gpus"][1]
    assert a2000["price_usd_per_h"] == {"low": 0.18, "high": 0.18}
    assert a2000["prices_by_market"]["marketplace"]["low_listing"]["source"] == "user-prices-1"


def test_skypilot_import_from_the_cli() -> None:
    vms = str(Path(__file__).parent / "fixtures" / "vms.csv")
    result = run_cli("show", "a6000", "--skypilot-catalog", vms, "--json")
    assert result.code == 0
    assert "skipped accelerators" not in result.stderr  # the GH200 is carried now
    listings = json.loads(result.stdout)["gpu"]["prices"]
    assert {(p["provider"], p["market"], p["price_usd_per_h"]) for p in listings} >= {
        ("fixtures", "on-demand", 0.8),
        ("fixtures", "spot", 0.4),
    }


def test_python_dash_m_and_help_work() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "whichgpu", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    for command in ("gpus", "show", "compare"):
        assert command in result.stdout


@pytest.mark.parametrize("columns", [80, 160])
def test_gpus_fits_its_width_without_cutting_a_token(
    monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """Issue 18: at 80 columns the catalog was 570 lines of numbers split mid-token."""
    monkeypatch.setenv("COLUMNS", str(columns))
    result = run_cli("gpus")
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "…" not in "".join(lines[4:-1])  # no cell cut (the header's own … aside)
    assert len(lines) == 48 + 6  # one line a GPU
    golden(f"gpus_{columns}.txt", result.stdout)


def _help_screens() -> list[tuple[str, ...]]:
    from whichgpu.cli import app, register

    register([])  # every command (a run registers only its own)

    names = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    groups = [(g.name, c.name or c.callback.__name__) for g in app.registered_groups
              for c in g.typer_instance.registered_commands if c.callback]  # fmt: skip
    return [(), *((n.replace("_", "-"),) for n in names), *(g for g in groups if g[0])]


@pytest.mark.parametrize("command", _help_screens(), ids=" ".join)
def test_help_has_no_markup_debris_and_keeps_its_tokens_whole(
    command: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: no escaped brackets (Typer's '\\[required]'), no line over 80 columns, and
    no value cut at a hyphen or inside its '[default: …]'."""
    monkeypatch.setenv("COLUMNS", "80")
    result = run_cli(*command, "--help")
    assert result.code == 0, result.stderr
    text = result.stdout
    assert "\\[" not in text
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for line in lines:
        assert not line.rstrip().endswith(("-", "[default:")), line


def test_each_command_is_registered_by_the_module_the_table_names() -> None:
    """A run imports only its command's module (whichgpu.cli.COMMAND_MODULES): the table
    names every command, and the module that defines it."""
    from whichgpu.cli import COMMAND_MODULES, app, register

    register([])
    found = {(c.name or c.callback.__name__): c.callback.__module__
             for c in app.registered_commands if c.callback}  # fmt: skip
    found |= {g.name: "whichgpu.cli.catalog" for g in app.registered_groups if g.name}
    assert {name: f"whichgpu.cli.{module}" for name, module in COMMAND_MODULES.items()} == found


def test_fit_for_one_gpu_answers_for_it_first() -> None:
    """Issue 49, item 4: ``fit --gpu X`` says first whether X holds the job, its memory
    against X's, at the micro-batch it states; X's row leads the table."""
    result = run_cli("fit", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--task", "qlora",
                     "--gpu", "rtx 4060 ti 16gb")  # fmt: skip
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"RTX 4060 Ti 16GB: fits, \d+\.\d of 16\.0 GiB \(micro-batch \d+\)",
                        lines[0])  # fmt: skip
    table = lines.index(next(line for line in lines if "Which GPUs hold it" in line))
    rows = [line for line in lines[table + 1 :] if line.strip() and "──" not in line]
    assert "RTX 4060 Ti 16GB" in rows[1]  # after the header


def test_help_starts_with_what_every_question_needs() -> None:
    """Issue 49, item 2: recommend's help lists the job (task, model, size) first and the
    expert knobs last, each group under its heading."""
    out = run_cli("recommend", "--help").stdout
    headings = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert headings[1:] == ["The job:", "Its shape:", "Limits and ranking:",
                            "Precision and recipe:", "Expert settings:", "Options:"]  # fmt: skip
    assert out.index("--task") < out.index("--model") < out.index("--tokens") < out.index("--vp")
    assert out.index("Expert settings:") < out.index("--tp-overlap")


def test_a_family_name_reads_as_its_most_rented_variant_and_says_so() -> None:
    """Issue 49, item 3: one policy for a family name (``h100`` silently meant the SXM while
    ``v100`` was ambiguous): the variant most offers rent, and a line saying which and
    naming the others; an exact name says nothing."""
    result = run_cli("show", "v100", "--json")
    assert result.code == 0 and json.loads(result.stdout)["gpu"]["id"] == "v100-sxm2-16gb"
    assert re.fullmatch(r"whichgpu: v100 read as the NVIDIA V100 SXM2 16GB, the variant most "
                        r"offers rent \(\d+ of \d+\); name v100-sxm2-32gb for another\n",
                        result.stderr)  # fmt: skip
    h100 = run_cli("show", "h100", "--json")
    assert "h100 read as the NVIDIA H100 SXM" in h100.stderr and "h100-pcie or h100-nvl" in (
        h100.stderr
    )
    assert run_cli("show", "h100-sxm", "--json").stderr == ""


def test_a_variant_with_no_row_reads_as_its_twin_and_says_so() -> None:
    """Issues 47 and 49: ``show a10g`` and ``show "rtx pro 6000 server"`` resolve. Neither
    has published tensor rates of its own, so each reads as the GPU whose chip, memory and
    bandwidth it shares (AWS's A10G as the A10, the Server Edition as the Workstation
    Edition), and the answer says so and what it means; the JSON carries the same line, and
    a recommend on the name runs on the twin."""
    for typed, twin in (("a10g", "a10"), ("rtx pro 6000 server", "rtx-pro-6000-blackwell"),
                        ("A10G", "a10")):  # fmt: skip
        result = run_cli("show", typed, "--json")
        assert result.code == 0, result.stderr
        assert json.loads(result.stdout)["gpu"]["id"] == twin
        assert result.stderr.startswith(f"whichgpu: {typed} read as the NVIDIA ")
        assert "its own tensor rates are not published" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    doc = json.loads(run_cli("estimate", "-m", "llama-3.1-8b", "--gpu", "a10g", "--request-rate",
                             "1", "--json").stdout)  # fmt: skip
    assert doc["read_as"][0]["typed"] == "a10g" and doc["read_as"][0]["others"] == []
    assert doc["read_as"][0]["gpu"] == "a10"


def test_a_model_named_where_a_gpu_is_asked_for_is_said_to_be_one() -> None:
    """'whichgpu show deepseek-ai/DeepSeek-R1' answered 'unknown GPU …; closest matches:
    rtx-3080, rtx-3060-12gb, rtx-3090-ti' for a Llama id: a model's name in a GPU's place
    is said to be a model, with where to ask about it (show, compare, the API and the page
    resolve it in one place: models.resolve_gpu); a GPU's typo keeps its matches."""
    for name in ("deepseek-ai/DeepSeek-R1", "meta-llama/Llama-3.1-8B-Instruct"):
        result = run_cli("show", name)
        assert result.code == 2 and "names the model" in result.stderr
        assert "'whichgpu fit'" in result.stderr and "closest" not in result.stderr
    compared = run_cli("compare", "a100", "llama-3.1-8b")
    assert compared.code == 2 and "names the model Llama 3.1 8B" in compared.stderr
    typo = run_cli("show", "h10")
    assert typo.code == 2 and "closest matches: h100-sxm" in typo.stderr
    # every command that takes a GPU resolves it there (models.resolve_gpu): estimate and
    # fit's --gpu, recommend's --baseline, mig's --gpu
    for args in (("estimate", "-m", "llama-3.1-8b", "--gpu", "deepseek-r1"),
                 ("fit", "-m", "llama-3.1-8b", "--gpu", "meta-llama/Llama-3.1-8B-Instruct"),
                 ("recommend", "--task", "lora", "-m", "llama-3.1-8b", "--tokens", "1e8",
                  "--baseline", "llama-3.1-8b"),
                 ("mig", "--gpu", "llama-3.1-8b", "-m", "llama-3.1-8b")):  # fmt: skip
        said = run_cli(*args)
        assert said.code == 2 and "names the model" in said.stderr, args
        assert len(said.stderr.strip().splitlines()) == 1
