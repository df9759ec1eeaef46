"""The BFC paper's traffic harness and its analyses (``bfc/fig5``): the FCT slowdown and
the size bins of the authors' scripts, per-bin p99 slowdowns with the incast flows left
out, and the comparisons Fig. 5's text makes between the schemes.

The harness (experiments/bfc/README.md, "Traffic") is the BFC authors' fork of HPCC's simulator
(preeyshah/High-Precision-Congestion-Control, "PSHAH"). Its generator carries a flow of
``s`` bytes as one packet of ``s`` bytes when ``s <= 1000`` and otherwise as
``s // 1000 + 1`` packets of 1,000 B (``scratch/simple.cc:1250-1258``; an exact multiple
of 1,000 gains a packet), and its script ``script_updated.py`` (lines 86-100 of master)
divides each flow's FCT (at the sender, at the last ACK) by::

    base = L + (np + ex) x min(size, 1000) B x 8 / 100 Gbps

with ``size`` the flow's bytes as carried, ``np = max(size // 1000, 1)`` its packets, and
``L = 8000 ns, ex = 3`` between racks (the 8 us base RTT; three store-and-forward hops),
``L = 4000 ns, ex = 1`` within a rack. So a flow of more than 1,000 B has
``L + (np + ex) x 80 ns`` and a single sub-KB packet of ``b`` bytes ``L + (1 + ex) x b x
0.08 ns``. Racks are 16 hosts in T1. The p99 of a bin of ``n`` slowdowns is the sorted
value at index ``int(0.99 n)``.

Shoal's flows have the bytes the CDF gives, not whole packets, so this module applies the
harness's packetization to them first (:func:`harness_size`). The base is then not a
strict lower bound of a Shoal flow's FCT: a flow of more than 1,000 B sends up to
1,000 B less than the harness counts. Against the FCT of the flow alone in Shoal (36 B of
headers on each packet, a 48 B ACK), the base is too high by at most ``58.88 - 2.88 np``
ns between racks and ``72.32 - 2.88 np`` ns within one (np the harness's packets; at
worst 63.6 ns, 1.5% of the 4,240 ns of a 1,001 B flow in a rack), and never for a single
packet; see :func:`lower_bound_ratio`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from shoal.analysis import (
    byte_fraction_upto,
    flow_size_cdf,
    pause_totals,
    paused_ns_by_link,
    pooled_occupancy,
    pooled_quantile,
    time_at_least,
)
from shoal.reproduce._runs import StoredRun, join_columns, ok_runs
from shoal.reproduce._units import rate_bps, size_bytes, time_s

if TYPE_CHECKING:
    from shoal._summary_types import Summary
    from shoal.reproduce import Experiment

__all__ = [
    "ANALYSES",
    "BINS",
    "FIGURES",
    "SCHEME_NAMES",
    "bin_labels",
    "byte_cdf",
    "gateway_ids",
    "inter_dc",
    "inter_dc_figure",
    "two_dc_topology",
    "buffer_and_pauses",
    "directed_links",
    "occupancy_cdf_figure",
    "paused_bars_figure",
    "paused_ns_by_link",
    "physical_queues",
    "queues_figure",
    "pooled_occupancy",
    "pooled_quantile",
    "time_at_least",
    "harness_packets",
    "harness_p99",
    "harness_size",
    "ideal_fct_ns",
    "bottleneck_queue_p99",
    "lower_bound_ratio",
    "p99_by_bin",
    "size_bins",
    "slowdown",
    "slowdown_bins",
    "slowdown_figure",
    "workload_of",
]

#: The harness's payload bytes per packet (PACKET_PAYLOAD_SIZE).
MTU = 1000
#: ns per byte at the harness's 100 Gbps (``datarate`` in script_updated.py).
NS_PER_BYTE = 8 / 100
#: (L in ns, extra store-and-forward hops) between racks and within a rack.
INTER_RACK = (8000.0, 3)
INTRA_RACK = (4000.0, 1)
#: Upper packet counts of the harness's size bins; one more bin holds the larger flows
#: (script_updated.py:118-150).
BINS: dict[str, tuple[int, ...]] = {
    "Google": (1, 2, 4, 8, 16, 64, 256, 1024),
    "FB_Hadoop": (3, 12, 48, 192, 768, 3072, 12288, 49152),
}
#: The workload (its bins) of each flow-size distribution the harness's two stand for:
#: the harness's own files (homa_w4, homa_w3) and Shoal's other copies of the same
#: published distributions.
WORKLOADS = {
    "homa_w4": "FB_Hadoop",
    "fb_hadoop": "FB_Hadoop",
    "homa_w3": "Google",
    "google_rpc": "Google",
}
#: How the figure and the README name the schemes.
SCHEME_NAMES = {
    "dcqcn": "DCQCN",
    "dcqcn_win": "DCQCN+Win",
    "dcqcn_win_sfq": "DCQCN+Win+SFQ",
    "hpcc": "HPCC",
    "bfc": "BFC",
    "bfc_vfid": "BFC-VFID",
    "sfq_infbuffer": "SFQ+InfBuffer",
    "bfc_no_hpq": "BFC without HPQ",
    "bfc_pfc_alpha1": "BFC, PFC alpha 1",
    "ideal_fq": "Ideal-FQ",
}
#: The scheme every ``p99_bin<i>_vs_ideal`` is relative to.
IDEAL = "ideal_fq"
#: The flow sizes the paper calls medium ("100-500KB", section 4.2).
MEDIUM_BYTES = (100_000, 500_000)

#: Fig. 9's network (:func:`two_dc_topology`): per data center 4 ToRs x 16 hosts and 8
#: spines; node ids hosts first (data center ``d`` holds hosts ``64 d`` to ``64 d + 63``),
#: then per data center its ToRs, spines and gateway.
DC_TORS, DC_HOSTS_PER_TOR, DC_SPINES = 4, 16, 8
DC_HOSTS = DC_TORS * DC_HOSTS_PER_TOR
DC_COUNT = 2
#: Switches of one data center: its ToRs, its spines and its gateway.
DC_SWITCHES = DC_TORS + DC_SPINES + 1

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def _ints(values: Any, what: str) -> IntArray:
    array = np.asarray(values)
    if array.size and (not np.issubdtype(array.dtype, np.number) or np.isnan(array).any()):
        raise ValueError(f"{what} must be numbers, got {array.dtype}")
    array = array.astype(np.int64)
    if (array < 1).any():
        raise ValueError(f"{what} must be at least 1 byte, got {int(array.min())}")
    return array


def harness_size(bytes_: Any) -> IntArray:
    """The bytes the harness carries a flow of ``bytes_`` in: ``bytes_`` up to 1,000 B,
    else ``(bytes_ // 1000 + 1) x 1000`` (whole 1,000 B packets; an exact multiple gains
    one). Accepts a number or an array; ValueError on sizes below 1 B."""
    b = _ints(bytes_, "flow sizes")
    return np.where(b <= MTU, b, (b // MTU + 1) * MTU)


def harness_packets(bytes_: Any) -> IntArray:
    """The harness's packet count ``np`` for a flow of ``bytes_`` (its bins' unit)."""
    return np.maximum(harness_size(bytes_) // MTU, 1)


def ideal_fct_ns(bytes_: Any, same_rack: Any) -> FloatArray:
    """The harness's ideal FCT in ns of flows of ``bytes_`` (as Shoal sends them; carried
    as :func:`harness_size`) between two hosts of the same rack (``same_rack`` true) or
    of two racks: ``L + (np + ex) x min(size, 1000) x 0.08`` (module docstring)."""
    size = harness_size(bytes_)
    rack = np.asarray(same_rack, dtype=bool)
    base = np.where(rack, INTRA_RACK[0], INTER_RACK[0])
    extra = np.where(rack, INTRA_RACK[1], INTER_RACK[1])
    per_packet = np.minimum(size, MTU) * NS_PER_BYTE
    return np.asarray(base + (harness_packets(bytes_) + extra) * per_packet, dtype=np.float64)


def slowdown(fct_ns: Any, bytes_: Any, same_rack: Any) -> FloatArray:
    """FCT over the harness's ideal (:func:`ideal_fct_ns`)."""
    fct = np.asarray(fct_ns, dtype=np.float64)
    return np.asarray(fct / ideal_fct_ns(bytes_, same_rack), dtype=np.float64)


def lower_bound_ratio(
    bytes_: Any,
    same_rack: Any,
    *,
    header: int = 36,
    ack_size: int = 48,
    link_delay_ns: float = 1000.0,
    gbps: float = 100.0,
) -> FloatArray:
    """The smallest slowdown a flow can have in Shoal: the FCT of the flow alone on T1
    (every link ``gbps`` and ``link_delay_ns``; the first packet stored and forwarded at
    each switch, the rest at the host link's rate behind it, then the last ACK's trip
    back), over the harness's ideal. Computed from the topology, not read from a run;
    below 1 only where the harness counts more bytes than the flow has."""
    b = _ints(bytes_, "flow sizes")
    rack = np.asarray(same_rack, dtype=bool)
    links = np.where(rack, 2, 4)
    ns_per_byte = 8 / gbps
    packets = -(-b // MTU)  # what Shoal sends: ceil(bytes / mtu)
    first = np.minimum(b, MTU) + header
    wire = b + packets * header
    alone = (
        2 * links * link_delay_ns
        + links * first * ns_per_byte
        + (wire - first) * ns_per_byte
        + links * ack_size * ns_per_byte
    )
    return np.asarray(alone / ideal_fct_ns(b, rack), dtype=np.float64)


def bin_labels(edges: Sequence[int]) -> list[str]:
    """The bins' names: ``<=e`` for each edge, then ``>last``."""
    return [f"<={e}" for e in edges] + [f">{edges[-1]}"]


def size_bins(packets: Any, edges: Sequence[int]) -> IntArray:
    """Each flow's bin (0-based) by its harness packet count: the first edge at or above
    it, or ``len(edges)`` past the last."""
    return np.searchsorted(np.asarray(edges), np.asarray(packets), side="left").astype(np.int64)


def harness_p99(values: Any) -> float:
    """The harness's p99: the sorted values' element at ``int(0.99 n)`` (NaN if none)."""
    s = np.sort(np.asarray(values, dtype=np.float64))
    return float(s[int(0.99 * len(s))]) if len(s) else float("nan")


def p99_by_bin(flows: pd.DataFrame, workload: str, hosts_per_rack: int) -> pd.DataFrame:
    """Per harness size bin of ``workload`` (a key of :data:`BINS`): the number of
    finished non-incast flows, their p99 (:func:`harness_p99`) and largest slowdown.
    ``flows`` has Shoal's flow columns ``src dst bytes fct_ns query`` (``query`` >= 0
    marks an incast flow); hosts ``h`` and ``g`` share a rack when ``h //
    hosts_per_rack == g // hosts_per_rack``. One row per bin, empty bins included."""
    if workload not in BINS:
        raise ValueError(f"workload {workload!r}: expected one of {', '.join(BINS)}")
    missing = [c for c in ("src", "dst", "bytes", "fct_ns", "query") if c not in flows]
    if missing:
        raise ValueError(f"flows: no column {missing[0]!r}")
    if hosts_per_rack < 1:
        raise ValueError(f"hosts_per_rack must be at least 1, got {hosts_per_rack}")
    edges = BINS[workload]
    done = flows[(flows["query"] < 0) & flows["fct_ns"].notna()]
    same = (done["src"] // hosts_per_rack) == (done["dst"] // hosts_per_rack)
    ratio = slowdown(done["fct_ns"], done["bytes"], same)
    which = size_bins(harness_packets(done["bytes"]), edges)
    rows = []
    for i, label in enumerate(bin_labels(edges)):
        part = ratio[which == i]
        rows.append(
            {
                "bin": i + 1,
                "label": label,
                "flows": len(part),
                "p99": harness_p99(part),
                "max": float(part.max()) if len(part) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def workload_of(scenario: dict[str, Any]) -> str:
    """The harness workload (``FB_Hadoop`` or ``Google``) of a resolved scenario's
    ``workload.cdf``: a built-in name or a file named after one (``homa_w3.cdf``)."""
    from shoal.reproduce import ExperimentError

    cdf = str(scenario.get("workload", {}).get("cdf", ""))
    name = Path(cdf).stem if ("/" in cdf or cdf.endswith(".cdf")) else cdf
    if name not in WORKLOADS:
        raise ExperimentError(
            f"bfc: workload.cdf {cdf!r} has no harness size bins; accepted: "
            f"{', '.join(WORKLOADS)} (or a file named after one)"
        )
    return WORKLOADS[name]


def _hosts_per_rack(scenario: dict[str, Any]) -> int:
    from shoal.reproduce import ExperimentError

    topo = scenario.get("topology", {})
    if topo.get("kind") != "leaf_spine":
        raise ExperimentError(
            f'bfc: topology.kind must be "leaf_spine" (racks are its leaves), got '
            f"{topo.get('kind')!r}"
        )
    return int(topo["hosts_per_leaf"])


def _run_columns(run: StoredRun, scenario: dict[str, Any]) -> dict[str, Any]:
    """A run's per-bin counts and p99s, and its other harness columns."""
    workload = workload_of(scenario)
    rack = _hosts_per_rack(scenario)
    flows = run.flows(["src", "dst", "bytes", "fct_ns", "query"])
    table = p99_by_bin(flows, workload, rack)
    background = flows[flows["query"] < 0]
    done = background[background["fct_ns"].notna()]
    same = (done["src"] // rack) == (done["dst"] // rack)
    ratio = slowdown(done["fct_ns"], done["bytes"], same)
    summary = run.summary()
    out: dict[str, Any] = {
        "workload": workload,
        "p99_all": harness_p99(ratio),
        "min_slowdown": float(ratio.min()) if len(ratio) else float("nan"),
        "background_flows": float(len(background)),
        "incast_flows": float((flows["query"] >= 0).sum()),
        "unfinished": float(flows["fct_ns"].isna().sum()),
        **pause_totals(summary),
    }
    bfc = _bfc_counters(summary)
    if bfc:
        placements = bfc.get("placements", 0)
        out["collision_rate"] = bfc["collisions"] / placements if placements else float("nan")
        joined = placements + bfc.get("overflowed", 0)
        out["overflow_rate"] = bfc.get("overflowed", 0) / joined if joined else float("nan")
        shared = bfc.get("shared_vfid", 0)
        out["shared_vfid_rate"] = shared / placements if placements else float("nan")
        out["bfc_pauses"] = float(bfc["pauses"])
    for b, count, p99 in zip(table["bin"], table["flows"], table["p99"], strict=True):
        out[f"flows_bin{b}"] = float(count)
        out[f"p99_bin{b}"] = float(p99)
    return out


def _bfc_counters(summary: Summary) -> Mapping[str, int] | None:
    """BFC's counters (placements, collisions, pauses...) in a run's summary, or None.
    They are a scheme section of ``counters``, a key the Summary type cannot declare
    (see RunCounters), so the counters are read as a plain mapping."""
    counters: Mapping[str, Any] = summary.get("counters") or {}
    bfc: Mapping[str, int] | None = counters.get("bfc")
    return bfc


def _medium_bins(workload: str) -> list[int]:
    """The bins (1-based) whose sizes overlap the paper's medium flows, 100-500 KB."""
    edges = BINS[workload]
    lows = [0, *edges]
    highs = [*edges, np.inf]
    lo, hi = (b / MTU for b in MEDIUM_BYTES)
    return [i + 1 for i, (a, z) in enumerate(zip(lows, highs, strict=True)) if a < hi and z >= lo]


def slowdown_bins(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 5's columns per run (see the experiment's description); then, among the runs
    of one workload and seed, each bin's p99 over Ideal-FQ's (``p99_bin<i>_vs_ideal``),
    the fraction of bins (with flows in every scheme) in which a scheme's p99 is the
    highest (``worst_bins``), and the lowest ratio to Ideal-FQ of any DCQCN variant in a
    bin overlapping 100-500 KB (``medium_best_dcqcn_vs_ideal``, the same on every row
    of the workload and seed)."""
    extra = {i: _run_columns(run, scenario) for i, _, run, scenario in ok_runs(runs, store)}
    runs = join_columns(runs, extra)
    if "workload" not in runs or "scheme" not in runs:
        return runs
    bins = sorted(int(c.removeprefix("p99_bin")) for c in runs.columns if c.startswith("p99_bin"))
    seed = ["seed"] if "seed" in runs else []
    keys = ["workload", *seed]
    for key, group in runs[runs["workload"].notna()].groupby(keys):
        workload = key[0] if isinstance(key, tuple) else key
        ideal = group[group["scheme"] == IDEAL]
        p99 = group[[f"p99_bin{b}" for b in bins]].to_numpy(dtype=float)
        for b in bins:
            base = float(ideal[f"p99_bin{b}"].iloc[0]) if len(ideal) else float("nan")
            runs.loc[group.index, f"p99_bin{b}_vs_ideal"] = group[f"p99_bin{b}"] / base
        compared = ~np.isnan(p99).any(axis=0)  # bins with flows in every scheme
        if compared.any() and len(group) > 1:
            worst = p99[:, compared] == np.nanmax(p99[:, compared], axis=0)
            runs.loc[group.index, "worst_bins"] = worst.mean(axis=1)
        dcqcn = group[group["scheme"].str.startswith("dcqcn")]
        medium = [f"p99_bin{b}_vs_ideal" for b in _medium_bins(str(workload))]
        values = runs.loc[dcqcn.index, medium].to_numpy(dtype=float)
        if values.size and not np.isnan(values).all():
            runs.loc[group.index, "medium_best_dcqcn_vs_ideal"] = float(np.nanmin(values))
    return runs


def slowdown_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 5a/5b: p99 slowdown per harness size bin (log scale), one line per scheme,
    one panel per workload (Google first, as Fig. 5a), means over seeds."""
    from shoal import plot

    panels = [w for w in ("Google", "FB_Hadoop") if w in set(runs.get("workload", []))]
    with plot._style():
        fig = plot._figure(3.4 * max(len(panels), 1), 2.8)
        axes = fig.subplots(1, max(len(panels), 1), squeeze=False)[0]
        for ax, workload in zip(axes, panels, strict=False):
            part = runs[runs["workload"] == workload]
            labels = bin_labels(BINS[workload])
            cols = [f"p99_bin{i + 1}" for i in range(len(labels))]
            for i, (scheme, g) in enumerate(part.groupby("scheme", sort=False)):
                y = g[[c for c in cols if c in g]].mean(numeric_only=True)
                ax.plot(
                    range(len(y)),
                    y.to_numpy(dtype=float),
                    marker=plot._MARKERS[i % len(plot._MARKERS)],
                    label=SCHEME_NAMES.get(str(scheme), str(scheme)),
                )
            ax.set_xticks(range(len(labels)), labels, rotation=30, fontsize="x-small")
            ax.set_yscale("log")
            ax.set_title(workload)
            ax.set_xlabel("flow size (1 KB packets)")
            ax.set_ylabel("p99 FCT slowdown")
            ax.legend(frameon=False, fontsize="x-small")
        if title:
            fig.suptitle(title)
    return fig


def physical_queues(scenario: dict[str, Any]) -> int | None:
    """A BFC port's physical queues: its queues but the ACK, the high-priority and the
    overflow queue (``switch.queues - 3``); None for a scheme without BFC."""
    switch = scenario.get("switch", {})
    if (switch.get("flow_control") or {}).get("kind") != "bfc":
        return None
    return int(switch["queues"]) - 3


def queues_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 12: (a) BFC's collision rate against its physical queues per port; (b) the
    p99 slowdown per harness size bin, one line per number of queues, Ideal-FQ's as the
    dashed reference (a scheme without BFC). Means over seeds; Google's bins."""
    from shoal import plot

    queues: dict[str, int] = {}
    for _, row, _, scenario in ok_runs(runs, store):
        n = physical_queues(scenario)
        if n is not None:
            queues[str(row["scheme"])] = n
    bfc = runs[runs["scheme"].isin(queues)]
    rates = bfc.groupby("scheme")["collision_rate"].mean()
    order = sorted(queues, key=queues.__getitem__)
    workload = str(runs["workload"].dropna().iloc[0]) if "workload" in runs else "Google"
    labels = bin_labels(BINS[workload])
    cols = [f"p99_bin{i + 1}" for i in range(len(labels))]
    with plot._style():
        fig = plot._figure(7.0, 3.0)
        left, right = fig.subplots(1, 2, width_ratios=(2, 3))
        xs = [queues[s] for s in order]
        left.plot(xs, [rates.get(s, np.nan) * 100 for s in order], marker="o", color="C0")
        left.set_xscale("log", base=2)
        left.set_xticks(xs, [str(x) for x in xs])
        left.minorticks_off()
        left.set_ylim(bottom=0)
        left.set_xlabel("physical queues per port")
        left.set_ylabel("collisions (% of placements)")
        left.set_title("(a) collisions")
        for i, scheme in enumerate(order):
            y = bfc[bfc["scheme"] == scheme][cols].mean(numeric_only=True)
            right.plot(
                range(len(cols)),
                y.to_numpy(dtype=float),
                marker=plot._MARKERS[i % len(plot._MARKERS)],
                color=f"C{i}",
                label=f"BFC, {queues[scheme]} queues",
            )
        ideal = runs[runs["scheme"] == IDEAL]
        if len(ideal):
            right.plot(
                range(len(cols)),
                ideal[cols].mean(numeric_only=True).to_numpy(dtype=float),
                color="black",
                linestyle="--",
                linewidth=1.2,
                label=SCHEME_NAMES[IDEAL],
            )
        right.set_xticks(range(len(labels)), labels, rotation=30, fontsize="x-small")
        right.set_yscale("log")
        plot._plain_log(right.yaxis)
        right.set_xlabel("flow size (1 KB packets)")
        right.set_ylabel("p99 FCT slowdown")
        right.set_title(f"(b) tail latency, {workload}")
        plot._legend(fig, right, 0, ncols=5)
        if title:
            fig.suptitle(title)
    return fig


def bottleneck_queue_p99(samples: pd.DataFrame, queues: int, since_ns: float) -> dict[str, float]:
    """Fig. 10's measure from queue samples (``queues.parquet``): at the port that sent
    the most bytes (the bottleneck, the receiver's downlink when every flow goes to one
    host), the 99th percentile and the maximum of the bytes of its physical queues (2 to
    ``queues - 2`` under BFC: not the ACK, first-packet or overflow queue) over the
    samples from ``since_ns`` on where they hold packets. NaN without such samples."""
    empty = {"queue_p99_kb": float("nan"), "queue_max_kb": float("nan")}
    if samples.empty:
        return empty
    last = samples.sort_values("time_ns").groupby(["switch", "port"])["tx_bytes"].last()
    switch, port = last.idxmax()
    at = samples[
        (samples["switch"] == switch)
        & (samples["port"] == port)
        & samples["queue"].between(2, queues - 2)
        & (samples["time_ns"] >= since_ns)
        & (samples["bytes"] > 0)
    ]["bytes"]
    if at.empty:
        return empty
    return {"queue_p99_kb": float(at.quantile(0.99)) / 1e3, "queue_max_kb": float(at.max()) / 1e3}


def queue_occupancy(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 10's columns per run: ``flows`` (the run's flows), ``queue_p99_kb`` and
    ``queue_max_kb`` (:func:`bottleneck_queue_p99`, leaving out the first tenth of the
    run, when every flow starts at once)."""
    extra = {}
    for i, _, run, scenario in ok_runs(runs, store):
        samples = run.table("queues")
        if samples is None:
            raise FileNotFoundError(f"run {run.key} has no queues.parquet: run.sample_interval")
        flows = run.flows(["id"])
        stop_ns = float(samples["time_ns"].max()) if len(samples) else 0.0
        queues = int(scenario.get("switch", {}).get("queues", 35))
        extra[i] = {"flows": len(flows), **bottleneck_queue_p99(samples, queues, stop_ns / 10)}
    return join_columns(runs, extra)


# ---------------------------------------------------------------- Fig. 9: two data centers


def _tor(dc: int, t: int) -> int:
    return DC_COUNT * DC_HOSTS + DC_SWITCHES * dc + t


def _spine(dc: int, s: int) -> int:
    return DC_COUNT * DC_HOSTS + DC_SWITCHES * dc + DC_TORS + s


def gateway_ids() -> tuple[int, ...]:
    """The node ids of the gateways of :func:`two_dc_topology` (140 and 153)."""
    return tuple(DC_COUNT * DC_HOSTS + DC_SWITCHES * dc + DC_SWITCHES - 1 for dc in range(DC_COUNT))


def two_dc_topology(
    *,
    rate: str = "10Gbps",
    delay: str = "1us",
    gateway_rate: str = "10Gbps",
    wan_rate: str = "100Gbps",
    wan_delay: str = "200us",
) -> str:
    """Fig. 9's network as a topology file (HPCC's format, ``kind = "file"``): two T2
    data centers, each 4 ToRs x 16 hosts and 8 spines with every ToR linked to every
    spine (2:1 at the ToRs), all at ``rate`` and ``delay``; in each a gateway linked to
    every spine at ``gateway_rate``; the two gateways joined by one link of ``wan_rate``
    and ``wan_delay``. Hosts are nodes 0-127 (host ``h`` in data center ``h // 64``, rack
    ``h // 16``), then each data center's ToRs, spines and gateway (nodes 140 and 153).
    Each host link is listed before the ToR's uplinks, so a ToR's ports are its hosts'
    first, as on the built-in leaf-spine."""
    links: list[tuple[int, int, str, str]] = []
    for dc in range(DC_COUNT):
        for h in range(DC_HOSTS):
            links.append((dc * DC_HOSTS + h, _tor(dc, h // DC_HOSTS_PER_TOR), rate, delay))
    for dc in range(DC_COUNT):
        for t in range(DC_TORS):
            for sp in range(DC_SPINES):
                links.append((_tor(dc, t), _spine(dc, sp), rate, delay))
        for sp in range(DC_SPINES):
            links.append((_spine(dc, sp), gateway_ids()[dc], gateway_rate, delay))
    links.append((gateway_ids()[0], gateway_ids()[1], wan_rate, wan_delay))
    hosts = DC_COUNT * DC_HOSTS
    switches = range(hosts, hosts + DC_COUNT * DC_SWITCHES)
    lines = [
        "# BFC paper, Fig. 9: two T2 data centers joined by their gateways, written by",
        "# shoal.reproduce.bfc.two_dc_topology() (tests/python/test_bfc_fig9.py checks it).",
        f"# DC links {rate} {delay}, gateway-spine {gateway_rate}, gateway-gateway "
        f"{wan_rate} {wan_delay}; hosts 0-{hosts - 1}, gateways {gateway_ids()[0]} and "
        f"{gateway_ids()[1]}.",
        f"{hosts + len(switches)} {len(switches)} {len(links)}",
        " ".join(str(s) for s in switches),
        *(f"{a} {b} {r} {d} 0" for a, b, r, d in links),
    ]
    return "\n".join(lines) + "\n"


def _site_of_hosts(scenario: dict[str, Any]) -> npt.NDArray[np.int64]:
    """Each host's site (its data center) from a resolved scenario's ``workload.sites``:
    ``"a-b"`` ranges or lists of indices; -1 for hosts in none."""
    from shoal.reproduce import ExperimentError

    sites = scenario.get("workload", {}).get("sites") or []
    if len(sites) < 2:
        raise ExperimentError(
            f"bfc.inter_dc: workload.sites = {sites!r}: the analysis needs the data "
            "centers as sites (accepted: two or more host sets)"
        )
    hosts = max(_hosts_of(site)[-1] for site in sites) + 1
    out = np.full(hosts, -1, dtype=np.int64)
    for i, site in enumerate(sites):
        out[_hosts_of(site)] = i
    return out


def _hosts_of(site: Any) -> list[int]:
    """The sorted hosts of a host set as the core reads it ("0-63,70" or a list)."""
    items = site.split(",") if isinstance(site, str) else list(site)
    hosts: set[int] = set()
    for item in items:
        lo, _, hi = str(item).strip().partition("-")
        hosts.update(range(int(lo), int(hi or lo) + 1))
    return sorted(hosts)


def _p99(values: Any) -> float:
    """The harness's p99 (sorted value at ``int(0.99 n)``), NaN for no values."""
    return harness_p99(values)


def _inter_dc_columns(run: StoredRun, scenario: dict[str, Any]) -> dict[str, Any]:
    site = _site_of_hosts(scenario)
    flows = run.flows(["src", "dst", "bytes", "fct_ns", "slowdown"])
    done = flows[flows["fct_ns"].notna()]
    inter = site[done["src"].to_numpy()] != site[done["dst"].to_numpy()]
    summary = run.summary()
    bfc = _bfc_counters(summary) or {}
    remote = float(scenario.get("workload", {}).get("remote_fraction", 0.0))
    out: dict[str, Any] = {
        "variant": "with inter-DC" if remote > 0 else "intra-DC only",
        "flows": float(len(flows)),
        "unfinished": float(flows["fct_ns"].isna().sum()),
        "inter_share": float(inter.mean()) if len(done) else float("nan"),
        "pauses": pause_totals(summary)["pauses"],
        "bfc_pauses": float(bfc.get("pauses", 0)),
    }
    for name, part in (("intra", done[~inter]), ("inter", done[inter])):
        out[f"{name}_flows"] = float(len(part))
        out[f"p99_{name}"] = _p99(part["slowdown"])
        out[f"p50_{name}"] = float(part["slowdown"].median()) if len(part) else float("nan")
        out[f"p99_fct_{name}_us"] = _p99(part["fct_ns"]) / 1e3
        which = size_bins(harness_packets(part["bytes"]), BINS["FB_Hadoop"])
        for b in range(len(BINS["FB_Hadoop"]) + 1):
            out[f"p99_{name}_bin{b + 1}"] = _p99(part["slowdown"][which == b])
        # The first bin (3 harness packets or less): two thirds of FB_Hadoop's flows.
        out[f"p99_fct_{name}_short_us"] = _p99(part["fct_ns"][which == 0]) / 1e3
    return out


def inter_dc(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 9's columns per run: which flows cross between the data centers (sender and
    receiver in different ``workload.sites``), the p99 and median of Shoal's own slowdown
    (FCT over the flow's FCT alone on the idle network, from each link's rate and delay
    on its path) of intra- and inter-DC flows, overall and per FB_Hadoop harness bin,
    and their p99 FCTs in us, of all and of the short ones (the first bin, 3 harness
    packets or less); ``variant`` says whether the run has inter-DC traffic. Then,
    among the runs of one variant and seed, ``p99_fct_inter_vs_bfc_us`` and
    ``p99_fct_inter_short_vs_bfc_us``: those p99 FCTs of inter-DC flows less BFC's (the
    paper's "600 us higher")."""
    extra = {i: _inter_dc_columns(run, sc) for i, _, run, sc in ok_runs(runs, store)}
    runs = join_columns(runs, extra)
    if "variant" not in runs or "scheme" not in runs:
        return runs
    keys = ["variant", *(["seed"] if "seed" in runs else [])]
    for _, group in runs[runs["variant"].notna()].groupby(keys):
        bfc = group[group["scheme"] == "bfc"]
        if len(bfc):
            for column in ("p99_fct_inter_us", "p99_fct_inter_short_us"):
                base = float(bfc[column].iloc[0])
                diff = column.removesuffix("_us") + "_vs_bfc_us"
                runs.loc[group.index, diff] = group[column] - base
    return runs


#: Fig. 9's bars: column -> label.
FIG9_BARS = {
    "p99_intra": "intra-DC",
    "p99_intra_bin1": "intra, <=3 pkts",
    "p99_inter": "inter-DC",
    "p99_inter_bin1": "inter, <=3 pkts",
}


def inter_dc_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 9: p99 FCT slowdown of intra- and inter-DC flows, all and of 3 packets or
    less, one bar per scheme, one panel per variant (with the inter-DC traffic, and
    without it)."""
    from shoal import plot

    variants = [v for v in ("with inter-DC", "intra-DC only") if v in set(runs.get("variant", []))]
    with plot._style():
        fig = plot._figure(3.4 * max(len(variants), 1), 2.8)
        axes = fig.subplots(1, max(len(variants), 1), squeeze=False)[0]
        for k, (ax, variant) in enumerate(zip(axes, variants, strict=False)):
            part = runs[runs["variant"] == variant]
            schemes = list(dict.fromkeys(part["scheme"]))
            width = 0.8 / max(len(schemes), 1)
            for i, scheme in enumerate(schemes):
                g = part[part["scheme"] == scheme]
                y = [float(g[c].mean()) for c in FIG9_BARS]
                ax.bar(
                    np.arange(len(FIG9_BARS)) + i * width,
                    y,
                    width,
                    label=SCHEME_NAMES.get(str(scheme), str(scheme)),
                )
            ax.set_xticks(
                np.arange(len(FIG9_BARS)) + width * (len(schemes) - 1) / 2,
                list(FIG9_BARS.values()),
                fontsize="x-small",
            )
            ax.set_yscale("log")
            ax.set_ylim(bottom=0.5)  # a slowdown is at least 1: bars near 1 stay visible
            ax.set_title(variant)
            ax.set_ylabel("p99 FCT slowdown")
            if k == 0:
                ax.legend(frameon=False, fontsize="x-small", loc="upper right")
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- Figs. 2 and 6

#: The quantiles of switch buffer occupancy the buffer analysis reports (``occ_p<q>_kb``).
OCCUPANCY_QUANTILES = (50, 90, 99)
#: A switch holding at least this fraction of its ``switch.buffer`` counts as full
#: (``occ_full_pct``): a lossy pool cannot take a packet more without dropping once its
#: reserves and the shared part are nearly used up.
FULL_FRACTION = 0.95


def directed_links(scenario: dict[str, Any]) -> int:
    """The egresses (directed links) of a ``leaf_spine`` topology: one per host, and per
    leaf one per host and spine below or above it, and per spine one per leaf."""
    from shoal.reproduce import ExperimentError

    topo = scenario.get("topology", {})
    if topo.get("kind") != "leaf_spine":
        raise ExperimentError(
            f'bfc: topology.kind must be "leaf_spine" to count its links, got {topo.get("kind")!r}'
        )
    leaves, spines, hosts = (int(topo[k]) for k in ("leaves", "spines", "hosts_per_leaf"))
    return leaves * hosts + leaves * (hosts + spines) + spines * leaves


def _window_ns(scenario: dict[str, Any], summary: Summary) -> float:
    """The window the occupancy distribution covers: ``[0, run.occupancy_until]``, or
    the whole run if that is unset or later than the run's end."""
    run_ns = float(summary["duration_ps"]) / 1e3
    until = (scenario.get("run") or {}).get("occupancy_until")
    return min(run_ns, time_s(until) * 1e9) if until is not None else run_ns


def _buffer_columns(run: StoredRun, scenario: dict[str, Any]) -> dict[str, Any]:
    """A run's occupancy quantiles (pooled over the switches), largest occupancy, and
    the time its links spent paused by PFC, over the occupancy window."""
    from shoal.reproduce import ExperimentError

    occupancy = run.table("occupancy")
    if occupancy is None:
        raise ExperimentError(
            f"bfc: {run.key} has no occupancy.parquet; the experiment must set "
            "run.occupancy_cdf = true"
        )
    summary = run.summary()
    window = _window_ns(scenario, summary)
    pooled = pooled_occupancy(occupancy)
    out: dict[str, Any] = {
        f"occ_p{q}_kb": pooled_quantile(pooled, q / 100) / 1e3 for q in OCCUPANCY_QUANTILES
    }
    out["occ_mean_kb"] = float(
        ((pooled["min_bytes"] + pooled["max_bytes"]) / 2 * pooled["time_ns"]).sum()
        / pooled["time_ns"].sum()
        / 1e3
    )
    buffer = (scenario.get("switch") or {}).get("buffer")
    out["occ_full_pct"] = (
        100 * time_at_least(pooled, FULL_FRACTION * size_bytes(buffer))
        if buffer is not None
        else float("nan")
    )
    pools = summary.get("pools") or []
    out["occ_max_mb"] = max((float(p["max"]) for p in pools), default=float("nan")) / 1e6
    out["window_ms"] = window / 1e6
    out["pauses"] = pause_totals(summary)["pauses"]
    out["packets_dropped"] = float((summary.get("packets") or {}).get("dropped", 0))
    links = directed_links(scenario)
    events = run.table("pfc")
    paused = (
        paused_ns_by_link(events, 0.0, window) if events is not None else pd.Series(dtype=float)
    )
    out["paused_pct"] = 100 * float(paused.sum()) / (links * window) if window > 0 else float("nan")
    out["paused_link_max_pct"] = 100 * float(paused.max()) / window if len(paused) else 0.0
    out["paused_links"] = float((paused > 0).sum())
    out["link_gbps"] = rate_bps(scenario.get("topology", {}).get("link_rate", 0)) / 1e9
    return out


def buffer_and_pauses(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Figs. 2 and 6 per run: switch buffer occupancy quantiles ``occ_p50_kb``,
    ``occ_p90_kb``, ``occ_p99_kb`` (the time-weighted distribution of a switch picked at
    random, over the window ``[0, run.occupancy_until]``; bucket upper edges, within
    1/64), ``occ_mean_kb`` (bucket midpoints), ``occ_max_mb`` (the largest occupancy of
    any switch during the run, exact), ``occ_full_pct`` (the time a switch held at least
    95% of its ``switch.buffer``, as :func:`time_at_least` counts it); ``paused_pct``
    (the time links were paused by PFC, as a percentage of the window summed over every
    directed link),
    ``paused_link_max_pct`` (the most paused link), ``paused_links`` (links paused at
    all), ``pauses`` (PAUSE frames sent in the whole run), ``packets_dropped``,
    ``window_ms`` and ``link_gbps``."""
    extra = {i: _buffer_columns(run, scenario) for i, _, run, scenario in ok_runs(runs, store)}
    return join_columns(runs, extra)


def _curve_label(row: pd.Series, by: str) -> str:
    if by == "scheme":
        return SCHEME_NAMES.get(str(row["scheme"]), str(row["scheme"]))
    if by == "link_gbps":
        return f"{row['link_gbps']:g} Gbps"
    return str(row[by])


def occupancy_cdf_figure(
    runs: pd.DataFrame, store: Path, *, by: str = "scheme", title: str | None = None
) -> Any:
    """Figs. 2 and 6a: the CDF of switch buffer occupancy (a switch picked at random, at
    a random time of the window), one line per ``by`` (``scheme`` or ``link_gbps``),
    seed 1 or the first seed; x on a log scale from 1 KB (the CDF there includes the time
    the buffer held less)."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.7)
        ax = fig.subplots()
        seen: set[str] = set()
        for _, row, run, _ in ok_runs(runs, store):
            label = _curve_label(row, by)
            if label in seen:  # another seed of the same curve
                continue
            seen.add(label)
            occupancy = run.table("occupancy")
            if occupancy is None:
                raise FileNotFoundError(f"run {run.key} has no occupancy.parquet")
            pooled = pooled_occupancy(occupancy)
            x = np.maximum(pooled["max_bytes"].to_numpy(dtype=float) / 1e3, 1.0)
            ax.step(x, pooled["cdf"].to_numpy(dtype=float), where="post", label=label)
        ax.set_xscale("log")
        ax.set_xlim(left=1.0)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("switch buffer occupancy (KB)")
        ax.set_ylabel("CDF (time)")
        ax.legend(frameon=False, fontsize="x-small")
        if title:
            fig.suptitle(title)
    return fig


def paused_bars_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 6b: the percentage of time links were paused by PFC, one bar per scheme
    (mean over seeds)."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.5)
        ax = fig.subplots()
        means = runs.groupby("scheme", sort=False)["paused_pct"].mean()
        names = [SCHEME_NAMES.get(str(s), str(s)) for s in means.index]
        ax.bar(range(len(means)), means.to_numpy(dtype=float))
        ax.set_xticks(range(len(means)), names, rotation=30, ha="right", fontsize="x-small")
        ax.set_ylabel("time links paused (%)")
        if title:
            fig.suptitle(title)
    return fig


#: Fig. 4's workloads: (label, ``workload.cdf``); Google is the harness's file (Homa's W3).
FIG4_WORKLOADS = (("Google", "homa_w3.cdf"), ("FB_Hadoop", "fb_hadoop"), ("WebSearch", "websearch"))
#: The end-to-end bandwidth-delay products Fig. 4's claims are read at: T1's (100 Gbps x
#: 8 us), Trend 1's example (100 Gbps x 12 us) and those at 4x and 16x the link speed.
FIG4_BDPS = {"100KB": 100e3, "150KB": 150e3, "600KB": 600e3, "2400KB": 2.4e6}


def _fig4_cdfs() -> list[tuple[str, pd.DataFrame]]:
    """Each of :data:`FIG4_WORKLOADS` as (label, :func:`shoal.analysis.flow_size_cdf`)."""
    from shoal.reproduce import experiments_root

    def source(cdf: str) -> Path | str:
        return experiments_root() / "bfc" / cdf if cdf.endswith(".cdf") else cdf

    return [(label, flow_size_cdf(source(cdf))) for label, cdf in FIG4_WORKLOADS]


def byte_cdf(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Fig. 4, computed from the workload files (nothing is simulated): one row per
    workload, ``flows_upto_<bdp>`` (the share of flows of at most that many bytes) and
    ``bytes_upto_<bdp>`` (the share of bytes they carry) for each of :data:`FIG4_BDPS`."""
    rows = []
    for label, points in _fig4_cdfs():
        row: dict[str, Any] = {"status": "ok", "scheme": label}
        for name, size in FIG4_BDPS.items():
            row[f"flows_upto_{name}"] = float(np.interp(size, points["bytes"], points["cdf"]))
            row[f"bytes_upto_{name}"] = byte_fraction_upto(points, size)
        rows.append(row)
    return pd.DataFrame(rows)


def byte_cdf_figure(runs: pd.DataFrame, store: Path, *, title: str | None = None) -> Any:
    """Fig. 4: the byte-weighted CDF of flow sizes per workload, with the BDPs of
    :data:`FIG4_BDPS` marked."""
    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.7)
        ax = fig.subplots()
        for label, points in _fig4_cdfs():
            smallest = max(points["bytes"].iloc[1], 1.0)
            sizes = np.geomspace(smallest, points["bytes"].iloc[-1], 200)
            ax.plot(sizes, [byte_fraction_upto(points, x) for x in sizes], label=label)
        for i, (name, size) in enumerate(FIG4_BDPS.items()):
            ax.axvline(size, color="0.6", linestyle=":", linewidth=0.8)
            ax.annotate(
                name, (size, 0.02 + 0.4 * (i % 2)), rotation=90, fontsize="xx-small", color="0.4"
            )
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("flow size (bytes)")
        ax.set_ylabel("share of bytes in flows up to this size")
        ax.legend(frameon=False, fontsize="x-small")
        if title:
            fig.suptitle(title)
    return fig


ANALYSES = {
    "bfc.byte_cdf": byte_cdf,
    "bfc.slowdown_bins": slowdown_bins,
    "bfc.queue_occupancy": queue_occupancy,
    "bfc.inter_dc": inter_dc,
    "bfc.buffer_and_pauses": buffer_and_pauses,
}
FIGURES = {
    "bfc.byte_cdf": byte_cdf_figure,
    "bfc.slowdown_bins": slowdown_figure,
    "bfc.inter_dc": inter_dc_figure,
    "bfc.occupancy_cdf": occupancy_cdf_figure,
    "bfc.paused_bars": paused_bars_figure,
    "bfc.queues": queues_figure,
}
