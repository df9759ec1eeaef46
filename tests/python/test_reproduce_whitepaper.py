"""The buffer white paper's experiments (``shoal reproduce whitepaper/...``): every
experiment resolves, sec2 runs end to end in quick mode, and its numbers are checked
against the synchronized-sawtooth theory and the advisor's BDP; sec4's single ECN flow
is checked against section 4.3's peak = w_e + h with w_e measured, and sec4 runs end
to end with every claim holding."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from shoal.reproduce import find, reproduce
from shoal.reproduce.whitepaper import (
    SEC3_PATH,
    Path_,
    jain,
    mathis_rate,
    slow_start_peak,
    slow_start_window,
    sync_utilization,
)

WHITEPAPER = [
    "whitepaper/sec2",
    "whitepaper/sec3",
    "whitepaper/sec4",
    "whitepaper/sec5",
    "whitepaper/mixed",
    "whitepaper/long",
    "whitepaper/burst",
    "whitepaper/clos",
]


@pytest.mark.parametrize("exp_id", WHITEPAPER)
@pytest.mark.parametrize("mode", ["quick", "full"])
def test_every_whitepaper_experiment_resolves(exp_id: str, mode: str) -> None:
    from shoal._sweep import load_sweep, resolve_runs

    exp = find(exp_id)
    runs = resolve_runs(load_sweep(exp.sweep_spec(mode)))
    assert runs and all(r.error is None for r in runs), [r.error for r in runs if r.error]
    if mode == "quick":
        assert len(runs) <= 16


def test_sync_utilization_theory() -> None:
    """1 BDP of buffer keeps synchronized AIMD flows at 100%; BDP/sqrt(120) does not."""
    assert sync_utilization(1.0, 1.0) == 1.0
    u = sync_utilization(1 / math.sqrt(120), 1.0)
    assert 0.78 < u < 0.84
    assert sync_utilization(0.0, 1.0) == pytest.approx(0.75)  # W from BDP/2 to BDP
    assert slow_start_peak(1.0, 1.0) == 3.0  # the paper's 3 BDP with h = 1 BDP


@pytest.fixture(scope="module")
def sec2_quick(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = tmp_path_factory.mktemp("sec2")
    return reproduce("whitepaper/sec2", mode="quick", jobs=2, store=store, progress=False)


def test_sec2_quick_end_to_end(sec2_quick) -> None:  # type: ignore[no-untyped-def]
    res = sec2_quick
    assert (res.runs["status"] == "ok").all()
    assert (res.out / "utilization.png").stat().st_size > 1000
    assert (Path(res.store) / "figures" / "util_time.png").stat().st_size > 1000
    assert all(c.text != "n/a" for c in res.claims)


def test_sec2_one_bdp_keeps_the_link_busy_sqrt_n_does_not(sec2_quick) -> None:  # type: ignore[no-untyped-def]
    """White paper 2.1/2.3: with 1 BDP of buffer synchronized NewReno flows keep the
    bottleneck at ~100% (theory: exactly 100%); with BDP/sqrt(n) the aggregate window
    falls below the BDP after every synchronized halving (theory ~81%), so the link
    underflows. The BDP is the advisor's C x RTT of the scenario's path."""
    import shoal

    runs = sec2_quick.runs.set_index("scheme")
    adv = shoal.advise.bdp(rate="10Gbps", rtt="1ms")
    assert runs.loc["b_1bdp", "bdp_bytes"] == pytest.approx(float(adv.bdp), rel=0.01)
    one, sqrt_n = runs.loc["b_1bdp"], runs.loc["b_sqrt_n"]
    assert one["util_theory"] == 1.0
    assert one["util_avg"] >= 0.95
    assert sqrt_n["util_avg"] < 0.95
    assert abs(sqrt_n["util_avg"] - sqrt_n["util_theory"]) < 0.1  # within 10 points
    assert runs.loc["b_half_bdp", "util_avg"] >= sqrt_n["util_avg"]


# ---------------------------------------------------------------- sec4 (section 4.3)


def _sec4_scenario(scheme: str) -> dict[str, Any]:
    """The resolved quick-mode scenario of a sec4 scheme."""
    from shoal._sweep import load_sweep, resolve_runs

    runs = resolve_runs(load_sweep(find("whitepaper/sec4").sweep_spec("quick")))
    run = next(r for r in runs if r.params["scheme"] == scheme)
    scenario: dict[str, Any] = json.loads(str(run.resolved_json))
    return scenario


def _bdp_pkts(sc: dict[str, Any]) -> float:
    t = sc["transport"]
    return Path_(sc).bdp_bytes / float(t["mss"] + t["header"])


@pytest.mark.parametrize(
    ("k", "init_cwnd"),
    [("1250KB", 10), ("1250KB", 2), ("1125KB", 10)],  # h = 1 BDP, 1 BDP, 0.9 BDP
)
def test_slow_start_peak_is_w_e_plus_h_when_the_pipe_is_full(k: str, init_cwnd: int) -> None:
    """Section 4.3 (Figs. 4-7/4-8): one ECN flow in slow start; w_e = its data in flight
    when the queue first reaches h. Until the echo of the first marked packet returns
    (its queueing behind h packets plus a base RTT later) the sender receives one ACK
    per packet time, w_e of them, and each adds one packet to the queue: peak = w_e + h.
    That needs a full pipe at t0 (w_e = h + BDP, the paper's bound met), which slow
    start reaches before the queue reaches h when h is close to 1 BDP."""
    sc = _sec4_scenario("ss_1bdp")
    sc["switch"]["marking"] = {"cutoff": {"k": k}}
    sc["transport"]["init_cwnd"] = init_cwnd
    m = slow_start_window(sc)
    assert m is not None
    bdp = _bdp_pkts(sc)
    # the precondition: in flight = the queue at t0 + a full pipe (one BDP, give or take
    # the packets between the sender and the switch)
    assert abs(m["w_e_pkts"] - (m["q0_pkts"] + bdp)) <= 2
    assert abs(m["peak_pkts"] - (m["w_e_pkts"] + m["h_pkts"])) <= 1


def test_dequeue_marking_takes_h_off_the_slow_start_peak() -> None:
    """Marking at dequeue marks the packet leaving the queue when it holds h, so the
    echo returns h packet times sooner than section 4.3 counts (its model marks the
    arriving packet): the sender gets h fewer ACKs and the peak is w_e, not w_e + h."""
    sc = _sec4_scenario("ss_1bdp")
    sc["switch"]["ecn"]["at"] = "dequeue"
    m = slow_start_window(sc)
    assert m is not None
    assert abs(m["peak_pkts"] - m["w_e_pkts"]) <= 1


def test_slow_start_peak_with_a_small_threshold_is_below_w_e_plus_h() -> None:
    """With h = 15% BDP the queue first reaches h in a slow-start round that keeps the
    bottleneck busy for less than a round trip (w_e < h + BDP): the queue drains before
    the next round, so the ACKs that follow t0 do not all add to one queue and the peak
    stays below w_e + h. It is 2h + 1: the next round's ACKs for the ~2h packets sent
    ahead of the first marked one arrive back to back and build the queue from empty
    until that packet's echo halves the window."""
    sc = _sec4_scenario("ss_15pct")
    m = slow_start_window(sc)
    assert m is not None
    h, w_e, peak = m["h_pkts"], m["w_e_pkts"], m["peak_pkts"]
    assert w_e < 0.5 * (h + _bdp_pkts(sc))  # the pipe is not full at t0
    assert peak < w_e + h - 10
    assert abs(peak - (2 * h + 1)) <= 1


@pytest.fixture(scope="module")
def sec4_quick(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = tmp_path_factory.mktemp("sec4")
    return reproduce("whitepaper/sec4", mode="quick", jobs=2, store=store, progress=False)


def test_sec4_quick_claims_hold(sec4_quick) -> None:  # type: ignore[no-untyped-def]
    """Every sec4 claim with an expectation holds in quick mode, including the single
    flow's |peak - (w_e + h)| <= 1 packet with w_e measured by the analysis."""
    res = sec4_quick
    assert (res.runs["status"] == "ok").all()
    checked = [c for c in res.claims if c.expect is not None]
    assert checked and all(c.holds for c in checked), [
        (c.what, c.text) for c in checked if not c.holds
    ]
    ss = res.runs.set_index("scheme").loc["ss_1bdp"]
    assert abs(ss["peak_pkts"] - (ss["w_e_pkts"] + ss["h_pkts"])) <= 1


# ---------------------------------------------------------------- sec3 (W15), theory, long, clos


def _resolved(exp_id: str, mode: str) -> list[Any]:
    from shoal._sweep import load_sweep, resolve_runs

    return resolve_runs(load_sweep(find(exp_id).sweep_spec(mode)))


def test_rto_20_schemes_set_the_initial_rto_too() -> None:
    """Fig. 3-16 compares RTOs of 200 and 20 ms. Every flow of the concurrent runs starts
    within one RTT and loses before its first RTT sample, so its first timeout is the
    initial RTO: a scheme that lowers only rto_min does not test the claim."""
    for mode in ("quick", "full"):
        for run in _resolved("whitepaper/sec3", mode):
            if not str(run.params["scheme"]).startswith("c_"):
                continue
            t = json.loads(str(run.resolved_json))["transport"]
            assert t["rto_init"] == t["rto_min"], (run.params["scheme"], t)


def test_concurrent_runs_differ_between_seeds() -> None:
    """The concurrent flows are drawn per seed (Poisson arrivals within 100 us), so two
    seeds give two different sets of flows, all within one base RTT."""
    from shoal import _core

    runs = [
        r for r in _resolved("whitepaper/sec3", "full") if r.params["scheme"] == "c_20MB_rto200"
    ]
    starts = []
    for run in sorted(runs, key=lambda r: r.params["seed"])[:2]:
        sim = _core.Simulation(str(run.resolved_json))
        sim.run(1)  # the flows exist from t = 0 on
        flows = sim.flows()
        assert flows["start_ns"].max() < 100_000
        starts.append(sorted(flows["start_ns"].tolist()))
    assert len(starts) == 2 and starts[0] != starts[1]


def test_mathis_gives_the_papers_35_percent_on_the_sec3_path(tmp_path: Path) -> None:
    """Fig. 3-2's pair (0.2% loss, 35% throughput loss at 50% load) is one Reno flow
    capped by the Mathis law: MSS/RTT x sqrt(3/2)/sqrt(p) ~ 3.2 Gbps at RTT ~100 us,
    against the 5 Gbps the load asks."""
    rtt = Path_(SEC3_PATH).rtt_s
    assert 95e-6 < rtt < 110e-6
    rate = mathis_rate(0.002, rtt)
    assert rate == pytest.approx(1460 * 8 / rtt * math.sqrt(1.5 / 0.002))
    assert abs((1 - rate / 5e9) - 0.35) < 0.05
    res = reproduce("whitepaper/theory", mode="quick", jobs=1, progress=False, store=tmp_path)
    loss = res.runs.set_index("scheme").loc["mathis_50", "throughput_loss"]
    assert loss == pytest.approx(1 - rate / 5e9)
    with pytest.raises(ValueError, match="loss"):
        mathis_rate(0.0, rtt)


def test_jain_index_bounds() -> None:
    assert jain([5, 5, 5, 5]) == pytest.approx(1.0)
    assert jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain([]) is None


@pytest.fixture(scope="module")
def clos_quick(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = tmp_path_factory.mktemp("clos")
    return reproduce("whitepaper/clos", mode="quick", jobs=1, store=store, progress=False)


def test_clos_congestion_moves_to_the_spine_at_the_capacity_crossover(clos_quick) -> None:  # type: ignore[no-untyped-def]
    """Section 3.3: the leaf's host ports congest while n x 10G < 2 spines x 40G, the
    spines' ports to that leaf from n = 8 on (the bandwidth-pipe model; at n = 8 the
    capacities are equal and the queues of both may grow)."""
    runs = clos_quick.runs.set_index("scheme")
    n_star = 2 * 40 / 10
    for scheme, row in runs.iterrows():
        n = row["receivers_n"]
        assert n == int(str(scheme).split("_")[1])
        if n < n_star:
            assert row["spine_queue"] < 0.1 * row["leaf_queue"], scheme
        elif n > n_star:
            assert row["leaf_queue"] < 0.1 * row["spine_queue"], scheme
        else:  # equal capacities: ECMP's uneven split overloads a spine port first
            assert row["spine_queue"] > row["leaf_queue"], scheme
    assert runs["crossover_n"].iloc[0] == n_star


def test_long_two_flows_follow_the_synchronized_sawtooth(tmp_path: Path) -> None:
    """Two long-lived NewReno flows from t = 0 stay synchronized: their throughput loss
    through a 1/4 BDP buffer is the sawtooth's 1 - sync_utilization(BDP/4) (~11%)."""
    res = reproduce("whitepaper/long", mode="quick", jobs=1, store=tmp_path, progress=False)
    row = res.runs.set_index("scheme").loc["n_2"]
    assert row["theory_loss"] == pytest.approx(1 - sync_utilization(0.25, 1.0), rel=0.02)
    assert abs(row["throughput_loss"] - row["theory_loss"]) < 0.04
