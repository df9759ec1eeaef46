"""shoal.analysis against calculations made here by hand, never against Shoal's output."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shoal import analysis


def test_buckets_split_at_the_bounds_inclusive_below() -> None:
    masks = analysis.bucket_masks([1, 100_000, 100_001, 10_000_000, 10_000_001])
    assert masks["small"].tolist() == [True, True, False, False, False]
    assert masks["medium"].tolist() == [False, False, True, True, False]
    assert masks["large"].tolist() == [False, False, False, False, True]
    assert masks["all"].all()


def test_bucket_stats_by_hand() -> None:
    # Small: 4 flows, one unfinished (NaN); medium: 1 flow; large: none.
    bytes_ = [10, 20, 30, 40, 200_000]
    fct = [100.0, 300.0, math.nan, 200.0, 1000.0]
    ideal = [50.0, 100.0, 10.0, 100.0, 500.0]
    slowdown = [f / i for f, i in zip(fct, ideal, strict=True)]
    stats = analysis.bucket_stats(bytes_, fct, slowdown, percentiles=(50, 99))
    small = stats["small"]
    assert small["count"] == 4 and small["finished"] == 3
    assert small["mean_fct_ns"] == pytest.approx(200.0)
    assert small["median_fct_ns"] == 200.0
    # Linear interpolation over 100, 200, 300: rank 0.99 x 2 = 1.98.
    assert small["p99_fct_ns"] == pytest.approx(200 + 0.98 * 100)
    # Slowdowns 2, 3, 2: mean 7/3, median 2.
    assert small["mean_slowdown"] == pytest.approx(7 / 3)
    assert small["p50_slowdown"] == pytest.approx(2.0)
    assert stats["medium"]["p99_slowdown"] == pytest.approx(2.0)
    large = stats["large"]
    assert large["count"] == 0 and large["mean_fct_ns"] is None and large["p50_slowdown"] is None
    assert stats["all"]["count"] == 5 and stats["all"]["finished"] == 4
    assert stats["all"]["mean_fct_ns"] == pytest.approx(400.0)
    assert list(stats) == list(analysis.BUCKETS)


def test_bucket_stats_take_finished_and_bounds_as_given() -> None:
    # A flow marked unfinished is left out even with an FCT; bounds move the buckets.
    flows = pd.DataFrame({"bytes": [5, 15, 25], "fct_ns": [1.0, 2.0, 3.0]})
    stats = analysis.bucket_stats(
        flows["bytes"], flows["fct_ns"], finished=[True, False, True], bounds=(10, 20)
    )
    assert [stats[b]["finished"] for b in ("small", "medium", "large")] == [1, 0, 1]
    assert stats["medium"]["count"] == 1 and stats["medium"]["mean_fct_ns"] is None
    assert "mean_slowdown" not in stats["all"]
    assert stats["all"]["p95_fct_ns"] == pytest.approx(np.percentile([1.0, 3.0], 95))


@pytest.mark.parametrize(
    ("value", "expect", "paper", "effect", "judged"),
    [
        (1.5, "> 1", 1.8, "value", analysis.HOLDS),  # within 2x
        (5.0, "> 1", 1.8, "value", analysis.DIRECTION_ONLY),  # 2.8x the paper's
        (0.5, "> 1", 1.8, "value", analysis.FAILS),
        (0.7, None, 0.4, "reduction", analysis.HOLDS),  # 30% lower vs 60%: half
        (0.9, None, 0.4, "reduction", analysis.DIRECTION_ONLY),  # 10% vs 60%
        (1.1, None, 0.4, "reduction", analysis.FAILS),  # higher, not lower
    ],
)
def test_verdict_rule(value: float, expect: str | None, paper: float, effect: str, judged: str):
    assert analysis.verdict(value, expect, paper, effect)[2] == judged


def test_claims_on_a_runs_table() -> None:
    runs = pd.DataFrame(
        {
            "status": ["ok"] * 4 + ["failed"],
            "scheme": ["a", "a", "b", "b", "a"],
            "load": [0.5, 0.9, 0.5, 0.9, 0.9],
            "fct": [10.0, 30.0, 10.0, 20.0, 1e9],
        }
    )
    claims = [
        {
            "what": "a over b at the highest load",
            "metric": "fct",
            "where": {"scheme": "a", "load": "max"},
            "ratio_to": {"scheme": "b"},
            "format": "ratio",
            "expect": "> 1",
            "paper_value": 2.0,
        },
        {
            "what": "largest ratio",
            "metric": "fct",
            "where": {"scheme": "a"},
            "ratio_to": {"scheme": "b"},
            "best_over": "load",
            "effect": "increase",
            "paper_value": 1.5,
        },
    ]
    first, best = analysis.evaluate_claims(claims, runs)
    assert first.shoal == pytest.approx(1.5) and first.text == "1.5x"
    assert first.factor == pytest.approx(0.75) and first.verdict == analysis.HOLDS
    assert best.shoal == pytest.approx(1.5) and best.text.endswith("(load 0.9)")
    with pytest.raises(analysis.ClaimError, match="no column 'nope'"):
        analysis.evaluate_claims([{"what": "x", "metric": "fct", "where": {"nope": 1}}], runs)


def test_pause_totals_from_a_summary() -> None:
    summary = {"pfc": {"pause_frames_sent": 7, "paused_ns": 2_500_000}}
    assert analysis.pause_totals(summary) == {"pauses": 7.0, "paused_ms": 2.5}
    assert analysis.pause_totals({"pfc": None}) == {"pauses": 0.0, "paused_ms": 0.0}


def test_a_link_is_paused_while_any_of_its_classes_is() -> None:
    # Class 1 paused 10-50, class 2 paused 30-70: the link is paused 10-70 (60 ns); in
    # the window 0-40 that is 30 ns. A repeated PAUSE changes nothing.
    log = pd.DataFrame(
        {
            "time_ns": [10.0, 20.0, 30.0, 50.0, 70.0],
            "node_kind": ["switch"] * 5,
            "node": [3] * 5,
            "port": [1] * 5,
            "class": [1, 1, 2, 1, 2],
            "pause": [True, True, True, False, False],
        }
    )
    assert analysis.paused_ns_by_link(log, 0.0, 100.0)[("switch", 3, 1)] == 60.0
    assert analysis.paused_ns_by_link(log, 0.0, 40.0)[("switch", 3, 1)] == 30.0


def test_occupancy_quantiles_are_bucket_edges_of_the_pooled_time() -> None:
    # Two pools, each 100 ns: together 0-99 B for 120 ns, 100-199 B for 60 ns,
    # 200-299 B for 20 ns. CDF at the edges: 0.6, 0.9, 1.0.
    occ = pd.DataFrame(
        {
            "switch": [0, 0, 1, 1],
            "pool": [0, 0, 0, 0],
            "min_bytes": [0, 100, 0, 200],
            "max_bytes": [99, 199, 99, 299],
            "time_ns": [40.0, 60.0, 80.0, 20.0],
        }
    )
    pooled = analysis.pooled_occupancy(occ)
    assert pooled["cdf"].tolist() == pytest.approx([0.6, 0.9, 1.0])
    assert analysis.pooled_quantile(pooled, 0.5) == 99
    assert analysis.pooled_quantile(pooled, 0.9) == 199
    assert analysis.time_at_least(pooled, 100) == pytest.approx(0.4)


def test_byte_fraction_of_a_uniform_size_distribution() -> None:
    """Sizes uniform on [0, 100] B: flows up to x carry (x^2 / 2) / (100^2 / 2) of the
    bytes; a point mass (a vertical step of the CDF) carries its size times its mass."""
    from shoal.analysis import byte_fraction_upto

    uniform = pd.DataFrame({"bytes": [0.0, 100.0], "cdf": [0.0, 1.0]})
    assert byte_fraction_upto(uniform, 50) == pytest.approx(0.25)
    assert byte_fraction_upto(uniform, 100) == pytest.approx(1.0)
    # half the flows are exactly 10 B, half exactly 90 B: 10 / (10 + 90) of the bytes
    two_sizes = pd.DataFrame({"bytes": [10.0, 10.0, 90.0, 90.0], "cdf": [0.0, 0.5, 0.5, 1.0]})
    assert byte_fraction_upto(two_sizes, 50) == pytest.approx(0.1)


def test_flow_size_cdf_reads_built_in_names_and_files(tmp_path: Path) -> None:
    from shoal.analysis import flow_size_cdf

    web = flow_size_cdf("websearch")
    assert web["cdf"].iloc[-1] == pytest.approx(1.0)
    assert (web["bytes"].diff().dropna() >= 0).all()
    path = tmp_path / "two.cdf"
    path.write_text("# a comment\n0 0\n100 100\n")
    assert flow_size_cdf(path)["bytes"].tolist() == [0.0, 100.0]
    with pytest.raises(ValueError, match="neither a built-in CDF"):
        flow_size_cdf(tmp_path / "missing.cdf")
