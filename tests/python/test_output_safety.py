"""Shoal never deletes, truncates or replaces what it did not write, whatever output path
it is given, and an interrupted write leaves the old results or the new ones, whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import shoal
from conftest import TINY, run_cli

pytestmark = pytest.mark.filterwarnings("ignore::shoal.ShoalWarning")


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links as their target text) with its content."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = os.readlink(path).encode()
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding a user's files: the scenario, notes, a folder of their own,
    a link; it is the current directory."""
    (tmp_path / "tiny.toml").write_text(TINY)
    (tmp_path / "notes.txt").write_text("my notes")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("chapter 1")
    (tmp_path / "link").symlink_to(tmp_path / "mine")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("out", [".", "", "..", "notes.txt", "mine", "link", "tiny.toml", "/"])
def test_run_refuses_to_replace_what_is_not_a_run(
    capsys: pytest.CaptureFixture[str], workdir: Path, out: str
) -> None:
    before = _tree(workdir)
    code, _, err = run_cli(capsys, "run", "tiny.toml", "--quiet", "--out", out)
    assert code == 2, err
    assert any(why in err for why in ("refusing", "empty", "must name a new directory")), err
    assert "Traceback" not in err
    assert _tree(workdir) == before


def test_api_refuses_before_simulating(workdir: Path) -> None:
    before = _tree(workdir)
    for out in ["notes.txt", "mine", ".", ""]:
        with pytest.raises(OSError, match="refusing|empty|must name"):
            shoal.run(workdir / "tiny.toml", out=out)
    assert _tree(workdir) == before


def test_a_run_directory_with_the_users_files_added_is_kept(workdir: Path) -> None:
    shoal.run("tiny.toml", out="r")
    (workdir / "r" / "analysis.ipynb").write_text("{}")
    before = _tree(workdir)
    with pytest.raises(OSError, match="holds other files"):
        shoal.run("tiny.toml", out="r", set=["run.seed=2"])
    assert _tree(workdir) == before


def test_own_outputs_are_replaced(workdir: Path) -> None:
    shoal.run("tiny.toml", out="r")
    shoal.run("tiny.toml", out="r", set=["run.seed=2"])
    assert shoal.load("r").scenario["run"]["seed"] == 2
    (workdir / "empty").mkdir()
    shoal.run("tiny.toml", out="empty")
    assert shoal.load("empty").summary["flows"]["total"] == 20
    assert not [p for p in workdir.iterdir() if p.name.startswith(".")]


def test_trace_replaces_only_a_trace(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    before = _tree(workdir)
    for out in ["tiny.toml", "notes.txt", "mine", "/dev/null"]:
        code, _, err = run_cli(capsys, "trace", "tiny.toml", "--out", out)
        assert code == 2 and "refusing" in err, (out, err)
    assert _tree(workdir) == before
    assert run_cli(capsys, "trace", "tiny.toml", "--out", "t.csv")[0] == 0
    first = (workdir / "t.csv").read_text()
    assert run_cli(capsys, "trace", "tiny.toml", "--out", "t.csv", "--seed", "2")[0] == 0
    assert (workdir / "t.csv").read_text() != first
    assert first.startswith("id,src,dst,bytes,start_ns,priority\n")


def test_figures_replace_only_figures(workdir: Path) -> None:
    import matplotlib.pyplot as plt

    from shoal import plot

    (workdir / "fig.png").write_bytes(b"\x89PNG my own figure")
    fig = plt.figure()
    fig.add_subplot().plot([0, 1], [0, 1])
    with pytest.raises(OSError, match="refusing"):
        plot.save(fig, workdir / "fig.png")
    assert (workdir / "fig.png").read_bytes() == b"\x89PNG my own figure"
    written = plot.save(fig, workdir / "plots" / "fig", formats=["png", "pdf", "svg"])
    again = plot.save(fig, workdir / "plots" / "fig", formats=["png", "pdf", "svg"])
    assert written == again
    assert [p.read_bytes() for p in written] == [p.read_bytes() for p in again]
    plt.close(fig)


def _killed_mid_run(scenario: Path, out: Path, delay_s: float) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoal", "run", str(scenario), "--quiet", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay_s)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_a_killed_rewrite_leaves_old_or_new_results(tmp_path: Path) -> None:
    """Kill ``shoal run`` at instants spread over its whole life, writing included: the
    run directory always loads whole, as the old run or the new one."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(TINY.replace("flows = 20", "flows = 3000"))
    out = tmp_path / "r"
    started = time.perf_counter()
    shoal.run(scenario, out=out, set=["run.seed=7"])
    old = shoal.load(out).flows
    whole = time.perf_counter() - started + 0.4  # and the interpreter's start
    for i in range(1, 7):
        _killed_mid_run(scenario, out, whole * (0.5 + i / 10))
        result = shoal.load(out)
        seed = result.scenario["run"]["seed"]
        assert seed in (1, 7)
        if seed == 7:
            assert result.flows.equals(old)
        assert len(result.flows) == 3000
    # What the killed runs left is tidied by the next write to the same place.
    shoal.run(scenario, out=out)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".r.")]


def test_demo_refuses_a_users_directory(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    before = _tree(workdir)
    code, _, err = run_cli(capsys, "demo", "--quiet", "--out", "mine")
    assert code == 2 and "refusing" in err and "Traceback" not in err
    assert _tree(workdir) == before
