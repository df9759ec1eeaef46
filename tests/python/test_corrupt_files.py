"""Damaged files Shoal wrote (a run directory, the results store) are clear errors naming
the file, or in a store's listing a run with status "corrupt"; never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import shoal
from conftest import RDMA_MARKED_INCAST, TINY, CliRunner, run_cli
from shoal import CorruptFileError, ShoalWarning
from shoal._summary import check_summary, summary_schema, summary_table, summary_text
from shoal.store import Store, flatten_summary

DAMAGE = {
    "not JSON": b'{"flows": ',
    "not an object": b"[1, 2]",
    "not UTF-8": b"\xff\xfe\x00",
    "deep": b"[" * 100_000,
}


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    shoal.run(TINY, out=path)
    return path


@pytest.mark.parametrize("name", ["summary.json", "scenario.json"])
@pytest.mark.parametrize("content", DAMAGE.values(), ids=DAMAGE.keys())
def test_damaged_json_in_a_run_directory(
    run_dir: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes
) -> None:
    (run_dir / name).write_bytes(content)
    with pytest.raises(CorruptFileError) as info:
        shoal.load(run_dir)
    assert info.value.path == run_dir / name and str(run_dir / name) in str(info.value)
    code, _, err = run_cli(capsys, "summarize", run_dir)
    assert code == 2 and err.startswith(f"error: corrupt file {run_dir / name}: ")
    assert "Traceback" not in err


#: Valid JSON of the wrong shape in summary.json, and the key the error names.
WRONG_SHAPE = {
    "fct not a table": ({"fct": 1}, "key 'fct': expected a table or null, found 1"),
    "bucket not a table": ({"fct": {"small": 3}}, "key 'fct.small': expected a table, found 3"),
    "string count": (
        {"flows": {"total": "20"}},
        "key 'flows.total': expected a non-negative integer or null, found \"20\"",
    ),
    "string rate": ({"loss_rate": "high"}, "key 'loss_rate': expected a number or null"),
    "string stat": (
        {"fct": {"all": {"p99_fct_ns": "fast"}}},
        "key 'fct.all.p99_fct_ns': expected a number or null, found \"fast\"",
    ),
    "section a list": ({"packets": [1]}, "key 'packets': expected a table or null, found [1]"),
    "pools not a list": ({"pools": 5}, "key 'pools': expected a list or null, found 5"),
    "pool stat": (
        {"pools": [{"max": True}]},
        "key 'pools[0].max': expected a non-negative integer or null, found true",
    ),
    "transport count": (
        {"flows": {"by_transport": {"tcp": {"finished": -1}}}},
        "key 'flows.by_transport.tcp.finished': expected a non-negative integer or null, found -1",
    ),
    "deadlock cycle": (
        {"pfc": {"deadlocks": [{"cycle": [{"port": "a"}]}]}},
        "key 'pfc.deadlocks[0].cycle[0].port': expected a non-negative integer or null",
    ),
    "warnings": ({"warnings": 5}, "key 'warnings': expected a list or null, found 5"),
}


@pytest.mark.parametrize(("summary", "message"), WRONG_SHAPE.values(), ids=WRONG_SHAPE.keys())
def test_a_summary_of_the_wrong_shape_is_an_error_naming_the_key(
    run_dir: Path, capsys: pytest.CaptureFixture[str], summary: dict[str, object], message: str
) -> None:
    path = run_dir / "summary.json"
    path.write_text(json.dumps(summary))
    for as_json in ((), ("--json",)):
        code, out, err = run_cli(capsys, "summarize", run_dir, *as_json)
        assert code == 2 and out == "", err
        assert err.startswith(f"error: corrupt file {path}: {message}"), err
    # The formatting and flattening functions name the key too (no file to name).
    for function in (summary_table, summary_text, flatten_summary):
        with pytest.raises(ValueError, match="^not a Shoal summary: " + re.escape(message)):
            function(summary)


def test_missing_parts_of_a_summary_are_shown_as_missing(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run_dir / "summary.json"
    summary = json.loads(path.read_text())
    for key in ("packets", "link_utilization", "pools", "loss_rate", "warnings"):
        del summary[key]
    summary["flows"] = None
    summary["fct"] = {"small": summary["fct"]["small"]}
    path.write_text(json.dumps(summary))
    code, out, err = run_cli(capsys, "summarize", run_dir)
    assert code == 0, err
    assert "—/— flows finished" in out and "loss — (—/— packets)" in out
    assert out.count("small") == 1 and "medium" not in out
    row = flatten_summary(summary)
    assert row["small_count"] == 20 and row["loss_rate"] is None and row["flows"] is None


def test_a_summary_of_the_wrong_shape_in_a_store_is_a_corrupt_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    sweep = {"name": "s", "scenario": shoal.load_scenario(TINY).data, "axes": {"seeds": 2}}
    keys = list(shoal.sweep(sweep, jobs=1, progress=False, store=store)["key"])
    path = store / "runs" / keys[0] / "summary.json"
    path.write_text('{"fct": {"all": {"count": "many"}}}')
    reason = f"corrupt file {path}: key 'fct.all.count': expected a non-negative integer"
    with pytest.raises(CorruptFileError, match="key 'fct.all.count'"):
        Store(store).summary(keys[0])
    code, out, err = run_cli(capsys, "results", "list", store, "--failed", "-f", "json")
    assert code == 0, err
    [row] = json.loads(out)
    assert row["key"] == keys[0] and row["status"] == "corrupt" and reason in row["error"]
    assert err.startswith(f"warning: run {keys[0]} of store {store}: {reason}")
    code, out, err = run_cli(capsys, "results", "show", store, keys[0])
    assert code == 0 and f"run {keys[0]}: corrupt" in out and reason in out, err
    again = shoal.sweep(sweep, jobs=1, progress=False, store=store)  # simulated again
    assert list(again["cached"]) == [False, True] and (again["status"] == "ok").all()


@pytest.mark.parametrize("name", ["flows.parquet"])
def test_damaged_parquet_in_a_run_directory(run_dir: Path, shoal_cli: CliRunner, name: str) -> None:
    _truncate(run_dir / name)
    with pytest.raises(CorruptFileError, match="not a readable Parquet file"):
        shoal.load(run_dir)
    proc = shoal_cli("summarize", run_dir)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: corrupt file {run_dir / name}")
    assert "Traceback" not in proc.stderr


@pytest.fixture
def damaged_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A store of four runs: three with one damaged file each, one intact."""
    store = tmp_path / "store"
    sweep = {"name": "s", "scenario": shoal.load_scenario(TINY).data, "axes": {"seeds": 4}}
    df = shoal.sweep(sweep, jobs=1, progress=False, store=store)
    keys = dict(zip(["meta", "summary", "flows", "intact"], df["key"], strict=True))
    runs = store / "runs"
    (runs / keys["meta"] / "meta.json").write_text('{"status": "ok"')
    (runs / keys["summary"] / "summary.json").write_text("")
    _truncate(runs / keys["flows"] / "flows.parquet")
    return store, keys


def test_a_damaged_run_is_listed_as_corrupt(
    damaged_store: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    store, keys = damaged_store
    db = Store(store)
    with pytest.warns(ShoalWarning, match="the next sweep runs it again") as caught:
        runs = db.runs().set_index("key")
    assert len(caught) == 3
    for what in ("meta", "summary", "flows"):
        assert runs.loc[keys[what], "status"] == "corrupt"
        assert f"{keys[what]}/{what}." in runs.loc[keys[what], "error"]
        assert db.status(keys[what]) == "corrupt"
    assert runs.loc[keys["intact"], "status"] == "ok" and db.status(keys["intact"]) == "ok"

    code, out, err = run_cli(capsys, "results", "list", store, "--format", "json")
    assert code == 0, err
    assert sorted(r["status"] for r in json.loads(out)) == ["corrupt"] * 3 + ["ok"]
    assert err.count("warning: run ") == 3 and "Traceback" not in err
    # Queries still work; the flows view holds the intact runs' flows.
    code, out, err = run_cli(
        capsys, "results", "query", store, "select count(distinct key) n from flows", "-f", "csv"
    )
    assert code == 0 and out == "n\n1\n", err
    # Reading a damaged table is an error naming the file.
    with pytest.raises(CorruptFileError, match=f"{keys['flows']}/flows.parquet"):
        db.flows()
    code, out, err = run_cli(capsys, "results", "show", store, keys["meta"])
    assert code == 0 and "corrupt" in out and "meta.json" in out, err

    # The next sweep simulates the corrupt runs again (and replaces them).
    again = shoal.sweep(Store(store).sweep_record()["spec"], jobs=1, progress=False, store=store)
    assert (again["status"] == "ok").all()
    assert dict(zip(again["key"], again["cached"], strict=True)) == {
        keys["meta"]: False,
        keys["summary"]: False,
        keys["flows"]: False,
        keys["intact"]: True,
    }


@pytest.mark.parametrize("content", [b"{", b'{"runs": 3}', b'{"runs": [{"params": {}}]}'])
def test_damaged_sweep_record(
    damaged_store: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    store, _ = damaged_store
    record = store / "sweeps" / "s.json"
    record.write_bytes(content)
    with pytest.raises(CorruptFileError, match="s.json"):
        shoal.sweep_table(store)
    for args in (("results", "list", store, "--sweep", "s"), ("report", store)):
        code, _, err = run_cli(capsys, *args)
        assert code == 2 and err.startswith(f"error: corrupt file {record}"), err


def test_every_summary_the_core_writes_fits_its_schema(tmp_path: Path) -> None:
    """The schema the checker reads is the core's: the summaries of a lossy TCP run and
    of a PFC run (with its lossless section) pass it, every key they have is in it, and
    the keys it documents for PFC are the ones a PFC run writes."""
    lossless = {
        **RDMA_MARKED_INCAST,
        "switch": {**RDMA_MARKED_INCAST["switch"], "flow_control": "pfc"},
    }
    schema = summary_schema()
    for scenario in (TINY, lossless):
        summary = shoal.run(scenario).summary
        check_summary(summary)
        assert set(summary) <= set(schema["properties"])
    pfc = schema["$defs"]["PfcSummary"]["properties"]
    assert set(summary["pfc"]) == set(pfc)
    packets = set(schema["$defs"]["PacketCounts"]["properties"])
    # `reordered` is listed only where the switches may split flows.
    assert set(summary["counters"]["packets"]) == packets - {"reordered"}
    sprayed = shoal.run(TINY + '[switch.load_balancing]\nkind = "spray"\n').summary
    assert set(sprayed["counters"]["packets"]) == packets
