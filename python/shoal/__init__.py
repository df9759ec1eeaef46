"""Shoal: a fast packet-level simulator of datacenter networks and switch buffers.

The simulator itself is the Rust core (``shoal._core``); this package reads scenarios,
runs them, reads the headline metrics and stores results::

    import shoal

    result = shoal.run("my.toml", set=["switch.marking.cutoff.k=200KB"], out="results/x")
    result.flows          # pandas DataFrame, one row per flow
    result.summary        # headline metrics (a dict, typed as shoal.Summary)
    shoal.load("results/x").flows
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from shoal import _core
from shoal._core import ScenarioError
from shoal._files import CorruptFileError
from shoal._run import Result, RunInterrupted, ShoalWarning, load, run, table_schemas, trace
from shoal._scenario import apply_overrides, load_scenario, parse_value
from shoal._summary import summary_schema, summary_table

if TYPE_CHECKING:
    from shoal import advise, plot, report
    from shoal._summary_types import Summary
    from shoal._sweep import SweepError, SweepInterrupted, load_sweep, sweep, sweep_table
    from shoal.store import Store, StoreError

__version__: str = _core.__version__

# Imported on first use (module-level __getattr__, PEP 562), so that `import shoal` and
# the `shoal` CLI start fast: pandas / pyarrow are imported only by the functions that
# need them, and matplotlib / duckdb / dask only by plots, the store and sweeps. The
# summary's types are for type checkers and readers: no run needs them.
_LAZY_MODULES = {"advise", "plot", "report", "store"}
_LAZY_ATTRS = {
    "SweepError": "shoal._sweep",
    "SweepInterrupted": "shoal._sweep",
    "load_sweep": "shoal._sweep",
    "sweep": "shoal._sweep",
    "sweep_table": "shoal._sweep",
    "Store": "shoal.store",
    "StoreError": "shoal.store",
    "Summary": "shoal._summary_types",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        module = importlib.import_module(f"shoal.{name}")
    elif name in _LAZY_ATTRS:
        module = getattr(importlib.import_module(_LAZY_ATTRS[name]), name)
    else:
        raise AttributeError(f"module 'shoal' has no attribute {name!r}")
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_ATTRS))


def default_scenario_toml() -> str:
    """The scenario schema: every key with its default value, as commented TOML."""
    return _core.default_scenario_toml()


def presets() -> dict[str, dict[str, Any]]:
    """The named presets a scenario may start from (``preset = "<name>"`` at its top):
    name -> ``{"description": ..., <tables of scenario keys>}``. A scenario's own keys win
    over its preset's."""
    import tomllib

    return tomllib.loads(_core.presets_toml())


__all__ = [
    "CorruptFileError",
    "Result",
    "RunInterrupted",
    "ScenarioError",
    "ShoalWarning",
    "Store",
    "StoreError",
    "Summary",
    "SweepError",
    "SweepInterrupted",
    "__version__",
    "advise",
    "apply_overrides",
    "default_scenario_toml",
    "presets",
    "load",
    "load_scenario",
    "load_sweep",
    "parse_value",
    "plot",
    "report",
    "run",
    "summary_schema",
    "summary_table",
    "sweep",
    "sweep_table",
    "table_schemas",
    "trace",
]
