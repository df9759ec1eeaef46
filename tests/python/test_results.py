"""Run directories as the core writes them: the Parquet tables hold exactly the engine's
columns (dtypes, nulls, row order), the summary agrees with an independent NumPy / pandas
computation (counts exactly, statistics to 1e-12), and the JSON files are what
``json.dumps(indent=2)`` writes."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shoal
from conftest import INCAST_ROUNDS, TINY
from shoal import _core
from shoal._scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "experiments" / "quickstart" / "star_dctcp.toml"

#: Three incast rounds of 8 x 64 KB; stopped during the second, so round 0 finishes and
#: rounds 1 and 2 do not (unfinished flows, unfinished queries).
QUERIES = {**INCAST_ROUNDS, "run": {"stop_time": "2.3ms"}}

#: The Parquet type of each column type of the core's schema.
PARQUET_TYPES = {
    "u8": pa.uint8(),
    "u32": pa.uint32(),
    "u64": pa.uint64(),
    "i64": pa.int64(),
    "f64": pa.float64(),
    "bool": pa.bool_(),
    "str": pa.string(),
}


def _engine_columns(scenario: Any, overrides: list[str]) -> tuple[dict[str, Any], Any]:
    """The flow and sample columns of a fresh simulation, straight from the binding."""
    resolved, _ = _core.resolve(load_scenario(scenario, overrides).to_json())
    sim = _core.Simulation(resolved)
    sim.run(2**63)
    assert sim.done
    tables = sim.tables()
    return dict(tables["flows"]), tables.get("queues")


def test_parquet_files_hold_the_engine_columns(tmp_path: Path) -> None:
    over = ["run.stop_time=5us", "run.sample_interval=1us"]
    with pytest.warns(shoal.ShoalWarning, match="did not finish"):
        shoal.run(TINY, set=over, out=tmp_path / "r")
    flows, samples = _engine_columns(TINY, over)
    assert samples is not None
    schemas = shoal.table_schemas()
    for name, columns in (("flows", flows), ("queues", samples)):
        table = pq.read_table(tmp_path / "r" / f"{name}.parquet")
        order = [column for column, _ in schemas[name]]
        types = {column: PARQUET_TYPES[kind] for column, kind in schemas[name]}
        assert table.schema.names == order == list(columns)
        for field in table.schema:
            assert field.type == types[field.name], field
            assert field.nullable, field  # as pyarrow writes NumPy columns
        assert table.schema.metadata is None
        for column in order:
            values = table.column(column).to_pylist()
            expected = list(columns[column]) if column == "kind" else columns[column].tolist()
            if isinstance(expected[0], float):  # NaN is stored as null
                expected = [None if np.isnan(v) else v for v in expected]
            assert values == expected, column
    # Unfinished flows: null finish, FCT and slowdown; pandas reads NaN in float64 columns.
    table = pq.read_table(tmp_path / "r" / "flows.parquet")
    unfinished = int((~flows["finished"]).sum())
    assert 0 < unfinished < len(flows["finished"])
    for column in ("finish_ns", "fct_ns", "slowdown"):
        assert table.column(column).null_count == unfinished
    frame = pd.read_parquet(tmp_path / "r" / "flows.parquet")
    assert frame["fct_ns"].dtype == np.float64 and frame["fct_ns"].isna().sum() == unfinished
    assert frame["kind"].tolist() == flows["kind"]


def test_load_returns_the_api_frames(tmp_path: Path) -> None:
    over = ["run.stop_time=5us", "run.sample_interval=1us"]
    with pytest.warns(shoal.ShoalWarning, match="did not finish"):
        result = shoal.run(TINY, set=over, out=tmp_path / "r")
    loaded = shoal.load(tmp_path / "r")
    pd.testing.assert_frame_equal(loaded.flows, result.flows, check_exact=True)
    assert result.samples is not None and loaded.samples is not None
    pd.testing.assert_frame_equal(loaded.samples, result.samples, check_exact=True)
    assert loaded.summary == result.summary and loaded.scenario == result.scenario
    assert result.path == (tmp_path / "r").absolute()


def test_run_directories_are_deterministic(tmp_path: Path) -> None:
    over = ["run.stop_time=20us", "run.sample_interval=2us"]
    for name in ("a", "b"):
        shoal.run(TINY, set=over, out=tmp_path / name)
    for name in ("flows.parquet", "queues.parquet", "scenario.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    a, b = (json.loads((tmp_path / d / "summary.json").read_text()) for d in "ab")
    for s in (a, b):
        s.pop("wall_time_s"), s.pop("events_per_s")
    assert a == b


def test_json_files_are_json_dumps(tmp_path: Path) -> None:
    with pytest.warns(shoal.ShoalWarning, match="did not finish"):
        shoal.run(QUERIES, out=tmp_path / "r")
    for name in ("summary.json", "scenario.json"):
        text = (tmp_path / "r" / name).read_text()
        assert text == json.dumps(json.loads(text), indent=2) + "\n"
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["scenario"] == json.loads((tmp_path / "r" / "scenario.json").read_text())


def _stats(fct: np.ndarray, slowdown: np.ndarray) -> dict[str, Any]:
    def stat(values: np.ndarray, fn: Any) -> float | None:
        return float(fn(values)) if values.size else None

    return {
        "count": int(fct.size),
        "mean_fct_ns": stat(fct, np.mean),
        "p50_fct_ns": stat(fct, lambda v: np.percentile(v, 50)),
        "p99_fct_ns": stat(fct, lambda v: np.percentile(v, 99)),
        "mean_slowdown": stat(slowdown, np.mean),
        "p50_slowdown": stat(slowdown, lambda v: np.percentile(v, 50)),
        "p99_slowdown": stat(slowdown, lambda v: np.percentile(v, 99)),
    }


def _expected_summary_parts(flows: pd.DataFrame, summary: dict[str, Any]) -> dict[str, Any]:
    """The summary's flow statistics, recomputed with NumPy / pandas from the flow table."""
    bounds = [100_000, 10_000_000]
    done = flows[flows["finished"] & (flows["kind"] == "tcp")]
    index = np.searchsorted(np.asarray(bounds, float), done["bytes"].to_numpy(float), "left")
    fct: dict[str, Any] = {}
    for i, label in enumerate(("small", "medium", "large")):
        sel = done[index == i]
        fct[label] = _stats(sel["fct_ns"].to_numpy(), sel["slowdown"].to_numpy())
        fct[label]["min_bytes_exclusive"] = bounds[i - 1] if i else None
        fct[label]["max_bytes_inclusive"] = bounds[i] if i < 2 else None
    fct["all"] = _stats(done["fct_ns"].to_numpy(), done["slowdown"].to_numpy())

    queries: dict[str, Any] = {"count": 0, "finished": 0}
    rounds = flows[flows["query"] >= 0].groupby("query")
    if len(rounds):
        complete = rounds["finished"].all()
        qct = (rounds["finish_ns"].max() - rounds["start_ns"].min())[complete].to_numpy()
        queries = {"count": len(complete), "finished": int(complete.sum())}
        if qct.size:
            queries |= {
                "mean_qct_ns": float(np.mean(qct)),
                "p50_qct_ns": float(np.percentile(qct, 50)),
                "p99_qct_ns": float(np.percentile(qct, 99)),
            }
    counters = summary["counters"]
    packets = counters["packets"]
    by_transport = {
        kind: {"flows": len(group), "finished": int(group["finished"].sum())}
        for kind, group in flows.groupby("kind")
    }
    return {
        "flows": {
            "total": len(flows),
            "finished": int(flows["finished"].sum()),
            "unfinished": int((~flows["finished"]).sum()),
            "by_transport": by_transport,
            "bytes": int(flows["bytes"].sum()),
            "delivered_bytes": int(flows["delivered_bytes"].sum()),
        },
        "size_buckets_bytes": bounds,
        "fct": fct,
        "queries": queries,
        "packets": packets,
        "loss_rate": packets["dropped"] / packets["sent"],
        "switch_drop_rate": packets["switch_dropped"] / packets["switch_arrivals"],
        "timeouts": int(flows["timeouts"].sum()),
        "retransmits": int(flows["retransmits"].sum()),
        "ecn_mark_rate": counters["ecn_marks"] / counters["data_packets_sent"],
        "link_utilization": {
            "mean": counters["links"]["host_downlinks"]["mean"],
            "max": counters["links"]["host_downlinks"]["max"],
            "core_mean": None,
            "core_max": None,
        },
        "events_per_s": counters["events"] / summary["wall_time_s"],
    }


def _close(got: Any, want: Any) -> bool:
    """Equal, floats within a relative 1e-12 (the core's sums may differ from NumPy's in
    the last bits); the same keys, the same nulls, the same counts."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(_close(got[k], want[k]) for k in want)
        )
    if isinstance(want, float) and not isinstance(got, bool) and isinstance(got, int | float):
        return got == pytest.approx(want, rel=1e-12, abs=0)
    return type(got) is type(want) and got == want


def test_close_is_strict_about_what_matters() -> None:
    assert _close({"a": 1.0, "b": None}, {"a": 1.0 + 1e-15, "b": None})
    assert not _close({"a": 1.0}, {"a": 1.0 + 1e-9})
    assert not _close({"a": None}, {"a": 0.0}) and not _close({"n": 3}, {"n": 4})
    assert not _close({"a": 1}, {"a": 1, "b": 2})


@pytest.mark.parametrize(
    ("scenario", "overrides"),
    [
        (QUICKSTART, ["workload.flows=600"]),  # hundreds of flows per bucket
        (QUERIES, []),  # queries, unfinished flows and queries
        (TINY, ["run.stop_time=5us"]),  # unfinished flows, empty buckets
    ],
    ids=["quickstart", "queries", "stopped"],
)
def test_summary_agrees_with_numpy(scenario: Any, overrides: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shoal.ShoalWarning)  # unfinished flows
        result = shoal.run(scenario, set=overrides)
    summary = result.summary
    expected = _expected_summary_parts(result.flows, summary)
    for key, value in expected.items():
        assert _close(summary[key], value), (key, summary[key], value)
    assert summary["seed"] == result.scenario["run"]["seed"]
    assert summary["shoal_version"] == shoal.__version__
    unfinished_tcp = int((~result.flows["finished"] & (result.flows["kind"] == "tcp")).sum())
    assert any("did not finish" in w for w in summary["warnings"]) == (unfinished_tcp > 0)
    if scenario is QUERIES:
        assert summary["queries"]["count"] == 3 and summary["queries"]["finished"] == 1


def test_write_errors_from_the_core_are_clean(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    shoal.run(tiny, out=out)
    # A failure inside the core's writer (a file of the user's holds the name of its
    # temporary directory) is an OSError naming the path: `error: ...`, exit 2, the
    # previous run kept, and the user's file too.
    code = (
        "import os, sys\nfrom pathlib import Path\nfrom shoal.cli import main\n"
        f"out = Path({str(out)!r})\n"
        "(out.parent / f'.x.tmp-{os.getpid()}').write_text('mine')\n"
        f"main(['run', {str(tiny)!r}, '--quiet', '--out', str(out), '--seed', '2'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error:") and str(out.parent) in proc.stderr.replace("\n", "")
    assert "Traceback" not in proc.stderr
    assert shoal.load(out).scenario["run"]["seed"] == 1
    planted = [p for p in tmp_path.iterdir() if p.name.startswith(".x.tmp")]
    assert len(planted) == 1 and planted[0].read_text() == "mine"


def test_switch_data_drops_are_counted_apart_from_ack_drops() -> None:
    # Hosts 1-8 send 1 MB each into host 0, and host 0 sends 1 MB to each of them, whose
    # ACKs come back through host 0's port: a 20 KB pool drops data and ACKs there. With
    # every segment full (1,000 B flows' multiples), the dropped bytes fix the split:
    # 1,040 B per data packet, 64 B per ACK.
    size = "1000000B"
    sc = {
        "topology": {"kind": "star", "hosts": 9, "link_rate": "10Gbps", "link_delay": "1us"},
        "switch": {"pool_size": "20KB", "ports_per_pool": 9},
        "transport": {"cc": "newreno", "mss": 1000, "header": 40, "ack_size": 64},
        "workload": {
            "pattern": "incast",
            "senders": "1-8",
            "receiver": 0,
            "size": size,
            "extra": [
                {"pattern": "incast", "senders": [0], "receiver": r, "size": size}
                for r in range(1, 9)
            ],
        },
        "run": {"seed": 1},
    }
    result = shoal.run(sc)
    c = result.summary["counters"]
    drops, data = c["packets"]["switch_dropped"], c["switch_data_dropped"]
    assert 0 < data < drops  # both kinds were dropped
    assert c["bytes_dropped"] == 1040 * data + 64 * (drops - data)
    # Every lost segment is sent again (a spurious retransmission only adds).
    assert result.flows["finished"].all() and result.flows["retransmits"].sum() >= data
    # Without the reverse flows no ACK crosses host 0's port: every drop is data.
    sc["workload"].pop("extra")
    alone = shoal.run(sc).summary["counters"]
    assert alone["switch_data_dropped"] == alone["packets"]["switch_dropped"] > 0


def test_result_documents_every_table_and_column() -> None:
    """Each table of the core's schema is an attribute of ``Result`` (``queues`` is
    ``samples``) whose docstring lists the table's columns in order, and nothing else
    is: a column added in the core fails here until it is documented."""
    attribute = {"queues": "samples"}
    schemas = shoal.table_schemas()
    assert set(schemas) == {
        "flows",
        "queues",
        "pfc",
        "pfc_ports",
        "ingress",
        "headroom",
        "occupancy",
        "collectives",
        "series",
    }
    for name, columns in schemas.items():
        doc = getattr(shoal.Result, attribute.get(name, name)).__doc__
        assert doc is not None, name
        listed = " ".join(doc.split())
        assert " ".join(c for c, _ in columns) in listed.replace("``", ""), (name, columns)


def test_every_table_file_has_the_published_columns_and_types(tmp_path: Path) -> None:
    """A lossless run that samples and keeps occupancy writes pfc, pfc_ports, ingress and
    occupancy besides flows and queues; each file's columns and Parquet types are the
    core's schema (``shoal.table_schemas``), and ``Result.tables`` holds the same."""
    scenario = {
        "topology": {"kind": "star", "hosts": 9, "link_rate": "100Gbps", "link_delay": "1us"},
        "switch": {"pool_size": "200KB", "reserved": "0B", "flow_control": {"kind": "pfc"}},
        "rdma": {"cc": {"kind": "none"}},
        "workload": {"pattern": "incast", "receiver": 0, "size": "200KB", "transport": "rdma"},
        "run": {"sample_interval": "1us", "occupancy_cdf": True},
    }
    result = shoal.run(scenario, out=tmp_path / "r")
    made = {p.stem for p in (tmp_path / "r").glob("*.parquet")}
    assert {"flows", "queues", "pfc", "pfc_ports", "ingress", "occupancy"} <= made
    assert made == set(result.tables)
    for name in made:
        columns = shoal.table_schemas()[name]
        table = pq.read_table(tmp_path / "r" / f"{name}.parquet")
        assert [(f.name, f.type) for f in table.schema] == [
            (c, PARQUET_TYPES[t]) for c, t in columns
        ]
        assert list(result.tables[name].columns) == [c for c, _ in columns]
