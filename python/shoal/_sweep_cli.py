"""CLI commands of sweeps, the results store, figures and reports.

``shoal sweep``, ``shoal results list|query|show``, ``shoal plot ...`` and
``shoal report``; registered on the main app by :func:`register`. User mistakes print
``error: ...`` and exit 2; a sweep in which some runs failed exits 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shoal._cli_options import ClusterOption, JobsOption, store_option
from shoal._cli_util import console, escape, fail, show_summary, user_errors
from shoal._output import check_output_file, replace_file

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["register"]

EXIT_RUNS_FAILED = 1


@contextmanager
def _errors() -> Iterator[None]:
    """:func:`~shoal._cli_util.user_errors`, with the sweep's, the store's and the plots'
    errors and DuckDB's query errors as user mistakes."""
    from shoal._sweep import SweepError
    from shoal.plot import PlotError
    from shoal.store import StoreError

    with user_errors(SweepError, StoreError, PlotError):
        try:
            yield
        except Exception as exc:
            if type(exc).__module__.lstrip("_").split(".")[0] == "duckdb":
                fail(f"query: {str(exc).strip()}")
            raise


def _frame_table(frame: pd.DataFrame, limit: int | None = 60, title: str | None = None) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in frame.columns:
        table.add_column(str(column), overflow="fold")
    shown = frame if limit is None else frame.head(limit)
    for row in shown.itertuples(index=False):
        table.add_row(*(_fmt(v) for v in row))
    if limit is not None and len(frame) > limit:
        table.caption = f"{len(frame) - limit} more rows (--limit)"
    return table


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value)


_HEADLINE = ["small_mean_fct_ns", "small_p99_fct_ns", "all_p99_slowdown", "loss_rate"]


def _print_frame(
    frame: pd.DataFrame, fmt: str, limit: int | None, title: str | None = None
) -> None:
    if fmt == "csv":
        frame.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        sys.stdout.write(frame.to_json(orient="records", indent=2) + "\n")
    else:
        console("stdout").print(_frame_table(frame, limit, title))


# -- shoal sweep ---------------------------------------------------------------------


def sweep_cmd(
    sweep_file: Annotated[Path, typer.Argument(help="Sweep file (TOML).", show_default=False)],
    jobs: JobsOption = None,
    cluster: ClusterOption = None,
    store: Annotated[Path | None, store_option("the sweep's, else results/<name>")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the runs (and which are stored); run none.")
    ] = False,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write report.html at the end.")
    ] = True,
    csv_out: Annotated[
        Path | None, typer.Option("--csv", help="Also write the sweep's table as CSV.")
    ] = None,
) -> None:
    """Run a sweep: a base scenario x schemes x axes x seeds, in parallel, into a store.

    Runs already in the store are skipped, so running the same sweep again resumes an
    interrupted one. Exit status 1 when some runs failed (they are recorded).
    """
    from shoal._sweep import dry_run as plan
    from shoal._sweep import load_sweep, sweep
    from shoal.store import check_store_path

    if dry_run:
        with _errors():
            spec = load_sweep(sweep_file, store=store)
            frame = plan(spec)
        _print_frame(frame, "table", None, title=f"sweep {spec.name}: {len(frame)} runs")
        return
    with _errors():
        spec = load_sweep(sweep_file, store=store)
        check_store_path(spec.store)  # before anything is printed or simulated
        if csv_out is not None:
            check_output_file(csv_out, _is_sweep_csv, "sweep table")
        interactive = not quiet and console("stderr").is_terminal
        console("stderr").print(
            f"sweep [bold]{escape(spec.name)}[/bold] → store {escape(str(spec.store))}"
        )
        frame = sweep(
            spec,
            jobs=jobs,
            cluster=cluster,
            progress=interactive,
            log=None if quiet else (lambda line: console("stderr").print(line, markup=False)),
        )
        if csv_out is not None:
            replace_file(
                csv_out, lambda tmp: frame.to_csv(tmp, index=False), _is_sweep_csv, "sweep table"
            )
        report_path = None
        if report:
            from shoal.report import write_report

            report_path = write_report(spec.store, spec.name)
    console("stdout").print(_frame_table(_headline(frame), 60, title=f"sweep {spec.name}"))
    n_failed = int((frame["status"] != "ok").sum())
    n_cached = int(frame["cached"].sum())
    console("stdout").print(
        f"{len(frame)} runs: {len(frame) - n_failed} ok ({n_cached} from the store), "
        f"{n_failed} failed · store {escape(str(spec.store))}"
    )
    if report_path is not None:
        console("stdout").print(f"report: {escape(str(report_path))}")
    if n_failed:
        console("stderr").print(
            f"[yellow]warning:[/yellow] {n_failed} runs failed; "
            f"`shoal results list {escape(str(spec.store))} --failed` shows why"
        )
        raise typer.Exit(EXIT_RUNS_FAILED)


def _headline(frame: pd.DataFrame) -> pd.DataFrame:
    """Axis columns, status and a few headline metrics, formatted for a terminal."""
    import pandas as pd

    from shoal._units import fmt_time

    out = pd.DataFrame({c: frame[c] for c in frame.attrs.get("axes", []) if c in frame})
    out["status"] = frame["status"]
    if "cached" in frame:
        out["stored"] = frame["cached"].map(lambda v: "yes" if v else "")
    for column, name in (
        ("small_mean_fct_ns", "small mean FCT"),
        ("small_p99_fct_ns", "small p99 FCT"),
        ("all_mean_fct_ns", "mean FCT"),
    ):
        if column in frame:
            out[name] = frame[column].map(lambda v: fmt_time(v) if v == v else "")
    if "all_p99_slowdown" in frame:
        out["p99 slowdown"] = frame["all_p99_slowdown"]
    if "loss_rate" in frame:
        out["loss"] = frame["loss_rate"].map(lambda v: f"{100 * v:.3g}%" if v == v else "")
    return out


# -- shoal results -------------------------------------------------------------------

results_app = typer.Typer(
    help="List and query a results store (DuckDB SQL over runs and flows).",
    no_args_is_help=True,
)

FormatOption = Annotated[
    str, typer.Option("--format", "-f", help="table, csv or json.", case_sensitive=False)
]


def _check_format(fmt: str) -> str:
    fmt = fmt.lower()
    if fmt not in ("table", "csv", "json"):
        fail(f"--format: expected table, csv or json, got {fmt!r}")
    return fmt


@results_app.command("list")
def results_list(
    store: Annotated[
        Path | None,
        typer.Argument(help="A results store.", show_default="list the stores in results/"),
    ] = None,
    sweep: Annotated[str | None, typer.Option(help="Only this sweep's runs.")] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only failed runs, with errors.")
    ] = False,
    fmt: FormatOption = "table",
    limit: Annotated[int, typer.Option(help="Rows to print in a table.")] = 60,
) -> None:
    """List the runs of a store (or, without STORE, the stores under results/)."""
    from shoal._sweep import sweep_table
    from shoal.store import Store

    fmt = _check_format(fmt)
    # Printed outside _errors(): an output error is not a user mistake (see cli.main).
    with _errors():
        if store is None:
            stores = _stores()
        else:
            db = Store(store)
            frame = sweep_table(db, sweep) if sweep is not None else db.runs()
    if store is None:
        _print_frame(stores, fmt, None)
        return
    if frame.empty:
        console("stderr").print("the store holds no runs")
        return
    frame = _listing(frame, failed)
    title = f"{len(frame)} runs in {db.root}"
    _print_frame(frame, fmt, None if fmt != "table" else limit, title=title)


def _stores() -> pd.DataFrame:
    """The stores under ``results/``: path, number of runs, sweeps."""
    import pandas as pd

    from shoal.store import Store, is_store

    root = Path("results")
    stores = sorted(p for p in root.glob("*") if is_store(p)) if root.is_dir() else []
    if not stores:
        fail("no results stores under results/; give a STORE path")
    rows = []
    for path in stores:
        db = Store(path)
        rows.append({"store": str(path), "runs": len(db.keys()), "sweeps": ", ".join(db.sweeps())})
    return pd.DataFrame(rows)


def _listing(frame: pd.DataFrame, failed: bool) -> pd.DataFrame:
    """The columns of ``results list``: with ``failed``, failed runs and their errors."""
    from shoal.store import RUN_META

    if failed:
        frame = frame[frame["status"] != "ok"]
        cols = [
            "key",
            "status",
            *[
                c
                for c in frame.columns
                if c not in ("key", "status", "error") and not _is_metric(c)
            ],
            "error",
        ]
    else:
        meta = {"key", "cached", *RUN_META}
        params = [c for c in frame.columns if c not in meta and not _is_metric(c)]
        headline = [c for c in _HEADLINE if c in frame]
        cols = ["key", "status", *params, *headline, "wall_time_s", "peak_rss_mb"]
    return frame[[c for c in dict.fromkeys(cols) if c in frame]]


def _is_metric(column: str) -> bool:
    from shoal.store import flatten_summary

    global _METRICS
    if _METRICS is None:
        _METRICS = set(
            flatten_summary({"fct": {b: {} for b in ("small", "medium", "large", "all")}})
        )
    # A later collective job's columns (`collective<j>_...`) are metrics as the first's are.
    return column in _METRICS or column.removeprefix("collective").partition("_")[0].isdigit()


_METRICS: set[str] | None = None


@results_app.command("query")
def results_query(
    store: Annotated[Path, typer.Argument(help="A results store.")],
    sql: Annotated[str, typer.Argument(help="SQL over the views `runs` and `flows`.")],
    fmt: FormatOption = "table",
    limit: Annotated[int, typer.Option(help="Rows to print in a table.")] = 60,
) -> None:
    """Run SQL (DuckDB) over the store: views `runs` (one row per run) and `flows`.

    Axis columns are named by scenario key; quote them: select "workload.load",
    avg(small_p99_fct_ns) from runs group by 1.
    """
    from shoal.store import Store

    fmt = _check_format(fmt)
    with _errors():
        frame = Store(store).query(sql)
    _print_frame(frame, fmt, None if fmt != "table" else limit)


@results_app.command("show")
def results_show(
    store: Annotated[Path, typer.Argument(help="A results store.")],
    key: Annotated[str, typer.Argument(help="A run key (a unique prefix is enough).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Print one run of the store: its summary, or its error."""
    from shoal.store import Store

    with _errors():
        db = Store(store)
        matches = [k for k in db.keys() if k.startswith(key)]  # noqa: SIM118
        if len(matches) != 1:
            fail(f"{len(matches)} runs match {key!r} in {db.root}")
        meta = db.meta(matches[0]) or {}
        damage = db.damage(matches[0]) if meta.get("status") == "ok" else None
        if damage is not None:  # shown as a failed run is: status and reason
            meta = {**meta, "status": "corrupt", "error": damage}
        result = db.load(matches[0]) if meta.get("status") == "ok" else None
    if result is None:
        params = escape(str(meta.get("params")))
        console("stdout").print(f"run {matches[0]}: {meta.get('status')}; params {params}")
        console("stdout").print(escape(str(meta.get("error"))))
        if meta.get("traceback"):
            console("stdout").print(escape(meta["traceback"]))
        return
    console("stdout").print(f"run {matches[0]}: params {escape(json.dumps(meta.get('params')))}")
    show_summary(result.summary, result.path, as_json=as_json)


# -- shoal plot ----------------------------------------------------------------------

plot_app = typer.Typer(
    help="Draw figures of a sweep or of one run (PNG/PDF, readable in print).",
    no_args_is_help=True,
)

StoreArg = Annotated[Path, typer.Argument(help="A results store.")]
SweepOpt = Annotated[
    str | None, typer.Option(help="The sweep.", show_default="the store's only one")
]
WhereOpt = Annotated[
    str | None,
    typer.Option(help="Keep runs matching this SQL condition, e.g. '\"workload.load\" = 0.6'."),
]
ByOpt = Annotated[
    list[str] | None,
    typer.Option(help="Column making the lines (repeatable).", show_default="scheme"),
]
OutOpt = Annotated[
    Path, typer.Option("--out", "-o", help="Output file (.png or .pdf; no suffix: both).")
]
TitleOpt = Annotated[str | None, typer.Option(help="Figure title.")]


def _runs(store: Path, sweep: str | None, where: str | None) -> tuple[Any, pd.DataFrame]:
    from shoal._sweep import sweep_table
    from shoal.store import Store

    db = Store(store)
    frame = sweep_table(db, sweep)
    if where:
        keys = set(db.query(f"select key from runs where {where}")["key"])
        attrs = dict(frame.attrs)
        frame = frame[frame["key"].isin(keys)].copy()
        frame.attrs.update(attrs)
    if frame.empty:
        fail("no runs to plot" + (f" match --where {where}" if where else ""))
    return db, frame


def _by(by: list[str] | None, frame: pd.DataFrame) -> list[str] | None:
    if by:
        missing = [c for c in by if c not in frame.columns]
        if missing:
            axes = ", ".join(frame.attrs.get("axes", []))
            fail(f"--by {missing[0]}: no such column (axes: {axes})")
        return by
    return ["scheme"] if "scheme" in frame.columns else None


def _draw(
    figure: Callable[..., Any],
    store: Path,
    out: Path,
    by: list[str] | None,
    sweep: str | None,
    where: str | None,
    title: str | None,
    data: Callable[[Any, pd.DataFrame], pd.DataFrame] | None = None,
) -> None:
    """Draw a figure of a store's runs and save it: the body of every ``shoal plot`` command.

    ``store``, ``out``, ``by``, ``sweep``, ``where`` and ``title`` are the options every
    plot command has, passed on as the command got them.

    Args:
        figure: A figure of :mod:`shoal.plot` with the command's own options bound
            (:func:`functools.partial`); it is given the data, ``by`` and ``title``.
        data: What ``figure`` draws, from the store and the runs to plot (e.g.
            :func:`shoal.plot.sweep_flows`); the runs' table itself when None.
    """
    with _errors():
        db, runs = _runs(store, sweep, where)
        drawn = runs if data is None else data(db, runs)
        _save(figure(drawn, by=_by(by, runs), title=title), out)


def _save(fig: Any, out: Path) -> None:
    """Save a figure (``--out``) and say where."""
    from shoal.plot import save

    for path in save(fig, out):
        console("stderr").print(f"wrote {escape(str(path))}")


@plot_app.command("fct-vs-load")
def plot_fct_vs_load(
    store: StoreArg,
    out: OutOpt,
    x: Annotated[str, typer.Option(help="x axis column.")] = "workload.load",
    by: ByOpt = None,
    normalize_to: Annotated[
        str | None, typer.Option(help="Divide by this scheme (line label) at the same x.")
    ] = None,
    metric: Annotated[str, typer.Option(help="fct or slowdown.")] = "fct",
    stat: Annotated[list[str] | None, typer.Option(help="mean, p50, p99 (repeatable).")] = None,
    sweep: SweepOpt = None,
    where: WhereOpt = None,
    title: TitleOpt = None,
) -> None:
    """FCT per size bucket vs load (mean and 99th percentile), one line per scheme."""
    from shoal.plot import fct_vs_load

    stats = stat or ("mean", "p99")
    figure = partial(fct_vs_load, x=x, normalize_to=normalize_to, metric=metric, stats=stats)
    _draw(figure, store, out, by, sweep, where, title)


def _vs_load_command(name: str, plotter: str, doc: str) -> None:
    """Registers ``shoal plot <name>``: ``shoal.plot.<plotter>`` of a store's runs against
    a column (the load by default), one line per scheme."""

    def command(
        store: StoreArg,
        out: OutOpt,
        x: Annotated[str, typer.Option(help="x axis column.")] = "workload.load",
        by: ByOpt = None,
        sweep: SweepOpt = None,
        where: WhereOpt = None,
        title: TitleOpt = None,
    ) -> None:
        import shoal.plot

        figure = partial(getattr(shoal.plot, plotter), x=x)
        _draw(figure, store, out, by, sweep, where, title)

    command.__doc__ = doc
    plot_app.command(name)(command)


_vs_load_command("loss-vs-load", "loss_vs_load", "Packet loss rate vs load, one line per scheme.")
_vs_load_command(
    "pfc-vs-load",
    "pfc_vs_load",
    "PFC paused time (summed over the paused port classes) vs load, one line per scheme.",
)


@plot_app.command("slowdown-vs-size")
def plot_slowdown_vs_size(
    store: StoreArg,
    out: OutOpt,
    by: ByOpt = None,
    buckets: Annotated[int, typer.Option(help="Flow-size percentile buckets.")] = 10,
    sweep: SweepOpt = None,
    where: WhereOpt = None,
    title: TitleOpt = None,
) -> None:
    """Median and p99 FCT slowdown per flow-size percentile bucket (HPCC/BFC style)."""
    from shoal.plot import slowdown_vs_size, sweep_flows

    figure = partial(slowdown_vs_size, n_buckets=buckets)
    _draw(figure, store, out, by, sweep, where, title, data=sweep_flows)


@plot_app.command("fct-cdf")
def plot_fct_cdf(
    store: StoreArg,
    out: OutOpt,
    by: ByOpt = None,
    bucket: Annotated[str | None, typer.Option(help="small, medium or large only.")] = None,
    sweep: SweepOpt = None,
    where: WhereOpt = None,
    title: TitleOpt = None,
) -> None:
    """CDF of flow completion times, one line per scheme."""
    from shoal.plot import fct_cdf, sweep_flows

    figure = partial(fct_cdf, bucket=bucket)
    _draw(figure, store, out, by, sweep, where, title, data=sweep_flows)


@plot_app.command("buffer-cdf")
def plot_buffer_cdf(
    store: StoreArg,
    out: OutOpt,
    by: ByOpt = None,
    level: Annotated[str, typer.Option(help="pool or queue.")] = "pool",
    ports_per_pool: Annotated[int, typer.Option(help="switch.ports_per_pool of the runs.")] = 8,
    sweep: SweepOpt = None,
    where: WhereOpt = None,
    title: TitleOpt = None,
) -> None:
    """CDF of buffer occupancy (needs run.sample_interval in the scenario)."""
    from shoal.plot import buffer_cdf, sweep_samples

    figure = partial(buffer_cdf, level=level, ports_per_pool=ports_per_pool)
    _draw(figure, store, out, by, sweep, where, title, data=sweep_samples)


RunArg = Annotated[Path, typer.Argument(help="A run directory (shoal run --out).")]


def _draw_run(figure: Callable[[Any], Any], run: Path, out: Path) -> None:
    """Draw a figure of one run directory and save it: the body of the run plots."""
    import shoal

    with _errors():
        if not (run / "summary.json").is_file():
            fail(f"{run}: not a run directory (no summary.json; write one with shoal run --out)")
        _save(figure(shoal.load(run)), out)


@plot_app.command("queues")
def plot_queues(
    run: RunArg,
    out: OutOpt,
    ports: Annotated[int, typer.Option(help="The busiest ports to draw.")] = 6,
    title: TitleOpt = None,
) -> None:
    """Queue length over time of a run's busiest ports (needs run.sample_interval)."""
    from shoal.plot import queues_over_time

    _draw_run(lambda r: queues_over_time(r.samples, ports=ports, title=title), run, out)


@plot_app.command("pauses")
def plot_pauses(run: RunArg, out: OutOpt, title: TitleOpt = None) -> None:
    """When each port class of a run was paused by PFC (a lossless class)."""
    from shoal.plot import pause_timeline

    def figure(r: Any) -> Any:
        end = r.summary.get("duration_ps")
        return pause_timeline(r.pfc, end_ns=None if end is None else end / 1e3, title=title)

    _draw_run(figure, run, out)


@plot_app.command("rates")
def plot_rates(
    run: RunArg,
    out: OutOpt,
    flow: Annotated[list[int] | None, typer.Option(help="A traced flow's id (repeatable).")] = None,
    title: TitleOpt = None,
) -> None:
    """Traced flows' rate or window over time (needs run.series)."""
    from shoal.plot import flow_rates

    _draw_run(lambda r: flow_rates(r.series, flows=flow, title=title), run, out)


# -- shoal report --------------------------------------------------------------------


def report_cmd(
    store: StoreArg,
    sweep: SweepOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Report file.", show_default="<store>/sweeps/<name>/report.html"
        ),
    ] = None,
) -> None:
    """Write the HTML report of a sweep: parameters, results table, figures."""
    from shoal.report import write_report

    with _errors():
        path = write_report(store, sweep, out=out)
    console("stdout").print(f"report: {escape(str(path))}")


def register(app: typer.Typer) -> None:
    """Add ``sweep``, ``results``, ``plot`` and ``report`` to the ``shoal`` app."""
    app.command("sweep")(sweep_cmd)
    app.add_typer(results_app, name="results")
    app.add_typer(plot_app, name="plot")
    app.command("report")(report_cmd)


def _is_sweep_csv(path: Path) -> bool:
    """Whether ``path`` is a sweep table Shoal wrote as CSV (its header names the
    columns every sweep table has)."""
    try:
        with path.open("rb") as fh:
            header = set(fh.readline().rstrip(b"\r\n").split(b","))
    except OSError:
        return False
    return {b"key", b"status", b"error", b"wall_time_s"} <= header
