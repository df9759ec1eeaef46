"""Start-up: `import shoal` and `shoal run` stay lean (the core writes the run directory:
no numpy, pandas or pyarrow), and the CLI writes the same files as the API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import shoal
from conftest import CliRunner

HEAVY = (
    "numpy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "duckdb",
    "dask",
    "distributed",
    "typer",
    "pydantic",
)


def _imported(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('IMPORTED', *(m for m in {HEAVY!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.strip().splitlines()[-1].split()[1:])


def test_import_shoal_and_cli_import_nothing_heavy() -> None:
    assert _imported("import shoal") == set()
    assert _imported("import shoal.cli") == set()


def test_shoal_run_imports_no_numpy_pandas_or_pyarrow(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = (
        "import sys\nfrom shoal.cli import main\n"
        f"sys.argv = ['shoal', 'run', {str(tiny)!r}, '--quiet', '--out', {str(out)!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code"
    )
    assert _imported(code) == set()
    assert (out / "flows.parquet").is_file() and (out / "summary.json").is_file()


def test_lazy_attributes_are_the_public_api() -> None:
    from shoal import Store, StoreError, SweepError, load_sweep, sweep_table  # noqa: F401

    assert callable(shoal.sweep) and callable(shoal.plot.fct_cdf)
    assert shoal.advise.check is not None and shoal.report is not None
    assert set(shoal.__all__) <= set(dir(shoal))


def test_cli_run_writes_the_same_files_as_the_api(
    shoal_cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    over = ["run.stop_time=5us", "run.sample_interval=1us"]  # 8 of 20 flows unfinished (NaN)
    with pytest.warns(shoal.ShoalWarning, match="did not finish"):
        shoal.run(tiny, set=over, out=tmp_path / "api")
    args = [a for kv in over for a in ("--set", kv)]
    proc = shoal_cli("run", tiny, "--quiet", "--out", tmp_path / "cli", *args)
    assert proc.returncode == 0, proc.stderr
    for name in ("flows.parquet", "queues.parquet", "scenario.json"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    api, cli = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("api", "cli"))
    for s in (api, cli):
        s.pop("wall_time_s"), s.pop("events_per_s")
    assert api == cli


def test_the_fast_run_path_parses_as_the_typer_command() -> None:
    """`shoal run`'s options are declared once (RUN_OPTIONS): the typer command has
    exactly those, and the fast path reads what typer reads, or hands over to typer."""
    import typer.main

    from shoal._cli_app import app
    from shoal._cli_util import RUN_OPTIONS
    from shoal.cli import _parse_fast_run

    command = typer.main.get_command(app)
    params = {p.name: p for p in command.commands["run"].params}  # type: ignore[attr-defined]
    not_run_options = ("scenario", "print_defaults", "print_presets")
    options = {n: p for n, p in params.items() if n not in not_run_options}
    assert set(options) == set(RUN_OPTIONS)
    for name, option in RUN_OPTIONS.items():
        param = options[name]
        assert tuple(param.opts) == option.flags and param.help == option.help
        assert param.is_flag != option.value and param.multiple == option.repeat
    parsed = _parse_fast_run(
        ["run", "x.toml", "-o", "d", "--set=a.b=1", "-s", "c=2", "--seed", "7", "-q"]
    )
    assert parsed == {
        "scenario": Path("x.toml"),
        "out": Path("d"),
        "overrides": ["a.b=1", "c=2", "run.seed=7"],
        "quiet": True,
        "as_json": False,
    }
    for typer_parses in (
        ["run", "x.toml", "--help"],
        ["run", "--print-defaults"],
        ["run", "x.toml", "--seed", "seven"],
        ["run", "x.toml", "-q", "-q"],
        ["run", "x.toml", "--out"],
        ["run", "x.toml", "--out", "a", "--out", "b"],
        ["run", "x.toml", "--json=yes"],
        ["run", "x.toml", "y.toml"],
    ):
        assert _parse_fast_run(typer_parses) is None, typer_parses


def test_the_cli_modules_import_the_helpers_not_the_entry_point() -> None:
    """No import cycle: the command modules use shoal._cli_util, never shoal.cli."""
    for module in ("_cli_app", "_cli_util", "_sweep_cli", "advise/cli", "reproduce/cli"):
        text = (Path(shoal.__file__).parent / f"{module}.py").read_text()
        assert "from shoal.cli import" not in text and "from shoal import cli" not in text
