#!/usr/bin/env python3
"""Cross-validate Shoal's RDMA transport and DCQCN against ns3-datacenter (issue 16).

    python validation/compare_n3dc.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        [--flows 500] [--load 0.5] [--seed 1] [--out DIR] [--check]
        [--pfc [--buffer-mib N]] [--n3dc-program PATH]

ns3-datacenter (inet-tub/ns3-datacenter, commit 6ddb4a4) is built outside this
repository, as validation/README.md ("Building ns3-datacenter") says, with the target
``powertcp-evaluation-burst``. Steps: generate a web-search many-to-few trace with
``shoal trace`` from ``star_rdma_dcqcn.toml`` (12 senders, 4 receivers), write the same
topology and flows as ns3-datacenter's input files and its configuration (its
``config-burst.txt`` with the paths, a buffer of the scenario's size and no tracing),
run it with DCQCN (cc mode 1, no window), replay the trace in Shoal (timing both), and
compare FCTs per size bucket (each simulator's ``--runs`` runs of the trace pooled: RED
marks at random, so one run of either differs from the next by about 10% at 60% load)
and flow by flow. Writes ``comparison.json`` and both
simulators' inputs and outputs into the output directory.

With ``--pfc`` both run ``star_rdma_pfc.toml`` instead: the reference's buffer and PFC
(an ingress pool of ``--buffer-mib`` MiB, headroom 3*C*D per port and queue, alpha 1/8,
31 B frames), and the script also compares the PFC frames (PAUSE and RESUME received by
hosts and by switches, sent by switches) and the paused time. ns3-datacenter writes its
PFC trace only from a build of ``powertcp-evaluation-burst.cc`` whose two ``QbbPfc``
trace lines (915-916, commented out upstream) are on; give it with ``--n3dc-program``
(validation/README.md says how to build it). The stock program writes an empty trace.

Targets: Shoal's mean FCT per bucket within 10% of ns3-datacenter's, p99 within 20%;
without ``--pfc``, no PFC frame in the reference (else the two model different
networks; checked only with a program that traces them). Exit status: 0 when
the comparison ran (use --check to exit 3 on a missed target), 1 when ns3-datacenter or
Shoal is missing or fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tomllib
from pathlib import Path

from _common import check_replay_args, override_pool_size, rate_bps
from compare_ns3 import (
    UserError,
    bucket_stats,
    make_trace,
    parse_size,
    parse_time_s,
    ratio,
    run,
    run_guarded,
    sets,
    shoal_cmd,
)

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "star_rdma_dcqcn.toml"
PFC_SCENARIO = HERE / "star_rdma_pfc.toml"
MIB = 1 << 20
# The bytes ns3-datacenter puts on the wire: its PppHeader is 14 B (ppp-header.cc:81-83), so
# a data packet carries 48 B of headers (1,048 B with 1,000 B of payload), an ACK is 60 B
# and a PFC frame 43 B (9 + 20 + 14). It serializes them in whole nanoseconds, truncated
# (DataRate::CalculateBytesTxTime divides a Time by the rate), which at 100 Gbps gives
# 83, 4 and 3 ns: what Shoal's 36 B, 48 B and 31 B take (82.88, 3.84 and 2.48 ns). The
# scenarios keep those; at a rate where every size is a whole number of nanoseconds
# (8 Gbps: 1 B per ns) ``--n3dc-sizes`` gives Shoal the reference's bytes.
N3DC_SIZES = {
    "rdma.header": 48,
    "rdma.ack_size": 60,
    "switch.flow_control.frame_size": "43B",
}
PROGRAM = "build/examples/PowerTCP/ns3.39-powertcp-evaluation-burst-optimized"
TEMPLATE = "examples/PowerTCP/config-burst.txt"
# ns3-datacenter starts flows at these seconds plus the trace's start time.
START_OFFSET_S = 0.1
TARGET_MEAN = 0.10
TARGET_P99 = 0.20


def n3dc_buffer_mib(sc: dict, pfc: bool) -> int:
    """ns3-datacenter's BUFFER_SIZE (whole MiB) for the scenario's pool. Its ingress pool
    and its lossless egress pool are BUFFER_SIZE MiB (powertcp-evaluation-burst.cc:949-951),
    so with PFC the scenario's pool must be exactly that."""
    pool = parse_size(sc["switch"]["pool_size"])
    if not pfc:
        return max(1, round(pool / 1e6))
    if pool % MIB or pool == 0:
        raise UserError(
            f"switch.pool_size = {sc['switch']['pool_size']} is not a whole number of MiB, "
            "which ns3-datacenter's BUFFER_SIZE needs with --pfc"
        )
    return pool // MIB


def n3dc_inputs(
    out: Path, n3dc: Path, trace, hosts: int, sc: dict, pfc: bool = False, tail_s: float = 1.0
) -> Path:
    """Writes the topology, flow and configuration files; returns the configuration."""
    t = sc["topology"]
    rate = rate_bps(t["link_rate"])
    delay = f"{round(parse_time_s(t['link_delay']) * 1e9)}ns"
    switch = hosts
    links = [f"{h} {switch} {rate}.0 {delay} 0" for h in range(hosts)]
    (out / "n3dc_topology.txt").write_text(
        f"{hosts + 1} 1 1 {hosts}\n{switch}\n" + "\n".join(links) + "\n"
    )
    rows = [
        f"{r.src} {r.dst} 3 {100 + i} {r.bytes} {START_OFFSET_S + r.start_ns / 1e9:.9f}"
        for i, r in enumerate(trace.itertuples())
    ]
    (out / "n3dc_flows.txt").write_text(f"{len(rows)}\n" + "\n".join(rows) + "\n")
    buffer_mb = n3dc_buffer_mib(sc, pfc)
    stop = START_OFFSET_S + trace.start_ns.max() / 1e9 + tail_s
    overrides = {
        "TOPOLOGY_FILE": out / "n3dc_topology.txt",
        **n3dc_files(out),
        "BUFFER_SIZE": buffer_mb,
        "SIMULATOR_STOP_TIME": f"{stop:.3f}",
    }
    red = sc["switch"].get("marking", {}).get("red")
    if red:
        kb = lambda v: round(parse_size(v) / 1000)  # noqa: E731
        overrides["KMIN_MAP"] = f"1 {rate} {kb(red['kmin'])}"
        overrides["KMAX_MAP"] = f"1 {rate} {kb(red['kmax'])}"
        overrides["PMAX_MAP"] = f"1 {rate} {red['pmax']}"
    else:
        overrides["ENABLE_QCN"] = 0
    return write_n3dc_config(n3dc, out, overrides)


def n3dc_files(out: Path) -> dict:
    """The configuration keys that put the reference's flow file and outputs in ``out``
    (its packet trace off)."""
    return {
        "FLOW_FILE": out / "n3dc_flows.txt",
        "FCT_OUTPUT_FILE": out / "n3dc_fct.txt",
        "PFC_OUTPUT_FILE": out / "n3dc_pfc.txt",
        "TRACE_OUTPUT_FILE": out / "n3dc_mix.tr",
        "QLEN_MON_FILE": out / "n3dc_qlen.txt",
        "ENABLE_TRACE": 0,
    }


def write_n3dc_config(n3dc: Path, out: Path, overrides: dict) -> Path:
    """ns3-datacenter's ``config-burst.txt`` with the values of ``overrides`` (by key) in
    place of its own, as ``out/n3dc_config.txt``; returns its path."""
    lines = []
    for line in (n3dc / TEMPLATE).read_text().splitlines():
        key = line.split(" ", 1)[0]
        lines.append(f"{key} {overrides[key]}" if key in overrides else line)
    conf = out / "n3dc_config.txt"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def read_n3dc_fct(path: Path, flows: int):
    """FCT in ns by flow index (the destination port is 100 + the index)."""
    import numpy as np

    fct = np.full(flows, np.nan)
    for line in path.read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 7:
            fct[int(parts[3]) - 100] = float(parts[6])
    return fct


def read_n3dc_pfc(path: Path, end_ns: int) -> dict:
    """ns3-datacenter's PFC trace (``get_pfc``, powertcp-evaluation-burst.cc:193-195): one
    line ``time_ns node nodeType ifIndex type`` per frame, traced by the device that
    received it (type 1 PAUSE, 0 RESUME; qbb-net-device.cc:509-516) or sent it (2 PAUSE,
    3 RESUME; :612). Counts by node kind (hosts are nodeType 0, switches 1), and the time
    each (node, ifIndex) spent paused (from a received PAUSE to the next RESUME, or to
    ``end_ns``)."""
    counts = {
        kind: {"pauses_received": 0, "resumes_received": 0, "pauses_sent": 0, "resumes_sent": 0}
        for kind in ("host", "switch")
    }
    names = {1: "pauses_received", 0: "resumes_received", 2: "pauses_sent", 3: "resumes_sent"}
    since: dict[tuple[int, int], int] = {}
    paused_ns = 0
    ports = set()
    text = path.read_text() if path.is_file() else ""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 5:
            continue
        t, node, node_type, port, kind = (int(x) for x in parts)
        counts["host" if node_type == 0 else "switch"][names[kind]] += 1
        key = (node, port)
        if kind == 1:
            since.setdefault(key, t)
            ports.add(key)
        elif kind == 0 and key in since:
            paused_ns += t - since.pop(key)
    paused_ns += sum(end_ns - t for t in since.values())
    return {**counts, "paused_ns": paused_ns, "paused_ports": len(ports)}


def read_shoal_pfc(run_dir: Path) -> dict:
    """The same numbers from Shoal's ``pfc_ports.parquet`` (one row per node, port and
    class that sent or received a frame; counts and paused time at the paused node)."""
    import pandas as pd

    counts = {
        kind: {"pauses_received": 0, "resumes_received": 0, "pauses_sent": 0, "resumes_sent": 0}
        for kind in ("host", "switch")
    }
    path = run_dir / "pfc_ports.parquet"
    if not path.is_file():
        return {**counts, "paused_ns": 0, "paused_ports": 0}
    t = pd.read_parquet(path)
    for kind, g in t.groupby("node_kind"):
        for col in counts[kind]:
            counts[kind][col] = int(g[col].sum())
    paused = t[t.pauses_received > 0]
    return {**counts, "paused_ns": float(paused.paused_ns.sum()), "paused_ports": len(paused)}


def common_frames(n3dc_trace: Path, shoal_dir: Path) -> int:
    """How many PFC frames the two received alike from the start: the frames that reached
    hosts and switches, each simulator's in time order (ties by node), are the same while
    their nodes and kinds agree and their times agree within 1 ns (ns3-datacenter keeps
    whole ns; its times are START_OFFSET_S later). Meaningful when both are deterministic
    (``--no-ecn``)."""
    import pandas as pd

    ours_path = shoal_dir / "pfc.parquet"
    if not n3dc_trace.is_file() or not ours_path.is_file():
        return 0
    theirs = sorted(
        (int(t) - round(START_OFFSET_S * 1e9), int(node), kind == "1")
        for t, node, _, _, kind in (line.split() for line in n3dc_trace.read_text().splitlines())
        if kind in ("0", "1")
    )
    ours = pd.read_parquet(ours_path)
    mine = sorted(zip(ours.time_ns.round().astype(int), ours.node, ours.pause, strict=True))
    same = 0
    for (ta, na, pa), (tb, nb, pb) in zip(theirs, mine, strict=False):
        if na != nb or pa != pb or abs(ta - tb) > 1:
            break
        same += 1
    return same


def _mean_pfc(runs: list[dict]) -> dict:
    """The mean over runs of each count of ``read_*_pfc``."""
    out: dict = {}
    for key, v in runs[0].items():
        if isinstance(v, dict):
            out[key] = {k: statistics.mean(r[key][k] for r in runs) for k in v}
        else:
            out[key] = statistics.mean(r[key] for r in runs)
    return out


def reference_program(args) -> Path:
    """The reference's burst program: ``--n3dc-program``, or the stock build under
    ``--n3dc``; a clear error (exit 1) when it is not there."""
    n3dc = Path(args.n3dc).resolve()
    program = Path(args.n3dc_program).resolve() if args.n3dc_program else n3dc / PROGRAM
    if not program.is_file():
        raise UserError(
            f"{program} is missing: build ns3-datacenter's powertcp-evaluation-burst", 1
        )
    return program


def compare(args) -> int:
    import numpy as np
    import pandas as pd

    n3dc = Path(args.n3dc).resolve()
    program = reference_program(args)
    scenario = PFC_SCENARIO if args.pfc else SCENARIO
    sc = tomllib.loads(scenario.read_text())
    shoal_sets = override_pool_size(sc, args.buffer_mib)
    for key, value in (("link_rate", args.link_rate), ("link_delay", args.link_delay)):
        if value is not None:
            sc["topology"][key] = value
            shoal_sets[f"topology.{key}"] = value
    if args.no_ecn:
        sc["switch"]["marking"] = {}
        shoal_sets["switch.marking"] = "{}"
    if args.n3dc_sizes:
        # Without PFC there are no frames (and no [switch.flow_control] table to set).
        shoal_sets.update({k: v for k, v in N3DC_SIZES.items() if args.pfc or "flow" not in k})
    hosts = sc["topology"]["hosts"]
    name = f"n3dc_pfc{n3dc_buffer_mib(sc, True)}mib" if args.pfc else "n3dc"
    default_out = HERE / "results" / f"{name}_{args.flows}_seed{args.seed}"
    out = Path(args.out or default_out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    shoal = shoal_cmd()
    senders, receivers = f"0-{hosts * 3 // 4 - 1}", f"{hosts * 3 // 4}-{hosts - 1}"
    trace_csv = make_trace(shoal, scenario, out, senders, receivers, "access", args, shoal_sets)
    trace = pd.read_csv(trace_csv)

    conf = n3dc_inputs(out, n3dc, trace, hosts, sc, args.pfc, args.n3dc_tail)
    print(f"running ns3-datacenter on {len(trace)} flows, {args.runs} runs ...", flush=True)
    cmd = [
        str(program),
        f"--conf={conf}",
        "--algorithm=1",
        "--wien=false",
        "--delayWien=false",
        "--windowCheck=0",
    ]
    # The same trace, `--runs` times in each: RED marks at random, so single runs of the
    # same flows diverge; the comparison pools the runs of each simulator.
    n3dc_walls, n3dc_runs, n3dc_pfc, n3dc_drops = [], [], [], 0
    for k in range(1, args.runs + 1):
        wall, proc = run(cmd, "ns3-datacenter", env={"NS_GLOBAL_VALUE": f"RngRun={k}"})
        n3dc_walls.append(wall)
        fct = read_n3dc_fct(out / "n3dc_fct.txt", len(trace))
        n3dc_runs.append(fct)
        # The end of the flows' activity: the last flow's end (the run goes on idle for 1 s).
        ends = START_OFFSET_S * 1e9 + trace.start_ns.to_numpy() + np.nan_to_num(fct)
        n3dc_pfc.append(read_n3dc_pfc(out / "n3dc_pfc.txt", int(ends.max())))
        if k == 1:
            shutil.copyfile(out / "n3dc_pfc.txt", out / "n3dc_pfc_run1.txt")
        # SwitchMmu prints every lossless packet it drops (switch-mmu.cc:719, :796).
        n3dc_drops += proc.stdout.count("dropping lossless packet")

    print("running Shoal ...", flush=True)
    shoal_out = out / "shoal"
    walls, shoal_runs, shoal_pfc, shoal_drops, frames_alike = [], [], [], 0, 0
    shoal_sim: list[float] = []
    for k in range(1, args.runs + 1):
        pairs = {"workload.pattern": "trace", "workload.trace": trace_csv, "run.seed": k}
        wall, _ = run(
            shoal
            + ["run", str(scenario), "--out", str(shoal_out), "-q"]
            + sets({**pairs, **shoal_sets}),
            "shoal run",
        )
        walls.append(wall)
        flows = pd.read_parquet(shoal_out / "flows.parquet").sort_values("id")
        shoal_runs.append(flows["fct_ns"].to_numpy())
        shoal_pfc.append(read_shoal_pfc(shoal_out))
        if k == 1:
            frames_alike = common_frames(out / "n3dc_pfc_run1.txt", shoal_out)
        summary = json.loads((shoal_out / "summary.json").read_text())
        shoal_sim.append(summary["wall_time_s"])
        shoal_drops += (summary.get("pfc") or {}).get("lossless_drops", 0)
    shoal_fct, n3dc_fct = np.concatenate(shoal_runs), np.concatenate(n3dc_runs)
    bytes_ = np.tile(trace["bytes"].to_numpy(), args.runs)
    n3dc_wall = statistics.median(n3dc_walls)
    pfc_frames = sum(c for r in n3dc_pfc for kind in ("host", "switch") for c in r[kind].values())

    s, r = bucket_stats(shoal_fct, bytes_), bucket_stats(n3dc_fct, bytes_)
    both = ~np.isnan(shoal_fct) & ~np.isnan(n3dc_fct)
    result = {
        "scenario": scenario.name,
        "flows": len(trace),
        "seed": args.seed,
        "runs": args.runs,
        "load": args.load,
        "buffer_mib": n3dc_buffer_mib(sc, True) if args.pfc else None,
        "n3dc_program": str(program),
        "n3dc_tail_s": args.n3dc_tail,
        "overrides": shoal_sets,
        "buckets": {
            k: {
                "shoal": s[k],
                "n3dc": r[k],
                "mean_ratio": ratio(s[k]["mean_us"], r[k]["mean_us"]),
                "p99_ratio": ratio(s[k]["p99_us"], r[k]["p99_us"]),
            }
            for k in s
        },
        "flow_by_flow_median_ratio": float(np.median(shoal_fct[both] / n3dc_fct[both]))
        if both.any()
        else None,
        # Flows whose FCTs agree within 1 ns (ns3-datacenter keeps whole ns).
        "flows_within_1ns": float(np.mean(np.abs(shoal_fct[both] - n3dc_fct[both]) <= 1))
        if both.any()
        else None,
        "n3dc_pfc_frames": pfc_frames,
        "lossless_drops": {"n3dc": n3dc_drops, "shoal": shoal_drops},
        "wall_s": {
            "n3dc_median": n3dc_wall,
            "shoal_median": statistics.median(walls),
            # Shoal's simulation alone (summary.json wall_time_s).
            "shoal_simulation_median": statistics.median(shoal_sim),
            "n3dc": n3dc_walls,
            "shoal": walls,
        },
    }
    if args.pfc:
        pm, ps = _mean_pfc(n3dc_pfc), _mean_pfc(shoal_pfc)
        result["pfc"] = {
            "per_run": {"n3dc": n3dc_pfc, "shoal": shoal_pfc},
            "mean": {"n3dc": pm, "shoal": ps},
            "frames_alike_run1": frames_alike,
            "ratio": {
                "host_pauses_received": ratio(
                    ps["host"]["pauses_received"], pm["host"]["pauses_received"]
                ),
                "switch_pauses_received": ratio(
                    ps["switch"]["pauses_received"], pm["switch"]["pauses_received"]
                ),
                "paused_ns": ratio(ps["paused_ns"], pm["paused_ns"]),
            },
        }
    result["speedup"] = n3dc_wall / result["wall_s"]["shoal_median"]
    missed = [
        f"{k} mean"
        for k, b in result["buckets"].items()
        if b["mean_ratio"] is not None and abs(b["mean_ratio"] - 1) > TARGET_MEAN
    ]
    missed += [
        f"{k} p99"
        for k, b in result["buckets"].items()
        if b["p99_ratio"] is not None and abs(b["p99_ratio"] - 1) > TARGET_P99
    ]
    for who, fct in (("ns3-datacenter", n3dc_fct), ("Shoal", shoal_fct)):
        if np.isnan(fct).any():
            missed.append(f"{who} left {int(np.isnan(fct).sum())} flows unfinished")
    if pfc_frames and not args.pfc:
        missed.append("ns3-datacenter sent PFC frames")
    if args.pfc and not pfc_frames:
        missed.append(
            "ns3-datacenter traced no PFC frame (a program without its QbbPfc trace? "
            "see --n3dc-program)"
        )
    result["missed_targets"] = missed
    (out / "comparison.json").write_text(json.dumps(result, indent=2) + "\n")

    print(
        f"\n{'bucket':<8} {'count':>6} {'mean Shoal':>11} {'mean n3dc':>10} {'ratio':>6} "
        f"{'p99 Shoal':>10} {'p99 n3dc':>9} {'ratio':>6}"
    )
    for k, b in result["buckets"].items():
        sb, rb = b["shoal"], b["n3dc"]
        if not sb["finished"] and not rb["finished"]:
            continue
        print(
            f"{k:<8} {sb['count']:>6} {sb['mean_us'] or 0:>11.1f} {rb['mean_us'] or 0:>10.1f} "
            f"{b['mean_ratio'] or 0:>6.3f} {sb['p99_us'] or 0:>10.1f} {rb['p99_us'] or 0:>9.1f} "
            f"{b['p99_ratio'] or 0:>6.3f}"
        )
    print(
        f"flow by flow: median FCT ratio {result['flow_by_flow_median_ratio']:.3f}, "
        f"{result['flows_within_1ns']:.1%} within 1 ns; "
        f"lossless drops: ns3-datacenter {n3dc_drops}, Shoal {shoal_drops}"
    )
    if args.pfc:
        pm, ps = result["pfc"]["mean"]["n3dc"], result["pfc"]["mean"]["shoal"]
        print(f"PFC frames, mean of {args.runs} runs     {'Shoal':>10} {'n3dc':>10} {'ratio':>6}")
        rows = [
            (f"{kind} {col.replace('_', ' ')}", ps[kind][col], pm[kind][col])
            for kind in ("host", "switch")
            for col in ("pauses_received", "resumes_received", "pauses_sent")
        ]
        rows += [("paused time (us)", ps["paused_ns"] / 1e3, pm["paused_ns"] / 1e3)]
        rows += [("paused ports", ps["paused_ports"], pm["paused_ports"])]
        alike = result["pfc"]["frames_alike_run1"]
        for label, a, b in rows:
            q = ratio(a, b)
            print(f"  {label:<31} {a:>10.1f} {b:>10.1f} {'' if q is None else f'{q:6.3f}'}")
        print(f"  first {alike} frames received in run 1 alike (time within 1 ns, node, kind)")
    else:
        print(
            f"PFC frames traced in ns3-datacenter: {pfc_frames} (0 also when the program "
            "does not trace them: see --n3dc-program)"
        )
    print(
        f"wall: ns3-datacenter {n3dc_wall:.2f} s, Shoal {result['wall_s']['shoal_median']:.2f} s "
        f"(medians of {args.runs} runs, whole process): {result['speedup']:.0f}x; "
        f"Shoal's simulation {result['wall_s']['shoal_simulation_median']:.2f} s"
    )
    print("targets: " + ("all met" if not missed else "missed " + "; ".join(missed)))
    print(f"wrote {out / 'comparison.json'}")
    return 3 if missed and args.check else 0


def n3dc_parser(doc: str) -> argparse.ArgumentParser:
    """A parser with the options every ns3-datacenter comparison takes (``--n3dc``,
    ``--n3dc-program``), described by the first paragraph of ``doc``."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--n3dc", required=True, help="ns3-datacenter's simulator/ns-3.39 directory, built"
    )
    p.add_argument(
        "--n3dc-program",
        help="the ns3-datacenter program to run (default: its powertcp-evaluation-burst; "
        "give one built with the QbbPfc trace on to count PFC frames)",
    )
    return p


def main(argv=None) -> int:
    p = n3dc_parser(__doc__)
    p.add_argument("--flows", type=int, default=500)
    p.add_argument("--load", type=float, default=0.5, help="load of the receivers' access links")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cdf", default="websearch")
    p.add_argument(
        "--runs",
        type=int,
        default=3,
        help="runs of the same trace in each simulator (ns-3 RngRun / Shoal run.seed 1..N), pooled",
    )
    p.add_argument(
        "--pfc",
        action="store_true",
        help="PFC active: star_rdma_pfc.toml and the reference's PFC, frames compared",
    )
    p.add_argument(
        "--buffer-mib",
        type=int,
        help="switch buffer in MiB (ns3-datacenter's BUFFER_SIZE, Shoal's switch.pool_size); "
        "default: the scenario's",
    )
    p.add_argument("--link-rate", help="every link's rate in both (default: the scenario's)")
    p.add_argument("--link-delay", help="every link's delay in both (default: the scenario's)")
    p.add_argument(
        "--no-ecn",
        action="store_true",
        help="no ECN marking in either (Shoal: no marking rule; ns3-datacenter: ENABLE_QCN 0): "
        "with nothing random left, both are deterministic",
    )
    p.add_argument(
        "--n3dc-sizes",
        action="store_true",
        help="Shoal sends the reference's wire sizes (48 B headers, 60 B ACKs, 43 B PFC "
        "frames); right where they serialize in whole ns, e.g. --link-rate 8Gbps",
    )
    p.add_argument(
        "--n3dc-tail",
        type=float,
        default=1.0,
        help="seconds ns3-datacenter simulates after the last flow starts (default 1.0; "
        "its per-6-us throughput report makes an idle second cost about 9 s of wall time)",
    )
    p.add_argument(
        "--out",
        help="output directory (default validation/results/n3dc[_pfc<N>mib]_<flows>_seed<seed>)",
    )
    p.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = p.parse_args(argv)
    check_replay_args(p, args)
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
