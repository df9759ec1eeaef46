"""IRN from Python (``rdma.loss_recovery``): the IRN paper's comparison as the example
sweep runs it, the resolved scenario, and clean errors for bad settings."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

import shoal

EXAMPLE = Path(__file__).resolve().parents[2] / "experiments" / "examples" / "irn.toml"
INCAST = {
    "pattern": "incast",
    "senders": "0-2",
    "receiver": 3,
    "size": "100KB",
    "transport": "rdma",
}


def run(rdma: dict[str, Any]) -> Any:
    return shoal.run(
        {
            "topology": {"kind": "star", "hosts": 4},
            "rdma": {"cc": "none", **rdma},
            "workload": INCAST,
        }
    ).summary


def test_the_example_sweep_bears_out_the_papers_claims(tmp_path: Path) -> None:
    """Mittal et al. (SIGCOMM 2018), on the paper's k = 6 fat tree at 70% load, for no
    congestion control, DCQCN and TIMELY: IRN without PFC beats RoCE with PFC (the
    abstract: by 6 to 83%); IRN does not need PFC; RoCE does (without it, go-back-N
    resends a window for each drop). Half the example's flows and one seed."""
    spec = tomllib.loads(EXAMPLE.read_text())
    spec["base"] = str(EXAMPLE.parent / spec["base"])
    spec["set"] = {"workload.flows": 1500}
    spec["axes"]["seeds"] = [1]
    df = shoal.sweep(spec, jobs=2, store=tmp_path / "store", progress=False)
    assert (df.status == "ok").all(), df.error.tolist()
    mean = df.pivot_table(index="rdma.cc.kind", columns="scheme", values="all_mean_slowdown")
    tail = df.pivot_table(index="rdma.cc.kind", columns="scheme", values="all_p99_slowdown")
    for cc in ["none", "dcqcn", "timely"]:
        row, tail_row = mean.loc[cc], tail.loc[cc]
        assert row["irn_lossy"] < row["roce_pfc"], (cc, row.to_dict())
        assert row["irn_lossy"] <= 1.05 * row["irn_pfc"], (cc, row.to_dict())
        assert tail_row["roce_lossy"] > tail_row["roce_pfc"], (cc, tail_row.to_dict())
    for cc in ["none", "timely"]:
        assert mean.loc[cc, "roce_lossy"] > 1.5 * mean.loc[cc, "roce_pfc"], mean.loc[cc].to_dict()
    irn = df[df.scheme == "irn_lossy"]
    assert (irn.retransmits > 0).all(), "the lossy fabric drops, and IRN recovers"


def test_the_resolved_scenario_lists_irn_and_leaves_go_back_n_out() -> None:
    irn = run({"loss_recovery": "irn", "window": "max_bdp"})
    assert irn["scenario"]["rdma"]["loss_recovery"] == {
        "kind": "irn",
        "rto_low": "100us",
        "rto_high": "320us",
        "rto_low_below": 3,
    }
    assert irn["flows"]["unfinished"] == 0
    assert "loss_recovery" not in run({})["scenario"]["rdma"]


@pytest.mark.parametrize(
    ("rdma", "message"),
    [
        (
            {"loss_recovery": {"kind": "irn", "rto_high": "50us"}},
            r"rdma\.loss_recovery\.rto_high: 50us",
        ),
        ({"loss_recovery": "irn", "rto": "1ms"}, r"rdma\.rto: 1ms .*accepted: \"none\""),
        ({"loss_recovery": "selective"}, r"go_back_n.*irn"),
        ({"loss_recovery": {"kind": "irn", "rto_lo": "1us"}}, r"rto_lo"),
    ],
)
def test_bad_settings_name_their_key(rdma: dict[str, Any], message: str) -> None:
    with pytest.raises(shoal.ScenarioError, match=message):
        run(rdma)


def test_irn_without_a_window_is_warned_of() -> None:
    with pytest.warns(shoal.ShoalWarning, match=r"max_bdp"):
        run({"loss_recovery": "irn"})


MARKING = EXAMPLE.parent / "irn_dcqcn_marking.toml"


def test_dcqcn_marks_a_full_lossy_port_whole_and_irn_leads_when_it_does_not(
    tmp_path: Path,
) -> None:
    """Why IRN's p99 FCT under DCQCN trails RoCE's over PFC in the example, on the
    paper's size mix: DCQCN's Kmax (200 KB) is below the port's 240 KB, so a lossy incast
    queue spends time where RED marks every packet, which PFC's pause threshold keeps a
    queue out of. With Kmax at the port's buffer, both mark alike and IRN without PFC
    beats RoCE with PFC, in p99 FCT as well (Mittal et al., SIGCOMM 2018: by 6 to 83%)."""
    spec = tomllib.loads(MARKING.read_text())
    spec["base"] = str(MARKING.parent / spec["base"])
    spec["axes"]["workload.cdf"] = [str(MARKING.parent / "irn_paper_mix.cdf")]
    spec["axes"]["seeds"] = [1]
    df = shoal.sweep(spec, jobs=2, store=tmp_path / "store", progress=False)
    assert (df.status == "ok").all(), df.error.tolist()
    by = df.set_index(["switch.marking.red.kmax", "scheme"])
    marks, p99 = by["ecn_mark_rate"], by["all_p99_fct_ns"]
    assert marks["200KB", "irn_lossy"] > 5 * marks["200KB", "roce_pfc"], marks.to_dict()
    assert p99["200KB", "irn_lossy"] > p99["200KB", "roce_pfc"], p99.to_dict()
    assert marks["240KB", "irn_lossy"] < 1.5 * marks["240KB", "roce_pfc"], marks.to_dict()
    assert p99["240KB", "irn_lossy"] < 0.94 * p99["240KB", "roce_pfc"], p99.to_dict()
    slowdown = by["all_mean_slowdown"]
    assert slowdown["240KB", "irn_lossy"] < 0.94 * slowdown["240KB", "roce_pfc"]
