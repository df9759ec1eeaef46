"""The buffer white paper's experiments (``shoal reproduce whitepaper/...``): every
experiment resolves, sec2 runs end to end in quick mode, and its numbers are checked
against the synchronized-sawtooth theory and the advisor's BDP."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from shoal.reproduce import find, reproduce
from shoal.reproduce.whitepaper import slow_start_peak, sync_utilization

WHITEPAPER = ["whitepaper/sec2", "whitepaper/sec3", "whitepaper/sec4", "whitepaper/sec5"]


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
