"""Analyses of the RDMA experiments (``rdma/burst``, ``rdma/workload``), which run
ns3-datacenter's own experiments so that its numbers (validation/README.md) can be read
beside Shoal's."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from shoal.analysis import bucket_stats
from shoal.reproduce._runs import StoredRun, join_columns, ok_runs
from shoal.reproduce._units import rate_bps, time_s

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = [
    "ANALYSES",
    "FIGURES",
    "bottleneck_series",
    "n3dc_ideal_fct_ns",
    "read_topology",
    "reference_slowdown",
    "burst",
    "burst_figure",
    "burst_metrics",
    "windowed_throughput_gbps",
    "slowdown_figure",
    "slowdown_percentiles",
]

#: The windows of the burst's numbers, from the burst's start, in ns: the lone connection
#: before it; the burst itself (the reference's plot-burst.py shows 0.1495-0.154 s); and
#: after it, from 5 ms on, once the queue's first swings are over.
ALONE_NS = (-10e6, 0.0)
BURST_NS = (0.0, 4e6)
AFTER_FROM_NS = 5e6


def bottleneck_series(samples: pd.DataFrame | None) -> pd.DataFrame:
    """The switch port that sent the most bytes, from a run's queue samples
    (``queues.parquet``): ``time_ns``, ``bytes`` (all its queues), ``tx_bytes`` (sent
    since the start) and ``throughput_gbps`` (sent since the previous sample). Empty when
    the run sampled no queue."""
    if samples is None or samples.empty:
        return pd.DataFrame(columns=["time_ns", "bytes", "tx_bytes", "throughput_gbps"])
    sent = samples.groupby(["switch", "port"])["tx_bytes"].max()
    switch, port = sent.idxmax()
    at = samples[(samples["switch"] == switch) & (samples["port"] == port)]
    series = at.groupby("time_ns").agg(bytes=("bytes", "sum"), tx_bytes=("tx_bytes", "max"))
    series = series.reset_index()
    gaps = series["time_ns"].diff()
    series["throughput_gbps"] = series["tx_bytes"].diff() * 8 / gaps
    return series


def burst_metrics(series: pd.DataFrame, burst_ns: float) -> dict[str, float | None]:
    """The burst's numbers from a bottleneck series (``time_ns``; ``bytes`` queued then;
    ``throughput_gbps`` over the interval before), for a burst starting at ``burst_ns``.
    A sample counts in a window (lo, hi] when the interval it ends does. The first peak
    is the queue's highest from the burst until the queue first empties again."""
    s = series.assign(t=series["time_ns"] - burst_ns)

    def window(lo: float, hi: float = np.inf) -> pd.DataFrame:
        return s[(s["t"] > lo) & (s["t"] <= hi)]

    def mean(values: pd.Series) -> float | None:
        values = values.dropna()
        return float(values.mean()) if len(values) else None

    def peak(frame: pd.DataFrame) -> float | None:
        return float(frame["bytes"].max()) if len(frame) else None

    alone, burst, after = window(*ALONE_NS), window(*BURST_NS), window(AFTER_FROM_NS)
    from_burst = window(0.0)
    empty = from_burst[from_burst["bytes"] == 0]
    first = from_burst if empty.empty else from_burst[from_burst["t"] <= empty["t"].iloc[0]]
    return {
        "single_flow_gbps": mean(alone["throughput_gbps"]),
        "burst_first_peak_queue_bytes": peak(first),
        "burst_first_peak_time_ns": float(first["time_ns"][first["bytes"].idxmax()])
        if len(first)
        else None,
        "burst_peak_queue_bytes": peak(burst),
        "burst_mean_queue_bytes": mean(burst["bytes"]),
        "burst_throughput_gbps": mean(burst["throughput_gbps"]),
        "after_burst_throughput_gbps": mean(after["throughput_gbps"]),
        "after_burst_mean_queue_bytes": mean(after["bytes"]),
    }


def burst(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Adds :func:`burst_metrics`'s columns: the burst starts when the last flows do."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, _, run, _ in ok_runs(runs, store):
        extra[i] = burst_metrics(bottleneck_series(run.table("queues")), _burst_start(run))
    return join_columns(runs, extra)


def _burst_start(run: StoredRun) -> float:
    flows = run.flows(["start_ns"])
    return float(flows["start_ns"].max())


#: The congestion controls' names in figures, by the experiments' scheme keys.
SCHEME_NAMES = {
    "dcqcn": "DCQCN",
    "dcqcn_win": "DCQCN + window",
    "timely": "TIMELY",
    "dctcp": "DCTCP",
    "theta_powertcp": "θ-PowerTCP",
    "hpcc": "HPCC",
    "powertcp": "PowerTCP",
}

#: The window of the throughput a burst figure draws: at one sample every 6.96 us, a
#: 25 Gbps link sends 20 or 21 packets a sample, and the raw rate swings by 5% from one
#: sample to the next (a solid band at the figure's scale).
THROUGHPUT_WINDOW_NS = 50e3


def windowed_throughput_gbps(series: pd.DataFrame, window_ns: float) -> pd.Series:
    """The rate a series (``time_ns``, ``tx_bytes``) sent at over the last ``window_ns``
    up to each sample (over the samples there are, at the start)."""
    t = series["time_ns"].to_numpy(dtype=float)
    sent = series["tx_bytes"].to_numpy(dtype=float)
    start = np.searchsorted(t, t - window_ns, side="left")
    span = t - t[start]
    with np.errstate(divide="ignore", invalid="ignore"):
        gbps = np.where(span > 0, (sent - sent[start]) * 8 / span, np.nan)
    return pd.Series(gbps, index=series.index)


def burst_figure(
    runs: pd.DataFrame,
    store: Path,
    *,
    title: str | None = None,
    names: dict[str, str] | None = None,
) -> Any:
    """Queue and throughput (a 50 us mean, :data:`THROUGHPUT_WINDOW_NS`) at the
    bottleneck from 0.5 ms before the burst to the end of its window (``BURST_NS``), one
    panel per scheme (its first run, titled by ``names``, default
    :data:`SCHEME_NAMES`), four to a row; every panel has the same scales, so that the
    queues compare at a glance."""
    from shoal import plot

    names = {**SCHEME_NAMES, **(names or {})}
    curves: dict[str, tuple[pd.DataFrame, float]] = {}
    for _, row, run, _ in ok_runs(runs, store):
        scheme = str(row.get("scheme", ""))
        if scheme not in curves:
            series, burst_ns = bottleneck_series(run.table("queues")), _burst_start(run)
            series = series.assign(
                windowed_gbps=windowed_throughput_gbps(series, THROUGHPUT_WINDOW_NS)
            )
            shown = series[
                (series["time_ns"] >= burst_ns - 0.5e6)
                & (series["time_ns"] <= burst_ns + BURST_NS[1])
            ]
            curves[scheme] = (shown, burst_ns)
    peak_kb = max(
        [float(shown["bytes"].max()) / 1e3 for shown, _ in curves.values() if len(shown)] or [1.0]
    )
    peak_gbps = max(
        [float(shown["windowed_gbps"].max()) for shown, _ in curves.values() if len(shown)] or [1.0]
    )
    columns = min(max(len(curves), 1), 4)
    rows = -(-max(len(curves), 1) // columns)
    with plot._style():
        fig = plot._figure(3.4 * columns, 2.6 * rows)
        axes = fig.subplots(rows, columns, squeeze=False).ravel()
        for ax in axes[len(curves) :]:
            ax.set_axis_off()
        for ax, (name, (shown, burst_ns)) in zip(axes, curves.items(), strict=False):
            ms = (shown["time_ns"] - burst_ns) / 1e6
            ax.plot(ms, shown["windowed_gbps"], color="tab:blue", linewidth=1)
            ax.set_ylabel("throughput (Gbps, 50 µs mean)", color="tab:blue")
            ax.set_xlabel("time since the burst (ms)")
            ax.set_ylim(0, peak_gbps * 1.05)
            queue = ax.twinx()
            queue.plot(ms, shown["bytes"] / 1e3, color="tab:red", linewidth=1)
            queue.set_ylabel("queue (KB)", color="tab:red")
            queue.set_ylim(0, peak_kb * 1.05)
            ax.set_title(names.get(name, name))
        if title:
            fig.suptitle(title)
    return fig


#: ns3-datacenter's payload and header bytes per packet, which its ideal FCT counts:
#: headers without INT (DCQCN sends none), PPP 14 + IPv4 20 + UDP 8 + SeqTs 6 = 48 B per
#: packet of at most 1,000 B of payload (powertcp-evaluation-burst.cc:181;
#: custom-header.cc:339-341).
N3DC_PAYLOAD = 1000
N3DC_HEADER = 48


def read_topology(path: Path) -> tuple[int, dict[int, list[tuple[int, int, int]]]]:
    """ns3-datacenter's topology file: the host count (hosts are the nodes that are not
    switches, numbered first) and each node's links as (neighbour, rate bit/s, delay ns)."""
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    nodes, switches = int(lines[0][0]), int(lines[0][1])
    links: dict[int, list[tuple[int, int, int]]] = {n: [] for n in range(nodes)}
    for fields in lines[2:]:
        a, b = int(fields[0]), int(fields[1])
        rate = int(rate_bps(fields[2]))
        delay = round(time_s(fields[3]) * 1e9)
        links[a].append((b, rate, delay))
        links[b].append((a, rate, delay))
    return nodes - switches, links


def n3dc_ideal_fct_ns(
    trace: Any, hosts: int, links: dict[int, list[tuple[int, int, int]]]
) -> list[int]:
    """The reference's ``standalone_fct`` of each flow of ``trace`` (ns): from a breadth-
    first walk over the switches, as its ``CalculateRoute`` does
    (powertcp-evaluation-burst.cc, ``CalculateRoute``): the one-way delay, the
    serialization of 1,000 B at every hop (integer ns), and the slowest rate of a shortest
    path; ideal = 2 x delay + that serialization + (bytes + 48 B per packet) x 8 / rate."""
    paths: dict[int, dict[int, tuple[int, int, int]]] = {}
    for dst in sorted(set(trace["dst"])):
        seen = {dst: (0, 0, 1 << 64)}
        queue = deque([dst])
        while queue:
            now = queue.popleft()
            delay, tx, rate = seen[now]
            for nxt, link_rate, link_delay in links[now]:
                if nxt in seen:
                    continue
                seen[nxt] = (
                    delay + link_delay,
                    tx + N3DC_PAYLOAD * 8 * 10**9 // link_rate,
                    min(rate, link_rate),
                )
                if nxt >= hosts:  # only switches carry traffic on
                    queue.append(nxt)
        paths[dst] = seen
    ideal = []
    for src, dst, size in zip(trace["src"], trace["dst"], trace["bytes"], strict=True):
        delay, tx, rate = paths[dst][src]
        packets = (size - 1) // N3DC_PAYLOAD + 1
        ideal.append(2 * delay + tx + (size + packets * N3DC_HEADER) * 8 * 10**9 // rate)
    return ideal


def slowdown_percentiles(
    flows: pd.DataFrame, bounds: list[float], percentiles: tuple[float, ...] = (50, 95, 99)
) -> dict[str, float | None]:
    """Slowdown percentiles of finished flows per size bucket: ``<bucket>_p<q>_slowdown``
    for the buckets ``small`` (<= bounds[0]), ``medium`` and ``large`` (> bounds[1]),
    and ``all`` (:func:`shoal.analysis.bucket_stats`)."""
    stats = bucket_stats(
        flows["bytes"],
        flows["fct_ns"],
        flows["slowdown"],
        finished=flows["finished"].astype(bool),
        bounds=(bounds[0], bounds[1]),
        percentiles=percentiles,
    )
    return {
        f"{name}_p{q:g}_slowdown": part[f"p{q:g}_slowdown"]
        for name, part in stats.items()
        for q in percentiles
    }


def reference_slowdown(flows: pd.DataFrame, scenario: dict[str, Any]) -> pd.DataFrame:
    """``flows`` with ``slowdown`` = FCT / ns3-datacenter's ideal FCT
    (:func:`n3dc_ideal_fct_ns`, on the run's topology file), so that both simulators'
    slowdowns share one denominator; Shoal's own ideal is 1-5% lower."""
    hosts, links = read_topology(Path(scenario["topology"]["path"]))
    ideal = np.array(n3dc_ideal_fct_ns(flows, hosts, links), dtype=float)
    return flows.assign(ideal_fct_ns=ideal, slowdown=flows["fct_ns"] / ideal)


def workload(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Adds :func:`slowdown_percentiles`'s columns, against the reference's ideal FCT."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, _, run, scenario in ok_runs(runs, store):
        flows = reference_slowdown(run.flows(), scenario)
        bounds = [float(b) for b in _bucket_bounds(scenario)]
        extra[i] = slowdown_percentiles(flows, bounds)
    return join_columns(runs, extra)


def slowdown_figure(runs: pd.DataFrame, store: Path, **keys: Any) -> Any:
    """p50 and p99 slowdown (against the reference's ideal FCT) per flow-size decile, one
    line per scheme (:func:`shoal.plot.slowdown_vs_size`; ``keys`` go to it)."""
    from shoal import plot

    frames = [
        reference_slowdown(run.flows(), scenario).assign(
            scheme=SCHEME_NAMES.get(str(row.get("scheme", "")), str(row.get("scheme", "")))
        )
        for _, row, run, scenario in ok_runs(runs, store)
    ]
    return plot.slowdown_vs_size(pd.concat(frames), by="scheme", **keys)


def _bucket_bounds(scenario: dict[str, Any]) -> list[int]:
    from shoal.reproduce._units import size_bytes

    sizes = scenario.get("run", {}).get("size_buckets") or ["100KB", "10MB"]
    return [int(size_bytes(s)) for s in sizes]


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "rdma.burst": burst,
    "rdma.workload": workload,
}

FIGURES: dict[str, Callable[..., Any]] = {
    "rdma.burst": burst_figure,
    "rdma.slowdown": slowdown_figure,
}
