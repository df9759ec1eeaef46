"""Shared helpers: tiny scenarios and a subprocess runner for the ``shoal`` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

#: PFC as the DSH paper's static headroom (SIH): PAUSE at the threshold T on the bytes
#: outside headroom, no hysteresis.
SIH = {
    "kind": "pfc",
    "pause_at": "threshold",
    "headroom_admission": "threshold",
    "threshold_counts_arrival": False,
    "xon_offset": "1B",
    "xon_floor": "1B",
}

#: A scenario small enough to simulate in milliseconds: 20 RPC-sized flows on 4 hosts.
TINY = """\
[topology]
kind = "star"
hosts = 4
link_rate = "100Gbps"
link_delay = "1us"

[workload]
pattern = "all_to_all"
cdf = "google_rpc"
load = 0.3
flows = 20

[run]
seed = 1
"""

#: Three senders each send 64 KB to host 0 at time 0.
#: Three incast rounds of 8 x 64 KB, 2 ms apart, into host 0 of a 9-host star (a mapping).
#: A 2-to-1 RDMA incast under DCQCN with RED marking: marked packets' ACKs reach every
#: controller.
RDMA_MARKED_INCAST = {
    "topology": {"kind": "star", "hosts": 3},
    "switch": {
        "pool_size": "4MB",
        "reserved": "0B",
        "ecn": {"at": "dequeue", "non_ect": "pass"},
        "marking": {"red": {"kmin": "100KB", "kmax": "400KB", "pmax": 0.2}},
    },
    "workload": {
        "pattern": "incast",
        "senders": "1-2",
        "receiver": 0,
        "size": "2MB",
        "transport": "rdma",
    },
}

INCAST_ROUNDS = {
    "topology": {"kind": "star", "hosts": 9, "link_rate": "10Gbps", "link_delay": "1us"},
    "switch": {"pool_size": "4MB"},
    "transport": {"cc": "dctcp", "init_cwnd": 10},
    "workload": {
        "pattern": "incast",
        "receiver": 0,
        "size": "64KB",
        "start": "0s",
        "period": "2ms",
        "repeats": 3,
    },
}

INCAST = """\
[topology]
kind = "star"
hosts = 4

[workload]
pattern = "incast"
senders = "1-3"
receiver = 0
size = "64KB"
"""

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """Path of the tiny scenario file, in a fresh directory."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write ``text`` to ``tmp_path/name`` and return the path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def shoal_cli(tmp_path: Path) -> CliRunner:
    """Run ``python -m shoal ARGS...`` in ``tmp_path`` (a real process, real exit code)."""

    def invoke(
        *args: str | os.PathLike[str], cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, COLUMNS="120", NO_COLOR="1")
        return subprocess.run(
            [sys.executable, "-m", "shoal", *map(str, args)],
            cwd=cwd or tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return invoke


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """The ``shoal`` CLI in this process: (exit code, stdout, stderr)."""
    from shoal.cli import main

    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err
