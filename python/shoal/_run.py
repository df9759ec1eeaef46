"""Running a scenario, the :class:`Result` object and the run directory format.

A run directory holds:

* ``flows.parquet``: one row per flow (columns of :attr:`Result.flows`),
* ``summary.json``: the headline metrics (see :mod:`shoal._summary`),
* ``scenario.json``: the resolved scenario (every default filled in),
* ``queues.parquet``: queue/pool occupancy samples, when ``run.sample_interval`` is set.

Directories are written atomically: everything goes into a hidden temporary directory
next to the target, which is renamed into place only once complete.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import threading
import time
import warnings as _warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used, so that `import shoal` stays fast
    import pandas as pd

from shoal import _core
from shoal._scenario import Overrides, ScenarioInput, load_scenario
from shoal._summary import compute_summary

__all__ = ["Result", "RunInterrupted", "ShoalWarning", "run", "load", "trace", "write_parquet"]

#: Column order of the flow table.
FLOW_COLUMNS = (
    "id",
    "src",
    "dst",
    "bytes",
    "start_ns",
    "finish_ns",
    "fct_ns",
    "ideal_fct_ns",
    "slowdown",
    "retransmits",
    "timeouts",
    "priority",
    "kind",
    "delivered_bytes",
    "finished",
    "query",
)
#: Column order of the queue samples.
SAMPLE_COLUMNS = ("time_ns", "switch", "port", "queue", "bytes", "pool_bytes", "tx_bytes")
#: Column order of an exported trace.
TRACE_COLUMNS = ("id", "src", "dst", "bytes", "start_ns", "priority")

_PS_PER_MS = 1_000_000_000
_TARGET_CALL_S = 0.1


class ShoalWarning(UserWarning):
    """A legal but questionable scenario (e.g. load above 1), or flows left unfinished."""


def _warn(message: str, stacklevel: int = 3) -> None:
    _warnings.warn(message, ShoalWarning, stacklevel=stacklevel)


class RunInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C) before it finished; nothing was written."""

    def __init__(self, now_ps: int) -> None:
        super().__init__(f"interrupted at simulated time {_fmt_ps(now_ps)}; no results written")
        self.now_ps = now_ps


def _frame(columns: Mapping[str, Any], order: tuple[str, ...]) -> pd.DataFrame:
    """A DataFrame with known columns first (in order), then any extra ones."""
    import numpy as np
    import pandas as pd

    names = [c for c in order if c in columns] + [c for c in columns if c not in order]
    return pd.DataFrame({name: np.asarray(columns[name]) for name in names})


@dataclass(slots=True)
class Result:
    """The outcome of a run.

    Attributes:
        flows: one row per flow: ``id src dst bytes start_ns finish_ns fct_ns
            ideal_fct_ns slowdown retransmits timeouts priority kind delivered_bytes
            finished``. Times are nanoseconds (float); ``finish_ns``/``fct_ns`` are NaN
            for unfinished flows.
        summary: the headline metrics (the content of ``summary.json``).
        samples: queue occupancy samples (``time_ns switch port queue bytes
            pool_bytes``), or ``None`` when ``run.sample_interval`` is unset.
        scenario: the resolved scenario, every default filled in.
        warnings: scenario and run warnings.
        path: the run directory, when the result was written or loaded.
    """

    flows: pd.DataFrame
    summary: dict[str, Any]
    samples: pd.DataFrame | None
    scenario: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    path: Path | None = None

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        fin = self.summary.get("flows", {}).get("finished", "?")
        return f"Result(flows={len(self.flows)}, finished={fin}{where})"

    def write(self, out: str | os.PathLike[str]) -> Path:
        """Write the run directory ``out`` atomically and return its path.

        An existing directory at ``out`` is replaced only once the new one is complete.
        """
        target = _write_run_dir(
            out,
            lambda path: write_parquet(self.flows, path),
            None if self.samples is None else (lambda path: write_parquet(self.samples, path)),
            self.scenario,
            self.summary,
        )
        self.path = target
        return target


def _write_run_dir(
    out: str | os.PathLike[str],
    write_flows: Any,
    write_samples: Any,
    scenario: Mapping[str, Any],
    summary: Mapping[str, Any],
) -> Path:
    """Write a run directory atomically (see :meth:`Result.write`); return its path."""
    target = Path(out).expanduser().absolute()
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{target.name}.tmp-{os.getpid()}"
    old = parent / f".{target.name}.old-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        write_flows(tmp / "flows.parquet")
        if write_samples is not None:
            write_samples(tmp / "queues.parquet")
        _write_json(scenario, tmp / "scenario.json")
        _write_json(summary, tmp / "summary.json")
        if target.exists():
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not target.exists():
            old.rename(target)
        raise
    return target


def _write_json(data: Any, path: Path) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False, allow_nan=False) + "\n")


def write_parquet(frame: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write a DataFrame deterministically: same data -> byte-identical file.

    No pandas index or schema metadata, fixed compression (zstd level 3), one row group.
    """
    import pyarrow as pa

    _write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


def _write_columns(columns: Mapping[str, Any], order: tuple[str, ...], path: Path) -> None:
    """Like ``write_parquet(_frame(columns, order), path)`` (the same bytes), without pandas."""
    import pyarrow as pa

    names = [c for c in order if c in columns] + [c for c in columns if c not in order]
    arrays = [_arrow_array(columns[name]) for name in names]
    _write_table(pa.Table.from_arrays(arrays, names=names), path)


def _arrow_array(values: Any) -> Any:
    """An Arrow array equal to what ``pa.Table.from_pandas`` makes of the column (NaN ->
    null), built from the buffers: ``pa.array`` would import pandas (~0.5-1 s)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(values, list) and all(isinstance(v, str) for v in values):
        data = [v.encode() for v in values]
        offsets = np.zeros(len(data) + 1, dtype=np.int32)
        np.cumsum([len(b) for b in data], out=offsets[1:])
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
        return pa.Array.from_buffers(pa.string(), len(data), buffers, null_count=0)
    arr = np.ascontiguousarray(values)
    if arr.dtype == np.bool_:
        bits = np.packbits(arr, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(arr), [None, pa.py_buffer(bits)], null_count=0)
    if arr.dtype.kind not in "iuf":
        return pa.array(arr, from_pandas=True)
    validity, nulls = None, 0
    if arr.dtype.kind == "f":
        nan = np.isnan(arr)
        nulls = int(nan.sum())
        if nulls:
            validity = pa.py_buffer(np.packbits(~nan, bitorder="little"))
    typ = pa.from_numpy_dtype(arr.dtype)
    return pa.Array.from_buffers(typ, len(arr), [validity, pa.py_buffer(arr)], null_count=nulls)


def _write_table(table: Any, path: str | os.PathLike[str]) -> None:
    import pyarrow.parquet as pq

    pq.write_table(
        table.replace_schema_metadata(None),
        path,
        compression="zstd",
        compression_level=3,
        row_group_size=max(table.num_rows, 1),
        write_statistics=True,
        store_schema=False,
    )


def load(path: str | os.PathLike[str]) -> Result:
    """Read a run directory written by :func:`run` or ``shoal run --out``.

    Raises:
        FileNotFoundError: when ``path`` is not a run directory.
    """
    root = Path(path).expanduser()
    if not (root / "summary.json").is_file():
        raise FileNotFoundError(f"not a Shoal run directory (no summary.json): {root}")
    summary = json.loads((root / "summary.json").read_text())
    scenario_file = root / "scenario.json"
    scenario = (
        json.loads(scenario_file.read_text())
        if scenario_file.is_file()
        else summary.get("scenario", {})
    )
    import pandas as pd

    flows = pd.read_parquet(root / "flows.parquet")
    queues = root / "queues.parquet"
    samples = pd.read_parquet(queues) if queues.is_file() else None
    return Result(
        flows=flows,
        summary=summary,
        samples=samples,
        scenario=scenario,
        warnings=list(summary.get("warnings", [])),
        path=root.absolute(),
    )


def _resolve(
    scenario: ScenarioInput, overrides: Overrides
) -> tuple[str, dict[str, Any], list[str]]:
    loaded = load_scenario(scenario, overrides)
    resolved_json, warnings = _core.resolve(loaded.to_json())
    return resolved_json, json.loads(resolved_json), list(warnings)


def trace(scenario: ScenarioInput, *, set: Overrides = None) -> pd.DataFrame:  # noqa: A002
    """The flows the scenario's workload would generate (without simulating them).

    Columns ``id src dst bytes start_ns priority``; the frame can be written as CSV and
    replayed with ``workload.pattern = "trace"``.
    """
    resolved_json, _, _ = _resolve(scenario, set)
    return _frame(_core.generate_trace(resolved_json), TRACE_COLUMNS)


def run(
    scenario: ScenarioInput,
    *,
    out: str | os.PathLike[str] | None = None,
    set: Overrides = None,  # noqa: A002 - mirrors the CLI's --set
    progress: bool = False,
) -> Result:
    """Simulate a scenario.

    Args:
        scenario: a path to a TOML scenario file, TOML text, or a mapping of tables.
        out: write the run directory here (atomically) when given.
        set: overrides, ``["switch.ecn.k=200KB", "run.seed=2"]`` or
            ``{"switch.ecn.k": "200KB"}``. Text values are parsed as TOML values when
            they are one, else kept as strings.
        progress: show a progress bar on stderr.

    Returns:
        The :class:`Result`; its ``path`` is set when ``out`` was given.

    Warns:
        ShoalWarning: for each scenario warning (before simulating) and for run
            warnings such as unfinished flows (after); all are also in
            ``Result.warnings`` and ``summary.json``.

    Raises:
        ScenarioError: the scenario is invalid (the message names the key path).
        RunInterrupted: Ctrl-C; nothing is written.
    """
    flow_columns, raw_samples, summary, resolved = _simulate(scenario, set, progress)
    flows = _frame(flow_columns, FLOW_COLUMNS)
    samples = None if raw_samples is None else _frame(raw_samples, SAMPLE_COLUMNS)
    result = Result(
        flows=flows,
        summary=summary,
        samples=samples,
        scenario=resolved,
        warnings=list(summary["warnings"]),
    )
    if out is not None:
        result.write(out)
    return result


def _simulate(
    scenario: ScenarioInput,
    overrides: Overrides,
    progress: bool,
    preload: Sequence[str] = (),
) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any], dict[str, Any]]:
    """Simulate; return the flow columns, the sample columns (or None), the summary and
    the resolved scenario. Needs no pandas (the columns are numpy arrays / lists).

    ``preload``: modules to import in a background thread while the core simulates (it
    releases the GIL), so that their import time overlaps the simulation.
    """
    resolved_json, resolved, warnings = _resolve(scenario, overrides)
    for message in warnings:
        _warn(message, stacklevel=4)
    sim = _core.Simulation(resolved_json)
    if progress:  # imported before the preloader starts: no concurrent imports
        import rich.progress  # noqa: F401
    loader = _Preloader(preload) if preload else None
    started = time.perf_counter()
    try:
        if progress:
            _run_with_progress(sim)
        else:
            _run_loop(sim, None)
    finally:
        wall = time.perf_counter() - started
        if loader is not None:
            loader.join()

    flow_columns = dict(sim.flows())
    raw_samples = sim.samples()
    run_warnings = list(warnings) + [f"invariant violated: {v}" for v in sim.check_invariants()]
    summary = compute_summary(
        flow_columns,
        sim.counters(),
        resolved,
        version=_core.__version__,
        warnings=run_warnings,
        wall_time_s=wall,
    )
    for message in summary["warnings"][len(warnings) :]:
        _warn(message, stacklevel=4)
    return flow_columns, raw_samples, summary, resolved


def run_to_dir(
    scenario: ScenarioInput,
    out: str | os.PathLike[str],
    *,
    set: Overrides = None,  # noqa: A002
    progress: bool = False,
    preload: Sequence[str] = ("numpy", "numpy.ma", "pyarrow", "pyarrow.parquet"),
) -> tuple[Path, dict[str, Any]]:
    """Simulate and write the run directory ``out``, without building DataFrames (what
    ``shoal run`` does: it never imports pandas). Same files as ``run(..., out=out)``.

    ``preload``: modules imported in the background while simulating (see ``_simulate``).

    Returns:
        The run directory and the summary.
    """
    flow_columns, raw_samples, summary, resolved = _simulate(scenario, set, progress, preload)
    target = _write_run_dir(
        out,
        lambda path: _write_columns(flow_columns, FLOW_COLUMNS, path),
        None
        if raw_samples is None
        else (lambda path: _write_columns(raw_samples, SAMPLE_COLUMNS, path)),
        resolved,
        summary,
    )
    return target, summary


class _Preloader:
    """Imports modules in a daemon thread; :meth:`join` waits for it and re-raises nothing
    (a module that fails to import fails again, with its real error, where it is used)."""

    def __init__(self, modules: Sequence[str]) -> None:
        self._thread = threading.Thread(
            target=self._load, args=(tuple(modules),), name="shoal-preload", daemon=True
        )
        self._thread.start()

    @staticmethod
    def _load(modules: tuple[str, ...]) -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - retried (and reported) where used
                continue

    def join(self) -> None:
        self._thread.join()


def _run_loop(sim: Any, on_step: Any) -> None:
    """Advance ``sim`` to the end in chunks sized to take about 0.1 s of wall time."""
    chunk = _PS_PER_MS
    try:
        while True:
            t0 = time.perf_counter()
            target = sim.now_ps + chunk
            if sim.end_ps is not None:
                target = min(target, sim.end_ps)
            over = sim.run(target)
            elapsed = time.perf_counter() - t0
            if on_step is not None:
                on_step()
            if over or sim.done or (sim.end_ps is not None and sim.now_ps >= sim.end_ps):
                return
            # Adapt: aim for ~0.1 s per call, never grow or shrink more than 4x at once.
            scale = _TARGET_CALL_S / max(elapsed, 1e-4)
            chunk = int(max(1_000, chunk * min(4.0, max(0.25, scale))))
    except KeyboardInterrupt:
        raise RunInterrupted(sim.now_ps) from None


def _run_with_progress(sim: Any) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (
        TextColumn("[bold]simulating"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("{task.fields[flows]}"),
        TextColumn("t={task.fields[simtime]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
    )
    start = time.perf_counter()
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("run", total=1.0, flows="", simtime="", rate="")

        def update() -> None:
            if sim.end_ps:
                frac = sim.now_ps / sim.end_ps
            elif sim.flows_total:
                frac = sim.flows_finished / sim.flows_total
            else:
                frac = 0.0
            elapsed = max(time.perf_counter() - start, 1e-9)
            bar.update(
                task,
                completed=min(max(frac, 0.0), 1.0),
                flows=f"{sim.flows_finished}/{sim.flows_total} flows",
                simtime=_fmt_ps(sim.now_ps),
                rate=f"{sim.events / elapsed / 1e6:.2f} M events/s",
            )

        _run_loop(sim, update)


def _fmt_ps(ps: int) -> str:
    for unit, scale in (("s", 10**12), ("ms", 10**9), ("µs", 10**6)):
        if ps >= scale:
            return f"{ps / scale:.4g} {unit}"
    return f"{ps / 1e3:.4g} ns"
