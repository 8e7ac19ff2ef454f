"""Issue 18: every answer fits an 80- and a 160-column terminal without cutting a number, a
price range, a date, a URL or a command across lines.

Each command is rendered at its width and at 400 columns, where nothing wraps: a token of
the narrow rendering (a number with its range, a URL, a date) that is only a piece of a
token of the wide one was cut. Goldens keep both widths.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import golden, run_cli

COMMANDS: dict[str, tuple[str, ...]] = {
    "gpus": ("gpus",),
    "show": ("show", "a2000"),
    "compare": ("compare", "a100-80gb-sxm", "rtx-a6000", "rtx-a2000-12gb"),
    "fit": ("fit", "--model", "llama-3.1-8b", "--task", "qlora", "--batch", "2", "--gpu", "a2000"),
    "recommend": ("recommend", "--task", "train", "-m", "llama-2-13b", "--tokens", "2e9",
                  "--catalog", "article"),
    "mig": ("mig", "-m", "llama-3.1-8b", "--quant", "int4", "--replicas", "7"),
}  # fmt: skip

#: Goldens other tests already keep at both widths
GOLDEN = {"recommend": "recommend_train_article"}

#: What must never be cut: URLs, dates, prices and numbers with their ranges and units.
TOKEN = re.compile(
    r"https?://\S+|\d{4}-\d{2}-\d{2}|\$?\d[\d,.]*(?:[–-]\$?\d[\d,.]*)?(?:%|\s?(?:GiB|GB|ms|h)\b)?"
)


WHOLE_LINE = re.compile(r"https?://\S+|sudo nvidia-smi [^\n]+")


def _tokens(text: str) -> set[str]:
    return {match.group(0).rstrip(".,") for match in TOKEN.finditer(text)}


def _render(command: tuple[str, ...], columns: int, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = run_cli(*command)
    assert result.code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("columns", [80, 160])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_answer_fits_its_width_and_keeps_its_tokens_whole(
    name: str, columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _render(COMMANDS[name], columns, monkeypatch)
    whole = _tokens(_render(COMMANDS[name], 400, monkeypatch))
    # a URL or a command longer than the width is printed whole, on a line of its own, so
    # that it can be copied: the only lines allowed past the width
    over = [line for line in text.splitlines() if len(line) > columns]
    assert all(WHOLE_LINE.fullmatch(line.strip()) for line in over), over
    pieces = {
        token
        for token in _tokens(text) - whole
        if any(token in other and token != other for other in whole)
    }
    assert not pieces, f"cut across lines: {sorted(pieces)}"
    golden(f"{GOLDEN.get(name, name)}_{columns}.txt", text)
