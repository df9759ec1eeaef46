"""The capture file (``run.pcap``, ``trace.pcap``) as Wireshark reads it: tshark, when
installed (``apt install tshark``), decodes its RoCEv2 packets with their sequence
numbers, its ECN marks, and its PFC frames."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import shoal

SCENARIO = {
    "topology": {"kind": "star", "hosts": 5, "link_rate": "100Gbps", "link_delay": "1us"},
    "switch": {
        "pool_size": "100KB",
        "flow_control": {"kind": "pfc", "classes": [3]},
        "marking": {"red": {"kmin": "20KB", "kmax": "80KB", "pmax": 0.2}},
        "ecn": {"non_ect": "pass"},
    },
    "workload": {
        "pattern": "incast",
        "senders": "0-3",
        "receiver": 4,
        "size": "200KB",
        "transport": "rdma",
        "priority": 3,
    },
    "run": {"pcap": {"flows": [1], "links": [[0, 5]]}},
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pcap") / "run"
    shoal.run(SCENARIO, out=path)
    return path


def tshark(pcap: Path, *args: str) -> list[str]:
    done = subprocess.run(
        ["tshark", "-r", str(pcap), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def test_the_run_writes_its_capture(run_dir: Path) -> None:
    data = (run_dir / "trace.pcap").read_bytes()
    assert data[:4] == bytes.fromhex("4d3cb2a1"), "nanosecond pcap, little-endian"
    result = shoal.load(run_dir)
    assert result.summary["flows"]["unfinished"] == 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_wireshark_decodes_every_packet(run_dir: Path) -> None:
    """No packet is malformed to Wireshark; flow 1's 200 data packets arrive as RoCEv2
    with PSNs 0 to 199, some marked CE by the switch; host 0's cable carries class-3 PFC
    PAUSEs and RESUMEs, as many as the core counted."""
    pcap = run_dir / "trace.pcap"
    assert tshark(pcap, "-Y", "_ws.malformed || _ws.expert.severity >= error") == []
    fields = ["-T", "fields", "-e", "infiniband.bth.psn", "-e", "ip.dsfield.ecn"]
    rows = tshark(pcap, "-Y", "infiniband.bth.opcode == 4 && ip.src == 10.0.0.2", *fields)
    psns = sorted(int(r.split("\t")[0]) for r in rows)
    assert psns == list(range(200))
    assert any(r.split("\t")[1] == "3" for r in rows), "the incast marks some packets CE"
    pfc = tshark(pcap, "-Y", "macc.opcode == 0x0101 && macc.cbfc.enbv.c3 == 1")
    ports = shoal.load(run_dir).pfc_ports
    host_0 = ports[(ports.node_kind == "host") & (ports.node == 0)]
    frames = int(host_0.pauses_received.sum() + host_0.resumes_received.sum())
    assert len(pfc) == frames > 0
