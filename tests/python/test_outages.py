"""Outages from Python (``topology.outages``): a user reads the loss a failed spine caused
in ``summary.json``, and a bad outage is a clean error naming its key."""

from __future__ import annotations

from typing import Any

import pytest

import shoal

FABRIC: dict[str, Any] = {
    "kind": "leaf_spine",
    "leaves": 4,
    "spines": 2,
    "hosts_per_leaf": 4,
    "reconvergence": "50us",
}


def test_a_spine_failure_shows_as_link_down_drops_and_flows_finish() -> None:
    result = shoal.run(
        {
            "topology": {**FABRIC, "outages": [{"switch": 20, "at": "200us", "until": "1ms"}]},
            "workload": {"pattern": "all_to_all", "cdf": "websearch", "flows": 100, "load": 0.5},
        }
    )
    summary = result.summary
    assert summary["drops"]["link_down"] > 0
    assert summary["flows"]["finished"] == summary["flows"]["total"]


def test_clean_runs_list_no_outage_drops() -> None:
    summary = shoal.run({"topology": {"kind": "star", "hosts": 4}}).summary
    assert "link_down" not in summary["drops"]


def test_an_outage_that_cuts_a_host_off_names_its_key() -> None:
    cut_off = r"topology\.outages\[0\]\.link: .*cut host 0 off"
    with pytest.raises(shoal.ScenarioError, match=cut_off):
        shoal.run({"topology": {**FABRIC, "outages": [{"link": [0, 16], "at": "1ms"}]}})
