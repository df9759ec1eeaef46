#!/usr/bin/env python3
"""Cross-validate Shoal's RDMA, DCQCN / HPCC / PowerTCP and PFC against ns3-datacenter
under web search.

    python validation/compare_n3dc_workload.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        --n3dc-program /path/to/powertcp-evaluation-burst-pfc [--cc dcqcn|hpcc|powertcp] \\
        [--flows 5000] [--load 0.8] [--runs 2] [--seed 1] [--buffer-mib 4] [--out DIR] [--check]

The network is ns3-datacenter's 128-host three-tier topology (``n3dc/topology.txt``: 25
Gbps hosts under four ToRs, 4:1 oversubscribed, 100 Gbps fabric) with the buffer, PFC,
marking and DCQCN its PowerTCP workload experiment (``script-workload.sh``) configures:
``n3dc_workload.toml``. Steps: turn the reference's ``websearch.txt`` into a Shoal CDF;
generate an all-to-all trace with ``shoal trace`` (Poisson arrivals, load as the
reference's workload program defines it: on the ToR uplinks as if every flow crossed
them, Shoal's ``load_on = "core_nominal"``); write it as the reference's flow file and its
``config-burst.txt`` with the paths, ``BUFFER_SIZE`` and the marking thresholds of the
scenario; run ns3-datacenter's burst program on it (DCQCN: cc mode 1, no window) and
Shoal, ``--runs`` times each (RED marks at random: ns-3 ``RngRun`` 1..N, Shoal
``run.seed`` 1..N; each run of either also draws new ECMP paths: the reference's run k
shifts the flows' destination ports, which its hash reads), pooled; compare per size
bucket the count, mean FCT and p50 / p95 / p99 slowdown, the PFC frames and the lossless
drops; time both whole processes.

``--cc hpcc`` and ``--cc powertcp`` run the reference's INT controls as its
``script-workload.sh`` does (cc mode 3 with a window, ``--wien`` for PowerTCP; HPCC's
MI_THRESH 5, U_TARGET 0.95 and RATE_AI 50 Mb/s are ``config-burst.txt``'s own) and Shoal
with the overrides of the same scheme in ``shoal/experiments/rdma/workload.toml``
(``[schemes.hpcc]``, ``[schemes.powertcp]``), read from that file so the experiment and
this comparison cannot drift apart. Shoal's PowerTCP is the published code (before
ns3-datacenter's f542a97); give ``--n3dc-program`` a build with that ``rdma-hw.cc`` (the
later one reads uninitialised INT records at the first ACK and differs run to run).

Slowdown is FCT / ideal FCT with the reference's ideal (its ``standalone_fct``,
``powertcp-evaluation-burst.cc:178-184``) for both simulators: base RTT (twice the path's
propagation delay plus one 1,000 B payload's serialization at every hop) plus the flow's
bytes with 48 B of headers per packet at the path's slowest rate. The driver computes it
from the topology and checks it against the reference's column.

The reference writes its PFC trace only from a build of ``powertcp-evaluation-burst.cc``
with its two ``QbbPfc`` trace lines on (``--n3dc-program``; validation/README.md, "PFC
against ns3-datacenter", says how to build it); the stock program's trace is empty.

Targets: per bucket, Shoal's mean FCT within 10% of ns3-datacenter's and its p99
slowdown within 20%; Shoal's wall time at most a tenth of the reference's. Writes
``comparison.json``, ``slowdown_vs_size.png`` and both simulators' inputs and outputs
into the output directory. Exit status: 0 when the comparison ran (with ``--check``, 3
on a missed target), 1 when ns3-datacenter or Shoal is missing or fails, 2 on bad
arguments.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from _common import N3DC_CC_FLAGS, check_replay_args, override_pool_size
from compare_n3dc import (
    N3DC_SIZES,
    START_OFFSET_S,
    _mean_pfc,
    n3dc_files,
    n3dc_parser,
    read_n3dc_pfc,
    read_shoal_pfc,
    reference_program,
    write_n3dc_config,
)
from compare_ns3 import (
    UserError,
    parse_size,
    ratio,
    run,
    run_guarded,
    sets,
    shoal_cmd,
)

import shoal
from shoal.reproduce.rdma import n3dc_ideal_fct_ns, read_topology

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "n3dc_workload.toml"
EXPERIMENT = Path(shoal.__file__).resolve().parent / "experiments" / "rdma" / "workload.toml"
# The controls --cc offers, with the reference's flags for each (script-workload.sh's).
N3DC_FLAGS = {cc: N3DC_CC_FLAGS[cc] for cc in ("dcqcn", "hpcc", "powertcp")}
N3DC_CDF = "examples/PowerTCP/websearch.txt"
TARGET_MEAN = 0.10
TARGET_P99 = 0.20
TARGET_SPEEDUP = 10.0
PERCENTILES = (50, 95, 99)
# The reference picks a flow's ECMP path by hashing its addresses and ports
# (switch-node.cc:84-106), and its ports follow from the flow file alone (source port
# 10000 onward per host pair, powertcp-evaluation-burst.cc:1070, 151; destination port
# from the file), so every run of one flow file takes the same paths, while each Shoal
# run.seed draws new ones. Run k of the reference shifts the destination ports, which
# name the flows (PORT_BASE + index), by (k - 1) x PORT_SHIFT modulo PORT_SPAN: a new
# draw of paths per run in both, as long as the trace has at most PORT_SPAN flows.
PORT_BASE = 100
PORT_SPAN = 65_000
PORT_SHIFT = 7_919


def flow_port(index: int, run: int, same_paths: bool = False) -> int:
    """The destination port of flow ``index`` in the reference's run ``run`` (1-based)."""
    shift = 0 if same_paths else (run - 1) * PORT_SHIFT
    return PORT_BASE + (index + shift) % PORT_SPAN


def flow_index(port: int, run: int, same_paths: bool = False) -> int:
    """The flow a destination port of the reference's run ``run`` names."""
    shift = 0 if same_paths else (run - 1) * PORT_SHIFT
    return (port - PORT_BASE - shift) % PORT_SPAN


def shoal_cdf_from_n3dc(n3dc_cdf: Path, out: Path) -> Path:
    """The reference's CDF (``<bytes> <fraction>`` lines) as Shoal's ``<bytes> <percent>``.
    Both draw sizes the same way (linear between points), so the trace's sizes follow the
    reference's web search, not Shoal's built-in one (which lacks its 2-10 KB points)."""
    lines = []
    for line in n3dc_cdf.read_text().splitlines():
        fields = line.split()
        if len(fields) == 2:
            lines.append(f"{int(float(fields[0]))} {float(fields[1]) * 100:g}")
    path = out / "websearch_n3dc.cdf"
    path.write_text("\n".join(lines) + "\n")
    return path


def red_maps(red: dict | None, rates: list[int]) -> dict[str, object]:
    """The reference's marking maps for every link rate of the topology from the
    scenario's ``[switch.marking.red]``: kmin and kmax as given, or, with
    ``reference_rate``, scaled by each rate / reference_rate (the reference's maps are
    linear in the rate: 100 / 400 KB at 25 Gbps, 400 / 1,600 KB at 100 Gbps)."""
    if not red:
        return {"ENABLE_QCN": 0}
    from shoal import _core

    reference = _core.parse_rate_bps(red["reference_rate"]) if "reference_rate" in red else None

    def kb(size: str, rate: int) -> int:
        scale = rate / reference if reference else 1.0
        return round(parse_size(size) * scale / 1000)

    def row(value) -> str:
        return f"{len(rates)} " + " ".join(f"{r} {value(r)}" for r in rates)

    return {
        "KMIN_MAP": row(lambda r: kb(red["kmin"], r)),
        "KMAX_MAP": row(lambda r: kb(red["kmax"], r)),
        "PMAX_MAP": row(lambda r: red["pmax"]),
    }


#: The bytes the reference's own "endless" flows send (its flow-burstExp files).
ENDLESS = 10**12


def write_n3dc_flows(
    out: Path, trace, run: int = 1, same_paths: bool = False, own_priority: bool = False
) -> Path:
    """The reference's flow file for its run ``run``: ``src dst pg dport bytes start_s``,
    priority group 3 (its lossless queue) or, with ``own_priority``, each flow's in the
    trace; the flows' destination ports of that run; a long-lived flow sends 10^12 bytes,
    as the reference's own endless flows do."""
    rows = [
        f"{r.src} {r.dst} {r.priority if own_priority else 3} {flow_port(i, run, same_paths)} "
        f"{min(r.bytes, ENDLESS)} "
        f"{START_OFFSET_S + r.start_ns / 1e9:.9f}"
        for i, r in enumerate(trace.itertuples())
    ]
    path = out / "n3dc_flows.txt"
    path.write_text(f"{len(rows)}\n" + "\n".join(rows) + "\n")
    return path


def n3dc_inputs(out: Path, n3dc: Path, topology: Path, trace, sc: dict, tail_s: float) -> Path:
    """Writes the reference's flow file (of its first run) and configuration (the topology
    file is used as it is); returns the configuration."""
    write_n3dc_flows(out, trace)
    pool = parse_size(sc["switch"]["pool_size"])
    if pool % (1 << 20) or pool == 0:
        raise UserError(
            f"switch.pool_size = {sc['switch']['pool_size']} is not a whole number of MiB, "
            "which ns3-datacenter's BUFFER_SIZE needs"
        )
    _, links = read_topology(topology)
    rates = sorted({rate for node in links.values() for _, rate, _ in node})
    stop = START_OFFSET_S + trace.start_ns.max() / 1e9 + tail_s
    overrides = {
        "TOPOLOGY_FILE": topology,
        **n3dc_files(out),
        "BUFFER_SIZE": pool >> 20,
        "SIMULATOR_STOP_TIME": f"{stop:.3f}",
        **red_maps(sc["switch"].get("marking", {}).get("red"), rates),
    }
    return write_n3dc_config(n3dc, out, overrides)


def read_n3dc_fct(path: Path, flows: int, run: int = 1, same_paths: bool = False):
    """FCT and the reference's ideal FCT (ns) by flow index from the FCT file of its run
    ``run`` (``sip dip sport dport size start fct standalone``; the destination port
    names the flow, ``flow_port``); NaN for a flow that did not finish."""
    import numpy as np

    fct, ideal = np.full(flows, np.nan), np.full(flows, np.nan)
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 8:
            i = flow_index(int(parts[3]), run, same_paths)
            fct[i], ideal[i] = float(parts[6]), float(parts[7])
    return fct, ideal


def toml_value(value) -> str:
    """``value`` as the TOML text ``--set`` parses back to it (``str(True)`` would not)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def scheme_sets(cc: str, experiment: Path = EXPERIMENT) -> dict[str, str]:
    """Shoal's ``--set`` pairs for control ``cc``: the experiment's ``[schemes.<cc>]``,
    after a fresh ``rdma.cc`` table, since the scenario's holds DCQCN's ``model``, a key
    no other control takes. None for DCQCN, the scenario's own control."""
    if cc == "dcqcn":
        return {}
    schemes = tomllib.loads(experiment.read_text()).get("schemes", {})
    if cc not in schemes:
        raise UserError(f"{experiment} has no [schemes.{cc}] for --cc {cc}", 1)
    pairs = {"rdma.cc": toml_value({"kind": cc})}
    pairs.update({key: toml_value(value) for key, value in schemes[cc].items()})
    return pairs


def children_cpu_s() -> float:
    """CPU time (user + system) of the finished child processes so far: with other jobs
    on the machine, a process's wall time grows with their load, its CPU time does not."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_n3dc(
    cmd: list[str], log: Path, rng_run: int, env: dict[str, str] | None = None
) -> tuple[float, int]:
    """Runs the reference once, with ``env`` added to its environment, its standard output
    (a throughput report every few microseconds: hundreds of MB) into ``log``; returns the
    wall time and the lossless packets its MMU dropped (it prints each,
    switch-mmu.cc:719, :796)."""
    env = {**os.environ, **(env or {}), "NS_GLOBAL_VALUE": f"RngRun={rng_run}"}
    t0 = time.perf_counter()
    try:
        with log.open("w") as stdout:
            proc = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env)
    except OSError as e:
        raise UserError(f"ns3-datacenter: cannot run {cmd[0]}: {e.strerror or e}", 1) from None
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise UserError(
            f"ns3-datacenter failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"{proc.stderr.strip()[-3000:]}",
            1,
        )
    with log.open() as f:
        drops = sum(line.count("dropping lossless packet") for line in f)
    return wall, drops


def bucket_stats(fct_ns, ideal_ns, bytes_) -> dict:
    """Per size bucket (and all flows): count, finished, mean and p99 FCT (us), and the
    p50 / p95 / p99 and mean slowdown of the finished flows (shoal.analysis.bucket_stats)."""
    from shoal.analysis import BUCKET_LABELS
    from shoal.analysis import bucket_stats as stats_of

    def us(ns):
        return None if ns is None else ns / 1e3

    out = {}
    for name, s in stats_of(bytes_, fct_ns, fct_ns / ideal_ns, percentiles=PERCENTILES).items():
        stats: dict = {"label": BUCKET_LABELS[name], "count": s["count"], "finished": s["finished"]}
        stats["mean_fct_us"] = us(s["mean_fct_ns"])
        stats["p99_fct_us"] = us(s["p99_fct_ns"])
        stats["mean_slowdown"] = s["mean_slowdown"]
        for p in PERCENTILES:
            stats[f"p{p}_slowdown"] = s[f"p{p}_slowdown"]
        out[name] = stats
    return out


def plot(fct: dict, ideal, bytes_, path: Path) -> None:
    """Median and p99 slowdown per flow-size decile, both simulators (shoal.plot)."""
    import numpy as np
    import pandas as pd

    from shoal.plot import slowdown_vs_size

    frames = [
        pd.DataFrame({"bytes": bytes_, "slowdown": f / ideal, "simulator": who})[~np.isnan(f)]
        for who, f in fct.items()
    ]
    # No title: the legend takes the figure's top line.
    fig = slowdown_vs_size(pd.concat(frames, ignore_index=True), by="simulator")
    fig.savefig(path, dpi=150, bbox_inches="tight")


def pfc_summary(runs: list[dict]) -> dict:
    """The PFC numbers the comparison reports, mean per run."""
    m = _mean_pfc(runs)
    return {
        "switch_pauses_sent": m["switch"]["pauses_sent"],
        "host_pauses_received": m["host"]["pauses_received"],
        "switch_pauses_received": m["switch"]["pauses_received"],
        "paused_ports": m["paused_ports"],
        "paused_us": m["paused_ns"] / 1e3,
    }


def compare(args) -> int:
    import numpy as np
    import pandas as pd

    n3dc = Path(args.n3dc).resolve()
    if not (n3dc / N3DC_CDF).is_file():
        raise UserError(f"{n3dc / N3DC_CDF} is missing: --n3dc is not ns3-datacenter's ns-3.39", 1)
    program = reference_program(args)
    sc = tomllib.loads(SCENARIO.read_text())
    topology = (SCENARIO.parent / sc["topology"]["path"]).resolve()
    shoal_sets = override_pool_size(sc, args.buffer_mib)
    if args.n3dc_sizes:
        shoal_sets.update(N3DC_SIZES)
    # After the sizes: an INT scheme's ACK size is the reference's ACK with its INT header.
    shoal_sets.update(scheme_sets(args.cc))
    # DCQCN's results keep the directory they always had.
    cc_suffix = "" if args.cc == "dcqcn" else f"_{args.cc}"
    out = Path(
        args.out
        or HERE
        / "results"
        / f"n3dc_workload_{args.flows}_load{args.load}_seed{args.seed}{cc_suffix}"
    ).resolve()
    out.mkdir(parents=True, exist_ok=True)
    shoal = shoal_cmd()

    cdf = shoal_cdf_from_n3dc(n3dc / N3DC_CDF, out)
    trace_csv = out / "trace.csv"
    print(f"generating {args.flows} flows (web search, load {args.load}) ...", flush=True)
    gen = {
        "workload.flows": args.flows,
        "workload.load": args.load,
        "workload.cdf": cdf,
        "run.seed": args.seed,
    }
    run(shoal + ["trace", str(SCENARIO), "--out", str(trace_csv)] + sets(gen), "shoal trace")
    trace = pd.read_csv(trace_csv)
    hosts, links = read_topology(topology)
    ideal = np.array(n3dc_ideal_fct_ns(trace, hosts, links), dtype=float)

    conf = n3dc_inputs(out, n3dc, topology, trace, sc, args.n3dc_tail)
    cmd = [str(program), f"--conf={conf}", *N3DC_FLAGS[args.cc]]
    n3dc_walls, n3dc_cpus, n3dc_runs, n3dc_pfc, n3dc_drops = [], [], [], [], 0
    ideal_mismatch = 0
    for k in range(1, args.runs + 1):
        write_n3dc_flows(out, trace, k, args.n3dc_same_paths)
        # What a reused run must have run on: the reference's inputs and program.
        # DCQCN's digest leaves its flags out, as it always did, so its saved runs stay valid.
        flags = "" if args.cc == "dcqcn" else " ".join(cmd[2:])
        digest = hashlib.sha256(
            b"".join(p.read_bytes() for p in (conf, out / "n3dc_flows.txt", topology))
            + str(program).encode()
            + flags.encode()
        ).hexdigest()
        record = out / f"n3dc_run{k}.json"
        fct_file, pfc_file = out / f"n3dc_fct_run{k}.txt", out / f"n3dc_pfc_run{k}.txt"
        saved = json.loads(record.read_text()) if record.is_file() else {}
        if args.reuse_n3dc and saved.get("inputs") == digest and fct_file.is_file():
            print(f"ns3-datacenter run {k}/{args.runs}: reusing {fct_file.name}", flush=True)
        else:
            print(
                f"running ns3-datacenter on {len(trace)} flows, run {k}/{args.runs} ...", flush=True
            )
            cpu = children_cpu_s()
            wall, drops = run_n3dc(cmd, out / "n3dc_stdout.txt", k)
            saved = {"inputs": digest, "wall_s": wall, "cpu_s": children_cpu_s() - cpu}
            saved["lossless_drops"] = drops
            shutil.copyfile(out / "n3dc_fct.txt", fct_file)
            shutil.copyfile(out / "n3dc_pfc.txt", pfc_file)
            record.write_text(json.dumps(saved, indent=2) + "\n")
            print(f"  {wall:.1f} s ({saved['cpu_s']:.1f} s CPU)", flush=True)
        n3dc_walls.append(saved["wall_s"])
        n3dc_cpus.append(saved["cpu_s"])
        n3dc_drops += saved["lossless_drops"]
        fct, their_ideal = read_n3dc_fct(fct_file, len(trace), k, args.n3dc_same_paths)
        n3dc_runs.append(fct)
        done = ~np.isnan(their_ideal)
        ideal_mismatch = max(ideal_mismatch, int((their_ideal[done] != ideal[done]).sum()))
        ends = START_OFFSET_S * 1e9 + trace.start_ns.to_numpy() + np.nan_to_num(fct)
        n3dc_pfc.append(read_n3dc_pfc(pfc_file, int(ends.max())))

    shoal_out = out / "shoal"
    shoal_walls, shoal_cpus, shoal_runs, shoal_pfc, shoal_drops, shoal_sim = [], [], [], [], 0, []
    for k in range(1, args.runs + 1):
        print(f"running Shoal, run {k}/{args.runs} ...", flush=True)
        pairs = {"workload.pattern": "trace", "workload.trace": trace_csv, "run.seed": k}
        cpu = children_cpu_s()
        wall, _ = run(
            shoal
            + ["run", str(SCENARIO), "--out", str(shoal_out), "-q"]
            + sets({**pairs, **shoal_sets}),
            "shoal run",
        )
        shoal_cpus.append(children_cpu_s() - cpu)
        shoal_walls.append(wall)
        flows = pd.read_parquet(shoal_out / "flows.parquet").sort_values("id")
        shoal_runs.append(flows["fct_ns"].to_numpy(dtype=float))
        shoal_pfc.append(read_shoal_pfc(shoal_out))
        summary = json.loads((shoal_out / "summary.json").read_text())
        shoal_sim.append(summary["wall_time_s"])
        shoal_drops += (summary.get("pfc") or {}).get("lossless_drops", 0)
        print(f"  {wall:.1f} s ({shoal_cpus[-1]:.1f} s CPU)", flush=True)

    shoal_fct, n3dc_fct = np.concatenate(shoal_runs), np.concatenate(n3dc_runs)
    ideals = np.tile(ideal, args.runs)
    bytes_ = np.tile(trace["bytes"].to_numpy(), args.runs)
    s, r = bucket_stats(shoal_fct, ideals, bytes_), bucket_stats(n3dc_fct, ideals, bytes_)
    stat_names = ["mean_fct_us", "p99_fct_us", "mean_slowdown"]
    stat_names += [f"p{p}_slowdown" for p in PERCENTILES]
    n3dc_wall, shoal_wall = statistics.median(n3dc_walls), statistics.median(shoal_walls)
    pfc = {"shoal": pfc_summary(shoal_pfc), "n3dc": pfc_summary(n3dc_pfc)}
    result = {
        **({} if args.cc == "dcqcn" else {"cc": args.cc}),
        "scenario": SCENARIO.name,
        "flows": len(trace),
        "load": args.load,
        "seed": args.seed,
        "runs": args.runs,
        "buffer_mib": parse_size(sc["switch"]["pool_size"]) >> 20,
        "simulated_until_last_start_s": float(trace.start_ns.max() / 1e9),
        "n3dc_program": str(program),
        "n3dc_tail_s": args.n3dc_tail,
        "n3dc_same_paths": args.n3dc_same_paths,
        "overrides": {k: str(v) for k, v in shoal_sets.items()},
        "ideal_fct_differs_from_n3dc": ideal_mismatch,
        "buckets": {
            k: {
                "shoal": s[k],
                "n3dc": r[k],
                "ratio": {n: ratio(s[k][n], r[k][n]) for n in stat_names},
            }
            for k in s
        },
        "pfc": {
            "mean_per_run": pfc,
            "per_run": {"shoal": shoal_pfc, "n3dc": n3dc_pfc},
            "ratio": {k: ratio(pfc["shoal"][k], pfc["n3dc"][k]) for k in pfc["shoal"]},
        },
        "lossless_drops": {"shoal": shoal_drops, "n3dc": n3dc_drops},
        "wall_s": {
            "n3dc_median": n3dc_wall,
            "shoal_median": shoal_wall,
            "shoal_simulation_median": statistics.median(shoal_sim),
            "n3dc": n3dc_walls,
            "shoal": shoal_walls,
        },
        "cpu_s": {"n3dc": n3dc_cpus, "shoal": shoal_cpus},
        "speedup": n3dc_wall / shoal_wall,
        "cpu_speedup": statistics.median(n3dc_cpus) / statistics.median(shoal_cpus),
    }
    result["missed_targets"] = missed_targets(result, shoal_fct, n3dc_fct)
    # A variant's results sit beside the default's, sharing the reference's runs.
    suffix = "_n3dc_sizes" if args.n3dc_sizes else ""
    report, figure = out / f"comparison{suffix}.json", out / f"slowdown_vs_size{suffix}.png"
    report.write_text(json.dumps(result, indent=2) + "\n")
    plot(
        {"Shoal": shoal_fct, "ns3-datacenter": n3dc_fct},
        ideals,
        bytes_,
        figure,
    )
    print_report(result, report, figure)
    return 3 if result["missed_targets"] and args.check else 0


def bucket_misses(buckets: dict) -> list[str]:
    """The buckets whose mean FCT ratio is off by more than TARGET_MEAN or whose p99
    slowdown ratio by more than TARGET_P99."""
    missed = []
    for k, b in buckets.items():
        q = b["ratio"]
        if q["mean_fct_us"] is not None and abs(q["mean_fct_us"] - 1) > TARGET_MEAN:
            missed.append(f"{k} mean FCT ({q['mean_fct_us']:.3f})")
        if q["p99_slowdown"] is not None and abs(q["p99_slowdown"] - 1) > TARGET_P99:
            missed.append(f"{k} p99 slowdown ({q['p99_slowdown']:.3f})")
    return missed


def missed_targets(result: dict, shoal_fct, n3dc_fct) -> list[str]:
    import numpy as np

    missed = bucket_misses(result["buckets"])
    if result["speedup"] < TARGET_SPEEDUP:
        missed.append(f"speedup {result['speedup']:.1f}x < {TARGET_SPEEDUP:.0f}x")
    for who, fct in (("ns3-datacenter", n3dc_fct), ("Shoal", shoal_fct)):
        if np.isnan(fct).any():
            missed.append(f"{who} left {int(np.isnan(fct).sum())} flows unfinished")
    pfc = result["pfc"]["mean_per_run"]
    if pfc["shoal"]["switch_pauses_sent"] and not pfc["n3dc"]["switch_pauses_sent"]:
        missed.append(
            "ns3-datacenter traced no PFC frame while Shoal sent some (a program without "
            "its QbbPfc trace? see --n3dc-program)"
        )
    if result["ideal_fct_differs_from_n3dc"]:
        missed.append(
            f"the ideal FCT differs from the reference's for "
            f"{result['ideal_fct_differs_from_n3dc']} flows"
        )
    return missed


def print_report(result: dict, report: Path, figure: Path) -> None:
    def num(v, spec=".1f"):
        return "-" if v is None else format(v, spec)

    cc = f"{result['cc']}, " if "cc" in result else ""
    print(
        f"\n{cc}{result['flows']} flows, load {result['load']}, {result['runs']} runs of each "
        "pooled; FCT in us; ratio Shoal / ns3-datacenter"
    )
    cols = [
        ("mean FCT", "mean_fct_us", ".1f"),
        ("p50 slowdown", "p50_slowdown", ".2f"),
        ("p95 slowdown", "p95_slowdown", ".2f"),
        ("p99 slowdown", "p99_slowdown", ".2f"),
    ]
    print(
        f"{'bucket':<11} {'count':>6}  "
        + "  ".join(f"{c[0] + ' Shoal/n3dc (ratio)':>32}" for c in cols)
    )
    for b in result["buckets"].values():
        cells = []
        for _, key, spec in cols:
            cells.append(
                f"{num(b['shoal'][key], spec)} / {num(b['n3dc'][key], spec)} "
                f"({num(b['ratio'][key], '.3f')})"
            )
        print(
            f"{b['shoal']['label']:<11} {b['shoal']['count']:>6}  "
            + "  ".join(f"{c:>32}" for c in cells)
        )
    pfc = result["pfc"]["mean_per_run"]
    print(f"\nPFC, mean per run               {'Shoal':>10} {'n3dc':>10} {'ratio':>6}")
    labels = {
        "switch_pauses_sent": "PAUSEs sent by switches",
        "host_pauses_received": "PAUSEs received by hosts",
        "switch_pauses_received": "PAUSEs received by switches",
        "paused_ports": "paused ports",
        "paused_us": "paused time (us, summed)",
    }
    for key, label in labels.items():
        q = result["pfc"]["ratio"][key]
        print(
            f"  {label:<29} {pfc['shoal'][key]:>10.1f} {pfc['n3dc'][key]:>10.1f} {num(q, '6.3f')}"
        )
    drops = result["lossless_drops"]
    print(f"lossless drops (all runs): Shoal {drops['shoal']}, ns3-datacenter {drops['n3dc']}")
    w = result["wall_s"]
    print(
        f"wall (whole process, median of {result['runs']}): "
        f"ns3-datacenter {w['n3dc_median']:.1f} s, "
        f"Shoal {w['shoal_median']:.1f} s ({w['shoal_simulation_median']:.1f} s simulating): "
        f"{result['speedup']:.1f}x; CPU time {statistics.median(result['cpu_s']['n3dc']):.1f} s / "
        f"{statistics.median(result['cpu_s']['shoal']):.1f} s: {result['cpu_speedup']:.1f}x"
    )
    missed = result["missed_targets"]
    print("targets: " + ("all met" if not missed else "missed " + "; ".join(missed)))
    print(f"wrote {report} and {figure}")


def main(argv=None) -> int:
    p = n3dc_parser(__doc__)
    p.add_argument(
        "--flows",
        type=int,
        default=5000,
        help="flows of the trace (default 5,000: about 0.1 s of traffic, a few minutes per "
        "ns3-datacenter run; 20,000 for the larger comparison)",
    )
    p.add_argument(
        "--load",
        type=float,
        default=0.8,
        help="load on the ToR uplinks as if every flow crossed them (the reference's "
        "definition; default 0.8)",
    )
    p.add_argument(
        "--cc",
        choices=sorted(N3DC_FLAGS),
        default="dcqcn",
        help="congestion control of both simulators (default dcqcn); powertcp wants a "
        "--n3dc-program with rdma-hw.cc from before ns3-datacenter's f542a97",
    )
    p.add_argument("--seed", type=int, default=1, help="the trace's seed")
    p.add_argument(
        "--runs",
        type=int,
        default=2,
        help="runs of the trace in each simulator (ns-3 RngRun / Shoal run.seed 1..N), pooled",
    )
    p.add_argument(
        "--buffer-mib",
        type=int,
        help="switch buffer in MiB (ns3-datacenter's BUFFER_SIZE, Shoal's switch.pool_size); "
        "default: the scenario's 4 MiB",
    )
    p.add_argument(
        "--n3dc-tail",
        type=float,
        default=0.1,
        help="seconds ns3-datacenter simulates after the last flow starts (default 0.1)",
    )
    p.add_argument(
        "--out",
        help="output directory (default "
        "validation/results/n3dc_workload_<flows>_load<load>_seed<seed>)",
    )
    p.add_argument(
        "--n3dc-sizes",
        action="store_true",
        help="Shoal sends the reference's wire sizes (48 B headers, 60 B ACKs, 43 B PFC "
        "frames) instead of the scenario's 36 B, 48 B and 31 B",
    )
    p.add_argument(
        "--n3dc-same-paths",
        action="store_true",
        help="every reference run on the same flow file, so the same ECMP paths (Shoal's "
        "runs still draw new ones); by default each run shifts the flows' ports",
    )
    p.add_argument(
        "--reuse-n3dc",
        action="store_true",
        help="reuse the reference's runs already in the output directory when they ran on the "
        "same inputs and program (to iterate on Shoal)",
    )
    p.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = p.parse_args(argv)
    check_replay_args(p, args, max_flows=PORT_SPAN)
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
