"""One run on several threads writes the same files as on one (docs/parallel.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import shoal

#: A lossy DCTCP fat tree with queue sampling, and a PFC-lossless RDMA leaf-spine (with the
#: deadlock watch), small enough for CI.
SCENARIOS = {
    "fat_tree_dctcp": {
        "topology": {"kind": "fat_tree", "k": 4, "link_delay": "1us"},
        "switch": {"buffer": "400KB", "reserved": "2KB", "queues": 1},
        "workload": {"pattern": "all_to_all", "cdf": "websearch", "flows": 200, "load": 0.6},
        "run": {"sample_interval": "20us"},
    },
    "leaf_spine_rdma_pfc": {
        "topology": {"kind": "leaf_spine", "leaves": 4, "spines": 2, "hosts_per_leaf": 4},
        "switch": {
            "flow_control": {"kind": "pfc"},
            "marking": {"red": {"kmin": "40KB", "kmax": "160KB", "pmax": 0.2}},
        },
        "workload": {
            "pattern": "all_to_all",
            "cdf": "websearch",
            "flows": 200,
            "load": 0.6,
            "transport": "rdma",
        },
        "run": {"sample_interval": "20us"},
    },
}

#: Summary keys that differ between two runs of the same scenario.
VOLATILE = {"wall_time_s", "events_per_s"}


def _files(run_dir: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(run_dir.iterdir()):
        if path.name == "summary.json":
            summary = json.loads(path.read_text())
            for key in VOLATILE:
                summary.pop(key, None)
            files[path.name] = json.dumps(summary, sort_keys=True).encode()
        else:
            files[path.name] = path.read_bytes()
    return files


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_files_are_the_same_for_any_number_of_threads(name: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    one = tmp_path / "1"
    shoal.run(scenario, out=one, set=["run.threads=1"])
    expected = _files(one)
    assert {"flows.parquet", "summary.json", "queues.parquet"} <= set(expected)
    for threads in (2, 3, "auto"):
        many = tmp_path / str(threads)
        shoal.run(scenario, out=many, set=[f"run.threads={threads}"])
        got = _files(many)
        assert got.keys() == expected.keys(), threads
        for file, data in expected.items():
            assert got[file] == data, f"{file} differs with {threads} threads"


def test_a_bad_thread_count_names_the_key_and_what_is_accepted() -> None:
    with pytest.raises(shoal.ScenarioError, match=r"run\.threads: 0 is not accepted .*\"auto\""):
        shoal.run(SCENARIOS["fat_tree_dctcp"], set=["run.threads=0"])
