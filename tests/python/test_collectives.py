"""Collective traffic from Python (``pattern = "collective"``): the example sweep against
the links' bandwidth bound, the ``collectives`` table and summary, the CLI's headline,
and clean errors for bad settings."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest

import shoal

EXAMPLE = Path(__file__).resolve().parents[2] / "experiments" / "examples" / "collectives.toml"
STAR = {"kind": "star", "hosts": 4, "link_rate": "100Gbps", "link_delay": "1us"}


def ring(**workload: Any) -> dict[str, Any]:
    return {
        "topology": STAR,
        "rdma": {"cc": "none"},
        "switch": {"flow_control": {"kind": "pfc"}},
        "workload": {
            "pattern": "collective",
            "size": "4MB",
            "repeats": 3,
            "compute": "5us",
            "transport": "rdma",
            **workload,
        },
    }


def test_the_example_sweep_never_beats_the_links_bound(tmp_path: Path) -> None:
    """The worked example (32 hosts at 100 Gbps, PFC, DSH and BFC) at 1 MB and one
    iteration: every collective finishes, and none beats the bound of its busiest host
    link: 2(n - 1)/n of the buffer for a ring all-reduce, (n - 1)/n for all-to-all, and
    the server's 31 buffers in and out for a parameter server. All-to-all, which makes 31
    incasts at once, is the one that stresses the buffer: it fills it more than the ring,
    whose every link carries one message at a time."""
    spec = tomllib.loads(EXAMPLE.read_text())
    spec["base"] = str(EXAMPLE.parent / spec["base"])
    spec["set"] = {"workload.size": "1MB", "workload.repeats": 1}
    df = shoal.sweep(spec, jobs=2, store=tmp_path / "store", progress=False)
    assert (df.status == "ok").all(), df.error.tolist()
    assert (df.collective_finished == 1).all()
    n, seconds_per_byte = 32, 8 / 100e9
    bound_ns = {
        "ring_all_reduce": 2 * (n - 1) / n * 1e6 * seconds_per_byte * 1e9,
        "all_to_all": (n - 1) / n * 1e6 * seconds_per_byte * 1e9,
        "parameter_server": 2 * (n - 1) * 1e6 * seconds_per_byte * 1e9,
    }
    for _, row in df.iterrows():
        bound = bound_ns[row["workload.collective"]]
        assert row.collective_time_mean_ns > bound, (row.scheme, row["workload.collective"])
    buffer = df.pivot_table(
        index="scheme", columns="workload.collective", values="buffer_max_bytes"
    )
    assert (buffer["all_to_all"] > buffer["ring_all_reduce"]).all(), buffer.to_dict()


def test_a_run_has_the_collectives_table_and_headline(tmp_path: Path) -> None:
    result = shoal.run(ring(), out=tmp_path / "run")
    table = result.collectives
    assert table is not None and list(table.columns) == [
        "job",
        "iteration",
        "start_ns",
        "end_ns",
        "time_ns",
    ]
    assert table.iteration.tolist() == [0, 1, 2]
    assert (table.time_ns == table.end_ns - table.start_ns).all()
    # The next iteration starts the compute gap after the last chunk of this one arrived.
    assert (table.start_ns.iloc[1:].to_numpy() == table.end_ns.iloc[:-1].to_numpy() + 5e3).all()
    (job,) = result.summary["collectives"]
    assert job["collective"] == "ring_all_reduce" and job["finished"] == 3 and job["hosts"] == 4
    assert job["mean_time_ns"] == pytest.approx(table.time_ns.mean())
    assert 0 < job["bus_bandwidth_gbps"] < 100
    assert shoal.load(tmp_path / "run").collectives.equals(table)
    assert shoal.run({"topology": STAR}).collectives is None


def test_the_cli_prints_each_jobs_headline(tmp_path: Path) -> None:
    path = tmp_path / "ring.toml"
    path.write_text(
        '[topology]\nkind = "star"\nhosts = 4\n[workload]\npattern = "collective"\n'
        'collective = "all_to_all"\nsize = "400KB"\n'
    )
    out = subprocess.run(
        [sys.executable, "-m", "shoal", "run", str(path), "-o", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "all_to_all (workload): 4 hosts, 400KB, 1/1 iterations" in out, out


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"collective": "broadcast"}, r"workload\.collective.*ring_all_reduce"),
        ({"senders": "1"}, r"workload\.senders: holds 1 host"),
        ({"size": "3B"}, r"workload\.size: 3B is not accepted .*at least 4 bytes"),
        (
            {"collective": "parameter_server", "receiver": 7},
            r"workload\.receiver: 7 is not accepted .*0\.\.=3",
        ),
        ({"repeats": 0}, r"workload\.repeats: 0"),
    ],
)
def test_bad_collectives_are_refused_naming_the_key(workload: dict[str, Any], message: str) -> None:
    with pytest.raises(shoal.ScenarioError, match=message):
        shoal.run(ring(**workload))


def test_collective_keys_elsewhere_have_no_effect() -> None:
    scenario = {"topology": STAR, "workload": {"pattern": "incast", "compute": "1us"}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shoal.run(scenario)
    assert any("workload.compute: has no effect" in str(w.message) for w in caught)


def test_a_collective_cannot_be_listed_as_a_trace() -> None:
    with pytest.raises(shoal.ScenarioError, match=r"workload\.pattern: .*as the run goes"):
        shoal.trace(ring())
