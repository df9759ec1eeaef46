"""Custom analysis of the BCC paper's experiments (bcc-shared-buffer-ecn.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = ["ANALYSES", "goodput"]


def _stop_time_s(run_dir: Path) -> float | None:
    """``run.stop_time`` of a stored run, in seconds."""
    path = run_dir / "scenario.json"
    if not path.is_file():
        return None
    stop = json.loads(path.read_text()).get("run", {}).get("stop_time")
    if stop is None:
        return None
    from shoal.reproduce._units import time_s

    return time_s(stop)


def goodput(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """TCP goodput per run: delivered bytes of the TCP flows / run.stop_time.

    Adds ``tcp_goodput_gbps`` (every TCP flow) and ``tcp_goodput_gbps_<dst>`` for each
    receiver of TCP flows (hosts), and ``udp_goodput_gbps``.
    """
    from shoal.store import Store

    db = Store(store)
    runs = runs.copy()
    extra: dict[int, dict[str, Any]] = {}
    for i, row in runs.iterrows():
        if row.get("status") != "ok":
            continue
        run_dir = db.run_dir(row["key"])
        stop = _stop_time_s(run_dir)
        if not stop:
            continue
        flows = pd.read_parquet(run_dir / "flows.parquet")
        tcp = flows[flows["kind"] == "tcp"]
        udp = flows[flows["kind"] == "udp"]
        values = {
            "tcp_goodput_gbps": tcp["delivered_bytes"].sum() * 8 / stop / 1e9,
            "udp_goodput_gbps": udp["delivered_bytes"].sum() * 8 / stop / 1e9,
        }
        for dst, g in tcp.groupby("dst"):
            values[f"tcp_goodput_gbps_{int(dst)}"] = g["delivered_bytes"].sum() * 8 / stop / 1e9
        extra[i] = values
    add = pd.DataFrame.from_dict(extra, orient="index")
    return runs.join(add) if not add.empty else runs


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "bcc.goodput": goodput,
}
