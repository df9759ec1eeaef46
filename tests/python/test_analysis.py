"""shoal.analysis against calculations made here by hand, never against Shoal's output."""

from __future__ import annotations

import math

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
