"""The results store: atomic run entries, keys, DuckDB views, `shoal results`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import shoal
from conftest import CliRunner, run_cli
from shoal.store import Store, StoreError, run_key

SWEEP = {
    "name": "st",
    "scenario": {"topology": {"hosts": 8}, "workload": {"cdf": "websearch", "flows": 20}},
    "schemes": {"a": {"switch.ecn.k": "200KB"}, "b": {"switch.ecn.k": "720KB"}},
    "axes": {"workload.load": [0.3, 0.6]},
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "s"
    shoal.sweep(SWEEP, jobs=1, progress=False, store=path)
    return path


def test_interrupted_write_leaves_no_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = Store(tmp_path / "s", create=True)
    calls = {"n": 0}
    real = Path.write_bytes

    def crash(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # killed while writing the second file
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", crash)
    with pytest.raises(KeyboardInterrupt):
        db.put("k1", {"status": "ok"}, {"flows.parquet": b"x", "summary.json": b"{}"})
    monkeypatch.undo()
    assert db.status("k1") is None and db.keys() == []
    assert not (db.runs_dir / "k1").exists()
    db.put("k1", {"status": "failed", "error": "boom"}, None)
    assert db.status("k1") == "failed" and db.meta("k1")["error"] == "boom"  # type: ignore[index]
    db.put("k1", {"status": "ok"}, {"summary.json": b"{}"})  # replaces the failed entry
    assert db.status("k1") == "ok"


def test_key_depends_on_scenario_files_and_version(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("id,src,dst,bytes,start_ns\n0,1,0,100,0\n")
    scenario = {"workload": {"pattern": "trace", "trace": str(trace)}, "run": {"seed": 1}}
    key = run_key(scenario, "0.1.0")
    assert key == run_key(json.loads(json.dumps(scenario)), "0.1.0")
    assert key != run_key(scenario, "0.2.0")
    trace.write_text("id,src,dst,bytes,start_ns\n0,1,0,200,0\n")  # same path, new content
    assert key != run_key(scenario, "0.1.0")


def test_runs_and_flows_views(store: Path) -> None:
    db = Store(store)
    runs = db.runs()
    assert len(runs) == 4 and set(runs["status"]) == {"ok"}
    assert {"scheme", "workload.load", "small_p99_fct_ns", "loss_rate"} <= set(runs.columns)
    per_scheme = db.query(
        'select scheme, count(*) n, max("workload.load") top from runs group by 1 order by 1'
    )
    assert per_scheme.to_dict("records") == [
        {"scheme": "a", "n": 2, "top": 0.6},
        {"scheme": "b", "n": 2, "top": 0.6},
    ]
    flows = db.query("select key, count(*) n from flows group by key")
    assert sorted(flows["key"]) == sorted(runs["key"]) and set(flows["n"]) == {20}
    joined = db.query(
        "select r.scheme, avg(f.slowdown) s from flows f join runs r using (key) group by 1"
    )
    assert len(joined) == 2 and (joined["s"] >= 1).all()
    assert len(db.flows()) == 80


def test_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results store"):
        Store(tmp_path / "missing")
    with pytest.raises(StoreError, match="not a Shoal results store"):
        Store(tmp_path)


def test_results_cli(store: Path, shoal_cli: CliRunner, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "results", "list", store, "--format", "csv")
    assert code == 0, err
    assert out.splitlines()[0].startswith("key,status,scheme,workload.load")
    assert len(out.splitlines()) == 5
    query = shoal_cli(
        "results",
        "query",
        store,
        "select scheme, avg(small_p99_fct_ns) as p99 from runs group by 1 order by 1",
        "--format",
        "json",
    )
    assert query.returncode == 0, query.stderr
    rows = json.loads(query.stdout)
    assert [r["scheme"] for r in rows] == ["a", "b"] and all(r["p99"] > 0 for r in rows)
    code, _, err = run_cli(capsys, "results", "query", store, "select nope from runs")
    assert code == 2 and "error:" in err and "Traceback" not in err
    key = Store(store).keys()[0]
    code, out, err = run_cli(capsys, "results", "show", store, key[:8])
    assert code == 0 and "p99" in out, err


@pytest.mark.parametrize(
    "sql",
    [
        "copy (select * from runs) to '{out}'",
        "copy flows to '{out}' (format parquet, use_tmp_file false)",
        "attach '{out}' as other",
        "export database '{out}'",
        "install httpfs",
        "select * from read_csv('/etc/passwd')",
        "set enable_external_access = true",
    ],
)
def test_queries_cannot_touch_files(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], sql: str
) -> None:
    out = tmp_path / "leak"
    code, _, err = run_cli(capsys, "results", "query", store, sql.format(out=out))
    assert code == 2, err
    assert err.startswith("error: query: ") and "Traceback" not in err
    assert not out.exists()
    # The store's own files are still read: both views, and a join of them.
    counts = Store(store).query(
        "select count(distinct r.key) runs, count(*) flows from flows f join runs r using (key)"
    )
    assert counts.to_dict("records") == [{"runs": 4, "flows": 80}]
