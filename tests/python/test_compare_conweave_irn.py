"""validation/compare_conweave_irn.py without ConWeave's simulator: the topology, flow file
and configuration it writes for the reference, the FCT file it reads back, the IRN it
gives Shoal, and its argument errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import shoal

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_conweave_irn as cw  # noqa: E402


def test_the_topology_is_the_references_leaf_spine(tmp_path: Path) -> None:
    lines = cw.topology_text().splitlines()
    assert lines[0] == "144 16 192"  # nodes, switches, links
    assert lines[1].split() == [str(n) for n in range(128, 144)]
    links = [tuple(map(int, line.split()[:2])) for line in lines[2:]]
    assert all(line.split()[2:] == ["100Gbps", "1000ns", "0"] for line in lines[2:])
    assert [(h, 128 + h // 16) for h in range(128)] == links[:128]
    assert sorted(links[128:]) == [(t, s) for t in range(128, 136) for s in range(136, 144)]
    # Shoal runs on it: a packet across racks crosses four links of 1 us.
    path = tmp_path / "leaf_spine_128_100G_OS2.txt"
    path.write_text(cw.topology_text())
    flows = shoal.run(
        {
            "topology": {"kind": "file", "path": str(path)},
            "workload": {"pattern": "incast", "senders": "0", "receiver": 127, "size": "1KB"},
        }
    ).flows
    assert 4_000 < flows["fct_ns"].iloc[0] < 5_000


def test_the_irn_window_is_the_references_bdp() -> None:
    # network-load-balance.cc: the longest path's 2 x 4 x 1 us plus one 1,000 B payload's
    # serialization at each of its 4 links, at 100 Gbps.
    rtt_s = 2 * 4 * 1e-6 + 4 * 1000 * 8 / 100e9
    assert round(100e9 * rtt_s / 8) == cw.IRN_BDP_BYTES


def test_the_flow_file_and_the_fct_file_name_the_same_flows(tmp_path: Path) -> None:
    trace = pd.DataFrame(
        {
            "src": [5, 5, 7, 5],
            "dst": [9, 10, 5, 9],
            "bytes": [1000, 20000, 300, 4000],
            "start_ns": [0, 10, 10, 2500],
        }
    )
    flows = tmp_path / "flows.txt"
    cw.write_flows(flows, trace)
    lines = flows.read_text().splitlines()
    assert lines[0] == "4"
    assert lines[1:3] == ["5 9 3 1000 2.000000000", "5 10 3 20000 2.000000010"]
    # The reference numbers a host's flows by source port from 10,000 in file order; its
    # FCT file lists them as they finish.
    fct_file = tmp_path / "fct.txt"
    fct_file.write_text(
        "7 5 10000 100 300 2000000010 900 800\n"
        "5 9 10002 101 4000 2000002500 4000 3500\n"
        "5 9 10000 100 1000 2000000000 1500 1200\n"
    )
    fct, ideal = cw.read_fct(fct_file, trace)
    assert list(fct[[0, 2, 3]]) == [1500, 900, 4000]
    assert list(ideal[[0, 2, 3]]) == [1200, 800, 3500]
    assert pd.isna(fct[1]), "flow 1 did not finish"


@pytest.mark.parametrize(("mode", "pfc", "irn"), [("irn", 0, 1), ("pfc", 1, 0)])
def test_the_configuration_sets_each_mode(tmp_path: Path, mode: str, pfc: int, irn: int) -> None:
    path = cw.write_config(tmp_path, tmp_path / "t.txt", tmp_path / "f.txt", mode, 2, 2.5)
    keys = dict(line.split(" ", 1) for line in path.read_text().splitlines())
    assert (keys["ENABLE_PFC"], keys["ENABLE_IRN"]) == (str(pfc), str(irn))
    assert keys["BUFFER_SIZE"] == "2" and keys["LB_MODE"] == "0" and keys["CC_MODE"] == "1"
    assert keys["FLOWGEN_STOP_TIME"] == "2.500000"
    kmax = keys["KMAX_MAP"].split()
    assert (
        kmax[0] == "6" and dict(zip(kmax[1::2], kmax[2::2], strict=True))["100000000000"] == "400"
    )


def test_shoal_runs_the_references_irn() -> None:
    incast = {"workload.pattern": "incast", "workload.senders": "0-2", "workload.receiver": 3}
    star = {"topology.kind": "star", "topology.hosts": 4}
    pairs = {**cw.MODES["irn"], **star, **incast, "workload.cdf": "websearch"}
    with pytest.warns(shoal.ShoalWarning):  # the trace's keys, unused by an incast
        overrides = [f"{key}={value}" for key, value in pairs.items()]
        resolved = shoal.run(cw.SCENARIO, set=overrides).summary["scenario"]["rdma"]
    assert resolved["loss_recovery"]["resend"] == "unsacked"
    assert resolved["loss_recovery"]["rto_low_below"] == 5
    assert resolved["window"] in ("104000B", "104KB")


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--load", "1.5"], "--load"), (["--fan-in", "-1"], "--fan-in"), (["--runs", "0"], "--runs")],
)
def test_bad_arguments_exit_2(args: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        cw.main(["--conweave", "/nonexistent", *args])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_reference_is_named(tmp_path: Path, capsys) -> None:
    assert cw.main(["--conweave", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "network-load-balance is missing" in capsys.readouterr().err
