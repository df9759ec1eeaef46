"""``shoal advise check`` on lossless fabrics (issue 30, item 5): its PFC headroom rule
reads ``[switch.flow_control]``, and the rules about drops (a queue that "drops before
it is marked", TCP's K and slow start) leave lossless classes alone, which PFC pauses
instead of dropping."""

from __future__ import annotations

import pytest

from shoal import advise

#: BCC's overflow case (8 receivers on one 3 MB pool, K = 720 KB each), which the drop
#: rules flag for TCP.
STAR = {
    "topology": {"kind": "star", "hosts": 32, "link_rate": "100Gbps", "link_delay": "10us"},
    "switch": {"marking": {"cutoff": {"k": "720KB"}}},
    "workload": {
        "pattern": "many_to_few",
        "senders": "0-23",
        "receivers": "24-31",
        "flows": 10,
    },
}

#: The drop rules: each says that a queue overflows, drops or underflows after a loss.
DROP_RULES = {
    "ecn-sum-over-pool",
    "ecn-above-dt-share",
    "k-below-transport-minimum",
    "drop-threshold-below-bdp",
    "buffer-below-bdp",
    "buffer-below-2k-plus-bdp",
}


def _with(**tables: object) -> dict[str, object]:
    """STAR with its tables updated (one level deep)."""
    out: dict[str, object] = {k: dict(v) if isinstance(v, dict) else v for k, v in STAR.items()}
    for name, table in tables.items():
        merged = dict(out.get(name) or {})  # type: ignore[call-overload]
        merged.update(table)  # type: ignore[call-overload]
        out[name] = merged
    return out


def _rules(report: advise.CheckReport) -> set[str]:
    return {f.rule for f in report.findings}


RDMA = {"transport": "rdma", "priority": 3}
PFC = {"flow_control": {"kind": "pfc", "classes": [3]}, "ecn": {"non_ect": "pass"}}


def test_the_drop_rules_flag_lossy_tcp() -> None:
    """The control: TCP on a lossy fabric gets the BCC findings."""
    assert {"ecn-sum-over-pool", "ecn-above-dt-share"} <= _rules(advise.check(STAR))


def test_lossless_rdma_gets_no_drop_rule() -> None:
    report = advise.check(_with(workload=RDMA, switch=PFC))
    assert not (_rules(report) & DROP_RULES), report.findings
    assert not any("drops before it is marked" in f.message for f in report.findings)


def test_lossless_rdma_gets_no_tcp_k_rule() -> None:
    """DCTCP's minimum K is not a rule of DCQCN's RDMA connections."""
    switch = {**PFC, "marking": {"cutoff": {"k": "10KB"}}}
    report = advise.check(_with(workload=RDMA, switch=switch))
    assert "k-below-transport-minimum" not in _rules(report), report.findings


def test_tcp_in_a_lossless_class_gets_no_drop_rule() -> None:
    """PFC's default classes are every class: TCP's class 0 is lossless too."""
    report = advise.check(_with(switch={"flow_control": "pfc"}))
    assert not (_rules(report) & DROP_RULES), report.findings


def test_rdma_outside_the_lossless_classes_still_gets_the_drop_rules() -> None:
    """PFC covers class 5, the connections run in class 3: their queues drop."""
    switch = {"flow_control": {"kind": "pfc", "classes": [5]}, "ecn": {"non_ect": "pass"}}
    report = advise.check(_with(workload=RDMA, switch=switch))
    assert {"ecn-sum-over-pool", "ecn-above-dt-share"} <= _rules(report)
    assert "k-below-transport-minimum" not in _rules(report)


def test_lossy_tcp_beside_lossless_rdma_keeps_the_tcp_rules() -> None:
    extra = {"pattern": "many_to_few", "senders": "0-23", "receivers": "24-31", "flows": 10}
    scenario = _with(workload={**RDMA, "extra": [extra]}, switch=PFC)
    assert {"ecn-sum-over-pool", "ecn-above-dt-share"} <= _rules(advise.check(scenario))


def test_the_lossless_classes_are_named_in_the_context() -> None:
    report = advise.check(_with(workload=RDMA, switch=PFC))
    assert report.context["flow_control"] == "pfc"
    assert report.context["lossless_classes"] == [3]
    assert report.context["lossy_traffic"] is False


# -- the PFC headroom rule ----------------------------------------------------------------

#: eta at 100 Gbps and 10 us with TCP's 1,514 B packets: 2(125,000 + 1,514) + 3,840 B.
ETA = 2 * (125_000 + 1_514) + 3_840


@pytest.mark.parametrize("kind", ["pfc", "dsh"])
def test_headroom_below_eta_is_flagged(kind: str) -> None:
    switch = {"flow_control": {"kind": kind, "headroom": "10KB"}, "ports_per_pool": 32}
    report = advise.check(_with(switch=switch))
    found = [f for f in report.findings if f.rule == "pfc-headroom-below-eta"]
    assert len(found) == 1, report.findings
    assert "switch.flow_control.headroom = 10,000 B" in found[0].message
    assert f"{ETA:,} B" in found[0].message
    assert found[0].severity == "warning"


@pytest.mark.parametrize("headroom", ["eta", "300KB"])
def test_enough_headroom_is_not_flagged(headroom: str) -> None:
    switch = {"flow_control": {"kind": "pfc", "headroom": headroom}}
    assert "pfc-headroom-below-eta" not in _rules(advise.check(_with(switch=switch)))


def test_3cd_headroom_on_a_short_link_is_flagged() -> None:
    """3 x C x D has no MTU term: at 100 ns it is 3,750 B, below eta = 9,368 B."""
    scenario = _with(
        topology={"link_delay": "100ns"},
        switch={"flow_control": {"kind": "pfc", "headroom": "3cd"}},
    )
    found = [f for f in advise.check(scenario).findings if f.rule == "pfc-headroom-below-eta"]
    assert len(found) == 1
    assert "3,750 B" in found[0].message and "9,368 B" in found[0].message


def test_bfc_backstop_headroom_is_checked() -> None:
    switch = {
        "queues": 35,
        "scheduler": {"kind": "dwrr", "strict_queues": 2},
        "flow_control": {"kind": "bfc", "backstop": {"classes": [0], "headroom": "10KB"}},
    }
    found = [
        f for f in advise.check(_with(switch=switch)).findings if f.rule == "pfc-headroom-below-eta"
    ]
    assert len(found) == 1
    assert "switch.flow_control.backstop.headroom" in found[0].message


def test_rdma_packets_size_eta() -> None:
    """eta counts the largest packet: RDMA's 1,000 + 36 B is below TCP's 1,500 B, and a
    9,000 B RDMA MTU is above it."""
    rdma = {"mtu": 9000}
    switch = {**PFC, "flow_control": {"kind": "pfc", "classes": [3], "headroom": "260KB"}}
    scenario = _with(workload=RDMA, switch=switch)
    scenario["rdma"] = rdma
    found = [f for f in advise.check(scenario).findings if f.rule == "pfc-headroom-below-eta"]
    eta = 2 * (125_000 + 9_036) + 3_840
    assert len(found) == 1 and f"{eta:,} B" in found[0].message
