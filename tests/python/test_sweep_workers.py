"""The local worker processes of a sweep: a script without a main guard, a worker
killed mid-run, and workers of a killed sweep."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import shoal

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

#: Three long runs (~0.5 s each) then three tiny ones, on 8 hosts.
SLOW_THEN_FAST: dict[str, Any] = {
    "name": "slow_then_fast",
    "scenario": {"topology": {"hosts": 8}, "workload": {"cdf": "websearch"}},
    "axes": {"workload.flows": [1000, 20], "seeds": [1, 2, 3]},
}


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _workers(parent: int) -> list[int]:
    """Pids of the worker processes whose parent is ``parent`` (any child process but a
    multiprocessing resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None or int(fields[1]) != parent:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return found


def _cpu_s(pid: int) -> float:
    fields = _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _wait_for(what: str, condition: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
    return value


def test_script_without_main_guard_runs_once(tmp_path: Path) -> None:
    # As the README shows it: no `if __name__ == "__main__":`; workers must not run it.
    marker = tmp_path / "body_ran"
    script = tmp_path / "plain.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            import shoal

            with open({str(marker)!r}, "a") as fh:
                fh.write("ran\\n")
            df = shoal.sweep(
                {{"scenario": {{"topology": {{"hosts": 4}}, "workload": {{"flows": 10}}}},
                 "axes": {{"seeds": [1, 2, 3]}}}},
                jobs=2, progress=False, store={str(tmp_path / "store")!r},
            )
            print(list(df["status"]))
            """
        )
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['ok', 'ok', 'ok']", proc.stderr
    assert marker.read_text() == "ran\n"


def test_killed_worker_fails_only_its_run(tmp_path: Path) -> None:
    result: dict[str, Any] = {}

    def run() -> None:
        result["df"] = shoal.sweep(SLOW_THEN_FAST, jobs=2, progress=False, store=tmp_path / "s")

    thread = threading.Thread(target=run)
    thread.start()
    try:
        first = _wait_for("two workers", lambda: sorted(_workers(os.getpid())) or None)
        # Mid-run: more CPU time than starting Python takes, less than a long run.
        victim = _wait_for("a busy worker", lambda: next((p for p in first if _cpu_s(p) > 0.3), 0))
        os.kill(victim, signal.SIGKILL)
    finally:
        thread.join(timeout=60)
    df = result["df"]
    assert len(df) == 6
    failed = df[df["status"] != "ok"]
    assert len(failed) == 1, df[["status", "error"]]
    assert "worker process died (signal 9" in failed["error"].iloc[0]
    # The others finished, some on a fresh worker started after the kill.
    store = shoal.Store(tmp_path / "s")
    pids = {store.meta(k)["pid"] for k in df.loc[df["status"] == "ok", "key"]}  # type: ignore[index]
    assert victim not in pids and pids - set(first)
    assert not _workers(os.getpid())  # all closed at the end


def test_workers_exit_when_the_sweep_is_killed(tmp_path: Path) -> None:
    script = (
        "import shoal, sys; "
        f"shoal.sweep({SLOW_THEN_FAST!r}, jobs=2, progress=False, store=sys.argv[1])"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "s")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        workers = _wait_for(
            "two workers", lambda: len(_workers(proc.pid)) == 2 and _workers(proc.pid)
        )
        _wait_for("a busy worker", lambda: any(_cpu_s(p) > 0.3 for p in workers))
    finally:
        proc.kill()  # the sweep's main process only, not its process group
        proc.wait()
    started = time.monotonic()
    _wait_for("the workers to exit", lambda: not any(map(_alive, workers)), timeout=5)
    assert time.monotonic() - started < 3
    # Nobody holds the sweep's stdout any more.
    assert proc.stdout is not None and proc.stdout.read() == b""
