"""DSH as a user runs it (``[switch.flow_control] kind = "dsh"``), against the advisor's
``dsh-burst`` topic: the simulated time to a bursting queue's first PAUSE is the one
``advise.dsh_burst`` gives from DSH's Theorems 1 and 2, for DSH and for PFC's static
headroom (SIH), and port-level frames show up in the frame log as class 8."""

from __future__ import annotations

from pathlib import Path

import pytest

import shoal
from conftest import SIH
from shoal import advise

RATE, DELAY_NS, BUFFER, BURST_NS = 100e9, 100, 5_000_000, 100_000
PACKET = 1036  # RDMA: 1,000 B of payload and 36 B of headers


def first_burst_pause_s(tmp_path: Path, flow_control: dict, n: int, alpha: float) -> float:
    """N hosts send endless line-rate flows to one receiver, N more send 1 MB each to
    another from 100 us: every lossless ingress queue drains at C / N, and each burst
    queue receives at N times that. The switch's buffer is 5 MB whatever the scheme keeps
    of it as headroom (`switch.buffer`), with two lossless classes. Returns the time from
    the burst's first packet at the switch to the switch's first PAUSE toward a burst
    sender."""
    hosts = 2 * n + 2
    scenario = {
        "topology": {
            "kind": "star",
            "hosts": hosts,
            "link_rate": "100Gbps",
            "link_delay": f"{DELAY_NS}ns",
        },
        "switch": {
            "buffer": f"{BUFFER}B",
            "ports_per_pool": hosts,
            "reserved": "0B",
            "alpha": 1000,
            "flow_control": {**flow_control, "alpha": alpha, "classes": [3, 4]},
        },
        "rdma": {"cc": {"kind": "none"}},
        "run": {"stop_time": f"{BURST_NS + 60_000}ns"},
        "workload": {
            "pattern": "long_lived",
            "senders": f"0-{n - 1}",
            "receivers": f"{2 * n}",
            "transport": "rdma",
            "priority": 3,
            "extra": [
                {
                    "pattern": "incast",
                    "senders": f"{n}-{2 * n - 1}",
                    "receiver": 2 * n + 1,
                    "size": "1MB",
                    "start": f"{BURST_NS}ns",
                    "transport": "rdma",
                    "priority": 3,
                }
            ],
        },
    }
    result = shoal.run(scenario, out=tmp_path / f"{flow_control['kind']}-{n}-{alpha}")
    assert result.summary["packets"]["dropped"] == 0
    frames = result.pfc
    to_burst = frames[
        (frames["node_kind"] == "host") & frames["node"].between(n, 2 * n - 1) & frames["pause"]
    ]
    assert len(to_burst), "a burst sender must be paused"
    frame_ns = 64 * 8 / RATE * 1e9
    sent_ns = to_burst["time_ns"].iloc[0] - DELAY_NS - frame_ns
    arrived_ns = BURST_NS + PACKET * 8 / RATE * 1e9 + DELAY_NS
    return (sent_ns - arrived_ns) / 1e9


@pytest.mark.filterwarnings("ignore:.*did not finish")  # endless flows, stopped on purpose
@pytest.mark.parametrize("n, alpha, case", [(4, 1 / 32, "1"), (4, 1 / 4, "2")])
def test_the_first_pause_is_the_advisors(tmp_path: Path, n: int, alpha: float, case: str) -> None:
    """One buffer B for both schemes, as the advisor takes it: DSH keeps one eta per port
    (the star's 2N + 2) of it as insurance, static headroom one per port and lossless
    class (two: queues = 2). Each queue drains at C / N and receives at C: load R = N."""
    ports = 2 * n + 2
    advice = advise.dsh_burst(
        rate="100Gbps",
        delay=f"{DELAY_NS}ns",
        mtu=1514,  # the scenario's largest packet: TCP's 1,460 + 54 B sizes eta
        buffer=BUFFER,
        ports=ports,
        queues=2,
        alpha=alpha,
        congested=n,
        bursting=n,
        load=n,
        drain=RATE / n,
    )
    assert advice.case == case
    dsh = first_burst_pause_s(tmp_path, {"kind": "dsh", "lossless_queues": 2}, n, alpha)
    sih = first_burst_pause_s(tmp_path, SIH, n, alpha)
    assert dsh == pytest.approx(advice.dsh_duration, rel=0.05)
    assert sih == pytest.approx(advice.sih_duration, rel=0.05)


def test_port_level_frames_are_class_8(tmp_path: Path) -> None:
    """Queue- and port-level frames in the log: in a 200 KB pool, T = pool / 16 is at
    most 12.5 KB, below eta (31.9 KB on 1 us links), so X_qoff is 0 and each sender's
    queue PAUSEs its class at its first bytes; the bytes still in flight then (2 x 1 us
    at 100 Gbps, 25 KB) take the port past X_poff = T (``lossless_queues = 1``), and it
    sends a port-level PAUSE, class 8 in the log. Nothing is lost."""
    scenario = {
        "topology": {"kind": "star", "hosts": 9, "link_rate": "100Gbps", "link_delay": "1us"},
        "switch": {
            "pool_size": "200KB",
            "ports_per_pool": 9,
            "reserved": "0B",
            "flow_control": {"kind": "dsh", "lossless_queues": 1, "classes": [0]},
        },
        "rdma": {"cc": {"kind": "none"}},
        "workload": {"pattern": "incast", "receiver": 0, "size": "200KB", "transport": "rdma"},
    }
    result = shoal.run(scenario, out=tmp_path / "run")
    assert result.summary["packets"]["dropped"] == 0
    classes = set(result.pfc.loc[result.pfc["pause"], "class"])
    assert classes == {0, 8}, classes
    ports = result.pfc_ports
    port_level = ports[ports["class"] == 8]
    assert port_level["pauses_sent"].sum() == port_level["pauses_received"].sum() > 0


@pytest.mark.parametrize("kind, headrooms_per_port", [("dsh", 1), ("pfc", 7)])
def test_the_tomahawk_preset_splits_16_mib_as_the_paper(
    tmp_path: Path, kind: str, headrooms_per_port: int
) -> None:
    """``preset = "dsh_tomahawk"`` on 32 hosts at 100 Gbps, 2 us (the paper's section V-A):
    the pool's shared part is 16 MiB less 3 KB for each of 8 queues of 32 ports and the
    headroom, one eta per port for DSH, one per port and lossless class (7) for PFC, eta =
    2(C x D + MTU) + 3840 B with the scenario's largest packet (TCP's 1,514 B)."""
    scenario = {
        "preset": "dsh_tomahawk",
        "topology": {"kind": "star", "hosts": 32, "link_rate": "100Gbps", "link_delay": "2us"},
        "switch": {"flow_control": kind},
        "rdma": {"cc": {"kind": "none"}},
        "workload": {"pattern": "incast", "receiver": 0, "senders": "1-4", "size": "100KB"},
    }
    result = shoal.run(scenario, out=tmp_path / kind)
    eta = 2 * (100e9 / 8 * 2e-6 + 1514) + 3840
    expected = 16 * 2**20 - 32 * 8 * 3000 - 32 * headrooms_per_port * eta
    (pool,) = result.summary["pools"]
    assert pool["size"] == expected
    assert result.scenario["rdma"]["ack_priority"] == 0
    assert result.scenario["switch"]["scheduler"]["strict_queues"] == 1
