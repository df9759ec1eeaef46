"""``run.occupancy_cdf`` (``occupancy.parquet``, ``Result.occupancy``) and the pause time
read from PFC's frame log (``shoal.reproduce.bfc.paused_ns_by_link``), checked against
queue trajectories worked out by hand, not against Shoal's own output:

- Two line-rate senders of N packets each into one receiver through a lossless-sized
  lossy switch: the queue rises by one packet per packet time for N packet times and
  drains for as long, a triangle, so over the busy period its time-weighted
  distribution is uniform on [0, N x wire]; before and after, the switch is empty.
- The same two senders under PFC: the bottleneck passes one link's worth, so each
  sender transmits half of the time the two flows take to cross it, and is paused for
  the other half, up to what the pool holds when they finish.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import shoal
from shoal.reproduce.bfc import (
    directed_links,
    paused_ns_by_link,
    pooled_occupancy,
    pooled_quantile,
    time_at_least,
)

GBPS = 100
#: bytes per ns at 100 Gbps
BYTES_PER_NS = GBPS / 8
PACKETS = 1000

TWO_TO_ONE = {
    "topology": {"kind": "star", "hosts": 3, "link_rate": f"{GBPS}Gbps", "link_delay": "1us"},
    "switch": {"pool_size": "16MB", "reserved": "0B", "alpha": 1000},
    "rdma": {"cc": {"kind": "none"}, "window": "0B"},
    "workload": {
        "pattern": "incast",
        "receiver": 0,
        "senders": "1-2",
        "size": "1000000B",  # set per test from the MTU
        "transport": "rdma",
    },
    "run": {"occupancy_cdf": True},
}


def _two_to_one(**run: object) -> tuple[dict, int, int]:
    """The scenario with flows of PACKETS full packets, its wire bytes per packet and
    the flow's wire bytes."""
    resolved = shoal.run(
        {**TWO_TO_ONE, "workload": {**TWO_TO_ONE["workload"], "size": "1000B"}}
    ).scenario["rdma"]
    mtu, header = int(resolved["mtu"]), int(resolved["header"])
    scenario = json.loads(json.dumps(TWO_TO_ONE))
    scenario["workload"]["size"] = f"{PACKETS * mtu}B"
    scenario["run"].update(run)
    return scenario, mtu + header, PACKETS * (mtu + header)


def test_a_two_to_one_burst_gives_the_triangle_s_uniform_occupancy(tmp_path: Path) -> None:
    """F(x) = (W - B) / W + (B / W) x / peak for 0 < x < peak, with B = 2 x flow / C the
    busy period, peak = flow the wire bytes of one flow, W the run: within two packets of
    the triangle's staircase and the ACKs passing through."""
    scenario, wire, flow = _two_to_one()
    result = shoal.run(scenario, out=tmp_path / "run")
    occupancy = result.occupancy
    assert occupancy is not None and [*occupancy.columns] == [
        c for c, _ in shoal.table_schemas()["occupancy"]
    ]
    assert set(occupancy["switch"]) == {0} and set(occupancy["pool"]) == {0}
    window_ns = result.summary["duration_ps"] / 1e3
    assert occupancy["time_ns"].sum() == pytest.approx(window_ns, rel=1e-12)
    assert occupancy["cdf"].iloc[-1] == pytest.approx(1.0, abs=1e-12)
    assert occupancy["cdf"].is_monotonic_increasing
    assert (occupancy["min_bytes"] <= occupancy["max_bytes"]).all()
    assert (
        occupancy["min_bytes"].iloc[1:].to_numpy() > occupancy["max_bytes"].iloc[:-1].to_numpy()
    ).all()
    # The exact largest occupancy (the summary's) lies in the last bucket.
    peak_seen = result.summary["pools"][0]["max"]
    assert occupancy["min_bytes"].iloc[-1] <= peak_seen <= occupancy["max_bytes"].iloc[-1]
    assert peak_seen == pytest.approx(flow, abs=3 * wire)
    busy_ns = 2 * flow / BYTES_PER_NS
    for fraction in (0.1, 0.25, 0.5, 0.75, 0.9):
        row = occupancy[occupancy["max_bytes"] >= fraction * flow].iloc[0]
        x = row["max_bytes"]
        theory = (window_ns - busy_ns) / window_ns + busy_ns / window_ns * x / flow
        assert row["cdf"] == pytest.approx(theory, abs=2 * wire / flow), fraction
    # The run directory holds the same table.
    pd.testing.assert_frame_equal(shoal.load(tmp_path / "run").occupancy, occupancy)


def test_the_window_counts_only_its_part_of_the_run() -> None:
    """With ``occupancy_until`` halfway up the ramp, the window is [0, until]: its time
    adds up to it, and the largest bucket is about half the peak."""
    _, wire, flow = _two_to_one()
    rise_ns = flow / BYTES_PER_NS
    scenario, _, _ = _two_to_one(occupancy_until=f"{int(rise_ns / 2)}ns")
    occupancy = shoal.run(scenario).occupancy
    assert occupancy is not None
    assert occupancy["time_ns"].sum() == pytest.approx(int(rise_ns / 2), rel=1e-12)
    # Up to one link delay and a packet late: the ramp starts when the first packet is in.
    top = occupancy["max_bytes"].iloc[-1]
    assert flow / 2 - (BYTES_PER_NS * 3_000 + 3 * wire) < top <= flow / 2 * 1.02 + wire


def test_runs_without_the_setting_write_nothing_new(tmp_path: Path) -> None:
    scenario = json.loads(json.dumps(TWO_TO_ONE))
    del scenario["run"]
    result = shoal.run(scenario, out=tmp_path / "run")
    assert result.occupancy is None
    assert not (tmp_path / "run" / "occupancy.parquet").exists()
    assert "occupancy_cdf" not in result.scenario["run"]
    assert (
        "occupancy_cdf" not in json.loads((tmp_path / "run" / "scenario.json").read_text())["run"]
    )


@pytest.mark.parametrize(
    ("run", "key", "words"),
    [
        ({"occupancy_until": "1ms"}, "run.occupancy_until", "occupancy_cdf"),
        ({"occupancy_cdf": True, "occupancy_until": "0s"}, "run.occupancy_until", "positive"),
        ({"occupancy_cdf": "yes"}, "run.occupancy_cdf", ""),
    ],
)
def test_bad_settings_name_the_key(run: dict, key: str, words: str) -> None:
    scenario = json.loads(json.dumps(TWO_TO_ONE))
    scenario["run"] = run
    with pytest.raises(shoal.ScenarioError) as caught:
        shoal.run(scenario)
    assert key in str(caught.value) and words in str(caught.value)


def test_pfc_pauses_each_of_two_line_rate_senders_half_of_the_time() -> None:
    """Two senders of 10,000 packets under PFC into one link: over the bottleneck's busy
    time B = 2 x flow / C, each sender transmits flow / C and is paused for the rest,
    less the idle time after it finished while the pool drained (at most pool / C),
    plus the packet each PAUSE finds on the wire (it ends its packet before it stops:
    at most one packet time per PAUSE)."""
    pool = 200_000
    scenario = {
        "topology": {"kind": "star", "hosts": 3, "link_rate": f"{GBPS}Gbps", "link_delay": "1us"},
        "switch": {"pool_size": f"{pool}B", "reserved": "0B", "flow_control": {"kind": "pfc"}},
        "rdma": {"cc": {"kind": "none"}, "window": "0B"},
        "workload": {
            "pattern": "incast",
            "receiver": 0,
            "senders": "1-2",
            "size": "10000000B",
            "transport": "rdma",
        },
    }
    result = shoal.run(scenario)
    rdma = result.scenario["rdma"]
    packets = 10_000_000 // int(rdma["mtu"])
    flow = packets * (int(rdma["mtu"]) + int(rdma["header"]))
    busy_ns = 2 * flow / BYTES_PER_NS
    assert result.pfc is not None and result.summary["packets"]["dropped"] == 0
    paused = paused_ns_by_link(result.pfc, 0.0, busy_ns)
    packet_ns = (int(rdma["mtu"]) + int(rdma["header"])) / BYTES_PER_NS
    for sender in (1, 2):
        fraction = paused[("host", sender, 0)] / busy_ns
        frames = result.pfc[(result.pfc["node_kind"] == "host") & (result.pfc["node"] == sender)]
        pauses = int(frames["pause"].sum())
        low = 0.5 - pool / BYTES_PER_NS / busy_ns
        high = 0.5 + pauses * packet_ns / busy_ns
        assert low <= fraction <= high, (sender, fraction, low, high)
    # Over the whole run the log's paused time is the core's own tally.
    end_ns = result.summary["duration_ps"] / 1e3
    whole = paused_ns_by_link(result.pfc, 0.0, end_ns)
    ports = result.pfc_ports
    assert ports is not None
    for _, row in ports[ports["pauses_received"] > 0].iterrows():
        link = (row["node_kind"], row["node"], row["port"])
        assert whole[link] == pytest.approx(row["paused_ns"], abs=1e-6)


def test_pause_time_of_a_hand_made_log() -> None:
    """Two classes on one link: the link is paused while either is; repeats change
    nothing; a pause in force at the window's end counts to the end; the window clips."""
    log = pd.DataFrame(
        {
            "time_ns": [10.0, 20.0, 30.0, 40.0, 50.0, 90.0, 100.0],
            "node_kind": ["host"] * 7,
            "node": [1] * 7,
            "port": [0] * 7,
            "class": [3, 5, 3, 3, 5, 3, 3],
            "pause": [True, True, True, False, False, True, True],
        }
    )
    assert paused_ns_by_link(log, 0.0, 120.0)[("host", 1, 0)] == pytest.approx(40 + 30)
    assert paused_ns_by_link(log, 25.0, 95.0)[("host", 1, 0)] == pytest.approx(25 + 5)
    with pytest.raises(ValueError, match="ends before it starts"):
        paused_ns_by_link(log, 5.0, 1.0)


def test_pooled_occupancy_weighs_switches_equally_and_quantiles_are_bucket_edges() -> None:
    """Two pools over the same window: one always at 0, one half the time in [64, 64]
    and half in [1000, 1015]: pooled, half the time at 0, a quarter in each."""
    one = pd.DataFrame(
        {"switch": [0], "pool": [0], "min_bytes": [0], "max_bytes": [0], "time_ns": [100.0]}
    )
    two = pd.DataFrame(
        {
            "switch": [1, 1],
            "pool": [0, 0],
            "min_bytes": [64, 1000],
            "max_bytes": [64, 1015],
            "time_ns": [50.0, 50.0],
        }
    )
    pooled = pooled_occupancy(pd.concat([one, two]))
    assert pooled["cdf"].tolist() == pytest.approx([0.5, 0.75, 1.0])
    assert [pooled_quantile(pooled, q) for q in (0.5, 0.51, 0.75, 0.99)] == [0, 64, 64, 1015]
    with pytest.raises(ValueError, match="q must be"):
        pooled_quantile(pooled, 0.0)
    assert time_at_least(pooled, 64) == pytest.approx(0.5)
    assert time_at_least(pooled, 65) == time_at_least(pooled, 1000) == pytest.approx(0.25)
    assert time_at_least(pooled, 1001) == 0.0  # the bucket straddling 1001 is left out


def test_directed_links_of_t1_and_t2() -> None:
    """T1: 128 host NICs, 8 ToRs x (16 + 8) ports, 8 spines x 8 ports; T2: 64, 4 x 24, 8 x 4."""
    t1 = {"kind": "leaf_spine", "leaves": 8, "spines": 8, "hosts_per_leaf": 16}
    t2 = {"kind": "leaf_spine", "leaves": 4, "spines": 8, "hosts_per_leaf": 16}
    assert directed_links({"topology": t1}) == 128 + 8 * 24 + 8 * 8 == 384
    assert directed_links({"topology": t2}) == 64 + 4 * 24 + 8 * 4
    assert np.isfinite(directed_links({"topology": t2}))


def test_the_same_run_writes_the_same_bytes(tmp_path: Path) -> None:
    scenario, _, _ = _two_to_one(occupancy_until="50us")
    for name in ("a", "b"):
        shoal.run(scenario, out=tmp_path / name)
    first, second = ((tmp_path / n / "occupancy.parquet").read_bytes() for n in ("a", "b"))
    assert first == second
