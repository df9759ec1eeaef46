#!/usr/bin/env python3
"""Compare Shoal's loss recovery with ns-2's FullTcp/Sack on the same flow trace.

    python validation/compare_ns2.py --flows 2000 --load 0.8 --buffer 200KB [--seed 1]

The BCC, PIAS and LossPass papers ran ns-2's Agent/TCP/FullTcp/Sack. Debian's ns2 (2.35,
`apt-get install ns2`) has that sender but neither DCTCP nor the papers' switch models, so
this is a comparison of loss recovery alone: the star of ``star_dctcp.toml`` (32 hosts,
senders 0-23 -> receivers 24-31, web-search sizes, Poisson arrivals at ``--load`` of the
receivers' links), a tail-drop buffer of ``--buffer`` per switch port, no ECN, and in
Shoal ``cc = "newreno"`` with SACK, one new connection per flow (handshake included).

Prints drops, timeouts (ns-2: ``nrexmit_``, RTO expiries, as the papers' traffic
generator counts them), drops per timeout and the FCTs per size bucket. Both FCTs end
when the sender sees the last byte acknowledged (as the papers measure it; Shoal's
``run.fct_until = "acked"``). Writes
``comparison_ns2.json`` into ``--out``. Exit status 1 when ns-2 or Shoal is missing, 2 on
bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare_ns3 import (  # noqa: E402
    BUCKETS,
    UserError,
    bucket_stats,
    make_trace,
    parse_size,
    parse_time_s,
    run,
    run_guarded,
    sets,
    shoal_cmd,
)

SCENARIO = HERE / "star_dctcp.toml"
NS2_SCRIPT = HERE / "ns2" / "star.tcl"


def compare(args) -> int:
    import pandas as pd

    parse_size(args.buffer)  # a bad --buffer fails before anything runs
    ns = shutil.which("ns")
    if ns is None:
        raise UserError("ns-2 is not installed (Debian: apt-get install ns2)", 1)
    sc = tomllib.loads(SCENARIO.read_text())
    t, tr, host = sc["topology"], sc["transport"], sc.get("host", {})
    hosts = t["hosts"]
    out = Path(args.out or HERE / "results" / f"ns2_star_{args.flows}_seed{args.seed}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    shoal = shoal_cmd()
    trace = make_trace(shoal, SCENARIO, out, f"0-{hosts * 3 // 4 - 1}",
                       f"{hosts * 3 // 4}-{hosts - 1}", "access", args)

    print("ns-2 (FullTcp/Sack) ...", flush=True)
    ns2_out = out / "ns2_fct.csv"
    from shoal import _core

    rate_gbps = _core.parse_rate_bps(t["link_rate"]) / 1e9
    ns2_wall, _ = run([ns, str(NS2_SCRIPT), str(trace), str(ns2_out), str(hosts), f"{rate_gbps:g}",
                       f"{parse_time_s(t['link_delay']) * 1e6:g}", str(parse_size(args.buffer)),
                       str(parse_size(host.get("nic_buffer", "10MB"))), str(tr["mss"]),
                       str(tr["header"]), str(tr["init_cwnd"]),
                       f"{parse_time_s(tr['rto_min']):g}", "10"], "ns-2")
    ns2_drops = json.loads(Path(str(ns2_out) + ".drops").read_text())
    ns2 = pd.read_csv(ns2_out)

    print("Shoal ...", flush=True)
    shoal_dir = out / "shoal_newreno"
    if shoal_dir.exists():
        shutil.rmtree(shoal_dir)
    over = {"workload.trace": trace, "switch.pool_size": args.buffer, "transport.cc": "newreno",
            "transport.ecn": "off", "transport.initial_rwnd": "0B", "transport.sack": "true",
            "run.fct_until": "acked",
            "run.seed": args.seed}
    shoal_wall, _ = run(shoal + ["run", str(SCENARIO), "--out", str(shoal_dir), "-q"] + sets(over),
                        "shoal run")
    summary = json.loads((shoal_dir / "summary.json").read_text())
    flows = pd.read_parquet(shoal_dir / "flows.parquet")

    m = flows[["id", "bytes", "fct_ns", "timeouts"]].merge(
        ns2.rename(columns={"fct_ns": "fct_ns2", "timeouts": "timeouts_ns2"}), on="id")
    b = m.bytes.to_numpy()
    drops = {"ns2": ns2_drops["switch_drops"] + ns2_drops["nic_drops"],
             "shoal": summary["packets"]["dropped"]}
    timeouts = {"ns2": int(ns2.timeouts.sum()), "shoal": int(summary["timeouts"])}
    result = {
        "flows": args.flows, "load": args.load, "seed": args.seed, "buffer": args.buffer,
        "trace": str(trace), "drops": drops, "timeouts": timeouts,
        "drops_per_timeout": {k: drops[k] / timeouts[k] if timeouts[k] else None for k in drops},
        "flows_with_timeouts": {"ns2": int((m.timeouts_ns2 > 0).sum()),
                                "shoal": int((m.timeouts > 0).sum())},
        "unfinished": {"ns2": args.flows - len(ns2), "shoal": int(flows.fct_ns.isna().sum())},
        "timeouts_by_bucket": {name: {"ns2": int(m.timeouts_ns2[(b > lo) & (b <= hi)].sum()),
                                      "shoal": int(m.timeouts[(b > lo) & (b <= hi)].sum())}
                               for name, _, lo, hi in BUCKETS},
        "fct": {"ns2": bucket_stats(m.fct_ns2.to_numpy(float), b),
                "shoal": bucket_stats(m.fct_ns.to_numpy(float), b)},
        "wall_s": {"ns2": ns2_wall, "shoal": shoal_wall},
    }
    js = out / "comparison_ns2.json"
    tmp = js.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2))
    tmp.replace(js)
    print_report(result, js)
    return 0


def print_report(r: dict, js: Path) -> None:
    print(f"\nstar, {r['flows']} flows, load {r['load']}, switch buffer {r['buffer']} per port, "
          f"seed {r['seed']}; ns-2 FullTcp/Sack vs Shoal NewReno + SACK, no ECN")
    for what in ("drops", "timeouts", "drops_per_timeout", "flows_with_timeouts", "unfinished"):
        v = r[what]
        fmt = (lambda x: "-" if x is None else f"{x:.1f}") if what == "drops_per_timeout" else str
        print(f"  {what:<20} ns-2 {fmt(v['ns2']):>8}   Shoal {fmt(v['shoal']):>8}")
    print(f"  {'bucket':<12}{'n':>6} | {'ns-2 mean':>10}{'p99':>10}{'RTOs':>7} | "
          f"{'Shoal mean':>10}{'p99':>10}{'RTOs':>7}   (FCT in us)")
    for name, label, _, _ in BUCKETS:
        n2, sh = r["fct"]["ns2"][name], r["fct"]["shoal"][name]
        to = r["timeouts_by_bucket"][name]
        cell = lambda x: "-" if x is None else f"{x:.0f}"  # noqa: E731
        print(f"  {label:<12}{n2['count']:>6} | {cell(n2['mean_us']):>10}{cell(n2['p99_us']):>10}"
              f"{to['ns2']:>7} | {cell(sh['mean_us']):>10}{cell(sh['p99_us']):>10}{to['shoal']:>7}")
    w = r["wall_s"]
    print(f"  wall: ns-2 {w['ns2']:.1f} s, Shoal {w['shoal']:.2f} s")
    print(f"written: {js}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, default=2000)
    p.add_argument("--load", type=float, default=0.8, help="of the receivers' access links")
    p.add_argument("--buffer", default="200KB", help="tail-drop buffer per switch port")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cdf", default="websearch")
    p.add_argument("--out", help="output directory (default validation/results/ns2_star_<flows>_seed<seed>)")
    args = p.parse_args(argv)
    if args.flows < 1:
        p.error("--flows must be >= 1")
    if not 0 < args.load < 1:
        p.error("--load must be in (0, 1)")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
