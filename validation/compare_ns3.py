#!/usr/bin/env python3
"""Cross-validate Shoal against ns-3 on the same flow trace (issue 3).

    python validation/compare_ns3.py star --flows 2000 --load 0.6 [--seed 1] [--out DIR]
    python validation/compare_ns3.py dumbbell --flows 2000 --load 0.6

Steps: build the ns-3 programs in validation/ns3/ (if needed), generate a web-search
many-to-few trace with ``shoal trace``, replay it in ns-3 and in Shoal (timing both), and
compare FCTs per size bucket (count, mean, median, p99, ratio Shoal/ns-3), flow by flow
(median of fct_shoal / fct_ns3), drops, ECN marks and wall-clock times. Writes
``comparison.json``, ``fct_cdf.png`` / ``fct_cdf.pdf`` and both simulators' raw outputs
into the output directory.

Star: 32 hosts, senders 0-23 -> receivers 24-31, ``--load`` of the receivers' access
capacity. Dumbbell: 16 hosts on switch A send to 8 hosts on switch B; ``--load`` is the
utilization of the A->B link (the bottleneck).

Environment: SHOAL_CLI overrides the Shoal command (default: `shoal` on PATH).

Targets: Shoal's mean FCT per bucket within 10% of ns-3's, p99 within 20%, Shoal >= 100x
faster. Exit status: 0 when the comparison ran (targets met or not; see the printout, or
use --check to exit 3 on a missed target), 1 when ns-3 or Shoal is missing, 2 on bad
arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS3_DIR = HERE / "ns3"
SCENARIOS = {"star": HERE / "star_dctcp.toml", "dumbbell": HERE / "dumbbell_dctcp.toml"}
BUCKETS = [("small", "<=100KB", 0, 100_000), ("medium", "100KB-10MB", 100_000, 10_000_000),
           ("large", ">10MB", 10_000_000, math.inf)]
TARGET_MEAN = 0.10
TARGET_P99 = 0.20
TARGET_SPEEDUP = 100.0


class UserError(Exception):
    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


# ---- units -------------------------------------------------------------------------
# Read with Shoal's own parsers, so the ns-3 side gets exactly the values Shoal simulates.


def parse_size(v) -> int:
    from shoal import _core

    if isinstance(v, int):
        return v
    try:
        return _core.parse_bytes(str(v))
    except ValueError as exc:
        raise UserError(f"not a size: {v!r} ({exc})") from None


def parse_time_s(v) -> float:
    from shoal import _core

    if isinstance(v, int):
        return v * 1e-12
    try:
        return _core.parse_time_ps(str(v)) * 1e-12
    except ValueError as exc:
        raise UserError(f"not a time: {v!r} ({exc})") from None


def ns3_time(v) -> str:
    """A Shoal time as an ns-3 time string (ns-3 accepts ps/ns/us/ms/s suffixes)."""
    return f"{round(parse_time_s(v) * 1e12)}ps"


def ns3_rate(v) -> str:
    if isinstance(v, int):
        return f"{v}bps"
    return str(v)


# ---- helpers -------------------------------------------------------------------------

def check_ns3() -> None:
    if not (Path("/usr/include/ns3/core-module.h").exists() or os.environ.get("NS3_INC")):
        raise UserError("ns-3 is not installed: /usr/include/ns3/core-module.h is missing "
                        "(install it with `apt-get install libns3-dev libgsl-dev`)", 1)
    if shutil.which("pkg-config") is None or subprocess.run(
            ["pkg-config", "--exists", "ns3-core"], capture_output=True).returncode != 0:
        raise UserError("ns-3 is not installed: pkg-config does not know ns3-core "
                        "(install it with `apt-get install libns3-dev libgsl-dev`)", 1)


def build_ns3() -> None:
    check_ns3()
    sources = list(NS3_DIR.glob("*.cc")) + list(NS3_DIR.glob("*.h")) + [NS3_DIR / "Makefile"]
    newest = max(p.stat().st_mtime for p in sources)
    targets = [NS3_DIR / "build" / "star", NS3_DIR / "build" / "dumbbell"]
    if all(t.exists() and t.stat().st_mtime >= newest for t in targets):
        return
    print("building the ns-3 programs (validation/ns3/build/) ...", flush=True)
    r = subprocess.run(["make", "-C", str(NS3_DIR)], capture_output=True, text=True)
    if r.returncode != 0:
        raise UserError("building the ns-3 programs failed:\n" + r.stdout[-3000:] + r.stderr[-3000:], 1)


def shoal_cmd() -> list[str]:
    if os.environ.get("SHOAL_CLI"):  # e.g. SHOAL_CLI=/path/to/venv/bin/shoal (another build)
        import shlex

        return shlex.split(os.environ["SHOAL_CLI"])
    # The console script installed next to this interpreter, else the one on PATH (a
    # pyenv shim on PATH is a shell script that adds ~0.2 s to every call).
    exe = Path(sys.executable).parent / "shoal"
    if exe.is_file() and os.access(exe, os.X_OK):
        return [str(exe)]
    exe = shutil.which("shoal")
    if exe:
        return [exe]
    try:
        import shoal  # noqa: F401
    except ImportError:
        raise UserError("the `shoal` CLI is not installed (run `pip install .` in the repository)", 1)
    return [sys.executable, "-m", "shoal"]


def run(
    cmd: list[str], what: str, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess]:
    """Runs ``cmd`` (with ``env`` added to the environment), timed; fails with its stderr."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    except OSError as e:
        raise UserError(f"{what}: cannot run {cmd[0]}: {e.strerror or e}", 1)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise UserError(f"{what} failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr.strip()[-3000:]}", 1)
    return wall, r


def sets(pairs: dict[str, object]) -> list[str]:
    out = []
    for k, v in pairs.items():
        out += ["--set", f"{k}={v}"]
    return out


def make_trace(shoal, scenario: Path, out: Path, senders: str, receivers: str, load_on: str, args,
               extra: dict | None = None) -> Path:
    """Web-search-like many-to-few trace of ``args.flows`` flows into ``out/trace.csv``
    (``extra``: more ``--set`` pairs, such as the link rate the load is measured on)."""
    trace = out / "trace.csv"
    gen = {"workload.pattern": "many_to_few", "workload.senders": senders, "workload.receivers": receivers,
           "workload.cdf": args.cdf, "workload.load": args.load, "workload.load_on": load_on,
           "workload.flows": args.flows, "run.seed": args.seed, **(extra or {})}
    print(f"generating {args.flows} flows ({args.cdf}, load {args.load}, seed {args.seed}) ...", flush=True)
    run(shoal + ["trace", str(scenario), "--out", str(trace)] + sets(gen), "shoal trace")
    return trace


def run_guarded(compare, args) -> int:
    """Runs a driver's ``compare(args)``: a user error prints ``error: ...`` and returns its
    exit status, Ctrl-C returns 130."""
    try:
        return compare(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


# ---- the comparison -------------------------------------------------------------------

def bucket_stats(fct_ns, bytes_):
    """Per size bucket (and all flows): count, finished, and the mean, median and p99 FCT
    (us) of the finished flows (shoal.analysis.bucket_stats)."""
    from shoal.analysis import BUCKET_LABELS
    from shoal.analysis import bucket_stats as stats_of

    def us(ns):
        return None if ns is None else ns / 1e3

    return {
        name: {"label": BUCKET_LABELS[name], "count": s["count"], "finished": s["finished"],
               "mean_us": us(s["mean_fct_ns"]), "median_us": us(s["median_fct_ns"]),
               "p99_us": us(s["p99_fct_ns"])}
        for name, s in stats_of(bytes_, fct_ns, percentiles=(99,)).items()
    }


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def plot(merged, path_base: Path, title: str) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: matplotlib is not installed (pip install matplotlib); no plot written", file=sys.stderr)
        return []
    import numpy as np

    fig, axes = plt.subplots(1, 4, figsize=(17, 4))
    groups = [("all flows", np.ones(len(merged), bool))] + [
        (f"{label} ({name})", ((merged.bytes > lo) & (merged.bytes <= hi)).to_numpy())
        for name, label, lo, hi in BUCKETS]
    for ax, (label, sel) in zip(axes, groups):
        for col, name, style in (("fct_ns3", "ns-3", "-"), ("fct_shoal", "Shoal", "--")):
            v = np.sort(merged.loc[sel, col].dropna().to_numpy() / 1e3)
            if len(v):
                ax.step(v, np.arange(1, len(v) + 1) / len(v), style, where="post", label=f"{name} (n={len(v)})")
        ax.set_xscale("log")
        ax.set_xlabel("FCT (us)")
        ax.set_title(label)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    axes[0].set_ylabel("CDF")
    fig.suptitle(title)
    fig.tight_layout()
    files = []
    for ext in ("png", "pdf"):
        p = path_base.with_suffix("." + ext)
        fig.savefig(p, dpi=130)
        files.append(str(p))
    plt.close(fig)
    return files


def compare(args) -> int:
    import numpy as np
    import pandas as pd

    topo = args.topology
    scenario = SCENARIOS[topo]
    sc = tomllib.loads(scenario.read_text())
    t, sw, tr, host = sc["topology"], sc["switch"], sc["transport"], sc.get("host", {})
    link_delay = args.link_delay or t["link_delay"]
    k = args.k or sw["marking"]["cutoff"]["k"]
    cc = tr["cc"] if isinstance(tr.get("cc"), dict) else {}  # DCTCP's g and alpha_init
    buffer = args.buffer or sw["pool_size"]
    init_cwnd = args.init_cwnd or tr["init_cwnd"]
    mtu = tr["mss"] + tr["header"]
    if tr["header"] != 54:
        raise UserError("the ns-3 programs assume 54-byte headers (PPP 2 + IP 20 + TCP 32)")
    if parse_size(sw["reserved"]) != 0 or sw["ports_per_pool"] != 1:
        raise UserError(f"{scenario.name}: the ns-3 model needs ports_per_pool = 1 and reserved = 0")

    out = Path(args.out or HERE / "results" / f"{topo}_{args.flows}_seed{args.seed}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    build_ns3()
    shoal = shoal_cmd()

    # (b) the trace
    if topo == "star":
        hosts = t["hosts"]
        senders, receivers = f"0-{hosts * 3 // 4 - 1}", f"{hosts * 3 // 4}-{hosts - 1}"
        load_on = "access"  # --load is of the receivers' access links
        ns3_topo = ["--hosts=%d" % hosts]
    else:
        left, right = t["hosts"], t["hosts_right"]
        senders, receivers = f"0-{left - 1}", f"{left}-{left + right - 1}"
        # --load is the A->B utilization: Shoal's load_on = "core" counts the uplinks of
        # the switches that have senders, i.e. the A->B link only.
        load_on = "core"
        ns3_topo = ["--left=%d" % left, "--right=%d" % right,
                    "--uplinkRate=%s" % ns3_rate(t.get("uplink_rate", t["link_rate"])),
                    "--uplinkDelay=%s" % ns3_time(args.link_delay or t.get("uplink_delay", t["link_delay"]))]
    trace = make_trace(shoal, scenario, out, senders, receivers, load_on, args)
    tr_df = pd.read_csv(trace)

    # (c) ns-3
    suffix = "" if args.sack else "_nosack"
    ns3_out = out / f"ns3_fct{suffix}.csv"
    ns3 = [str(NS3_DIR / "build" / topo), f"--trace={trace}", f"--out={ns3_out}",
           f"--detail={ns3_out.with_suffix('.detail.csv')}",
           f"--linkRate={ns3_rate(t['link_rate'])}", f"--linkDelay={ns3_time(link_delay)}",
           f"--mtu={mtu}", f"--K={parse_size(k)}", f"--buffer={parse_size(buffer)}",
           f"--nicBuffer={parse_size(host.get('nic_buffer', '10MB'))}", f"--initCwnd={init_cwnd}",
           f"--rtoMin={ns3_time(tr['rto_min'])}", f"--rtoInit={ns3_time(tr.get('rto_init', tr['rto_min']))}",
           f"--sack={'true' if args.sack else 'false'}", f"--dctcpG={cc.get('g', 0.0625)}",
           f"--dctcpAlphaInit={cc.get('alpha_init', 1.0)}", f"--stop={args.stop}"] + ns3_topo
    # The command with file arguments reduced to their names (a copied output dir matches).
    ns3_key = " ".join(re.sub(r"^(--(?:trace|out|detail)=).*/", r"\1", a) for a in ns3[1:])
    ns3_json = Path(str(ns3_out) + ".json")
    cmd_file = Path(str(ns3_out) + ".cmd")
    if args.reuse_ns3 and ns3_json.exists() and cmd_file.exists() and cmd_file.read_text() == ns3_key:
        print(f"[{topo}] ns-3: reusing {ns3_out} (same trace and arguments)", flush=True)
        ns3_wall = json.loads(ns3_json.read_text())["process_wall_s"]
    else:
        print(f"[{topo}] ns-3 ({'SACK on' if args.sack else 'SACK off'}) ...", flush=True)
        ns3_wall, r = run(ns3, "ns-3")
        st = json.loads(ns3_json.read_text())
        st["process_wall_s"] = ns3_wall
        ns3_json.write_text(json.dumps(st, indent=2))
        cmd_file.write_text(ns3_key)
    ns3_stats = json.loads(ns3_json.read_text())
    ns3_df = pd.read_csv(ns3_out)

    # Shoal
    shoal_dir = out / "shoal"
    if shoal_dir.exists():
        shutil.rmtree(shoal_dir)
    over = {"workload.trace": trace, "topology.link_delay": link_delay, "switch.marking.cutoff.k": k, "switch.pool_size": buffer,
            "transport.init_cwnd": init_cwnd, "transport.sack": "true" if args.sack else "false", "run.seed": args.seed}
    if topo == "dumbbell" and args.link_delay:
        over["topology.uplink_delay"] = args.link_delay
    print(f"[{topo}] Shoal ({args.repeat} run{'s' if args.repeat > 1 else ''}) ...", flush=True)
    # Shoal's whole process is ~0.3 s, so a busy moment on a shared machine moves it by
    # tens of percent: it runs `--repeat` times (same output each time) and the medians
    # count. ns-3's ~40 s run is timed once.
    shoal_walls, shoal_core_walls = [], []
    for _ in range(args.repeat):
        wall, _ = run(shoal + ["run", str(scenario), "--out", str(shoal_dir), "-q"] + sets(over), "shoal run")
        shoal_walls.append(wall)
        shoal_core_walls.append(json.loads((shoal_dir / "summary.json").read_text())["wall_time_s"])
    shoal_wall = statistics.median(shoal_walls)
    summary = json.loads((shoal_dir / "summary.json").read_text())
    flows = pd.read_parquet(shoal_dir / "flows.parquet")

    # (d) numbers
    m = tr_df[["id", "src", "dst", "bytes", "start_ns"]].merge(
        flows[["id", "fct_ns", "ideal_fct_ns", "retransmits", "timeouts"]].rename(
            columns={"fct_ns": "fct_shoal", "timeouts": "timeouts_shoal"}), on="id", how="left")
    m = m.merge(ns3_df.rename(columns={"fct_ns": "fct_ns3"}), on="id", how="left")
    detail = ns3_out.with_suffix(".detail.csv")
    if detail.exists():
        d = pd.read_csv(detail)[["id", "rto"]].rename(columns={"rto": "timeouts_ns3"})
        m = m.merge(d, on="id", how="left")
    m.to_csv(out / f"per_flow{suffix}.csv", index=False)
    b = m.bytes.to_numpy()
    s_stats = bucket_stats(m.fct_shoal.to_numpy(float), b)
    n_stats = bucket_stats(m.fct_ns3.to_numpy(float), b)
    both = m.dropna(subset=["fct_shoal", "fct_ns3"])
    flow_ratio = both.fct_shoal / both.fct_ns3
    buckets = {}
    for name in [x[0] for x in BUCKETS] + ["all"]:
        lo, hi = next(((lo, hi) for n, _, lo, hi in BUCKETS if n == name), (0, math.inf))
        sel = (both.bytes > lo) & (both.bytes <= hi)
        fr = flow_ratio[sel]
        buckets[name] = {
            "label": s_stats[name]["label"], "ns3": n_stats[name], "shoal": s_stats[name],
            "ratio_mean": ratio(s_stats[name]["mean_us"], n_stats[name]["mean_us"]),
            "ratio_median": ratio(s_stats[name]["median_us"], n_stats[name]["median_us"]),
            "ratio_p99": ratio(s_stats[name]["p99_us"], n_stats[name]["p99_us"]),
            "flow_median_ratio": float(fr.median()) if len(fr) else None,
            "flows_within_5pct": float(((fr - 1).abs() <= 0.05).mean()) if len(fr) else None,
        }
    shoal_core_wall = statistics.median(shoal_core_walls)
    ns3_core_wall = ns3_stats.get("wall_s")
    c = summary.get("counters", summary)
    result = {
        "topology": topo, "flows": args.flows, "load": args.load, "seed": args.seed, "cdf": args.cdf,
        "link_delay": str(link_delay), "k": str(k), "init_cwnd": init_cwnd, "sack": args.sack,
        "trace": str(trace),
        "buckets": buckets,
        "flow_median_ratio": float(flow_ratio.median()) if len(flow_ratio) else None,
        "unfinished": {"ns3": int(m.fct_ns3.isna().sum()), "shoal": int(m.fct_shoal.isna().sum())},
        "drops": {"ns3": {"switch": ns3_stats["switch_drops"], "nic": ns3_stats["nic_drops"],
                          "device_queue": ns3_stats["device_queue_drops"]},
                  "shoal": {"total": summary["packets"]["dropped"], **summary.get("drops", {})}},
        "ecn_marks": {"ns3": ns3_stats["ecn_marks"], "ns3_control_packets": ns3_stats.get("ecn_marks_control"),
                      "shoal": summary.get("ecn_marks")},
        "timeouts": {"ns3": ns3_stats.get("timeouts"), "shoal": summary.get("timeouts")},
        "wall_s": {"ns3": ns3_wall, "shoal": shoal_wall, "shoal_runs": shoal_walls, "ns3_sim_only": ns3_core_wall,
                   "shoal_sim_only": shoal_core_wall,
                   "speedup": ns3_wall / shoal_wall,
                   "speedup_sim_only": (ns3_core_wall / shoal_core_wall) if shoal_core_wall else None},
    }
    targets = {}
    for name in [x[0] for x in BUCKETS]:
        bk = buckets[name]
        if bk["ns3"]["finished"] == 0:
            continue
        targets[f"{name}_mean"] = bk["ratio_mean"] is not None and abs(bk["ratio_mean"] - 1) <= TARGET_MEAN
        targets[f"{name}_p99"] = bk["ratio_p99"] is not None and abs(bk["ratio_p99"] - 1) <= TARGET_P99
    targets["speedup"] = result["wall_s"]["speedup"] >= TARGET_SPEEDUP
    result["targets_met"] = targets

    # (e) plot, (f) JSON
    title = (f"{topo}: {args.flows} {args.cdf} flows, load {args.load}, K={k}, delay {link_delay}, "
             f"seed {args.seed}{', SACK on' if args.sack else ''}")
    result["plots"] = plot(m, out / f"fct_cdf{suffix}", title)
    js = out / f"comparison{suffix}.json"
    js.write_text(json.dumps(result, indent=2))
    print_report(result, js)
    if args.check and not all(targets.values()):
        return 3
    return 0


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def print_report(r: dict, js: Path) -> None:
    print()
    print(f"{r['topology']}: {r['flows']} flows, load {r['load']}, K={r['k']}, link delay {r['link_delay']}, "
          f"init_cwnd {r['init_cwnd']}, seed {r['seed']}, SACK {'on' if r['sack'] else 'off'}")
    hdr = (f"{'bucket':<12}{'n':>6} | {'ns-3 mean':>10}{'p50':>9}{'p99':>10} | {'Shoal mean':>10}{'p50':>9}"
           f"{'p99':>10} | {'mean×':>7}{'p50×':>7}{'p99×':>7}{'flow×':>7}")
    print(hdr)
    print("-" * len(hdr))
    for name, b in r["buckets"].items():
        n, s = b["ns3"], b["shoal"]
        print(f"{b['label']:<12}{n['count']:>6} | {fmt(n['mean_us']):>10}{fmt(n['median_us']):>9}{fmt(n['p99_us']):>10} | "
              f"{fmt(s['mean_us']):>10}{fmt(s['median_us']):>9}{fmt(s['p99_us']):>10} | "
              f"{fmt(b['ratio_mean'], '.3f'):>7}{fmt(b['ratio_median'], '.3f'):>7}{fmt(b['ratio_p99'], '.3f'):>7}"
              f"{fmt(b['flow_median_ratio'], '.3f'):>7}")
    print("(FCTs in us; × = Shoal / ns-3; flow× = median over flows of fct_shoal / fct_ns3)")
    d = r["drops"]
    print(f"drops: ns-3 switch {d['ns3']['switch']}, NIC {d['ns3']['nic']}, device queue {d['ns3']['device_queue']} | "
          f"Shoal {d['shoal'].get('total')} " + str({k: v for k, v in d['shoal'].items() if k != 'total' and v}))
    e = r["ecn_marks"]
    print(f"ECN marks: ns-3 {e['ns3']} (of which on control packets {e['ns3_control_packets']}) | Shoal {e['shoal']}")
    print(f"timeouts: ns-3 {r['timeouts']['ns3']} | Shoal {r['timeouts']['shoal']}; "
          f"unfinished: ns-3 {r['unfinished']['ns3']} | Shoal {r['unfinished']['shoal']}")
    w = r["wall_s"]
    runs = len(w.get("shoal_runs") or [1])
    median = f", median of {runs}" if runs > 1 else ""
    print(f"wall: ns-3 {w['ns3']:.2f} s, Shoal {w['shoal']:.2f} s (CLI process{median}) -> {w['speedup']:.0f}x; "
          f"simulation only: ns-3 {fmt(w['ns3_sim_only'], '.2f')} s, Shoal {fmt(w['shoal_sim_only'], '.3f')} s "
          f"-> {fmt(w['speedup_sim_only'], '.0f')}x")
    t = r["targets_met"]
    print("targets (mean ±10%, p99 ±20%, >=100x): " + ", ".join(f"{k} {'ok' if v else 'MISSED'}" for k, v in t.items()))
    print(f"written: {js}" + (f", {', '.join(r['plots'])}" if r["plots"] else ""))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("topology", choices=sorted(SCENARIOS))
    p.add_argument("--flows", type=int, default=2000)
    p.add_argument("--load", type=float, default=0.6,
                   help="star: load of the receivers' access links; dumbbell: A->B utilization")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cdf", default="websearch")
    p.add_argument("--k", help="ECN threshold (default: the scenario's, 720KB)")
    p.add_argument("--buffer", help="switch buffer per egress port, tail drop (default: the scenario's, 4MB)")
    p.add_argument("--link-delay", help="per-link one-way delay (default: the scenario's, 10us)")
    p.add_argument("--init-cwnd", type=int, help="initial window in packets, both simulators (default 20)")
    p.add_argument("--sack", action=argparse.BooleanOptionalAction, default=True,
                   help="SACK in both simulators (RFC 6675 recovery; the default); --no-sack: NewReno "
                   "recovery, outputs named *_nosack")
    p.add_argument("--stop", default="10s", help="ns-3 simulated stop time")
    p.add_argument("--repeat", type=int, default=5,
                   help="Shoal runs; the median wall time counts (default 5)")
    p.add_argument("--out", help="output directory (default validation/results/<topology>_<flows>_seed<seed>)")
    p.add_argument("--reuse-ns3", action="store_true",
                   help="reuse the ns-3 output in --out if it was produced by the same command")
    p.add_argument("--check", action="store_true", help="exit 3 when a target is missed")
    args = p.parse_args(argv)
    if args.flows < 1:
        p.error("--flows must be >= 1")
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    if not 0 < args.load < 1:
        p.error("--load must be in (0, 1)")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
