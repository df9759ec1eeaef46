"""BFC as a user runs it (``[switch.flow_control] kind = "bfc"``): long RDMA flows into
one receiver share its link fairly and fill it, with nothing lost, the pauses travelling
as filter frames."""

from __future__ import annotations

from pathlib import Path

import pytest

import shoal
from shoal._summary import check_summary

RATE = 100e9
PACKET = 1036  # RDMA: 1,000 B of payload and 36 B of headers
FLOW_BYTES = 1_000_000


def bfc_incast(tmp_path: Path, senders: int, **bfc: object) -> shoal.RunResult:
    hosts = senders + 1
    scenario = {
        "topology": {"kind": "star", "hosts": hosts, "link_rate": "100Gbps", "link_delay": "1us"},
        "switch": {
            "buffer": "12MB",
            "ports_per_pool": hosts,
            "reserved": "0B",
            "queues": 35,
            "scheduler": {"kind": "dwrr", "quantum": "1KB", "strict_queues": 2},
            "flow_control": {"kind": "bfc", **bfc},
        },
        "rdma": {"cc": {"kind": "none"}},
        "workload": {
            "pattern": "incast",
            "senders": f"1-{senders}",
            "receiver": 0,
            "size": f"{FLOW_BYTES}B",
            "transport": "rdma",
        },
    }
    return shoal.run(scenario, out=tmp_path / f"bfc-{senders}")


def test_long_flows_share_the_link_fairly_and_fill_it(tmp_path: Path) -> None:
    senders = 8
    result = bfc_incast(tmp_path, senders)
    assert result.summary["packets"]["dropped"] == 0
    flows = result.flows
    assert len(flows) == senders and flows["finish_ns"].notna().all()
    # Under fair sharing every flow finishes when the link has carried all of them.
    packets = FLOW_BYTES // 1000
    all_bytes_ns = senders * packets * PACKET * 8 / RATE * 1e9
    fct_ns = flows["finish_ns"] - flows["start_ns"]
    assert fct_ns.max() == pytest.approx(all_bytes_ns + 2_000, rel=0.02)
    assert fct_ns.min() >= 0.95 * fct_ns.max(), "a fair share finishes every flow together"
    # The pauses that kept the buffer small travelled as filter frames.
    check_summary(result.summary)  # the scheme's counters fit the summary's schema
    bfc = result.summary["counters"]["bfc"]
    assert bfc["pauses"] > 0 and bfc["resumes"] > 0 and bfc["filter_frames_sent"] > 0
