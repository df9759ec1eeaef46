#!/usr/bin/env python3
"""Cross-validate Shoal's IRN (over a lossy fabric) and RoCE over PFC against the IRN of
ConWeave's ns-3 simulator, on the same flows.

    python validation/compare_conweave_irn.py --conweave /path/to/conweave-ns3 \\
        [--modes irn pfc] [--flows 4000] [--load 0.3] [--buffer-mib 9] [--seed 1] \\
        [--runs 2] [--out DIR] [--reuse-conweave] [--check]

ConWeave's simulator (conweave-project/conweave-ns3, ns-3.19 from TLT's and HPCC's code)
carries the only public IRN we could build: its NIC answers each packet past a gap with a
NACK that SACKs that packet; the first NACK sends the sender back to its first
unacknowledged packet, from where it resends every packet it has not seen SACKed, in
flight or not (Shoal's ``rdma.loss_recovery.resend = "unsacked"``; the paper's, and
Shoal's default, resends only packets below a SACKed one); at most 104,000 B past the
cumulative ACK (its BDP for this topology); timeouts of 100 us while at most four
packets are unacknowledged, else 320 us. Its NIC also marks every NACK of a gap as a
congestion notification, which DCQCN cuts its rate for; Shoal's does not (with ECMP, gaps
come only from drops). validation/README.md, "IRN against ConWeave's ns-3", says how to
build it.

The network is the reference's ``leaf_spine_128_100G_OS2`` (128 hosts under 8 ToRs, 8
spines, every link 100 Gbps and 1 us), written by this driver in the HPCC format both
read (the reference takes IRN's BDP from the file's name). ``conweave_irn.toml`` holds
the switch, marking and DCQCN both are given. Steps: generate an all-to-all trace of
AliStorage sizes with ``shoal trace``; write it as the reference's flow file, its
configuration and topology; per mode (``irn``: IRN, no PFC; ``pfc``: go-back-N over PFC)
run the reference once (its paths are fixed by the flows' ports) and Shoal ``--runs``
times (``run.seed`` 1..N, each a new draw of ECMP paths), pooled; compare per size bucket
the mean FCT and p50 / p95 / p99 slowdown (both with the reference's ideal FCT), and the
drops, timeouts and data packets resent; time both.

Targets, per mode and bucket: Shoal's mean FCT within 10% of the reference's and its p99
slowdown within 20%. Writes ``comparison_<mode>.json`` and ``slowdown_vs_size_<mode>.png``
into the output directory, with both simulators' inputs and outputs. Exit status: 0 when
the comparison ran (with ``--check``, 3 on a missed target), 1 when the reference or Shoal
is missing or fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from compare_n3dc_workload import bucket_misses, bucket_stats, children_cpu_s, plot, toml_value
from compare_ns3 import UserError, ratio, run, run_guarded, sets, shoal_cmd

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "conweave_irn.toml"
PROGRAM = "build/scratch/network-load-balance"
# The reference starts flows at these seconds plus the trace's start time.
START_OFFSET_S = 2.0
HOSTS, TORS, SPINES = 128, 8, 8
RATE, DELAY = "100Gbps", "1000ns"
# The reference's IRN constants for this topology (network-load-balance.cc:1366-1418).
IRN_BDP_BYTES = 104_000
# The reference uses RTO_low while max_seq - highest_ack <= 3 MTU: at most four packets
# unacknowledged, fewer than five (Shoal counts packets unacknowledged).
IRN_RTO_LOW_BELOW = 5
HEADROOM = "27096B"  # 2 x rate x delay / 8 + 2 x 1,048 B (network-load-balance.cc:1319)
MODES = {
    "irn": {
        "rdma.loss_recovery": toml_value(
            {"kind": "irn", "resend": "unsacked", "rto_low_below": IRN_RTO_LOW_BELOW}
        ),
        "rdma.window": f"{IRN_BDP_BYTES}B",
    },
    # Shoal's IRN as the paper has it (each packet below a SACKed one resent once)
    # against the reference's IRN: what ConWeave's variant costs.
    "irn_paper": {
        "rdma.loss_recovery": toml_value({"kind": "irn", "rto_low_below": IRN_RTO_LOW_BELOW}),
        "rdma.window": f"{IRN_BDP_BYTES}B",
    },
    # PAUSE once the bytes outside headroom pass alpha x free shared bytes, alpha 1/16
    # (switch-mmu.cc:325-344); go-back-N with the reference's 4 ms timeout (rdma-hw.cc:128).
    "pfc": {
        "switch.flow_control": toml_value(
            {
                "kind": "pfc",
                "classes": [3],
                "headroom": HEADROOM,
                "alpha": 0.0625,
                "pause_at": "threshold",
            }
        ),
        "rdma.rto": "4ms",
    },
}
# The reference's mode each of Shoal's runs against.
REFERENCE_MODE = {"irn": "irn", "irn_paper": "irn", "pfc": "pfc"}
PERCENTILES = (50, 95, 99)


def topology_text() -> str:
    """The reference's leaf_spine_128_100G_OS2: hosts 0-127, host i under ToR 128 + i // 16,
    spines 136-143, every ToR linked to every spine."""
    tors = [HOSTS + t for t in range(TORS)]
    spines = [HOSTS + TORS + s for s in range(SPINES)]
    links = [(h, tors[h // (HOSTS // TORS)]) for h in range(HOSTS)]
    links += [(t, s) for t in tors for s in spines]
    lines = [f"{HOSTS + TORS + SPINES} {TORS + SPINES} {len(links)}"]
    lines.append(" ".join(str(n) for n in tors + spines))
    lines += [f"{a} {b} {RATE} {DELAY} 0" for a, b in links]
    return "\n".join(lines) + "\n"


def write_flows(path: Path, trace) -> None:
    """The reference's flow file: ``src dst pg bytes start_s``, in start order (it starts
    a flow when the clock reaches its line), priority group 3."""
    rows = [
        f"{r.src} {r.dst} 3 {r.bytes} {START_OFFSET_S + r.start_ns / 1e9:.9f}"
        for r in trace.itertuples()
    ]
    path.write_text(f"{len(rows)}\n" + "\n".join(rows) + "\n")


def write_config(
    out: Path, topology: Path, flows: Path, mode: str, buffer_mib: int, stop_s: float
) -> Path:
    """The reference's configuration, every key it reads that matters here written out
    (the values of its run.py for DCQCN at 100 Gbps, plain ECMP)."""
    prefix = out / f"conweave_{mode}_"
    rates = [r * 10**9 for r in (20, 50, 100, 200, 250, 400)]

    def rate_map(value) -> str:
        return f"{len(rates)} " + " ".join(f"{r} {value}" for r in rates)

    keys = {
        "ENABLE_QCN": 1,
        "USE_DYNAMIC_PFC_THRESHOLD": 1,
        "PACKET_PAYLOAD_SIZE": 1000,
        "TOPOLOGY_FILE": topology,
        "FLOW_FILE": flows,
        "FLOW_INPUT_FILE": f"{prefix}in.txt",
        "CNP_OUTPUT_FILE": f"{prefix}cnp.txt",
        "FCT_OUTPUT_FILE": f"{prefix}fct.txt",
        "PFC_OUTPUT_FILE": f"{prefix}pfc.txt",
        "QLEN_MON_FILE": f"{prefix}qlen.txt",
        "VOQ_MON_FILE": f"{prefix}voq.txt",
        "VOQ_MON_DETAIL_FILE": f"{prefix}voq_detail.txt",
        "UPLINK_MON_FILE": f"{prefix}uplink.txt",
        "CONN_MON_FILE": f"{prefix}conn.txt",
        "EST_ERROR_MON_FILE": f"{prefix}est_error.txt",
        "QLEN_MON_START": START_OFFSET_S,
        "QLEN_MON_END": START_OFFSET_S,
        "SW_MONITORING_INTERVAL": 10000,
        "FLOWGEN_START_TIME": START_OFFSET_S,
        "FLOWGEN_STOP_TIME": f"{stop_s:.6f}",
        "BUFFER_SIZE": buffer_mib,
        "CC_MODE": 1,
        "LB_MODE": 0,
        "ENABLE_PFC": int(mode == "pfc"),
        "ENABLE_IRN": int(mode == "irn"),
        "CONWEAVE_TX_EXPIRY_TIME": 1000,
        "CONWEAVE_REPLY_TIMEOUT_EXTRA": 4,
        "CONWEAVE_PATH_PAUSE_TIME": 16,
        "CONWEAVE_EXTRA_VOQ_FLUSH_TIME": 64,
        "CONWEAVE_DEFAULT_VOQ_WAITING_TIME": 400,
        "ALPHA_RESUME_INTERVAL": 1,
        "RATE_DECREASE_INTERVAL": 4,
        "CLAMP_TARGET_RATE": 0,
        "RP_TIMER": 300,
        "EWMA_GAIN": 0.00390625,
        "FAST_RECOVERY_TIMES": 1,
        "RATE_AI": "40Mb/s",
        "RATE_HAI": "100Mb/s",
        "MIN_RATE": "100Mb/s",
        "DCTCP_RATE_AI": "1000Mb/s",
        "ERROR_RATE_PER_LINK": 0.0,
        "L2_CHUNK_SIZE": 4000,
        "L2_ACK_INTERVAL": 1,
        "L2_BACK_TO_ZERO": 0,
        "HAS_WIN": 0,
        "GLOBAL_T": 1,
        "VAR_WIN": 0,
        "FAST_REACT": 0,
        "U_TARGET": 0.95,
        "MI_THRESH": 0,
        "INT_MULTI": 1,
        "MULTI_RATE": 0,
        "SAMPLE_FEEDBACK": 0,
        "RATE_BOUND": 1,
        "KMAX_MAP": rate_map(400),
        "KMIN_MAP": rate_map(100),
        "PMAX_MAP": rate_map(0.2),
        "LOAD": 0,
        "RANDOM_SEED": 1,
        "LINK_DOWN": "0 0 0",
    }
    path = out / f"conweave_{mode}_config.txt"
    path.write_text("".join(f"{k} {v}\n" for k, v in keys.items()))
    return path


def read_fct(path: Path, trace) -> tuple:
    """FCT and ideal FCT (ns) by flow index from the reference's FCT file (``src dst sport
    dport bytes start_ns fct_ns ideal_ns``): it numbers a host's flows by source port,
    10,000 onward in the flow file's order."""
    import numpy as np

    index: dict[tuple[int, int], int] = {}
    counts: dict[int, int] = {}
    for i, src in enumerate(trace["src"].to_numpy()):
        k = counts.get(int(src), 0)
        counts[int(src)] = k + 1
        index[(int(src), 10000 + k)] = i
    fct, ideal = np.full(len(trace), np.nan), np.full(len(trace), np.nan)
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 8:
            i = index[(int(parts[0]), int(parts[2]))]
            fct[i], ideal[i] = float(parts[6]), float(parts[7])
    return fct, ideal


STATS = re.compile(r"STATS (.*)")


def read_stats(stderr: str) -> dict[str, int]:
    """The counters the reference prints at the end of a run, where its program was built
    with the driver's one-line patch (validation/README.md); empty otherwise."""
    match = STATS.search(stderr)
    if not match:
        return {}
    return {k: int(v) for k, v in (kv.split("=") for kv in match.group(1).split())}


def reference_program(args) -> Path:
    """The reference's program: ``--conweave-program``, else the tree's own build."""
    program = Path(args.conweave_program or Path(args.conweave) / PROGRAM).resolve()
    if not program.is_file():
        raise UserError(f"{program} is missing: build ConWeave's ns-3 (validation/README.md)", 1)
    return program


def run_conweave(args, out: Path, mode: str, config: Path, inputs: bytes) -> dict:
    """Runs the reference for ``mode`` (or reuses its last run on the same inputs)."""
    program = reference_program(args)
    record = out / f"conweave_{mode}_run.json"
    digest = hashlib.sha256(inputs + config.read_bytes() + str(program).encode()).hexdigest()
    saved = json.loads(record.read_text()) if record.is_file() else {}
    if (args.reuse_conweave or mode in args.ran) and saved.get("inputs") == digest:
        print(f"ConWeave ({mode}): reusing its run", flush=True)
        return saved
    print(f"running ConWeave's ns-3 ({mode}) ...", flush=True)
    env = {**os.environ, "LD_LIBRARY_PATH": str(Path(args.conweave).resolve() / "build")}
    cpu, t0 = children_cpu_s(), time.perf_counter()
    try:
        with (out / f"conweave_{mode}_stdout.txt").open("w") as stdout:
            proc = subprocess.run(
                [str(program), str(config)],
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
    except OSError as e:
        raise UserError(f"ConWeave: cannot run {program}: {e.strerror or e}", 1) from None
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise UserError(
            f"ConWeave failed (exit {proc.returncode}):\n{proc.stderr.strip()[-3000:]}", 1
        )
    saved = {
        "inputs": digest,
        "wall_s": wall,
        "cpu_s": children_cpu_s() - cpu,
        "stats": read_stats(proc.stderr),
    }
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(saved, indent=2) + "\n")
    tmp.replace(record)
    args.ran.add(mode)
    print(f"  {wall:.1f} s ({saved['cpu_s']:.1f} s CPU)", flush=True)
    return saved


def compare_mode(
    args, out: Path, mode: str, trace, trace_csv: Path, topology: Path, flows_file: Path
) -> dict:
    import numpy as np

    stop = START_OFFSET_S + trace.start_ns.max() / 1e9 + 0.001
    ref_mode = REFERENCE_MODE[mode]
    config = write_config(out, topology, flows_file, ref_mode, args.buffer_mib, stop)
    inputs = topology.read_bytes() + flows_file.read_bytes()
    ref = run_conweave(args, out, ref_mode, config, inputs)
    ref_fct, ideal = read_fct(out / f"conweave_{ref_mode}_fct.txt", trace)
    packets = int(sum(math.ceil(b / 1000) for b in trace["bytes"]))

    shoal, shoal_out = shoal_cmd(), out / f"shoal_{mode}"
    pairs = {
        "topology.kind": "file",
        "topology.path": topology,
        "switch.buffer": f"{args.buffer_mib}MiB",
        "workload.pattern": "trace",
        "workload.trace": trace_csv,
        **MODES[mode],
    }
    runs, walls, cpus, counts = [], [], [], []
    for k in range(1, args.runs + 1):
        print(f"running Shoal ({mode}), run {k}/{args.runs} ...", flush=True)
        cpu = children_cpu_s()
        wall, _ = run(
            shoal
            + ["run", str(SCENARIO), "--out", str(shoal_out), "-q"]
            + sets({**pairs, "run.seed": k}),
            "shoal run",
        )
        cpus.append(children_cpu_s() - cpu)
        walls.append(wall)
        flows = __import__("pandas").read_parquet(shoal_out / "flows.parquet").sort_values("id")
        runs.append(flows["fct_ns"].to_numpy(dtype=float))
        summary = json.loads((shoal_out / "summary.json").read_text())
        counts.append(
            {
                "drops": sum(summary["drops"].values()),
                "timeouts": summary["timeouts"],
                "resent": summary["retransmits"],
            }
        )
    stats = ref["stats"]
    ref_counts = {
        "drops": stats.get("dropped_pkt_sw_ingress", 0) + stats.get("dropped_pkt_sw_egress", 0),
        "timeouts": stats.get("rto_expiries"),
        "resent": stats["total_pkts_sent_by_nics"] - packets if stats else None,
    }
    shoal_fct = np.concatenate(runs)
    ideals, bytes_ = np.tile(ideal, args.runs), np.tile(trace["bytes"].to_numpy(), args.runs)
    s = bucket_stats(shoal_fct, ideals, bytes_)
    r = bucket_stats(ref_fct, ideal, trace["bytes"].to_numpy())
    names = ["mean_fct_us", "p99_fct_us", "mean_slowdown"] + [f"p{p}_slowdown" for p in PERCENTILES]
    shoal_mean = {k: statistics.mean(c[k] for c in counts) for k in counts[0]}
    result = {
        "mode": mode,
        "flows": len(trace),
        "load": args.load,
        "seed": args.seed,
        "runs": args.runs,
        "buffer_mib": args.buffer_mib,
        "overrides": {k: str(v) for k, v in pairs.items()},
        "buckets": {
            k: {
                "shoal": s[k],
                "conweave": r[k],
                "ratio": {n: ratio(s[k][n], r[k][n]) for n in names},
            }
            for k in s
        },
        "per_run": {"shoal_mean": shoal_mean, "shoal": counts, "conweave": ref_counts},
        "wall_s": {"conweave": ref["wall_s"], "shoal_median": statistics.median(walls)},
        "cpu_s": {"conweave": ref["cpu_s"], "shoal_median": statistics.median(cpus)},
    }
    fan_in = trace["fan_in"].to_numpy()
    if fan_in.any():
        # The fan-ins' flows and the rest, each pooled over sizes: a size bucket mixes them.
        result["groups"] = {}
        for name, mask in (("fan_in", fan_in), ("background", ~fan_in)):
            tiled = np.tile(mask, args.runs)
            s_all = bucket_stats(shoal_fct[tiled], ideals[tiled], bytes_[tiled])["all"]
            r_all = bucket_stats(ref_fct[mask], ideal[mask], trace["bytes"].to_numpy()[mask])["all"]
            result["groups"][name] = {
                "shoal": s_all,
                "conweave": r_all,
                "ratio": {n: ratio(s_all[n], r_all[n]) for n in names},
            }
    result["missed_targets"] = missed_targets(result, shoal_fct, ref_fct)
    report, figure = out / f"comparison_{mode}.json", out / f"slowdown_vs_size_{mode}.png"
    tmp = report.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(report)
    # The reference's one run, repeated as often as Shoal's: the same distribution.
    plot({"Shoal": shoal_fct, "ConWeave ns-3": np.tile(ref_fct, args.runs)}, ideals, bytes_, figure)
    print_report(result, report)
    return result


def missed_targets(result: dict, shoal_fct, ref_fct) -> list[str]:
    import numpy as np

    missed = bucket_misses(result["buckets"])
    for who, fct in (("ConWeave", ref_fct), ("Shoal", shoal_fct)):
        if np.isnan(fct).any():
            missed.append(f"{who} left {int(np.isnan(fct).sum())} flows unfinished")
    return missed


def print_report(result: dict, report: Path) -> None:
    def num(v, spec=".1f"):
        return "-" if v is None else format(v, spec)

    print(
        f"\n{result['mode']}: {result['flows']} flows, load {result['load']}, "
        f"{result['buffer_mib']} MiB; Shoal {result['runs']} runs pooled; "
        "FCT in us; Shoal / ConWeave (ratio)"
    )
    cols = [
        ("mean FCT", "mean_fct_us", ".1f"),
        ("p50 slowdown", "p50_slowdown", ".2f"),
        ("p99 slowdown", "p99_slowdown", ".2f"),
    ]
    print(f"{'bucket':<11} {'count':>6}  " + "  ".join(f"{c[0]:>28}" for c in cols))
    rows = list(result["buckets"].values())
    for name, g in result.get("groups", {}).items():
        rows.append({**g, "shoal": {**g["shoal"], "label": name.replace("_", "-")}})
    for b in rows:
        cells = [
            f"{num(b['shoal'][key], spec)} / {num(b['conweave'][key], spec)} "
            f"({num(b['ratio'][key], '.3f')})"
            for _, key, spec in cols
        ]
        print(
            f"{b['shoal']['label']:<11} {b['shoal']['count']:>6}  "
            + "  ".join(f"{c:>28}" for c in cells)
        )
    per = result["per_run"]
    for key in ("drops", "timeouts", "resent"):
        print(
            f"  {key:<9} per run: Shoal {per['shoal_mean'][key]:.1f}, "
            f"ConWeave {num(per['conweave'][key], 'd')}"
        )
    w, c = result["wall_s"], result["cpu_s"]
    print(
        f"wall: ConWeave {w['conweave']:.1f} s, Shoal {w['shoal_median']:.1f} s (median); "
        f"CPU {c['conweave']:.1f} s / {c['shoal_median']:.1f} s"
    )
    missed = result["missed_targets"]
    print("targets: " + ("all met" if not missed else "missed " + "; ".join(missed)))
    print(f"wrote {report}")


def compare(args) -> int:
    import pandas as pd

    reference_program(args)
    out = Path(
        args.out
        or HERE
        / "results"
        / f"conweave_irn_{args.flows}_load{args.load}_fan{args.fan_in}_"
        f"{args.buffer_mib}mib_seed{args.seed}"
    ).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # The reference reads IRN's BDP from this name.
    topology = out / "leaf_spine_128_100G_OS2.txt"
    topology.write_text(topology_text())
    trace_csv = out / "trace.csv"
    print(f"generating {args.flows} flows (AliStorage, load {args.load}) ...", flush=True)
    gen = {"topology.kind": "file", "topology.path": topology, "run.seed": args.seed}
    background = {"workload.flows": args.flows, "workload.load": args.load}
    run(
        shoal_cmd()
        + ["trace", str(SCENARIO), "--out", str(trace_csv)]
        + sets({**gen, **background}),
        "shoal trace",
    )
    trace = pd.read_csv(trace_csv)
    if args.fan_in:
        rounds = max(1, round(args.flows * args.fan_in_load / args.load / args.fan_in))
        print(
            f"  and {rounds} fan-ins of {args.fan_in} x {args.fan_in_size} "
            f"(load {args.fan_in_load})",
            flush=True,
        )
        fan_in = {
            "workload.pattern": "fan_in",
            "workload.fan_in": args.fan_in,
            "workload.size": args.fan_in_size,
            "workload.load": args.fan_in_load,
            "workload.flows": rounds * args.fan_in,
            "run.seed": args.seed + 1000,
        }
        fan_in_csv = out / "trace_fan_in.csv"
        run(
            shoal_cmd()
            + ["trace", str(SCENARIO), "--out", str(fan_in_csv)]
            + sets({**gen, **fan_in}),
            "shoal trace",
        )
        fan_in_flows = pd.read_csv(fan_in_csv).drop(columns="query", errors="ignore")
        trace = pd.concat([trace.assign(fan_in=False), fan_in_flows.assign(fan_in=True)])
    # Whole nanoseconds, the reference's clock; in start order, numbered in that order.
    trace["start_ns"] = trace["start_ns"].round().astype("int64")
    trace = trace.sort_values(["start_ns", "id"], kind="stable").reset_index(drop=True)
    trace["id"] = range(len(trace))
    if "fan_in" not in trace:
        trace["fan_in"] = False
    trace.drop(columns="fan_in").to_csv(trace_csv, index=False)
    flows_file = out / "conweave_flows.txt"
    write_flows(flows_file, trace)
    missed = []
    args.ran = set()  # the reference's modes this invocation ran
    for mode in args.modes:
        missed += compare_mode(args, out, mode, trace, trace_csv, topology, flows_file)[
            "missed_targets"
        ]
    return 3 if missed and args.check else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--conweave", required=True, help="ConWeave's ns-3 tree (conweave-ns3), built")
    p.add_argument(
        "--conweave-program",
        help="the reference's program to run (default: the tree's build/scratch/"
        "network-load-balance), e.g. a build without headroom in lossy runs",
    )
    p.add_argument("--modes", nargs="+", choices=sorted(MODES), default=["irn", "pfc"])
    p.add_argument("--flows", type=int, default=4000, help="flows of the trace (default 4,000)")
    p.add_argument("--load", type=float, default=0.3, help="load of the host links (default 0.3)")
    p.add_argument(
        "--buffer-mib", type=int, default=9, help="switch buffer in MiB (default 9, run.py's)"
    )
    p.add_argument(
        "--fan-in",
        type=int,
        default=0,
        help="add rounds of this many senders sending --fan-in-size at once to one host "
        "(Shoal's fan_in pattern: senders outside its rack), the incasts that make a "
        "lossy fabric drop; default 0: none",
    )
    p.add_argument("--fan-in-size", default="64KB", help="bytes per fan-in sender (default 64KB)")
    p.add_argument(
        "--fan-in-load", type=float, default=0.1, help="load of the fan-ins (default 0.1)"
    )
    p.add_argument("--seed", type=int, default=1, help="the trace's seed")
    p.add_argument("--runs", type=int, default=2, help="Shoal runs (run.seed 1..N), pooled")
    p.add_argument("--out", help="output directory (default validation/results/conweave_irn_...)")
    p.add_argument(
        "--reuse-conweave",
        action="store_true",
        help="reuse the reference's runs on the same inputs",
    )
    p.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = p.parse_args(argv)
    if args.flows < 1 or args.runs < 1 or args.buffer_mib < 1:
        p.error("--flows, --runs and --buffer-mib must be >= 1")
    if not 0 < args.load < 1 or not 0 < args.fan_in_load < 1:
        p.error("--load and --fan-in-load must be in (0, 1)")
    if args.fan_in < 0:
        p.error("--fan-in must be >= 0")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
