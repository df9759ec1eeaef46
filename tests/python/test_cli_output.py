"""Output that cannot be written: a closed pipe ends the CLI quietly (status 141, as
SIGPIPE ends Unix tools), a full disk with one ``error:`` line; never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import shoal
from conftest import TINY

FULL = Path("/dev/full")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scenario, a run directory and a store of two runs."""
    root = tmp_path_factory.mktemp("output")
    (root / "tiny.toml").write_text(TINY)
    shoal.run(root / "tiny.toml", out=root / "run")
    sweep = {"scenario": shoal.load_scenario(TINY).data, "axes": {"seeds": 2}}
    shoal.sweep(sweep, jobs=1, progress=False, store=root / "store")
    return root


COMMANDS = [
    pytest.param(["--help"], id="help"),
    pytest.param(["run", "tiny.toml", "-q", "--out", "again", "--json"], id="run-json"),
    pytest.param(["run", "tiny.toml", "-q", "--out", "again"], id="run-text"),
    pytest.param(["summarize", "run"], id="summarize"),
    pytest.param(["results", "list", "store", "--format", "csv"], id="results-csv"),
    pytest.param(["results", "query", "store", "select * from flows"], id="results-query"),
]


def _shoal(workdir: Path, args: list[str], stdout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shoal", *args],
        cwd=workdir,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, NO_COLOR="1", COLUMNS="120"),
        timeout=60,
    )


@pytest.mark.parametrize("args", COMMANDS)
def test_closed_pipe_exits_quietly(workdir: Path, args: list[str]) -> None:
    # `shoal ... | head -c1` once head has exited: every write fails with EPIPE.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = _shoal(workdir, args, write_end)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""  # no traceback, no "Exception ignored" at shutdown


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", COMMANDS)
def test_full_disk_is_one_error_line(workdir: Path, args: list[str]) -> None:
    with FULL.open("w") as full:
        proc = _shoal(workdir, args, full.fileno())
    assert proc.returncode == 2
    assert proc.stderr == "error: cannot write output: No space left on device\n"
