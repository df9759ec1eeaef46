"""The BFC paper's Fig. 5 baselines (``shoal reproduce bfc/fig5``) end to end, checked
against what the harness's metric and the topology force, not against Shoal's output:
the harness's ideal is a lone flow's FCT up to a partial packet (test_bfc_harness), so
no flow may beat it by more than that, and an almost idle network leaves the smallest
flows at their ideal."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shoal._sweep import load_sweep, resolve_runs
from shoal.reproduce import Experiment, find, reproduce
from shoal.reproduce.bfc import BINS, harness_packets, lower_bound_ratio, slowdown
from shoal.store import Store

SCHEMES = {"dcqcn", "dcqcn_win", "dcqcn_win_sfq", "hpcc", "bfc", "ideal_fq"}
RACK = 16  # T1: 16 hosts a ToR
INCAST_SENDERS, INCAST_BYTES, INCAST_GAP_MS = 100, 200_000, 0.5


@pytest.fixture(scope="module")
def fig5(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path]:
    store = tmp_path_factory.mktemp("bfc-fig5")
    runs = reproduce("bfc/fig5", mode="quick", store=store, jobs=2, progress=False).runs
    assert (runs["status"] == "ok").all(), runs[["scheme", "error"]]
    return runs, store


def _flows(store: Path, key: str) -> pd.DataFrame:
    return pd.read_parquet(Store(store).run_dir(key) / "flows.parquet")


def test_every_baseline_has_a_p99_in_every_bin_it_has_flows(
    fig5: tuple[pd.DataFrame, Path],
) -> None:
    """Both workloads for each of the six schemes; per bin, a p99 exactly where the
    bin has flows, the bins holding every finished background flow, every one finished;
    the incast is 100 x 200 KB every 500 us and none of it is in a bin."""
    runs, store = fig5
    assert {(s, w) for s, w in zip(runs["scheme"], runs["workload"], strict=True)} == {
        (s, w) for s in SCHEMES for w in BINS
    }
    for _, row in runs.iterrows():
        bins = range(1, len(BINS[row["workload"]]) + 2)
        counts = np.array([row[f"flows_bin{b}"] for b in bins])
        p99 = np.array([row[f"p99_bin{b}"] for b in bins], dtype=float)
        assert (np.isnan(p99) == (counts == 0)).all(), row["scheme"]
        assert counts[0] > 1000  # the smallest bin is the crowded one in both workloads
        assert counts.sum() == row["background_flows"] and row["unfinished"] == 0
        flows = _flows(store, row["key"])
        incast = flows[flows["query"] >= 0]
        duration_ms = float(str(row["workload.extra[0].duration"]).removesuffix("ms"))
        rounds = int(duration_ms / INCAST_GAP_MS + 1e-9)
        assert incast["query"].nunique() in (rounds, rounds - 1)  # the last may fall at the end
        assert (incast["bytes"] == INCAST_BYTES).all()
        assert (incast.groupby("query")["src"].nunique() == INCAST_SENDERS).all()


def test_no_flow_beats_its_lone_fct_and_slowdowns_match_the_formula(
    fig5: tuple[pd.DataFrame, Path],
) -> None:
    """Every background flow's harness slowdown is at least a lone flow's on T1 (the
    bound of lower_bound_ratio: one packet, never below 1; at worst 1.5% below for a
    partial last packet); the lossless schemes and Ideal-FQ's 1 GiB lose nothing; the
    runs table's p99 of the smallest bin is the harness p99 recomputed here."""
    runs, store = fig5
    assert (runs["packets_dropped"] == 0).all()
    for _, row in runs.iterrows():
        flows = _flows(store, row["key"])
        done = flows[(flows["query"] < 0) & flows["fct_ns"].notna()]
        same = (done["src"] // RACK) == (done["dst"] // RACK)
        ratio = slowdown(done["fct_ns"], done["bytes"], same)
        # HPCC's packets carry 42 B more (INT); the bound with the plain headers is lower.
        bound = lower_bound_ratio(done["bytes"], same)
        assert (ratio >= bound * (1 - 1e-9)).all(), row["scheme"]
        single = harness_packets(done["bytes"]) == 1
        assert ratio[single].min() >= 1.0, row["scheme"]
        first = np.sort(ratio[harness_packets(done["bytes"]) <= BINS[row["workload"]][0]])
        assert row["p99_bin1"] == first[int(0.99 * len(first))]


def _idle(exp: Experiment) -> Experiment:
    """``exp`` at 1% background load on Google sizes for 1 ms, and an incast whose first
    round would come after the window (no incast at all)."""
    exp = copy.deepcopy(exp)
    exp.sweep.pop("labels", None)
    exp.modes["quick"] = {
        "zip": {
            "workload.cdf": ["homa_w3.cdf"],
            "workload.duration": ["1ms"],
            "workload.extra[0].duration": ["1ms"],
        },
        "set": {"workload.load": 0.01, "workload.extra[0].load": 0.001},
        "seeds": [1],
    }
    return exp


def test_on_an_idle_network_the_smallest_flows_meet_their_ideal(tmp_path: Path) -> None:
    """At 1% load and no incast, a one-packet flow almost never queues: its lone FCT is
    its ideal plus 36 B of headers per hop and the ACK's serialization (0.3% of ~8 us),
    so every scheme's p99 of the <=1-packet bin lies in [1, 1.05]."""
    runs = reproduce(_idle(find("bfc/fig5")), store=tmp_path, jobs=2, progress=False).runs
    assert (runs["status"] == "ok").all() and set(runs["scheme"]) == SCHEMES
    assert (runs["incast_flows"] == 0).all() and (runs["background_flows"] > 1000).all()
    assert runs["p99_bin1"].between(1.0, 1.05).all(), runs[["scheme", "p99_bin1"]]


@pytest.mark.parametrize("exp_id", ["bfc/fig5", "bfc/fig5c"])
def test_quick_and_full_differ_only_in_the_arrival_window(exp_id: str) -> None:
    """Full mode is the harness's 50 ms of arrivals on the same T1 and schemes; quick
    keeps everything but the window; both resolve (resolving does not simulate)."""
    from shoal._sweep import load_sweep, resolve_runs

    exp = find(exp_id)
    quick, full = exp.sweep_spec("quick"), exp.sweep_spec("full")
    base = load_sweep(full).base  # an inline [scenario] or a base file (t1.toml)
    assert load_sweep(quick).base == base and quick["schemes"] == full["schemes"]
    workload = base["workload"]
    assert workload["duration"] == "50ms"
    assert all(extra["duration"] == "50ms" for extra in workload.get("extra", []))
    cdfs = full.get("zip", {}).get("workload.cdf", [workload["cdf"]])
    assert all(Path(c).is_file() for c in cdfs if c.endswith(".cdf"))
    for spec in (quick, full):
        runs = resolve_runs(load_sweep(spec))
        assert runs and all(r.error is None for r in runs), [r.error for r in runs if r.error]


def test_fig5c_has_no_incast_and_no_flow_beats_its_lone_fct(tmp_path: Path) -> None:
    """Google at 65% and no incast: the analysis finds no incast flow, every background
    flow is counted, and no run's smallest slowdown is below the lowest a lone flow can
    have (a 1,001 B flow in a rack: 1 - 63.6 / 4,240; test_bfc_harness)."""
    runs = reproduce("bfc/fig5c", store=tmp_path, jobs=2, progress=False).runs
    assert (runs["status"] == "ok").all() and set(runs["scheme"]) == SCHEMES
    assert (runs["incast_flows"] == 0).all() and (runs["workload"] == "Google").all()
    counts = runs[[f"flows_bin{b}" for b in range(1, 10)]].sum(axis=1)
    assert (counts == runs["background_flows"]).all() and (runs["unfinished"] == 0).all()
    assert (runs["min_slowdown"] >= 1 - 63.6 / 4240).all()


def test_analysis_refuses_a_workload_without_harness_bins(tmp_path: Path) -> None:
    """Web search has no bins in the harness: the error names the key and what is
    accepted, before any figure is drawn."""
    from shoal.reproduce import ExperimentError

    exp = _idle(find("bfc/fig5"))
    exp.modes["quick"]["zip"]["workload.cdf"] = ["websearch"]
    exp.modes["quick"]["set"]["workload.load"] = 0.001
    exp.sweep["schemes"] = {"dcqcn": exp.sweep["schemes"]["dcqcn"]}
    with pytest.raises(ExperimentError, match="workload.cdf 'websearch' has no harness size"):
        reproduce(exp, store=tmp_path, jobs=1, progress=False)


def test_fig6_runs_fig5a_under_fig5_s_schemes_with_occupancy_kept() -> None:
    """Fig. 6 is Fig. 5a's experiment: the same base, the same six schemes (copied, so
    checked equal here), Google only, and the occupancy window = the arrival window in
    both modes."""
    fig5, fig6 = find("bfc/fig5"), find("bfc/fig6")
    assert fig6.sweep["schemes"] == fig5.sweep["schemes"]
    assert fig6.sweep["base"] == fig5.sweep["base"] == "t1.toml"
    assert [Path(c).name for c in fig6.sweep["zip"]["workload.cdf"]] == ["homa_w3.cdf"]
    for mode in ("quick", "full"):
        spec = fig6.sweep_spec(mode)
        runs = resolve_runs(load_sweep(spec))
        for run in runs:
            assert run.error is None, run.error
            resolved = json.loads(run.resolved_json)
            assert resolved["run"]["occupancy_cdf"] is True
            assert resolved["run"]["occupancy_until"] == resolved["workload"]["duration"]
            assert resolved["workload"]["extra"][0]["duration"] == resolved["workload"]["duration"]


def test_fig2_scales_the_network_with_its_speed() -> None:
    """Fig. 2's speeds carry the same flows: arrival windows x speed, DCQCN's timers and
    the timeout x speed, and its rate steps / speed are the same at every speed, as are
    RED's thresholds (scaled by the core with the port's rate)."""
    from shoal.reproduce._units import rate_bps, time_s

    for mode in ("quick", "full"):
        runs = resolve_runs(load_sweep(find("bfc/fig2").sweep_spec(mode)))
        scaled: set[tuple[float, ...]] = set()
        for run in runs:
            assert run.error is None, run.error
            sc = json.loads(run.resolved_json)
            speed = rate_bps(sc["topology"]["link_rate"])
            assert rate_bps(sc["topology"]["uplink_rate"]) == speed
            cc = sc["rdma"]["cc"]
            times = [
                time_s(v) * speed
                for v in (
                    sc["workload"]["duration"],
                    sc["workload"]["extra"][0]["duration"],
                    sc["run"]["occupancy_until"],
                )
            ]
            timers = [
                time_s(cc[k]) * speed
                for k in ("alpha_interval", "decrease_interval", "increase_interval")
            ]
            rates = [rate_bps(cc[k]) / speed for k in ("rate_ai", "rate_hai", "min_rate")]
            assert times[0] == times[1] == times[2]
            scaled.add(
                tuple(
                    round(v, 6)
                    for v in [*times, *timers, time_s(sc["rdma"]["rto"]) * speed, *rates]
                )
            )
            assert sc["switch"]["marking"]["red"]["reference_rate"] in ("100Gbps", 100_000_000_000)
        assert len(runs) == 4 and len(scaled) == 1, scaled
