"""Damaged files Shoal wrote (a run directory, the results store) are clear errors naming
the file, or in a store's listing a run with status "corrupt"; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import shoal
from conftest import TINY, CliRunner, run_cli
from shoal import CorruptFileError, ShoalWarning
from shoal.store import Store

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
