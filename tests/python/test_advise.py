"""The advisor's formulas against the papers' worked examples, and the scenario checker.

Every expected number below is a figure printed in a paper; the advisor must compute it
from the formula and the paper's inputs (nothing is looked up).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY
from shoal import _core, advise, load_scenario
from shoal.advise import AdviseError
from shoal.advise.check import (
    RULES,
    build_context,
    pfc_headroom,
)
from shoal.advise.formulas import first_pause_time
from shoal.advise.units import parse_rate, parse_size, parse_time

MiB = 2**20


# ----------------------------------------------------------------------------- units


def test_units_are_exact_and_follow_the_schema() -> None:
    assert parse_rate("rate", "100Gbps") == 100 * 10**9
    assert parse_rate("rate", "2.5 Gb/s") == 2_500_000_000
    assert parse_time("t", "2us") == Fraction(2, 10**6)
    assert parse_time("t", "1.5us") == Fraction(3, 2 * 10**6)
    assert parse_size("s", "1500") == 1500
    assert parse_size("s", "3MB") == 3_000_000
    assert parse_size("s", "128KB") == 128_000
    assert parse_size("s", "128KiB") == 131_072
    assert parse_size("s", "12MiB") == 12 * MiB


@pytest.mark.parametrize(
    ("fn", "value", "words"),
    [
        (parse_rate, "100Gbs", ["Gbs", "Gbps"]),
        (parse_rate, "100", ["needs a unit", "Gbps"]),
        (parse_rate, "-100Gbps", ["greater than 0"]),
        (parse_time, "2 fortnights", ["fortnights", "us"]),
        (parse_size, "3XB", ["XB", "MiB"]),
        (parse_size, "lots", ["lots"]),
    ],
)
def test_bad_units_name_the_input_and_accepted_values(fn, value, words) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AdviseError) as err:
        fn("the_param", value)
    assert err.value.param == "the_param"
    for word in words:
        assert word in str(err.value)


# --------------------------------------------------------------- worked examples: DSH


def test_eta_at_100gbps_2us_1500b_is_56840() -> None:
    # DSH section V-A: "The link delay is 2us and thus eta = 56840B".
    assert advise.headroom(rate="100Gbps", delay="2us", mtu=1500).eta == 56_840
    assert advise.eta_bytes(Fraction(100 * 10**9), Fraction(2, 10**6), Fraction(1500)) == 56_840


def test_trident2_static_headroom_is_5_33_mib_and_44_percent() -> None:
    # DSH section III-A: 12MB, 32 x 40GbE, 8 queues, MTU 1500B, D_prop 1.5us -> ~5.33MB, 44.4%.
    r = advise.headroom(rate="40Gbps", delay="1.5us", mtu=1500, ports=32, queues=8, buffer="12MiB")
    assert r.static_total == 5_591_040
    assert r.static_total / MiB == pytest.approx(5.33, abs=0.005)
    assert r.static_fraction == pytest.approx(0.444, abs=0.0005)
    # DSH's insurance headroom is one eta per port.
    assert r.dsh_total == 32 * r.eta
    # The same from the chip preset.
    chip = advise.headroom(chip="trident2", delay="1.5us")
    assert chip.static_total == 5_591_040
    assert chip.static_fraction == r.static_fraction


def test_tomahawk_seven_lossless_queues_need_12_mib() -> None:
    # DSH section V-A: "56840B x 32 x 7 = 12MB".
    r = advise.headroom(rate="100Gbps", delay="2us", mtu=1500, ports=32, queues=7)
    assert r.static_total == 12_732_160
    assert r.static_total / MiB == pytest.approx(12.1, abs=0.05)
    assert advise.headroom(chip="tomahawk", delay="2us", queues=7).static_total == 12_732_160


def test_buffer_per_capacity_trend_of_dsh_fig4() -> None:
    # DSH section III-A: buffer per unit of capacity fell "from 157us to 37us" (Trident+ to TH4).
    assert float(advise.get_chip("trident+").buffer_time) * 1e6 == pytest.approx(157, abs=0.5)
    assert float(advise.get_chip("tomahawk4").buffer_time) * 1e6 == pytest.approx(37, abs=0.5)


def _theorem(num: float, a: float, n: int, m: int, r: float) -> float:
    # The case boundary follows from the paper's Eq. 13 (T'(0+) >= -1), where the two
    # cases meet; the printed (1 - a n) is a sign slip (test below).
    if r <= (1 + a * n) / (a * m) + 1:
        return num / ((1 + a * (n + m)) * (r - 1))
    return num / ((1 + a * n) * ((1 + a * m) * (r - 1) - a * n))


@pytest.mark.parametrize(("n", "m", "r"), [(0, 1, 2.0), (2, 16, 2.0), (0, 4, 1.5), (1, 2, 40.0)])
def test_dsh_burst_follows_theorems_1_and_2(n: int, m: int, r: float) -> None:
    # DSH section IV-C on the paper's Tomahawk setup (16MB, 32 ports, 7 queues, alpha 1/16).
    res = advise.dsh_burst(
        rate="100Gbps",
        delay="2us",
        buffer="16MiB",
        ports=32,
        queues=7,
        alpha="1/16",
        congested=n,
        bursting=m,
        load=r,
    )
    eta, B, a, byte_rate = 56_840, 16 * MiB, 1 / 16, 100e9 / 8
    dsh = _theorem(a * (B - 32 * eta) - eta, a, n, m, r) / byte_rate
    sih = _theorem(a * (B - 7 * 32 * eta), a, n, m, r) / byte_rate
    assert res.dsh_duration == pytest.approx(dsh, rel=1e-12)
    assert res.sih_duration == pytest.approx(sih, rel=1e-12)
    assert res.dsh_burst_bytes == pytest.approx(r * 100e9 / 8 * dsh, rel=1e-12)
    # DSH absorbs longer bursts than static headroom with more than one queue per port.
    assert res.dsh_duration > res.sih_duration


def test_dsh_theorems_two_cases_meet_at_their_boundary() -> None:
    # Eq. 13: with the congested queues following T, T'(0+) = -a M (R - 1) / (1 + a N);
    # case 1 needs T'(0+) >= -1. At the boundary both durations must agree, and just
    # past it case 2 must be used: a duration continuous in the load R.
    a, n, m = 1 / 16, 2, 16
    boundary = (1 + a * n) / (a * m) + 1
    kw = dict(rate="100Gbps", delay="2us", buffer="16MiB", ports=32, queues=7, alpha="1/16")
    below = advise.dsh_burst(congested=n, bursting=m, load=boundary - 1e-9, **kw)
    above = advise.dsh_burst(congested=n, bursting=m, load=boundary + 1e-9, **kw)
    assert below.dsh_duration == pytest.approx(above.dsh_duration, rel=1e-6)
    assert below.sih_duration == pytest.approx(above.sih_duration, rel=1e-6)


@pytest.mark.parametrize("congested_drain", [Fraction(1, 8), Fraction(4), Fraction(8)])
def test_first_pause_time_cases_meet_when_congested_queues_drain_at_another_rate(
    congested_drain: Fraction,
) -> None:
    # With the congested queues draining at c times a bursting queue's rate, case 1 needs
    # T'(0+) = -a M (R - 1) / (1 + a N) >= -c: the boundary moves to (1 + a N) c / (a M) + 1,
    # and the duration must still be continuous there, with case 2 just past it.
    a, n, m = Fraction(1, 16), 2, 16
    boundary = (1 + a * n) * congested_drain / (a * m) + 1
    kw = dict(
        shared=Fraction(14_270_208),
        pause_margin=Fraction(56_840),
        alpha=a,
        congested=n,
        bursting=m,
        congested_drain=congested_drain,
    )
    step = Fraction(1, 10**9)
    case_below, below = first_pause_time(load=boundary - step, **kw)
    case_above, above = first_pause_time(load=boundary + step, **kw)
    assert (case_below, case_above) == (1, 2)
    assert below is not None and above is not None
    assert float(below) == pytest.approx(float(above), rel=1e-6)


def test_dsh_burst_does_not_depend_on_queues_but_static_does() -> None:
    # DSH "Remarks": DSH's burst absorption is irrespective of N_q; SIH's falls with N_q.
    kw = dict(rate="100Gbps", delay="2us", buffer="16MiB", ports=32, alpha="1/16", load=2)
    few, many = advise.dsh_burst(queues=2, **kw), advise.dsh_burst(queues=8, **kw)
    assert few.dsh_duration == many.dsh_duration
    assert few.sih_duration > many.sih_duration


def test_dsh_burst_when_static_headroom_fills_the_buffer() -> None:
    # 8 queues x 32 ports x eta = 14.55 MB > 12 MiB: static headroom leaves no shared buffer.
    r = advise.dsh_burst(
        chip="tomahawk", buffer="12MiB", delay="2us", queues=8, alpha="1/16", load=2
    )
    assert r.sih_duration == 0
    assert r.dsh_duration > 0
    assert any("exceeds the buffer" in note for note in r.notes)


# --------------------------------------------------------------- worked examples: BCC


def test_bcc_parameters_of_section_v_b() -> None:
    # BCC section V-B: B_R ~1.6MB, Kmax ~2.6MB, Kmin ~1.8MB, Pmax 10%.
    r = advise.bcc(
        rate="100Gbps",
        rtt="80us",
        lam=0.72,
        pool="3MB",
        alpha=4,
        reserved="128KB",
        ports=8,
        h="8us",
    )
    assert r.b_r == 1_592_000
    assert r.kmax == 2_602_000
    assert r.kmin == 1_802_000
    assert round(r.b_r / 1e6, 1) == 1.6
    assert round(r.kmax / 1e6, 1) == 2.6
    assert round(r.kmin / 1e6, 1) == 1.8
    assert r.pmax == 0.1
    d = r.to_dict()
    assert {"kmin", "kmax", "pmax", "b_r"} <= d.keys()
    assert d["formulas"]["kmax"] == "Kmax = B - B_R / alpha_min"


def test_bcc_uses_the_smallest_alpha() -> None:
    # BCC section IV-D: with several alphas, Kmax = B - B_R / alpha_min.
    kw = dict(rate="100Gbps", rtt="80us", pool="3MB", reserved="128KB", ports=8)
    assert advise.bcc(alpha=[4, 1, 2], **kw).kmax == advise.bcc(alpha=1, **kw).kmax
    assert advise.bcc(alpha="4,1", **kw).kmax == 3_000_000 - 1_592_000


def test_bcc_section_ii_c_per_port_demand() -> None:
    # BCC section II-C: 100Gbps x 80us = 1MB per port for ECN* (lambda = 1).
    assert advise.ecn(rate="100Gbps", rtt="80us", transport="ecn_star").k == 1_000_000
    # Section IV-C: C x RTT x (1 + lambda) = 1720KB with lambda = 0.72.
    assert advise.ecn(rate="100Gbps", rtt="80us").per_port_buffer == 1_720_000


def test_bcc_with_tomahawk_preset_is_close_to_the_paper_pool() -> None:
    # 4 MiB per MMU minus 8 x 128KB of reserve ~ the testbed's "~3MB shared" (section V-A).
    r = advise.bcc(chip="tomahawk", rtt="80us", alpha=4, reserved="128KB")
    assert r.inputs["pool"] == 4 * MiB - 8 * 128_000
    assert r.inputs["ports"] == 8


# ----------------------------------------------------------------- dynamic threshold


def test_dt_share_of_bcc_testbed() -> None:
    # BCC section V-A: alpha = 1, 3MB shared, one congested port: "P6 can get almost half of
    # the total shared buffer space ... which is ~1.5MB".
    r = advise.dt(pool="3MB", alpha=1, active=1)
    assert r.per_queue == 1_500_000
    assert r.share == 0.5


def test_dt_share_formula() -> None:
    # alpha * B / (1 + M * alpha); BCC section III-C's pool: 3MB, alpha 4, 8 congested ports.
    r = advise.dt(pool="3MB", alpha=4, active=8, reserved="128KB")
    assert r.per_queue == pytest.approx(4 * 3e6 / 33)
    assert r.per_queue_with_reserved == pytest.approx(128_000 + 4 * 3e6 / 33)
    assert r.total_used + r.free == pytest.approx(3e6)


# -------------------------------------------------------------- LossPass: one loss's cost


def test_loss_impact_matches_losspass_fig2() -> None:
    # Section II-A: w_c = 1, RTO_min = 5 ms, E[T] = 250 us: "E[T'] = 21 E[T]", "a single
    # loss can slow down the small flow by 22x", and E[I_1000] = 0.021.
    one = advise.loss_impact(packets=1, rto_min="5ms", rtt="250us")
    assert one.loss_delay == pytest.approx(21 * 250e-6)
    assert one.impact == pytest.approx(21)
    assert one.slowdown == pytest.approx(22)
    assert advise.loss_impact(packets=1000, rto_min="5ms", rtt="250us").impact == pytest.approx(
        0.021
    )
    # A larger window shortens the loss-free FCT, so the same loss weighs more.
    assert advise.loss_impact(
        packets=1000, rto_min="5ms", rtt="250us", window=10
    ).impact == pytest.approx(0.21)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"packets": 0, "rto_min": "5ms", "rtt": "250us"}, "packets"),
        ({"packets": 1, "rtt": "250us"}, "rto_min"),
        ({"packets": 1, "rto_min": "5ms", "rtt": "250us", "window": 0}, "window"),
    ],
)
def test_loss_impact_refuses_bad_input(kwargs: dict, param: str) -> None:
    with pytest.raises(advise.AdviseError, match=param):
        advise.loss_impact(**kwargs)


# -------------------------------------------------------------- white paper: tail drop, ecn


def test_tail_drop_bdp_and_sqrt_n() -> None:
    r = advise.tail_drop(rate="10Gbps", rtt="100us", flows=100, sync="desync")
    assert r.bdp == 125_000
    assert r.buffer_desynchronized == pytest.approx(12_500)
    assert r.buffer == pytest.approx(12_500)
    # Datacenter default (section 2.3): synchronized -> 1 BDP.
    assert advise.tail_drop(rate="10Gbps", rtt="100us", flows=100).buffer == 125_000


def test_ecn_buffer_3_bdp_and_mice_threshold() -> None:
    r = advise.ecn(rate="100Gbps", rtt="80us", flows=48, mix="mice")
    assert r.buffer == 3 * r.bdp  # section 4.3
    # Section 4.2: "15%BDP (about BDP/sqrt(48))".
    assert r.recommended_k / r.bdp == pytest.approx(1 / math.sqrt(48))
    assert round(r.recommended_k / r.bdp, 2) == 0.14
    assert r.buffer_for_k == pytest.approx(2 * r.recommended_k + r.bdp)
    el = advise.ecn(rate="100Gbps", rtt="80us", mix="elephant")
    assert el.recommended_k == el.bdp
    assert el.buffer_for_k == el.buffer
    # DCTCP: K > C*RTT/7.
    assert r.k_min == pytest.approx(1e6 / 7)


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda: advise.headroom(delay="2us"), "rate"),
        (lambda: advise.dt(pool="3MB", alpha=0), "alpha"),
        (lambda: advise.dt(pool="3MB", alpha=-1), "alpha"),
        (lambda: advise.bcc(rate="100Gbps", rtt="80us", pool="3MB", ports=8), "alpha"),
        (lambda: advise.headroom(chip="nonesuch", delay="2us"), "chip"),
        (lambda: advise.ecn(rate="1Gbps", rtt="1us", transport="cubic"), "transport"),
        (lambda: advise.dsh_burst(chip="tomahawk", delay="2us", alpha=1, load=1), "load"),
        (lambda: advise.headroom(rate="100Gbps", delay="2us", mtu=1e30), "mtu"),
        (lambda: advise.headroom(rate="100Gbps", delay="2us", mtu=float("nan")), "mtu"),
        (lambda: advise.headroom(rate=float("inf"), delay="2us"), "rate"),
        (lambda: advise.bdp(rate=0, rtt="1us"), "rate"),
        (lambda: advise.dt(pool="3MB", alpha=1, reserved="4MB"), "reserved"),
        (lambda: advise.dt(pool="3MB", alpha=[4, -1]), "alpha"),
        (lambda: advise.headroom(chip="tomahawk", delay="2us", ports=33), "ports"),
    ],
)
def test_bad_input_names_the_parameter(call, param: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AdviseError) as err:
        call()
    assert err.value.param == param


def test_unusual_input_is_a_python_warning() -> None:
    with pytest.warns(advise.AdviseWarning, match="did you mean us"):
        advise.bdp(rate="100Gbps", rtt="80ms")


def test_chip_presets_cover_bcc_table_i_and_cite_sources() -> None:
    keys = set(advise.CHIPS)
    assert {
        "bcm56538",
        "trident-plus",
        "trident2",
        "tomahawk",
        "tofino",
        "trident3",
        "tomahawk3",
        "tomahawk4",
    } <= keys
    for chip in advise.CHIPS.values():
        assert {"ports", "buffer"} <= chip.sources.keys()
    # BCC Table I "buffer per port per Gbps": Trident+ 19.2KB, Tomahawk 5.12KB (KB = KiB here).
    assert advise.get_chip("Trident+").buffer_per_port_per_gbps / 1024 == pytest.approx(19.2)
    assert advise.get_chip("tomahawk").buffer_per_port_per_gbps / 1024 == pytest.approx(5.12)
    assert advise.get_chip("Trident II").buffer_per_port / 1024 == 384
    assert advise.get_chip("TH").mmus == 4


# -------------------------------------------------------------------------- check


def _rules(report: advise.CheckReport) -> set[str]:
    return {f.rule for f in report.findings}


BCC_STAR = """\
[topology]
kind = "star"
hosts = 32
link_rate = "100Gbps"
link_delay = "10us"

[switch.marking.cutoff]
k = "720KB"

[workload]
pattern = "many_to_few"
senders = "0-23"
receivers = "24-31"
flows = 10
"""


def test_check_flags_the_bcc_overflow_case() -> None:
    # BCC section III-C: 8 receivers on one 3MB pool with K = 720KB each.
    report = advise.check(BCC_STAR)
    assert {"ecn-sum-over-pool", "ecn-above-dt-share"} <= _rules(report)
    assert report.context["congested_ports_per_pool"] == 8
    for f in report.findings:
        assert f.source  # every warning cites its rule


def test_check_counts_only_receivers_in_a_pool() -> None:
    # One receiver: no two ports of a pool congest together.
    report = advise.check(BCC_STAR, set=['workload.receivers="24"'])
    assert report.context["congested_ports_per_pool"] == 1
    assert "ecn-sum-over-pool" not in _rules(report)


def test_check_applies_overrides_and_flags_small_k() -> None:
    report = advise.check(BCC_STAR, set=["switch.marking.cutoff.k=10KB"])
    assert report.context["k"] == 10_000
    assert "k-below-transport-minimum" in _rules(report)
    assert "ecn-sum-over-pool" not in _rules(report)


def test_check_red_thresholds_and_non_ecn_transport() -> None:
    red = advise.check(TINY, set=["switch.marking.red.kmin=5KB", "switch.marking.red.kmax=2MB"])
    assert "k-below-transport-minimum" in _rules(red)
    drop = advise.check(TINY, set=["transport.cc=newreno", "switch.marking.cutoff.k=5KB"])
    assert "drop-threshold-below-bdp" in _rules(drop)


def test_check_tiny_scenario_is_clean() -> None:
    assert advise.check(TINY).warnings == []


def test_check_reads_a_topology_file(tmp_path: Path) -> None:
    """The advisor checks the network the core reads from a file: hosts 0 and 1 on switch
    3, host 2 on switch 4, the switches joined by 40 Gbps of 5 us."""
    topology = tmp_path / "topology.txt"
    topology.write_text(
        "5 2 4\n3 4\n0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0\n2 4 10Gbps 1us 0\n3 4 40Gbps 5us 0\n"
    )
    scenario = {
        "topology": {"kind": "file", "path": str(topology)},
        "workload": {"pattern": "many_to_few", "senders": "2", "receivers": "0-1", "flows": 10},
    }
    report = advise.check(scenario)
    assert report.context["link_rate"] == 10_000_000_000
    # Switch 3's ports: hosts 0 and 1 (both receive) and switch 4.
    assert report.context["congested_ports_per_pool"] == 3
    # Host 0 to host 2: two host links and the switches' link, each 2 x delay + 1,578 B
    # (a 1,514 B segment and a 64 B ACK) serialized.
    host_link, uplink = 2e-6 + 1578 * 8 / 10e9, 10e-6 + 1578 * 8 / 40e9
    assert report.context["rtt"] == pytest.approx(2 * host_link + uplink, rel=1e-12)


#: A leaf-spine of 2 hosts per leaf (hosts first, then the leaves, then the spines).
LEAF_SPINE = {"kind": "leaf_spine", "spines": 2, "hosts_per_leaf": 2, "link_delay": "1us"}


def test_check_honours_failed_links() -> None:
    """A failed link is no port, and routes go around it."""

    def context(leaves: int, failed: list[list[int]], **workload: object) -> dict[str, Any]:
        topology = {**LEAF_SPINE, "leaves": leaves, "failed_links": failed}
        scenario = {"topology": topology, "workload": {"flows": 10, **workload}}
        return advise.check(scenario).context

    # Receivers 0 and 1 on leaf 0 (node 4): its 2 host ports and 2 uplinks can congest,
    # one uplink fewer once the link to spine 0 (node 6) is down.
    to_leaf_0 = {"pattern": "many_to_few", "senders": "2-3", "receivers": "0-1"}
    assert context(2, [], **to_leaf_0)["congested_ports_per_pool"] == 4
    assert context(2, [[4, 6]], **to_leaf_0)["congested_ports_per_pool"] == 3
    # Three leaves (nodes 6-8), two spines (9, 10): with leaf 0 cut off spine 0 and leaf 1
    # off spine 1, leaf 0 reaches leaf 1 by spine 1, leaf 2 and spine 0, six links where
    # there were four, each 2 x 1 us + 1,578 B at 100 Gbps.
    link = 2e-6 + 1578 * 8 / 100e9
    assert context(3, [])["rtt"] == pytest.approx(4 * link, rel=1e-12)
    assert context(3, [[6, 9], [7, 10]])["rtt"] == pytest.approx(6 * link, rel=1e-12)


#: The README's `shoal.run` example.
README_EXAMPLE = {"topology": {"kind": "star", "hosts": 8}, "workload": {"flows": 100}}


@pytest.mark.parametrize("cc", ["dctcp", "ecn_star"])
def test_an_ecn_transport_without_marking_gets_the_advisors_k(cc: str) -> None:
    """The core derives K = lambda x C x RTT for an ECN transport given no marking rule;
    the advisor computes the same rule with its own formula (exact fractions) from the
    RTT the core computes."""
    scenario = {**README_EXAMPLE, "transport": {"cc": cc}}
    resolved = json.loads(_core.resolve(load_scenario(scenario).to_json())[0])
    k_core = _core.parse_bytes(resolved["switch"]["marking"]["cutoff"]["k"])
    ctx = build_context(resolved)
    k_advisor = advise.ecn(rate="100Gbps", rtt=ctx.rtt, transport=cc).k
    assert abs(k_core - k_advisor) <= 0.5
    assert advise.check(scenario).warnings == []


def test_pfc_rule_reads_the_flow_control_table() -> None:
    """The rule reads the schema's `[switch.flow_control] kind = "pfc"`, not the
    `switch.pfc` of a schema that never was."""
    assert pfc_headroom in RULES
    resolved = json.loads(_core.resolve(load_scenario(BCC_STAR).to_json())[0])
    ctx = build_context(resolved)
    assert pfc_headroom(ctx) == []  # lossy
    ctx.scenario["switch"]["pfc"] = {"headroom": "20KB"}
    assert pfc_headroom(ctx) == []  # not a key of the schema
    scenario = BCC_STAR + '[switch.flow_control]\nkind = "pfc"\nheadroom = "20KB"\n'
    resolved = json.loads(_core.resolve(load_scenario(scenario).to_json())[0])
    found = pfc_headroom(build_context(resolved))
    assert [f.rule for f in found] == ["pfc-headroom-below-eta"]
    # 100Gbps, 10us, 1514B: eta = 2*(125000 + 1514) + 3840.
    assert "256,868 B" in found[0].message
    scenario = scenario.replace('"20KB"', '"300KB"')
    assert "pfc-headroom-below-eta" not in {f.rule for f in advise.check(scenario).findings}
