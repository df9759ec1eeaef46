"""The results store: atomic run entries, keys, DuckDB views, `shoal results`."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

import shoal
from conftest import CliRunner, run_cli
from shoal.store import Store, StoreError, run_key

SWEEP = {
    "name": "st",
    "scenario": {"topology": {"hosts": 8}, "workload": {"cdf": "websearch", "flows": 20}},
    "schemes": {
        "a": {"switch.marking.cutoff.k": "200KB"},
        "b": {"switch.marking.cutoff.k": "720KB"},
    },
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


def test_key_depends_on_the_topology_file(tmp_path: Path) -> None:
    topology = tmp_path / "topology.txt"
    topology.write_text("3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbps 1us 0\n")
    scenario = {"topology": {"kind": "file", "path": str(topology)}}
    key = run_key(scenario, "0.1.0")
    topology.write_text("3 1 2\n2\n0 2 10Gbps 2us 0\n1 2 10Gbps 1us 0\n")
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


def test_every_run_table_is_a_view_typed_even_where_no_run_has_it(store: Path) -> None:
    """The store's views are the core's tables: each one queries, with the key first and
    then the table's columns in order, also where no run made it (the sweep's runs
    sample no queue and pause nothing); a name that is no table is refused."""
    db = Store(store)
    for name, columns in shoal.table_schemas().items():
        frame = db.query(f"select * from {name}")
        assert list(frame.columns) == ["key", *(c for c, _ in columns)], name
        if name != "flows":
            assert frame.empty and db.tables(name).empty, name
    types = db.query("describe pfc_ports").set_index("column_name")["column_type"]
    assert (types["paused_ns"], types["node_kind"], types["pauses_sent"]) == (
        "DOUBLE",
        "VARCHAR",
        "UBIGINT",
    )
    assert len(db.tables("flows", db.keys()[:1])) == 20
    with pytest.raises(StoreError, match="no run table 'summary'"):
        db.tables("summary")


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


def _snapshot(root: Path) -> dict[str, tuple[bool, bytes, int]]:
    """Every path under ``root``: whether it is a directory, its content, its mtime."""
    out = {}
    for path in sorted(root.rglob("*")):
        data = b"" if path.is_dir() else path.read_bytes()
        out[str(path.relative_to(root))] = (path.is_dir(), data, path.stat().st_mtime_ns)
    return out


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """A user's directory that is not a store: files, a runs/ folder of their own, and
    something that looks like a staging leftover of a dead process on this host."""
    mine = tmp_path / "mine"
    (mine / "runs" / "old").mkdir(parents=True)
    (mine / "runs" / "old" / "summary.json").write_text("{}")
    (mine / "notes.txt").write_text("my notes")
    (mine / ".staging" / f"k.{socket.gethostname()}.999999999").mkdir(parents=True)
    (mine / ".staging" / f"k.{socket.gethostname()}.999999999" / "keep").write_text("x")
    (tmp_path / "sweep.toml").write_text(
        'name = "u"\n[scenario.topology]\nhosts = 4\n[axes]\nseeds = 2\n'
    )
    return mine


@pytest.mark.parametrize(
    "args",
    [
        ("sweep", "{spec}", "-q", "--no-report", "--store", "{store}"),
        ("sweep", "{spec}", "--dry-run", "--store", "{store}"),
        ("results", "list", "{store}"),
        ("results", "query", "{store}", "select 1"),
        ("results", "show", "{store}", "abc"),
        ("plot", "fct-cdf", "{store}", "-o", "{spec}.png"),
        ("report", "{store}"),
    ],
    ids=["sweep", "dry-run", "list", "query", "show", "plot", "report"],
)
@pytest.mark.parametrize("where", ["directory", "current directory", "file"])
def test_paths_that_are_not_stores_are_left_untouched(
    user_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    where: str,
) -> None:
    store = user_dir
    if where == "file":
        store = user_dir / "notes.txt"
    elif where == "current directory":
        monkeypatch.chdir(user_dir)
        store = Path(".")
    spec = user_dir.parent / "sweep.toml"
    before = _snapshot(user_dir)
    code, _, err = run_cli(capsys, *(a.format(spec=spec, store=store) for a in args))
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err
    assert str(user_dir) in err.replace("\n", "")
    if args[0] == "sweep" and where != "file":
        assert "not empty and not a store (it holds .staging, notes.txt, runs)" in err
    assert _snapshot(user_dir) == before
    assert not Path(f"{spec}.png").exists()


def test_a_store_is_made_in_a_new_or_empty_directory_only(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "empty", tmp_path / "new" / "deeper"):
        db = Store(path, create=True)
        assert sorted(os.listdir(path)) == [".staging", "runs", "sweeps"]
        assert Store(db.root).keys() == [] and Store(db.root, create=True).root == db.root
    (tmp_path / "other" / "runs").mkdir(parents=True)
    with pytest.raises(StoreError, match="not empty and not a store"):
        Store(tmp_path / "other", create=True)
    with pytest.raises(StoreError, match="not a Shoal results store"):
        Store(tmp_path / "other")
    assert os.listdir(tmp_path / "other") == ["runs"]


def test_a_runs_scenario_and_tables_are_read_through_the_store(tmp_path: Path) -> None:
    import io

    import pandas as pd

    from shoal.store import Store, StoreError

    flows = pd.DataFrame({"id": [0, 1], "bytes": [10, 20], "fct_ns": [1.0, None]})
    buf = io.BytesIO()
    flows.to_parquet(buf, index=False)
    store = Store(tmp_path / "s", create=True)
    files = {"flows.parquet": buf.getvalue(), "scenario.json": b'{"run": {"seed": 3}}'}
    store.put("k1", {"status": "ok"}, files)
    assert store.scenario("k1") == {"run": {"seed": 3}}
    pd.testing.assert_frame_equal(store.table("k1", "flows"), flows)
    assert store.table("k1", "flows", ["bytes"]).columns.tolist() == ["bytes"]
    assert store.table("k1", "queues") is None
    store.put("k2", {"status": "ok"}, {})
    assert store.scenario("k2") == {}
    with pytest.raises(StoreError, match="no run table 'summary'"):
        store.table("k1", "summary")
