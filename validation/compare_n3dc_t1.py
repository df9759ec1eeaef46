#!/usr/bin/env python3
"""Cross-check the BFC paper's baselines (``shoal reproduce bfc/fig5``: DCQCN, DCQCN+Win,
HPCC) against ns3-datacenter on the paper's topology T1 with the BFC harness's traffic.

    python validation/compare_n3dc_t1.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        --n3dc-program /path/to/burst-pfc [--schemes dcqcn,dcqcn_win,hpcc] \\
        [--duration 2ms] [--out DIR] [--reuse-n3dc]

The setting is fig5's FB_Hadoop run at quick scale (``python/shoal/experiments/bfc/
fig5.toml``): T1 (8 ToRs x 16 hosts, 8 spines, every link 100 Gbps and 1 us), homa_w4
at 60% of the ToR uplinks (``load_on = "core_nominal"``, lognormal arrivals) plus one
100 x 200 KB incast every 500 us, ``--duration`` of arrivals (quick: 2 ms). The driver
takes each scheme's scenario from the experiment file itself (its quick mode, the
FB_Hadoop point of its zip, seed 1), so this comparison and the figure cannot drift
apart, and

1. writes it as a scenario file and generates its flows with ``shoal trace``;
2. writes T1 in the reference's topology format, the flows as its flow file (sorted by
   start, priority group 3) and its ``config-burst.txt`` with fig5's values: BUFFER_SIZE
   (whole MiB) nearest to the shared pool fig5's 12 MiB leaves a ToR once its headroom
   and reserves are taken, RED 400 / 1,600 KB / 0.2 at 100 Gbps, ACK_HIGH_PRIO 1 (and
   the switches' AckHighPrio, so ACKs go in the strict queue 0 that PFC never pauses, as
   fig5's ``rdma.ack_priority = 0``), HPCC's MI_THRESH 0 and INT_MULTI 4;
3. runs the reference's burst program per scheme (DCQCN: cc mode 1 without window;
   DCQCN+Win: its ``--windowCheck=1``, one max BDP scaled by the rate, as fig5's
   ``window = "max_bdp"``, ``window_scales_with_rate``; HPCC: cc mode 3 with the window),
   and Shoal twice per scheme: on fig5's own scenario (``fig5``: HPCC's MMU, the figure
   as it is run) and on the same scenario with the reference's MMU rules and buffer
   (``n3dc_mmu``: sticky headroom, PAUSE on headroom, RESUME at 1,248 / 2,496 B, the
   arrival counted in its own threshold, BUFFER_SIZE MiB of pool with the headroom on
   top, no reserve); every process is timed;
4. compares per harness size bin the p99 slowdown (``shoal.reproduce.bfc``: FCT to the
   last ACK over the harness's ideal, incast flows left out, p99 = sorted[int(0.99 n)]),
   the PFC frames and the paused time.

Shoal's runs generate their own flows (the figure's runs do); the driver checks that
they are the trace's, flow by flow, and takes from them which flows are the incast's
(``query`` >= 0), which a trace does not record.

PFC frames are counted only with a reference program built with its ``QbbPfc`` trace on
(``--n3dc-program``; validation/README.md, "PFC against ns3-datacenter", says how). Writes
``comparison.json`` (per seed and, over ``--seeds``, pooled: every seed's flows in one
set per bin) and every input and output into ``--out`` (default
``validation/results/n3dc_t1_<duration>``, one ``seed<k>`` folder per seed). Exit status:
0 when the comparison ran, 1 when ns3-datacenter or Shoal is missing or fails, 2 on bad
arguments.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

from _common import N3DC_CC_FLAGS, rate_bps
from compare_n3dc import (
    START_OFFSET_S,
    n3dc_files,
    n3dc_parser,
    read_n3dc_pfc,
    read_shoal_pfc,
    reference_program,
    write_n3dc_config,
)
from compare_n3dc_workload import (
    children_cpu_s,
    red_maps,
    run_n3dc,
    write_n3dc_flows,
)
from compare_ns3 import UserError, parse_size, parse_time_s, ratio, run, run_guarded, shoal_cmd

HERE = Path(__file__).resolve().parent
EXPERIMENT = "bfc/fig5"
WORKLOAD = "homa_w4"  # fig5's FB_Hadoop point
#: The experiments this compares: fig5 at its FB_Hadoop point, fig5c (Google at 65%, no
#: incast; one workload).
EXPERIMENTS = {"fig5": ("bfc/fig5", WORKLOAD), "fig5c": ("bfc/fig5c", None)}
SCHEMES = ("dcqcn", "dcqcn_win", "hpcc")
MIB = 1 << 20
# The reference's flags for each of fig5's schemes (DCQCN without and with a window, HPCC).
N3DC_FLAGS = {scheme: N3DC_CC_FLAGS[scheme] for scheme in SCHEMES}
# SwitchNode has no NS_OBJECT_ENSURE_REGISTERED, so its command line cannot name it; the
# environment reaches the attribute when each switch is constructed (object-base.cc:124).
# The switches' AckHighPrio puts ACKs and NACKs into queue 0 (switch-node.cc:146), which
# ACK_HIGH_PRIO alone does only at the NIC (powertcp-evaluation-burst.cc:1005-1008).
ACK_HIGH_PRIO_ENV = ("NS_ATTRIBUTE_DEFAULT", "ns3::SwitchNode::AckHighPrio=1")
# The reference's PFC rules (validation/README.md, "PFC against ns3-datacenter"), which
# are Shoal's defaults; fig5 sets HPCC's instead.
N3DC_PFC_RULES = {
    "pause_at": "headroom",
    "headroom_admission": "sticky",
    "threshold_counts_arrival": True,
    "xon_offset": "2496B",
    "xon_floor": "1248B",
}
VARIANTS = ("fig5", "n3dc_mmu")
ORDER = ("n3dc", *(f"shoal_{v}" for v in VARIANTS))


# ---- fig5's scenarios ------------------------------------------------------------------


def fig5_scenarios(
    schemes, duration: str | None = None, seed: int = 1, experiment: str = "fig5"
) -> dict[str, dict]:
    """Each scheme's scenario of fig5's quick FB_Hadoop run (or fig5c's quick run) as the
    sweep resolves it, with ``duration`` of arrivals (background and incast) when given and
    ``run.seed`` ``seed`` (fig5 runs seed 1)."""
    from shoal._sweep import expand, load_sweep, resolve_runs
    from shoal.reproduce import find

    name, workload = EXPERIMENTS[experiment]
    spec = load_sweep(find(name).sweep_spec("quick"))
    wanted = [
        r
        for r in expand(spec)
        if r.params.get("scheme") in schemes
        and (workload is None or r.params.get("workload.cdf") == workload)
    ]
    out = {}
    for r in resolve_runs(spec, wanted):
        sc = copy.deepcopy(r.scenario)
        sc.setdefault("run", {})["seed"] = seed
        if duration is not None:
            sc["workload"]["duration"] = duration
            for extra in sc["workload"].get("extra", []):
                extra["duration"] = duration
        out[r.params["scheme"]] = sc
    missing = [s for s in schemes if s not in out]
    if missing:
        raise UserError(f"{name} has no scheme {missing[0]!r} with workload {workload}", 1)
    return out


def shared_pool(sc: dict, ports: int) -> int:
    """The shared bytes fig5's whole ``switch.buffer`` leaves a switch of ``ports`` ports
    once each port's reserve and its lossless classes' headroom (3 x C x D) are taken."""
    sw, t = sc["switch"], sc["topology"]
    fc = sw.get("flow_control", {})
    classes = len(fc.get("classes", [])) if fc.get("kind") == "pfc" else 0
    rate = rate_bps(t["link_rate"]) / 8
    headroom = round(3 * rate * parse_time_s(t["link_delay"])) if fc.get("headroom") == "3cd" else 0
    reserve = parse_size(sw.get("reserved", 0))
    per_port = reserve if sw.get("reserve_per") == "port" else reserve * sw.get("queues", 8)
    return parse_size(sw["buffer"]) - ports * (per_port + classes * headroom)


def n3dc_buffer_mib(sc: dict) -> int:
    """The reference's BUFFER_SIZE: the whole MiB nearest to a ToR's shared pool in fig5
    (a ToR's ports: its hosts and one uplink per spine)."""
    t = sc["topology"]
    return max(1, round(shared_pool(sc, t["hosts_per_leaf"] + t["spines"]) / MIB))


def n3dc_mmu_variant(sc: dict, buffer_mib: int) -> dict:
    """fig5's scenario with the reference's MMU: its PFC rules, a pool of ``buffer_mib``
    MiB per switch with the headroom on top (``pool_size``, not the whole ``buffer``) and
    no reserve."""
    out = copy.deepcopy(sc)
    sw = out["switch"]
    sw.pop("buffer", None)
    sw["pool_size"] = f"{buffer_mib}MiB"
    sw["reserved"] = "0B"
    sw["flow_control"].update(N3DC_PFC_RULES)
    return out


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def toml_inline(value) -> str:
    """A plain value (a scenario's: tables, lists, strings, numbers, booleans) as TOML."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {toml_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_inline(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return f"{value:.1f}"
    return json.dumps(value)


def toml_document(scenario: dict) -> str:
    """A scenario's tables as a TOML document (one ``[table]`` per top-level key)."""
    lines = []
    for table, body in scenario.items():
        if isinstance(body, dict):
            lines.append(f"[{_key(table)}]")
            lines += [f"{_key(k)} = {toml_inline(v)}" for k, v in body.items()]
            lines.append("")
        else:
            lines.insert(0, f"{_key(table)} = {toml_inline(body)}")
    return "\n".join(lines)


# ---- the reference's inputs ------------------------------------------------------------


def write_t1_topology(path: Path, topology: dict) -> Path:
    """A leaf-spine ``topology`` table in the reference's format (as ``n3dc/topology.txt``):
    ``nodes switches tors links``, the switch ids, then ``a b rate delay error`` per
    link. Hosts are 0..H-1, leaf l holds hosts l x hosts_per_leaf onward (Shoal's
    numbering), leaves are H.., spines after them; every leaf links to every spine."""
    leaves, spines, per_leaf = topology["leaves"], topology["spines"], topology["hosts_per_leaf"]
    hosts = leaves * per_leaf
    host_rate = rate_bps(topology["link_rate"])
    up_rate = rate_bps(topology.get("uplink_rate", topology["link_rate"]))
    delay = f"{round(parse_time_s(topology['link_delay']) * 1e9)}ns"
    leaf_ids = [hosts + i for i in range(leaves)]
    spine_ids = [hosts + leaves + i for i in range(spines)]
    links = [f"{h} {leaf_ids[h // per_leaf]} {host_rate}.0 {delay} 0" for h in range(hosts)]
    links += [f"{leaf} {spine} {up_rate}.0 {delay} 0" for leaf in leaf_ids for spine in spine_ids]
    switches = leaf_ids + spine_ids
    path.write_text(
        f"{hosts + len(switches)} {len(switches)} {leaves} {len(links)}\n"
        + " ".join(map(str, switches))
        + "\n"
        + "\n".join(links)
        + "\n"
    )
    return path


def n3dc_overrides(sc: dict, out: Path, topology: Path, stop_s: float) -> dict:
    """The reference's configuration values for fig5's scenario ``sc`` (its scheme's)."""
    rates = [rate_bps(sc["topology"]["link_rate"])]
    rdma, cc = sc.get("rdma", {}), sc.get("rdma", {}).get("cc", {})
    values = {
        "TOPOLOGY_FILE": topology,
        **n3dc_files(out),
        "BUFFER_SIZE": n3dc_buffer_mib(sc),
        "SIMULATOR_STOP_TIME": f"{stop_s:.4f}",
        "ACK_HIGH_PRIO": 1 if rdma.get("ack_priority") == 0 else 0,
        **red_maps(sc["switch"].get("marking", {}).get("red"), rates),
    }
    if cc.get("kind") == "hpcc":
        values["MI_THRESH"] = cc.get("max_stage", 5)
        values["U_TARGET"] = cc.get("eta", 0.95)
        values["INT_MULTI"] = rdma.get("int_multi", 1)
    return values


def sorted_trace(trace):
    """The trace in order of start (the reference reads its flow file in order and would
    schedule a flow that starts earlier than the one before it in the past), ties by id."""
    return trace.sort_values(["start_ns", "id"], kind="stable").reset_index(drop=True)


def read_n3dc_fct_by_sport(path: Path, trace):
    """FCT (ns) per row of ``trace`` (the flow file's order) from the reference's FCT file
    (``sip dip sport dport size start fct standalone``), NaN for a flow that did not
    finish. A flow is named by its hosts and source port: the k-th flow of a host pair in
    the file gets 10000 + k (``portNumder``, powertcp-evaluation-burst.cc:152, 1070), so
    this works for any number of flows, where the destination ports the workload driver
    names flows by wrap around after 65,000 (fig5's 50 ms has 209,244 flows)."""
    import numpy as np

    src, dst = trace["src"].to_numpy(), trace["dst"].to_numpy()
    rank = trace.groupby(["src", "dst"], sort=False).cumcount().to_numpy()
    keys = zip(src, dst, rank, strict=True)
    index = {(int(a), int(b), 10000 + int(k)): i for i, (a, b, k) in enumerate(keys)}
    fct = np.full(len(trace), np.nan)
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        # ip_to_node_id (powertcp-evaluation-burst.cc): node = (ip >> 8) & 0xffff.
        sip, dip = ((int(x, 16) >> 8) & 0xFFFF for x in parts[:2])
        i = index.get((sip, dip, int(parts[2])))
        if i is None:
            raise UserError(f"{path}: a flow {sip} -> {dip}, port {parts[2]} not in the trace", 1)
        fct[i] = float(parts[6])
    return fct


# ---- the comparison --------------------------------------------------------------------


def bin_table(fct_ns, trace, incast, hosts_per_rack: int):
    """Per harness bin of FB_Hadoop: non-incast flows finished and their p99 slowdown
    (``shoal.reproduce.bfc.p99_by_bin``); ``fct_ns`` aligned with ``trace`` (NaN:
    unfinished), ``incast`` a boolean per trace row."""
    import numpy as np
    import pandas as pd

    from shoal.reproduce.bfc import p99_by_bin

    flows = pd.DataFrame(
        {
            "src": trace["src"].to_numpy(),
            "dst": trace["dst"].to_numpy(),
            "bytes": trace["bytes"].to_numpy(),
            "fct_ns": np.asarray(fct_ns, dtype=float),
            "query": np.where(np.asarray(incast, dtype=bool), 0, -1),
        }
    )
    return p99_by_bin(flows, "FB_Hadoop", hosts_per_rack)


def p99_all(fct_ns, trace, incast, hosts_per_rack: int) -> float:
    """The harness's p99 slowdown over every finished non-incast flow."""
    import numpy as np

    from shoal.reproduce.bfc import harness_p99, slowdown

    fct = np.asarray(fct_ns, dtype=float)
    keep = ~np.asarray(incast, dtype=bool) & ~np.isnan(fct)
    src, dst = trace["src"].to_numpy()[keep], trace["dst"].to_numpy()[keep]
    same = src // hosts_per_rack == dst // hosts_per_rack
    return harness_p99(slowdown(fct[keep], trace["bytes"].to_numpy()[keep], same))


def pause_count(pfc: dict) -> int:
    """PAUSE frames sent, by switches and hosts (``read_*_pfc``)."""
    return int(pfc["switch"]["pauses_sent"] + pfc["host"]["pauses_sent"])


def scheme_result(tables: dict, p99s: dict, pfc: dict, walls: dict, unfinished: dict) -> dict:
    """One scheme's comparison: per bin the p99 of each simulator (``tables``: name ->
    ``bin_table``) and the ratios to the reference's, and the rest per simulator."""
    names = list(tables)
    ref = tables["n3dc"]
    bins = []
    for i in range(len(ref)):
        row = {"bin": int(ref["bin"][i]), "label": str(ref["label"][i])}
        for name in names:
            t = tables[name]
            p99 = float(t["p99"][i])
            row[name] = {"flows": int(t["flows"][i]), "p99": None if p99 != p99 else p99}
        for name in names:
            if name != "n3dc":
                row[f"{name}_vs_n3dc"] = ratio(row[name]["p99"], row["n3dc"]["p99"])
        bins.append(row)
    return {
        "bins": bins,
        "p99_all": p99s,
        "p99_all_vs_n3dc": {n: ratio(p99s[n], p99s["n3dc"]) for n in names if n != "n3dc"},
        "pfc": pfc,
        "pauses_sent": {n: pause_count(p) for n, p in pfc.items()},
        "unfinished": unfinished,
        "wall_s": walls,
    }


def check_same_flows(trace, flows) -> None:
    """Shoal's own flows (``flows.parquet``) are the trace's, id by id."""
    import numpy as np

    a = trace.sort_values("id")
    b = flows.sort_values("id")
    cols = ["id", "src", "dst", "bytes"]
    same = len(a) == len(b) and all(
        np.array_equal(a[c].to_numpy(), b[c].to_numpy(dtype=a[c].dtype)) for c in cols
    )
    if same:
        same = np.allclose(a["start_ns"].to_numpy(float), b["start_ns"].to_numpy(float), atol=1)
    if not same:
        raise UserError("Shoal's run generated other flows than `shoal trace` wrote", 1)


def run_seed(args, n3dc: Path, program: Path, seed: int, out: Path) -> tuple[dict, dict]:
    """Both simulators on seed ``seed``'s flows, in ``out``: the seed's report and, per
    scheme, what pooling needs (the trace, the incast flags, each simulator's FCTs and
    PFC counts)."""
    import numpy as np
    import pandas as pd

    schemes = args.schemes
    scenarios = fig5_scenarios(schemes, args.duration, seed, args.experiment)
    first = scenarios[schemes[0]]
    rack = first["topology"]["hosts_per_leaf"]
    out.mkdir(parents=True, exist_ok=True)
    shoal = shoal_cmd()

    buffer_mib = n3dc_buffer_mib(first)
    files = {}
    for s in schemes:
        for v in VARIANTS:
            sc = scenarios[s] if v == "fig5" else n3dc_mmu_variant(scenarios[s], buffer_mib)
            files[s, v] = out / f"shoal_{s}_{v}.toml"
            files[s, v].write_text(toml_document(sc))

    trace_csv = out / "trace.csv"
    print(f"seed {seed}: generating {args.experiment}'s flows ...", flush=True)
    run(shoal + ["trace", str(files[schemes[0], "fig5"]), "--out", str(trace_csv)], "shoal trace")
    trace = sorted_trace(pd.read_csv(trace_csv))
    topology = write_t1_topology(out / "n3dc_topology.txt", first["topology"])

    results, raw = {}, {}
    for s in schemes:
        sdir = out / s
        sdir.mkdir(exist_ok=True)
        # Shoal first: its own flows say which are the incast's.
        fcts, pfc, walls, sims = {}, {}, {}, {}
        incast = None
        for v in VARIANTS:
            print(f"seed {seed}, {s}: running Shoal ({v}) ...", flush=True)
            run_dir = sdir / f"shoal_{v}"
            wall, _ = run(
                shoal + ["run", str(files[s, v]), "--out", str(run_dir), "-q"], "shoal run"
            )
            flows = pd.read_parquet(run_dir / "flows.parquet")
            check_same_flows(trace, flows)
            by_id = flows.set_index("id").loc[trace["id"]]
            fcts[f"shoal_{v}"] = by_id["fct_ns"].to_numpy(dtype=float)
            if incast is None:
                incast = (by_id["query"] >= 0).to_numpy()
            pfc[f"shoal_{v}"] = read_shoal_pfc(run_dir)
            walls[f"shoal_{v}"] = wall
            sims[f"shoal_{v}"] = json.loads((run_dir / "summary.json").read_text())["wall_time_s"]
            print(f"  {wall:.1f} s", flush=True)

        # The reference, until every flow of Shoal's fig5 run has ended and --n3dc-tail more.
        end_ns = float(np.nanmax(trace["start_ns"].to_numpy() + fcts["shoal_fig5"]))
        stop = START_OFFSET_S + end_ns / 1e9 + args.n3dc_tail
        write_n3dc_flows(sdir, trace)
        conf = write_n3dc_config(n3dc, sdir, n3dc_overrides(scenarios[s], sdir, topology, stop))
        cmd = [str(program), f"--conf={conf}", *N3DC_FLAGS[s]]
        env_name, env_value = ACK_HIGH_PRIO_ENV if args.n3dc_ack_high_prio else ("", "")
        digest = hashlib.sha256(
            b"".join(p.read_bytes() for p in (conf, sdir / "n3dc_flows.txt", topology))
            + " ".join([*cmd[:1], *cmd[2:], env_value, str(seed)]).encode()
        ).hexdigest()
        record = sdir / "n3dc_run.json"
        saved = json.loads(record.read_text()) if record.is_file() else {}
        if args.reuse_n3dc and saved.get("inputs") == digest and (sdir / "n3dc_fct.txt").is_file():
            print(f"seed {seed}, {s}: reusing ns3-datacenter's run", flush=True)
        else:
            print(f"seed {seed}, {s}: running ns3-datacenter on {len(trace)} flows ...", flush=True)
            cpu = children_cpu_s()
            extra = {env_name: env_value} if env_name else None
            wall, drops = run_n3dc(cmd, sdir / "n3dc_stdout.txt", seed, extra)
            saved = {"inputs": digest, "wall_s": wall, "cpu_s": children_cpu_s() - cpu}
            saved["lossless_drops"] = drops
            record.write_text(json.dumps(saved, indent=2) + "\n")
            (sdir / "n3dc_stdout.txt").unlink()  # a throughput report: hundreds of MB
            print(f"  {wall:.1f} s ({saved['cpu_s']:.1f} s CPU)", flush=True)
        fct = read_n3dc_fct_by_sport(sdir / "n3dc_fct.txt", trace)
        fcts["n3dc"] = fct
        ends = START_OFFSET_S * 1e9 + trace["start_ns"].to_numpy() + np.nan_to_num(fct)
        pfc["n3dc"] = read_n3dc_pfc(sdir / "n3dc_pfc.txt", int(ends.max()))
        walls["n3dc"] = saved["wall_s"]

        tables = {n: bin_table(fcts[n], trace, incast, rack) for n in ORDER}
        p99s = {n: p99_all(fcts[n], trace, incast, rack) for n in ORDER}
        unfinished = {n: int(np.isnan(fcts[n]).sum()) for n in ORDER}
        res = scheme_result(tables, p99s, {n: pfc[n] for n in ORDER}, walls, unfinished)
        res["shoal_simulation_s"] = sims
        res["n3dc_cpu_s"] = saved["cpu_s"]
        res["n3dc_lossless_drops"] = saved["lossless_drops"]
        res["n3dc_command"] = ([f"{env_name}={env_value}"] if env_name else []) + cmd
        results[s] = res
        raw[s] = {"trace": trace, "incast": incast, "fcts": fcts, "pfc": pfc, "walls": walls}

    report = {
        "seed": seed,
        "flows": len(trace),
        "incast_flows": int(incast.sum()),
        "n3dc_buffer_mib": buffer_mib,
        "schemes": results,
    }
    (out / "comparison.json").write_text(json.dumps(report, indent=2) + "\n")
    return report, raw


def pool(raws: list[dict], rack: int) -> dict:
    """Per scheme, the comparison over the flows of every seed together (``raws``: each
    seed's ``run_seed`` pooling data); PAUSEs, paused time and wall times summed."""
    import numpy as np
    import pandas as pd

    results = {}
    for s in raws[0]:
        parts = [r[s] for r in raws]
        trace = pd.concat([p["trace"] for p in parts], ignore_index=True)
        incast = np.concatenate([p["incast"] for p in parts])
        fcts = {n: np.concatenate([p["fcts"][n] for p in parts]) for n in ORDER}
        pfc = {
            n: {
                "host": {"pauses_sent": sum(p["pfc"][n]["host"]["pauses_sent"] for p in parts)},
                "switch": {"pauses_sent": sum(p["pfc"][n]["switch"]["pauses_sent"] for p in parts)},
                "paused_ns": sum(p["pfc"][n]["paused_ns"] for p in parts),
            }
            for n in ORDER
        }
        walls = {n: sum(p["walls"][n] for p in parts) for n in ORDER}
        tables = {n: bin_table(fcts[n], trace, incast, rack) for n in ORDER}
        p99s = {n: p99_all(fcts[n], trace, incast, rack) for n in ORDER}
        unfinished = {n: int(np.isnan(fcts[n]).sum()) for n in ORDER}
        results[s] = scheme_result(tables, p99s, pfc, walls, unfinished)
    return results


def compare(args) -> int:
    n3dc = Path(args.n3dc).resolve()
    program = reference_program(args)
    first = fig5_scenarios(args.schemes[:1], args.duration, experiment=args.experiment)
    first = first[args.schemes[0]]
    duration = first["workload"]["duration"]
    tag = "" if args.experiment == "fig5" else f"{args.experiment}_"
    out = Path(args.out or HERE / "results" / f"n3dc_t1_{tag}{duration}").resolve()
    reports, raws = [], []
    for seed in args.seeds:
        report, raw = run_seed(args, n3dc, program, seed, out / f"seed{seed}")
        reports.append(report)
        raws.append(raw)
    result = {
        "experiment": EXPERIMENTS[args.experiment][0],
        "workload": EXPERIMENTS[args.experiment][1] or Path(first["workload"]["cdf"]).stem,
        "duration": duration,
        "seeds": args.seeds,
        "flows": sum(r["flows"] for r in reports),
        "incast_flows": sum(r["incast_flows"] for r in reports),
        "n3dc_buffer_mib": reports[0]["n3dc_buffer_mib"],
        "n3dc_program": str(program),
        "n3dc_tail_s": args.n3dc_tail,
        "n3dc_ack_high_prio": args.n3dc_ack_high_prio,
        "per_seed": reports,
        "schemes": pool(raws, first["topology"]["hosts_per_leaf"]),
    }
    (out / "comparison.json").write_text(json.dumps(result, indent=2) + "\n")
    for report in reports:
        print_report(report, f"seed {report['seed']}, {duration} of arrivals")
    if len(reports) > 1:
        print_report(result, f"seeds {args.seeds} pooled, {duration} of arrivals each")
    print(f"wrote {out / 'comparison.json'}")
    return 0


def print_report(report: dict, title: str) -> None:
    def num(v, spec=".2f"):
        return "-" if v is None else format(v, spec)

    print(
        f"\n{title}: {report['flows']} flows ({report['incast_flows']} incast); p99 slowdown "
        "per harness bin (FB_Hadoop), incast flows left out"
    )
    for s, r in report["schemes"].items():
        print(f"\n{s}")
        print(
            f"{'bin':<10} {'flows':>6} {'n3dc':>8} {'fig5':>8} {'ratio':>6} "
            f"{'n3dc_mmu':>9} {'ratio':>6}"
        )
        for b in r["bins"]:
            print(
                f"{b['label']:<10} {b['n3dc']['flows']:>6} {num(b['n3dc']['p99']):>8} "
                f"{num(b['shoal_fig5']['p99']):>8} {num(b['shoal_fig5_vs_n3dc'], '.3f'):>6} "
                f"{num(b['shoal_n3dc_mmu']['p99']):>9} {num(b['shoal_n3dc_mmu_vs_n3dc'], '.3f'):>6}"
            )
        p = r["p99_all"]
        print(
            f"{'all':<10} {'':>6} {num(p['n3dc']):>8} {num(p['shoal_fig5']):>8} "
            f"{num(r['p99_all_vs_n3dc']['shoal_fig5'], '.3f'):>6} {num(p['shoal_n3dc_mmu']):>9} "
            f"{num(r['p99_all_vs_n3dc']['shoal_n3dc_mmu'], '.3f'):>6}"
        )
        paused = {n: v["paused_ns"] / 1e6 for n, v in r["pfc"].items()}
        print(
            "PAUSEs sent: "
            + ", ".join(f"{n} {c} ({paused[n]:.2f} ms paused)" for n, c in r["pauses_sent"].items())
        )
        print("unfinished: " + ", ".join(f"{n} {c}" for n, c in r["unfinished"].items()))
        print("wall: " + ", ".join(f"{n} {w:.1f} s" for n, w in r["wall_s"].items()))


def parse_schemes(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in names if s not in SCHEMES]
    if bad or not names:
        raise ValueError(f"unknown scheme {bad[0] if bad else text!r}; choose from {SCHEMES}")
    return names


def main(argv=None) -> int:
    p = n3dc_parser(__doc__)
    p.add_argument(
        "--experiment",
        choices=sorted(EXPERIMENTS),
        default="fig5",
        help="bfc/fig5 at its FB_Hadoop point (default) or bfc/fig5c (Google, no incast)",
    )
    p.add_argument(
        "--schemes",
        default=",".join(SCHEMES),
        help=f"comma-separated fig5 schemes (default {','.join(SCHEMES)})",
    )
    p.add_argument(
        "--duration",
        help="arrivals of background and incast flows (default fig5's quick mode: 2ms)",
    )
    p.add_argument(
        "--seeds",
        default="1",
        help="comma-separated seeds, each Shoal's run.seed (flows, marking, paths) and the "
        "reference's RngRun (marking); one comparison per seed and one of all pooled "
        "(default 1, fig5's)",
    )
    p.add_argument(
        "--n3dc-tail",
        type=float,
        default=0.005,
        help="seconds ns3-datacenter runs after the last flow of Shoal's fig5 run has ended "
        "(default 0.005)",
    )
    p.add_argument(
        "--no-n3dc-ack-high-prio",
        dest="n3dc_ack_high_prio",
        action="store_false",
        help="leave the reference's switches' AckHighPrio at 0 (ACKs share the data's queue 3 "
        "at switches; its NIC still sends them first)",
    )
    p.add_argument(
        "--out",
        help="output directory (default validation/results/n3dc_t1_<duration>; seed k's "
        "runs in seed<k>/)",
    )
    p.add_argument(
        "--reuse-n3dc",
        action="store_true",
        help="reuse ns3-datacenter's run of a scheme already in the output directory when it "
        "ran on the same inputs and program",
    )
    args = p.parse_args(argv)
    try:
        args.schemes = parse_schemes(args.schemes)
    except ValueError as e:
        p.error(str(e))
    try:
        args.seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
        if not args.seeds or min(args.seeds) < 1 or len(set(args.seeds)) < len(args.seeds):
            raise ValueError
    except ValueError:
        p.error(f"--seeds must be distinct positive integers, got {args.seeds!r}")
    if args.n3dc_tail <= 0:
        p.error("--n3dc-tail must be > 0")
    if args.duration is not None:
        try:
            if parse_time_s(args.duration) <= 0:
                raise UserError("not positive")
        except UserError:
            p.error(f"--duration must be a positive time such as 2ms, got {args.duration!r}")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
