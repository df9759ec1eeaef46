"""Sweeps: one base scenario, many runs (schemes x axes x seeds), in parallel, cached.

A sweep file (TOML)::

    name = "k_vs_load"                      # default: the file's stem
    base = "../quickstart/star_dctcp.toml"  # relative to the sweep file; or a [scenario] table
    store = "results/k_vs_load"             # default: results/<name>, relative to the
                                            # current directory (like `shoal run`)

    [set]                                   # optional: overrides applied to every run
    "workload.flows" = 200

    [schemes.dctcp_k200]                    # optional: named sets of overrides; every run
    "switch.marking.cutoff.k" = "200KB"     # is repeated for each scheme (column "scheme")
    [schemes.dctcp_k720]
    "switch.marking.cutoff.k" = "720KB"

    [axes]                                  # a grid: the cartesian product of the lists
    "workload.load" = [0.4, 0.6, 0.8]
    seeds = [1, 2]                          # short for "run.seed" (column "seed");
                                            # `seeds = 3` means [1, 2, 3]

    [zip]                                   # optional: lists of equal length varied together
    "workload.cdf" = ["websearch", "fb_hadoop"]
    "workload.flows" = [200, 400]

    [labels]                                # optional: display names of an axis' values,
    "workload.cdf" = ["WebSearch", "Hadoop"]  # added as column "workload.cdf_label"

A sweep has at most :data:`MAX_RUNS` runs (more is refused before any run is built); a
value repeated in an axis, a zipped tuple or the seeds is a warning, and runs once.

Keys are scenario key paths as ``--set`` takes them; a scheme may also be written as
nested tables (``[schemes.x.switch.marking.cutoff] k = "200KB"``). Runs are expanded in
the order scheme, grid axes (in file order), zip, seed. Relative file paths in overrides
(a CDF file, a trace) are relative to the sweep file.

Every run is keyed by a hash of its resolved scenario (see :mod:`shoal.store`); runs
already in the store are not simulated again, so an interrupted sweep resumes where it
stopped. A failed run is recorded with its error and the sweep goes on; failed runs are
tried again by the next sweep.

From Python::

    import shoal
    df = shoal.sweep("sweep.toml", jobs=4)          # one row per run
    df.groupby(["scheme", "workload.load"]).small_p99_fct_ns.mean()

Execution: local worker processes (``jobs`` of them, default: the number of cores; see
:mod:`shoal._worker`: they never import the caller's ``__main__``, a worker that dies
fails only its own run, and none outlives the sweep), or a
dask.distributed cluster (``cluster="tcp://scheduler:8786"``, a ``distributed.Client``,
or a cluster object such as dask-jobqueue's ``SLURMCluster``). Workers only simulate and
send the run files back; the calling process alone writes the store, so workers need
no shared file system.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import math
import numbers
import os
import re
import sys
import warnings
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from shoal import _core
from shoal._core import ScenarioError
from shoal._run import ShoalWarning
from shoal._scenario import _plain, _resolve_paths, apply_overrides, load_scenario, read_toml
from shoal._worker import run_pool, simulate
from shoal.store import RUN_META, Store, check_store_path, is_store, now_iso, run_key

__all__ = [
    "SweepError",
    "SweepInterrupted",
    "SweepSpec",
    "SweepRun",
    "load_sweep",
    "expand",
    "sweep",
    "sweep_table",
    "dry_run",
    "simulate",
]

SEED_KEY = "run.seed"
#: The most runs one sweep may have. Every run costs something before any simulation:
#: the core resolves its scenario (~70 µs), the store is asked whether it has it, and
#: the sweep record (``sweeps/<name>.json``, written at the start and at the end) and
#: the returned table hold a row of it (~100 bytes). At 100,000 runs that is seconds and
#: tens of MB; at a second of simulation per run it is over a day of one core's work,
#: well past the grids of published evaluations (hundreds to a few thousand runs). Past
#: it, a sweep is almost certainly a mistake (``seeds = 1000000000000000000``, one
#: axis too many) that would otherwise hang building its list; a study that really is
#: larger is several sweeps, which can share one store.
MAX_RUNS = 100_000
#: Seconds to wait for a dask scheduler given by address.
CONNECT_TIMEOUT_S = 20
#: What an executor yields as runs finish: the run, its outcome, runs still running.
Outcomes = Generator[tuple["SweepRun", dict[str, Any], int], None, None]


class SweepError(ValueError):
    """A mistake in a sweep specification (the message says where)."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep. Unlike an interrupted single run, it leaves results: every
    run that finished is in the store (the message says how many), and running the same
    sweep again resumes it.

    Attributes:
        store: the store directory.
        finished: how many of the sweep's runs are finished in the store.
        total: how many runs the sweep has (distinct keys).
    """

    def __init__(self, name: str, store: Path, finished: int, total: int) -> None:
        super().__init__(
            f"interrupted; {finished} of {total} runs of sweep {name} are finished and kept "
            f"in the store {store}; run the sweep again to resume (finished runs are not "
            "simulated again)"
        )
        self.store = store
        self.finished = finished
        self.total = total


@dataclass(slots=True)
class SweepSpec:
    """A parsed sweep specification (see the module documentation for the format).

    Attributes:
        name: the sweep's name (the file stem by default).
        base: the base scenario tables (file paths made absolute).
        base_source: the base scenario file, if any.
        store: the store directory.
        set: overrides applied to every run.
        schemes: scheme name -> overrides (flat ``key.path -> value``).
        axes: grid axes, key path -> values (in order).
        zip: zipped axes, key path -> values (all of one length).
        seeds: the seeds, or ``None`` when ``run.seed`` is not swept.
        labels: axis key -> display names of its values.
        root: folder that relative paths in overrides are relative to.
        raw: the specification as written (for the record in the store).
    """

    name: str
    base: dict[str, Any]
    base_source: Path | None
    store: Path
    set: dict[str, Any] = field(default_factory=dict)
    schemes: dict[str, dict[str, Any]] = field(default_factory=dict)
    axes: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] | None = None
    labels: dict[str, list[str]] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def factors(self) -> dict[str, int]:
        """What multiplies up to the number of runs: ``{"schemes": 2, "axes.<key>": 3,
        "[zip]": 2, "seeds": 10}`` (only the parts the sweep has)."""
        return _factors(self.schemes, self.axes, self.zip, self.seeds)

    @property
    def columns(self) -> list[str]:
        """The axis columns of the sweep's table, in order."""
        cols = ["scheme"] if self.schemes else []
        cols += list(self.axes) + list(self.zip)
        cols += [f"{k}_label" for k in self.labels]
        if self.seeds is not None:
            cols.append("seed")
        return cols


@dataclass(slots=True)
class SweepRun:
    """One expanded run: its axis values, overrides and (once resolved) key."""

    index: int
    params: dict[str, Any]
    overrides: dict[str, Any]
    scenario: dict[str, Any] | None = None
    resolved_json: str | None = None
    key: str | None = None
    error: str | None = None


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{path}."))
        else:
            out[path] = value
    return out


def _seeds(where: str, value: int | list[int]) -> Sequence[int]:
    """The seeds of ``seeds = N`` (a range: nothing is built before the size check) or
    of a list of seeds (repeats dropped, with a warning)."""
    if isinstance(value, int):
        if value > sys.maxsize:  # a range this long has no len(): refuse it here
            raise SweepError(
                f"{where}: the sweep has {value:,} runs (seeds {value:,}); "
                f"at most {MAX_RUNS:,} are allowed"
            )
        return range(1, value + 1)
    return [value[i] for i in _first_occurrences(where, value)]


def _first_occurrences(where: str, values: Sequence[Any]) -> list[int]:
    """Indices of the first occurrence of each value, in order; each repeated value is a
    :class:`ShoalWarning` naming it. A repeat would be the same simulation (the same
    store key): it is run once, and listed once, so it does not count twice in a mean.
    Values are compared as written (``1`` and ``1.0`` differ)."""
    first: dict[str, int] = {}
    counts: dict[str, int] = {}
    for i, value in enumerate(values):
        text = json.dumps(value, sort_keys=True, default=str)
        first.setdefault(text, i)
        counts[text] = counts.get(text, 0) + 1
    for text, n in counts.items():
        if n > 1:
            shown = _show_value(values[first[text]])
            warnings.warn(
                f"{where}: {shown} is given {n} times; it runs once",
                ShoalWarning,
                stacklevel=4,
            )
    return sorted(first.values())


def _show_value(value: Any) -> str:
    """A value as the sweep file writes it (``0.5``, ``"websearch"``, a tuple of those)."""
    if isinstance(value, tuple):
        return "(" + ", ".join(_show_value(v) for v in value) + ")"
    return json.dumps(value, default=str)


def _factors(
    schemes: Mapping[str, Any],
    axes: Mapping[str, Sequence[Any]],
    zipped: Mapping[str, Sequence[Any]],
    seeds: Sequence[int] | None,
) -> dict[str, int]:
    """The counts whose product is the number of runs, named as the sweep file names
    them (see :attr:`SweepSpec.factors`)."""
    out = {"schemes": len(schemes)} if schemes else {}
    out.update({f"axes.{key}": len(values) for key, values in axes.items()})
    if zipped:
        out["[zip]"] = len(next(iter(zipped.values())))
    if seeds is not None:
        out["seeds"] = len(seeds)
    return out


def _check_size(where: str, factors: Mapping[str, int]) -> None:
    """Refuse a sweep of more than :data:`MAX_RUNS` runs, naming the keys and their
    counts. It needs the counts only, so it runs before any list of runs is built."""
    total = math.prod(factors.values())
    if total > MAX_RUNS:
        detail = " x ".join(f"{key} {n:,}" for key, n in factors.items() if n > 1)
        raise SweepError(
            f"{where}: the sweep has {total:,} runs ({detail}); at most {MAX_RUNS:,} are "
            "allowed: shorten the lists, or split it into several sweeps (they can share "
            "a store)"
        )


def load_sweep(
    spec: str | os.PathLike[str] | Mapping[str, Any], *, store: str | os.PathLike[str] | None = None
) -> SweepSpec:
    """Parse a sweep: a path to a TOML file, TOML text, or a mapping of the same tables.

    Raises:
        SweepError: on a malformed specification.
        ScenarioError: when the base scenario cannot be read.
    """
    _check_store_arg(store)
    source: Path | None = None
    if isinstance(spec, Mapping):
        raw = _plain(spec, SweepError, "sweep")
    else:
        raw, source = read_toml(spec, "sweep", SweepError)
        raw = _plain(raw, SweepError, str(source or "sweep"))
    where = str(source) if source else "sweep"
    from pydantic import ValidationError  # here: `shoal run` never imports pydantic

    from shoal._specs import SEED_AXES, SweepFile, problem

    try:
        spec = SweepFile.model_validate(raw)
    except ValidationError as exc:
        raise SweepError(f"{where}: {problem(exc, SweepFile, raw)}") from None
    root = source.parent.resolve() if source else Path.cwd()
    name = spec.name or (source.stem if source else "sweep")
    if len(name.encode()) > 200:  # sweeps/<name>.json must be a file name anywhere
        raise SweepError(f"{where}: name: {len(name.encode())} bytes; accepted: at most 200")

    # The base scenario: a file (relative to the sweep file) or an inline table.
    base_source: Path | None = None
    if isinstance(spec.base, str):
        base_source = (root / spec.base).resolve()
        if not base_source.is_file():
            raise SweepError(f"{where}: base: scenario file not found: {base_source}")
        base = load_scenario(base_source).data
    else:
        # Not load_scenario: it would resolve the table's paths against the working
        # directory, while an inline table is written in the sweep file.
        base = _plain(spec.base if spec.base is not None else spec.scenario)
        _resolve_paths(base, root)

    overrides = _flatten(spec.set)
    schemes = {scheme: _flatten(body) for scheme, body in spec.schemes.items()}
    axes = dict(spec.axes)
    zipped = dict(spec.zip)
    seeds: Sequence[int] | None = None
    if spec.seeds is not None:
        seeds = _seeds(f"{where}: seeds", spec.seeds)
    elif spec.axis_seeds is not None:
        key = next(k for k in SEED_AXES if k in raw["axes"])
        seeds = _seeds(f"{where}: axes.{key}", spec.axis_seeds)
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        detail = ", ".join(f"{k} has {len(v)}" for k, v in zipped.items())
        raise SweepError(f"{where}: [zip] lists must have the same length ({detail})")
    both = (set(axes) & set(zipped)) | ({SEED_KEY} & set(zipped) if seeds is not None else set())
    if both:
        raise SweepError(f"{where}: {sorted(both)[0]} is both in [axes] and in [zip]")

    labels: dict[str, list[str]] = {}
    for key, names in spec.labels.items():
        values = axes.get(key, zipped.get(key))
        if values is None:
            raise SweepError(f"{where}: labels.{key}: not an axis of the sweep")
        if len(names) != len(values):
            raise SweepError(f"{where}: labels.{key}: {len(names)} names for {len(values)} values")
        labels[key] = [str(n) for n in names]
    _drop_repeats(where, axes, zipped, labels)
    _check_size(where, _factors(schemes, axes, zipped, seeds))

    if store is not None:
        store_path = Path(store)
    elif spec.store:
        store_path = Path(spec.store)
    else:
        store_path = Path("results") / name
    return SweepSpec(
        name=name,
        base=base,
        base_source=base_source,
        store=store_path.expanduser().absolute(),
        set=overrides,
        schemes=schemes,
        axes=axes,
        zip=zipped,
        seeds=None if seeds is None else list(seeds),
        labels=labels,
        root=root,
        raw=raw,
    )


def _drop_repeats(
    where: str,
    axes: dict[str, list[Any]],
    zipped: dict[str, list[Any]],
    labels: dict[str, list[str]],
) -> None:
    """Keep the first occurrence of each value of a grid axis and of each tuple of the
    zipped lists, with its label (see :func:`_first_occurrences`); in place."""
    keep = {key: _first_occurrences(f"{where}: axes.{key}", values) for key, values in axes.items()}
    if zipped:
        tuples = list(zip(*zipped.values(), strict=True))
        zip_keep = _first_occurrences(f"{where}: [zip] {', '.join(zipped)}", tuples)
        keep.update(dict.fromkeys(zipped, zip_keep))
    for table in (axes, zipped, labels):
        for key, values in table.items():
            table[key] = [values[i] for i in keep[key]]


def expand(spec: SweepSpec) -> list[SweepRun]:
    """Every run of the sweep, in order (scheme, grid axes, zip, seed); not yet resolved.

    Raises:
        SweepError: the sweep has more than :data:`MAX_RUNS` runs (a :class:`SweepSpec`
            built by hand; :func:`load_sweep` refuses such a sweep already).
    """
    _check_size(spec.name, spec.factors)
    schemes: list[tuple[str | None, dict[str, Any]]] = (
        list(spec.schemes.items()) if spec.schemes else [(None, {})]
    )
    grid_keys = list(spec.axes)
    grid = list(itertools.product(*(range(len(spec.axes[k])) for k in grid_keys)))
    zip_keys = list(spec.zip)
    n_zip = len(next(iter(spec.zip.values()))) if spec.zip else 1
    seeds: list[int | None] = list(spec.seeds) if spec.seeds is not None else [None]
    runs: list[SweepRun] = []
    for (scheme, scheme_overrides), combo, z, seed in itertools.product(
        schemes, grid, range(n_zip), seeds
    ):
        params: dict[str, Any] = {}
        overrides: dict[str, Any] = dict(spec.set)
        if scheme is not None:
            params["scheme"] = scheme
            overrides.update(scheme_overrides)
        chosen: dict[str, int] = {}
        for key, i in zip(grid_keys, combo, strict=True):
            params[key] = spec.axes[key][i]
            chosen[key] = i
        for key in zip_keys:
            params[key] = spec.zip[key][z]
            chosen[key] = z
        overrides.update({k: params[k] for k in (*grid_keys, *zip_keys)})
        for key, names in spec.labels.items():
            params[f"{key}_label"] = names[chosen[key]]
        if seed is not None:
            params["seed"] = seed
            overrides[SEED_KEY] = seed
        runs.append(SweepRun(index=len(runs), params=params, overrides=overrides))
    return runs


def _resolve_run(spec: SweepSpec, run: SweepRun, version: str) -> None:
    data = copy.deepcopy(spec.base)
    apply_overrides(data, run.overrides)
    data = _plain(data)
    _resolve_paths(data, spec.root)
    run.scenario = data
    resolved_json, _warnings = _core.resolve(json.dumps(data))
    run.resolved_json = resolved_json
    run.key = run_key(json.loads(resolved_json), version)


def resolve_runs(spec: SweepSpec, runs: Sequence[SweepRun] | None = None) -> list[SweepRun]:
    """Expand and resolve every run; compute its key.

    The first run must resolve: its error (an unknown key, a bad value) is the sweep's
    error (:class:`SweepError`). A later run that does not resolve (a value out of range
    on one axis point) is kept with its ``error`` and recorded as a failed run.
    """
    version = _core.__version__
    runs = list(runs) if runs is not None else expand(spec)
    for run in runs:
        try:
            _resolve_run(spec, run, version)
        except ScenarioError as exc:
            if run.index == 0:
                raise SweepError(f"{spec.name}: run 1 ({_describe(run.params)}): {exc}") from None
            run.error = f"ScenarioError: {exc}"
            unresolved = json.dumps(run.scenario or run.overrides, sort_keys=True, default=str)
            run.key = "x" + run_key({"unresolved": unresolved}, version)[1:]
    return runs


def _describe(params: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "base"


# -- progress ------------------------------------------------------------------------


class _Progress:
    """One progress display for the whole sweep: done, running, failed, cached, ETA."""

    def __init__(self, total: int, cached: int, enabled: bool, log: Callable[[str], None] | None):
        self.total = total
        self.cached = cached
        self.done = 0
        self.failed = 0
        self.running = 0
        self.log = log
        self._bar: Any = None
        self._task: Any = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(
                    "runs · {task.fields[running]} running · {task.fields[failed]} failed"
                    " · {task.fields[cached]} cached"
                ),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task(
                "sweep", total=self.total, running=0, failed=0, cached=self.cached
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, running: int) -> None:
        self.running = running
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, running=running, failed=self.failed)

    def note(self, message: str) -> None:
        """A line about the sweep as a whole, above the bar (or to ``log``)."""
        if self._bar is not None:
            self._bar.console.print(message, markup=False, highlight=False)
        elif self.log is not None:
            self.log(message)

    def finished(self, ok: bool, message: str, running: int) -> None:
        self.done += 1
        if not ok:
            self.failed += 1
        if self.log is not None and (not ok or self._bar is None):
            line = f"[{self.done}/{self.total}] {message}"
            if self._bar is not None:
                self._bar.console.print(line, markup=False, highlight=False)
            else:
                self.log(line)
        self.update(running)


# -- executors -----------------------------------------------------------------------


def _local_jobs(jobs: int | None) -> int:
    if jobs is None:
        return max(
            1,
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1,
        )
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise SweepError(f"jobs must be at least 1, got {jobs!r}")
    return int(jobs)


#: What installs dask.distributed: Shoal is not on a package index, so its extra is
#: installed from the source tree.
DASK_INSTALL = (
    'pip install "dask[distributed]" (or, in Shoal\'s source tree, pip install ".[cluster]")'
)

#: A scheduler address as dask.distributed reads one: an optional ``scheme://``, a host
#: (a name, an IPv4 address or a bracketed IPv6 one), an optional port and, for
#: ``inproc://``, a path.
_ADDRESS = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+)(?::\d+)?(?:/\S*)?"
)


def _check_store_arg(store: str | os.PathLike[str] | None) -> None:
    """Refuse a store path no directory can have (a NUL byte)."""
    if store is not None and "\0" in os.fspath(store):
        raise SweepError(f"store: a path cannot hold a NUL byte: {os.fspath(store)!r}")


def check_execution(jobs: int | None, cluster: Any) -> None:
    """Refuse, before anything runs or is written, a ``jobs`` below 1 and a ``cluster``
    that cannot be used: an address that is not one, or any cluster without
    dask.distributed installed.

    Raises:
        SweepError: naming the argument, what was given and what is accepted.
    """
    if cluster is None:
        _local_jobs(jobs)
        return
    if isinstance(cluster, str) and not _ADDRESS.fullmatch(cluster.strip()):
        raise SweepError(
            f"cluster {cluster!r} is not a dask scheduler address; expected one such as "
            "tcp://scheduler:8786"
        )
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise SweepError(
            f"running on a cluster needs dask.distributed, which is not installed: {DASK_INSTALL}"
        ) from None
    if isinstance(cluster, str) and "://" in cluster:
        from distributed.comm.registry import backends

        scheme = cluster.strip().split("://", 1)[0]
        if scheme not in backends:
            raise SweepError(
                f"cluster {cluster!r}: unknown protocol {scheme!r} (accepted: "
                f"{', '.join(f'{b}://' for b in sorted(backends))}, e.g. tcp://scheduler:8786)"
            )


def _jobs_that_fit(tasks: Sequence[SweepRun], jobs: int, bar: _Progress) -> int:
    """``jobs``, or fewer when that many of the largest run (by its memory estimate)
    would not fit in the memory available now: each run checks only its own need when it
    starts, so parallel runs that fit one at a time could together exhaust the machine."""
    if jobs <= 1 or len(tasks) <= 1:
        return jobs
    available = _core.available_memory()
    if available is None:
        return jobs
    largest = 0
    for task in tasks:
        try:
            parts = _core.memory_estimate(str(task.resolved_json))
        except ValueError:  # the run reports its own error
            continue
        largest = max(largest, sum(b for _, _, b in parts))
    fit = max(1, available // largest) if largest else jobs
    if fit >= jobs:
        return jobs
    bar.note(
        f"{fit} run{'s' if fit > 1 else ''} at a time, not {jobs}: the largest needs about "
        f"{largest / 1e9:.1f} GB and {available / 1e9:.1f} GB is available"
    )
    return fit


def _run_serial(tasks: Sequence[SweepRun]) -> Outcomes:
    for i, task in enumerate(tasks):
        assert task.resolved_json is not None
        yield task, simulate(task.resolved_json), min(1, len(tasks) - i - 1)


def _run_local(tasks: Sequence[SweepRun], jobs: int) -> Outcomes:
    with contextlib.closing(run_pool([str(t.resolved_json) for t in tasks], jobs)) as outcomes:
        for index, outcome, running in outcomes:
            yield tasks[index], outcome, running


def _dask_client(cluster: Any) -> tuple[Any, bool]:
    check_execution(None, cluster)
    from distributed import Client

    if isinstance(cluster, Client):
        return cluster, False
    if isinstance(cluster, str):
        try:
            return Client(cluster, timeout=f"{CONNECT_TIMEOUT_S}s"), True  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"cannot connect to the dask scheduler {cluster}: {exc}") from None
    # A cluster object: LocalCluster, SLURMCluster, ...
    return Client(cluster), True  # type: ignore[no-untyped-call]


def _run_dask(tasks: Sequence[SweepRun], cluster: Any) -> Outcomes:
    client, owned = _dask_client(cluster)
    from distributed import as_completed

    futures: dict[Any, SweepRun] = {}
    try:
        for task in tasks:
            fut = client.submit(simulate, task.resolved_json, key=f"shoal-{task.key}", pure=False)
            futures[fut] = task
        remaining = len(futures)
        for fut in as_completed(list(futures)):  # type: ignore[no-untyped-call]
            task = futures[fut]
            remaining -= 1
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker
                outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
            slots = max(1, sum(client.nthreads().values()))
            yield task, outcome, min(slots, remaining)
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if owned:
            client.close()


# -- the sweep -----------------------------------------------------------------------


def _record(spec: SweepSpec, runs: Sequence[SweepRun], store: Store) -> None:
    store.record_sweep(
        spec.name,
        {
            "name": spec.name,
            "shoal_version": _core.__version__,
            "recorded_at": now_iso(),
            "source": None if spec.base_source is None else str(spec.base_source),
            "columns": spec.columns,
            "spec": spec.raw,
            "base": spec.base,
            "axes": {
                "schemes": spec.schemes,
                "grid": spec.axes,
                "zip": spec.zip,
                "seeds": spec.seeds,
                "set": spec.set,
            },
            "runs": [{"key": r.key, "params": r.params} for r in runs],
        },
    )


def sweep(
    spec: str | os.PathLike[str] | Mapping[str, Any] | SweepSpec,
    *,
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = True,
    store: str | os.PathLike[str] | None = None,
    retry_failed: bool = True,
    log: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Run a sweep and return one row per run.

    Args:
        spec: a sweep file path, TOML text, a mapping with the same tables, or a
            :class:`SweepSpec`.
        jobs: local worker processes (default: the number of cores). ``1`` runs in
            this process.
        cluster: run on dask.distributed instead: a scheduler address
            (``"tcp://host:8786"``), a ``distributed.Client`` or a cluster object.
        progress: show one progress bar for the whole sweep (on stderr).
        store: the results store (default: the sweep's ``store``, else
            ``results/<name>``).
        retry_failed: simulate again runs that failed before (finished runs are
            always reused).
        log: called with one line per failed run (and per run without a progress bar).

    Returns:
        A DataFrame with the axis columns (``scheme``, each axis key, ``seed``), then
        ``key status cached error wall_time_s peak_rss_mb`` (the run's wall time and
        its worker's peak resident memory while it ran, which includes what an earlier
        run in the same worker left allocated) and the headline metrics of
        :func:`shoal.store.flatten_summary`. ``df.attrs["axes"]`` lists the axis columns,
        ``df.attrs["store"]`` the store path.

    Raises:
        SweepError: a malformed sweep, a first run whose scenario is invalid, ``jobs``
            below 1, or a ``cluster`` that is no address or without dask.distributed.
        StoreError: the store cannot be used.
        SweepInterrupted: Ctrl-C (a :class:`KeyboardInterrupt`); the runs that
            finished are kept in the store.
    """
    check_execution(jobs, cluster)
    _check_store_arg(store)
    if not isinstance(spec, SweepSpec):
        spec = load_sweep(spec, store=store)
    elif store is not None:
        spec.store = Path(store).expanduser().absolute()
    runs = resolve_runs(spec)
    db = Store(spec.store, create=True)
    keys = {r.key for r in runs if r.key is not None}
    try:
        _record(spec, runs, db)
        cached, todo = _plan(db, runs, retry_failed)
        _execute(spec, db, todo, len(keys & cached), jobs, cluster, progress, log)
        _record(spec, runs, db)
        return _table(db, [(r.key, r.params) for r in runs], spec.columns, cached)
    except KeyboardInterrupt:
        # The store, not a tally kept on the way, says what is kept: Ctrl-C can land
        # between a run's rename into the store and any bookkeeping after it.
        finished = sum(db.status(k) == "ok" for k in keys)
        raise SweepInterrupted(spec.name, db.root, finished, len(keys)) from None


def _plan(
    db: Store, runs: Sequence[SweepRun], retry_failed: bool
) -> tuple[set[str], dict[str, SweepRun]]:
    """What the store has and what is left to do: the keys reused (finished runs, and
    failed ones unless ``retry_failed``) and the runs to simulate (each key once)."""
    cached: set[str] = set()
    todo: dict[str, SweepRun] = {}
    for run in runs:
        assert run.key is not None
        status = db.status(run.key)
        if status == "ok" or (status == "failed" and not retry_failed):
            cached.add(run.key)
        elif run.key not in todo:
            todo[run.key] = run
    return cached, todo


def _execute(
    spec: SweepSpec,
    db: Store,
    todo: Mapping[str, SweepRun],
    n_cached: int,
    jobs: int | None,
    cluster: Any,
    progress: bool,
    log: Callable[[str], None] | None,
) -> None:
    """Simulate the runs ``todo`` and write each to the store as it ends."""
    unresolved = [r for r in todo.values() if r.error is not None]
    tasks = [r for r in todo.values() if r.error is None]
    with _Progress(len(todo), n_cached, progress, log) as bar:
        for run in unresolved:
            assert run.key is not None
            db.put(run.key, _meta(spec, run, {"status": "failed", "error": run.error}), None)
            bar.finished(False, f"failed {run.key} {_describe(run.params)}: {run.error}", 0)
        if cluster is not None:
            outcomes = _run_dask(tasks, cluster)
            n = len(tasks)
        else:
            n = _jobs_that_fit(tasks, _local_jobs(jobs), bar)
            outcomes = _run_serial(tasks) if n == 1 or len(tasks) <= 1 else _run_local(tasks, n)
        bar.update(min(len(tasks), n))
        # Closed on the way out, also on an error or Ctrl-C: that stops the workers now
        # rather than when the traceback (which holds this frame) is dropped.
        with contextlib.closing(outcomes):
            for run, outcome, running in outcomes:
                assert run.key is not None
                ok = outcome.get("status") == "ok"
                files = outcome.pop("files", None) if ok else None
                db.put(run.key, _meta(spec, run, outcome), files)
                what = f"{run.key} {_describe(run.params)}"
                if ok:
                    message = f"ok {what} ({outcome.get('wall_time_s', 0):.2f} s)"
                else:
                    message = f"failed {what}: {outcome.get('error')}"
                bar.finished(ok, message, running)


def _meta(spec: SweepSpec, run: SweepRun, outcome: Mapping[str, Any]) -> dict[str, Any]:
    meta = {
        "status": outcome.get("status", "failed"),
        "error": outcome.get("error"),
        "traceback": outcome.get("traceback"),
        "params": run.params,
        "sweep": spec.name,
        "shoal_version": _core.__version__,
        "wall_time_s": outcome.get("wall_time_s"),
        "peak_rss_mb": outcome.get("peak_rss_mb"),
        "started_at": outcome.get("started_at"),
        "finished_at": now_iso(),
        "host": outcome.get("host"),
        "pid": outcome.get("pid"),
        "warnings": outcome.get("warnings", []),
    }
    if run.error is not None or outcome.get("status") != "ok":
        meta["scenario"] = run.scenario
    return meta


def _table(
    store: Store,
    entries: Sequence[tuple[str | None, Mapping[str, Any]]],
    columns: Sequence[str],
    cached: set[str] | None = None,
) -> pd.DataFrame:
    rows = []
    for key, params in entries:
        row: dict[str, Any] = {c: params.get(c) for c in columns}
        meta = store.meta(key) if key else None
        row.update(
            {
                "key": key,
                "status": (meta or {}).get("status", "missing"),
                "cached": None if cached is None else key in cached,
                "error": (meta or {}).get("error"),
                "wall_time_s": (meta or {}).get("wall_time_s"),
                "peak_rss_mb": (meta or {}).get("peak_rss_mb"),
            }
        )
        rows.append(store.with_metrics(row) if key else row)
    frame = pd.DataFrame(rows)
    if cached is None and "cached" in frame:
        frame = frame.drop(columns="cached")
    frame.attrs["axes"] = list(columns)
    frame.attrs["store"] = str(store.root)
    return frame


def sweep_table(store: str | os.PathLike[str] | Store, name: str | None = None) -> pd.DataFrame:
    """The table of a sweep recorded in a store (as :func:`sweep` returned it).

    Runs not in the store (an interrupted sweep) have status ``missing``. With no sweep
    recorded, every run of the store (:meth:`Store.runs`).
    """
    db = store if isinstance(store, Store) else Store(store)
    if not db.sweeps() and name is None:
        frame = db.runs()
        meta_cols = {"key", *RUN_META}
        first_metric = next((c for c in frame.columns if c.startswith("small_")), None)
        axes = []
        for column in frame.columns:
            if column == first_metric:
                break
            if column not in meta_cols:
                axes.append(column)
        frame.attrs["axes"] = axes
        frame.attrs["store"] = str(db.root)
        return frame
    record = db.sweep_record(name)
    entries = [(r["key"], r["params"]) for r in record["runs"]]
    frame = _table(db, entries, record.get("columns", []))
    frame.attrs["sweep"] = record["name"]
    return frame


def dry_run(spec: SweepSpec) -> pd.DataFrame:
    """The runs a sweep would do: axis columns, key, and whether the store has them.

    Raises:
        StoreError: the sweep could not use its store path (as :func:`sweep` would).
    """
    check_store_path(spec.store)
    runs = resolve_runs(spec)
    db = Store(spec.store) if is_store(spec.store) else None
    rows = []
    for run in runs:
        status = db.status(run.key) if db is not None and run.key else None
        row = {c: run.params.get(c) for c in spec.columns}
        row.update({"key": run.key, "in_store": status or "", "error": run.error})
        rows.append(row)
    return pd.DataFrame(rows)
