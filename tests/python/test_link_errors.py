"""Corrupting links (``topology.error_rate``) from Python: the loss a user reads in
``summary.json`` is the chance set, and the run tells what corruption costs lossless
fabrics (README, "Links can corrupt packets")."""

from __future__ import annotations

import math
import warnings
from typing import Any

import shoal


def _run(scenario: dict[str, Any]) -> shoal.Result:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shoal.ShoalWarning)
        return shoal.run(scenario)


def test_datagram_loss_in_the_summary_is_the_two_hop_chance() -> None:
    p = 0.01
    result = _run(
        {
            "topology": {"kind": "star", "hosts": 2, "error_rate": p},
            "workload": {
                "pattern": "udp",
                "senders": "0",
                "receiver": 1,
                "rate": "40Gbps",
                "stop": "1ms",
            },
        }
    )
    summary = result.summary
    sent = summary["packets"]["sent"]
    lost = summary["drops"]["link_error"]
    q = 1 - (1 - p) ** 2
    assert abs(lost - sent * q) < 4.5 * math.sqrt(sent * q * (1 - q)), (lost, sent)
    assert summary["loss_rate"] == lost / sent
    assert summary["switch_drop_rate"] == 0


def test_clean_runs_keep_their_summary_keys() -> None:
    summary = _run({"topology": {"kind": "star", "hosts": 4}}).summary
    assert "link_error" not in summary["drops"]
    assert "frames_corrupted" not in summary["counters"]


def test_a_lost_resume_is_reported_as_a_frozen_fabric_and_ends_the_run() -> None:
    result = _run(
        {
            "topology": {
                "kind": "leaf_spine",
                "leaves": 2,
                "spines": 2,
                "hosts_per_leaf": 4,
                "error_rate": 0.01,
            },
            "switch": {"flow_control": {"kind": "pfc"}},
            "rdma": {"rto": "100us"},
            "workload": {
                "pattern": "all_to_all",
                "cdf": "websearch",
                "flows": 200,
                "load": 0.8,
                "transport": "rdma",
            },
        }
    )
    pfc = result.summary["pfc"]
    assert pfc is not None
    deadlocks = pfc["deadlocks"]
    assert [d.get("without_cycle") for d in deadlocks] == [True]
    assert any(w.startswith("frozen fabric from") for w in result.warnings)
    assert any("the run ended at the frozen fabric" in w for w in result.warnings)
