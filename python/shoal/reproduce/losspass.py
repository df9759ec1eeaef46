"""Custom analysis of the LossPass paper's experiments (losspass-pushout.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from shoal.reproduce._runs import join_columns, ok_runs, stop_time_s

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = ["ANALYSES", "FIGURES", "SCHEME_NAMES", "queries", "throughput_qct_figure"]


def _compare(runs: pd.DataFrame) -> pd.DataFrame:
    """Per group of runs that differ only in the scheme (same seed, load, phase...):

    ``qct_vs_best_other`` = the lowest mean QCT of the other schemes / this one's (> 1:
    this scheme has the lowest QCT); ``qct_vs_best_ecn`` the same against the ``ecn*``
    schemes only; ``goodput_vs_best_other`` = this goodput / the highest of the others.
    """
    axes = [c for c in runs.attrs.get("axes", []) if c != "scheme" and c in runs]
    ok = runs["status"] == "ok"
    cols: dict[str, dict[int, float]] = {
        "qct_vs_best_other": {},
        "qct_vs_best_ecn": {},
        "goodput_vs_best_other": {},
    }
    groups = runs[ok].groupby(axes, dropna=False) if axes else [((), runs[ok])]
    for _, g in groups:
        for i, row in g.iterrows():
            others = g[g["scheme"] != row["scheme"]]
            ecn = others[others["scheme"].astype(str).str.startswith("ecn")]
            q = row.get("mean_qct_ns")
            if q is not None and isinstance(q, float) and math.isfinite(q) and q > 0:
                if "mean_qct_ns" in others and others["mean_qct_ns"].notna().any():
                    cols["qct_vs_best_other"][i] = others["mean_qct_ns"].min() / q
                if "mean_qct_ns" in ecn and ecn["mean_qct_ns"].notna().any():
                    cols["qct_vs_best_ecn"][i] = ecn["mean_qct_ns"].min() / q
            gp = row.get("goodput_gbps")
            if "goodput_gbps" in others and others["goodput_gbps"].notna().any() and gp:
                cols["goodput_vs_best_other"][i] = gp / others["goodput_gbps"].max()
    for name, values in cols.items():
        runs[name] = pd.Series(values, dtype="float64")
    return runs


def queries(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Query completion times, goodput and pushout counters per run.

    Adds ``mean_qct_ns p50_qct_ns p99_qct_ns queries queries_finished`` (from
    ``summary.json``), ``goodput_gbps`` (bytes delivered by every TCP flow /
    ``run.stop_time``; every experiment here has one receiver), ``long_goodput_gbps``
    (the same for flows that are not part of a query: the long-lived background),
    ``pushouts`` and ``full_drops`` (packets pushed out of a queue / refused by a full
    buffer), and the per-group comparisons of :func:`_compare`.
    """
    extra: dict[int, dict[str, Any]] = {}
    for i, _, run, scenario in ok_runs(runs, store):
        summary = run.summary()
        q = summary.get("queries") or {}
        drops = summary.get("drops") or {}
        values: dict[str, Any] = {
            "queries": q.get("count"),
            "queries_finished": q.get("finished"),
            "mean_qct_ns": q.get("mean_qct_ns"),
            "p50_qct_ns": q.get("p50_qct_ns"),
            "p99_qct_ns": q.get("p99_qct_ns"),
            "pushouts": drops.get("pushout"),
            "full_drops": drops.get("pool_full"),
        }
        stop = stop_time_s(scenario)
        if stop:
            flows = run.flows()
            tcp = flows[flows["kind"] == "tcp"]
            background = tcp[tcp["query"] < 0] if "query" in tcp else tcp
            values["goodput_gbps"] = tcp["delivered_bytes"].sum() * 8 / stop / 1e9
            values["long_goodput_gbps"] = background["delivered_bytes"].sum() * 8 / stop / 1e9
        extra[i] = values
    if not extra:
        return runs
    runs = join_columns(runs, extra)
    for col in ("mean_qct_ns", "p50_qct_ns", "p99_qct_ns", "goodput_gbps"):
        if col in runs:
            runs[col] = pd.to_numeric(runs[col], errors="coerce")
    return _compare(runs)


#: How the figures name the schemes (the paper's names; ECN with its K in packets).
SCHEME_NAMES = {"droptail": "DropTail", "pias": "PIAS", "losspass": "LossPass"}


def _scheme_name(scheme: str) -> str:
    if scheme.startswith("ecn_k"):
        return f"ECN K={scheme.removeprefix('ecn_k')}"
    return SCHEME_NAMES.get(scheme, scheme)


def throughput_qct_figure(
    runs: pd.DataFrame,
    store: Path,
    *,
    phase: str = "workload.start",
    queries: str = "10ms",
    iperf: str = "1000s",
    title: str | None = None,
) -> Any:
    """Fig. 3: throughput (the ``iperf`` phase) against average QCT (the ``queries``
    phase of the same scheme), one point per scheme, named in the legend; means over
    seeds. The schemes are categories: no line joins them."""
    from shoal import plot

    qct = runs[runs[phase] == queries].groupby("scheme", sort=False)["mean_qct_ns"].mean()
    gbps = runs[runs[phase] == iperf].groupby("scheme", sort=False)["goodput_gbps"].mean()
    with plot._style():
        fig = plot._figure(3.6, 3.0)
        ax = fig.subplots()
        for i, scheme in enumerate(qct.index.intersection(gbps.index, sort=False)):
            ax.plot(
                [qct[scheme] / 1e6],
                [gbps[scheme]],
                linestyle="none",
                marker=plot._MARKERS[i % len(plot._MARKERS)],
                markersize=7,
                label=_scheme_name(str(scheme)),
            )
        ax.set_xlabel("average query completion time (ms)")
        ax.set_ylabel("throughput, 2 long flows (Gbps)")
        ax.margins(x=0.1, y=0.15)
        plot._legend(fig, ax, 0, ncols=3)
        if title:
            fig.suptitle(title)
    return fig


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "losspass.queries": queries,
}
FIGURES: dict[str, Callable[..., Any]] = {
    "losspass.throughput_qct": throughput_qct_figure,
}
