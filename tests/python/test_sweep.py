"""Sweeps: expansion, local parallel runs, cache hits, failures, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import shoal
from conftest import CliRunner, run_cli
from shoal._sweep import MAX_RUNS, SweepError, expand, load_sweep
from shoal.store import Store

#: A sweep of tiny runs (8-host star, 20 web-search flows: ~0.05 s each).
SWEEP = """\
name = "tiny"

[scenario.topology]
kind = "star"
hosts = 8
link_delay = "1us"

[scenario.workload]
cdf = "websearch"
flows = 20

[schemes.k200]
"switch.marking.cutoff.k" = "200KB"
[schemes.k720]
"switch.marking.cutoff.k" = "720KB"

[axes]
"workload.load" = [0.3, 0.6]
seeds = [1, 2]
"""


def _write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_expansion_grid_zip_schemes_seeds_labels(tmp_path: Path) -> None:
    spec = load_sweep(
        {
            "scenario": {"topology": {"hosts": 8}},
            "set": {"workload": {"flows": 10}},
            "schemes": {
                "a": {"switch.marking.cutoff.k": "200KB"},
                "b": {"switch": {"marking": {"cutoff": {"k": "720KB"}}}},
            },
            "axes": {"workload.load": [0.2, 0.4, 0.6], "seeds": 2},
            "zip": {"workload.cdf": ["websearch", "fb_hadoop"], "workload.flows": [10, 20]},
            "labels": {"workload.cdf": ["WS", "Hadoop"]},
        },
        store=tmp_path / "store",
    )
    runs = expand(spec)
    assert len(runs) == 2 * 3 * 2 * 2  # schemes x loads x zipped pairs x seeds
    assert spec.columns == [
        "scheme",
        "workload.load",
        "workload.cdf",
        "workload.flows",
        "workload.cdf_label",
        "seed",
    ]
    first, last = runs[0], runs[-1]
    assert first.params == {
        "scheme": "a",
        "workload.load": 0.2,
        "workload.cdf": "websearch",
        "workload.flows": 10,
        "workload.cdf_label": "WS",
        "seed": 1,
    }
    assert last.params["scheme"] == "b" and last.params["workload.cdf"] == "fb_hadoop"
    assert last.params["workload.flows"] == 20 and last.params["seed"] == 2
    # Nested scheme tables flatten to key paths; zip values override [set].
    assert last.overrides["switch.marking.cutoff.k"] == "720KB" and last.overrides["run.seed"] == 2
    assert first.overrides["workload.flows"] == 10
    pairs = {(r.params["workload.cdf"], r.params["workload.flows"]) for r in runs}
    assert pairs == {("websearch", 10), ("fb_hadoop", 20)}


def test_sweep_returns_one_row_per_run_then_all_cached(tmp_path: Path) -> None:
    spec = _write(tmp_path, SWEEP)
    store = tmp_path / "store"
    df = shoal.sweep(spec, jobs=2, progress=False, store=store)
    assert len(df) == 8
    assert list(df.columns[:3]) == ["scheme", "workload.load", "seed"]
    assert (df["status"] == "ok").all() and not df["cached"].any()
    assert df["key"].is_unique
    assert {"small_p99_fct_ns", "all_mean_fct_ns", "loss_rate", "buffer_p99_bytes"} <= set(df)
    assert df.attrs["axes"] == ["scheme", "workload.load", "seed"]
    # Axis values reached the runs: the stored scenarios carry them.
    for _, row in df.iterrows():
        scenario = json.loads((store / "runs" / row["key"] / "scenario.json").read_text())
        assert scenario["workload"]["load"] == row["workload.load"]
        assert scenario["run"]["seed"] == row["seed"]
        assert (
            scenario["switch"]["marking"]["cutoff"]["k"]
            == {"k200": "200KB", "k720": "720KB"}[row["scheme"]]
        )
    # Same results as a single run of the same scenario.
    one = shoal.load(store / "runs" / df["key"][0])
    assert one.summary["fct"]["small"]["p99_fct_ns"] == df["small_p99_fct_ns"][0]

    mtimes = {p.name: p.stat().st_mtime_ns for p in (store / "runs").iterdir()}
    again = shoal.sweep(spec, jobs=2, progress=False, store=store)
    assert again["cached"].all() and (again["status"] == "ok").all()
    assert {p.name: p.stat().st_mtime_ns for p in (store / "runs").iterdir()} == mtimes
    pd.testing.assert_frame_equal(
        df.drop(columns=["cached"]), again.drop(columns=["cached"]), check_like=True
    )
    # A new axis value only runs what is new.
    bigger = SWEEP.replace("[0.3, 0.6]", "[0.3, 0.6, 0.8]")
    third = shoal.sweep(_write(tmp_path, bigger), jobs=1, progress=False, store=store)
    assert len(third) == 12 and third["cached"].sum() == 8
    assert set(third.loc[~third["cached"], "workload.load"]) == {0.8}


def test_key_is_the_resolved_scenario(tmp_path: Path) -> None:
    # Writing a default explicitly, or giving a size in other units, is the same run.
    a = {
        "scenario": {"topology": {"hosts": 8}, "workload": {"flows": 10}},
        "axes": {"switch.marking.cutoff.k": ["200KB"]},
    }
    b = {
        "scenario": {"topology": {"hosts": 8, "kind": "star"}, "workload": {"flows": 10}},
        "axes": {"switch.marking.cutoff.k": ["200KB"]},
    }
    store = tmp_path / "store"
    first = shoal.sweep(a, jobs=1, progress=False, store=store)
    second = shoal.sweep(b, jobs=1, progress=False, store=store)
    assert first["key"][0] == second["key"][0] and bool(second["cached"][0])


TRACE_SWEEP = """\
name = "traces"
[scenario.topology]
kind = "star"
hosts = 4
[scenario.workload]
pattern = "trace"

[axes]
"workload.trace" = ["a.csv", "bad.csv", "b.csv"]
"""


def _traces(tmp_path: Path) -> None:
    header = "id,src,dst,bytes,start_ns\n"
    (tmp_path / "a.csv").write_text(header + "0,1,0,20000,0\n1,2,0,30000,1000\n")
    (tmp_path / "b.csv").write_text(header + "0,3,0,50000,0\n")
    (tmp_path / "bad.csv").write_text("id,src,dst\n0,1\n")


def test_failing_run_in_the_middle_is_recorded_and_does_not_stop_the_sweep(
    tmp_path: Path, shoal_cli: CliRunner
) -> None:
    _traces(tmp_path)
    spec = _write(tmp_path, TRACE_SWEEP)
    proc = shoal_cli("sweep", spec, "--jobs", "2", "--store", "store", "--no-report")
    assert proc.returncode == 1, proc.stderr  # some runs failed
    assert "Traceback" not in proc.stderr
    assert "failed" in proc.stderr and "bad.csv" in proc.stderr
    df = shoal.sweep_table(tmp_path / "store")
    assert list(df["status"]) == ["ok", "failed", "ok"]
    assert "header" in df["error"][1]
    meta = Store(tmp_path / "store").meta(df["key"][1])
    assert meta is not None and meta["status"] == "failed" and meta["traceback"]
    assert not (tmp_path / "store" / "runs" / df["key"][1] / "flows.parquet").exists()
    # The failed run is tried again (and fails again); the others come from the store.
    again = shoal.sweep(spec, jobs=1, progress=False, store=tmp_path / "store")
    assert list(again["cached"]) == [True, False, True]
    assert list(again["status"]) == ["ok", "failed", "ok"]
    listed = shoal_cli("results", "list", "store", "--failed", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert [r["status"] for r in json.loads(listed.stdout)] == ["failed"]


def test_invalid_value_in_a_later_run_is_a_failed_run(tmp_path: Path) -> None:
    spec = {
        "scenario": {"topology": {"hosts": 8}, "workload": {"flows": 10}},
        "axes": {"workload.load": [0.3, -1.0, 0.5]},
    }
    df = shoal.sweep(spec, jobs=1, progress=False, store=tmp_path / "s")
    assert list(df["status"]) == ["ok", "failed", "ok"]
    assert "workload.load" in df["error"][1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("base = 'missing.toml'\n", "scenario file not found"),
        ("[scenario\n", "invalid TOML"),
        ("bogus = 1\n[scenario]\n", "unknown key 'bogus'"),
        ('[scenario]\n[axes]\n"workload.bogus" = [1, 2]\n', "workload.bogus"),
        ('[scenario]\n[axes]\n"workload.load" = 0.5\n', "non-empty list"),
        ("[scenario]\n[zip]\na = [1, 2]\nb = [1]\n", "same length"),
        ('[scenario]\n[axes]\nseeds = [1]\n"run.seed" = [2]\n', "seeds are given twice"),
        ("[axes]\nseeds = [1]\n", "base scenario"),
        ("seeds = [1, -2]\n[scenario]\n", "seeds[1]: expected a positive count or a non-empty"),
        ("[scenario]\n[schemes]\na = 3\n", "schemes.a: expected a table of overrides"),
        ("name = '../up'\n[scenario]\n", "name: expected text without '/'"),
    ],
)
def test_user_mistakes_exit_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    spec = _write(tmp_path, text)
    code, _, err = run_cli(capsys, "sweep", spec, "--no-report", "-q", "--store", tmp_path / "s")
    assert code == 2, err
    assert "error:" in err and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("axes", "named"),
    [
        ("seeds = 1000000000000000000", "(seeds 1,000,000,000,000,000,000)"),
        (
            f'"workload.load" = {[i / 1000 for i in range(1, 401)]}\n'
            f'"workload.flows" = {list(range(1, 301))}',
            "the sweep has 120,000 runs (axes.workload.load 400 x axes.workload.flows 300)",
        ),
    ],
    ids=["seeds", "product"],
)
def test_a_huge_sweep_is_refused_before_it_is_built(
    tmp_path: Path, shoal_cli: CliRunner, axes: str, named: str
) -> None:
    spec = _write(tmp_path, f"[scenario]\n[axes]\n{axes}\n")
    started = time.monotonic()
    proc = shoal_cli("sweep", spec, "-q", "--no-report", "--store", "s")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {spec}: ") and named in proc.stderr
    assert "at most 100,000" in proc.stderr and "Traceback" not in proc.stderr
    assert time.monotonic() - started < 30  # refused from the counts, not after expanding
    assert not (tmp_path / "s").exists()


def test_the_run_limit_is_inclusive_and_holds_for_a_spec_built_by_hand(tmp_path: Path) -> None:
    base = {"scenario": {}}
    assert len(load_sweep({**base, "seeds": MAX_RUNS}, store=tmp_path).seeds or []) == MAX_RUNS
    with pytest.raises(SweepError, match="100,001 runs \\(seeds 100,001\\)"):
        load_sweep({**base, "seeds": MAX_RUNS + 1}, store=tmp_path)
    spec = load_sweep({**base, "axes": {"workload.load": [0.5]}}, store=tmp_path)
    spec.axes["workload.load"] = [0.5] * 1000
    spec.seeds = list(range(1000))
    with pytest.raises(SweepError, match="1,000,000 runs"):
        expand(spec)


def test_repeated_values_warn_and_run_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SWEEP.replace("[0.3, 0.6]", "[0.3, 0.6, 0.3]").replace("[1, 2]", "[1, 2, 2, 2]")
    text += '[labels]\n"workload.load" = ["low", "high", "low again"]\n'
    spec_file = _write(tmp_path, text)
    with pytest.warns(shoal.ShoalWarning) as caught:
        spec = load_sweep(spec_file, store=tmp_path / "s")
    assert sorted(str(w.message) for w in caught) == [
        f"{spec_file}: axes.seeds: 2 is given 3 times; it runs once",
        f"{spec_file}: axes.workload.load: 0.3 is given 2 times; it runs once",
    ]
    # The first occurrence is kept, with its label.
    assert spec.axes == {"workload.load": [0.3, 0.6]} and spec.seeds == [1, 2]
    assert spec.labels == {"workload.load": ["low", "high"]}
    assert len(expand(spec)) == 8

    zipped = {
        "scenario": {},
        "zip": {
            "workload.cdf": ["websearch", "fb_hadoop", "websearch"],
            "workload.flows": [10] * 3,
        },
    }
    with pytest.warns(shoal.ShoalWarning, match='workload.flows: \\("websearch", 10\\) is given 2'):
        spec = load_sweep(zipped, store=tmp_path / "s")
    assert spec.zip == {"workload.cdf": ["websearch", "fb_hadoop"], "workload.flows": [10, 10]}

    code, out, err = run_cli(capsys, "sweep", spec_file, "--dry-run", "--store", tmp_path / "s")
    assert code == 0, err
    assert err.count("warning: ") == 2 and "0.3 is given 2 times; it runs once" in err
    assert "8 runs" in out


def test_user_mistake_in_a_real_process(tmp_path: Path, shoal_cli: CliRunner) -> None:
    spec = _write(tmp_path, '[scenario]\n[axes]\n"workload.bogus" = [1, 2]\n')
    proc = shoal_cli("sweep", spec, "-q")
    assert proc.returncode == 2 and "workload.bogus" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "results").exists()


def test_bad_store_paths_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _write(tmp_path, SWEEP)
    (tmp_path / "afile").write_text("x")
    code, _, err = run_cli(capsys, "sweep", spec, "--store", tmp_path / "afile", "-q")
    assert code == 2 and "not a directory" in err
    nowhere = tmp_path / "nowhere"
    for args in (
        ("results", "list", nowhere),
        ("results", "query", nowhere, "select 1"),
        ("plot", "fct-cdf", nowhere, "-o", tmp_path / "x.png"),
        ("report", nowhere),
        ("results", "list", tmp_path),
    ):
        code, _, err = run_cli(capsys, *args)
        assert code == 2, (args, err)
        assert "error:" in err and "Traceback" not in err


def test_dry_run_lists_runs_and_stored_state(tmp_path: Path, shoal_cli: CliRunner) -> None:
    spec = _write(tmp_path, SWEEP)
    proc = shoal_cli("sweep", spec, "--dry-run", "--store", "store")
    assert proc.returncode == 0, proc.stderr
    assert "8 runs" in proc.stdout and not (tmp_path / "store").exists()


def test_relative_base_and_store_from_the_sweep_file(tmp_path: Path, shoal_cli: CliRunner) -> None:
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "base.toml").write_text(
        '[topology]\nhosts = 8\n[workload]\nflows = 10\ncdf = "websearch"\n'
    )
    (tmp_path / "exp" / "sweeps").mkdir()
    _write(tmp_path / "exp" / "sweeps", 'base = "../base.toml"\n[axes]\nseeds = 2\n', "s.toml")
    proc = shoal_cli("sweep", "exp/sweeps/s.toml", "-q")
    assert proc.returncode == 0, proc.stderr
    # The default store is results/<name> in the current directory; report written.
    assert (tmp_path / "results" / "s" / "sweeps" / "s" / "report.html").is_file()
    assert len(Store(tmp_path / "results" / "s").keys()) == 2


def _complete_runs(store: Path) -> list[Path]:
    runs = store / "runs"
    return [p for p in runs.iterdir() if not p.name.startswith(".")] if runs.is_dir() else []


def _start_long_sweep(tmp_path: Path, n_runs: int) -> tuple[subprocess.Popen[str], Path]:
    """A sweep of 4 loads x 10 seeds (40 flows each) started in its own process group,
    with SIGINT handled as in a terminal; returns once ``n_runs`` runs are in its store."""
    text = (
        SWEEP.replace('[schemes.k200]\n"switch.marking.cutoff.k" = "200KB"\n', "")
        .replace('[schemes.k720]\n"switch.marking.cutoff.k" = "720KB"\n', "")
        .replace("[0.3, 0.6]", "[0.3, 0.5, 0.7, 0.9]")
        .replace("[1, 2]", str(list(range(1, 11))))
    )
    spec = _write(tmp_path, text.replace("flows = 20", "flows = 40"))
    store = tmp_path / "store"
    args = ["sweep", str(spec), "--store", str(store), "--jobs", "2", "-q", "--no-report"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoal", *args],
        cwd=tmp_path,
        env=dict(os.environ, NO_COLOR="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # A background process starts with SIGINT ignored; a terminal's does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while len(_complete_runs(store)) < n_runs:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the sweep did not start"
            time.sleep(0.01)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        raise
    return proc, spec


def test_resume_after_the_sweep_is_killed(tmp_path: Path) -> None:
    n_loads, n_seeds = 4, 10
    store = tmp_path / "store"
    proc, spec = _start_long_sweep(tmp_path, 4)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, mid-run
    proc.wait(timeout=30)
    done = _complete_runs(store)
    assert 4 <= len(done) < n_loads * n_seeds, "the sweep finished before it was killed"
    # Every run directory that exists is complete; a half-written one never appears.
    for run in done:
        meta = json.loads((run / "meta.json").read_text())
        assert meta["status"] == "ok"
        assert shoal.load(run).summary["flows"]["total"] == 40
    keys_before = {p.name for p in done}

    df = shoal.sweep(spec, jobs=2, progress=False, store=store)
    assert len(df) == n_loads * n_seeds and (df["status"] == "ok").all()
    assert set(df.loc[df["cached"], "key"]) >= keys_before
    assert int(df["cached"].sum()) >= len(keys_before)
    assert not [p for p in (store / ".staging").iterdir()]  # leftovers of the killed run cleaned


def test_one_progress_display_for_the_whole_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {
        "scenario": {"topology": {"hosts": 8}, "workload": {"flows": 10}},
        "axes": {"workload.load": [0.3, -1.0], "seeds": [1, 2]},
    }
    shoal.sweep(spec, jobs=1, store=tmp_path / "s")
    err = capsys.readouterr().err
    assert "4/4 runs" in err and "2 failed" in err and "ETA" in err
    again = shoal.sweep(spec, jobs=1, store=tmp_path / "s", retry_failed=False)
    assert again["cached"].all()  # nothing left to do: failed runs are kept as they are


def test_ctrl_c_says_what_is_kept_and_that_the_sweep_resumes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    proc, spec = _start_long_sweep(tmp_path, 3)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole group
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "no results written" not in stderr
    kept = [r for r in _complete_runs(store) if Store(store).status(r.name) == "ok"]
    assert 3 <= len(kept) < 40, "the sweep finished before it was interrupted"
    assert stderr.endswith(
        f"error: interrupted; {len(kept)} of 40 runs of sweep tiny are finished and kept in "
        f"the store {store}; run the sweep again to resume (finished runs are not simulated "
        "again)\n"
    ), stderr
    again = shoal.sweep(spec, jobs=2, progress=False, store=store)
    assert (again["status"] == "ok").all() and int(again["cached"].sum()) == len(kept)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"scenario": {}, "axes": {"workload.load": 0.5}},
            "sweep: axes.workload.load: expected a non-empty list of values"
            ' (quote dotted keys: "a.b" = [...]), got 0.5',
        ),
        (
            {"scenario": {}, "zip": {"a": []}},
            "sweep: zip.a: expected a non-empty list of values",
        ),
        (
            {"scenario": {}, "labels": {"x": "a"}},
            'sweep: labels.x: expected a non-empty list of names, got "a"',
        ),
        ({"scenario": {}, "store": 5}, "sweep: store: expected a directory path, got 5"),
        (
            {"scenario": {}, "sets": {}},
            "sweep: unknown key 'sets'; expected one of axes, base, labels, name, scenario,",
        ),
        ({"scenario": {}, "seeds": True}, "sweep: seeds: expected a positive count"),
    ],
)
def test_spec_errors_name_the_key_the_value_and_what_is_accepted(
    tmp_path: Path, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(SweepError) as info:
        load_sweep(spec, store=tmp_path)
    assert str(info.value).startswith(message), str(info.value)


def test_parallel_runs_are_limited_to_what_memory_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for one run of the sweep's largest at a time, jobs=2 runs them one after
    the other and says why; with room for both, it runs them together."""
    from shoal import _core

    spec = _write(tmp_path, SWEEP)
    shoal.sweep(spec, jobs=1, progress=False, store=tmp_path / "serial")
    largest = max(
        sum(b for _, _, b in _core.memory_estimate(path.read_text()))
        for path in (tmp_path / "serial" / "runs").glob("*/scenario.json")
    )
    notes: list[str] = []
    monkeypatch.setenv("SHOAL_MEMORY_LIMIT", str(int(largest * 1.5)))
    df = shoal.sweep(spec, jobs=2, progress=False, store=tmp_path / "one", log=notes.append)
    assert (df["status"] == "ok").all()
    said = [n for n in notes if "at a time" in n]
    assert len(said) == 1 and said[0].startswith("1 run at a time, not 2"), notes
    notes.clear()
    monkeypatch.setenv("SHOAL_MEMORY_LIMIT", str(int(largest * 2.5)))
    shoal.sweep(spec, jobs=2, progress=False, store=tmp_path / "two", log=notes.append)
    assert not [n for n in notes if "at a time" in n], notes
