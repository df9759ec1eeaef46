"""Running a scenario, the :class:`Result` object and the run directory format.

A run directory holds:

* ``flows.parquet``: one row per flow (columns of :attr:`Result.flows`),
* ``summary.json``: the headline metrics (see :mod:`shoal._summary`),
* ``scenario.json``: the resolved scenario (every default filled in),
* ``queues.parquet``: queue/pool occupancy samples, when ``run.sample_interval`` is set,
* ``pfc.parquet`` and ``pfc_ports.parquet``: PFC's frames (:attr:`Result.pfc`) and their
  totals per node, port and class (:attr:`Result.pfc_ports`), when a class is lossless,
* ``ingress.parquet``: the bytes buffered per ingress port and lossless class, and their
  headroom part (:attr:`Result.ingress`), when a class is lossless and the run samples,
* ``headroom.parquet``: every ended episode of a static headroom (PFC's per ingress port
  and class) with its peak (:attr:`Result.headroom`), when some headroom was used,
* ``occupancy.parquet``: each switch pool's time-weighted occupancy distribution
  (:attr:`Result.occupancy`), when ``run.occupancy_cdf`` is set,
* ``collectives.parquet``: every iteration of each collective job and its time
  (:attr:`Result.collectives`), when a workload has ``pattern = "collective"``,
* ``series.parquet``: the traced flows' congestion state over time
  (:attr:`Result.series`), with ``run.series``,
* ``trace.pcap``: a packet trace Wireshark opens, with ``run.pcap``.

The core writes a run's directory itself (tables, summary and scenario; see
``shoal_core::results``), so running a scenario into a directory needs neither pandas nor
pyarrow. Directories are written atomically: everything goes into a hidden temporary
directory next to the target, which is renamed into place only once complete.
"""

from __future__ import annotations

import json
import os
import time
import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used, so that `import shoal` stays fast
    import pandas as pd

    from shoal._summary_types import Summary

from shoal import _core
from shoal._files import read_json, read_parquet
from shoal._scenario import LoadedScenario, Overrides, ScenarioInput, load_scenario
from shoal._units import fmt_time

__all__ = ["Result", "RunInterrupted", "ShoalWarning", "run", "load", "table_schemas", "trace"]

_PS_PER_MS = 1_000_000_000
_MAX_PS = 2**64 - 1
_TARGET_CALL_S = 0.1
# About 0.1 to 0.3 s of simulation at the core's usual 10 to 30 M events/s.
_MAX_EVENTS_PER_CALL = 3_000_000


class ShoalWarning(UserWarning):
    """A legal but questionable scenario (e.g. load above 1), or flows left unfinished."""


def _warn(message: str, stacklevel: int = 3) -> None:
    _warnings.warn(message, ShoalWarning, stacklevel=stacklevel)


class RunInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C) before it finished; nothing was written."""

    def __init__(self, now_ps: int) -> None:
        when = fmt_time(now_ps / 1e3, 4)
        super().__init__(f"interrupted at simulated time {when}; no results written")
        self.now_ps = now_ps


def _frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    """A DataFrame of the core's columns, in the core's order (`table_schemas`)."""
    import numpy as np
    import pandas as pd

    return pd.DataFrame({name: np.asarray(values) for name, values in columns.items()})


def table_schemas() -> dict[str, list[tuple[str, str]]]:
    """The tables a run writes, by name (its file is ``<name>.parquet``), each with its
    columns in order as (name, type): the core's own list, so that a new table appears
    in :class:`Result`, :func:`load` and the store with no Python change. Types are
    ``u8 u32 u64 i64 f64 bool str``."""
    return {name: list(columns) for name, columns in _core.table_schemas()}


@dataclass(slots=True)
class Result:
    """The outcome of a run.

    Attributes:
        tables: every table the run produced, by name (:func:`table_schemas` lists
            them and their columns): ``flows`` always, the others when the run made
            them. The attributes below are its tables by name.
        summary: the headline metrics (the content of ``summary.json``), typed by
            :class:`shoal.Summary`; one loaded from an older file may lack keys.
        scenario: the resolved scenario, every default filled in.
        warnings: scenario and run warnings.
        path: the run directory, when the result was written (``run(..., out=...)``,
            which the core writes) or loaded.
    """

    tables: dict[str, pd.DataFrame]
    summary: Summary
    scenario: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    path: Path | None = None

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow: ``id src dst bytes start_ns finish_ns fct_ns ideal_fct_ns
        slowdown retransmits timeouts priority kind delivered_bytes finished query``.
        Times are nanoseconds (float); ``finish_ns``/``fct_ns`` are NaN for unfinished
        flows; ``query`` is the incast round a flow answers (-1 for none)."""
        return self.tables["flows"]

    @property
    def samples(self) -> pd.DataFrame | None:
        """Queue occupancy samples (``queues``: ``time_ns switch port queue bytes
        pool_bytes tx_bytes``), or None when ``run.sample_interval`` is unset."""
        return self.tables.get("queues")

    @property
    def pfc(self) -> pd.DataFrame | None:
        """When a class is lossless, every pause frame received, where it took effect
        (the paused upstream): ``time_ns node_kind node port class pause``; else None."""
        return self.tables.get("pfc")

    @property
    def pfc_ports(self) -> pd.DataFrame | None:
        """When a class is lossless, one row per (node, port, class) that sent or
        received a frame: ``node_kind node port class pauses_sent resumes_sent
        pauses_received resumes_received paused_ns`` (time its egress queues of that
        class were paused); else None."""
        return self.tables.get("pfc_ports")

    @property
    def ingress(self) -> pd.DataFrame | None:
        """When a class is lossless and ``run.sample_interval`` is set, samples of the
        bytes buffered from each ingress port and lossless class that has held any:
        ``time_ns switch port class bytes headroom_bytes`` (the part in its headroom);
        else None."""
        return self.tables.get("ingress")

    @property
    def headroom(self) -> pd.DataFrame | None:
        """When a switch's PFC used its (static) headroom, every episode from a queue's
        first headroom byte until its headroom emptied: ``end_ns switch port class
        peak_bytes headroom_bytes`` (the most bytes it held, the local maximum of its
        occupancy, and the headroom that class has on that port); else None. Episodes
        still open when the run ended are not listed."""
        return self.tables.get("headroom")

    @property
    def occupancy(self) -> pd.DataFrame | None:
        """With ``run.occupancy_cdf``, each switch pool's time-weighted occupancy
        distribution over ``[0, run.occupancy_until]`` (default: the whole run), one row
        per (switch, pool) and non-empty bucket, buckets in increasing order: ``switch
        pool min_bytes max_bytes time_ns cdf``. The pool held between ``min_bytes`` and
        ``max_bytes`` (inclusive) for ``time_ns``, and at most ``max_bytes`` for the
        fraction ``cdf`` of the window, exactly: no sampling; buckets are one byte wide
        below 128 B and at most 1/64 of their lower edge above. Else None."""
        return self.tables.get("occupancy")

    @property
    def collectives(self) -> pd.DataFrame | None:
        """With a ``collective`` workload, one row per iteration of each collective job:
        ``job iteration start_ns end_ns time_ns``. ``job`` numbers the collective
        workloads in order (``summary["collectives"]`` holds each one's headline); an
        iteration runs from the start of its first message to the arrival of its last
        (``end_ns`` and ``time_ns`` are NaN for one that did not finish). Else None."""
        return self.tables.get("collectives")

    @property
    def series(self) -> pd.DataFrame | None:
        """With ``run.series``, the congestion state of the traced flows over time, a row
        each time it changed or an ACK measured a round trip: ``flow time_ns cwnd_bytes
        rate_bps alpha target_rate_bps utilization rtt_ns`` (``flow`` is the flow's
        ``id``; the window or cap on bytes in flight, the paced rate, DCQCN's or DCTCP's
        alpha, DCQCN's target rate, HPCC's utilization or PowerTCP's normalized power, and
        the RTT the ACK measured; NaN where the flow's transport has no such value).
        Else None."""
        return self.tables.get("series")

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        fin = self.summary.get("flows", {}).get("finished", "?")
        return f"Result(flows={len(self.flows)}, finished={fin}{where})"


def _target(out: str | os.PathLike[str]) -> Path:
    if not os.fspath(out):
        raise OSError("the output path is empty; name a directory for the results")
    return Path(out).expanduser().absolute()


def check_output_dir(target: Path) -> None:
    """Raise ``OSError`` (before any simulating) unless ``target`` may become a run
    directory: Shoal replaces only an empty directory or a run directory it wrote, never
    a file, a link or a directory holding anything else."""
    _core.check_output_dir(str(target))
    parent = target.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OSError(f"cannot create output directory {target}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OSError(f"output directory is not writable: {parent}")


def load(path: str | os.PathLike[str]) -> Result:
    """Read a run directory written by :func:`run` or ``shoal run --out``.

    Raises:
        FileNotFoundError: when ``path`` is not a run directory.
        CorruptFileError: when one of its files cannot be read back (names the file).
    """
    root = Path(path).expanduser()
    if not (root / "summary.json").is_file():
        raise FileNotFoundError(f"not a Shoal run directory (no summary.json): {root}")
    from shoal._summary import read_summary

    summary = read_summary(root / "summary.json")
    scenario_file = root / "scenario.json"
    scenario = read_json(scenario_file) if scenario_file.is_file() else summary.get("scenario", {})
    files = ((name, root / f"{name}.parquet") for name in table_schemas())
    return Result(
        tables={
            name: read_parquet(file) for name, file in files if file.is_file() or name == "flows"
        },
        summary=summary,
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
    return _frame(_core.generate_trace(resolved_json))


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
        out: write the run directory here (atomically) when given. It must not exist,
            or be an empty directory, or a run directory Shoal wrote (which is
            replaced); anything else raises ``OSError`` before simulating.
        set: overrides, ``["switch.marking.cutoff.k=200KB", "run.seed=2"]`` or
            ``{"switch.marking.cutoff.k": "200KB"}``. Text values are parsed as TOML values
            when they are one, else kept as strings.
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
    path = None if out is None else _target(out)
    if path is not None:
        check_output_dir(path)
    sim, resolved_json, warnings = _start(scenario, set)
    wall = _advance(sim, progress)
    summary: Summary
    if path is None:
        summary = json.loads(sim.summary(warnings, wall))
    else:
        summary = json.loads(sim.write_run_dir(str(path), warnings, wall))
    _warn_run(summary, warnings)
    return Result(
        tables={name: _frame(columns) for name, columns in sim.tables().items()},
        summary=summary,
        scenario=json.loads(resolved_json),
        warnings=list(summary["warnings"]),
        path=path,
    )


def run_to_dir(
    scenario: ScenarioInput,
    out: str | os.PathLike[str],
    *,
    set: Overrides = None,  # noqa: A002
    progress: bool = False,
    check_input: bool = True,
) -> tuple[Path, Summary]:
    """Simulate and write the run directory ``out`` (what ``shoal run`` does): the same
    files as ``run(..., out=out)``, without building DataFrames (no pandas, no pyarrow).

    ``check_input=False`` leaves out the warnings about the scenario as written (see
    ``_start``).

    Returns:
        The run directory and the summary.
    """
    target = _target(out)
    check_output_dir(target)
    sim, _, warnings = _start(scenario, set, check_input)
    wall = _advance(sim, progress)
    summary: Summary = json.loads(sim.write_run_dir(str(target), warnings, wall))
    _warn_run(summary, warnings)
    return target, summary


def _start(
    scenario: ScenarioInput, overrides: Overrides, check_input: bool = True
) -> tuple[Any, str, list[str]]:
    """Resolve the scenario (warning about it) and build its simulation; return the
    simulation, the resolved scenario JSON and the scenario's warnings. ``check_input``:
    also warn about the scenario as written (keys without effect, likely unit mistakes);
    a sweep's runs do not, as their base scenario serves several schemes."""
    loaded = load_scenario(scenario, overrides)
    resolved_json, warnings = _core.resolve(loaded.to_json(), check_input)
    for message in warnings:
        _warn(message, stacklevel=4)
    return _core.Simulation(resolved_json, _threads(loaded)), resolved_json, warnings


def _threads(loaded: LoadedScenario) -> int:
    """The threads of one run: ``run.threads``, else the ``SHOAL_THREADS`` environment
    variable (a count or ``auto``), else 1. Results do not depend on it."""
    run = loaded.data.get("run")
    default = os.environ.get("SHOAL_THREADS")
    if default is not None and not (isinstance(run, dict) and "threads" in run):
        value: Any = int(default) if default.strip().isdigit() else default.strip()
        try:
            return _core.run_threads(json.dumps({"run": {"threads": value}}))
        except _core.ScenarioError as exc:
            raise _core.ScenarioError(f"SHOAL_THREADS={default!r}: {exc}") from None
    return _core.run_threads(loaded.to_json())


def _warn_run(summary: Mapping[str, Any], scenario_warnings: list[str]) -> None:
    """Warn about what the run added to the scenario's warnings (unfinished flows...)."""
    for message in summary["warnings"][len(scenario_warnings) :]:
        _warn(message, stacklevel=4)


def _advance(sim: Any, progress: bool) -> float:
    """Run ``sim`` to the end (with a progress bar on stderr if asked); return the wall
    time it took in seconds."""
    if progress:  # imported before the clock starts
        import rich.progress  # noqa: F401
    started = time.perf_counter()
    if progress:
        _run_with_progress(sim)
    else:
        _run_loop(sim, None)
    return time.perf_counter() - started


def _run_loop(sim: Any, on_step: Any) -> None:
    """Advance ``sim`` to the end in chunks sized to take about 0.1 s of wall time. Each
    call also stops after ``_MAX_EVENTS_PER_CALL`` events, so Ctrl-C and the progress
    display are served within a fraction of a second even when a stretch of simulated
    time holds millions of events."""
    chunk = _PS_PER_MS
    try:
        while True:
            t0 = time.perf_counter()
            target = min(sim.now_ps + chunk, _MAX_PS)
            if sim.end_ps is not None:
                target = min(target, sim.end_ps)
            over = sim.run(target, _MAX_EVENTS_PER_CALL)
            elapsed = time.perf_counter() - t0
            if on_step is not None:
                on_step()
            if over or sim.done or (sim.end_ps is not None and sim.now_ps >= sim.end_ps):
                return
            if sim.now_ps < target:
                continue  # stopped by the event cap: the chunk was not what limited it
            # Adapt: aim for ~0.1 s per call, never grow or shrink more than 4x at once.
            scale = _TARGET_CALL_S / max(elapsed, 1e-4)
            chunk = int(max(1_000, min(chunk * min(4.0, max(0.25, scale)), _MAX_PS)))
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
                simtime=fmt_time(sim.now_ps / 1e3, 4),
                rate=f"{sim.events / elapsed / 1e6:.2f} M events/s",
            )

        _run_loop(sim, update)
