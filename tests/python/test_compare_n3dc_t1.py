"""validation/compare_n3dc_t1.py without ns3-datacenter: T1 in the reference's topology
format, the buffer and PFC it is given from fig5's scenario, the scenario files Shoal
runs, and the per-bin comparison on synthetic flows.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shoal._run import _resolve
from shoal.reproduce.bfc import ideal_fct_ns
from shoal.reproduce.rdma import n3dc_ideal_fct_ns, read_topology

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_n3dc  # noqa: E402
import compare_n3dc_t1 as t1  # noqa: E402


@pytest.fixture(scope="module")
def fig5() -> dict[str, dict]:
    return t1.fig5_scenarios(t1.SCHEMES)


def test_t1_in_the_reference_format(fig5, tmp_path: Path):
    path = t1.write_t1_topology(tmp_path / "t1.txt", fig5["dcqcn"]["topology"])
    lines = path.read_text().splitlines()
    assert lines[0] == "144 16 8 192"  # 128 hosts + 8 ToRs + 8 spines; 128 + 64 links
    assert lines[1].split() == [str(n) for n in range(128, 144)]
    assert lines[2] == "0 128 100000000000.0 1000ns 0"
    hosts, links = read_topology(path)
    assert hosts == 128
    # Host 17 is the second host of leaf 1 (Shoal's numbering); every leaf reaches every
    # spine once, a spine no host.
    assert [n for n, _, _ in links[17]] == [129]
    assert all(
        sorted(n for n, _, _ in links[leaf] if n >= 136) == list(range(136, 144))
        for leaf in range(128, 136)
    )
    assert all(n in range(128, 136) for spine in range(136, 144) for n, _, _ in links[spine])
    # The longest path is 4 links: base RTT 2 x 4 us + 4 x 80 ns = 8,320 ns, fig5's max
    # BDP of 104 KB at 100 Gbps; within a rack 2 links.
    trace = pd.DataFrame({"src": [0, 0], "dst": [1, 127], "bytes": [1000, 1000]})
    same, other = n3dc_ideal_fct_ns(trace, hosts, links)
    assert (same, other) == (4_160 + 1048 * 8 // 100, 8_320 + 1048 * 8 // 100)
    assert 8_320 * 100 // 8 == 104_000


def test_the_reference_buffer_is_the_pool_fig5_leaves_a_tor(fig5):
    sc = fig5["dcqcn"]
    # 12 MiB less 24 ports x (4 KiB reserve + 37,500 B headroom of class 3).
    assert t1.shared_pool(sc, 24) == 12 * 2**20 - 24 * (4096 + 37_500) == 11_584_608
    assert t1.n3dc_buffer_mib(sc) == 11
    bigger = {**sc, "switch": {**sc["switch"], "buffer": "16MiB"}}
    assert t1.n3dc_buffer_mib(bigger) == 15


def test_the_scenario_files_are_fig5s_and_resolve(fig5, tmp_path: Path):
    for scheme, sc in fig5.items():
        text = t1.toml_document(sc)
        assert tomllib.loads(text) == sc, scheme
        path = tmp_path / f"{scheme}.toml"
        path.write_text(text)
        _, resolved, _ = _resolve(path, None)
        assert resolved["switch"]["flow_control"]["pause_at"] == "threshold"
    assert fig5["dcqcn"]["rdma"]["window"] == "0B"
    assert fig5["dcqcn_win"]["rdma"]["window"] == "max_bdp"
    assert fig5["hpcc"]["rdma"]["cc"]["max_stage"] == 0
    assert fig5["dcqcn"]["workload"]["duration"] == "2ms"
    assert fig5["dcqcn"]["run"]["seed"] == 1
    short = t1.fig5_scenarios(["hpcc"], "1ms", seed=3)["hpcc"]
    assert short["workload"]["duration"] == short["workload"]["extra"][0]["duration"] == "1ms"
    assert short["run"]["seed"] == 3


def test_the_n3dc_mmu_variant_takes_the_reference_rules(fig5, tmp_path: Path):
    sc = fig5["dcqcn_win"]
    v = t1.n3dc_mmu_variant(sc, 11)
    assert "buffer" not in v["switch"] and v["switch"]["pool_size"] == "11MiB"
    assert v["switch"]["reserved"] == "0B"
    fc = v["switch"]["flow_control"]
    assert fc["headroom_admission"] == "sticky" and fc["pause_at"] == "headroom"
    assert fc["threshold_counts_arrival"] is True and fc["xon_offset"] == "2496B"
    assert sc["switch"]["buffer"] == "12MiB"  # fig5's own is left alone
    assert sc["switch"]["flow_control"]["headroom_admission"] == "threshold"
    assert v["rdma"] == sc["rdma"] and v["workload"] == sc["workload"]
    path = tmp_path / "v.toml"
    path.write_text(t1.toml_document(v))
    _, resolved, _ = _resolve(path, None)
    assert resolved["switch"]["flow_control"]["headroom_admission"] == "sticky"


def test_the_reference_configuration_carries_fig5s_values(fig5, tmp_path: Path):
    hpcc = t1.n3dc_overrides(fig5["hpcc"], tmp_path, tmp_path / "t.txt", 0.1123)
    assert hpcc["BUFFER_SIZE"] == 11 and hpcc["ACK_HIGH_PRIO"] == 1
    assert hpcc["KMIN_MAP"] == "1 100000000000 400"
    assert hpcc["KMAX_MAP"] == "1 100000000000 1600"
    assert (hpcc["MI_THRESH"], hpcc["INT_MULTI"], hpcc["U_TARGET"]) == (0, 4, 0.95)
    assert hpcc["SIMULATOR_STOP_TIME"] == "0.1123"
    assert "MI_THRESH" not in t1.n3dc_overrides(fig5["dcqcn"], tmp_path, tmp_path, 0.2)
    # Windows: DCQCN none, DCQCN+Win and HPCC the reference's window check.
    assert t1.N3DC_FLAGS["dcqcn"][-1] == "--windowCheck=0"
    assert t1.N3DC_FLAGS["dcqcn_win"][-1] == "--windowCheck=1"
    assert t1.N3DC_FLAGS["hpcc"][0] == "--algorithm=3"


def test_the_reference_fcts_are_matched_by_hosts_and_source_port(tmp_path: Path):
    # Flows 0 and 2 share a host pair (0 -> 1): the reference gives them source ports
    # 10000 and 10001 in file order, whatever their destination ports (which wrap).
    trace = pd.DataFrame({"src": [0, 5, 0, 127], "dst": [1, 17, 1, 0]})
    path = tmp_path / "fct.txt"
    path.write_text(
        "0b000001 0b000101 10001 100 1000 1 7000 1\n"  # 0 -> 1, second flow: row 2
        "0b000501 0b001101 10000 100 1000 1 9000 1\n"  # 5 -> 17: row 1
        "0b007f01 0b000001 10000 101 1000 1 8000 1\n"  # 127 -> 0: row 3
    )
    fct = t1.read_n3dc_fct_by_sport(path, trace)
    assert np.isnan(fct[0]) and list(fct[1:]) == [9000, 7000, 8000]
    path.write_text("0b000001 0b000101 10002 100 1000 1 7000 1\n")  # no third 0 -> 1 flow
    with pytest.raises(compare_n3dc.UserError, match="not in the trace"):
        t1.read_n3dc_fct_by_sport(path, trace)


def test_the_flow_file_is_in_order_of_start():
    trace = pd.DataFrame(
        {"id": [0, 1, 2, 3], "start_ns": [50.0, 10.0, 10.0, 0.5], "src": 0, "dst": 1}
    )
    assert list(t1.sorted_trace(trace)["id"]) == [3, 1, 2, 0]


def synthetic():
    # Per FB_Hadoop bin (<= 3, 12, 48, ... packets) flows between racks (0 -> 16) and
    # within one (0 -> 1); one incast flow, one unfinished.
    sizes = [500, 2_500, 11_000, 40_000] * 50
    trace = pd.DataFrame(
        {
            "id": range(len(sizes)),
            "src": 0,
            "dst": [16 if i % 2 else 1 for i in range(len(sizes))],
            "bytes": sizes,
            "start_ns": 0.0,
        }
    )
    same = trace["dst"].to_numpy() == 1
    ideal = ideal_fct_ns(trace["bytes"], same)
    return trace, ideal


def test_the_bins_compare_the_harness_p99_without_incast():
    trace, ideal = synthetic()
    n = len(trace)
    incast = np.zeros(n, bool)
    incast[0] = True  # a 500 B flow: would be its bin's p99 if counted
    n3dc = ideal * 2.0
    n3dc[0] = ideal[0] * 1000
    shoal = ideal * np.where(np.arange(n) % 4 == 3, 6.0, 3.0)  # 40 KB flows 6x, others 3x
    shoal[1] = np.nan  # unfinished: left out
    tables = {
        n_: t1.bin_table(f, trace, incast, 16)
        for n_, f in (("n3dc", n3dc), ("shoal_fig5", shoal), ("shoal_n3dc_mmu", n3dc))
    }
    p99 = {
        n_: t1.p99_all(f, trace, incast, 16)
        for n_, f in (("n3dc", n3dc), ("shoal_fig5", shoal), ("shoal_n3dc_mmu", n3dc))
    }
    empty = {"host": {"pauses_sent": 0}, "switch": {"pauses_sent": 0}, "paused_ns": 0}
    pfc = {
        "n3dc": {"host": {"pauses_sent": 1}, "switch": {"pauses_sent": 40}, "paused_ns": 5},
        "shoal_fig5": empty,
        "shoal_n3dc_mmu": empty,
    }
    res = t1.scheme_result(tables, p99, pfc, {"n3dc": 9.0}, {"n3dc": 0})
    bins = {b["label"]: b for b in res["bins"]}
    # 500 B and 2,500 B (3 packets) share bin 1; 11,000 B is 12 packets; 40,000 B 41.
    assert bins["<=3"]["n3dc"]["flows"] == 99 and bins["<=3"]["shoal_fig5"]["flows"] == 98
    assert bins["<=12"]["n3dc"]["flows"] == 50 and bins["<=48"]["n3dc"]["flows"] == 50
    assert bins["<=3"]["n3dc"]["p99"] == pytest.approx(2.0)
    assert bins["<=3"]["shoal_fig5_vs_n3dc"] == pytest.approx(1.5)
    assert bins["<=48"]["shoal_fig5_vs_n3dc"] == pytest.approx(3.0)
    assert bins["<=48"]["shoal_n3dc_mmu_vs_n3dc"] == pytest.approx(1.0)
    assert bins[">49152"]["n3dc"] == {"flows": 0, "p99": None}
    assert bins[">49152"]["shoal_fig5_vs_n3dc"] is None
    assert res["p99_all"]["n3dc"] == pytest.approx(2.0)
    assert res["p99_all_vs_n3dc"]["shoal_fig5"] == pytest.approx(3.0)
    assert res["pauses_sent"] == {"n3dc": 41, "shoal_fig5": 0, "shoal_n3dc_mmu": 0}


def test_seeds_pool_their_flows_and_sum_their_pauses():
    trace, ideal = synthetic()
    n = len(trace)
    incast = np.zeros(n, bool)

    def seed(factor: float, pauses: int) -> dict:
        pfc = {"host": {"pauses_sent": 0}, "switch": {"pauses_sent": pauses}, "paused_ns": 1.0}
        return {
            "trace": trace,
            "incast": incast,
            "fcts": {name: ideal * factor for name in t1.ORDER},
            "pfc": dict.fromkeys(t1.ORDER, pfc),
            "walls": dict.fromkeys(t1.ORDER, 2.0),
        }

    # Seed A: every flow 2x its ideal; seed B 4x: half the pooled flows are at 4x, so
    # every pooled p99 is 4, which neither seed's mean p99 (3) nor seed A's is.
    pooled = t1.pool([{"dcqcn": seed(2.0, 10)}, {"dcqcn": seed(4.0, 5)}], 16)["dcqcn"]
    first = pooled["bins"][0]
    assert first["n3dc"] == {"flows": 200, "p99": pytest.approx(4.0)}
    assert pooled["p99_all"]["shoal_fig5"] == pytest.approx(4.0)
    assert pooled["pauses_sent"]["n3dc"] == 15
    assert pooled["pfc"]["shoal_n3dc_mmu"]["paused_ns"] == 2.0
    assert pooled["wall_s"]["n3dc"] == 4.0


def test_shoal_must_have_simulated_the_trace():
    trace, _ = synthetic()
    t1.check_same_flows(trace, trace.sample(frac=1, random_state=1))
    other = trace.copy()
    other.loc[5, "dst"] = 2
    with pytest.raises(compare_n3dc.UserError, match="other flows"):
        t1.check_same_flows(trace, other)


def test_bad_arguments_exit_2_and_a_missing_reference_exits_1(tmp_path: Path, capsys):
    for bad in (
        ["--schemes", "dcqcn,bfc"],
        ["--n3dc-tail", "0"],
        ["--duration", "0ms"],
        ["--seeds", "1,1"],
        ["--seeds", "0"],
        ["--seeds", "x"],
    ):
        with pytest.raises(SystemExit) as e:
            t1.main(["--n3dc", str(tmp_path), *bad])
        assert e.value.code == 2, bad
    capsys.readouterr()
    assert t1.main(["--n3dc", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("error: ")


def test_fig5c_is_google_without_incast():
    sc = t1.fig5_scenarios(["dcqcn", "hpcc"], experiment="fig5c")
    assert set(sc) == {"dcqcn", "hpcc"}
    for scenario in sc.values():
        assert Path(scenario["workload"]["cdf"]).stem == "homa_w3"
        assert not scenario["workload"].get("extra")  # no incast
    assert sc["hpcc"]["rdma"]["cc"]["kind"] == "hpcc"
