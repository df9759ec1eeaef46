"""Mistakes in the Python API and the CLI outside scenarios (issue 30, item 6): each is a
typed exception with a clear message (API) or ``error:`` and exit status 2 (CLI), never
a Python traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import shoal
from conftest import TINY, CliRunner
from shoal._core import ScenarioError
from shoal._sweep import SweepError
from shoal.reproduce import ExperimentError, find, reproduce

#: One tiny run: a sweep that a test can run in well under a second.
ONE_RUN = {
    "scenario": {
        "topology": {"kind": "star", "hosts": 4, "link_delay": "1us"},
        "workload": {"flows": 5},
    },
}


def _user_error(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, ``error:`` naming every one of ``words``, no traceback."""
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}\n{output}"
    assert "error:" in proc.stderr, output
    assert "Traceback" not in output, output
    for word in words:
        assert word in proc.stderr, f"{word!r} not in:\n{proc.stderr}"


# -- a name far longer than a file name may be -------------------------------------------

LONG = "x" * 300


@pytest.mark.parametrize("name", [LONG, f"dsh/{LONG}", f"{LONG}/fig4"])
def test_find_a_very_long_name_is_an_unknown_experiment(name: str) -> None:
    with pytest.raises(ExperimentError, match="unknown experiment"):
        find(name)


def test_reproduce_a_very_long_name_is_a_user_error(shoal_cli: CliRunner) -> None:
    _user_error(shoal_cli("reproduce", f"dsh/{LONG}"), "unknown experiment")


# -- --cluster without dask.distributed ----------------------------------------------------


@pytest.fixture
def no_dask(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import distributed`` fails as when it is not installed."""
    fake = tmp_path / "no_dask"
    (fake / "distributed").mkdir(parents=True)
    (fake / "distributed" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'distributed'\", name='distributed')\n"
    )
    path = os.pathsep.join(p for p in (str(fake), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, COLUMNS="120", NO_COLOR="1")


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shoal", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_sweep_on_a_cluster_without_dask_says_what_installs_it(
    no_dask: dict[str, str], tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text("[scenario.topology]\nhosts = 4\n[scenario.workload]\nflows = 5\n")
    proc = _cli(no_dask, tmp_path, "sweep", str(sweep), "--cluster", "tcp://127.0.0.1:1", "-q")
    _user_error(proc, "dask", 'pip install ".[cluster]"')
    assert "shoal[cluster]" not in proc.stderr, "Shoal is not on a package index"


def test_reproduce_on_a_cluster_without_dask_says_what_installs_it(
    no_dask: dict[str, str], tmp_path: Path
) -> None:
    proc = _cli(no_dask, tmp_path, "reproduce", "dsh/fig4", "--cluster", "tcp://127.0.0.1:1")
    _user_error(proc, "dask", 'pip install ".[cluster]"')


def test_api_sweep_on_a_cluster_without_dask_is_a_sweep_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    with pytest.raises(SweepError, match="dask"):
        shoal.sweep(ONE_RUN, cluster="tcp://127.0.0.1:1", store=tmp_path / "st", progress=False)


# -- a sweep name or store with a NUL byte ---------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"), [("name", "a\x00b"), ("store", "st\x00re"), ("name", "n" * 300)]
)
def test_a_sweep_name_or_store_no_file_can_have_is_a_sweep_error(
    key: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SweepError, match=key):
        shoal.sweep({**ONE_RUN, key: value}, progress=False)


def test_a_sweep_file_whose_name_has_a_nul_is_a_user_error(
    shoal_cli: CliRunner, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        'name = "a\\u0000b"\n[scenario.topology]\nhosts = 4\n[scenario.workload]\nflows = 5\n'
    )
    _user_error(shoal_cli("sweep", sweep, "-q", "--no-report"), "name")


# -- an empty query ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "st"
    shoal.sweep(ONE_RUN, store=path, progress=False, jobs=1)
    return path


@pytest.mark.parametrize("sql", ["", "   ", " -- nothing but a comment", ";"])
def test_an_empty_query_is_a_user_error(sql: str, store: Path, shoal_cli: CliRunner) -> None:
    _user_error(shoal_cli("results", "query", store, sql), "query")


def test_api_empty_query_is_a_store_error(store: Path) -> None:
    from shoal.store import StoreError

    with pytest.raises(StoreError, match="query"):
        shoal.Store(store).query("")


# -- overrides that are not key=value strings --------------------------------------------


@pytest.mark.parametrize("overrides", [[1, 2], ["run.seed=2", None], 5, [b"run.seed=2"]])
def test_run_with_overrides_that_are_not_strings_is_a_scenario_error(overrides: object) -> None:
    with pytest.raises(ScenarioError, match="set") as info:
        shoal.run(TINY, set=overrides)  # type: ignore[arg-type]
    assert "key.path=value" in str(info.value)


# -- --jobs and --cluster are checked for every experiment ----------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--jobs", "0"), ("jobs", "at least 1")),
        (("--jobs", "-1"), ("jobs", "at least 1")),
        (("--cluster", "not a url"), ("not a url", "tcp://")),
    ],
    ids=["jobs 0", "jobs -1", "cluster not a url"],
)
def test_reproduce_checks_jobs_and_cluster_of_an_analytic_experiment(
    args: tuple[str, ...], words: tuple[str, ...], shoal_cli: CliRunner
) -> None:
    proc = shoal_cli("reproduce", "dsh/fig4", *args)
    _user_error(proc, *words)
    assert "Shoal vs paper" not in proc.stdout


@pytest.mark.parametrize(
    "kwargs", [{"jobs": 0}, {"jobs": -1}, {"cluster": "not a url"}, {"cluster": ""}]
)
def test_api_reproduce_checks_jobs_and_cluster(kwargs: dict[str, object], tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="jobs|cluster"):
        reproduce("dsh/fig4", store=tmp_path / "st", progress=False, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"jobs": 0}, {"cluster": "not a url"}])
def test_api_sweep_checks_jobs_and_cluster_before_writing_a_store(
    kwargs: dict[str, object], tmp_path: Path
) -> None:
    with pytest.raises(SweepError, match="jobs|cluster"):
        shoal.sweep(ONE_RUN, store=tmp_path / "st", progress=False, **kwargs)  # type: ignore[arg-type]
    assert not (tmp_path / "st").exists()


# -- paths no file can have, and modes that do not exist -------------------------------------


def test_a_sweep_store_argument_with_a_nul_is_a_sweep_error(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="store"):
        shoal.sweep(ONE_RUN, store=tmp_path / "st\x00re", progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("key", ["store", "out"])
def test_a_reproduce_path_with_a_nul_is_an_experiment_error(key: str, tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match=key):
        paths = {"store": tmp_path / "st", key: tmp_path / "a\x00b"}
        reproduce("dsh/fig4", progress=False, **paths)  # type: ignore[arg-type]


def test_an_unknown_mode_is_refused_for_every_experiment(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match="mode"):
        reproduce("dsh/fig4", mode="fast", store=tmp_path / "st", progress=False)
    assert not (tmp_path / "st").exists()
