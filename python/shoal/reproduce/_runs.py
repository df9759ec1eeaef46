"""What every paper analysis does with a stored sweep: walk its successful runs, read
their files through the store, and join the computed columns back onto the runs table."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from shoal.reproduce._units import time_s
from shoal.store import Store

if TYPE_CHECKING:
    from shoal._summary_types import Summary

__all__ = ["StoredRun", "join_columns", "ok_runs", "stop_time_s"]


class StoredRun:
    """One finished run of a store, its files read when asked for (an analysis reads
    only the tables it needs: a run's queue samples can be large)."""

    def __init__(self, store: Store, key: str) -> None:
        self.store = store
        self.key = key

    def summary(self) -> Summary:
        """The run's ``summary.json``."""
        return self.store.summary(self.key)

    def flows(self, columns: list[str] | None = None) -> pd.DataFrame:
        """The run's flows (only ``columns``, when given)."""
        flows = self.store.table(self.key, "flows", columns)
        if flows is None:
            raise FileNotFoundError(f"run {self.key} of {self.store.root} has no flows")
        return flows

    def table(self, name: str, columns: list[str] | None = None) -> pd.DataFrame | None:
        """The run's table ``name`` (``queues``, ``pfc``, ...), None when it has none."""
        return self.store.table(self.key, name, columns)


def ok_runs(
    runs: pd.DataFrame, store: Path
) -> Iterator[tuple[Any, pd.Series, StoredRun, dict[str, Any]]]:
    """(row index, row, run, resolved scenario) of every run that succeeded."""
    db = Store(store)
    for i, row in runs.iterrows():
        if row.get("status") != "ok":
            continue
        yield i, row, StoredRun(db, row["key"]), db.scenario(row["key"])


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
