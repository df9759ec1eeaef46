"""Analyses of the DSH paper's experiments (``dsh/fig4`` to ``dsh/fig15``): PFC
avoidance against DSH's Theorems 1 and 2, the headroom trend of Broadcom's chips from
Eq. 1 and Eq. 3 (the advisor's chip presets; no simulation), the FCT against the buffer
size under static headroom, the headroom's utilization at its local maxima, deadlock
onsets on a fabric with a cyclic buffer dependency, an innocent flow's throughput behind
a paused link, and background and fan-in FCT under DSH against static headroom."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from shoal.advise.formulas import first_pause_time
from shoal.analysis import pause_totals
from shoal.reproduce._runs import StoredRun, join_columns, ok_runs
from shoal.reproduce._units import rate_bps, size_bytes, time_s

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = [
    "AFTER_NS",
    "ANALYSES",
    "BEFORE_NS",
    "BUFFER",
    "FIG4_CHIPS",
    "FIGURES",
    "chip_trend",
    "collateral",
    "deadlock_onset",
    "f0_figure",
    "fct_figure",
    "fct_vs_buffer",
    "fct_vs_sih",
    "fct_vs_sih_figure",
    "headroom_utilization",
    "first_pause_theorem",
    "innocent_receiver",
    "onset_figure",
    "pause_figure",
    "pfc_avoidance",
    "throughput",
    "trend_figure",
    "utilization_figure",
]

MiB = 2**20
#: The paper's Tomahawk buffer (section V-A): Fig. 11's burst sizes are fractions of it.
BUFFER = 16 * MiB
#: How the figures' panels name the congestion controls of the scheme names.
CC_NAMES = {"dcqcn": "DCQCN", "powertcp": "PowerTCP"}


def _pfc_ports(run: StoredRun) -> pd.DataFrame:
    """A run's PFC counters per node, port and class (``pfc_ports.parquet``)."""
    ports = run.table("pfc_ports")
    if ports is None:
        raise FileNotFoundError(f"run {run.key} has no pfc_ports.parquet: no class is lossless")
    return ports


def first_pause_theorem(
    *,
    shared: float,
    eta: float,
    alpha: float,
    congested: int,
    bursting: int,
    rate: float,
    burst_drain: float,
    congested_drain: float,
    dsh: bool,
) -> float | None:
    """Total bytes the bursting queues receive before the first PAUSE, by DSH's Theorem 1
    (``dsh``) or 2 (section IV-C, Eq. 16 and 19) as the advisor computes them
    (:func:`shoal.advise.formulas.first_pause_time`), with the rates in bytes per second
    and each queue's arrival and drain rates kept apart.

    Args:
        shared: the shared segment B_s, bytes (private buffer and headroom taken out).
        eta: the headroom per port, bytes; a DSH queue pauses eta below its threshold.
        alpha: the dynamic threshold's alpha.
        congested: the queues sitting at their pause threshold.
        bursting: the queues the burst arrives at.
        rate: the rate each bursting queue receives at, bytes per second.
        burst_drain: the rate each bursting queue drains at, bytes per second.
        congested_drain: the most each congested queue drains, bytes per second.
        dsh: DSH (Theorem 1) rather than static headroom (Theorem 2).

    Returns:
        The bytes, or None when the bursting queues never reach their pause threshold
        within the model.
    """
    # The advisor counts time in byte-times of a bursting queue's drain rate, and exactly:
    # Fraction(float) is the float's exact value, so only the result is rounded.
    drain = Fraction(burst_drain)
    load = Fraction(rate) / drain
    _, duration = first_pause_time(
        shared=Fraction(shared),
        pause_margin=Fraction(eta) if dsh else Fraction(0),
        alpha=Fraction(alpha),
        congested=congested,
        bursting=bursting,
        load=load,
        congested_drain=Fraction(congested_drain) / drain,
    )
    # Each bursting queue receives `load` bytes per unit of normalized time.
    return None if duration is None else float(bursting * load * duration)


def _fig11_run(run: StoredRun, scenario: dict[str, Any]) -> dict[str, float | None]:
    flows = run.flows()
    start_ns = float(flows["start_ns"].max())
    burst = flows[flows["start_ns"] == start_ns]
    background = flows[flows["start_ns"] < start_ns]
    senders = set(burst["src"])
    topo, switch = scenario["topology"], scenario["switch"]
    fc = switch["flow_control"]
    rate = rate_bps(topo["link_rate"]) / 8
    delay_ns = time_s(topo["link_delay"]) * 1e9
    rdma = scenario.get("rdma", {})
    mtu, header = float(rdma.get("mtu", 1000)), float(rdma.get("header", 36))
    packet = mtu + header
    frame_ns = size_bytes(fc.get("frame_size", "64B")) / rate * 1e9
    try:
        eta = size_bytes(fc["headroom"])
    except (KeyError, ValueError):
        from shoal.reproduce import ExperimentError

        raise ExperimentError(
            f"dsh.pfc_avoidance: switch.flow_control.headroom must be a size (e.g. "
            f'"56840B") for the theorem, got {fc.get("headroom")!r}'
        ) from None

    ports = _pfc_ports(run)
    at_senders = ports[(ports["node_kind"] == "host") & ports["node"].isin(senders)]
    frames = run.table("pfc")
    if frames is None:
        raise FileNotFoundError(f"run {run.key} has no pfc.parquet: no class is lossless")
    pauses = frames[
        (frames["node_kind"] == "host") & frames["node"].isin(senders) & frames["pause"]
    ]
    first_pause = None
    if len(pauses):
        # The frame left the switch one link delay and one frame time before it was
        # received; the burst's first packet reached the switch one packet time and one
        # link delay after it was sent.
        sent_ns = float(pauses["time_ns"].min()) - delay_ns - frame_ns
        arrived_ns = start_ns + packet / rate * 1e9 + delay_ns
        first_pause = len(senders) * rate * (sent_ns - arrived_ns) / 1e9 / BUFFER
    by_receiver = background.groupby("dst").size()
    theorem = first_pause_theorem(
        shared=size_bytes(switch["pool_size"]),
        eta=eta,
        alpha=float(fc["alpha"]),
        congested=len(background),
        bursting=len(senders),
        rate=rate,
        burst_drain=rate / len(senders),
        congested_drain=rate / float(by_receiver.max()) if len(by_receiver) else rate,
        dsh=fc["kind"] == "dsh",
    )
    return {
        "burst_fraction": float(burst["bytes"].sum()) / BUFFER,
        # What the queues hold: payload plus a header per packet.
        "burst_wire_fraction": float(
            (burst["bytes"] + np.ceil(burst["bytes"] / mtu) * header).sum()
        )
        / BUFFER,
        "fanin_paused_us": float(at_senders["paused_ns"].sum()) / 1e3,
        "fanin_pauses": float(at_senders["pauses_received"].sum()),
        "first_pause_burst_fraction": first_pause,
        "first_pause_payload_fraction": None if first_pause is None else first_pause * mtu / packet,
        "theorem_first_pause_fraction": None if theorem is None else theorem / BUFFER,
        "theorem_first_pause_payload_fraction": (
            None if theorem is None else theorem / BUFFER * mtu / packet
        ),
        "background_paused": float(
            ports[(ports["node_kind"] == "host") & ports["node"].isin(set(background["src"]))][
                "pauses_received"
            ].sum()
        ),
    }


def pfc_avoidance(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 11's columns per run (see the experiment's description), then per scheme the
    largest swept burst that no PAUSE met (``no_pause_max_fraction``)."""
    extra = {i: _fig11_run(run, scenario) for i, _, run, scenario in ok_runs(runs, store)}
    runs = join_columns(runs, extra)
    if "burst_fraction" not in runs or "scheme" not in runs:
        return runs
    quiet = runs[runs["fanin_pauses"] == 0]
    best = quiet.groupby("scheme")["burst_fraction"].max()
    runs["no_pause_max_fraction"] = runs["scheme"].map(best)
    return runs


def pause_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 11b: the fan-in senders' total paused time against the burst (flow bytes, %
    of the buffer), one line per scheme, each with its theorem's first-PAUSE burst
    (converted to flow bytes) dotted."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 3.0)
        ax = fig.subplots()
        measured, theorems = [], []
        for i, (scheme, g) in enumerate(runs.groupby("scheme", sort=False)):
            g = g.sort_values("burst_fraction")
            line = ax.plot(
                g["burst_fraction"] * 100,
                g["fanin_paused_us"] / 1e3,
                marker=plot._MARKERS[i % len(plot._MARKERS)],
                label=str(scheme).upper(),
            )[0]
            measured.append(line)
            theorem = g["theorem_first_pause_payload_fraction"].dropna()  # as x: flow bytes
            if len(theorem):
                theorems.append(
                    ax.axvline(
                        float(theorem.iloc[0]) * 100,
                        ls=":",
                        color=line.get_color(),
                        label=f"{str(scheme).upper()}: theorem",
                    )
                )
        ax.set_xlabel("burst size (% of the 16 MiB buffer)")
        ax.set_ylabel("fan-in pause duration (ms)")
        ax.set_ylim(bottom=0)
        # Below the axes: the theorems' lines cross the whole height of the axes, so a
        # legend inside them is crossed by one wherever it goes.
        handles = measured + theorems
        fig.legend(
            handles,
            [h.get_label() for h in handles],
            loc="outside lower center",
            ncols=2,
            frameon=False,
            fontsize="small",
        )
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- Fig. 4

#: Broadcom's chips of the last decade, in order of release (Fig. 4 is Broadcom only;
#: its 157 us starting point is Trident+). The advisor's presets carry their sources.
FIG4_CHIPS = ("trident-plus", "trident2", "tomahawk", "trident3", "tomahawk3", "tomahawk4")
#: Eq. 1's assumptions as section III-A states them for Trident2: 300 m of fiber at 65%
#: of c (D_prop ~1.5 us), 1500 B MTUs, the 8 queues of the PFC standard.
FIG4_DELAY, FIG4_MTU, FIG4_QUEUES = "1.5us", 1500, 8


def chip_trend(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """One row per chip of :data:`FIG4_CHIPS`: buffer per unit of capacity (``buffer_ns``,
    buffer x 8 / (ports x rate)) and the share of the buffer that static headroom takes
    (``headroom_fraction``, Eq. 3's N_p x N_q x eta, eta by Eq. 1, over the buffer).
    Nothing is simulated: ``runs`` is empty."""
    from shoal import advise

    rows = []
    for order, key in enumerate(FIG4_CHIPS):
        chip = advise.get_chip(key)
        advice = advise.headroom(chip=key, delay=FIG4_DELAY, mtu=FIG4_MTU, queues=FIG4_QUEUES)
        rows.append(
            {
                "status": "ok",
                "scheme": chip.name,
                "chip": key,
                "order": order,
                "ports": chip.ports,
                "port_gbps": chip.port_rate_bps / 1e9,
                "buffer_mib": chip.buffer / MiB,
                "buffer_ns": float(chip.buffer_time) * 1e9,
                "eta_bytes": float(advice.eta),
                "headroom_fraction": float(advice.static_fraction or math.nan),
            }
        )
    table = pd.DataFrame(rows)
    first, last = table.iloc[0], table.iloc[-1]
    table["buffer_time_drop"] = first["buffer_ns"] / last["buffer_ns"]
    table["headroom_rise"] = last["headroom_fraction"] / first["headroom_fraction"] - 1
    return table


def trend_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 4: buffer per unit of capacity (bars, us) and the headroom's share of the
    buffer (line, %) per chip, in order of release."""
    from shoal import plot

    runs = runs.sort_values("order")
    with plot._style():
        fig = plot._figure(4.2, 2.8)
        ax = fig.subplots()
        names = [str(n).replace("Broadcom ", "").split(" (")[0] for n in runs["scheme"]]
        ax.bar(names, runs["buffer_ns"] / 1e3, color="0.75", label="buffer / capacity")
        ax.set_ylabel("buffer per capacity (us)")
        ax.tick_params(axis="x", labelrotation=30, labelsize="small")
        right = ax.twinx()
        right.plot(names, runs["headroom_fraction"] * 100, marker="o", color="C3")
        right.set_ylabel("headroom share (%)", color="C3")
        right.set_ylim(0, 100)
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- Fig. 13

#: F0's windows around the burst, in ns: before it, and after it.
BEFORE_NS, AFTER_NS = 500e3, 500e3


def _innocent_series(run: StoredRun, scenario: dict[str, Any]) -> tuple[pd.DataFrame, float]:
    """F0's throughput (``time_ns``, ``gbps``) at S1's port to its receiver, and the
    burst's start: on a dumbbell, host h >= ``hosts`` hangs off S1's port h - hosts, and
    F0 is the first long flow whose receiver is not the burst's."""
    from shoal.reproduce import ExperimentError

    topo = scenario["topology"]
    if topo.get("kind") != "dumbbell":
        raise ExperimentError(
            f'dsh.collateral: topology.kind must be "dumbbell", got {topo.get("kind")!r}'
        )
    flows = run.flows()
    port = innocent_receiver(flows) - int(topo["hosts"])
    samples = run.table("queues")
    if samples is None:
        raise FileNotFoundError(f"run {run.key} has no queues.parquet: run.sample_interval")
    at = samples[(samples["switch"] == 1) & (samples["port"] == port)]
    tx = at.groupby("time_ns")["tx_bytes"].max()
    return throughput(tx.index.to_numpy(), tx.to_numpy()), float(flows["start_ns"].max())


def innocent_receiver(flows: pd.DataFrame) -> int:
    """Fig. 13's F0's receiver: of the flows (``id``, ``start_ns``, ``dst``) that start
    before the burst (the last start) and go elsewhere than the burst, the first one's."""
    start_ns = flows["start_ns"].max()
    burst = flows[flows["start_ns"] == start_ns]
    innocent = flows[(flows["start_ns"] < start_ns) & ~flows["dst"].isin(set(burst["dst"]))]
    return int(innocent.sort_values("id")["dst"].iloc[0])


def throughput(time_ns: Any, tx_bytes: Any) -> pd.DataFrame:
    """A port's throughput (``time_ns``, ``gbps``) between samples of the bytes it has
    sent, each rate at the end of its interval."""
    series = pd.DataFrame({"time_ns": time_ns, "tx_bytes": tx_bytes}, dtype=float)
    series["gbps"] = series["tx_bytes"].diff() * 8 / series["time_ns"].diff()
    return series.dropna()


def collateral(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 13's columns per run (see the experiment's description)."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, _, run, scenario in ok_runs(runs, store):
        series, start = _innocent_series(run, scenario)
        t = series["time_ns"] - start
        before = series[(t > -BEFORE_NS) & (t <= 0)]["gbps"]
        after = series[(t > 0) & (t <= AFTER_NS)]
        rate = float(before.mean())
        ports = _pfc_ports(run)
        # S0 is switch 0; its last port is the one to S1 (hosts are wired first).
        s0 = ports[(ports["node_kind"] == "switch") & (ports["node"] == 0)]
        uplink = s0[s0["port"] == int(scenario["topology"]["hosts"])]
        lost = ((rate - after["gbps"]).clip(lower=0) * after["time_ns"].diff().fillna(0)).sum()
        extra[i] = {
            "f0_before_gbps": rate,
            "f0_min_gbps": float(after["gbps"].min()),
            "f0_mean_after_gbps": float(after["gbps"].mean()),
            "f0_min_ratio": float(after["gbps"].min()) / rate if rate > 0 else None,
            "f0_lost_mb": float(lost) / 8 / 1e6,
            "s0_paused_us": float(uplink["paused_ns"].sum()) / 1e3,
        }
    return join_columns(runs, extra)


def f0_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 13: F0's throughput from 200 us before the burst to 800 us after, one panel
    per congestion control, SIH and DSH in each (each scheme's first run)."""
    from shoal import plot

    curves: dict[str, list[tuple[str, pd.DataFrame]]] = {}
    for _, row, run, scenario in ok_runs(runs, store):
        scheme, _, cc = str(row.get("scheme", "")).partition("_")
        if scheme.upper() in (label for label, _ in curves.get(cc or scheme, [])):
            continue  # one seed per line
        series, start = _innocent_series(run, scenario)
        series = series.assign(t_us=(series["time_ns"] - start) / 1e3)
        series = series[(series["t_us"] > -200) & (series["t_us"] <= 800)]
        curves.setdefault(cc or scheme, []).append((scheme.upper(), series))
    with plot._style():
        fig = plot._figure(3.2 * max(len(curves), 1), 2.6)
        axes = fig.subplots(1, max(len(curves), 1), squeeze=False, sharey=True)[0]
        for ax, (cc, lines) in zip(axes, curves.items(), strict=False):
            for label, series in lines:
                style = "--" if label == "DSH" else "-"  # SIH visible where they coincide
                ax.plot(series["t_us"], series["gbps"], style, label=label, lw=1)
            ax.set_title(CC_NAMES.get(cc, cc))
            ax.set_xlabel("time from the burst (us)")
            ax.set_ylim(0, 105)
            ax.legend(frameon=False, fontsize="small")
        axes[0].set_ylabel("F0 throughput (Gbps)")
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- Fig. 12


def deadlock_onset(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 12's columns (see the experiment's description): per run the first
    deadlock's onset or none, per scheme the fraction of runs that deadlocked, and for a
    DSH scheme ``<sih scheme's fraction> - <its own>`` (the scheme named with ``dsh``
    replaced by ``sih``), the paper's "avoids" in points."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, _, run, _ in ok_runs(runs, store):
        summary = run.summary()
        found = (summary.get("pfc") or {}).get("deadlocks") or []
        first = min(found, key=lambda d: d["onset_ns"]) if found else None
        extra[i] = {
            "deadlocked": 1.0 if first else 0.0,
            "onset_ms": first["onset_ns"] / 1e6 if first else None,
            "detected_ms": first["detected_ns"] / 1e6 if first else None,
            # Found where nothing could move any more, rather than by its pauses lasting
            # deadlock_after (older summaries have no such key).
            "frozen": float(first.get("frozen", False)) if first else None,
            "cycle": (
                " -> ".join(f"sw{n['switch']}:p{n['port']}:c{n['class']}" for n in first["cycle"])
                if first
                else None
            ),
            "run_ms": float(summary["duration_ps"]) / 1e9,
        }
    runs = join_columns(runs, extra)
    if "deadlocked" not in runs or "scheme" not in runs:
        return runs
    fraction = runs.groupby("scheme")["deadlocked"].mean()
    runs["deadlock_fraction"] = runs["scheme"].map(fraction)
    runs["deadlock_fraction_sih_minus_dsh"] = runs["scheme"].map(
        {
            s: fraction[s.replace("dsh", "sih", 1)] - fraction[s]
            for s in fraction.index
            if str(s).startswith("dsh") and s.replace("dsh", "sih", 1) in fraction.index
        }
    )
    return runs


def onset_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 12b: per scheme, the fraction of runs deadlocked by time t (the CDF of the
    onset over all runs, so a scheme that avoids some deadlocks ends below 1), up to the
    longest run's stop time."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.6)
        ax = fig.subplots()
        end = float(runs["run_ms"].max()) if "run_ms" in runs else 0.0
        for i, (scheme, g) in enumerate(runs.groupby("scheme", sort=False)):
            onsets = np.sort(g["onset_ms"].dropna().to_numpy(dtype=float))
            x = np.concatenate([[0.0], onsets, [end]])
            y = np.concatenate([[0.0], np.arange(1, len(onsets) + 1), [len(onsets)]]) / len(g)
            ax.step(x, y, where="post", label=str(scheme), ls=("-", "--", ":", "-.")[i % 4])
        ax.set_xlabel("deadlock onset (ms)")
        ax.set_ylabel("fraction of runs deadlocked")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(frameon=False, fontsize="small")
        if title:
            fig.suptitle(title)
    return fig


def _fig5_run(run: StoredRun, scenario: dict[str, Any]) -> dict[str, Any]:
    summary = run.summary()
    fct = summary["fct"]
    topo = scenario["topology"]
    # The leaves' pool (the first switches, all the same): the quick fabric's spines
    # have fewer ports, so theirs is larger and not the one the buffer scaling matches.
    leaf = next(p for p in summary["pools"] if p["switch"] == 0)
    leaf_ports = topo["hosts_per_leaf"] + topo["spines"]

    def avg_us(bucket: str) -> float | None:
        part = fct.get(bucket) or {}
        # A bucket with flows has a mean (null only for an empty bucket).
        return cast(float, part["mean_fct_ns"]) / 1e3 if part.get("count") else None

    return {
        # Quick mode scales the buffer with the leaf's ports; this is the paper's buffer
        # whose bytes per leaf port the run has.
        "buffer_mb": size_bytes(scenario["switch"]["buffer"]) * 32 / leaf_ports / MiB,
        "shared_pool_bytes": float(leaf["size"]),
        "avg_fct_us": avg_us("all"),
        "small_avg_fct_us": avg_us("small"),
        "medium_avg_fct_us": avg_us("medium"),
        "large_avg_fct_us": avg_us("large"),
        "flows_finished": float(fct["all"]["count"]),
        **pause_totals(summary),
    }


def fct_vs_buffer(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 5's columns per run (see the experiment's description), with the average
    FCT normalized to that of the largest buffer of the same seed and scheme."""
    extra = {i: _fig5_run(run, scenario) for i, _, run, scenario in ok_runs(runs, store)}
    runs = join_columns(runs, extra)
    if "avg_fct_us" not in runs:
        return runs
    keys = [c for c in ("scheme", "seed") if c in runs]
    largest = (
        runs.loc[runs.groupby(keys)["buffer_mb"].idxmax()]
        if keys
        else runs.nlargest(1, "buffer_mb")
    )
    base = largest.set_index(keys)["avg_fct_us"] if keys else None
    if base is None:
        runs["fct_vs_largest"] = runs["avg_fct_us"] / float(largest["avg_fct_us"].iloc[0])
    else:
        index = pd.MultiIndex.from_frame(runs[keys]) if len(keys) > 1 else runs[keys[0]]
        runs["fct_vs_largest"] = runs["avg_fct_us"].to_numpy() / base.reindex(index).to_numpy()
    return runs


def fct_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 5: the average FCT against the (paper's) buffer size, overall and per size
    bucket, each normalized to the largest buffer (means over seeds)."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.6)
        ax = fig.subplots()
        mean = runs.groupby("buffer_mb").mean(numeric_only=True).sort_index()
        for i, (col, label) in enumerate(
            (
                ("avg_fct_us", "all"),
                ("small_avg_fct_us", "<= 100 KB"),
                ("medium_avg_fct_us", "100 KB - 10 MB"),
                ("large_avg_fct_us", "> 10 MB"),
            )
        ):
            if col not in mean or mean[col].isna().all():
                continue
            y = mean[col] / mean[col].iloc[-1]
            ax.plot(mean.index, y, marker="o", ls=("-", "--", ":", "-.")[i], label=label)
        ax.set_xlabel("buffer (MB)")
        ax.set_ylabel("average FCT / at largest buffer")
        ax.legend(frameon=False, fontsize="small")
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- Fig. 6


def _utilization(run: StoredRun) -> pd.Series:
    """Peak bytes / headroom of every ended headroom episode of a run (empty when no
    headroom was used)."""
    episodes = run.table("headroom", ["peak_bytes", "headroom_bytes"])
    if episodes is None:
        return pd.Series(dtype=float)
    return episodes["peak_bytes"] / episodes["headroom_bytes"]


def headroom_utilization(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 6's columns per run (see the experiment's description)."""
    extra: dict[Any, dict[str, Any]] = {}
    for i, _, run, scenario in ok_runs(runs, store):
        util = _utilization(run)
        classes = len(scenario["switch"]["flow_control"]["classes"])
        used = len(util) > 0  # else no headroom was used: no utilization to give
        p50 = float(util.median()) if used else None
        p99 = float(util.quantile(0.99)) if used else None
        extra[i] = {
            "episodes": float(len(util)),
            "port_util_p50": p50 / classes if p50 is not None else None,
            "port_util_p99": p99 / classes if p99 is not None else None,
            "util_p50": p50,
            "util_p99": p99,
            "util_max": float(util.max()) if used else None,
            "unused_p99": 1 - p99 if p99 is not None else None,
            **pause_totals(run.summary()),
        }
    return join_columns(runs, extra)


def utilization_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 6: the CDF of the headroom utilization at its local maxima (every episode
    of every run), with the paper's median and 99th percentile marked."""
    from shoal import plot

    util = pd.concat([_utilization(run) for _, _, run, _ in ok_runs(runs, store)])
    with plot._style():
        fig = plot._figure(3.6, 2.6)
        ax = fig.subplots()
        x = np.sort(util.to_numpy(dtype=float)) * 100
        ax.step(x, np.arange(1, len(x) + 1) / max(len(x), 1), where="post", label="Shoal")
        for value, label in ((4.96, "paper median"), (25.33, "paper p99")):
            ax.axvline(value, color="0.6", ls=":", lw=0.8)
            ax.text(value, 0.05, f" {label}", fontsize="x-small", color="0.4", rotation=90)
        ax.set_xlabel("headroom utilization at local maxima (%)")
        ax.set_ylabel("CDF")
        ax.set_xlim(0, 100)
        ax.legend(frameon=False, fontsize="small", loc="lower right")
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- Fig. 14 and 15


def _background_and_fan_in(run: StoredRun) -> dict[str, Any]:
    """A run's average FCT of its background flows and of its fan-in flows (those that
    answer a round: ``query`` >= 0), and its PAUSE count and paused time."""
    flows = run.flows(["query", "fct_ns"])
    done = flows[flows["fct_ns"].notna()]
    fan_in = done["query"] >= 0

    def avg_us(part: pd.DataFrame) -> float | None:
        return float(part["fct_ns"].mean()) / 1e3 if len(part) else None

    return {
        "bg_fct_us": avg_us(done[~fan_in]),
        "fanin_fct_us": avg_us(done[fan_in]),
        "bg_flows": float((~fan_in).sum()),
        "fanin_flows": float(fan_in.sum()),
        "unfinished": float(len(flows) - len(done)),
        **pause_totals(run.summary()),
    }


def _moves_with(runs: pd.DataFrame, column: str, axis: str) -> bool:
    """Whether ``column`` is one-to-one with ``axis`` (zipped with it, as the fan-in
    load with the background load)."""
    pairs = runs[[axis, column]].astype(str).drop_duplicates()
    return bool(pairs[axis].is_unique and pairs[column].is_unique)


def fct_vs_sih(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 14's and Fig. 15's columns per run (see the experiments' descriptions): the
    average FCT of background and fan-in flows, and for a DSH scheme (``dsh_<cc>``) the
    ratio to its SIH twin (``sih_<cc>``) on the same axis point and seed; per DSH scheme
    and every other axis but the figure's x-axis (``workload.load`` by default), the
    lowest and the highest such ratio of the seed means (``*_best_vs_sih``, the paper's
    "up to", and ``*_worst_vs_sih``)."""
    extra = {i: _background_and_fan_in(run) for i, _, run, _ in ok_runs(runs, store)}
    runs = join_columns(runs, extra)
    if "bg_fct_us" not in runs or "scheme" not in runs:
        return runs
    point = [c for c in runs.columns if "." in c and not c.endswith("_label")]
    over = next((f["x"] for f in exp.figures if "x" in f), "workload.load")
    twin = runs.assign(scheme=runs["scheme"].str.replace("sih", "dsh", n=1))
    keys = ["scheme", *point, *(["seed"] if "seed" in runs else [])]
    sih = twin[runs["scheme"].str.startswith("sih")].set_index(keys)
    index = pd.MultiIndex.from_frame(runs[keys])
    for metric in ("bg", "fanin"):
        base = sih[f"{metric}_fct_us"].reindex(index).to_numpy(dtype=float)
        ratio = runs[f"{metric}_fct_us"].to_numpy(dtype=float) / base
        runs[f"{metric}_vs_sih"] = np.where(runs["scheme"].str.startswith("dsh"), ratio, np.nan)
        others = ["scheme", *(c for c in point if c != over and not _moves_with(runs, c, over))]
        means = runs.groupby([*point, "scheme"], dropna=False)[f"{metric}_vs_sih"].transform("mean")
        extremes = means.groupby([runs[c] for c in others])
        runs[f"{metric}_best_vs_sih"] = extremes.transform("min")
        runs[f"{metric}_worst_vs_sih"] = extremes.transform("max")
    return runs


def fct_vs_sih_figure(
    runs: pd.DataFrame,
    store: Path,
    *,
    title: str | None = None,
    x: str = "workload.load",
    xlabel: str | None = None,
    panel: str | None = None,
) -> Any:
    """Fig. 14/15: each DSH scheme's average FCT over its SIH twin's (means over seeds)
    against ``x``, background solid and fan-in dashed, one panel per value of ``panel``
    (default: the congestion control, the scheme name after ``dsh_``). A categorical
    ``x`` (a workload name) is drawn at evenly spaced ticks."""
    from shoal import plot

    dsh = runs[runs["scheme"].str.startswith("dsh") & runs["bg_vs_sih"].notna()].copy()
    dsh["cc"] = dsh["scheme"].str.partition("_")[2]
    by = panel or "cc"
    panels = list(dict.fromkeys(dsh[by]))
    with plot._style():
        fig = plot._figure(3.2 * max(len(panels), 1), 2.6)
        axes = fig.subplots(1, max(len(panels), 1), squeeze=False, sharey=True)[0]
        for ax, name in zip(axes, panels, strict=False):
            part = dsh[dsh[by] == name]
            for (cc, lines), style in zip(part.groupby("cc", sort=False), ("o", "s"), strict=False):
                mean = lines.groupby(x, sort=False)[["bg_vs_sih", "fanin_vs_sih"]].mean()
                ticks = list(range(len(mean))) if mean.index.dtype == object else list(mean.index)
                label = "" if by == "cc" else f"{cc}, "
                ax.plot(ticks, mean["bg_vs_sih"], "-" + style, label=f"{label}background")
                ax.plot(ticks, mean["fanin_vs_sih"], "--" + style, label=f"{label}fan-in")
                if mean.index.dtype == object:
                    ax.set_xticks(ticks, [str(t) for t in mean.index], rotation=20)
            ax.axhline(1.0, color="0.6", lw=0.8)
            ax.set_title(CC_NAMES.get(str(name), str(name)))
            ax.set_xlabel(xlabel or x)
            ax.legend(frameon=False, fontsize="small")
        axes[0].set_ylabel("average FCT, DSH / SIH")
        if title:
            fig.suptitle(title)
    return fig


ANALYSES = {
    "dsh.pfc_avoidance": pfc_avoidance,
    "dsh.chip_trend": chip_trend,
    "dsh.collateral": collateral,
    "dsh.deadlock_onset": deadlock_onset,
    "dsh.fct_vs_buffer": fct_vs_buffer,
    "dsh.fct_vs_sih": fct_vs_sih,
    "dsh.headroom_utilization": headroom_utilization,
}
FIGURES = {
    "dsh.pause_vs_burst": pause_figure,
    "dsh.chip_trend": trend_figure,
    "dsh.f0_throughput": f0_figure,
    "dsh.onset_cdf": onset_figure,
    "dsh.fct_vs_buffer": fct_figure,
    "dsh.fct_vs_sih": fct_vs_sih_figure,
    "dsh.headroom_utilization": utilization_figure,
}
