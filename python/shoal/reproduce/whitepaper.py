"""Custom analysis of the buffer white paper's experiments (buffer-requirements-whitepaper.md).

Every analysis reads each run's scenario, flows and samples from the store and adds
columns to the runs table; the theory side (BDP, w_e + h) comes from
:mod:`shoal.advise.formulas` and from :func:`sync_utilization`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from shoal._units import fmt_size
from shoal.reproduce._runs import StoredRun, join_columns, ok_runs
from shoal.reproduce._units import rate_bps as _rate
from shoal.reproduce._units import size_bytes as _size
from shoal.reproduce._units import time_s as _time_s

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = [
    "ANALYSES",
    "Path_",
    "burst",
    "clos",
    "jain",
    "mathis_rate",
    "long",
    "mixed",
    "sec2",
    "sec3",
    "sec4",
    "sync_utilization",
    "theory",
]

MICE_MAX_BYTES = 100_000  # the white paper's mice: 5 KB .. 100 KB


class Path_:
    """The bottleneck path of a dumbbell: host link, A-B link (the bottleneck), host link."""

    def __init__(self, scenario: dict[str, Any]) -> None:
        topo = scenario.get("topology", {})
        transport = scenario.get("transport", {})
        self.rate_bps = _rate(topo.get("uplink_rate", "100Gbps"))
        host_bps = _rate(topo.get("link_rate", "100Gbps"))
        d = _time_s(topo.get("link_delay", "1us"))
        ud = _time_s(topo.get("uplink_delay") or topo.get("link_delay", "1us"))
        wire = float(transport.get("mss", 1460)) + float(transport.get("header", 54))
        ack = float(transport.get("ack_size", 64))
        per_bit = 2 / host_bps + 1 / self.rate_bps
        #: base RTT: propagation both ways + serialization of a data packet and an ACK
        self.rtt_s = 2 * (2 * d + ud) + (wire + ack) * 8 * per_bit
        from shoal.advise.formulas import bdp

        self.bdp_bytes = float(bdp(rate=self.rate_bps, rtt=self.rtt_s).bdp)


def bottleneck_series(run: StoredRun) -> pd.DataFrame:
    """Samples of the bottleneck port (the port with the largest mean queue, all queues
    summed): time_ns, bytes, tx_bytes."""
    q = run.table("queues")
    if q is None:
        return pd.DataFrame(columns=["time_ns", "bytes", "tx_bytes"])
    per = q.groupby(["switch", "port", "time_ns"], as_index=False).agg(
        bytes=("bytes", "sum"), tx_bytes=("tx_bytes", "max")
    )
    busiest = per.groupby(["switch", "port"])["tx_bytes"].max()
    top = busiest[busiest >= 0.9 * busiest.max()].index  # ports that carried the traffic
    means = per.set_index(["switch", "port"]).loc[top].groupby(level=[0, 1])["bytes"].mean()
    sw, port = means.idxmax()
    s = per[(per["switch"] == sw) & (per["port"] == port)].sort_values("time_ns")
    return s[["time_ns", "bytes", "tx_bytes"]].reset_index(drop=True)


def utilization(
    series: pd.DataFrame, rate_bps: float, t0_ns: float = 0.0, t1_ns: float = math.inf
) -> float | None:
    """Mean utilization between t0 and t1: diff(tx_bytes) * 8 / diff(time) / rate."""
    s = series[(series["time_ns"] >= t0_ns) & (series["time_ns"] <= t1_ns)]
    if len(s) < 2:
        return None
    dt = float(s["time_ns"].iloc[-1] - s["time_ns"].iloc[0]) * 1e-9
    return float(s["tx_bytes"].iloc[-1] - s["tx_bytes"].iloc[0]) * 8 / dt / rate_bps


def utilization_over_time(series: pd.DataFrame, rate_bps: float, bin_ns: float) -> pd.Series:
    s = series.copy()
    s["bin"] = (s["time_ns"] // bin_ns) * bin_ns
    g = s.groupby("bin")["tx_bytes"].max()
    return (g.diff() * 8 / (bin_ns * 1e-9) / rate_bps).dropna()


# ---------------------------------------------------------------- theory


def sync_utilization(buffer_bytes: float, bdp_bytes: float) -> float:
    """Utilization of n synchronized AIMD (NewReno) flows through one tail-drop buffer B.

    The aggregate window W grows linearly, one MSS per flow per RTT, from (BDP + B)/2 to
    BDP + B and halves (white paper section 2.1/2.3). While W < BDP the link runs at
    W/BDP and an RTT lasts the base RTT; while W > BDP the link is full and an RTT
    lasts W/C. Time-weighted mean: 1 when B >= BDP.
    """
    w_max = (bdp_bytes + buffer_bytes) / bdp_bytes  # in BDPs
    lo = w_max / 2
    if lo >= 1:
        return 1.0
    t_under = 1 - lo  # time (in RTT-increments) with W < BDP
    u_under = (lo + 1) / 2  # mean utilization while W rises from lo to 1
    t_full = (w_max**2 - 1) / 2  # integral of W dW from 1 to w_max (RTT grows with W)
    return (t_under * u_under + t_full) / (t_under + t_full)


def slow_start_peak(h_bytes: float, bdp_bytes: float) -> float:
    """The white paper's section 4.3 buffer bound for one ECN flow: the peak queue is
    w_e + h and w_e <= h + BDP (in flight = queue + pipe), so the peak is at most
    2h + BDP (3 BDP for h = 1 BDP). Equality needs a full pipe when the queue first
    reaches h; :func:`slow_start_window` measures w_e instead of assuming it."""
    w_e = h_bytes + bdp_bytes
    return w_e + h_bytes


def _bottleneck_queue(
    counters: dict[str, Any], where: tuple[int, int, int] | None = None
) -> dict[str, Any]:
    """The counters' entry of the queue `where` (switch, port, queue), or of switch 0's
    queue with the largest peak (a dumbbell's A->B queue)."""
    queues: list[dict[str, Any]] = counters.get("queues", [])
    if where is not None:
        for q in queues:
            if (q["switch"], q["port"], q["queue"]) == where:
                return q
        return {"max": 0, "now": 0}
    return max(
        (q for q in queues if q["switch"] == 0),
        key=lambda q: q["max"],
        default={"max": 0, "now": 0},
    )


def slow_start_window(scenario: dict[str, Any]) -> dict[str, Any] | None:
    """Measures the white paper's section 4.3 quantities for a single-flow scenario.

    The scenario (a resolved one, e.g. a run's ``scenario.json``) is simulated again,
    stepped from Python (runs are deterministic): t0 is the first picosecond at which
    the bottleneck queue (switch 0's busiest queue) holds at least K = switch.marking.cutoff.k
    bytes, found by bisection on fresh simulations; at t0 the window is measured as
    the sender's data in flight, w_e = data packets sent - ACKs received (ACKs received =
    packets delivered to hosts - data packets delivered to the receiver; one ACK per
    data packet). In slow start the sender is window-limited, so this is its cwnd.
    Sizes are in packets of mss + header bytes; h = K / packet size. Returns None when
    the flow lost a packet (w_e is then not a window) or the queue never reaches K.

    Keys: h_pkts, w_e_pkts, q0_pkts (queue at t0), peak_pkts (the queue's maximum over
    the run), t0_ns, t_peak_ns (first time the queue holds the peak).
    """
    from shoal import _core

    text = json.dumps(scenario)
    transport = scenario.get("transport", {})
    mss = int(transport.get("mss", 1460))
    packet = float(mss + int(transport.get("header", 54)))
    k = _size(scenario.get("switch", {}).get("marking", {}).get("cutoff", {}).get("k", 0))

    end = _core.Simulation(text)
    end.run(2**63)
    counters = end.counters()
    last = _bottleneck_queue(counters)
    if "switch" not in last or k <= 0:
        return None
    where = (last["switch"], last["port"], last["queue"])
    peak = float(last["max"])
    flows = end.flows()
    if peak < k or counters["packets"]["dropped"] or int(flows["retransmits"].sum()):
        return None

    def at(t_ps: int) -> Any:
        sim = _core.Simulation(text)
        sim.run(t_ps)
        return sim

    def first(threshold: float, lo: int, hi: int) -> int:
        """The first time (ps) the queue's maximum reaches `threshold` (hi reaches it)."""
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _bottleneck_queue(at(mid).counters(), where)["max"] >= threshold:
                hi = mid
            else:
                lo = mid
        return hi

    stop = int(counters["duration_ps"])
    t0 = first(k, 0, stop)
    sim = at(t0)
    c = sim.counters()
    received = int(sim.flows()["delivered_bytes"].sum()) // mss
    acks = int(c["packets"]["delivered"]) - received
    w_e = int(c["data_packets_sent"]) - acks
    t_peak = first(peak, t0 - 1, stop)
    return {
        "h_pkts": k / packet,
        "w_e_pkts": float(w_e),
        "q0_pkts": _bottleneck_queue(c, where)["now"] / packet,
        "peak_pkts": peak / packet,
        "t0_ns": t0 / 1e3,
        "t_peak_ns": t_peak / 1e3,
    }


# ---------------------------------------------------------------- analyses


def sec2(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """util_avg (after a 10% warm-up), util_theory (synchronized sawtooth), bdp_bytes,
    buffer_bdp; draws utilization over time (figures/util_time.png)."""
    extra: dict[Any, dict[str, Any]] = {}
    curves: dict[str, pd.Series] = {}
    for i, row, run, sc in ok_runs(runs, store):
        p = Path_(sc)
        buffer = _size(sc.get("switch", {}).get("pool_size", 0))
        stop_ns = _time_s(sc.get("run", {}).get("stop_time", 0)) * 1e9
        series = bottleneck_series(run)
        extra[i] = {
            "bdp_bytes": p.bdp_bytes,
            "base_rtt_us": p.rtt_s * 1e6,
            "buffer_bdp": buffer / p.bdp_bytes,
            "util_avg": utilization(series, p.rate_bps, 0.1 * stop_ns),
            "util_theory": sync_utilization(buffer, p.bdp_bytes),
            "queue_mean_bytes": float(series["bytes"].mean()) if len(series) else None,
        }
        if "seed" not in runs or row.get("seed") == runs["seed"].min():
            curves[str(row["scheme"])] = utilization_over_time(series, p.rate_bps, 1e6)
    _plot_curves(curves, store / "figures" / "util_time", "bottleneck utilization (1 ms bins)")
    return join_columns(runs, extra)


def sec3(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Per class (mice <= 100 KB, elephants above): mean FCT, timeouts; goodput over the
    whole run and the paper's throughput loss = 1 - usage / load; the bottleneck's
    utilization while flows arrive and the idle tail after the last arrival (Fig. 3-5);
    each class's FCT over the same load's through a 20 MB buffer (Figs. 3-6/3-7)."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, row, run, sc in ok_runs(runs, store):
        p = Path_(sc)
        wl = sc.get("workload", {})
        scheme = str(row["scheme"])
        # c_<buffer>_rto<ms>_n<n> vary the number of flows (Fig. 3-14): kept out of the
        # buffer sweep, whose "largest buffer" rows must all have ~1,000 flows
        part = (
            "load" if not scheme.startswith("c_") else "flows" if "_n" in scheme else "concurrent"
        )
        flows = run.flows()
        mice = flows[flows["bytes"] <= MICE_MAX_BYTES]
        eleph = flows[flows["bytes"] > MICE_MAX_BYTES]
        first, last = flows["start_ns"].min(), flows["start_ns"].max()
        span_s = (flows["finish_ns"].max() - first) * 1e-9
        usage = flows["delivered_bytes"].sum() * 8 / span_s / p.rate_bps if span_s > 0 else None
        buffer = _size(sc.get("switch", {}).get("pool_size", 0))
        rto_min = _time_s(sc.get("transport", {}).get("rto_min", "5ms"))
        mice_timeouts = int(mice["timeouts"].sum())
        values: dict[str, Any] = {
            "part": part,
            "class": "mice" if eleph.empty else ("elephants" if mice.empty else "mixed"),
            "load": float(wl.get("load", 0)) if part == "load" else None,
            "rto_min_ms": rto_min * 1e3,
            "rto_init_ms": _time_s(sc.get("transport", {}).get("rto_init", "5ms")) * 1e3,
            "buffer_bytes": buffer,
            "buffer_label": fmt_size(buffer),
            "mice_mean_fct_ns": mice["fct_ns"].mean() if len(mice) else None,
            "mice_p99_fct_ns": mice["fct_ns"].quantile(0.99) if len(mice) else None,
            "elephant_mean_fct_ns": eleph["fct_ns"].mean() if len(eleph) else None,
            "mice_timeouts": mice_timeouts,
            "elephant_timeouts": int(eleph["timeouts"].sum()),
            # Each mouse timeout idles that mouse for at least RTOmin: a floor under the
            # mice mean FCT that no queueing saving can undo (Fig. 3-16).
            "mice_rto_floor_ns": mice_timeouts / len(mice) * rto_min * 1e9 if len(mice) else None,
            "elephant_rto_floor_ns": (
                int(eleph["timeouts"].sum()) / len(eleph) * rto_min * 1e9 if len(eleph) else None
            ),
            "usage": usage,
            "completion_ms": span_s * 1e3,
            "concurrent_flows": len(flows),
        }
        if part == "load" and usage is not None:
            load = float(wl.get("load", 0))
            loss = 1 - usage / load
            values["throughput_loss"] = loss
            lr = float(row.get("loss_rate") or 0)
            values["loss_sensitivity"] = loss / lr if lr > 0 else None
            # While flows keep arriving the link carries the load; after the last arrival
            # it idles until the last flow ends. With every byte delivered, the paper's
            # throughput loss is exactly the share of the span spent in that tail.
            values["tail_ms"] = (flows["finish_ns"].max() - last) * 1e-6
            values["tail_share"] = 1 - (last - first) * 1e-9 / span_s if span_s > 0 else None
            values["tail_gap"] = loss - values["tail_share"] if span_s > 0 else None
            series = bottleneck_series(run)
            u = utilization(series, p.rate_bps, first, last) if len(series) else None
            values["util_arrivals_over_load"] = u / load if u is not None and load else None
        extra[i] = values
    out = join_columns(runs, extra)
    return _fct_growth(out)


def _fct_growth(runs: pd.DataFrame) -> pd.DataFrame:
    """fct_growth: a load run's class mean FCT over that of the same class, load and seed
    through the largest buffer (no loss there): the growth of the FCT that the loss
    causes (Figs. 3-6/3-7)."""
    if "part" not in runs:
        return runs
    load = runs[(runs["part"] == "load") & runs["load"].notna()]
    growth: dict[Any, dict[str, Any]] = {}
    for (_cls, _load, _seed), g in load.groupby(["class", "load", "seed"]):
        ref = g[g["buffer_bytes"] == g["buffer_bytes"].max()]
        col = "mice_mean_fct_ns" if _cls == "mice" else "elephant_mean_fct_ns"
        if ref.empty or len(g) < 2:
            continue
        base = float(ref[col].iloc[0])
        for i, r in g.iterrows():
            growth[i] = {"fct_growth": float(r[col]) / base if base > 0 else None}
    return join_columns(runs, growth)


def sec4(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Incast runs: util_avg (after 1 ms), util_incast (from the incast on), rtt_mean_ns,
    mice (incast) mean FCT and QCT; single-flow runs: peak queue vs w_e + h."""
    extra: dict[Any, dict[str, Any]] = {}
    curves: dict[str, pd.Series] = {}
    for i, row, run, sc in ok_runs(runs, store):
        p = Path_(sc)
        h = _size(sc.get("switch", {}).get("marking", {}).get("cutoff", {}).get("k", 0))
        flows = run.flows()
        series = bottleneck_series(run)
        values: dict[str, Any] = {"bdp_bytes": p.bdp_bytes, "k_bdp": h / p.bdp_bytes}
        senders = sc.get("workload", {}).get("senders")
        single = isinstance(senders, list) and len(senders) == 1
        if single:
            values["part"] = "single"
            m = slow_start_window(sc)
            if m is not None:
                tr = sc.get("transport", {})
                packet = float(tr.get("mss", 1460)) + float(tr.get("header", 54))
                bdp_pkts = p.bdp_bytes / packet
                theory = m["w_e_pkts"] + m["h_pkts"]  # section 4.3: peak = w_e + h
                values.update(
                    m,
                    bdp_pkts=bdp_pkts,
                    peak_theory_pkts=theory,
                    peak_error_pkts=m["peak_pkts"] - theory,
                    peak_abs_error_pkts=abs(m["peak_pkts"] - theory),
                    peak_over_theory=m["peak_pkts"] / theory,
                    # the paper's w_e <= h + BDP; = 1 when the pipe is full at t0
                    w_e_over_h_bdp=m["w_e_pkts"] / (m["h_pkts"] + bdp_pkts),
                    peak_bdp=m["peak_pkts"] / bdp_pkts,
                    # the paper's buffer bound w_e + h <= 2h + BDP (3 BDP for h = 1 BDP)
                    peak_over_bound=m["peak_pkts"] * packet / slow_start_peak(h, p.bdp_bytes),
                )
        else:
            extras = sc.get("workload", {}).get("extra") or [{}]
            t_incast = _time_s(extras[0].get("start", "0s")) * 1e9
            mice = flows[flows["query"].fillna(-1) >= 0]  # the incast (query) flows
            q = mice.groupby("query").agg(start=("start_ns", "min"), finish=("finish_ns", "max"))
            values.update(
                part="incast",
                util_avg=utilization(series, p.rate_bps, 1e6),
                util_incast=utilization(series, p.rate_bps, t_incast),
                rtt_mean_ns=(p.rtt_s + series["bytes"].mean() * 8 / p.rate_bps) * 1e9,
                mice_mean_fct_ns=mice["fct_ns"].mean(),
                qct_mean_ns=float((q["finish"] - q["start"]).mean()),
                mice_unfinished=int((~mice["finished"]).sum()),
            )
            if "seed" not in runs or row.get("seed") == runs["seed"].min():
                curves[str(row["scheme"])] = utilization_over_time(series, p.rate_bps, 5e5)
        extra[i] = values
    _plot_curves(curves, store / "figures" / "util_time", "bottleneck utilization (0.5 ms bins)")
    return join_columns(runs, extra)


def _scenario(store: Path, row: pd.Series) -> dict[str, Any]:
    from shoal.store import Store

    return Store(store).scenario(row["key"])


def mixed(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Cross-run columns of the mixed-traffic runs (per load and seed):

    - gain_growth (on td_125KB at the highest load): the all-flows mean FCT of td_125KB
      over td_20MB's at the highest load, over the same ratio at the lowest.
    - ecn_queue_need (on td_20MB): the smallest peak queue among the ecnk_* runs whose
      all-flows mean FCT is within 5% of td_20MB's, over td_20MB's peak queue (Fig. 4-3:
      what buffer ECN needs for the large tail-drop buffer's FCT). None when no
      threshold reaches that FCT.
    """
    ok = runs[runs["status"] == "ok"] if "status" in runs else runs
    load = "workload.load"
    if ok.empty or load not in ok:
        return runs
    extra: dict[Any, dict[str, Any]] = {}
    for _key, g in ok.groupby([load, "seed"]):
        by = g.set_index("scheme")
        if "td_20MB" not in by.index:
            continue
        ref = by.loc["td_20MB"]
        ecn = g[g["scheme"].astype(str).str.startswith("ecnk_")]
        good = ecn[ecn["all_mean_fct_ns"] <= 1.05 * float(ref["all_mean_fct_ns"])]
        need = (
            float(good["buffer_max_bytes"].min()) / float(ref["buffer_max_bytes"])
            if len(good) and float(ref["buffer_max_bytes"]) > 0
            else None
        )
        extra[g.index[g["scheme"] == "td_20MB"][0]] = {"ecn_queue_need": need}
        if "td_125KB" in by.index:
            # Poisson arrivals see the time-averaged queue (PASTA), so a mouse in the
            # large buffer waits at least its mean queueing delay: the small buffer's
            # mice FCT over that delay bounds the large buffer's mice gain.
            delay = (
                float(ref["buffer_mean_bytes"]) * 8 / float(Path_(_scenario(store, ref)).rate_bps)
            )
            i = g.index[g["scheme"] == "td_125KB"][0]
            extra[i] = {
                "mice_gain_bound": float(by.loc["td_125KB", "small_mean_fct_ns"]) / (delay * 1e9)
            }
    lo, hi = ok[load].min(), ok[load].max()
    for _seed, g in ok.groupby("seed"):

        def gain(at: float, g: pd.DataFrame = g) -> float | None:
            rows = g[g[load] == at].set_index("scheme")["all_mean_fct_ns"]
            if "td_125KB" not in rows or "td_20MB" not in rows:
                return None
            return float(rows["td_125KB"]) / float(rows["td_20MB"])

        top, bottom = gain(hi), gain(lo)
        if top is not None and bottom and hi > lo:
            i = g.index[(g["scheme"] == "td_125KB") & (g[load] == hi)][0]
            extra.setdefault(i, {})["gain_growth"] = top / bottom
    return join_columns(runs, extra)


def jain(values: Any) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one
    flow has everything."""
    x = pd.Series(values, dtype=float)
    square = float((x**2).sum())
    return float(x.sum() ** 2 / (len(x) * square)) if len(x) and square > 0 else None


def long(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Long-lived flows: util_avg (after a 10% warm-up), throughput_loss = 1 - util_avg,
    theory_loss = 1 - sync_utilization, jain (Jain's index of the flows' delivered
    bytes), flows_n."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, row, run, sc in ok_runs(runs, store):
        p = Path_(sc)
        buffer = _size(sc.get("switch", {}).get("pool_size", 0))
        stop_ns = _time_s(sc.get("run", {}).get("stop_time", 0)) * 1e9
        flows = run.flows()
        util = utilization(bottleneck_series(run), p.rate_bps, 0.1 * stop_ns)
        extra[i] = {
            "part": "fair" if str(row["scheme"]).startswith("fair") else "flows",
            "flows_n": len(flows),
            "buffer_bdp": buffer / p.bdp_bytes,
            "util_avg": util,
            "throughput_loss": None if util is None else 1 - util,
            "theory_loss": 1 - sync_utilization(buffer, p.bdp_bytes),
            "util_theory": sync_utilization(buffer, p.bdp_bytes),
            "jain": jain(flows["delivered_bytes"]),
        }
    return join_columns(runs, extra)


def _retransmit_share(flows: pd.DataFrame, packets: pd.Series, sel: pd.Series) -> float | None:
    sent = float(packets[sel].sum())
    return float(flows.loc[sel, "retransmits"].sum()) / sent if sent else None


def burst(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Concurrent bursts: per class, retransmitted over first-sent packets (mice_loss,
    elephant_loss); per service (scheme) and seed: loss_monotone (the share of steps up
    the buffer sweep where loss_rate does not rise), buffer_need (the smallest buffer
    whose mice mean FCT is within 10% of the largest buffer's) and need_ratio (that over
    s10's, same seed)."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, row, run, sc in ok_runs(runs, store):
        mss = float(sc.get("transport", {}).get("mss", 1460))
        flows = run.flows()
        packets = (flows["bytes"] / mss).apply(math.ceil)
        mice = flows["bytes"] <= MICE_MAX_BYTES

        buffer = _size(sc.get("switch", {}).get("pool_size", 0))
        wire = mss + float(sc.get("transport", {}).get("header", 54))
        dropped = float(row["packets_dropped"])
        extra[i] = {
            "buffer_bytes": buffer,
            "buffer_label": fmt_size(buffer),
            # Slow-start overshoot: once the burst outgrows the first rounds, the round
            # that overflows the queue arrives at twice the drain rate and loses about
            # as much as the queue held, so drops grow with the buffer.
            "dropped_over_buffer": dropped * wire / buffer if buffer else None,
            "mice_loss": _retransmit_share(flows, packets, mice),
            "elephant_loss": _retransmit_share(flows, packets, ~mice),
            "concurrent_flows": len(flows),
        }
    out = join_columns(runs, extra)
    if "buffer_bytes" not in out:
        return out
    ok = out[out["status"] == "ok"]
    need: dict[Any, dict[str, Any]] = {}
    base: dict[Any, float] = {}
    for (scheme, seed), g in ok.groupby(["scheme", "seed"]):
        g = g.sort_values("buffer_bytes")
        fct = g["small_mean_fct_ns"].to_numpy(dtype=float)
        steps = g["loss_rate"].diff().dropna()
        fits = g[fct <= 1.1 * fct[-1]]
        value = float(fits["buffer_bytes"].iloc[0]) if len(fits) else None
        for i in g.index:
            need[i] = {
                "buffer_need": value,
                "loss_monotone": float((steps <= 0).mean()) if len(steps) else None,
            }
        if scheme == "s10" and value:
            base[seed] = value
    for i, values in need.items():
        ref = base.get(ok.loc[i, "seed"])
        values["need_ratio"] = (
            values["buffer_need"] / ref if ref and values["buffer_need"] else None
        )
    return join_columns(out, need)


def clos(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Leaf-spine: leaf_queue / spine_queue (the largest time-averaged queue of a leaf /
    spine port after 2 ms; switches 0..leaves-1 are leaves), their ratios, receivers_n,
    and per seed crossover_n (the smallest n whose spine queue exceeds its leaf queue)."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, _row, run, sc in ok_runs(runs, store):
        leaves = int(sc.get("topology", {}).get("leaves", 0))
        q = run.table("queues")
        if q is None:
            raise FileNotFoundError(f"run {run.key} has no queues.parquet: run.sample_interval")
        q = q[q["time_ns"] >= 2e6]
        mean = q.groupby(["switch", "port"])["bytes"].mean()
        is_leaf = mean.index.get_level_values("switch") < leaves
        leaf = float(mean[is_leaf].max()) if is_leaf.any() else 0.0
        spine = float(mean[~is_leaf].max()) if (~is_leaf).any() else 0.0
        flows = run.flows()
        extra[i] = {
            "receivers_n": int(flows["dst"].nunique()),
            "leaf_queue": leaf,
            "spine_queue": spine,
            "spine_over_leaf": spine / leaf if leaf > 0 else math.inf,
            "leaf_over_spine": leaf / spine if spine > 0 else math.inf,
            "spine_share": spine / (spine + leaf) if spine + leaf > 0 else None,
        }
    out = join_columns(runs, extra)
    if "receivers_n" not in out:
        return out
    cross: dict[Any, dict[str, Any]] = {}
    for _seed, g in out[out["status"] == "ok"].groupby("seed"):
        over = g[g["spine_queue"] > g["leaf_queue"]]["receivers_n"]
        n = float(over.min()) if len(over) else None
        cross.update({i: {"crossover_n": n} for i in g.index})
    return join_columns(out, cross)


#: sec3's dumbbell (hosts 40 Gbps, bottleneck 10 Gbps, 1 + 47 + 1 us): base RTT ~100 us.
SEC3_PATH = {
    "topology": {
        "link_rate": "40Gbps",
        "uplink_rate": "10Gbps",
        "link_delay": "1us",
        "uplink_delay": "47us",
    },
    "transport": {"mss": 1460, "header": 54, "ack_size": 64},
}


def mathis_rate(loss: float, rtt_s: float, mss: float = 1460) -> float:
    """The Mathis et al. (1997) steady-state rate of one Reno flow with independent
    losses at rate ``loss``: MSS / RTT x sqrt(3/2) / sqrt(loss), in bits per second."""
    if not 0 < loss < 1 or rtt_s <= 0:
        raise ValueError(f"need 0 < loss < 1 and rtt > 0, got loss={loss}, rtt={rtt_s}")
    return mss * 8 / rtt_s * math.sqrt(1.5) / math.sqrt(loss)


def theory(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Analytic rows on sec3's path: one NewReno flow offered a share of the link with
    0.2% independent loss, its Mathis rate and the paper's throughput loss."""
    p = Path_(SEC3_PATH)
    rows = []
    for load in (0.5, 0.9):
        rate = mathis_rate(0.002, p.rtt_s, float(SEC3_PATH["transport"]["mss"]))
        rows.append(
            {
                "scheme": f"mathis_{round(load * 100)}",
                "status": "ok",
                "load": load,
                "rtt_us": p.rtt_s * 1e6,
                "rate_gbps": rate / 1e9,
                "throughput_loss": max(0.0, 1 - rate / (load * p.rate_bps)),
            }
        )
    return pd.DataFrame(rows)


def _plot_curves(curves: dict[str, pd.Series], stem: Path, ylabel: str) -> None:
    if not curves:
        return
    try:
        import matplotlib.pyplot as plt

        from shoal import plot
    except ImportError:  # plotting is optional for the numbers
        return
    with plot._style():
        fig = plot._figure(4.2, 3.0)  # room for the long y label
        ax = fig.subplots()
        for name, s in curves.items():
            ax.plot(s.index / 1e6, s.to_numpy(), label=name, linewidth=1)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, 1.05)
        ax.legend(frameon=False, fontsize="small")
    plot.save(fig, stem)
    plt.close(fig)


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "whitepaper.sec2": sec2,
    "whitepaper.sec3": sec3,
    "whitepaper.sec4": sec4,
    "whitepaper.mixed": mixed,
    "whitepaper.long": long,
    "whitepaper.burst": burst,
    "whitepaper.clos": clos,
    "whitepaper.theory": theory,
}
