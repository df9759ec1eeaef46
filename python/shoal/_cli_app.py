"""The typer app of the ``shoal`` command line (see :mod:`shoal.cli`, the entry point,
which parses a plain ``shoal run`` itself, with the same options, and imports this
module only otherwise)."""

from __future__ import annotations

import csv
import math
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer

from shoal import _core
from shoal._cli_util import (
    RUN_OPTIONS,
    console,
    escape,
    fail,
    run_command,
    show_summary,
    user_errors,
)
from shoal._output import check_output_file, replace_file
from shoal._run import Result, load, run, trace
from shoal.advise.cli import advise_app

__all__ = ["app"]

app = typer.Typer(
    name="shoal",
    help="Shoal: a fast packet-level simulator of datacenter networks and switch buffers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
stdout = console("stdout")
stderr = console("stderr")
app.add_typer(advise_app, name="advise")


def _show(result: Result, *, as_json: bool, written: bool = False) -> None:
    show_summary(result.summary, result.path, as_json=as_json, written=written)


def _option(name: str, **kwargs: Any) -> Any:
    """The typer option of ``shoal run``'s parameter ``name`` (:data:`RUN_OPTIONS`)."""
    option = RUN_OPTIONS[name]
    return typer.Option(*option.flags, help=option.help, **kwargs)


SetOption = Annotated[list[str] | None, _option("set_", metavar="KEY=VALUE")]
SeedOption = Annotated[int | None, _option("seed")]
ThreadsOption = Annotated[str | None, _option("threads", metavar="N|auto")]


@app.command("run")
def run_cmd(
    scenario: Annotated[
        Path | None, typer.Argument(help="Scenario file (TOML).", show_default=False)
    ] = None,
    out: Annotated[Path | None, _option("out", show_default="results/<scenario stem>")] = None,
    set_: SetOption = None,
    seed: SeedOption = None,
    threads: ThreadsOption = None,
    quiet: Annotated[bool, _option("quiet")] = False,
    as_json: Annotated[bool, _option("as_json")] = False,
    print_defaults: Annotated[
        bool,
        typer.Option("--print-defaults", help="Print every scenario key with its default."),
    ] = False,
    print_presets: Annotated[
        bool,
        typer.Option(
            "--print-presets", help='Print the named presets (`preset = "<name>"`) as TOML.'
        ),
    ] = False,
) -> None:
    """Run a scenario and write its run directory."""
    if print_defaults:
        sys.stdout.write(_core.default_scenario_toml())
        return
    if print_presets:
        sys.stdout.write(_core.presets_toml())
        return
    if scenario is None:
        fail("missing SCENARIO (a TOML file); see `shoal run --help`")
    overrides = list(set_ or [])
    if seed is not None:
        overrides.append(f"run.seed={seed}")
    if threads is not None:
        overrides.append(f"run.threads={threads}")
    run_command(scenario, out, overrides, quiet=quiet, as_json=as_json)


@app.command("summarize")
def summarize_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Print the headline results of a run directory."""
    from shoal._summary import read_summary

    with user_errors():  # also a damaged file: error, exit 2
        summary = run_dir / "summary.json"
        if summary.is_file():  # its shape first: load() and the table rely on it
            read_summary(summary)
        result = load(run_dir)
    _show(result, as_json=as_json)


@app.command("trace")
def trace_cmd(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="CSV file to write.")],
    set_: SetOption = None,
    seed: SeedOption = None,
) -> None:
    """Export the flows a scenario generates as CSV: id,src,dst,bytes,start_ns,priority."""
    overrides = list(set_ or [])
    if seed is not None:
        overrides.append(f"run.seed={seed}")
    with user_errors():
        check_output_file(out, _is_trace, "trace")
        flows = trace(scenario, set=overrides)
        _write_csv(flows, out)
    stderr.print(f"{len(flows)} flows written to {escape(str(out))}")


def _csv_cell(value: Any) -> str:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def _is_trace(path: Path) -> bool:
    """Whether ``path`` is a trace Shoal exported (its first line is the trace header)."""
    try:
        with path.open("rb") as fh:
            return fh.readline().rstrip(b"\r\n") == ",".join(_core.trace_columns()).encode()
    except OSError:
        return False


def _write_csv(flows: Any, out: Path) -> None:
    """Write the trace CSV ``out``; an existing file is replaced only if it is a trace."""

    def write(tmp: Path) -> None:
        with tmp.open("w", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            columns = list(flows.columns)
            writer.writerow(columns)
            for row in zip(*(flows[c].tolist() for c in columns), strict=True):
                writer.writerow([_csv_cell(v) for v in row])

    replace_file(out, write, _is_trace, "trace")


@app.command("demo")
def demo_cmd(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Also write the run directory here.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run the quickstart experiment (32-host star, DCTCP, web search) and print results."""
    scenario = resources.files("shoal") / "scenarios" / "star_dctcp.toml"
    with resources.as_file(scenario) as path, user_errors():
        stderr.print(f"running the quickstart scenario {path.name} (DCTCP on a 32-host star)")
        result = run(path, out=out, progress=not quiet and stderr.is_terminal)
    _show(result, as_json=False, written=out is not None)


@app.command("version", hidden=True)
def version_cmd() -> None:
    """Print the Shoal version."""
    stdout.print(_core.__version__)


# Sweeps, the results store, figures and reports (shoal sweep / results / plot / report).
from shoal._sweep_cli import register as _register_sweep_commands  # noqa: E402

_register_sweep_commands(app)

# Paper experiments (shoal reproduce).
from shoal.reproduce.cli import register as _register_reproduce  # noqa: E402

_register_reproduce(app)
