#!/usr/bin/env python3
"""Cross-validate Shoal's RDMA transport and DCQCN against ns3-datacenter (issue 16).

    python validation/compare_n3dc.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        [--flows 500] [--load 0.5] [--seed 1] [--out DIR] [--check]

ns3-datacenter (inet-tub/ns3-datacenter, commit 6ddb4a4) is built outside this
repository, as ../shared/design/lossless-facts.md section 6a says, with the target
``powertcp-evaluation-burst``. Steps: generate a web-search many-to-few trace with
``shoal trace`` from ``star_rdma_dcqcn.toml`` (12 senders, 4 receivers), write the same
topology and flows as ns3-datacenter's input files and its configuration (its
``config-burst.txt`` with the paths, a buffer of the scenario's size and no tracing),
run it with DCQCN (cc mode 1, no window), replay the trace in Shoal (timing both), and
compare FCTs per size bucket (each simulator's ``--runs`` runs of the trace pooled: RED
marks at random, so one run of either differs from the next by about 10% at 60% load)
and flow by flow. Writes ``comparison.json`` and both
simulators' inputs and outputs into the output directory.

Targets: Shoal's mean FCT per bucket within 10% of ns3-datacenter's, p99 within 20%, no
PFC frame in the reference (else the two model different networks). Exit status: 0 when
the comparison ran (use --check to exit 3 on a missed target), 1 when ns3-datacenter or
Shoal is missing or fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tomllib
from pathlib import Path

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
PROGRAM = "build/examples/PowerTCP/ns3.39-powertcp-evaluation-burst-optimized"
TEMPLATE = "examples/PowerTCP/config-burst.txt"
# ns3-datacenter starts flows at these seconds plus the trace's start time.
START_OFFSET_S = 0.1
TARGET_MEAN = 0.10
TARGET_P99 = 0.20


def n3dc_inputs(out: Path, n3dc: Path, trace, hosts: int, sc: dict) -> Path:
    """Writes the topology, flow and configuration files; returns the configuration."""
    t = sc["topology"]
    rate = _bps(t["link_rate"])
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
    buffer_mb = max(1, round(parse_size(sc["switch"]["pool_size"]) / 1e6))
    stop = START_OFFSET_S + trace.start_ns.max() / 1e9 + 1.0
    overrides = {
        "TOPOLOGY_FILE": out / "n3dc_topology.txt",
        "FLOW_FILE": out / "n3dc_flows.txt",
        "FCT_OUTPUT_FILE": out / "n3dc_fct.txt",
        "PFC_OUTPUT_FILE": out / "n3dc_pfc.txt",
        "TRACE_OUTPUT_FILE": out / "n3dc_mix.tr",
        "QLEN_MON_FILE": out / "n3dc_qlen.txt",
        "ENABLE_TRACE": 0,
        "BUFFER_SIZE": buffer_mb,
        "SIMULATOR_STOP_TIME": f"{stop:.3f}",
    }
    lines = []
    for line in (n3dc / TEMPLATE).read_text().splitlines():
        key = line.split(" ", 1)[0]
        lines.append(f"{key} {overrides[key]}" if key in overrides else line)
    conf = out / "n3dc_config.txt"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def _bps(rate: str) -> int:
    """A rate of the scenario in bits per second, read by Shoal's own unit grammar."""
    from shoal import _core

    return _core.parse_rate_bps(rate)


def read_n3dc_fct(path: Path, flows: int):
    """FCT in ns by flow index (the destination port is 100 + the index)."""
    import numpy as np

    fct = np.full(flows, np.nan)
    for line in path.read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 7:
            fct[int(parts[3]) - 100] = float(parts[6])
    return fct


def compare(args) -> int:
    import numpy as np
    import pandas as pd

    n3dc = Path(args.n3dc).resolve()
    if not (n3dc / PROGRAM).is_file():
        raise UserError(
            f"{n3dc / PROGRAM} is missing: build ns3-datacenter's powertcp-evaluation-burst", 1
        )
    sc = tomllib.loads(SCENARIO.read_text())
    hosts = sc["topology"]["hosts"]
    out = Path(args.out or HERE / "results" / f"n3dc_{args.flows}_seed{args.seed}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    shoal = shoal_cmd()
    senders, receivers = f"0-{hosts * 3 // 4 - 1}", f"{hosts * 3 // 4}-{hosts - 1}"
    trace_csv = make_trace(shoal, SCENARIO, out, senders, receivers, "access", args)
    trace = pd.read_csv(trace_csv)

    conf = n3dc_inputs(out, n3dc, trace, hosts, sc)
    print(f"running ns3-datacenter on {len(trace)} flows, {args.runs} runs ...", flush=True)
    cmd = [
        str(n3dc / PROGRAM),
        f"--conf={conf}",
        "--algorithm=1",
        "--wien=false",
        "--delayWien=false",
        "--windowCheck=0",
    ]
    # The same trace, `--runs` times in each: RED marks at random, so single runs of the
    # same flows diverge; the comparison pools the runs of each simulator.
    n3dc_walls, n3dc_runs, pfc_frames = [], [], 0
    for k in range(1, args.runs + 1):
        wall, _ = run(cmd, "ns3-datacenter", env={"NS_GLOBAL_VALUE": f"RngRun={k}"})
        n3dc_walls.append(wall)
        n3dc_runs.append(read_n3dc_fct(out / "n3dc_fct.txt", len(trace)))
        pfc_frames += len((out / "n3dc_pfc.txt").read_text().splitlines())

    print("running Shoal ...", flush=True)
    shoal_out = out / "shoal"
    walls, shoal_runs = [], []
    for k in range(1, args.runs + 1):
        wall, _ = run(
            shoal
            + ["run", str(SCENARIO), "--out", str(shoal_out), "-q"]
            + sets({"workload.pattern": "trace", "workload.trace": trace_csv, "run.seed": k}),
            "shoal run",
        )
        walls.append(wall)
        flows = pd.read_parquet(shoal_out / "flows.parquet").sort_values("id")
        shoal_runs.append(flows["fct_ns"].to_numpy())
    shoal_fct, n3dc_fct = np.concatenate(shoal_runs), np.concatenate(n3dc_runs)
    bytes_ = np.tile(trace["bytes"].to_numpy(), args.runs)
    n3dc_wall = statistics.median(n3dc_walls)

    s, r = bucket_stats(shoal_fct, bytes_), bucket_stats(n3dc_fct, bytes_)
    both = ~np.isnan(shoal_fct) & ~np.isnan(n3dc_fct)
    result = {
        "flows": len(trace),
        "seed": args.seed,
        "runs": args.runs,
        "load": args.load,
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
        "n3dc_pfc_frames": pfc_frames,
        "wall_s": {"n3dc_median": n3dc_wall, "shoal_median": statistics.median(walls)},
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
    if pfc_frames:
        missed.append("ns3-datacenter sent PFC frames")
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
        f"flow by flow: median FCT ratio {result['flow_by_flow_median_ratio']:.3f}; "
        f"PFC frames in ns3-datacenter: {pfc_frames}"
    )
    print(
        f"wall: ns3-datacenter {n3dc_wall:.2f} s, Shoal {result['wall_s']['shoal_median']:.2f} s "
        f"(medians of {args.runs} runs, whole process): {result['speedup']:.0f}x"
    )
    print("targets: " + ("all met" if not missed else "missed " + ", ".join(missed)))
    print(f"wrote {out / 'comparison.json'}")
    return 3 if missed and args.check else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--n3dc", required=True, help="ns3-datacenter's simulator/ns-3.39 directory, built"
    )
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
        "--out", help="output directory (default validation/results/n3dc_<flows>_seed<seed>)"
    )
    p.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = p.parse_args(argv)
    if args.flows < 1 or args.runs < 1:
        p.error("--flows and --runs must be >= 1")
    if not 0 < args.load < 1:
        p.error("--load must be in (0, 1)")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
