"""Hostile files, caches and outputs (a security review's findings): a named pipe or a device
where a file is expected, a failed write, a cloud name that is a path, a corrupt price cache,
numbers and dates that are not. Each is one line (an error and exit code 2, or a warning and
the answer), at once; nothing whichgpu writes is left half-written."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import FIXTURES, Result, run_cli
from whichgpu.catalog import Catalog
from whichgpu.catalog.userprices import date_problem, parse_price_file, parse_skypilot_vms
from whichgpu.errors import CatalogError, InvalidInput
from whichgpu.files import read_regular, write_atomic

DAY = date(2026, 11, 29)  # conftest's WHICHGPU_TODAY
LORA = ("recommend", "--task", "lora", "--model", "llama-2-7b", "--tokens", "1e8")
#: A test that blocks (a named pipe opened for reading) is stopped by this alarm, not hung.
ALARM_S = 10
#: The refusals are checked before anything is read: well under a second each.
PROMPT_S = 1.0


@pytest.fixture(autouse=True)
def _bounded() -> Iterator[None]:
    """Every test here ends within :data:`ALARM_S` seconds, even one that blocks."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"blocked for {ALARM_S} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(ALARM_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def one_line_error(result: Result, expected: str) -> None:
    """Exit code 2, nothing on stdout, one line on stderr holding ``expected``."""
    assert result.code == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("whichgpu: error: ")
    assert expected in result.stderr, result.stderr


def timed(*args: str) -> Result:
    """``run_cli(*args)``, asserted to return within :data:`PROMPT_S`."""
    started = time.perf_counter()
    result = run_cli(*args)
    assert time.perf_counter() - started < PROMPT_S, args
    return result


# named pipes, devices, directories ---------------------------------------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.toml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("args", "path_at"),
    [
        (("recommend", "-f", "{fifo}"), "{fifo}"),
        (("show", "a100", "--prices", "{fifo}"), "{fifo}"),
        (("show", "a100", "--skypilot-catalog", "{fifo}"), "{fifo}"),
        (("fit", "--model", "{fifo_json}"), "{fifo_json}"),
        (("mig", "-f", "{fifo}"), "{fifo}"),
    ],
)
def test_a_named_pipe_as_an_input_file_is_one_line_at_once(
    fifo: Path, args: tuple[str, ...], path_at: str
) -> None:
    fifo_json = fifo.with_name("config.json")
    os.mkfifo(fifo_json)
    names = {"fifo": str(fifo), "fifo_json": str(fifo_json)}
    result = timed(*(arg.format(**names) for arg in args))
    one_line_error(result, f"{path_at.format(**names)}: is a named pipe, not a regular file")


@pytest.mark.parametrize(
    "args",
    [
        ("recommend", "-f", "/dev/zero"),
        ("show", "a100", "--prices", "/dev/zero"),
        ("show", "a100", "--skypilot-catalog", "/dev/zero"),
    ],
)
def test_a_device_as_an_input_file_is_one_line_at_once(args: tuple[str, ...]) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    one_line_error(timed(*args), "/dev/zero: is a device, not a regular file")


def test_a_directory_as_a_workload_file_is_one_line(tmp_path: Path) -> None:
    one_line_error(timed("recommend", "-f", str(tmp_path)), "is a directory, not a regular file")


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_the_config_naming_a_pipe_or_device_is_one_line_for_every_command(
    tmp_path: Path, fifo: Path, monkeypatch: pytest.MonkeyPatch, special: str
) -> None:
    named = str(fifo) if special == "fifo" else special
    config = tmp_path / "config.toml"
    config.write_text(f"prices = [{json.dumps(named)}]\n")
    monkeypatch.setenv("WHICHGPU_CONFIG", str(config))
    kind = "a named pipe" if special == "fifo" else "a device"
    for args in (("show", "a100"), ("gpus",), LORA):
        one_line_error(timed(*args), f"{named}: is {kind}, not a regular file")


def test_the_config_file_itself_a_pipe_is_one_line(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WHICHGPU_CONFIG", str(fifo))
    one_line_error(timed("show", "a100"), f"names {fifo}, which is not a file")


def test_read_regular_reads_past_a_size_of_zero_but_never_past_the_limit(tmp_path: Path) -> None:
    """``st_size`` is not trusted: /proc files say 0 and hold text; a limit still holds."""
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc here")
    assert os.stat(status).st_size == 0
    assert read_regular(status, 1 << 20).startswith(b"Name:")
    with pytest.raises(InvalidInput) as caught:
        read_regular(status, 16)
    assert caught.value.code == "file_over_limit"
    assert caught.value.message() == (
        "/proc/self/status: the file holds more than 16 bytes; at most 16 are read"
    )
    # a regular file over the limit is refused by its size, before it is read
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 100)
    with pytest.raises(InvalidInput) as caught:
        read_regular(big, 99)
    assert caught.value.message() == f"{big}: the file is 100 bytes; at most 99 are read"
    assert read_regular(big, 100) == b"x" * 100


def test_a_prices_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_bytes(b"gpu,price_usd_per_h\nt4,0.3\xff\n")
    one_line_error(timed("show", "t4", "--prices", str(path)), f"{path}: not UTF-8 text")


# writes: whole or not at all ----------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An empty folder of its own (conftest puts a config file in ``tmp_path``)."""
    path = tmp_path / "out"
    path.mkdir()
    return path


def test_write_atomic_replaces_whole_and_keeps_the_mode(folder: Path) -> None:
    path = folder / "out.png"
    path.write_bytes(b"old")
    path.chmod(0o640)
    write_atomic(path, b"new contents")
    assert path.read_bytes() == b"new contents"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in folder.iterdir()] == ["out.png"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder / "out.png"
    path.write_bytes(b"old")

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("whichgpu.files.os.fsync", full)
    with pytest.raises(InvalidInput) as caught:
        write_atomic(path, b"new", field="plot")
    assert caught.value.code == "unwritable"
    assert caught.value.params == {"path": str(path), "reason": "No space left on device"}
    assert path.read_bytes() == b"old"
    assert [p.name for p in folder.iterdir()] == ["out.png"]


@pytest.fixture
def old_png(folder: Path) -> tuple[Path, bytes]:
    pytest.importorskip("matplotlib")
    path = folder / "chart.png"
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # an existing image, not ours
    path.write_bytes(data)
    return path, data


def test_a_plot_that_cannot_be_written_leaves_the_old_file_intact(
    old_png: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, data = old_png

    def fail(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("whichgpu.files.os.replace", fail)
    result = run_cli(*LORA, "--plot", str(path))
    one_line_error(result, f"--plot: cannot write {path}: No space left on device")
    assert path.read_bytes() == data
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_a_plot_that_fails_while_drawing_leaves_the_old_file_intact(
    old_png: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old code saved straight into the file: a failure midway left it truncated."""
    from matplotlib.figure import Figure

    path, data = old_png

    def half_then_fail(self: Figure, target: object, **kwargs: object) -> None:
        target.write(b"\x89PNG half")  # type: ignore[attr-defined]
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(Figure, "savefig", half_then_fail)
    result = run_cli(*LORA, "--plot", str(path))
    one_line_error(result, f"--plot: cannot write {path}: Input/output error")
    assert path.read_bytes() == data


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_plot_into_a_read_only_folder_leaves_the_old_file_intact(
    old_png: tuple[Path, bytes],
) -> None:
    path, data = old_png
    path.parent.chmod(0o555)
    try:
        result = run_cli(*LORA, "--plot", str(path))
    finally:
        path.parent.chmod(0o755)
    one_line_error(result, f"--plot: cannot write {path}: Permission denied")
    assert path.read_bytes() == data


# standard output: full, or closed by its reader ---------------------------------------------


def _whichgpu(*args: str, stdout: int | IO[bytes]) -> subprocess.Popen[bytes]:
    """``whichgpu ARGS`` in a process of its own (its stdout a real file or pipe), in this
    test's environment, its output buffered as a user's is."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.Popen(
        [sys.executable, "-m", "whichgpu", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=environment,
    )


@pytest.mark.parametrize(
    "args",
    [LORA, (*LORA, "--json"), (*LORA, "--export", "skypilot"), ("gpus",), ("gpus", "--json")],
)
def test_a_full_output_is_one_line_and_exit_code_2(args: tuple[str, ...]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "wb") as full, _whichgpu(*args, stdout=full) as process:
        _, stderr = process.communicate(timeout=ALARM_S)
    assert process.returncode == 2
    assert stderr.decode() == (
        "whichgpu: error: cannot write to standard output: No space left on device\n"
    )


@pytest.mark.parametrize("args", [("gpus",), ("gpus", "--json"), (*LORA, "--json")])
def test_a_reader_that_leaves_early_is_no_traceback(args: tuple[str, ...]) -> None:
    """``whichgpu gpus | head -1``: the pipe closes before the answer is written."""
    with _whichgpu(*args, stdout=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader is gone before anything is written
        stderr = process.stderr.read()
        process.wait(timeout=ALARM_S)
    assert stderr == b""
    assert process.returncode == 1


# prices update: a cloud is a name, never a path ---------------------------------------------

SKYPILOT_URL = (FIXTURES / "skypilot" / "v8").resolve().as_uri()


@pytest.mark.parametrize(
    ("cloud", "expected"),
    [
        ("../../x", "--cloud: unknown value '../../x'; valid: aws, azure, cudo"),
        ("/tmp/x", "--cloud: unknown value '/tmp/x'"),
        ("lambda/../..", "--cloud: unknown value 'lambda/../..'"),
        ("Lambda", "(did you mean lambda?)"),
        ("", "--cloud: unknown value ''"),
    ],
)
def test_a_cloud_that_is_not_a_skypilot_cloud_is_refused_before_fetching(
    cloud: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fetch(url: str, timeout_s: float) -> bytes:
        raise AssertionError(f"fetched {url}")

    monkeypatch.setattr("whichgpu.catalog.pricefeed._fetch", no_fetch)
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    result = run_cli("prices", "update", "--url", SKYPILOT_URL, "--cloud", cloud)
    one_line_error(result, expected)
    assert sorted(tmp_path.rglob("*")) == before  # no cache, no folder, nowhere


def test_a_file_url_naming_a_pipe_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "lambda").mkdir()
    os.mkfifo(tmp_path / "lambda" / "vms.csv")
    result = timed("prices", "update", "--url", tmp_path.as_uri(), "--cloud", "lambda")
    one_line_error(result, "is a named pipe, not a regular file (nothing changed")


# a corrupt price cache: one warning, the cloud left out, the command answers ----------------


@pytest.fixture
def snapshot() -> Path:
    """A snapshot of the recorded lambda and runpod catalogs; its folder."""
    result = run_cli(
        "prices", "update", "--url", SKYPILOT_URL, "--cloud", "lambda", "--cloud", "runpod"
    )
    assert result.code == 0, result.stderr
    return Path(os.environ["WHICHGPU_CACHE"]) / "prices"


def _without_digests(folder: Path) -> None:
    """Make the snapshot one written before digests were recorded."""
    meta = json.loads((folder / "snapshot.json").read_text())
    del meta["sha256"]
    (folder / "snapshot.json").write_text(json.dumps(meta))


def _answer_with_one_warning(expected: str) -> set[str]:
    """``show h100 --json`` answers, with one warning line holding ``expected``; the
    sources of its prices."""
    result = timed("show", "h100-sxm", "--json")
    assert result.code == 0, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("whichgpu: warning: ")
    assert expected in result.stderr, result.stderr
    return {p["source"] for p in json.loads(result.stdout)["gpu"]["prices"]}


def _status() -> tuple[dict[str, object], str]:
    """``prices status --json``'s snapshot, and the text ``prices status`` prints."""
    doc = json.loads(run_cli("prices", "status", "--json").stdout)["snapshot"]
    return doc, run_cli("prices", "status").stdout


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("not-utf8", "lambda/vms.csv: not UTF-8 text; the snapshot's lambda offers are left out"),
        ("truncated", "lambda/vms.csv: changed since it was fetched (its SHA-256 is not"),
        ("truncated-undigested", "lambda/vms.csv, row 1: not a SkyPilot vms.csv: missing"),
        ("deleted", "lambda/vms.csv: cannot read it: No such file or directory; the snapshot's"),
        ("fifo", "lambda/vms.csv: is a named pipe, not a regular file; the snapshot's lambda"),
    ],
)
def test_a_damaged_cached_catalog_is_one_warning_and_left_out(
    snapshot: Path, damage: str, expected: str
) -> None:
    path = snapshot / "lambda" / "vms.csv"
    if damage == "not-utf8":
        _without_digests(snapshot)  # else its digest tells first
        path.write_bytes(path.read_bytes().replace(b"A100", b"A1\xff\xfe0", 1))
    elif damage.startswith("truncated"):
        if damage.endswith("undigested"):
            _without_digests(snapshot)
        path.write_bytes(path.read_bytes()[:30])
    elif damage == "deleted":
        path.unlink()
    else:
        path.unlink()
        os.mkfifo(path)
    sources = _answer_with_one_warning(expected)
    assert "skypilot-lambda-snapshot" not in sources
    assert "skypilot-runpod-snapshot" in sources
    doc, text = _status()  # the truth, not the counts recorded when fetched
    assert doc["offers"] == {"runpod": 38}
    assert list(doc["left_out"]) == ["lambda"]  # type: ignore[call-overload]
    assert text.endswith(": runpod (38). Left out, unreadable: lambda.\n")


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (b"{", "snapshot.json: not a price snapshot (Expecting property name"),
        (b"\xff\xfe{}", "snapshot.json: not UTF-8 text; the price snapshot is ignored"),
        (
            b'{"fetched": "2026-11-29", "url": "x", "clouds": {"../../etc": 1}}',
            "snapshot.json: not a price snapshot (a cloud named '../../etc')",
        ),
        (
            b'{"fetched": "2999-01-01", "url": "x", "clouds": {"lambda": 1}}',
            "not a price snapshot (fetched: 2999-01-01 is in the future (today is 2026-11-29))",
        ),
        (b"[]", "snapshot.json: not a price snapshot (not a JSON object)"),
    ],
)
def test_a_corrupt_snapshot_record_is_one_warning_and_the_shipped_prices(
    snapshot: Path, meta: bytes, expected: str
) -> None:
    (snapshot / "snapshot.json").write_bytes(meta)
    sources = _answer_with_one_warning(expected)
    assert not any(s.endswith("-snapshot") for s in sources)
    status = run_cli("prices", "status")
    assert status.stdout.startswith("No price snapshot: the shipped prices are in use")
    assert status.stderr.count("\n") == 1 and "the price snapshot is ignored" in status.stderr


def test_a_sound_snapshot_reads_without_a_warning(snapshot: Path) -> None:
    result = run_cli("show", "h100-sxm", "--json")
    assert result.code == 0 and result.stderr == ""
    doc, _text = _status()
    assert doc["offers"] == {"lambda": 20, "runpod": 38} and doc["left_out"] == {}


# numbers and dates that are not -------------------------------------------------------------

VMS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice\n"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("x,A6000,nan,1,", "AcceleratorCount: must be a finite number (got 'nan')"),
        ("x,A6000,inf,1,", "AcceleratorCount: must be a finite number (got 'inf')"),
        ("x,A6000,1e999,1,", "AcceleratorCount: must be a finite number (got '1e999')"),
        ("x,A6000,-1,1,", "AcceleratorCount must be a number above 0, to 64"),
        ("x,A6000,1e300,1,", "AcceleratorCount must be a number above 0, to 64"),
        ("x,A6000,1,nan,", "Price: must be a finite number (got 'nan')"),
        ("x,A6000,1,1e300,", "Price: must be a number from 0 to 500 (got '1e300')"),
        ("x,A6000,2,1,-inf", "SpotPrice: must be a finite number (got '-inf')"),
    ],
)
def test_a_skypilot_row_of_bad_numbers_is_one_error_naming_the_row(
    catalog: Catalog, row: str, message: str
) -> None:
    with pytest.raises(CatalogError) as caught:
        parse_skypilot_vms(VMS_HEADER + row + "\n", "lambda/vms.csv", catalog, "s", DAY)
    assert caught.value.message() == f"lambda/vms.csv, row 2: {message}"


def test_a_skypilot_row_priced_at_zero_or_less_is_no_offer(catalog: Catalog) -> None:
    text = VMS_HEADER + "x,A6000,1,-3,\ny,A6000,1,0.8,-1\n"
    found = parse_skypilot_vms(text, "lambda/vms.csv", catalog, "s", DAY)
    assert [(p.instance, p.market, p.price_usd_per_h) for p in found.prices] == [
        ("y", "on-demand", 0.8)
    ]


def test_a_skypilot_catalog_row_of_nan_through_the_cli_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "lambda" / "vms.csv"
    path.parent.mkdir()
    path.write_text(VMS_HEADER + "gpu_1x_a6000,A6000,nan,0.8,\n")
    one_line_error(
        timed("show", "a100", "--skypilot-catalog", str(path)),
        f"{path}, row 2: AcceleratorCount: must be a finite number (got 'nan')",
    )


@pytest.mark.parametrize(
    ("as_of", "problem"),
    [
        ("2999-99-99", "must be a date like 2026-11-29, 2026-11 or 2026 (got '2999-99-99')"),
        ("2026-02-30", "must be a date like 2026-11-29, 2026-11 or 2026 (got '2026-02-30')"),
        ("yesterday", "must be a date like 2026-11-29, 2026-11 or 2026 (got 'yesterday')"),
        ("2026-12-01", "2026-12-01 is in the future (today is 2026-11-29)"),
        ("2026-12", "2026-12 is in the future (today is 2026-11-29)"),
        ("2999-01-01", "2999-01-01 is in the future (today is 2026-11-29)"),
        ("1970-01-01", "1970-01-01 is before 2000-01-01: not a date of a price"),
    ],
)
def test_a_price_date_that_is_not_a_real_past_date_is_refused(
    catalog: Catalog, as_of: str, problem: str
) -> None:
    for text, path, row in (
        (f"gpu,price_usd_per_h,as_of\nt4,0.3,{as_of}\n", "p.csv", 2),
        (f'[[price]]\ngpu = "t4"\nprice_usd_per_h = 0.3\nas_of = "{as_of}"\n', "p.toml", 1),
    ):
        with pytest.raises(CatalogError) as caught:
            parse_price_file(text, path, catalog, "user-prices-1", DAY, DAY)
        assert caught.value.message() == f"{path}, row {row}: as_of: {problem}"


@pytest.mark.parametrize(
    ("as_of", "kept"),
    [
        ("2026-11-30", "2026-11-30"),
        ("2026-11", "2026-11"),
        ("2000", "2000"),
        ("undated", "undated"),
    ],
)
def test_price_dates_that_are_real_are_kept(catalog: Catalog, as_of: str, kept: str) -> None:
    """A day of clock skew is allowed; a month or a year counts from its first day."""
    text = f"gpu,price_usd_per_h,as_of\nt4,0.3,{as_of}\n"
    (price,) = parse_price_file(text, "p.csv", catalog, "user-prices-1", DAY, DAY).prices
    assert price.as_of == kept


def test_a_toml_date_is_read_as_a_date(catalog: Catalog) -> None:
    text = '[[price]]\ngpu = "t4"\nprice_usd_per_h = 0.3\nas_of = 2026-10-01\n'
    (price,) = parse_price_file(text, "p.toml", catalog, "user-prices-1", DAY, DAY).prices
    assert price.as_of == "2026-10-01"
    future = text.replace("2026-10-01", "2027-10-01")
    with pytest.raises(CatalogError, match=r"row 1: as_of: 2027-10-01 is in the future"):
        parse_price_file(future, "p.toml", catalog, "user-prices-1", DAY, DAY)


def test_date_problem_codes() -> None:
    assert date_problem("2026-11-29", DAY) is None
    codes = [
        problem.code if (problem := date_problem(value, DAY)) else None
        for value in ("2999-99-99", "2026-11-31", "2026-11-31x", "2026-12-01", "1999")
    ]
    assert codes == ["not_a_date", "not_a_date", "not_a_date", "date_in_future", "date_too_old"]


def test_an_inline_config_price_dated_in_the_future_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[price]]\ngpu = "t4"\nprice_usd_per_h = 0.11\nas_of = "2999-99-99"\n')
    monkeypatch.setenv("WHICHGPU_CONFIG", str(config))
    one_line_error(
        timed("show", "t4"),
        f"{config}, row 1: as_of: must be a date like 2026-11-29, 2026-11 or 2026 "
        "(got '2999-99-99')",
    )


@pytest.mark.parametrize(
    ("price", "problem"),
    [
        ("nan", "price_usd_per_h: expected `float` > 0.0 (got 'nan')"),
        ("inf", "price_usd_per_h: expected `float` <= 500.0 (got 'inf')"),
        ("1e400", "price_usd_per_h: number out of range (got '1e400')"),
        ("-0.5", "price_usd_per_h: expected `float` > 0.0"),
        ("0", "price_usd_per_h: expected `float` > 0.0"),
        ("501", "price_usd_per_h: expected `float` <= 500.0"),
    ],
)
def test_a_price_that_is_not_a_sane_positive_number_is_refused(
    catalog: Catalog, price: str, problem: str
) -> None:
    text = f"gpu,price_usd_per_h\nt4,{price}\n"
    with pytest.raises(CatalogError) as caught:
        parse_price_file(text, "p.csv", catalog, "user-prices-1", DAY, DAY)
    assert caught.value.message().startswith(f"p.csv, row 2: {problem}")


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("big.csv", f'gpu,price_usd_per_h,note\na100,0.5,"{"n" * 200_000}"\n',
         "big.csv, row 2: not CSV: field larger than field limit (131072)"),
        ("many.csv", "gpu,price_usd_per_h\n" + "a100,0.5\n" * 5_001,
         "many.csv, row 5,002: more than 5,000 rows"),
        ("esc.csv", 'gpu,price_usd_per_h,provider\na100,0.5,"evil\x1b[31mRED"\n',
         "esc.csv, row 2: holds the control character U+001B"),
        ("osc.toml", '[[price]]\ngpu = "a100"\nprice_usd_per_h = 0.5\n'
         'note = "x\\u001b]0;PWN\\u0007"\n', "osc.toml, row 1: holds the control character"),
        ("c1.csv", "gpu,price_usd_per_h,instance\na100,0.5,x\x9b31m\n",
         "c1.csv, row 2: holds the control character U+009B"),
    ],
)  # fmt: skip
def test_a_price_file_past_the_csv_limits_or_holding_controls_is_one_line(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    """A cell past the csv module's limit, more rows than a price file states, or a control
    character (a terminal runs ESC/CSI/OSC sequences in a provider's name as commands) is one
    line, at once: the 200,000-row file took 31 s to show."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    result = run_cli("show", "a100", "--prices", str(path))
    assert time.perf_counter() - started < PROMPT_S * 3
    one_line_error(result, expected)


def test_a_skypilot_catalog_holding_an_escape_is_refused(catalog: Catalog) -> None:
    """A SkyPilot catalog comes from the network (``prices update``): an escape sequence in
    an instance type would reach the terminal."""
    text = ("InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
            "evil\x1b]0;PWN\x07,A100,1,1.5,,us\n")  # fmt: skip
    with pytest.raises(CatalogError, match="U\\+001B"):
        parse_skypilot_vms(text, "runpod/vms.csv", catalog, "s", DAY)


def test_a_family_name_reads_as_the_variant_its_price_went_to(tmp_path: Path) -> None:
    """``a100`` is the A100 80GB SXM, the variant most offers rent; a price file pricing it
    replaces its on-demand offers, leaving it fewer than the 40GB: ``show a100`` still shows
    the card the user priced, as the price file read it."""
    path = tmp_path / "ok.csv"
    path.write_text("gpu,price_usd_per_h\na100,0.5\n")
    result = run_cli("show", "a100", "--prices", str(path), "--json")
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["gpu"]["id"] == "a100-80gb-sxm"
    mine = [p["price_usd_per_h"] for p in doc["gpu"]["prices"] if p["source"].startswith("user")]
    assert mine == [0.5], doc["gpu"]["prices"]


def test_a_price_file_modified_in_the_future_dates_its_prices_today(tmp_path: Path) -> None:
    """A file's date stands for the prices that give none: never later than today."""
    path = tmp_path / "prices.csv"
    path.write_text("gpu,price_usd_per_h,market\nt4,0.123,spot\n")
    far = time.mktime((2999, 1, 1, 0, 0, 0, 0, 0, -1))
    os.utime(path, (far, far))
    result = run_cli("show", "t4", "--prices", str(path), "--json")
    assert result.code == 0, result.stderr
    prices = json.loads(result.stdout)["gpu"]["prices"]
    (mine,) = [p for p in prices if p["price_usd_per_h"] == 0.123]
    assert mine["as_of"] == "2026-11-29" and mine["age_months"] == 0
