"""PFC's results as a user reads them: ``Result.pfc`` / ``Result.pfc_ports``, the run
directory's ``pfc.parquet`` and ``pfc_ports.parquet``, the summary's ``pfc`` section and
``shoal summarize``'s PFC line. The totals are checked against an independent pandas
computation from the frame log, and the frames against conservation (every frame sent is
received in a drained run)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import shoal
from conftest import SIH, run_cli

#: The columns of each run table, in order, as the core publishes them.
COLUMNS = {name: tuple(c for c, _ in columns) for name, columns in shoal.table_schemas().items()}

#: Eight RDMA senders at line rate (no congestion control) into host 0 through a 200 KB
#: pool: PFC must pause the senders, and no packet may be lost.
INCAST_PFC = {
    "topology": {"kind": "star", "hosts": 9, "link_rate": "100Gbps", "link_delay": "1us"},
    "switch": {"pool_size": "200KB", "reserved": "0B", "flow_control": {"kind": "pfc"}},
    "rdma": {"cc": {"kind": "none"}},
    "workload": {"pattern": "incast", "receiver": 0, "size": "200KB", "transport": "rdma"},
}


def paused_ns_from_events(events: pd.DataFrame, end_ns: float) -> dict[tuple, float]:
    """Paused time per (node_kind, node, port, class) from the frame log alone: from the
    first PAUSE to the next RESUME, repeats ignored, open pauses closed at ``end_ns``."""
    totals: dict[tuple, float] = {}
    for key, frames in events.groupby(["node_kind", "node", "port", "class"], sort=True):
        since, total = None, 0.0
        for time_ns, pause in zip(frames["time_ns"], frames["pause"], strict=True):
            if pause and since is None:
                since = time_ns
            elif not pause and since is not None:
                total += time_ns - since
                since = None
        totals[key] = total + (end_ns - since if since is not None else 0.0)
    return totals


def test_pfc_tables_agree_with_the_frame_log_and_conserve_frames(tmp_path: Path) -> None:
    result = shoal.run(INCAST_PFC, out=tmp_path / "run")
    pfc, ports, summary = result.pfc, result.pfc_ports, result.summary["pfc"]
    assert pfc is not None and ports is not None
    assert tuple(pfc.columns) == COLUMNS["pfc"] and tuple(ports.columns) == COLUMNS["pfc_ports"]
    assert summary["lossless_drops"] == 0 and result.summary["packets"]["dropped"] == 0
    assert summary["pause_frames_sent"] > 0, "the scenario must make PFC pause"
    assert pfc["time_ns"].is_monotonic_increasing
    # Frames: only the switch sends and only hosts are paused: every sender (hosts 1-8),
    # and the receiver's ACKs too once the pool is nearly full (the dynamic threshold
    # alpha x free falls below one ACK). In a drained run every frame sent was received.
    assert set(ports.loc[ports["pauses_sent"] > 0, "node_kind"]) == {"switch"}
    paused = ports[ports["pauses_received"] > 0]
    assert set(paused["node_kind"]) == {"host"} and set(range(1, 9)) <= set(paused["node"])
    assert ports["pauses_sent"].sum() == ports["pauses_received"].sum() == (pfc["pause"]).sum()
    assert ports["resumes_sent"].sum() == ports["resumes_received"].sum() == (~pfc["pause"]).sum()
    assert summary["pause_frames_sent"] == ports["pauses_sent"].sum()
    assert summary["paused_queues"] == len(paused)
    # Paused time: the log's intervals, computed here, are the table's and the summary's.
    end_ns = result.summary["duration_ps"] / 1e3
    expected = paused_ns_from_events(pfc, end_ns)
    key_columns = ["node_kind", "node", "port", "class"]
    got = dict(zip(map(tuple, paused[key_columns].to_numpy()), paused["paused_ns"], strict=True))
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert abs(got[key] - value) < 1e-6, key
    assert abs(summary["paused_ns"] - sum(expected.values())) < 1e-3
    assert abs(summary["max_paused_ns"] - max(expected.values())) < 1e-6
    # The run directory holds the same tables.
    loaded = shoal.load(tmp_path / "run")
    pd.testing.assert_frame_equal(loaded.pfc, pfc)
    pd.testing.assert_frame_equal(loaded.pfc_ports, ports)


@pytest.mark.filterwarnings("ignore:.*did not finish")  # lost tails: RDMA has no timeout
def test_lossy_runs_have_no_pfc_results(tmp_path: Path) -> None:
    lossy = {**INCAST_PFC, "switch": {"pool_size": "200KB"}}
    result = shoal.run(lossy, out=tmp_path / "run")
    assert result.pfc is None and result.pfc_ports is None
    assert "pfc" not in result.summary
    assert not (tmp_path / "run" / "pfc.parquet").exists()
    assert result.summary["packets"]["dropped"] > 0, "without PFC the same incast loses packets"


def test_summarize_prints_the_pfc_headline(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    result = shoal.run(INCAST_PFC, out=tmp_path / "run")
    code, out, _ = run_cli(capsys, "summarize", tmp_path / "run")
    assert code == 0
    pfc = result.summary["pfc"]
    line = next(line for line in out.splitlines() if line.startswith("PFC:"))
    assert f"{pfc['pause_frames_sent']} PAUSE" in line
    assert "lossless drops 0" in line


def test_ingress_samples_show_the_incast_filling_and_the_headroom_within_eta() -> None:
    """Sampled every 1 us: the senders' (ingress port, class 0) accounts fill, each stays
    within what PFC allows (the threshold is at most alpha x the pool, plus eta of
    headroom), the headroom part is never more than eta, and everything drains."""
    sampled = {**INCAST_PFC, "run": {"sample_interval": "1us"}}
    result = shoal.run(sampled)
    ingress = result.ingress
    assert ingress is not None and tuple(ingress.columns) == COLUMNS["ingress"]
    assert set(ingress["class"]) == {0}
    assert set(range(1, 9)) <= set(ingress["port"])
    eta = 2 * (12_500 + 1_500) + 3_840  # 100 Gbps x 1 us, MTU 1500 B (DSH Eq. 1)
    assert (ingress["headroom_bytes"] <= eta).all()
    assert (ingress["headroom_bytes"] <= ingress["bytes"]).all()
    assert (ingress["bytes"] <= 200_000 / 8 + eta).all()
    assert ingress["headroom_bytes"].max() > 0, "the incast must reach the headroom"
    last = ingress[ingress["time_ns"] == ingress["time_ns"].max()]
    assert (last["bytes"] == 0).all(), "drained at the end"


def test_headroom_episodes_peak_at_a_round_trip_of_surplus_arrivals(tmp_path: Path) -> None:
    """Four RDMA senders at line rate (no congestion control) into one receiver through
    SIH (PAUSE at the threshold): each ingress queue drains at C/4, so once its PAUSE is
    sent it keeps receiving for the PAUSE's trip up plus the trip down of what was on
    the wire (2D, plus a frame and a packet or two of serialization) while it drains a
    quarter of that: its first headroom peak is about (C - C/4) x 2D = 37.5 KB at 100
    Gbps, 2 us, and at most three packets more. ``headroom.parquet`` (and ``Result.headroom``)
    lists each episode's peak; the 20 ns samples of ``ingress.parquet`` within each
    episode never exceed it and come within one packet of it (a packet takes 83 ns)."""
    scenario = {
        "topology": {"kind": "star", "hosts": 5, "link_rate": "100Gbps", "link_delay": "2us"},
        "switch": {
            "pool_size": "2MB",
            "reserved": "0B",
            "alpha": 1000,
            "flow_control": {**SIH, "alpha": 0.0625, "classes": [3]},
        },
        "rdma": {"cc": {"kind": "none"}},
        "run": {"stop_time": "200us", "sample_interval": "20ns"},
        "workload": {
            "pattern": "incast",
            "senders": "0-3",
            "receiver": 4,
            "size": "2MB",
            "transport": "rdma",
            "priority": 3,
        },
    }
    with pytest.warns(shoal.ShoalWarning, match="did not finish"):
        result = shoal.run(scenario, out=tmp_path / "run")
    episodes = result.headroom
    assert episodes is not None and tuple(episodes.columns) == COLUMNS["headroom"]
    assert episodes.equals(pd.read_parquet(tmp_path / "run" / "headroom.parquet"))
    packet, surplus = 1036, 0.75 * 100e9 / 8 * 2 * 2e-6  # 37,500 B
    full = episodes[episodes["peak_bytes"] > packet]
    assert len(full) >= 8 and set(full["port"]) == {0, 1, 2, 3}
    # The first full episode of each queue, while all four send: later ones, with the
    # senders out of phase, peak elsewhere (35-45 KB).
    first = full.groupby("port").head(1)
    assert first["peak_bytes"].between(surplus, surplus + 3 * packet).all(), first
    assert (episodes["headroom_bytes"] == 2 * (100e9 / 8 * 2e-6 + 1514) + 3840).all()
    samples = result.ingress
    for (port, _), group in episodes.groupby(["port", "class"]):
        at = samples[samples["port"] == port]
        start = 0.0
        for end_ns, peak in zip(group["end_ns"], group["peak_bytes"], strict=True):
            seen = at[(at["time_ns"] > start) & (at["time_ns"] <= end_ns)]["headroom_bytes"].max()
            assert peak - packet <= seen <= peak, (port, end_ns, peak, seen)
            start = end_ns
