"""Load balancing from Python (``switch.load_balancing``): a user sees reordering in
``summary.json`` where flows are split, and a bad policy is a clean error naming its key."""

from __future__ import annotations

from typing import Any

import pytest

import shoal

FABRIC: dict[str, Any] = {
    "kind": "leaf_spine",
    "leaves": 2,
    "spines": 4,
    "hosts_per_leaf": 4,
    "uplink_rate": "25Gbps",
}
WORKLOAD = {"pattern": "all_to_all", "cdf": "websearch", "flows": 40, "load": 0.6}


def run(policy: dict[str, Any]) -> Any:
    return shoal.run(
        {"topology": FABRIC, "switch": {"load_balancing": policy}, "workload": WORKLOAD}
    ).summary


def test_spraying_reorders_and_ecmp_does_not() -> None:
    sprayed = run({"kind": "spray"})
    assert sprayed["packets"]["reordered"] > 0
    assert sprayed["scenario"]["switch"]["load_balancing"]["kind"] == "spray"
    ecmp = run({"kind": "ecmp"})
    assert "reordered" not in ecmp["packets"]
    # The default is left out of the resolved scenario, as results before it read.
    assert "load_balancing" not in ecmp["scenario"]["switch"]


def test_a_policy_given_by_its_kind_alone() -> None:
    summary = shoal.run(
        {"topology": FABRIC, "switch": {"load_balancing": "drill"}, "workload": WORKLOAD}
    ).summary
    assert summary["scenario"]["switch"]["load_balancing"] == {
        "kind": "drill",
        "samples": 2,
        "memory": 1,
    }


def test_a_bad_flowlet_table_names_its_key() -> None:
    with pytest.raises(shoal.ScenarioError, match=r"switch\.load_balancing\.table: 1000"):
        run({"kind": "letflow", "table": 1000})
