"""Custom analysis of the BCC paper's experiments (bcc-shared-buffer-ecn.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from shoal.analysis import pooled_occupancy, pooled_quantile, time_at_least
from shoal.reproduce._runs import join_columns, ok_runs, stop_time_s
from shoal.reproduce._units import rate_bps, size_bytes

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = [
    "ANALYSES",
    "FIGURES",
    "congested_pool",
    "data_loss",
    "goodput",
    "port_occupancy",
    "threshold_for_full_throughput",
]


def goodput(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """TCP goodput per run: delivered bytes of the TCP flows / run.stop_time.

    Adds ``tcp_goodput_gbps`` (every TCP flow) and ``tcp_goodput_gbps_<dst>`` for each
    receiver of TCP flows (hosts), and ``udp_goodput_gbps``.
    """
    extra: dict[int, dict[str, Any]] = {}
    for i, _, run, scenario in ok_runs(runs, store):
        stop = stop_time_s(scenario)
        if not stop:
            continue
        flows = run.flows()
        tcp = flows[flows["kind"] == "tcp"]
        udp = flows[flows["kind"] == "udp"]
        values = {
            "tcp_goodput_gbps": tcp["delivered_bytes"].sum() * 8 / stop / 1e9,
            "udp_goodput_gbps": udp["delivered_bytes"].sum() * 8 / stop / 1e9,
        }
        for dst, g in tcp.groupby("dst"):
            values[f"tcp_goodput_gbps_{int(dst)}"] = g["delivered_bytes"].sum() * 8 / stop / 1e9
        extra[i] = values
    return join_columns(runs, extra)


def threshold_for_full_throughput(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 2: :func:`goodput`, its ``utilization`` (TCP goodput over the line rate's
    goodput, rate x mss / (mss + header)) and, for every run of a scheme,
    ``min_k_full_kb``: the smallest ``switch.marking.cutoff.k`` (KB, 1,000 B) whose run
    of that scheme reaches 99% utilization (NaN if none does)."""
    runs = goodput(exp, runs, store)
    utilization: dict[int, dict[str, Any]] = {}
    for i, _, _run, scenario in ok_runs(runs, store):
        transport = scenario["transport"]
        line = rate_bps(scenario["topology"]["link_rate"]) / 1e9
        payload = transport["mss"] / (transport["mss"] + transport["header"])
        utilization[i] = {
            "utilization": runs.at[i, "tcp_goodput_gbps"] / (line * payload),
            "k_kb": size_bytes(scenario["switch"]["marking"]["cutoff"]["k"]) / 1e3,
        }
    runs = join_columns(runs, utilization)
    full = runs[runs["utilization"] >= 0.99].groupby("scheme")["k_kb"].min()
    return runs.assign(min_k_full_kb=runs["scheme"].map(full))


def data_loss(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Data packets dropped at switches per data packet sent, ``data_loss_rate``.

    ``loss_rate`` counts ACKs in its numerator and denominator, and the authors' ns-2
    script averages the drop ratio over all the switch queues, many of which carry only
    ACKs; data drops per data packet sent is the measure both simulators share (the
    reference's data-packet drops over the data packets its hosts sent). Runs made before
    the core counted data drops apart (``switch_data_dropped``) get none.
    """
    extra: dict[int, dict[str, Any]] = {}
    for i, _, run, _scenario in ok_runs(runs, store):
        counters = run.summary().get("counters", {})
        sent, dropped = counters.get("data_packets_sent"), counters.get("switch_data_dropped")
        if sent and dropped is not None:
            extra[i] = {"data_loss_rate": dropped / sent}
    return join_columns(runs, extra)


def congested_pool(occupancy: pd.DataFrame) -> pd.DataFrame:
    """The occupancy distribution (``occupancy.parquet`` rows) of the pool that held the
    most bytes on average: on a star whose one receiver shares its pool with ports that
    carry only ACKs, the receiver's port."""
    mid = (occupancy["min_bytes"] + occupancy["max_bytes"]) / 2
    mean = (mid * occupancy["time_ns"]).groupby([occupancy["switch"], occupancy["pool"]]).sum()
    switch, pool = mean.idxmax()
    return occupancy[(occupancy["switch"] == switch) & (occupancy["pool"] == pool)]


def _congested_occupancy(run: Any) -> pd.DataFrame:
    """A run's congested pool as :func:`shoal.analysis.pooled_occupancy` gives it."""
    occupancy = run.table("occupancy")
    if occupancy is None:
        raise FileNotFoundError(f"run {run.key} has no occupancy.parquet (run.occupancy_cdf)")
    return pooled_occupancy(congested_pool(occupancy))


def port_occupancy(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 4: the congested port's time-weighted occupancy (``run.occupancy_cdf``): the
    fraction of the time above the per-port marking threshold, ``above_k_fraction``, and
    the 50th, 99th and 99.99th percentiles in KB (1,000 B), ``occupancy_p50_kb``,
    ``occupancy_p99_kb``, ``occupancy_p9999_kb`` (each the upper edge of its bucket, at
    most 1/64 above the value)."""
    extra: dict[int, dict[str, Any]] = {}
    for i, _, run, scenario in ok_runs(runs, store):
        pooled = _congested_occupancy(run)
        k = size_bytes(scenario["switch"]["marking"]["cutoff"]["k"])
        extra[i] = {
            "above_k_fraction": time_at_least(pooled, k),
            "occupancy_p50_kb": pooled_quantile(pooled, 0.5) / 1e3,
            "occupancy_p99_kb": pooled_quantile(pooled, 0.99) / 1e3,
            "occupancy_p9999_kb": pooled_quantile(pooled, 0.9999) / 1e3,
        }
    return join_columns(runs, extra)


def occupancy_cdf_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 4: the CDF over time of the congested port's buffer occupancy, one line per
    run (the first seed of each scheme), with the marking threshold K and C x RTT x
    (1 + lambda) marked where the experiment gives them."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.7)
        ax = fig.subplots()
        seen: set[str] = set()
        right_kb = 2000.0
        for _, row, run, _ in ok_runs(runs, store):
            label = str(row.get("scheme", run.key))
            if label in seen:
                continue
            seen.add(label)
            pooled = _congested_occupancy(run)
            x = pooled["max_bytes"].to_numpy(dtype=float) / 1e3
            ax.step(x, pooled["cdf"].to_numpy(dtype=float), where="post", label=label)
            right_kb = max(right_kb, 1.2 * pooled_quantile(pooled, 0.9999) / 1e3)
        for kb, text in ((720, "K = 720 KB"), (1720, "C x RTT x (1 + lambda)")):
            ax.axvline(kb, color="0.5", linestyle=":", linewidth=0.8)
            ax.annotate(text, (kb, 0.05), rotation=90, fontsize="x-small", color="0.4")
        ax.set_xlim(0, right_kb)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("buffer occupancy of the congested port (KB)")
        ax.set_ylabel("CDF (time)")
        if len(seen) > 1:
            ax.legend(frameon=False, fontsize="x-small")
        if title:
            fig.suptitle(title)
    return fig


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "bcc.goodput": goodput,
    "bcc.data_loss": data_loss,
    "bcc.port_occupancy": port_occupancy,
    "bcc.threshold_for_full_throughput": threshold_for_full_throughput,
}
FIGURES: dict[str, Callable[..., Any]] = {
    "bcc.occupancy_cdf": occupancy_cdf_figure,
}
