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


# -- rdma/burst -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def burst(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    from shoal.reproduce import reproduce

    store = tmp_path_factory.mktemp("burst") / "store"
    result = reproduce("rdma/burst", mode="quick", store=store, progress=False, jobs=2)
    return store, result.runs


def _burst_figure(burst: tuple[Path, pd.DataFrame]) -> object:
    from shoal.reproduce.rdma import burst_figure

    store, runs = burst
    return burst_figure(runs[runs["status"] == "ok"], store)


def test_burst_panels_are_titled_by_name(burst: tuple[Path, pd.DataFrame]) -> None:
    fig = _burst_figure(burst)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]  # type: ignore[attr-defined]
    assert titles == [
        "DCQCN",
        "DCQCN + window",
        "TIMELY",
        "DCTCP",
        "θ-PowerTCP",
        "HPCC",
        "PowerTCP",
    ], titles


def test_burst_panels_share_one_queue_scale(burst: tuple[Path, pd.DataFrame]) -> None:
    fig = _burst_figure(burst)
    queues = [ax for ax in fig.axes if ax.get_ylabel().startswith("queue")]  # type: ignore[attr-defined]
    assert len(queues) == 7
    limits = {ax.get_ylim() for ax in queues}
    assert len(limits) == 1, limits
    # The scale holds the highest queue of all.
    top = max(float(np.nanmax(line.get_ydata())) for ax in queues for line in ax.get_lines())
    assert next(iter(limits))[1] >= top


def test_burst_throughput_is_a_line_not_a_band(burst: tuple[Path, pd.DataFrame]) -> None:
    """Sampled every 6.96 us, a 25 Gbps link sends 20 or 21 packets an interval: the raw
    throughput swings by 5% from sample to sample and draws a solid band. The figure
    averages it over 50 us: before the burst, the lone connection's line is flat."""
    from shoal.reproduce.rdma import bottleneck_series

    fig = _burst_figure(burst)
    ax = [a for a in fig.axes if a.get_title() == "DCQCN"][0]  # type: ignore[attr-defined]
    line = ax.get_lines()[0]
    t, gbps = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    before = gbps[(t < -0.1) & np.isfinite(gbps)]
    assert before.size > 10 and float(np.std(before)) < 0.1, np.std(before)
    assert "50 µs" in ax.get_ylabel()
    # The raw samples swing far more: the test would catch a band.
    store, runs = burst
    run_dir = shoal.Store(store).run_dir(runs.set_index("scheme").loc["dcqcn", "key"])
    raw = bottleneck_series(pd.read_parquet(run_dir / "queues.parquet"))
    start = float(pd.read_parquet(run_dir / "flows.parquet")["start_ns"].max())
    early = raw[(raw["time_ns"] < start - 0.1e6) & (raw["time_ns"] > start - 0.5e6)]
    assert float(np.std(early["throughput_gbps"])) > 0.3


# -- dsh/fig11 ------------------------------------------------------------------------------


def test_fig11_legend_stays_clear_of_the_data(tmp_path: Path) -> None:
    """The theorems' first-PAUSE bursts are vertical lines across the whole axes (SIH's at
    about 10%): a legend inside the axes is crossed by one, whatever its corner."""
    from shoal.reproduce import reproduce
    from shoal.reproduce.dsh import pause_figure

    result = reproduce("dsh/fig11", mode="quick", store=tmp_path / "store", progress=False)
    fig = pause_figure(result.runs[result.runs["status"] == "ok"], tmp_path / "store")
    fig.draw_without_rendering()
    (ax,) = fig.axes
    assert ax.get_legend() is None and len(fig.legends) == 1
    legend = fig.legends[0].get_window_extent()
    assert not legend.overlaps(ax.get_window_extent()), (legend, ax.get_window_extent())
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["SIH", "DSH", "SIH: theorem", "DSH: theorem"], labels


# -- the report of a PFC sweep --------------------------------------------------------------

#: Eight RDMA senders at line rate into host 0 through a 200 KB pool under PFC, at two
#: pause thresholds: PFC pauses every sender.
PFC_SWEEP = {
    "name": "pfc",
    "scenario": {
        "topology": {"kind": "star", "hosts": 9, "link_rate": "100Gbps", "link_delay": "1us"},
        "switch": {"pool_size": "200KB", "reserved": "0B", "flow_control": {"kind": "pfc"}},
        "rdma": {"cc": {"kind": "none"}},
        "workload": {"pattern": "incast", "receiver": 0, "size": "200KB", "transport": "rdma"},
    },
    "axes": {"switch.flow_control.alpha": [0.125, 0.5]},
}


@pytest.fixture(scope="module")
def pfc_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    from shoal.report import write_report

    store = tmp_path_factory.mktemp("pfc") / "store"
    runs = shoal.sweep(PFC_SWEEP, jobs=1, progress=False, store=store)
    return write_report(store), runs


def test_the_report_of_a_pfc_sweep_shows_its_pauses(
    pfc_report: tuple[Path, pd.DataFrame],
) -> None:
    report, runs = pfc_report
    assert (runs["pfc_pause_frames"] > 0).all()
    text = report.read_text()
    for header in ("PAUSE frames", "paused (µs)", "lossless drops"):
        assert f"<th>{header}</th>" in text, header
    for frames in runs["pfc_pause_frames"]:
        assert f"<td>{int(frames)}</td>" in text
    assert (report.parent / "pfc_vs_load.png").is_file()
    assert "PFC paused time vs switch.flow_control.alpha" in text


def test_shoal_plot_pfc_vs_load(
    pfc_report: tuple[Path, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, runs = pfc_report
    store = report.parents[2]
    out = tmp_path / "pfc.png"
    args = ("plot", "pfc-vs-load", store, "--x", "switch.flow_control.alpha", "--out", out)
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = plot.pfc_vs_load(runs, x="switch.flow_control.alpha")
    ys = np.asarray(fig.axes[0].get_lines()[0].get_ydata(), float)
    unit = fig.axes[0].get_ylabel().removeprefix("PFC paused time (").removesuffix(")")
    scale = {"ns": 1.0, "µs": 1e3, "ms": 1e6}[unit]
    expected = runs.sort_values("switch.flow_control.alpha")["pfc_paused_ns"] / scale
    np.testing.assert_allclose(ys, expected.to_numpy())


def test_the_report_of_a_lossy_sweep_has_no_pfc_columns(tmp_path: Path) -> None:
    from shoal.report import write_report

    store = tmp_path / "store"
    shoal.sweep(
        {**SIZE_SWEEP, "axes": {"workload.size": ["64KB"]}}, jobs=1, progress=False, store=store
    )
    text = write_report(store).read_text()
    assert "PAUSE frames" not in text and "PFC" not in text


# -- redrawing a cached experiment ----------------------------------------------------------


def test_saving_both_formats_lays_the_figure_out_once(
    sized: tuple[Path, pd.DataFrame], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Constrained layout measures every text of the figure: a third of a save. PNG and
    PDF share one layout."""
    import matplotlib.layout_engine as engines

    calls = []
    real = engines.do_constrained_layout

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(engines, "do_constrained_layout", counted)
    _, df = sized
    fig = plot.fct_vs_load(df, x="workload.size")
    engine = fig.get_layout_engine()
    png, pdf = plot.save(fig, tmp_path / "fct")
    assert png.suffix == ".png" and pdf.suffix == ".pdf"
    assert len(calls) == 1, len(calls)
    assert fig.get_layout_engine() is engine  # the figure is as it was


def test_reproducing_again_keeps_figures_of_the_same_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run is in the store and the figures are the ones its data make: nothing is
    drawn again. A figure whose file is gone, or whose data changed, is."""
    from matplotlib.figure import Figure

    from shoal.reproduce import reproduce

    store = tmp_path / "store"
    first = reproduce("dsh/fig11", mode="quick", store=store, progress=False)
    assert first.figures
    before = {p: p.stat().st_mtime_ns for p in first.figures}

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("drew a figure whose file is up to date")

    with monkeypatch.context() as patched:
        patched.setattr(Figure, "savefig", refuse)
        again = reproduce("dsh/fig11", mode="quick", store=store, progress=False)
    assert again.figures == first.figures
    assert {p: p.stat().st_mtime_ns for p in again.figures} == before
    # A missing file is drawn again.
    png = next(p for p in first.figures if p.suffix == ".png")
    png.unlink()
    third = reproduce("dsh/fig11", mode="quick", store=store, progress=False)
    assert png.is_file() and third.figures == first.figures


def test_a_figure_of_other_data_is_drawn_again(
    sized: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    _, df = sized
    stem = tmp_path / "fct"
    stamp = plot.stamp(df, "fct_vs_load")
    plot.save(plot.fct_vs_load(df, x="workload.size"), stem, stamp=stamp)
    assert plot.saved(stem, stamp) == [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    other = plot.stamp(df.iloc[:-1], "fct_vs_load")
    assert other != stamp and plot.saved(stem, other) is None
    assert plot.saved(stem, plot.stamp(df, "loss_vs_load")) is None


# -- legible figures (issue 32, item 5) -----------------------------------------------------


def _runs(**columns: list[object]) -> pd.DataFrame:
    """A finished sweep table of the given columns; every column but the y columns is
    an axis, so a figure must not average over one it does not draw."""
    frame = pd.DataFrame({**columns, "status": "ok"})
    frame.attrs["axes"] = [c for c in columns if not c.endswith(("_fct_ns", "_label"))]
    return frame


def _two_buffer_models() -> pd.DataFrame:
    """Two schemes at two loads under two buffer models that disagree: the model
    "port" makes pias 3x slower than losspass, the model "shared" makes them equal."""
    rows = [
        (model, label, scheme, load, value)
        for model, label, slow in ((64, "shared", 1.0), (1, "per port", 3.0))
        for load in (0.5, 0.9)
        for scheme, value in (("losspass", 100.0), ("pias", 100.0 * slow))
    ]
    return _runs(
        **{
            "switch.ports_per_pool": [r[0] for r in rows],
            "switch.ports_per_pool_label": [r[1] for r in rows],
            "scheme": [r[2] for r in rows],
            "workload.load": [r[3] for r in rows],
            "small_mean_fct_ns": [r[4] for r in rows],
        }
    )


def test_a_figure_legend_stays_clear_of_the_title() -> None:
    frame = _runs(
        scheme=["a", "b", "a", "b"],
        **{"workload.load": [0.4, 0.4, 0.9, 0.9], "small_mean_fct_ns": [1e6, 2e6, 3e6, 4e6]},
    )
    fig = plot.fct_vs_load(frame, buckets=["small"], stats=["mean"], title="Fig. 3 (III-C)")
    assert plot.text_overlaps(fig) == []
    legend = fig.legends[0].get_window_extent()
    title = fig._suptitle.get_window_extent()
    assert not legend.overlaps(title), (legend, title)
    assert legend.y1 < min(ax.get_window_extent().y0 for ax in fig.axes)  # below the panels


def test_text_overlaps_finds_labels_that_run_together() -> None:
    with plot._style():
        fig = plot._figure(1.6, 1.5)
        ax = fig.subplots()
        ax.plot(["droptail", "ecn_k10", "ecn_k20", "ecn_k45"], [1, 2, 3, 4])
        fig.suptitle("a title")
        fig.legend(["a legend with a long name"], loc="upper center")
    found = plot.text_overlaps(fig)
    assert any("x tick 'ecn_k10'" in a and "x tick 'ecn_k20'" in b for a, b in found), found
    assert ("figure 0 title", "figure 0 legend 0") in found


def test_each_buffer_model_has_its_own_panels() -> None:
    fig = plot.fct_vs_load(
        _two_buffer_models(),
        buckets=["small"],
        stats=["mean"],
        normalize_to="losspass",
        panel_by="switch.ports_per_pool",
    )
    assert [f._suptitle.get_text() for f in fig.subfigs] == ["shared", "per port"]
    for block, ratio in zip(fig.subfigs, (1.0, 3.0), strict=True):
        (ax,) = block.axes
        pias = [line for line in ax.get_lines() if line.get_label() == "pias"]
        assert len(pias) == 1
        # The model's own ratio, not the 2.0 of a mean over both models.
        assert np.allclose(pias[0].get_ydata(), ratio), pias[0].get_ydata()
    assert plot.text_overlaps(fig) == []


def test_a_figure_refuses_to_average_buffer_models() -> None:
    with pytest.raises(plot.PlotError, match="switch.ports_per_pool"):
        plot.fct_vs_load(_two_buffer_models(), buckets=["small"], stats=["mean"])


def test_an_analysis_keeps_the_axes_the_figures_check() -> None:
    from shoal.reproduce._runs import join_columns

    runs = _two_buffer_models()
    joined = join_columns(runs, {0: {"extra": 1.0}})
    assert joined.attrs["axes"] == runs.attrs["axes"]
    with pytest.raises(plot.PlotError, match="switch.ports_per_pool"):
        plot.fct_vs_load(joined, buckets=["small"], stats=["mean"])


def test_no_line_joins_a_category_to_a_threshold() -> None:
    """bcc/fig7's x axis: ECN thresholds, then "N/A" (no ECN), which is not a point on
    the threshold scale: the line runs between thresholds only."""
    from shoal.reproduce import _metric_vs

    frame = _runs(
        **{"k_label": ["500KB", "1.5MB", "1.75MB", "N/A"], "goodput": [6.0, 14.0, 94.0, 94.0]}
    )
    fig = _metric_vs(frame, x="k_label", y="goodput", by=None)
    (ax,) = fig.axes
    joined = [line for line in ax.get_lines() if line.get_linestyle() not in ("None", "none")]
    assert [list(line.get_xdata()) for line in joined] == [["500KB", "1.5MB", "1.75MB"]]
    assert plot.text_overlaps(fig) == []
    schemes = _runs(**{"scheme": ["droptail", "pias", "losspass"], "qct": [3.0, 2.0, 1.0]})
    fig = _metric_vs(schemes, x="scheme", y="qct", by=None)
    assert all(line.get_linestyle() in ("None", "none") for line in fig.axes[0].get_lines()), (
        "a line joins schemes"
    )


def test_bfc_fig12_has_the_collision_panel_and_the_ideal_fq_reference(tmp_path: Path) -> None:
    """The paper's Fig. 12: collisions against the physical queues per port, and the
    tail per flow size with Ideal-FQ's for comparison (run in the experiment's sweep)."""
    from shoal.reproduce import reproduce
    from shoal.reproduce.bfc import queues_figure

    result = reproduce("bfc/fig12", mode="quick", jobs=1, store=tmp_path / "s", progress=False)
    ok = result.runs[result.runs["status"] == "ok"]
    assert "ideal_fq" in set(ok["scheme"])
    fig = queues_figure(ok, tmp_path / "s", title="Fig. 12")
    collisions, tail = fig.axes
    (line,) = collisions.get_lines()
    assert list(line.get_xdata()) == [8, 16, 32, 60]
    rates = ok.set_index("scheme")["collision_rate"]
    assert np.allclose(line.get_ydata(), [rates[f"bfc_{n}"] * 100 for n in (8, 16, 32, 60)])
    ideal = [t for t in tail.get_lines() if t.get_label() == "Ideal-FQ"]
    assert len(ideal) == 1 and ideal[0].get_linestyle() == "--"
    expected = ok[ok["scheme"] == "ideal_fq"][[f"p99_bin{i}" for i in range(1, 10)]]
    assert np.allclose(ideal[0].get_ydata(), expected.to_numpy(dtype=float)[0])
    assert plot.text_overlaps(fig) == []
