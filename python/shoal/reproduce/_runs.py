"""What every paper analysis does with a stored sweep: walk its successful runs, read a
run's stop time, and join the computed columns back onto the runs table."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from shoal.reproduce._units import time_s

__all__ = ["join_columns", "ok_runs", "stop_time_s"]


def ok_runs(
    runs: pd.DataFrame, store: Path
) -> Iterator[tuple[Any, pd.Series, Path, dict[str, Any]]]:
    """(row index, row, run directory, resolved scenario) of every run that succeeded."""
    from shoal.store import Store

    db = Store(store)
    for i, row in runs.iterrows():
        if row.get("status") != "ok":
            continue
        run_dir = db.run_dir(row["key"])
        path = run_dir / "scenario.json"
        yield i, row, run_dir, json.loads(path.read_text()) if path.is_file() else {}


def stop_time_s(scenario: Mapping[str, Any]) -> float | None:
    """``run.stop_time`` of a resolved scenario, in seconds (None when it has none)."""
    stop = scenario.get("run", {}).get("stop_time")
    return None if stop is None else time_s(stop)


def join_columns(runs: pd.DataFrame, extra: Mapping[Any, Mapping[str, Any]]) -> pd.DataFrame:
    """``runs`` with the columns of ``extra`` (row index -> values) joined on, replacing
    columns of the same name."""
    add = pd.DataFrame.from_dict(dict(extra), orient="index")
    if add.empty:
        return runs
    kept = runs.drop(columns=[c for c in add.columns if c in runs.columns])
    out = kept.join(add)
    # join drops attrs (pandas keeps them only when every frame has the same): without
    # the axis list the figures could not refuse to average runs that differ in an axis.
    out.attrs = dict(runs.attrs)
    return out
