"""Custom analysis of the BCC paper's experiments (bcc-shared-buffer-ecn.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from shoal.reproduce._runs import join_columns, ok_runs, stop_time_s

if TYPE_CHECKING:
    from shoal.reproduce import Experiment

__all__ = ["ANALYSES", "data_loss", "goodput"]


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


def data_loss(exp: Experiment, runs: pd.DataFrame, store: Path) -> pd.DataFrame:
    """Switch drops per data packet sent, ``data_loss_rate``.

    ``loss_rate`` counts ACKs in its denominator, and the authors' ns-2 script averages
    the drop ratio over all 32 switch ports, 24 of which carry only ACKs; on a star, where
    each data packet crosses one switch queue, drops per data packet is the measure both
    simulators share.
    """
    extra: dict[int, dict[str, Any]] = {}
    for i, _, run, _scenario in ok_runs(runs, store):
        summary = run.summary()
        sent = summary.get("counters", {}).get("data_packets_sent")
        if sent:
            extra[i] = {"data_loss_rate": summary["packets"]["switch_dropped"] / sent}
    return join_columns(runs, extra)


ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {
    "bcc.goodput": goodput,
    "bcc.data_loss": data_loss,
}
