"""Per-flow time series from Python (``run.series``): the ``series`` table of chosen
flows, from the API and the CLI, and clean errors for bad settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import shoal

INCAST = {
    "topology": {"kind": "star", "hosts": 5, "link_rate": "100Gbps", "link_delay": "1us"},
    "switch": {
        "flow_control": {"kind": "pfc"},
        "marking": {"red": {"kmin": "40KB", "kmax": "160KB", "pmax": 0.2}},
        "ecn": {"non_ect": "pass"},
    },
    "workload": {
        "pattern": "incast",
        "senders": "0-3",
        "receiver": 4,
        "size": "1MB",
        "transport": "rdma",
    },
}


def traced(series: dict[str, Any], **rdma: Any) -> pd.DataFrame:
    table = shoal.run({**INCAST, "rdma": rdma, "run": {"series": series}}).series
    assert table is not None
    return table


def test_dcqcn_series_show_the_incast_slowing_the_chosen_flows(tmp_path: Path) -> None:
    """Four DCQCN senders into one 100 Gbps link: each traced flow starts at the line
    rate and is cut below its fair share (25 Gbps) once CNPs come; alpha stays in
    [0, 1]; the table is in the run directory too."""
    result = shoal.run({**INCAST, "run": {"series": {"flows": [1, 2]}}}, out=tmp_path / "r")
    table = result.series
    assert table is not None and list(table.columns) == [
        "flow",
        "time_ns",
        "cwnd_bytes",
        "rate_bps",
        "alpha",
        "target_rate_bps",
        "utilization",
        "rtt_ns",
    ]
    assert sorted(table.flow.unique()) == [1, 2]
    for _, rows in table.groupby("flow"):
        assert rows.rate_bps.iloc[0] == 100e9 and rows.rate_bps.min() < 25e9
        assert rows.alpha.between(0, 1).all() and rows.utilization.isna().all()
        assert rows.time_ns.is_monotonic_increasing
    assert shoal.load(tmp_path / "r").series.equals(table)


def test_hpcc_series_hold_its_utilization() -> None:
    table = traced({"sample": 2}, cc="hpcc", window="max_bdp")
    assert table.flow.nunique() == 2
    assert table.utilization.notna().all() and table.alpha.isna().all()
    assert (table.cwnd_bytes > 0).all()


def test_the_cli_sets_a_series(tmp_path: Path) -> None:
    path = tmp_path / "incast.toml"
    path.write_text(
        '[topology]\nkind = "star"\nhosts = 3\n[workload]\npattern = "incast"\nreceiver = 2\n'
    )
    subprocess.run(
        [sys.executable, "-m", "shoal", "run", str(path), "-o", str(tmp_path / "r"), "--quiet"]
        + ["--set", "run.series.min_bytes=1KB"],
        check=True,
    )
    table = pd.read_parquet(tmp_path / "r" / "series.parquet")
    assert sorted(table.flow.unique()) == [0, 1] and table.cwnd_bytes.notna().all()


@pytest.mark.parametrize(
    ("series", "message"),
    [
        ({}, r"run\.series: chooses no flow"),
        ({"sample": 0}, r"run\.series\.sample: 0 is not accepted"),
        ({"min_bytes": "2MB", "max_bytes": "1MB"}, r"run\.series\.max_bytes"),
        ({"flow": [1]}, r"run\.series.*flow"),
    ],
)
def test_bad_series_settings_are_refused_naming_the_key(
    series: dict[str, Any], message: str
) -> None:
    with pytest.raises(shoal.ScenarioError, match=message):
        shoal.run({**INCAST, "run": {"series": series}})
