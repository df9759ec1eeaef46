"""The BFC harness's metric (shoal.reproduce.bfc) against the authors' formula worked by
hand (experiments/bfc/README.md; script_updated.py): the ideal FCT, the packetization, the size
bins, the p99 and the per-bin table on synthetic flows. Nothing here simulates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from shoal.reproduce import ExperimentError
from shoal.reproduce.bfc import (
    BINS,
    bin_labels,
    harness_p99,
    harness_packets,
    harness_size,
    ideal_fct_ns,
    lower_bound_ratio,
    p99_by_bin,
    size_bins,
    slowdown,
    workload_of,
)


def test_ideal_fct_is_the_harness_formula_worked_by_hand() -> None:
    """base = L + (np + ex) x min(size, 1000) B x 8 / 100 Gbps, L = 8000 ns and ex = 3
    between racks, L = 4000 ns and ex = 1 within one, on the size the harness carries."""
    sizes = [5_500, 5_500, 3_000, 500, 500, 1_000, 1_001]
    same = [False, True, False, False, True, False, False]
    expected = [
        8000 + (6 + 3) * 80,  # 5,500 B: 6 packets of 1,000 B
        4000 + (6 + 1) * 80,  # the same in one rack
        8000 + (4 + 3) * 80,  # 3,000 B: an exact multiple gains a packet (4 x 1,000 B)
        8000 + (1 + 3) * 500 * 0.08,  # one 500 B packet: 40 ns per store and forward
        4000 + (1 + 1) * 500 * 0.08,
        8000 + (1 + 3) * 80,  # 1,000 B is one full packet
        8000 + (2 + 3) * 80,  # 1,001 B: two packets
    ]
    assert ideal_fct_ns(sizes, same) == pytest.approx(expected, abs=1e-9)
    assert list(harness_size(sizes)) == [6000, 6000, 4000, 500, 500, 1000, 2000]
    assert list(harness_packets(sizes)) == [6, 6, 4, 1, 1, 1, 2]
    # FCT 17,440 ns between racks for 5,500 B: twice the ideal.
    assert slowdown([17_440.0], [5_500], [False])[0] == pytest.approx(2.0)


def test_bad_sizes_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="at least 1 byte, got 0"):
        ideal_fct_ns([1000, 0], [False, False])
    with pytest.raises(ValueError, match="must be numbers"):
        harness_size([1000.0, float("nan")])


def test_bins_are_the_harness_packet_ranges() -> None:
    """Google: <=1, 2, 4, 8, 16, 64, 256, 1024, more; FB_Hadoop: <=3, 12, 48, 192, 768,
    3072, 12288, 49152, more (packets, upper bounds inclusive)."""
    google, fb = BINS["Google"], BINS["FB_Hadoop"]
    assert list(size_bins([1, 2, 3, 4, 5, 16, 17, 1024, 1025], google)) == [
        0,
        1,
        2,
        2,
        3,
        4,
        5,
        7,
        8,
    ]
    assert list(size_bins([1, 3, 4, 12, 13, 49152, 49153], fb)) == [0, 0, 1, 1, 2, 7, 8]
    assert bin_labels(google)[0] == "<=1" and bin_labels(google)[-1] == ">1024"
    assert len(bin_labels(fb)) == 9


def test_p99_is_the_sorted_value_at_int_99_percent_of_n() -> None:
    assert harness_p99(np.arange(1, 101)) == 100  # index 99
    assert harness_p99(np.arange(200, 0, -1)) == 199  # index 198 of 1..200
    assert harness_p99([7.0]) == 7.0
    assert math.isnan(harness_p99([]))


def test_per_bin_p99_leaves_out_incast_and_unfinished_flows() -> None:
    """Synthetic flows on 16-host racks under the Google bins: the incast flows (query >=
    0) and an unfinished flow count nowhere; each bin's p99 is its harness p99."""
    rows = []
    # Bin 1 (one packet): 100 flows of 500 B between racks, FCT 1..100 x the ideal 8,160 ns.
    rows += [(0, 16, 500, 8160.0 * k, -1) for k in range(1, 101)]
    # Bin 2 (two packets): 3 flows of 1,500 B in one rack (ideal 4,000 + 3 x 80 = 4,240 ns).
    rows += [(1, 2, 1500, 4240.0 * k, -1) for k in (2, 3, 4)]
    # Incast flows of 200 packets with huge FCTs, and an unfinished background flow.
    rows += [(h, 5, 200_000, 1e9, 0) for h in range(17, 117)]
    rows += [(3, 40, 500, float("nan"), -1)]
    flows = pd.DataFrame(rows, columns=["src", "dst", "bytes", "fct_ns", "query"])
    table = p99_by_bin(flows, "Google", 16).set_index("label")
    assert table.loc["<=1", "flows"] == 100
    assert table.loc["<=1", "p99"] == pytest.approx(100.0)  # sorted[99] of 1..100
    assert table.loc["<=2", "flows"] == 3
    assert table.loc["<=2", "p99"] == pytest.approx(4.0)  # sorted[int(2.97)] = sorted[2]
    assert table.loc["<=2", "max"] == pytest.approx(4.0)
    assert table.loc["<=256", "flows"] == 0  # the incast's 200 packets are not here
    assert math.isnan(table.loc["<=256", "p99"])
    assert table["flows"].sum() == 103 and len(table) == 9


def test_per_bin_table_refuses_bad_input() -> None:
    flows = pd.DataFrame({"src": [0], "dst": [1], "bytes": [100], "fct_ns": [1.0]})
    with pytest.raises(ValueError, match="no column 'query'"):
        p99_by_bin(flows, "Google", 16)
    with pytest.raises(ValueError, match="workload 'websearch': expected one of Google"):
        p99_by_bin(flows.assign(query=-1), "websearch", 16)
    with pytest.raises(ValueError, match="hosts_per_rack must be at least 1"):
        p99_by_bin(flows.assign(query=-1), "Google", 0)


def test_workload_is_read_from_the_cdf_name() -> None:
    assert workload_of({"workload": {"cdf": "homa_w4"}}) == "FB_Hadoop"
    assert workload_of({"workload": {"cdf": "/x/y/homa_w3.cdf"}}) == "Google"
    with pytest.raises(ExperimentError, match="workload.cdf 'websearch' has no harness size"):
        workload_of({"workload": {"cdf": "websearch"}})


def test_the_harness_ideal_undercuts_a_lone_flow_by_at_most_a_partial_packet() -> None:
    """The base is a lower bound for single packets. A longer flow's last packet may be
    partial, which the harness counts as whole: a lone flow of b > 1,000 B in Shoal
    (36 B of headers a packet, a 48 B ACK, 1 us links) takes 2 x links x 1 us + links x
    1,036 B + (b + 36 p - 1,036) B + links x 48 B at 0.08 ns/B, p = ceil(b / 1000), while
    the harness's base is L + (np + ex) x 80 ns, np = b // 1000 + 1. The gap is at most
    72.32 - 2.88 np ns in a rack (2 links) and 58.88 - 2.88 np between racks (4 links);
    the lowest ratio is a 1,001 B flow's: 1 - 63.6 / 4,240 and 1 - 50.16 / 8,400."""
    sizes = np.arange(1, 60_001)
    for same, gap, worst in ((True, 72.32, 63.6 / 4240), (False, 58.88, 50.16 / 8400)):
        rack = np.full(len(sizes), same)
        ratio = lower_bound_ratio(sizes, rack)
        assert ratio[:1000].min() > 1  # one packet: never below the ideal
        short = (1 - ratio) * ideal_fct_ns(sizes, rack)
        assert (short <= gap - 2.88 * harness_packets(sizes) + 1e-6).all()
        assert ratio.min() == pytest.approx(1 - worst, abs=1e-9)
        assert sizes[ratio.argmin()] == 1001
