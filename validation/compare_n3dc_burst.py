#!/usr/bin/env python3
"""Cross-validate Shoal's RDMA, its congestion controls and PFC against ns3-datacenter's
10-to-1 burst.

    python validation/compare_n3dc_burst.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        [--n3dc-program PATH] [--cc CC] [--flows 10|256] [--cases nowin,win]
        [--runs 3] [--stop 0.16] [--out DIR] [--check]

    CC: dcqcn (default), timely, dctcp, theta_powertcp, hpcc, powertcp (needs a program
    built with the rdma-hw.cc from before the reference's f542a97), powertcp_f542a97

The experiment is ns3-datacenter's own (examples/PowerTCP: script-burst.sh,
flow-burstExp-10.txt, plot-burst.py) on its 128-host three-tier topology.txt: host 0
sends to host 16 from 130 ms, hosts 1-10 join at 150 ms, every flow endless, all under
ToR 0 at 25 Gbps, so the bottleneck is ToR 0's port toward host 16. The reference prints
that port's queue (bytes) and the bytes it sent in each interval of 1.5 x minRtt; Shoal's
``queues.parquet`` sampled at the same interval gives the same two series.

``--cc`` picks the congestion control as the reference's script-burst.sh runs it (cc mode
1 DCQCN, 7 TIMELY, 8 DCTCP, 3 with --wien --delayWien theta-PowerTCP, 3 HPCC, 3 with
--wien PowerTCP) and, in Shoal, ``rdma.cc.kind`` with the reference's wire sizes and
configuration for it (``CCS``, ``shoal_cc``). The reference's program has one PowerTCP,
the one its rdma-hw.cc was built with: ``powertcp`` runs Shoal's ``revision =
"published"`` (the code before f542a97), ``powertcp_f542a97`` the code 6ddb4a4 ships;
the script cannot tell which ``--n3dc-program`` holds. For each case (without
a window, ``--windowCheck=0``; with one, ``--windowCheck=1``: a max-BDP window scaled by
rate; by default DCQCN both, TIMELY without, the others with, as
script-burst.sh runs them) the script writes the reference's
topology, flow and configuration files (its config-burst.txt with the paths, the stop
time and no tracing; buffer, RED maps and DCQCN values as ``n3dc_burst.toml`` has them),
runs it ``--runs`` times (ns-3 ``RngRun`` 1..N: RED marks at random), runs
``n3dc_burst.toml`` on the same topology file and flows as often (``run.seed`` 1..N),
timing both whole processes, and compares at the bottleneck: single-flow throughput
before the burst, the queue's peak, mean and max in the burst window, the throughput
after it, and PFC PAUSE frames. Writes ``comparison.json`` and ``burst.png`` (queue and
throughput over time, both simulators, one panel per case) into the output directory.

PAUSE frames are counted only with a reference program built with its ``QbbPfc`` trace
on (``--n3dc-program``; validation/README.md, "PFC against ns3-datacenter", says how);
the stock program writes an empty trace.

``--flows 256`` runs flow-burstExp-256.txt on topology-256.txt instead (config-burst.txt's
own files): the same eleven endless flows and, at 0.15 s, one 2,800 B flow to host 16 from
each of the other 255 hosts; it compares the short flows' FCTs too (the reference's
FCT_OUTPUT_FILE; Shoal's flows.parquet, ``run.fct_until = "acked"`` as the reference's
sender-side completion) and writes to ``..._256``.

Targets (issue): Shoal's peak queue within 10% of the reference's, throughput within 5%;
with 256 flows also the short flows' mean FCT within 10% and p99 within 20%.
Exit status: 0 when the comparison ran (with --check, 3 when a target is missed), 1 when
ns3-datacenter or Shoal is missing or fails, 2 on bad arguments.
"""

from __future__ import annotations

import json
import statistics
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from compare_n3dc import (
    MIB,
    n3dc_files,
    n3dc_parser,
    read_n3dc_pfc,
    read_shoal_pfc,
    reference_program,
    write_n3dc_config,
)
from compare_ns3 import UserError, parse_size, ratio, run, run_guarded, sets, shoal_cmd

from shoal.reproduce.rdma import AFTER_FROM_NS, ALONE_NS, BURST_NS, burst_metrics

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "n3dc_burst.toml"
TOPOLOGY = HERE / "n3dc" / "topology.txt"
FLOW_BYTES = 10**12
# flow-burstExp-10.txt: (src, dst, start in s, bytes); 10^12 bytes is endless here.
FLOWS = [(0, 16, 0.13, FLOW_BYTES)] + [(src, 16, 0.15, FLOW_BYTES) for src in range(1, 11)]
# flow-burstExp-256.txt on topology-256.txt (256 hosts, 32 under each of eight ToRs; host
# 16 is still under the first): the same eleven endless flows, then one 2,800 B flow to
# host 16 from every other host at 0.15 s, in the file's order.
TOPOLOGY_256 = HERE / "n3dc" / "topology-256.txt"
SHORT_BYTES = 2800
FLOWS_256 = FLOWS + [(src, 16, 0.15, SHORT_BYTES) for src in range(256) if src != 16]
FLOW_SETS = {10: (TOPOLOGY, FLOWS), 256: (TOPOLOGY_256, FLOWS_256)}
# The reference's flow file gives each flow its destination port: 10000 + its index here,
# which names the flow in its FCT file.
BASE_DPORT = 10000
# The reference's flow files give each flow a priority group (3: the lossless class).
PRIORITY = 3
BOTTLENECK_HOST = 16
# Windows in seconds, as the experiment rdma/burst defines them from the burst's start
# (shoal.reproduce.rdma): before the burst, flow 0 alone for 10 ms; the burst, over
# plot-burst.py's x range (0.1495-0.154 s); after it, from 5 ms on to the stop time.
BURST_START = 0.150
ALONE = tuple(BURST_START + t / 1e9 for t in ALONE_NS)
BURST = tuple(BURST_START + t / 1e9 for t in BURST_NS)
AFTER_FROM = BURST_START + AFTER_FROM_NS / 1e9
CASES = {"nowin": 0, "win": 1}  # case name -> the reference's --windowCheck
MODEL = "ns3_datacenter"  # DCQCN's rdma.cc.model (Shoal's default; no other kind has one)


@dataclass(frozen=True)
class CcRun:
    """One congestion control as the reference's script-burst.sh runs it, and Shoal's side."""

    label: str
    algorithm: int  # the reference's --algorithm (its CC_MODE)
    wien: bool  # --wien (PowerTCP instead of HPCC, within cc mode 3)
    delay_wien: bool  # --delayWien (theta-PowerTCP: the RTT-only variant)
    cases: tuple[str, ...]  # script-burst.sh:52-56: window 0 for DCQCN and TIMELY, else 1
    header: int  # the reference's wire bytes of a data packet beyond its payload
    ack_size: int  # and of an ACK
    kind: str = ""  # Shoal's rdma.cc.kind when it is not the cc's name
    # Shoal's own settings for it (rdma.cc keys the reference's configuration sets)
    settings: tuple[tuple[str, object], ...] = ()

    @property
    def telemetry(self) -> bool:
        """Whether Shoal's controller carries the INT stack itself (``hpcc``, ``powertcp``:
        ``RdmaSettings::with_telemetry``), its sizes then set without it."""
        return self.kind in TELEMETRY_KINDS


# Wire sizes (ns3-datacenter 6ddb4a4, simulator/ns-3.39): a data packet is PPP 14 + IPv4 20
# + UDP 8 + SeqTs 6 + the INT header's static size (seq-ts-header.cc:97-99, rdma-hw.cc:
# 583-607); an ACK is PPP 14 + IPv4 20 + qbb 12 + the same INT size, padded to 60 B
# (qbb-header.cc:99-104, qbb-header.h:66-69, rdma-hw.cc:343). The INT size follows the cc
# mode (powertcp-evaluation-burst.cc:727-735; int-header.cc:16-26): none for DCQCN (1) and
# DCTCP (8), the 8 B timestamp for TIMELY (7), the 5-hop stack for cc mode 3: 5 x 8 B hops
# + a 2 B hop count = 42 B (int-header.h:10-24, 84, 95-99), carried whatever the hops.
# HPCC is cc mode 3 without --wien, PowerTCP (INT) with --wien and without --delayWien
# (script-burst.sh:9-10, 40-50, 78); config-burst.txt sets MI_THRESH 5 (Shoal's max_stage
# defaults to the HPCC repository's 0) and the other HPCC values Shoal defaults to (U_TARGET
# 0.95, RATE_AI 50 Mb/s, FAST_REACT 1, INT_MULTI 1). PowerTCP exists in two versions of the
# reference's rdma-hw.cc: "powertcp" is the one before f542a97 (ed1dfa8, as published),
# which a program built from that file runs; "powertcp_f542a97" the one 6ddb4a4 ships.
INT = 5 * 8 + 2
TELEMETRY_KINDS = ("hpcc", "powertcp")
CCS = {
    "dcqcn": CcRun("DCQCN", 1, False, False, ("nowin", "win"), 48, 60),
    "timely": CcRun("TIMELY", 7, False, False, ("nowin",), 48 + 8, 60),
    "dctcp": CcRun("DCTCP", 8, False, False, ("win",), 48, 60),
    "theta_powertcp": CcRun("theta-PowerTCP", 3, True, True, ("win",), 48 + INT, 46 + INT),
    "hpcc": CcRun(
        "HPCC", 3, False, False, ("win",), 48 + INT, 46 + INT, "hpcc", (("max_stage", 5),)
    ),
    "powertcp": CcRun(
        "PowerTCP (published)",
        3,
        True,
        False,
        ("win",),
        48 + INT,
        46 + INT,
        "powertcp",
        (("revision", "published"),),
    ),
    "powertcp_f542a97": CcRun(
        "PowerTCP (f542a97)",
        3,
        True,
        False,
        ("win",),
        48 + INT,
        46 + INT,
        "powertcp",
        (("revision", "f542a97"),),
    ),
}
# Shoal's telemetry stack on the wire (crates/shoal-core/src/net/telemetry.rs:
# WIRE_STACK_BYTES) and its echoing ACK before padding: 34 B of headers with a 2 B PPP
# header (ACK_UNPADDED_BYTES) + the stack. The reference's PPP header is 14 B, so its ACK
# is 12 B longer than Shoal's unpadded one; ack_size, the least size of an ACK, makes up
# for it.
SHOAL_STACK = INT
SHOAL_UNPADDED_ACK = 34 + SHOAL_STACK
# Shoal's settings for DCQCN+Win (windowCheck=1 sets HAS_WIN and VAR_WIN; GLOBAL_T 1).
WINDOW = {"rdma.window": "max_bdp", "rdma.window_scales_with_rate": "true"}
TARGET_PEAK = 0.10
TARGET_THROUGHPUT = 0.05
# The 256-flow burst's short flows (issue): mean FCT within 10%, p99 within 20%.
TARGET_FCT_MEAN = 0.10
TARGET_FCT_P99 = 0.20


def bottleneck_port(topology: Path, host: int) -> dict:
    """The switch port toward ``host`` in a topology file, as each simulator numbers it.

    Shoal numbers switches by ascending node id among the file's switch ids, and a switch's
    ports in the order of the file's links that touch it (net/topology.rs, module doc;
    net/graph.rs ``Wiring::of``). ns3-datacenter's ``ToR i Port j`` (PrintResults of
    powertcp-evaluation-burst.cc:351-377) is the j-th host link of the i-th switch, in file
    order (``switchDown``, :883-885; ``switchIdToNum`` numbers the listed switch ids in
    order)."""
    lines = [
        line.split()
        for line in topology.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    switch_ids = [int(x) for x in lines[1]]
    links = [(int(a), int(b)) for a, b, *_ in lines[2:]]
    switches = set(switch_ids)
    (tor,) = {b if a == host else a for a, b in links if host in (a, b)}
    tor_links = [link for link in links if tor in link]
    shoal_port = [i for i, link in enumerate(tor_links) if host in link][0]
    host_links = [(a, b) for a, b in links if (a in switches) != (b in switches) and tor in (a, b)]
    n3dc_port = [i for i, link in enumerate(host_links) if host in link][0]
    return {
        "node": tor,
        "shoal_switch": sorted(switches).index(tor),
        "shoal_port": shoal_port,
        "n3dc_tor": switch_ids.index(tor),
        "n3dc_port": n3dc_port,
    }


def read_n3dc_series(stdout: str, tor: int, port: int):
    """The reference's report of one ToR port (``ToR i Port j throughput T txBytes B qlen Q
    time S ...``, printed every interval): a DataFrame of time_ns, queue_bytes, tx_bytes
    (sent in the interval) and the interval in ns. The printed time has 6 significant
    digits, so sample n's time is n x interval, the interval being the last printed time
    over the number of samples, rounded to the ns (ns-3 schedules whole ns)."""
    import pandas as pd

    prefix = f"ToR {tor} Port {port} "
    rows = []
    for line in stdout.splitlines():
        if line.startswith(prefix):
            f = line.split()
            rows.append((int(f[7]), int(f[9]), float(f[11])))
    if not rows:
        raise UserError(f"ns3-datacenter printed no line starting {prefix.strip()!r}", 1)
    interval_ns = round(rows[-1][2] * 1e9 / len(rows))
    t = pd.DataFrame(rows, columns=["tx_bytes", "queue_bytes", "printed_s"])
    t["time_ns"] = (t.index + 1) * interval_ns
    return t[["time_ns", "queue_bytes", "tx_bytes"]], interval_ns


def read_shoal_series(run_dir: Path, switch: int, port: int, interval_ns: int):
    """The same series from Shoal's ``queues.parquet``: the port's bytes over all its
    queues (the reference's GetNBytesTotal) and the bytes its link sent since the last
    sample (its cumulative tx_bytes, differenced)."""
    import pandas as pd

    q = pd.read_parquet(run_dir / "queues.parquet")
    q = q[(q.switch == switch) & (q.port == port)]
    t = q.groupby("time_ns").agg(queue_bytes=("bytes", "sum"), cumulative=("tx_bytes", "first"))
    t = t.reset_index()
    # The port is sampled from the first sample at which it holds a packet; before it the
    # link had sent nothing of its first interval's bytes but those counted at that sample.
    t["tx_bytes"] = t.cumulative.diff().fillna(t.cumulative).astype("int64")
    t["time_ns"] = t.time_ns.round().astype("int64")
    bad = t.time_ns % interval_ns != 0
    if bad.any():
        raise UserError(f"Shoal's samples are not every {interval_ns} ns", 1)
    return t[["time_ns", "queue_bytes", "tx_bytes"]]


def metrics(series, interval_ns: int) -> dict:
    """The numbers compared, from one bottleneck series (time_ns of each sample, the queue
    then and the bytes sent in the interval before it), by the rules of the experiment
    ``rdma/burst`` (``shoal.reproduce.rdma.burst_metrics``)."""
    m = burst_metrics(
        series.assign(bytes=series.queue_bytes, throughput_gbps=series.tx_bytes * 8 / interval_ns),
        BURST_START * 1e9,
    )
    return {
        "single_flow_gbps": m["single_flow_gbps"],
        "first_peak_queue_bytes": int(m["burst_first_peak_queue_bytes"]),
        "first_peak_time_s": m["burst_first_peak_time_ns"] / 1e9,
        "peak_queue_bytes": int(m["burst_peak_queue_bytes"]),
        "mean_queue_bytes": m["burst_mean_queue_bytes"],
        "burst_gbps": m["burst_throughput_gbps"],
        "after_gbps": m["after_burst_throughput_gbps"],
        "after_mean_queue_bytes": m["after_burst_mean_queue_bytes"],
    }


def timed(flows: list, shift_ns: int = 0) -> list[tuple[int, int, int, int]]:
    """``flows`` (src, dst, start in s, bytes) with start times in ns, flow 0's
    ``shift_ns`` later (``--phase-step``)."""
    return [
        (src, dst, round(start * 1e9) + (shift_ns if i == 0 else 0), size)
        for i, (src, dst, start, size) in enumerate(flows)
    ]


def n3dc_inputs(
    out: Path,
    n3dc: Path,
    sc: dict,
    stop_s: float,
    topology: Path = TOPOLOGY,
    flows=FLOWS,
    shift_ns: int = 0,
) -> Path:
    """Writes the reference's topology, flow and configuration files; returns the latter."""
    (out / "n3dc_topology.txt").write_text(topology.read_text())
    # Seconds to the ns, as the reference's file writes them (0.13, not 0.130000000).
    seconds = lambda ns: f"{ns / 1e9:.9f}".rstrip("0")  # noqa: E731
    rows = [
        f"{src} {dst} {PRIORITY} {BASE_DPORT + i} {size} {seconds(start_ns)}"
        for i, (src, dst, start_ns, size) in enumerate(timed(flows, shift_ns))
    ]
    (out / "n3dc_flows.txt").write_text(f"{len(rows)}\n" + "\n".join(rows) + "\n")
    pool = parse_size(sc["switch"]["pool_size"])
    if pool % MIB:
        raise UserError(f"switch.pool_size = {sc['switch']['pool_size']} is not whole MiB")
    # The reference's marking maps: the scenario's values at 25 Gbps (its only loaded
    # links), scaled with the rate at 50 and 100 Gbps as config-burst.txt scales them.
    red = sc["switch"]["marking"]["red"]
    kmin, kmax = (round(parse_size(red[k]) / 1000) for k in ("kmin", "kmax"))
    rates = (25, 50, 100)
    entry = lambda f: " ".join(f"{g}000000000 {f(g)}" for g in rates)  # noqa: E731
    overrides = {
        "TOPOLOGY_FILE": out / "n3dc_topology.txt",
        **n3dc_files(out),
        "BUFFER_SIZE": pool // MIB,
        "SIMULATOR_STOP_TIME": f"{stop_s}",
        "KMIN_MAP": f"3 {entry(lambda g: kmin * g // 25)}",
        "KMAX_MAP": f"3 {entry(lambda g: kmax * g // 25)}",
        "PMAX_MAP": f"3 {entry(lambda g: red['pmax'])}",
    }
    conf = write_n3dc_config(n3dc, out, overrides)
    written = {line.split(" ", 1)[0] for line in conf.read_text().splitlines()}
    if missing := sorted(set(overrides) - written):
        # The template's lines are replaced, never added: a key it lacks would keep the
        # program's built-in default.
        raise UserError(f"{n3dc / 'examples/PowerTCP/config-burst.txt'} has no {missing}", 1)
    return conf


def shoal_cc(kind: str) -> dict:
    """Shoal's settings for one ``--cc`` over ``n3dc_burst.toml`` (DCQCN with its sizes):
    DCQCN's model (the default one, named: a key the other kinds refuse), or the kind
    and the reference's wire sizes for it."""
    if kind == "dcqcn":
        return {"rdma.cc.model": MODEL}
    cc = CCS[kind]
    header, ack_size = cc.header, cc.ack_size
    if cc.telemetry:
        header -= SHOAL_STACK
        # Shoal's ACK is max(ack_size, SHOAL_UNPADDED_ACK): the reference's is longer.
        if ack_size < SHOAL_UNPADDED_ACK:
            raise UserError(f"{kind}: the reference's ACK is shorter than Shoal's", 1)
    return {
        "rdma.cc.kind": cc.kind or kind,
        "rdma.header": header,
        "rdma.ack_size": ack_size,
        # The reference's switches write INT in its header's units (int-header.h).
        **({"rdma.int_values": "quantized", "rdma.int_multi": 1} if cc.telemetry else {}),
        **{f"rdma.cc.{k}": v for k, v in cc.settings},
    }


def shoal_trace(out: Path, flows=FLOWS, shift_ns: int = 0) -> Path:
    trace = out / "trace.csv"
    rows = [
        f"{i},{src},{dst},{size},{start_ns},{PRIORITY}"
        for i, (src, dst, start_ns, size) in enumerate(timed(flows, shift_ns))
    ]
    trace.write_text("id,src,dst,bytes,start_ns,priority\n" + "\n".join(rows) + "\n")
    return trace


def read_n3dc_fct(path: Path, flows: int):
    """FCT in ns by flow index from the reference's FCT file, one line ``sip dip sport dport
    size start fct standalone`` per finished flow (powertcp-evaluation-burst.cc:183-184;
    the destination port names the flow); NaN for a flow that did not finish."""
    import numpy as np

    fct = np.full(flows, np.nan)
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 7:
            fct[int(f[3]) - BASE_DPORT] = float(f[6])
    return fct


def read_shoal_fct(run_dir: Path, flows: int):
    """The same from Shoal's ``flows.parquet`` (trace ids are the flow indices)."""
    import numpy as np
    import pandas as pd

    t = pd.read_parquet(run_dir / "flows.parquet", columns=["id", "fct_ns", "finished"])
    t = t[t.finished]
    fct = np.full(flows, np.nan)
    fct[t.id.to_numpy()] = t.fct_ns.to_numpy(dtype=float)
    return fct


def fct_metrics(fct_ns, short) -> dict:
    """FCT statistics of the short flows (``short``: their indices) in one run, in us;
    percentiles by linear interpolation over the finished ones."""
    import numpy as np

    f = fct_ns[short]
    done = f[~np.isnan(f)]
    stat = lambda g: float(g(done) / 1e3) if len(done) else float("nan")  # noqa: E731
    return {
        "short_fct_mean_us": stat(np.mean),
        "short_fct_p50_us": stat(lambda d: np.percentile(d, 50)),
        "short_fct_p99_us": stat(lambda d: np.percentile(d, 99)),
        "short_fct_max_us": stat(np.max),
        "short_unfinished": int(np.isnan(f).sum()),
    }


def pauses_received(pfc: dict) -> int:
    """PAUSE frames received by hosts and switches in one run (``read_*_pfc``)."""
    return sum(pfc[kind]["pauses_received"] for kind in ("host", "switch"))


def _summary(per_run: list[dict]) -> dict:
    """Mean, min and max over runs of each metric."""
    return {
        k: {
            "mean": statistics.mean(r[k] for r in per_run),
            "min": min(r[k] for r in per_run),
            "max": max(r[k] for r in per_run),
        }
        for k in per_run[0]
    }


# The figure averages throughput over this many samples (84 us, one packet time at DCQCN's
# 100 Mbps minimum rate, the period of the flows' packets then): one sample holds
# 20 or 21 packets, which alone draws a band between 24.1 and 25.3 Gbps.
PLOT_SMOOTHING = 12


def plot(series: dict, path: Path, stop_s: float, label: str = "DCQCN") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(series), figsize=(6.5 * len(series), 4.2), squeeze=False)
    for ax, (case, by_sim) in zip(axes[0], series.items(), strict=True):
        qax = ax.twinx()
        for sim, style in (("n3dc", "-"), ("shoal", "--")):
            s, interval = by_sim[sim]
            t_ms = (s.time_ns / 1e6).to_numpy()
            name = "ns3-datacenter" if sim == "n3dc" else "Shoal"
            gbps = (s.tx_bytes * 8 / interval).rolling(PLOT_SMOOTHING, min_periods=1).mean()
            ax.plot(t_ms, gbps, style, c="#1979a9", lw=1.2, label=f"{name} throughput")
            qax.plot(t_ms, s.queue_bytes / 1e3, style, c="red", lw=1.2, label=f"{name} queue")
        ax.set_xlim(BURST[0] * 1e3 - 0.5, stop_s * 1e3)
        ax.set_ylim(0, 27)
        qax.set_ylim(bottom=0)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel(f"throughput (Gbps, mean of {PLOT_SMOOTHING} samples)")
        qax.set_ylabel("queue (KB)")
        handles = ax.get_legend_handles_labels()[0] + qax.get_legend_handles_labels()[0]
        qax.legend(handles=handles, loc="upper right", fontsize="small")
        ax.set_title(f"{label} {'with' if case == 'win' else 'without'} window, run 1")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def compare(args) -> int:
    n3dc = Path(args.n3dc).resolve()
    program = reference_program(args)
    if not (n3dc / "examples/PowerTCP/config-burst.txt").is_file():
        raise UserError(f"{n3dc} has no examples/PowerTCP/config-burst.txt", 1)
    cc = CCS[args.cc]
    default_out = "n3dc_burst" if args.cc == "dcqcn" else f"n3dc_burst_{args.cc}"
    if args.flows != 10:
        default_out += f"_{args.flows}"
    out = Path(args.out or HERE / "results" / default_out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    sc = tomllib.loads(SCENARIO.read_text())
    topology, flows = FLOW_SETS[args.flows]
    short = [i for i, f in enumerate(flows) if f[3] != FLOW_BYTES]
    port = bottleneck_port(topology, BOTTLENECK_HOST)
    shoal = shoal_cmd()
    trace = shoal_trace(out, flows)
    result: dict = {
        "scenario": SCENARIO.name,
        "cc": args.cc,
        "runs": args.runs,
        "stop_s": args.stop,
        "phase_step_ns": args.phase_step,
        "n3dc_program": str(program),
        **({"flows": args.flows, "short_flows": len(short)} if short else {}),
        "bottleneck": port,
        "windows_s": {"alone": ALONE, "burst": BURST, "after": (AFTER_FROM, args.stop)},
        "cases": {},
    }
    figure_series: dict = {}
    missed: list[str] = []
    for case in args.cases:
        case_out = out / case
        case_out.mkdir(exist_ok=True)
        n3dc_runs, n3dc_pfc, n3dc_walls = [], [], []
        for k in range(1, args.runs + 1):
            print(f"{case}: ns3-datacenter run {k} ...", flush=True)
            run_out = case_out
            if args.phase_step:
                run_out = case_out / f"run{k}"
                run_out.mkdir(exist_ok=True)
            conf = n3dc_inputs(
                run_out, n3dc, sc, args.stop, topology, flows, (k - 1) * args.phase_step
            )
            cmd = [
                str(program),
                f"--conf={conf}",
                f"--algorithm={cc.algorithm}",
                f"--wien={str(cc.wien).lower()}",
                f"--delayWien={str(cc.delay_wien).lower()}",
                f"--windowCheck={CASES[case]}",
            ]
            wall, proc = run(cmd, "ns3-datacenter", env={"NS_GLOBAL_VALUE": f"RngRun={k}"})
            n3dc_walls.append(wall)
            series, interval_ns = read_n3dc_series(proc.stdout, port["n3dc_tor"], port["n3dc_port"])
            n3dc_runs.append(metrics(series, interval_ns))
            if short:
                fct = read_n3dc_fct(run_out / "n3dc_fct.txt", len(flows))
                n3dc_runs[-1].update(fct_metrics(fct, short))
            n3dc_pfc.append(read_n3dc_pfc(run_out / "n3dc_pfc.txt", round(args.stop * 1e9)))
            if k == 1:
                series.to_csv(case_out / "n3dc_bottleneck.csv", index=False)
                figure_series[case] = {"n3dc": (series, interval_ns)}
        shoal_runs, shoal_pfc, shoal_walls, shoal_sim = [], [], [], []
        shoal_out = case_out / "shoal"
        for k in range(1, args.runs + 1):
            print(f"{case}: Shoal run {k} ...", flush=True)
            if args.phase_step:
                trace = shoal_trace(case_out / f"run{k}", flows, (k - 1) * args.phase_step)
            pairs = {
                "workload.trace": trace,
                "run.seed": k,
                "run.stop_time": f"{round(args.stop * 1e9)}ns",
                "run.sample_interval": f"{interval_ns}ns",
                **(WINDOW if CASES[case] else {}),
                **shoal_cc(args.cc),
                **({"topology.path": topology} if topology != TOPOLOGY else {}),
            }
            cmd = [*shoal, "run", str(SCENARIO), "--out", str(shoal_out), "-q", *sets(pairs)]
            wall, _ = run(cmd, "shoal run")
            shoal_walls.append(wall)
            series = read_shoal_series(
                shoal_out, port["shoal_switch"], port["shoal_port"], interval_ns
            )
            shoal_runs.append(metrics(series, interval_ns))
            if short:
                shoal_runs[-1].update(fct_metrics(read_shoal_fct(shoal_out, len(flows)), short))
            shoal_pfc.append(read_shoal_pfc(shoal_out))
            shoal_sim.append(json.loads((shoal_out / "summary.json").read_text())["wall_time_s"])
            if k == 1:
                series.to_csv(case_out / "shoal_bottleneck.csv", index=False)
                figure_series[case]["shoal"] = (series, interval_ns)
        ms, mr = _summary(shoal_runs), _summary(n3dc_runs)
        pauses = {"n3dc": [pauses_received(p) for p in n3dc_pfc]}
        pauses["shoal"] = [pauses_received(p) for p in shoal_pfc]
        c = {
            "window_check": CASES[case],
            "interval_ns": interval_ns,
            "metrics": {
                k: {"shoal": ms[k], "n3dc": mr[k], "ratio": ratio(ms[k]["mean"], mr[k]["mean"])}
                for k in ms
            },
            "per_run": {"shoal": shoal_runs, "n3dc": n3dc_runs},
            "pauses_received": pauses,
            "pfc": {"shoal": shoal_pfc, "n3dc": n3dc_pfc},
            "wall_s": {
                "n3dc_median": statistics.median(n3dc_walls),
                "shoal_median": statistics.median(shoal_walls),
                "shoal_simulation_median": statistics.median(shoal_sim),
                "n3dc": n3dc_walls,
                "shoal": shoal_walls,
            },
        }
        c["speedup"] = c["wall_s"]["n3dc_median"] / c["wall_s"]["shoal_median"]
        targets = [
            ("peak_queue_bytes", TARGET_PEAK),
            ("first_peak_queue_bytes", TARGET_PEAK),
            ("after_gbps", TARGET_THROUGHPUT),
            ("single_flow_gbps", TARGET_THROUGHPUT),
        ]
        if short:
            targets += [
                ("short_fct_mean_us", TARGET_FCT_MEAN),
                ("short_fct_p99_us", TARGET_FCT_P99),
            ]
            for sim, rows in (("Shoal", shoal_runs), ("ns3-datacenter", n3dc_runs)):
                if left := sum(r["short_unfinished"] for r in rows):
                    missed.append(f"{case} {sim} left {left} short flows unfinished")
        for key, target in targets:
            q = c["metrics"][key]["ratio"]
            if q is None or abs(q - 1) > target:
                missed.append(f"{case} {key} ratio {q}")
        result["cases"][case] = c
        print_case(case, c, args.runs, cc.label)
    if args.n3dc_program is None:
        print("PAUSE frames: the stock program traces none (see --n3dc-program)")
    plot(figure_series, out / "burst.png", args.stop, cc.label)
    result["missed_targets"] = missed
    (out / "comparison.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print("targets: " + ("all met" if not missed else "missed " + "; ".join(missed)))
    print(f"wrote {out / 'comparison.json'} and {out / 'burst.png'}")
    return 3 if missed and args.check else 0


LABELS = {
    "single_flow_gbps": ("single-flow throughput, Gbps", 1),
    "first_peak_queue_bytes": ("burst's first peak queue, KB", 1e-3),
    "peak_queue_bytes": ("peak queue in the burst window, KB", 1e-3),
    "mean_queue_bytes": ("mean queue in the burst window, KB", 1e-3),
    "burst_gbps": ("throughput in the burst window, Gbps", 1),
    "after_gbps": ("throughput after the burst, Gbps", 1),
    "after_mean_queue_bytes": ("mean queue after the burst, KB", 1e-3),
    "short_fct_mean_us": ("short flows' mean FCT, us", 1),
    "short_fct_p50_us": ("short flows' median FCT, us", 1),
    "short_fct_p99_us": ("short flows' p99 FCT, us", 1),
    "short_fct_max_us": ("short flows' largest FCT, us", 1),
    "short_unfinished": ("short flows unfinished", 1),
}


def print_case(case: str, c: dict, runs: int, label: str = "DCQCN") -> None:
    print(f"\n{label} {case} (windowCheck={c['window_check']}), means of {runs} runs")
    print(f"  {'':<38} {'Shoal':>9} {'n3dc':>9} {'ratio':>6}")
    for key, (label, scale) in LABELS.items():
        if key not in c["metrics"]:
            continue
        m = c["metrics"][key]
        q = m["ratio"]
        print(
            f"  {label:<38} {m['shoal']['mean'] * scale:>9.2f} {m['n3dc']['mean'] * scale:>9.2f} "
            f"{'' if q is None else f'{q:6.3f}'}"
        )
    p = c["pauses_received"]
    print(f"  PAUSE frames received, per run: Shoal {p['shoal']}, n3dc {p['n3dc']}")
    w = c["wall_s"]
    print(
        f"  wall: ns3-datacenter {w['n3dc_median']:.2f} s, Shoal {w['shoal_median']:.2f} s "
        f"(medians, whole process): {c['speedup']:.0f}x; Shoal's simulation "
        f"{w['shoal_simulation_median']:.3f} s"
    )


def main(argv=None) -> int:
    p = n3dc_parser(__doc__)
    p.add_argument(
        "--cc",
        default="dcqcn",
        choices=list(CCS),
        help="the congestion control in both simulators (default dcqcn)",
    )
    p.add_argument(
        "--cases",
        help="comma-separated: nowin (windowCheck=0), win (windowCheck=1); default as "
        "script-burst.sh runs the cc: dcqcn both, timely nowin, the others win",
    )
    p.add_argument(
        "--runs",
        type=int,
        default=3,
        help="runs of each case in each simulator (ns-3 RngRun / Shoal run.seed 1..N)",
    )
    p.add_argument(
        "--stop",
        type=float,
        default=0.16,
        help=f"simulated seconds in both (default 0.16; more than {AFTER_FROM})",
    )
    p.add_argument(
        "--phase-step",
        type=int,
        default=0,
        metavar="NS",
        help="run k starts flow 0 (k-1) x NS ns later in both simulators (default 0): TIMELY's "
        "burst depends on where flow 0's once-per-RTT update falls when the burst starts, "
        "so its runs are otherwise one sample",
    )
    p.add_argument(
        "--flows",
        type=int,
        default=10,
        choices=sorted(FLOW_SETS),
        help="10: flow-burstExp-10.txt on topology.txt (default); 256: flow-burstExp-256.txt "
        "on topology-256.txt, the 10-flow burst plus 255 flows of 2,800 B, whose FCTs are "
        "compared too",
    )
    p.add_argument(
        "--out",
        help="output directory (default validation/results/n3dc_burst[_CC][_256])",
    )
    p.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = p.parse_args(argv)
    if args.phase_step < 0:
        p.error("--phase-step must be 0 or more")
    if args.cases is None:
        args.cases = list(CCS[args.cc].cases)
    else:
        args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in args.cases if c not in CASES]
    if unknown or not args.cases:
        p.error(f"--cases: unknown {unknown or 'empty'} (accepted: {', '.join(CASES)})")
    if args.runs < 1:
        p.error("--runs must be >= 1")
    if not args.stop > AFTER_FROM + 0.001:
        p.error(f"--stop must be above {AFTER_FROM + 0.001} s")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
