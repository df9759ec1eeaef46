"""Piped output never wraps: tables printed to a pipe keep every cell on one line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

import shoal
from conftest import TINY
from shoal._console import PIPE_WIDTH, stream_width
from shoal.cli import app

#: Longer than any cell rich could fit in 80 columns next to the other columns.
LONG_SCHEME = "a_scheme_name_long_enough_that_an_eighty_column_table_would_wrap_it"

runner = CliRunner()


def _piped(*args: str, columns: str | None = None) -> str:
    """stdout of ``shoal ARGS`` run in-process into a pipe (not a terminal), with
    COLUMNS unset unless given."""
    res = runner.invoke(app, list(args), env={"COLUMNS": columns, "NO_COLOR": "1"})
    assert res.exit_code in (0, 1), res.stderr
    return res.stdout


def _line_with(out: str, text: str) -> str:
    """The one line of ``out`` that holds all of ``text``."""
    lines = [line for line in out.splitlines() if text in line]
    assert len(lines) == 1, f"{text!r} is not intact on one line of:\n{out}"
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("console") / "s"
    sweep = {
        "name": "wide",
        "scenario": {"topology": {"hosts": 4}, "workload": {"flows": 10}},
        "schemes": {LONG_SCHEME: {"switch.marking.cutoff.k": "200KB"}},
    }
    shoal.sweep(sweep, jobs=1, progress=False, store=path)
    return path


def test_results_table_does_not_wrap_in_a_pipe(store: Path) -> None:
    row = _line_with(_piped("results", "list", str(store)), LONG_SCHEME)
    assert "ok" in row and "small_p99" not in row  # the whole row, not a fragment
    assert "small_mean_fct_ns" in _line_with(_piped("results", "list", str(store)), "loss_rate")


def test_advise_tables_do_not_wrap_in_a_pipe(tmp_path: Path) -> None:
    _line_with(_piped("advise", "chip"), "Broadcom Trident 3 (BCM56870, X7)")
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY)
    out = _piped("advise", "check", str(scenario), "--set", "switch.marking.cutoff.k=1KB")
    row = _line_with(out, "k-below-transport-minimum")
    assert "the link underflows after each window cut and throughput is lost" in row


def test_columns_is_respected(store: Path) -> None:
    out = _piped("results", "list", str(store), columns="100")
    assert max(len(line) for line in out.splitlines()) <= 100
    assert LONG_SCHEME not in out  # folded to fit, as asked


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_stream_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")  # colour in a CI log is still not a terminal
    assert stream_width(_Stream(tty=False)) == PIPE_WIDTH
    assert stream_width(_Stream(tty=True)) is None  # the terminal decides
    monkeypatch.setenv("COLUMNS", "132")
    assert stream_width(_Stream(tty=False)) == 132
    assert stream_width(_Stream(tty=True)) == 132
