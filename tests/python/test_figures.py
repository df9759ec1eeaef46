"""Figures that show what they claim (issue 30, item 14): quantities on the x axis in
their order, no empty panels, experiment figures with readable titles, one scale for
panels compared side by side, legends clear of the data, a report that shows PFC."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import shoal
from conftest import run_cli
from shoal import plot

#: An incast into host 0 whose flow size is the x axis; sizes given out of order.
SIZES = ["1MB", "64KB", "200KB", "2MB"]
SIZE_SWEEP = {
    "name": "sizes",
    "scenario": {
        "topology": {"kind": "star", "hosts": 5},
        "workload": {"pattern": "incast", "receiver": 0, "size": "64KB"},
    },
    "schemes": {
        "small_pool": {"switch.pool_size": "1MB"},
        "big_pool": {"switch.pool_size": "4MB"},
    },
    "axes": {"workload.size": SIZES},
}


@pytest.fixture(scope="module")
def sized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    store = tmp_path_factory.mktemp("sizes") / "store"
    return store, shoal.sweep(SIZE_SWEEP, jobs=1, progress=False, store=store)


def _ticks(ax: object) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]  # type: ignore[attr-defined]


def test_sizes_on_the_x_axis_are_in_size_order(sized: tuple[Path, pd.DataFrame]) -> None:
    _, df = sized
    fig = plot.fct_vs_load(df, x="workload.size")
    fig.draw_without_rendering()
    ordered = ["64KB", "200KB", "1MB", "2MB"]
    labelled = [ax for ax in fig.axes if _ticks(ax)]  # the bottom row (shared x)
    assert len(labelled) == 2
    for ax in labelled:
        assert _ticks(ax) == ordered, _ticks(ax)
        assert ax.get_xlabel() == "Flow size"
    # Each line's points are at the positions of their sizes: the small bucket's only
    # size is 64 KB, at position 0.
    small = [ax for ax in fig.axes if ax.get_title().startswith("small")][0]
    for line in small.get_lines():
        ys = np.asarray(line.get_ydata(), float)
        assert np.isfinite(ys[0]) and not np.isfinite(ys[1:]).any(), ys


def test_no_panel_is_empty(sized: tuple[Path, pd.DataFrame]) -> None:
    """Flows of 64 KB to 2 MB are small and medium: the large flows' panels would be
    empty, so they are not drawn."""
    _, df = sized
    fig = plot.fct_vs_load(df, x="workload.size")
    titles = [ax.get_title() for ax in fig.axes]
    assert not any(t.startswith("large") for t in titles), titles
    assert len(fig.axes) == 4
    for ax in fig.axes:
        data = np.concatenate([np.asarray(line.get_ydata(), float) for line in ax.get_lines()])
        assert np.isfinite(data).any(), ax.get_title()


def test_no_bucket_with_data_is_a_plot_error(sized: tuple[Path, pd.DataFrame]) -> None:
    _, df = sized
    with pytest.raises(plot.PlotError, match="no finished flows"):
        plot.fct_vs_load(df, x="workload.size", buckets=["large"])


def test_the_cli_draws_sizes_in_order(
    sized: tuple[Path, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = sized
    out = tmp_path / "fct.png"
    code, _, err = run_cli(
        capsys, "plot", "fct-vs-load", store, "--x", "workload.size", "--out", out
    )
    assert code == 0, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_numbers_on_the_x_axis_stay_numbers() -> None:
    runs = pd.DataFrame(
        {
            "status": ["ok"] * 3,
            "scheme": ["a"] * 3,
            "workload.load": [0.9, 0.3, 0.6],
            **{f"{b}_{s}_fct_ns": [3.0, 1.0, 2.0] for b in ("small",) for s in ("mean", "p99")},
        }
    )
    fig = plot.fct_vs_load(runs, buckets=["small"])
    xs = np.asarray(fig.axes[0].get_lines()[0].get_xdata(), float)
    assert list(xs) == [0.3, 0.6, 0.9]
    assert math.isclose(fig.axes[0].get_lines()[0].get_ydata()[0], 1.0)
