"""validation/compare_n3dc.py without ns3-datacenter: the reference's input files it writes
for the PFC comparison (``--pfc``) and for the DCQCN one, the PFC trace it reads, and the
PFC scenario itself (the reference's buffer and PFC, as validation/README.md derives them).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import shoal
from shoal._run import _resolve

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_n3dc  # noqa: E402
from compare_ns3 import UserError  # noqa: E402

#: The keys of ns3-datacenter's config-burst.txt that the script replaces or must keep
#: (a stand-in: the reference's files stay outside this repository).
TEMPLATE = """\
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
TOPOLOGY_FILE examples/topology.txt
FLOW_FILE examples/flow.txt
FCT_OUTPUT_FILE mix/fct.txt
PFC_OUTPUT_FILE mix/pfc.txt
SIMULATOR_STOP_TIME 0.2
CC_MODE 3
ACK_HIGH_PRIO 0
ENABLE_TRACE 1
KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600
KMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400
PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2
BUFFER_SIZE 4
"""


@pytest.fixture
def n3dc(tmp_path: Path) -> Path:
    root = tmp_path / "ns-3.39"
    (root / compare_n3dc.TEMPLATE).parent.mkdir(parents=True)
    (root / compare_n3dc.TEMPLATE).write_text(TEMPLATE)
    return root


def scenario(pfc: bool) -> dict:
    import tomllib

    path = compare_n3dc.PFC_SCENARIO if pfc else compare_n3dc.SCENARIO
    return tomllib.loads(path.read_text())


def trace() -> pd.DataFrame:
    return pd.DataFrame(
        {"src": [0, 3], "dst": [12, 15], "bytes": [5985, 72661], "start_ns": [0.0, 1500.25]}
    )


def config(path: Path) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in path.read_text().splitlines() if line)


def test_pfc_inputs_carry_the_reference_buffer_and_marking(n3dc: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    conf = compare_n3dc.n3dc_inputs(out, n3dc, trace(), 16, scenario(True), True, 0.05)
    keys = config(conf)
    # 1 MiB: the reference's ingress pool and lossless egress pool (BUFFER_SIZE MiB).
    assert keys["BUFFER_SIZE"] == "1"
    assert keys["ENABLE_QCN"] == "1" and keys["USE_DYNAMIC_PFC_THRESHOLD"] == "1"
    assert keys["KMIN_MAP"] == "1 100000000000 400"
    assert keys["KMAX_MAP"] == "1 100000000000 1600"
    assert keys["PMAX_MAP"] == "1 100000000000 0.2"
    assert keys["PFC_OUTPUT_FILE"] == str(out / "n3dc_pfc.txt")
    assert keys["ENABLE_TRACE"] == "0" and keys["ACK_HIGH_PRIO"] == "0"
    assert keys["SIMULATOR_STOP_TIME"] == "0.150"  # 0.1 s offset + last start + 0.05 s
    topology = (out / "n3dc_topology.txt").read_text().splitlines()
    assert topology[:2] == ["17 1 1 16", "16"]
    assert topology[2] == "0 16 100000000000.0 1000ns 0"
    flows = (out / "n3dc_flows.txt").read_text().splitlines()
    # Priority group 3, the reference's lossless queue; destination port 100 + index.
    assert flows == ["2", "0 12 3 100 5985 0.100000000", "3 15 3 101 72661 0.100001500"]


def test_without_marking_ecn_is_off_and_dcqcn_mode_is_unchanged(n3dc: Path, tmp_path: Path):
    sc = scenario(True)
    sc["switch"]["marking"] = {}
    conf = compare_n3dc.n3dc_inputs(tmp_path, n3dc, trace(), 16, sc, True)
    assert config(conf)["ENABLE_QCN"] == "0"
    assert config(conf)["KMIN_MAP"].startswith("3 ")  # the template's, untouched
    # The DCQCN comparison: a 32 MB pool rounds to BUFFER_SIZE 32 as before.
    conf = compare_n3dc.n3dc_inputs(tmp_path, n3dc, trace(), 16, scenario(False))
    assert config(conf)["BUFFER_SIZE"] == "32"
    assert config(conf)["ENABLE_QCN"] == "1"
    assert config(conf)["SIMULATOR_STOP_TIME"] == "1.100"


def test_pfc_needs_a_whole_number_of_mib():
    sc = scenario(True)
    assert compare_n3dc.n3dc_buffer_mib(sc, True) == 1
    sc["switch"]["pool_size"] = "1MB"
    with pytest.raises(UserError, match="whole number of MiB"):
        compare_n3dc.n3dc_buffer_mib(sc, True)
    assert compare_n3dc.n3dc_buffer_mib(sc, False) == 1


def test_the_pfc_scenario_resolves_as_the_reference_sets_pfc():
    _, resolved, warnings = _resolve(compare_n3dc.PFC_SCENARIO, None)
    assert warnings == []
    pfc = resolved["switch"]["flow_control"]
    assert pfc["kind"] == "pfc" and pfc["classes"] == [3] and pfc["headroom"] == "3cd"
    assert pfc["alpha"] == 0.125 and pfc["frame_size"] == "31B"
    assert (pfc["xon_offset"], pfc["xon_floor"]) == ("2496B", "1248B")
    assert resolved["switch"]["pool_size"] == "1048576B" and resolved["switch"]["reserved"] == "0B"
    assert resolved["workload"]["priority"] == 3 and resolved["switch"]["ecn"]["non_ect"] == "pass"


def test_the_pfc_trace_is_counted_by_node_kind(tmp_path: Path):
    path = tmp_path / "pfc.txt"
    # time node nodeType ifIndex type: switch 16 sends PAUSE (2) and RESUME (3) to host 5,
    # which receives them (1, 0); host 7 is still paused at the end.
    path.write_text(
        "100 16 1 6 2\n110 5 0 1 1\n300 16 1 6 3\n310 5 0 1 0\n400 16 1 8 2\n410 7 0 1 1\n"
    )
    counts = compare_n3dc.read_n3dc_pfc(path, end_ns=1000)
    assert counts["host"] == {
        "pauses_received": 2,
        "resumes_received": 1,
        "pauses_sent": 0,
        "resumes_sent": 0,
    }
    assert counts["switch"]["pauses_sent"] == 2 and counts["switch"]["resumes_sent"] == 1
    assert counts["paused_ns"] == 200 + 590 and counts["paused_ports"] == 2
    assert compare_n3dc.read_n3dc_pfc(tmp_path / "missing.txt", 0)["paused_ns"] == 0


def test_frames_alike_are_counted_from_the_start(tmp_path: Path):
    run = shoal.run(
        compare_n3dc.PFC_SCENARIO,
        set={
            "workload.pattern": "incast",
            "workload.receiver": 12,
            "workload.senders": "0-7",
            "workload.size": "200KB",
        },
    )
    frames = run.pfc.sort_values(["time_ns", "node"], kind="stable")
    assert len(frames) >= 4
    shoal_dir = tmp_path / "shoal"
    shoal_dir.mkdir()
    frames.to_parquet(shoal_dir / "pfc.parquet")
    offset = round(compare_n3dc.START_OFFSET_S * 1e9)
    lines = [
        f"{round(t) + offset} {node} 0 1 {int(pause)}"
        for t, node, pause in zip(frames.time_ns, frames.node, frames.pause, strict=True)
    ]
    trace_path = tmp_path / "pfc.txt"
    trace_path.write_text("\n".join(lines) + "\n")
    assert compare_n3dc.common_frames(trace_path, shoal_dir) == len(frames)
    lines[2] = lines[2].rsplit(" ", 1)[0] + (" 0" if lines[2].endswith("1") else " 1")
    trace_path.write_text("\n".join(lines) + "\n")
    assert compare_n3dc.common_frames(trace_path, shoal_dir) == 2
