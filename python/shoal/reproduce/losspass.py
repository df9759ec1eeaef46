"""Custom analysis of the LossPass paper's experiments (losspass-pushout.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from shoal.reproduce._runs import join_columns, ok_runs, stop_time_s

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = ["ANALYSES", "queries"]


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
    for i, _, run_dir, scenario in ok_runs(runs, store):
        summary = json.loads((run_dir / "summary.json").read_text())
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
            flows = pd.read_parquet(run_dir / "flows.parquet")
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


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "losspass.queries": queries,
}
