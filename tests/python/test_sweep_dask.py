"""The dask.distributed backend end to end: a real scheduler and worker, in processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import shoal
from shoal.reproduce import reproduce
from shoal.store import Store

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install '.[cluster]')"
)

SWEEP = {
    "name": "on_dask",
    "scenario": {
        "topology": {"kind": "star", "hosts": 8},
        "workload": {"cdf": "websearch", "flows": 20},
    },
    "schemes": {
        "k200": {"switch.marking.cutoff.k": "200KB"},
        "k720": {"switch.marking.cutoff.k": "720KB"},
    },
    "axes": {"workload.load": [0.3, 0.6], "seeds": [1, 2]},
}


def _dask_cli() -> list[str]:
    exe = shutil.which("dask")
    return [exe] if exe else [sys.executable, "-m", "dask"]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dask scheduler and one worker (2 threads), each its own process, on 127.0.0.1."""
    root = tmp_path_factory.mktemp("dask")
    info = root / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    logs = [open(root / "scheduler.log", "w"), open(root / "worker.log", "w")]  # noqa: SIM115
    procs = [
        subprocess.Popen(
            [
                *_dask_cli(),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            cwd=root,
            env=env,
            stdout=logs[0],
            stderr=subprocess.STDOUT,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not info.is_file():
            assert procs[0].poll() is None, (root / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the dask scheduler did not start"
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(
            subprocess.Popen(
                [
                    *_dask_cli(),
                    "worker",
                    address,
                    "--nthreads",
                    "2",
                    "--no-nanny",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--local-directory",
                    str(root),
                ],
                cwd=root,
                env=env,
                stdout=logs[1],
                stderr=subprocess.STDOUT,
            )
        )
        with distributed.Client(address, timeout="30s") as client:
            client.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


def test_sweep_on_a_dask_cluster(scheduler: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    df = shoal.sweep(SWEEP, cluster=scheduler, progress=False, store=store)
    assert len(df) == 8 and (df["status"] == "ok").all()
    db = Store(store)
    for key in df["key"]:
        meta = db.meta(key)
        assert meta is not None and meta["status"] == "ok"
        assert meta["pid"] != os.getpid()  # simulated by the worker process
    # The same sweep locally: identical keys and results (determinism across backends).
    local = shoal.sweep(SWEEP, jobs=1, progress=False, store=tmp_path / "local")
    assert list(local["key"]) == list(df["key"])
    assert list(local["all_mean_fct_ns"]) == list(df["all_mean_fct_ns"])
    # Re-running on the cluster reuses every run.
    again = shoal.sweep(SWEEP, cluster=scheduler, progress=False, store=store)
    assert again["cached"].all()


def _shoal(cwd: Path, *args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The ``shoal`` CLI in a subprocess, run in ``cwd``, without colours."""
    return subprocess.run(
        [sys.executable, "-m", "shoal", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, NO_COLOR="1", COLUMNS="200"),
    )


def test_cli_sweep_with_cluster_option(scheduler: str, tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(
        "[scenario.topology]\nhosts = 8\n[scenario.workload]\nflows = 10\n"
        '[axes]\n"workload.load" = [0.3, 0.5]\nseeds = [1, 2]\n'
    )
    proc = _shoal(
        tmp_path, "sweep", spec, "--cluster", scheduler, "--store", "st", "-q", "--no-report"
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 runs: 4 ok" in proc.stdout


def test_reproduce_on_a_dask_cluster(scheduler: str, tmp_path: Path) -> None:
    """``shoal reproduce --cluster`` runs a paper experiment's sweep on the cluster: the
    same runs (keys) and numbers as on the local pool, and each run's wall time and
    peak memory recorded."""
    proc = _shoal(
        tmp_path, "reproduce", "dsh/fig14", "--cluster", scheduler, "--store", "st", timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    assert "Shoal vs paper: dsh/fig14 (quick)" in proc.stdout
    on_dask = Store(tmp_path / "st").runs().set_index("key").sort_index()
    assert len(on_dask) == 8 and (on_dask["status"] == "ok").all()
    assert (on_dask["wall_time_s"] > 0).all() and (on_dask["peak_rss_mb"] > 1).all()
    local = reproduce("dsh/fig14", jobs=2, store=tmp_path / "local", progress=False)
    local_runs = local.runs.set_index("key").sort_index()
    assert list(local_runs.index) == list(on_dask.index)
    assert list(local_runs["all_mean_fct_ns"]) == list(on_dask["all_mean_fct_ns"])
    assert (local_runs["peak_rss_mb"] > 1).all()


def test_unreachable_scheduler_is_a_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shoal._sweep

    monkeypatch.setattr(shoal._sweep, "CONNECT_TIMEOUT_S", 2)
    with pytest.raises(shoal.SweepError, match="cannot connect"):
        shoal.sweep(
            {"scenario": {"topology": {"hosts": 8}}, "axes": {"seeds": [1, 2]}},
            cluster="tcp://127.0.0.1:9",
            progress=False,
            store=tmp_path / "s",
        )
