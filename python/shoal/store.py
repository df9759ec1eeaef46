"""The results store: every run of every sweep, keyed by what it simulated.

A store is a directory::

    <store>/
      runs/<key>/            one finished run: a run directory plus meta.json
        summary.json
        scenario.json
        <table>.parquet      the run's tables, as written by ``shoal run``
                             (:func:`shoal.table_schemas`: flows.parquet always; queues,
                             pfc, pfc_ports, ingress, headroom, occupancy when made)
        meta.json            {"key", "status": "ok", "params", "wall_time_s", ...}
      runs/<key>/meta.json   a failed run: status "failed" and its error, no results
      sweeps/<name>.json     a sweep: its specification and its runs (key + axis values)
      sweeps/<name>/         its report.html and figures
      .staging/              runs being written (never read)

The key of a run is a content hash (:func:`run_key`) of its *resolved* scenario (every
default filled in by the core), the content of every file it reads (a trace, a CDF, a
topology) and the Shoal version: the same simulation always gets the same key, so a sweep
skips runs that are already in the store, and a new Shoal version never reuses old results.

A store is made only in a new or empty directory, and a directory is taken for a store
only when it has both ``runs/`` and ``sweeps/`` (:func:`is_store`): a path that is
neither (a user's folder, the current directory, a run directory) is refused, so
nothing in it is ever written, moved or cleaned.

A run directory appears under ``runs/`` only complete: it is assembled in ``.staging/``
and renamed into place, so an interrupted or killed sweep never leaves a half-written run
that looks finished.

Queries: :meth:`Store.query` runs SQL (DuckDB) over these views:

* ``runs``: one row per run: ``key status error wall_time_s peak_rss_mb`` (peak resident
  memory of the worker while it ran), the axis values of the sweep that ran it (columns
  named by scenario key, e.g. ``"workload.load"``, quote them in SQL), ``scheme``,
  ``seed``, and the headline metrics flattened (:func:`flatten_summary`:
  ``small_p99_fct_ns``, ``all_mean_slowdown``, ``loss_rate``, ...);
* one per run table (``flows``, ``queues``, ``pfc``, ``pfc_ports``, ``ingress``,
  ``headroom``, ``occupancy``: :func:`shoal.table_schemas`): every run's
  ``<table>.parquet`` with a ``key`` column naming its run (no rows where no run has
  one).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shoal._files import CorruptFileError, parquet_intact, read_json, read_parquet
from shoal._output import pid_alive
from shoal._run import table_schemas
from shoal._summary import BUCKET_STATS, check_summary, read_summary

if TYPE_CHECKING:  # imported where used: a sweep's worker processes need no pandas
    import pandas as pd

    from shoal._summary_types import Summary

__all__ = [
    "Store",
    "StoreError",
    "flatten_summary",
    "is_store",
    "check_store_path",
    "run_key",
    "RUN_FILES",
    "RUN_META",
]

#: The status of a run whose files cannot be read back (see :meth:`Store.status`).
CORRUPT = "corrupt"
#: The columns of :meth:`Store.runs` that describe a run itself (from its meta.json), not
#: its parameters or its metrics.
RUN_META = ("status", "error", "wall_time_s", "peak_rss_mb", "finished_at")
#: The run tables, by name, each with its columns in order (the core's list).
TABLES = table_schemas()
#: Files a finished run directory may hold (besides meta.json).
RUN_FILES = ("summary.json", "scenario.json", *(f"{name}.parquet" for name in TABLES), "trace.pcap")
_KEY_CHARS = 20


class StoreError(ValueError):
    """A store path that cannot be used (not a directory, not a store, unknown run)."""


def _file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _referenced_files(resolved: Mapping[str, Any]) -> dict[str, str | None]:
    """Digests of the files a resolved scenario reads (workload traces, CDF files and a
    topology file)."""
    out: dict[str, str | None] = {}
    workload = resolved.get("workload")
    tables = [workload] if isinstance(workload, Mapping) else []
    if isinstance(workload, Mapping) and isinstance(workload.get("extra"), list):
        tables += [t for t in workload["extra"] if isinstance(t, Mapping)]
    values = [table.get(key) for table in tables for key in ("trace", "cdf")]
    topology = resolved.get("topology")
    if isinstance(topology, Mapping):
        values.append(topology.get("path"))
    for value in values:
        if isinstance(value, str) and os.path.isabs(value):
            out[value] = _file_digest(value)
    return out


def run_key(resolved: Mapping[str, Any], version: str) -> str:
    """The store key of a run: a hash of the resolved scenario, its input files and version."""
    payload = {
        "scenario": resolved,
        "files": _referenced_files(resolved),
        "shoal_version": version,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:_KEY_CHARS]


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def flatten_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The headline metrics of a ``summary.json`` as one flat row.

    Columns: ``<bucket>_<stat>`` for every size bucket (``small medium large all``) and
    stat (``count mean_fct_ns p50_fct_ns p99_fct_ns mean_slowdown p50_slowdown
    p99_slowdown``), then ``flows finished unfinished loss_rate switch_drop_rate packets_sent
    packets_dropped packets_reordered timeouts retransmits cnps ecn_mark_rate util_mean util_max
    util_core_mean buffer_mean_bytes buffer_p99_bytes buffer_max_bytes pfc_pause_frames
    pfc_paused_ns lossless_drops simulated_ns events sim_wall_s collective_time_mean_ns
    collective_time_p99_ns collective_iteration_mean_ns collective_bus_gbps
    collective_finished`` (the first collective job's headline; ``collective<j>_...`` for
    job j > 0, where there is one). Buffer columns are the
    largest over the pools; the PFC columns are empty for runs without a lossless class,
    ``packets_reordered`` for runs whose switches keep each flow on one path (ECMP).
    A missing or null part gives empty (None) columns.

    Raises:
        ValueError: a part has the wrong shape (see :func:`shoal._summary.check_summary`;
            :meth:`Store.summary` raises it as a :class:`CorruptFileError` naming the file).
    """
    check_summary(summary)
    row: dict[str, Any] = {}
    for bucket, stats in (summary.get("fct") or {}).items():
        for stat in BUCKET_STATS:
            row[f"{bucket}_{stat}"] = stats.get(stat)
    flows = summary.get("flows") or {}
    packets = summary.get("packets") or {}
    util = summary.get("link_utilization") or {}
    pools = summary.get("pools") or []
    pfc = summary.get("pfc") or {}

    def pool_max(field: str) -> float | None:
        values = [v for v in (_num(p.get(field)) for p in pools) if v is not None]
        return max(values) if values else None

    duration = _num(summary.get("duration_ps"))
    row.update(
        {
            "flows": flows.get("total"),
            "finished": flows.get("finished"),
            "unfinished": flows.get("unfinished"),
            "loss_rate": summary.get("loss_rate"),
            "switch_drop_rate": summary.get("switch_drop_rate"),
            "packets_sent": packets.get("sent"),
            "packets_dropped": packets.get("dropped"),
            "packets_reordered": packets.get("reordered"),
            "timeouts": summary.get("timeouts"),
            "retransmits": summary.get("retransmits"),
            "cnps": summary.get("cnps"),
            "ecn_mark_rate": summary.get("ecn_mark_rate"),
            "util_mean": util.get("mean"),
            "util_max": util.get("max"),
            "util_core_mean": util.get("core_mean"),
            "buffer_mean_bytes": pool_max("mean"),
            "buffer_p99_bytes": pool_max("p99"),
            "buffer_max_bytes": pool_max("max"),
            "pfc_pause_frames": pfc.get("pause_frames_sent"),
            "pfc_paused_ns": pfc.get("paused_ns"),
            "lossless_drops": pfc.get("lossless_drops"),
            "simulated_ns": None if duration is None else duration / 1e3,
            "events": summary.get("events"),
            "sim_wall_s": summary.get("wall_time_s"),
        }
    )
    row.update(_collective_columns(summary.get("collectives")))
    return row


_COLLECTIVE_COLUMNS = {
    "time_mean_ns": "mean_time_ns",
    "time_p99_ns": "p99_time_ns",
    "iteration_mean_ns": "mean_iteration_ns",
    "bus_gbps": "bus_bandwidth_gbps",
    "finished": "finished",
}


def _collective_columns(jobs: Any) -> dict[str, Any]:
    """The collective jobs' headline: ``collective_<stat>`` for the first job (empty
    without one), ``collective<j>_<stat>`` for job j > 0."""
    jobs = [j for j in jobs if isinstance(j, Mapping)] if isinstance(jobs, list) else []
    row: dict[str, Any] = {}
    for j, job in enumerate(jobs or [{}]):
        prefix = "collective" if j == 0 else f"collective{j}"
        for column, key in _COLLECTIVE_COLUMNS.items():
            row[f"{prefix}_{column}"] = job.get(key)
    return row


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a results store: a directory with ``runs/`` and ``sweeps/``
    folders (a store has both from the start). One folder alone is not enough: ``runs/``
    is a common name for a user's own run directories."""
    root = Path(path)
    return (root / "runs").is_dir() and (root / "sweeps").is_dir()


def check_store_path(path: str | os.PathLike[str]) -> None:
    """Refuse a store path that is not missing, an empty directory or a store: a store
    made there would add its folders among the user's files, and clean what it takes
    for its own.

    Raises:
        StoreError: naming the path and a few of its entries.
    """
    root = Path(path).expanduser().absolute()
    if not root.exists() or is_store(root):
        return
    if not root.is_dir():
        raise StoreError(f"store path exists and is not a directory: {root}")
    try:
        entries = sorted(p.name for p in root.iterdir())
    except OSError as exc:
        raise StoreError(f"cannot read the store directory {root}: {exc.strerror}") from None
    if entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise StoreError(
            f"cannot make a results store in {root}: it is not empty and not a store "
            f"(it holds {shown}); give a new or empty directory, or an existing store"
        )


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


class Store:
    """A results store directory (see the module documentation for its layout).

    Args:
        path: the store directory.
        create: create it when missing (or when it is an empty directory); otherwise a
            missing store is a :class:`StoreError`. An existing directory that is not a
            store and not empty is always a :class:`StoreError`, and left as it is.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self.root = Path(path).expanduser().absolute()
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"store path exists and is not a directory: {self.root}")
        if not self.root.exists():
            if not create:
                raise StoreError(f"no results store at {self.root}")
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store {self.root}: {exc.strerror}") from None
        elif not is_store(self.root):
            if not create:
                raise StoreError(
                    f"not a Shoal results store (no runs/ and sweeps/ folders): {self.root}"
                )
            check_store_path(self.root)
        if create:
            try:
                for sub in ("runs", "sweeps", ".staging"):
                    (self.root / sub).mkdir(exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot write the store {self.root}: {exc.strerror}") from None
            self._clean_staging()

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def sweeps_dir(self) -> Path:
        return self.root / "sweeps"

    # -- single runs ---------------------------------------------------------------

    def run_dir(self, key: str) -> Path:
        return self.runs_dir / key

    def meta(self, key: str) -> dict[str, Any] | None:
        """The ``meta.json`` of a run, or ``None`` when the store does not have it.

        An unreadable ``meta.json`` gives ``{"status": "corrupt", "error": <why>}``.
        """
        path = self.run_dir(key) / "meta.json"
        try:
            return read_json(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (CorruptFileError, OSError) as exc:
            return {"status": CORRUPT, "error": _why(exc, path)}

    def status(self, key: str) -> str | None:
        """``"ok"``, ``"failed"``, ``"corrupt"`` (its files cannot be read back), or
        ``None`` when the run is not in the store. Only ``"ok"`` runs are reused by a
        sweep: a corrupt one is simulated again, and replaced."""
        meta = self.meta(key)
        if meta is None:
            return None
        status = meta.get("status")
        if status == "ok":
            if not (self.run_dir(key) / "summary.json").is_file():
                return None
            if self.damage(key) is not None:
                return CORRUPT
        return str(status) if status else None

    def damage(self, key: str) -> str | None:
        """Why the files of finished run ``key`` cannot be read back, or None. Cheap: the
        summary is parsed and its shape checked, the Parquet files only checked for
        truncation."""
        try:
            read_summary(self.run_dir(key) / "summary.json")
        except (CorruptFileError, OSError) as exc:
            return _why(exc, self.run_dir(key) / "summary.json")
        for name in (n for n in RUN_FILES if n.endswith(".parquet")):
            path = self.run_dir(key) / name
            if path.exists() and not parquet_intact(path):
                return str(CorruptFileError(path, "not a complete Parquet file"))
        return None

    def summary(self, key: str) -> Summary:
        """The ``summary.json`` of a run.

        Raises:
            CorruptFileError: it cannot be read back, or has the wrong shape.
            OSError: the run has none.
        """
        return read_summary(self.run_dir(key) / "summary.json")

    def scenario(self, key: str) -> dict[str, Any]:
        """The resolved scenario of a run (its ``scenario.json``), or ``{}`` when the run
        has none.

        Raises:
            CorruptFileError: it cannot be read back.
        """
        path = self.run_dir(key) / "scenario.json"
        return read_json(path) if path.is_file() else {}

    def table(self, key: str, name: str, columns: list[str] | None = None) -> pd.DataFrame | None:
        """One run's Parquet file ``<name>.parquet`` (``flows``, ``queues``, ``pfc``,
        ``pfc_ports``, ``ingress``, ``headroom``, ``occupancy``), only ``columns`` when
        given, without a ``key`` column; None when the run has no such file.

        Raises:
            StoreError: ``name`` is no run table.
            CorruptFileError: the file cannot be read back.
        """
        _check_table(name)
        path = self.run_dir(key) / f"{name}.parquet"
        return _read_run_table(path, columns) if path.is_file() else None

    def with_metrics(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row``, a run's row (``key``, ``status``...), with the run's headline metrics
        when it finished. A run whose files cannot be read back is reported, not fatal:
        status ``"corrupt"``, the reason as its ``error``, and a :class:`ShoalWarning`."""
        key = row["key"]
        if row.get("status") == "ok" and (self.run_dir(key) / "summary.json").is_file():
            damage = self.damage(key)
            if damage is None:
                row.update(flatten_summary(self.summary(key)))
            else:
                row.update(status=CORRUPT, error=damage)
        if row.get("status") == CORRUPT:
            from shoal._run import ShoalWarning

            warnings.warn(
                f"run {key} of store {self.root}: {row.get('error')}; the next sweep runs it again",
                ShoalWarning,
                stacklevel=2,
            )
        return row

    def keys(self) -> list[str]:
        """Keys of every run in the store (finished or failed), sorted."""
        if not self.runs_dir.is_dir():
            return []
        return sorted(
            p.name
            for p in self.runs_dir.iterdir()
            if not p.name.startswith(".") and (p / "meta.json").is_file()
        )

    def load(self, key: str) -> Any:
        """The :class:`shoal.Result` of a finished run."""
        from shoal._run import load

        if self.status(key) != "ok":
            raise StoreError(f"run {key} is not a finished run in {self.root}")
        return load(self.run_dir(key))

    def put(self, key: str, meta: Mapping[str, Any], files: Mapping[str, bytes] | None) -> Path:
        """Write a run atomically: ``files`` (name -> content) and ``meta.json``.

        A failed run has no files. An existing entry with the same key is replaced.
        """
        staging = self.root / ".staging" / f"{key}.{socket.gethostname()}.{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            for name, content in (files or {}).items():
                if name not in RUN_FILES:
                    raise StoreError(f"unexpected run file {name!r}")
                (staging / name).write_bytes(content)
            record = dict(meta)
            record["key"] = key
            (staging / "meta.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
            target = self.run_dir(key)
            if target.exists():
                old = self.root / ".staging" / f"{key}.old.{os.getpid()}"
                shutil.rmtree(old, ignore_errors=True)
                target.rename(old)
                staging.rename(target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                staging.rename(target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return self.run_dir(key)

    def _clean_staging(self) -> None:
        """Remove staging leftovers of processes on this host that no longer exist."""
        staging = self.root / ".staging"
        host = socket.gethostname()
        for entry in staging.iterdir() if staging.is_dir() else []:
            parts = entry.name.split(".")
            pid = parts[-1]
            same_host = ".old." in entry.name or (len(parts) >= 3 and ".".join(parts[1:-1]) == host)
            if pid.isdigit() and same_host and not pid_alive(int(pid)):
                shutil.rmtree(entry, ignore_errors=True)

    # -- sweeps --------------------------------------------------------------------

    def record_sweep(self, name: str, record: Mapping[str, Any]) -> Path:
        """Write ``sweeps/<name>.json`` (the sweep's specification and run list)."""
        self.sweeps_dir.mkdir(exist_ok=True)
        path = self.sweeps_dir / f"{name}.json"
        _atomic_write_text(path, json.dumps(record, indent=2, default=str) + "\n")
        return path

    def sweeps(self) -> list[str]:
        """Names of the sweeps recorded in the store."""
        if not self.sweeps_dir.is_dir():
            return []
        return sorted(p.stem for p in self.sweeps_dir.glob("*.json"))

    def sweep_record(self, name: str | None = None) -> dict[str, Any]:
        """The record of sweep ``name`` (the only one when ``None``)."""
        names = self.sweeps()
        if name is None:
            if len(names) != 1:
                listed = ", ".join(names) or "none"
                raise StoreError(f"the store holds {len(names)} sweeps ({listed}); name one")
            name = names[0]
        path = self.sweeps_dir / f"{name}.json"
        if not path.is_file():
            raise StoreError(f"no sweep named {name!r} in {self.root} (have: {', '.join(names)})")
        data = read_json(path)
        runs = data.get("runs")
        if not isinstance(runs, list) or not all(
            isinstance(r, Mapping) and isinstance(r.get("key"), str) for r in runs
        ):
            raise CorruptFileError(path, "not a sweep record (no list of runs with keys)")
        return data

    # -- tables --------------------------------------------------------------------

    def runs(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """One row per run: key, status, error, wall time, axis values, headline metrics."""
        import pandas as pd

        rows = []
        for key in self.keys() if keys is None else keys:
            meta = self.meta(key)
            if meta is None:
                continue
            row: dict[str, Any] = {"key": key, **{c: meta.get(c) for c in RUN_META}}
            params = meta.get("params")
            row.update(params if isinstance(params, Mapping) else {})
            rows.append(self.with_metrics(row))
        return pd.DataFrame(rows)

    def flows(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The flows of the given runs (default: all), with a ``key`` column."""
        return self.tables("flows", keys)

    def samples(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """Queue samples (``queues.parquet``) of the given runs, with a ``key`` column."""
        return self.tables("queues", keys)

    def tables(self, name: str, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The run table ``name`` (:data:`TABLES`) of the given runs (default: all) that
        have one, as one frame with a leading ``key`` column.

        Raises:
            StoreError: ``name`` is no run table.
        """
        import pandas as pd

        _check_table(name)
        frames = []
        for key in self.keys() if keys is None else keys:
            path = self.run_dir(key) / f"{name}.parquet"
            if path.is_file():
                frame = _read_run_table(path)
                frame.insert(0, "key", key)
                frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def connect(self) -> Any:
        """A DuckDB connection with the ``runs`` view and one view per run table
        (:data:`TABLES`), in memory.

        The connection cannot touch files: DuckDB's external access is off and locked,
        so SQL cannot write (``COPY ... TO``), read other files, ``ATTACH`` or
        ``INSTALL``. The views read the store through objects registered beforehand (a
        DataFrame, and a pyarrow dataset of each table's files).
        """
        import duckdb
        import pandas as pd

        con = duckdb.connect()
        runs = self.runs()
        if runs.empty:
            runs = pd.DataFrame({"key": pd.Series([], dtype=str), "status": []})
        con.register("runs_df", _sql_safe(runs))
        con.execute("create view runs as select * from runs_df")
        # The tables of the runs whose files are intact (a corrupt run is listed in
        # `runs`); a table no run has is an empty view of its columns.
        ok = runs.loc[runs["status"] == "ok", "key"]
        for name, columns in TABLES.items():
            dataset = self._dataset(f"{name}.parquet", ok)
            if dataset is not None:
                con.register(f"{name}_ds", dataset)
                con.execute(f"create view {name} as select key, * exclude (key) from {name}_ds")
            else:
                typed = ", ".join(f"null::{_SQL_TYPES[t]} as {c}" for c, t in columns)
                con.execute(
                    f"create view {name} as select null::varchar as key, {typed} where false"
                )
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")
        return con

    def _dataset(self, name: str, keys: Iterable[str]) -> Any:
        """The Parquet files ``name`` of the runs ``keys`` as one pyarrow dataset with a
        ``key`` column (the run directory's name; columns missing in a run are null), or
        None when no run has one."""
        import pyarrow as pa
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        files = [self.run_dir(k) / name for k in keys]
        files = [f for f in files if f.is_file()]
        if not files:
            return None
        key = pa.schema([("key", pa.string())])
        schemas = []
        for path in files:
            try:
                schemas.append(pq.read_schema(path))
            except (OSError, pa.ArrowException) as exc:
                raise _corrupt_run_file(path, str(exc).strip().splitlines()[0]) from None
        schema = pa.unify_schemas([*schemas, key], promote_options="permissive")
        return ds.dataset(
            [str(f) for f in files],
            schema=schema,
            format="parquet",
            partitioning=ds.partitioning(key),
            partition_base_dir=str(self.runs_dir),
        )

    def query(self, sql: str) -> pd.DataFrame:
        """Run SQL over the ``runs`` and ``flows`` views and return the result.

        Raises:
            StoreError: ``sql`` is not text, or gives no table (empty, only a comment).
        """
        if not isinstance(sql, str) or not sql.strip():
            raise StoreError(f"query: {_NO_TABLE}, got {sql!r}")
        con = self.connect()
        try:
            cursor = con.execute(sql)
            if cursor is None or cursor.description is None:
                raise StoreError(f"query: {sql.strip()!r} gives no table; {_NO_TABLE}")
            result: pd.DataFrame = cursor.df()
        finally:
            con.close()
        return result


_NO_TABLE = "expected a SQL query over the view runs or a run table's, e.g. select * from runs"

#: DuckDB's type of each column type of :data:`TABLES`.
_SQL_TYPES = {
    "u8": "utinyint",
    "u32": "uinteger",
    "u64": "ubigint",
    "i64": "bigint",
    "f64": "double",
    "bool": "boolean",
    "str": "varchar",
}


def _check_table(name: str) -> None:
    """Raise ``StoreError`` unless ``name`` is a run table."""
    if name not in TABLES:
        raise StoreError(f"no run table {name!r}; accepted: {', '.join(TABLES)}")


def _why(exc: BaseException, path: Path) -> str:
    """The reason a store file cannot be read, naming the file."""
    if isinstance(exc, OSError):
        return f"cannot read {path}: {exc.strerror or exc}"
    return str(exc)


def _corrupt_run_file(path: Path, reason: str) -> CorruptFileError:
    """A damaged run file of the store, with what to do about it."""
    return CorruptFileError(path, f"{reason}; running its sweep again redoes that run")


def _read_run_table(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    try:
        return read_parquet(path, columns)
    except CorruptFileError as exc:
        raise _corrupt_run_file(path, exc.reason) from None


def _sql_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns mixing types (axis values) as strings so DuckDB can type them."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            kinds = {type(v) for v in out[column].dropna()}
            if len(kinds) > 1 or (kinds and not kinds <= {str, int, float, bool}):
                out[column] = out[column].map(lambda v: None if v is None else _text(v))
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
