"""Shoal: a fast packet-level simulator of datacenter networks and switch buffers.

The simulator itself is the Rust core (``shoal._core``); this package reads scenarios,
runs them, computes the headline metrics and stores results::

    import shoal

    result = shoal.run("my.toml", set=["switch.ecn.k=200KB"], out="results/x")
    result.flows          # pandas DataFrame, one row per flow
    result.summary        # headline metrics (dict)
    shoal.load("results/x").flows
"""

from __future__ import annotations

from shoal import _core, advise
from shoal._core import ScenarioError
from shoal._run import Result, RunInterrupted, ShoalWarning, load, run, trace
from shoal._scenario import apply_overrides, load_scenario, parse_value
from shoal._summary import compute_summary, summary_table
from shoal import plot, report
from shoal._sweep import SweepError, load_sweep, sweep, sweep_table
from shoal.store import Store, StoreError

__version__: str = _core.__version__


def default_scenario_toml() -> str:
    """The scenario schema: every key with its default value, as commented TOML."""
    return _core.default_scenario_toml()


__all__ = [
    "Result",
    "RunInterrupted",
    "ScenarioError",
    "ShoalWarning",
    "Store",
    "StoreError",
    "SweepError",
    "__version__",
    "advise",
    "apply_overrides",
    "compute_summary",
    "default_scenario_toml",
    "load",
    "load_scenario",
    "load_sweep",
    "parse_value",
    "plot",
    "report",
    "run",
    "summary_table",
    "sweep",
    "sweep_table",
    "trace",
]
