"""validation/compare_n3dc_burst.py without ns3-datacenter: where the bottleneck port is in
each simulator's numbering, how the reference's per-interval report and Shoal's samples are
read, the metrics, the reference's input files, and the argument errors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import shoal

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_n3dc_burst as burst  # noqa: E402

# Hosts 0 and 1 under switch 4, host 2 under switch 3; the switch list is not sorted and
# switch-to-switch and host links interleave, so each numbering rule shows.
SMALL_TOPOLOGY = """\
5 2 4
4 3
3 4 10Gbps 1us 0
1 4 10Gbps 1us 0
2 3 10Gbps 1us 0
0 4 10Gbps 1us 0
"""


def test_the_reference_topology_bottleneck_is_port_16_of_the_first_tor():
    port = burst.bottleneck_port(burst.TOPOLOGY, 16)
    assert port == {
        "node": 128,
        "shoal_switch": 0,
        "shoal_port": 16,
        "n3dc_tor": 0,
        "n3dc_port": 16,
    }


def test_the_256_host_topology_bottleneck_is_port_16_of_the_first_tor_too():
    # topology-256.txt: hosts 0-31 under switch 256, the first listed, linked in host order.
    port = burst.bottleneck_port(burst.TOPOLOGY_256, 16)
    assert port == {
        "node": 256,
        "shoal_switch": 0,
        "shoal_port": 16,
        "n3dc_tor": 0,
        "n3dc_port": 16,
    }


def test_port_numbering_follows_each_simulators_rules(tmp_path: Path):
    topo = tmp_path / "topology.txt"
    topo.write_text(SMALL_TOPOLOGY)
    port = burst.bottleneck_port(topo, 0)
    # Shoal: switches by ascending id (3, 4), ports in the order of the links touching the
    # switch (3-4, 1-4, 0-4). The reference: switches in listed order (4, 3), and only
    # host links count (1-4, 0-4).
    assert port == {"node": 4, "shoal_switch": 1, "shoal_port": 2, "n3dc_tor": 0, "n3dc_port": 1}
    # Shoal itself: a flow to host 0 queues at that port (line rate in, slower out).
    (tmp_path / "trace.csv").write_text(
        "id,src,dst,bytes,start_ns\n0,2,0,200000,0\n1,1,0,200000,0\n"
    )
    scenario = {
        "topology": {"kind": "file", "path": str(topo)},
        "workload": {"pattern": "trace", "trace": str(tmp_path / "trace.csv"), "transport": "rdma"},
        "rdma": {"cc": {"kind": "none"}},
        "run": {"sample_interval": "1us"},
    }
    samples = shoal.run(scenario).samples
    busiest = samples.groupby(["switch", "port"]).bytes.max().idxmax()
    assert busiest == (port["shoal_switch"], port["shoal_port"])


N3DC_STDOUT = """\
maxRtt=28960 maxBdp=90500 minRtt=4640
ToR 0 Port 15 throughput 0 txBytes 0 qlen 0 time 6.96e-06 normpower 0
ToR 0 Port 16 throughput 0 txBytes 0 qlen 0 time 6.96e-06 normpower 0
ToR 0 Total 0 throughput 0 buffer 0 time 6.96e-06
ToR 0 Port 16 throughput 2.52966e+10 txBytes 22008 qlen 1048 time 1.392e-05 normpower 1
ToR 0 Port 16 throughput 2.4092e+10 txBytes 20960 qlen 0 time 2.088e-05 normpower 1
"""


def test_the_reference_report_is_read_by_sample():
    series, interval = burst.read_n3dc_series(N3DC_STDOUT, 0, 16)
    assert interval == 6960
    assert series.time_ns.tolist() == [6960, 13920, 20880]
    assert series.tx_bytes.tolist() == [0, 22008, 20960]
    assert series.queue_bytes.tolist() == [0, 1048, 0]
    with pytest.raises(burst.UserError, match="ToR 1 Port 16"):
        burst.read_n3dc_series(N3DC_STDOUT, 1, 16)


def test_shoal_samples_sum_the_queues_and_difference_the_bytes_sent(tmp_path: Path):
    rows = [
        # time, switch, port, queue, bytes, pool, cumulative tx bytes of the port
        (7000, 0, 16, 0, 100, 0, 1000),
        (7000, 0, 16, 3, 50, 0, 1000),
        (7000, 0, 15, 0, 999, 0, 5),
        (14000, 0, 16, 0, 0, 0, 3000),
        (14000, 0, 16, 3, 20, 0, 3000),
    ]
    cols = ["time_ns", "switch", "port", "queue", "bytes", "pool_bytes", "tx_bytes"]
    pd.DataFrame(rows, columns=cols).to_parquet(tmp_path / "queues.parquet")
    s = burst.read_shoal_series(tmp_path, 0, 16, 7000)
    assert s.queue_bytes.tolist() == [150, 20]
    assert s.tx_bytes.tolist() == [1000, 2000]
    with pytest.raises(burst.UserError, match="every 6000 ns"):
        burst.read_shoal_series(tmp_path, 0, 16, 6000)


def test_metrics_by_hand():
    interval = 1_000_000  # 1 ms samples: 1 Gbps is 125,000 B per sample
    t = [141, 150, 151, 152, 153, 154, 155, 156, 157]
    queue = [0, 0, 500, 900, 0, 700, 10, 30, 50]
    sent = [125_000, 250_000, 0, 0, 0, 0, 125_000, 125_000, 375_000]
    series = pd.DataFrame({"time_ns": [x * interval for x in t], "queue_bytes": queue})
    m = burst.metrics(series.assign(tx_bytes=sent), interval)
    assert m["single_flow_gbps"] == 1.5  # the samples at 141 and 150 ms
    assert m["first_peak_queue_bytes"] == 900 and m["first_peak_time_s"] == 0.152
    assert m["peak_queue_bytes"] == 900  # 151-154 ms
    assert m["mean_queue_bytes"] == (500 + 900 + 0 + 700) / 4
    assert m["after_gbps"] == 2.0 and m["after_mean_queue_bytes"] == 40  # 156-157 ms


def test_the_reference_inputs(tmp_path: Path):
    n3dc = tmp_path / "ns-3.39"
    template = n3dc / "examples/PowerTCP/config-burst.txt"
    template.parent.mkdir(parents=True)
    # A stand-in for config-burst.txt (the reference's files stay outside this repository).
    lines = ["ENABLE_QCN 1", "BUFFER_SIZE 16", "CC_MODE 3", "SIMULATOR_STOP_TIME 0.2"]
    lines += [f"{key}_MAP 1 1 1" for key in ("KMIN", "KMAX", "PMAX")]
    lines += [f"{key}_FILE mix/x" for key in ("TOPOLOGY", "FLOW", "FCT_OUTPUT", "PFC_OUTPUT")]
    lines += ["TRACE_OUTPUT_FILE mix/x", "QLEN_MON_FILE mix/x"]
    template.write_text("\n".join(lines) + "\n")
    import tomllib

    sc = tomllib.loads(burst.SCENARIO.read_text())
    # Every value the script sets must have its line in the template.
    with pytest.raises(burst.UserError, match="ENABLE_TRACE"):
        burst.n3dc_inputs(tmp_path, n3dc, sc, 0.16)
    template.write_text("\n".join([*lines, "ENABLE_TRACE 1"]) + "\n")
    conf = burst.n3dc_inputs(tmp_path, n3dc, sc, 0.16)
    keys = dict(line.split(" ", 1) for line in conf.read_text().splitlines())
    assert keys["BUFFER_SIZE"] == "4" and keys["CC_MODE"] == "3" and keys["ENABLE_QCN"] == "1"
    # config-burst.txt's own maps: 100 / 400 KB, 0.2 at 25 Gbps, scaled with the rate.
    assert keys["KMIN_MAP"] == "3 25000000000 100 50000000000 200 100000000000 400"
    assert keys["KMAX_MAP"] == "3 25000000000 400 50000000000 800 100000000000 1600"
    assert keys["PMAX_MAP"] == "3 25000000000 0.2 50000000000 0.2 100000000000 0.2"
    assert keys["SIMULATOR_STOP_TIME"] == "0.16" and keys["ENABLE_TRACE"] == "0"
    assert keys["FLOW_FILE"] == str(tmp_path / "n3dc_flows.txt")
    flows = (tmp_path / "n3dc_flows.txt").read_text().splitlines()
    # flow-burstExp-10.txt, line for line.
    assert flows[:3] == ["11", "0 16 3 10000 1000000000000 0.13", "1 16 3 10001 1000000000000 0.15"]
    assert flows[-1] == "10 16 3 10010 1000000000000 0.15"
    trace = pd.read_csv(burst.shoal_trace(tmp_path))
    assert trace.start_ns.tolist() == [130_000_000] + [150_000_000] * 10
    assert set(trace.priority) == {3} and set(trace.dst) == {16}
    # --phase-step: only flow 0 moves, by whole ns, alike in both simulators' inputs.
    burst.n3dc_inputs(tmp_path, n3dc, sc, 0.16, shift_ns=2_176)
    flows = (tmp_path / "n3dc_flows.txt").read_text().splitlines()
    assert flows[1] == "0 16 3 10000 1000000000000 0.130002176"
    assert flows[2] == "1 16 3 10001 1000000000000 0.15"
    trace = pd.read_csv(burst.shoal_trace(tmp_path, shift_ns=2_176))
    assert trace.start_ns.tolist() == [130_002_176] + [150_000_000] * 10


def test_the_256_flow_inputs(tmp_path: Path):
    n3dc = tmp_path / "ns-3.39"
    template = n3dc / "examples/PowerTCP/config-burst.txt"
    template.parent.mkdir(parents=True)
    keys = ["BUFFER_SIZE", "SIMULATOR_STOP_TIME", "ENABLE_TRACE", "TOPOLOGY_FILE"]
    keys += [f"{k}_MAP" for k in ("KMIN", "KMAX", "PMAX")]
    keys += [f"{k}_FILE" for k in ("FLOW", "FCT_OUTPUT", "PFC_OUTPUT")]
    keys += ["TRACE_OUTPUT_FILE", "QLEN_MON_FILE"]
    template.write_text("".join(f"{k} x\n" for k in keys))
    import tomllib

    sc = tomllib.loads(burst.SCENARIO.read_text())
    burst.n3dc_inputs(tmp_path, n3dc, sc, 0.16, burst.TOPOLOGY_256, burst.FLOWS_256)
    assert (tmp_path / "n3dc_topology.txt").read_text().startswith("276 20 8 288\n")
    flows = (tmp_path / "n3dc_flows.txt").read_text().splitlines()
    # flow-burstExp-256.txt: 266 flows, the eleven endless ones first, then 2,800 B from
    # every host but 16 (that file's destination ports are 11000 + i for the endless flows
    # and 10000 + src for the short ones; here every port is 10000 + the flow's index).
    assert flows[0] == "266" and len(flows) == 267
    assert flows[11] == "10 16 3 10010 1000000000000 0.15"
    assert flows[12] == "0 16 3 10011 2800 0.15"
    assert flows[28] == "17 16 3 10027 2800 0.15"
    assert flows[-1] == "255 16 3 10265 2800 0.15"
    trace = pd.read_csv(burst.shoal_trace(tmp_path, burst.FLOWS_256))
    assert len(trace) == 266 and (trace.bytes == 2800).sum() == 255
    assert 16 not in set(trace.src[trace.bytes == 2800]) and set(trace.dst) == {16}


def test_fcts_are_read_by_destination_port_and_summarized(tmp_path: Path):
    # Two of three flows finished (ports 10000 + index); flow 1 did not.
    (tmp_path / "fct.txt").write_text(
        "0b000001 0b001001 10000 10002 2800 150000000 7000 4000\n"
        "0b000101 0b001001 10000 10000 2800 150000000 3000 4000\n"
    )
    fct = burst.read_n3dc_fct(tmp_path / "fct.txt", 3)
    assert fct[0] == 3000 and fct[2] == 7000 and np.isnan(fct[1])
    m = burst.fct_metrics(fct, [0, 1, 2])
    assert m["short_unfinished"] == 1
    assert m["short_fct_mean_us"] == 5.0 and m["short_fct_p50_us"] == 5.0
    # Linear interpolation: 3 + 0.99 x (7 - 3) us.
    assert m["short_fct_p99_us"] == pytest.approx(6.96) and m["short_fct_max_us"] == 7.0
    flows = pd.DataFrame(
        {"id": [0, 1, 2], "fct_ns": [3000.0, 0.0, 7000.0], "finished": [True, False, True]}
    )
    flows.to_parquet(tmp_path / "flows.parquet")
    shoal_fct = burst.read_shoal_fct(tmp_path, 3)
    assert np.array_equal(shoal_fct, fct, equal_nan=True)


def test_each_cc_as_the_reference_runs_it():
    # script-burst.sh: cc modes 1, 7, 8 and 3 with --wien --delayWien; window for DCTCP and
    # theta-PowerTCP only. Wire sizes: 48 B of headers plus the INT header's size (none, an
    # 8 B timestamp, or 5 x 8 + 2 = 42 B for cc mode 3); ACKs 46 B plus it, at least 60 B.
    # HPCC is cc mode 3 without --wien, PowerTCP with --wien and without --delayWien, both
    # windowed, both with the 42 B stack.
    cc = burst.CCS
    assert [(c.algorithm, c.wien, c.delay_wien) for c in cc.values()] == [
        (1, False, False),
        (7, False, False),
        (8, False, False),
        (3, True, True),
        (3, False, False),
        (3, True, False),
        (3, True, False),
    ]
    assert {k: c.cases for k, c in cc.items()} == {
        "dcqcn": ("nowin", "win"),
        "timely": ("nowin",),
        "dctcp": ("win",),
        "theta_powertcp": ("win",),
        "hpcc": ("win",),
        "powertcp": ("win",),
        "powertcp_f542a97": ("win",),
    }
    assert {k: (c.header, c.ack_size) for k, c in cc.items()} == {
        "dcqcn": (48, 60),
        "timely": (56, 60),
        "dctcp": (48, 60),
        "theta_powertcp": (90, 88),
        "hpcc": (90, 88),
        "powertcp": (90, 88),
        "powertcp_f542a97": (90, 88),
    }
    assert burst.shoal_cc("dcqcn") == {"rdma.cc.model": "ns3_datacenter"}
    assert burst.shoal_cc("timely") == {
        "rdma.cc.kind": "timely",
        "rdma.header": 56,
        "rdma.ack_size": 60,
    }
    # Shoal adds the stack to hpcc's and powertcp's data packets itself; config-burst.txt's
    # MI_THRESH 5; the INT values in the reference's units.
    int_sets = {"rdma.header": 48, "rdma.int_values": "quantized", "rdma.int_multi": 1}
    assert burst.shoal_cc("hpcc") == {
        "rdma.cc.kind": "hpcc",
        "rdma.ack_size": 88,
        "rdma.cc.max_stage": 5,
        **int_sets,
    }
    for name, revision in (("powertcp", "published"), ("powertcp_f542a97", "f542a97")):
        assert burst.shoal_cc(name) == {
            "rdma.cc.kind": "powertcp",
            "rdma.ack_size": 88,
            "rdma.cc.revision": revision,
            **int_sets,
        }


@pytest.mark.parametrize("kind", ["theta_powertcp", "hpcc", "powertcp"])
def test_shoal_sends_the_reference_wire_sizes(tmp_path: Path, kind: str):
    # Flow 0 alone at line rate: the bottleneck port (16) sends only its data packets and
    # host 0's port only their ACKs, and a port's bytes count whole packets, so over many
    # samples their greatest common divisor is one packet: 1,000 + 90 B and 88 B, as the
    # reference's cc mode 3 packets are (PPP 14 + IPv4 20 + UDP 8 + SeqTs 6 + INT 42;
    # PPP 14 + IPv4 20 + qbb 12 + INT 42).
    import math
    import subprocess

    pairs = {
        "workload.trace": burst.shoal_trace(tmp_path),
        "run.stop_time": "130200us",
        "run.sample_interval": "6960ns",
        **burst.WINDOW,
        **burst.shoal_cc(kind),
    }
    cmd = [*burst.shoal_cmd(), "run", str(burst.SCENARIO), "--out", str(tmp_path / "run"), "-q"]
    proc = subprocess.run([*cmd, *burst.sets(pairs)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    q = pd.read_parquet(tmp_path / "run" / "queues.parquet")
    q = q[q.switch == 0]
    sent = {port: q[q.port == port].tx_bytes.unique() for port in (0, 16)}
    assert len(sent[0]) > 10 and len(sent[16]) > 10
    assert math.gcd(*map(int, sent[16])) == 1090
    assert math.gcd(*map(int, sent[0])) == 88


@pytest.mark.parametrize("kind", list(burst.CCS))
def test_shoal_accepts_each_cc_over_the_scenario(tmp_path: Path, kind: str):
    import subprocess

    pairs = {
        "workload.trace": burst.shoal_trace(tmp_path),
        "run.stop_time": "130010us",
        **burst.WINDOW,
        **burst.shoal_cc(kind),
    }
    cmd = [*burst.shoal_cmd(), "run", str(burst.SCENARIO), "--out", str(tmp_path / "run"), "-q"]
    proc = subprocess.run([*cmd, *burst.sets(pairs)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    sc = (tmp_path / "run" / "scenario.json").read_text()
    assert f'"{burst.CCS[kind].kind or kind}"' in sc


def test_argument_errors(tmp_path: Path, capsys):
    for bad in (
        ["--cases", "nowin,foo"],
        ["--runs", "0"],
        ["--stop", "0.155"],
        ["--cc", "powertcp_int"],
        ["--flows", "100"],
    ):
        with pytest.raises(SystemExit) as e:
            burst.main(["--n3dc", str(tmp_path), *bad])
        assert e.value.code == 2
    capsys.readouterr()
    assert burst.main(["--n3dc", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is missing" in err
