"""Figures of sweeps, drawn with matplotlib, sized and labelled for print.

Every function takes DataFrames and returns a :class:`matplotlib.figure.Figure` (no
pyplot state, safe in scripts and servers); :func:`save` writes it as PNG and/or PDF.

* :func:`fct_vs_load`: mean and 99th-percentile FCT (or slowdown) per size bucket
  against load, one line per scheme, optionally normalized to a baseline scheme (as the
  BCC paper plots it). Input: a sweep table (:func:`shoal.sweep`); seeds are averaged.
* :func:`slowdown_vs_size`: median and 99th-percentile FCT slowdown per flow-size
  percentile bucket (HPCC / BFC style). Input: flows with a group column
  (:func:`sweep_flows`).
* :func:`fct_cdf`: CDF of FCT per group. Input: flows.
* :func:`buffer_cdf`: CDF of shared-buffer (pool) occupancy per group, from the queue
  samples of runs with ``run.sample_interval`` set. Input: samples (:func:`sweep_samples`).
* :func:`loss_vs_load`: packet loss rate against load. Input: a sweep table.
* :func:`pfc_vs_load`: PFC's paused time against load. Input: a sweep table.

Figures of one run (any run directory, :func:`shoal.load`):

* :func:`queues_over_time`: the busiest ports' queue lengths over time. Input: the
  run's queue samples (``Result.samples``, ``run.sample_interval``).
* :func:`pause_timeline`: when each port class was paused. Input: the run's PFC frames
  (``Result.pfc``).
* :func:`flow_rates`: traced flows' rate (or window) over time. Input: the run's time
  series (``Result.series``, ``run.series``).

``by`` names the column(s) that make the lines (``"scheme"``, an axis key, or a list of
them); axis columns not in ``by``, the x axis or ``seed`` must not vary (filter first),
so no figure silently averages different configurations.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from shoal._output import SHOAL_MARK, has_mark, replace_file
from shoal._units import fmt_size

__all__ = [
    "fct_vs_load",
    "slowdown_vs_size",
    "fct_cdf",
    "buffer_cdf",
    "loss_vs_load",
    "pfc_vs_load",
    "queues_over_time",
    "pause_timeline",
    "pause_spans",
    "flow_rates",
    "save",
    "saved",
    "text_overlaps",
    "stamp",
    "sweep_flows",
    "sweep_samples",
    "PlotError",
]

_BUCKETS = ("small", "medium", "large")
_STAT_NAMES = {"mean": "mean", "p50": "median", "p99": "99th pct"}
_AXIS_LABELS = {
    "workload.load": "Load",
    "switch.ecn.k": "ECN threshold K",
    "switch.marking.cutoff.k": "ECN threshold K",
    "switch.alpha": "Dynamic threshold α",
    "switch.pool_size": "Shared buffer size",
    "workload.flows": "Flows",
    "workload.size": "Flow size",
    "switch.buffer": "Switch buffer",
    "topology.link_rate": "Link rate",
}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_RC = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "lines.linewidth": 1.6,
    "lines.markersize": 4.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,  # TrueType in PDFs: editable, accepted by paper submission systems
    "ps.fonttype": 42,
}


class PlotError(ValueError):
    """The data cannot make the requested figure (missing column, nothing to plot)."""


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]
        yield


def _plain_log(axis: Any) -> None:
    """Log-scale tick labels as plain numbers (1, 10, 100; no 4x10^0 minor labels)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_formatter(plain)
    lo, hi = axis.get_view_interval()

    def some(v: float, _: Any) -> str:
        # 2, 3 and 5 of each decade: 6..9 sit too close to the next power of ten for
        # a label each on a panel a few centimetres tall.
        mantissa = round(v / 10 ** np.floor(np.log10(v)), 6) if v > 0 else 0
        return f"{v:g}" if mantissa in (2, 3, 5) else ""

    # Less than ~1.5 decades shown: label some minor ticks too, else there may be one label.
    axis.set_minor_formatter(FuncFormatter(some) if lo > 0 and hi / lo < 30 else NullFormatter())


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _by_list(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _need(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        have = ", ".join(str(c) for c in frame.columns[:30])
        raise PlotError(f"{what}: no column {missing[0]!r} (columns: {have})")


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _check_fixed(frame: pd.DataFrame, used: Sequence[str]) -> None:
    """Axis columns (frame.attrs['axes']) not used by the figure must not vary."""
    for column in frame.attrs.get("axes", []):
        if column in used or column == "seed" or column.endswith("_label"):
            continue
        if column in frame and frame[column].map(_hashable).nunique(dropna=False) > 1:
            raise PlotError(
                f"column {column!r} varies in the data but is neither the x axis nor in "
                f"`by`; add it to `by` or filter the runs (e.g. --where)"
            )


def _group_label(by: Sequence[str], key: Any) -> str:
    if not by:
        return ""
    values = key if isinstance(key, tuple) else (key,)
    if len(by) == 1:
        return str(values[0])
    return ", ".join(f"{_short(c)}={v}" for c, v in zip(by, values, strict=True))


def _short(column: str) -> str:
    return column.rsplit(".", 1)[-1]


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    if not by:
        return [("", frame)]
    keyed = frame.assign(**{f"__by{i}": frame[c].map(_hashable) for i, c in enumerate(by)})
    cols = [f"__by{i}" for i in range(len(by))]
    out = []
    for key, group in keyed.groupby(cols if len(cols) > 1 else cols[0], sort=False, dropna=False):
        out.append((_group_label(by, key), group.drop(columns=cols)))
    return out


def _time_unit(values: np.ndarray) -> tuple[float, str]:
    finite = values[np.isfinite(values)]
    peak = float(np.nanmax(finite)) if finite.size else 0.0
    if peak >= 1e6:
        return 1e6, "ms"
    if peak >= 1e3:
        return 1e3, "µs"
    return 1.0, "ns"


def _quantity_order(values: pd.Series) -> list[Any] | None:
    """The distinct values of an x column in the order of what they measure, when every
    one is a quantity written as text with a unit of one kind (sizes ``"64KB"``, times
    ``"10us"``, rates ``"100Gbps"``): text sorts "1MB" before "64KB". ``None`` for other
    columns (numbers sort as numbers; other text keeps its order)."""
    from shoal import _core

    distinct = list(dict.fromkeys(values.dropna()))
    if not distinct or not all(isinstance(v, str) for v in distinct):
        return None
    for parse in (_core.parse_bytes, _core.parse_time_ps, _core.parse_rate_bps):
        try:
            measured = {v: float(parse(v)) for v in distinct}
        except ValueError:
            continue
        if any(not v.strip()[-1:].isalpha() for v in distinct):
            return None  # plain numbers: not all of one unit kind
        return sorted(distinct, key=lambda v: measured[v])
    return None


def _is_quantity(value: Any) -> bool:
    """Whether an x value is a point on a scale (a number, or a size, time or rate
    written with its unit), not a category such as a scheme's name or "N/A"."""
    from shoal import _core

    if isinstance(value, int | float | np.number) and not isinstance(value, bool):
        return bool(np.isfinite(value))
    text = str(value).strip()
    try:
        float(text)
        return True
    except ValueError:
        pass
    for parse in (_core.parse_bytes, _core.parse_time_ps, _core.parse_rate_bps):
        try:
            parse(text)
            return True
        except ValueError:
            continue
    return False


def _ok(runs: pd.DataFrame) -> pd.DataFrame:
    return runs[runs["status"] == "ok"] if "status" in runs else runs


def _legend(fig: Any, axes: Any, n: int, ncols: int = 4) -> None:
    handles, labels = axes.get_legend_handles_labels()
    if len(labels) > 1 or (labels and labels[0]):
        # Below the axes: constrained layout puts an "outside upper" legend in the same
        # band as the figure's title, one over the other.
        ncols = min(len(labels), ncols)
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=ncols, frameon=False)
        # Fewer columns (more rows) until the legend fits the figure's width: the
        # layout does not widen a figure, and a tight save would crop the names.
        while ncols > 1 and legend.get_window_extent(fig._get_renderer()).width > fig.bbox.width:
            legend.remove()
            ncols -= 1
            legend = fig.legend(
                handles, labels, loc="outside lower center", ncols=ncols, frameon=False
            )


def _text_boxes(fig: Any) -> list[tuple[str, Any, Any]]:
    """Every piece of text a reader sees in a drawn figure, with its box on the canvas:
    the title, each legend as one box, panel titles, axis labels and tick labels (with
    the artist)."""
    renderer = fig._get_renderer()
    boxes: list[tuple[str, Any, Any]] = []

    def add(name: str, artist: Any) -> None:
        if (
            artist is not None
            and artist.get_visible()
            and (not hasattr(artist, "get_text") or artist.get_text().strip())
        ):
            boxes.append((name, artist.get_window_extent(renderer), artist))

    figures = [fig]
    for parent in figures:
        figures += parent.subfigs
    for f, part in enumerate(figures):
        add(f"figure {f} title", getattr(part, "_suptitle", None))
        for i, legend in enumerate(part.legends):
            add(f"figure {f} legend {i}", legend)
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for title in (ax.title, ax._left_title, ax._right_title):
            add(f"axes {i} title", title)
        add(f"axes {i} legend", ax.get_legend())
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if not axis.get_visible():  # a twin's shared axis: drawn by the other
                continue
            add(f"axes {i} {name} label", axis.label)
            for tick in axis._update_ticks():  # the ticks in view, as drawn
                if tick.get_visible():
                    for label in (tick.label1, tick.label2):
                        add(f"axes {i} {name} tick {label.get_text()!r}", label)
        for text in ax.texts:
            add(f"axes {i} note {text.get_text()!r}", text)
    return boxes


def text_overlaps(fig: Any, gap: float = 2.0) -> list[tuple[str, str]]:
    """The pairs of texts of ``fig`` (see :func:`_text_boxes`) whose boxes overlap or
    come closer than ``gap`` pixels (at the figure's dpi) once drawn: a legend over a
    title, tick labels running together; and ``(text, "figure edge")`` for a text cut
    by the figure's edge. Empty for a legible figure. Lays the figure out first."""
    fig.draw_without_rendering()
    boxes = _text_boxes(fig)
    edge = fig.bbox
    found = [
        (name, "figure edge")
        for name, box, _ in boxes
        if box.x0 < edge.x0 - gap
        or box.y0 < edge.y0 - gap
        or box.x1 > edge.x1 + gap
        or box.y1 > edge.y1 + gap
    ]
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            (name_a, box_a, art_a), (name_b, box_b, art_b) = boxes[a], boxes[b]
            # Texts closer than ``gap`` read as one ("ecn_k10ecn_k20"), touching or not.
            width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if width > -gap and height > -gap and not _apart_rotated(art_a, art_b, fig, gap):
                found.append((name_a, name_b))
    return found


def _apart_rotated(a: Any, b: Any, fig: Any, gap: float) -> bool:
    """Whether two texts turned by the same angle (slanted tick labels) stand apart,
    although their upright boxes, much larger than such text, overlap: the distance
    between their baselines is more than a line of text."""
    angle = getattr(a, "get_rotation", lambda: 0.0)()
    if not angle or getattr(b, "get_rotation", lambda: None)() != angle:
        return False
    ca = a.get_window_extent().get_points().mean(axis=0)
    cb = b.get_window_extent().get_points().mean(axis=0)
    theta = np.radians(angle)
    across = abs((cb[0] - ca[0]) * np.sin(theta) - (cb[1] - ca[1]) * np.cos(theta))
    line = max(a.get_fontsize(), b.get_fontsize()) * fig.dpi / 72
    return bool(across >= line + gap)


def fct_vs_load(
    runs: pd.DataFrame,
    *,
    x: str = "workload.load",
    by: str | Sequence[str] | None = "scheme",
    buckets: Sequence[str] = _BUCKETS,
    stats: Sequence[str] = ("mean", "p99"),
    metric: str = "fct",
    normalize_to: str | None = None,
    panel_by: str | None = None,
    title: str | None = None,
) -> Any:
    """FCT (or slowdown) per size bucket vs load: one panel per (stat, bucket), and per
    value of ``panel_by`` if given.

    Args:
        runs: a sweep table (columns ``<x>``, ``<by>``, ``<bucket>_<stat>_fct_ns``).
        x: the column on the x axis.
        by: column(s) making the lines (``None``: one line).
        buckets: size buckets, columns of the panel grid.
        stats: ``mean``, ``p50``, ``p99``: rows of the panel grid.
        metric: ``fct`` or ``slowdown``.
        normalize_to: divide every line by this group's value at the same x (the
            baseline scheme); the baseline becomes the line y = 1.
        panel_by: a column whose values are drawn apart, a row of panels each (e.g.
            two buffer models); titled by ``<panel_by>_label`` when the runs have it.
            Other columns may vary with it (the keys zipped with it), not within it.
        title: a figure title.
    """
    by_cols = _by_list(by) if by is not None and (not isinstance(by, str) or by in runs) else []
    if isinstance(by, str) and by not in runs and by != "scheme":
        _need(runs, [by], "fct_vs_load")
    if metric not in ("fct", "slowdown"):
        raise PlotError(f"metric must be 'fct' or 'slowdown', got {metric!r}")
    suffix = "fct_ns" if metric == "fct" else "slowdown"
    ycols = [f"{b}_{s}_{suffix}" for s in stats for b in buckets]
    _need(runs, [x, *ycols, *([panel_by] if panel_by else [])], "fct_vs_load")
    data = _ok(runs)
    if data.empty:
        raise PlotError("fct_vs_load: no finished runs")
    if panel_by is None:
        panels = [("", data)]
    else:
        name = f"{panel_by}_label" if f"{panel_by}_label" in data else panel_by
        panels = [
            (str(part[name].iloc[0]), part)
            for _, part in data.groupby(data[panel_by].map(_hashable), sort=False)
        ]
    for _, part in panels:
        _check_fixed(part, [x, *by_cols])
    # A bucket no run has a flow of (sizes on the x axis put each in one bucket) would
    # be a column of empty panels: draw the others.
    buckets = [
        b for b in buckets if data[[f"{b}_{s}_{suffix}" for s in stats]].notna().any(axis=None)
    ]
    if not buckets:
        raise PlotError("fct_vs_load: no finished flows in the size buckets asked for")
    ycols = [f"{b}_{s}_{suffix}" for s in stats for b in buckets]
    order = _quantity_order(data[x])
    lines = [_panel_lines(part, x, by_cols, ycols, order, normalize_to) for _, part in panels]
    values = np.concatenate([g.to_numpy(dtype=float).ravel() for ls in lines for _, g in ls])
    scale, unit = (1.0, "") if metric == "slowdown" or normalize_to else _time_unit(values)

    with _style():
        nrows, ncols = len(stats), len(buckets)
        fig = _figure((2.4 * ncols + 0.4) * len(panels), 1.9 * nrows + 0.5)
        # A block of panels per panel_by value, titled once: "346KB per port: small
        # flows: 99th pct" over each panel would not fit its width.
        blocks = fig.subfigures(1, len(panels), squeeze=False)[0] if panel_by else [fig]
        first = None
        for block, (panel, _), groups in zip(blocks, panels, lines, strict=True):
            axes = block.subplots(nrows, ncols, squeeze=False, sharex=True)
            first = axes[0][0] if first is None else first
            if panel:
                block.suptitle(panel)
            for r, stat in enumerate(stats):
                for c, bucket in enumerate(buckets):
                    ax = axes[r][c]
                    col = f"{bucket}_{stat}_{suffix}"
                    for i, (label, g) in enumerate(groups):
                        ax.plot(
                            g.index if order is None else range(len(order)),
                            g[col] / scale,
                            marker=_MARKERS[i % len(_MARKERS)],
                            color=f"C{i % 10}",
                            label=label or None,
                            # Under the others: a scheme equal to the baseline (PIAS
                            # with a shared buffer) would vanish beneath it.
                            zorder=1.9 if label == str(normalize_to) else 2,
                        )
                    if order is not None:
                        ax.set_xticks(range(len(order)), [str(v) for v in order])
                    if normalize_to is not None:
                        ax.axhline(1.0, color="0.4", linewidth=0.8, linestyle="--")
                    ax.set_title(f"{bucket} flows: {_STAT_NAMES.get(stat, stat)}")
                    if r == nrows - 1:
                        ax.set_xlabel(_AXIS_LABELS.get(x, x))
                    if c == 0:
                        what = "FCT" if metric == "fct" else "slowdown"
                        if normalize_to is not None:
                            ax.set_ylabel(f"{what} / {what}({normalize_to})")
                        elif metric == "fct":
                            ax.set_ylabel(f"FCT ({unit})")
                        else:
                            ax.set_ylabel("FCT slowdown")
        _legend(fig, first, len(lines[0]))
        if title:
            fig.suptitle(title)
    return fig


def _panel_lines(
    data: pd.DataFrame,
    x: str,
    by_cols: list[str],
    ycols: list[str],
    order: list[Any] | None,
    normalize_to: str | None,
) -> list[tuple[str, pd.DataFrame]]:
    """The lines of one row of panels: per group, the mean over seeds of each y column
    at each x, divided by the baseline group's when ``normalize_to`` names one."""
    groups = [(label, g.groupby(x, sort=True)[ycols].mean()) for label, g in _groups(data, by_cols)]
    if order is not None:  # quantities as text: in the order of what they measure
        groups = [(label, g.reindex(order)) for label, g in groups]
    if normalize_to is not None:
        base = [g for label, g in groups if label == str(normalize_to)]
        if not base:
            names = ", ".join(label for label, _ in groups)
            raise PlotError(f"normalize_to: no group named {normalize_to!r} (have: {names})")
        groups = [(label, g / base[0].reindex(g.index)) for label, g in groups]
    return groups


def loss_vs_load(
    runs: pd.DataFrame,
    *,
    x: str = "workload.load",
    by: str | Sequence[str] | None = "scheme",
    title: str | None = None,
) -> Any:
    """Packet loss rate (percent of packets sent) vs load, one line per group."""
    by_cols = _by_list(by) if by is not None and (not isinstance(by, str) or by in runs) else []
    _need(runs, [x, "loss_rate"], "loss_vs_load")
    data = _ok(runs)
    if data.empty:
        raise PlotError("loss_vs_load: no finished runs")
    _check_fixed(data, [x, *by_cols])
    with _style():
        fig = _figure(3.4, 2.6)
        ax = fig.subplots()
        _mean_lines(ax, data, x, by_cols, "loss_rate", 0.01)
        ax.set_xlabel(_AXIS_LABELS.get(x, x))
        ax.set_ylabel("Packet loss rate (%)")
        ax.set_ylim(bottom=0)
        _legend(fig, ax, 0)
        if title:
            fig.suptitle(title)
    return fig


def _mean_lines(
    ax: Any, data: pd.DataFrame, x: str, by_cols: list[str], column: str, scale: float
) -> None:
    """One line per group: the mean of ``column`` / ``scale`` at each value of ``x``;
    quantities (sizes, times, rates) evenly spaced in their order, labelled as written."""
    order = _quantity_order(data[x])
    for i, (label, g) in enumerate(_groups(data, by_cols)):
        series = g.groupby(x, sort=True)[column].mean() / scale
        if order is not None:
            series = series.reindex(order)
        ax.plot(
            series.index if order is None else range(len(order)),
            series.to_numpy(),
            marker=_MARKERS[i % len(_MARKERS)],
            label=label or None,
        )
    if order is not None:
        ax.set_xticks(range(len(order)), [str(v) for v in order])


def pfc_vs_load(
    runs: pd.DataFrame,
    *,
    x: str = "workload.load",
    by: str | Sequence[str] | None = "scheme",
    title: str | None = None,
) -> Any:
    """PFC's paused time (summed over every paused port class, mean over seeds) vs load,
    one line per group; the runs of a sweep with a lossless class."""
    by_cols = _by_list(by) if by is not None and (not isinstance(by, str) or by in runs) else []
    _need(runs, [x, "pfc_paused_ns"], "pfc_vs_load")
    data = _ok(runs)
    if data.empty or not data["pfc_paused_ns"].notna().any():
        raise PlotError("pfc_vs_load: no finished run with a lossless class")
    _check_fixed(data, [x, *by_cols])
    paused = pd.to_numeric(data["pfc_paused_ns"], errors="coerce")
    scale, unit = _time_unit(paused.to_numpy(dtype=float))
    with _style():
        fig = _figure(3.4, 2.6)
        ax = fig.subplots()
        _mean_lines(ax, data.assign(pfc_paused_ns=paused), x, by_cols, "pfc_paused_ns", scale)
        ax.set_xlabel(_AXIS_LABELS.get(x, x))
        ax.set_ylabel(f"PFC paused time ({unit})")
        top = float(np.nanmax(paused.to_numpy(dtype=float))) / scale
        ax.set_ylim(0, top * 1.08 if top > 0 else 1.0)  # from 0, the top markers whole
        _legend(fig, ax, 0)
        if title:
            fig.suptitle(title)
    return fig


def _finished_reliable(flows: pd.DataFrame) -> pd.DataFrame:
    """The finished flows that have a completion time (TCP and RDMA, not UDP)."""
    out = flows
    if "finished" in out:
        out = out[out["finished"].astype(bool)]
    if "kind" in out:
        out = out[out["kind"].astype(str) != "udp"]
    return out


def slowdown_vs_size(
    flows: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "scheme",
    n_buckets: int = 10,
    percentiles: Sequence[float] = (50, 99),
    title: str | None = None,
) -> Any:
    """FCT slowdown per flow-size percentile bucket (HPCC / BFC style).

    Flows (finished TCP and RDMA flows of all groups together) are split at size percentiles into
    ``n_buckets`` buckets of equal flow counts; the x axis is labelled with each
    bucket's largest flow size. One panel per percentile of slowdown within a bucket.
    """
    by_cols = _by_list(by) if by is not None and (not isinstance(by, str) or by in flows) else []
    _need(flows, ["bytes", "slowdown"], "slowdown_vs_size")
    data = _finished_reliable(flows)
    if data.empty:
        raise PlotError("slowdown_vs_size: no finished flows")
    _check_fixed(data, by_cols)
    sizes = data["bytes"].to_numpy(dtype=float)
    edges = np.unique(np.percentile(sizes, np.linspace(0, 100, n_buckets + 1)))
    if edges.size < 2:
        edges = np.array([sizes.min() - 1, sizes.max()])
    edges[0] = -np.inf

    def bucket_index(values: np.ndarray) -> np.ndarray:
        idx: np.ndarray = np.clip(
            np.searchsorted(edges, values, side="left") - 1, 0, edges.size - 2
        )
        return idx

    n = edges.size - 1
    upper = [float(data["bytes"][bucket_index(sizes) == i].max()) for i in range(n)]
    with _style():
        fig = _figure(3.2 * len(percentiles) + 0.3, 2.7)
        axes = fig.subplots(1, len(percentiles), squeeze=False)[0]
        for j, pct in enumerate(percentiles):
            ax = axes[j]
            for i, (label, g) in enumerate(_groups(data, by_cols)):
                idx = bucket_index(g["bytes"].to_numpy(dtype=float))
                slow = g["slowdown"].to_numpy(dtype=float)
                ys = [
                    float(np.percentile(slow[idx == b], pct)) if np.any(idx == b) else np.nan
                    for b in range(n)
                ]
                ax.plot(range(n), ys, marker=_MARKERS[i % len(_MARKERS)], label=label or None)
            ax.set_yscale("log")
            ax.set_xticks(range(n))
            ax.set_xticklabels([fmt_size(u, ".3g") for u in upper], rotation=60, ha="right")
            ax.set_xlabel("Flow size (bytes, bucket upper bound)")
            name = "Median" if pct == 50 else f"p{pct:g}"
            ax.set_ylabel(f"{name} FCT slowdown")
            _plain_log(ax.yaxis)
        _legend(fig, axes[0], 0)
        if title:
            fig.suptitle(title)
    return fig


def _cdf_axes(ax: Any, values: np.ndarray, label: str | None, marker_i: int) -> None:
    ordered = np.sort(values)
    ys = np.arange(1, ordered.size + 1) / ordered.size
    ax.step(ordered, ys, where="post", label=label)


def fct_cdf(
    flows: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "scheme",
    bucket: str | None = None,
    size_buckets: Sequence[float] = (100e3, 10e6),
    log: bool = True,
    title: str | None = None,
) -> Any:
    """CDF of the FCT of finished TCP and RDMA flows, one line per group.

    ``bucket`` (``small``, ``medium``, ``large``) keeps one size bucket, with the
    boundaries ``size_buckets`` (bytes, default 100 KB and 10 MB).
    """
    by_cols = _by_list(by) if by is not None and (not isinstance(by, str) or by in flows) else []
    _need(flows, ["fct_ns", "bytes"], "fct_cdf")
    data = _finished_reliable(flows)
    if bucket is not None:
        lo, hi = size_buckets
        ranges = {"small": (-np.inf, lo), "medium": (lo, hi), "large": (hi, np.inf)}
        if bucket not in ranges:
            raise PlotError(f"bucket must be one of small, medium, large; got {bucket!r}")
        a, b = ranges[bucket]
        data = data[(data["bytes"] > a) & (data["bytes"] <= b)]
    if data.empty:
        raise PlotError("fct_cdf: no finished flows")
    _check_fixed(data, by_cols)
    scale, unit = _time_unit(data["fct_ns"].to_numpy(dtype=float))
    with _style():
        fig = _figure(3.4, 2.6)
        ax = fig.subplots()
        for i, (label, g) in enumerate(_groups(data, by_cols)):
            _cdf_axes(ax, g["fct_ns"].to_numpy(dtype=float) / scale, label or None, i)
        if log:
            ax.set_xscale("log")
            ax.autoscale_view()
            _plain_log(ax.xaxis)
        ax.set_xlabel(f"FCT ({unit})" + (f", {bucket} flows" if bucket else ""))
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        _legend(fig, ax, 0)
        if title:
            fig.suptitle(title)
    return fig


def buffer_cdf(
    samples: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "scheme",
    ports_per_pool: int = 8,
    level: str = "pool",
    title: str | None = None,
) -> Any:
    """CDF of buffer occupancy from queue samples (runs with ``run.sample_interval``).

    ``level="pool"``: shared occupancy of each pool (``pool_bytes``, one value per
    sample time, switch and pool, pools being ``ports_per_pool`` consecutive ports);
    ``level="queue"``: the length of each sampled queue (``bytes``).
    """
    by_cols = _by_list(by) if by is not None and (not isinstance(by, str) or by in samples) else []
    if samples.empty:
        raise PlotError("buffer_cdf: no queue samples; set run.sample_interval in the scenario")
    _need(samples, ["time_ns", "switch", "port", "bytes", "pool_bytes"], "buffer_cdf")
    _check_fixed(samples, by_cols)
    if level == "pool":
        keys = [c for c in ("key",) if c in samples]
        data = samples.assign(pool=samples["port"] // max(1, ports_per_pool))
        data = data.drop_duplicates([*keys, "time_ns", "switch", "pool"])
        column, what = "pool_bytes", "Shared buffer occupancy"
    elif level == "queue":
        data, column, what = samples, "bytes", "Queue length"
    else:
        raise PlotError(f"level must be 'pool' or 'queue', got {level!r}")
    with _style():
        fig = _figure(3.4, 2.6)
        ax = fig.subplots()
        for i, (label, g) in enumerate(_groups(data, by_cols)):
            _cdf_axes(ax, g[column].to_numpy(dtype=float) / 1e3, label or None, i)
        ax.set_xlabel(f"{what} (KB)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        _legend(fig, ax, 0)
        if title:
            fig.suptitle(title)
    return fig


def queues_over_time(
    samples: pd.DataFrame | None, *, ports: int = 6, title: str | None = None
) -> Any:
    """The queue length of the ``ports`` busiest switch ports (by their largest sample,
    summed over the port's queues) over time, from a run's queue samples."""
    if samples is None or samples.empty:
        raise PlotError("queues_over_time: no queue samples; set run.sample_interval")
    _need(samples, ["time_ns", "switch", "port", "bytes"], "queues_over_time")
    per_port = samples.groupby(["switch", "port", "time_ns"], as_index=False)["bytes"].sum()
    peaks = per_port.groupby(["switch", "port"])["bytes"].max().sort_values(ascending=False)
    busiest = [key for key, peak in peaks.items() if peak > 0][: max(1, ports)]
    if not busiest:
        raise PlotError("queues_over_time: every sampled queue stayed empty")
    scale, unit = _time_unit(per_port["time_ns"].to_numpy(dtype=float))
    with _style():
        fig = _figure(5.0, 2.8)
        ax = fig.subplots()
        for switch, port in busiest:
            g = per_port[(per_port["switch"] == switch) & (per_port["port"] == port)]
            x = g["time_ns"].to_numpy(dtype=float) / scale
            ax.step(
                x,
                g["bytes"].to_numpy(dtype=float) / 1e3,
                where="post",
                label=f"switch {switch} port {port}",
            )
        ax.set_xlabel(f"Time ({unit})")
        ax.set_ylabel("Queue length (KB)")
        ax.set_ylim(bottom=0)
        _legend(fig, ax, len(busiest), ncols=3)
        if title:
            fig.suptitle(title)
    return fig


def pause_spans(
    pfc: pd.DataFrame, end_ns: float
) -> dict[tuple[str, int, int, int], list[tuple[float, float]]]:
    """Each (node_kind, node, port, class)'s pauses as (start, length) in ns, from its
    frames (``Result.pfc``): from every PAUSE to the RESUME after it, or to ``end_ns``."""
    out: dict[tuple[str, int, int, int], list[tuple[float, float]]] = {}
    frames = pfc.sort_values("time_ns", kind="stable")
    for key, g in frames.groupby(["node_kind", "node", "port", "class"]):
        spans, since = [], None
        for t, pause in zip(g["time_ns"], g["pause"], strict=True):
            if pause and since is None:
                since = float(t)
            elif not pause and since is not None:
                spans.append((since, float(t) - since))
                since = None
        if since is not None:
            spans.append((since, max(end_ns - since, 0.0)))
        if spans:
            out[key] = spans
    return out


def pause_timeline(
    pfc: pd.DataFrame | None, *, end_ns: float | None = None, title: str | None = None
) -> Any:
    """When each (node, port, class) was paused, one row each: from every PAUSE it
    received to the RESUME after it (or ``end_ns``, the run's end, when none came), from
    a run's PFC frames (``Result.pfc``). A pause that ran out without a RESUME
    (``switch.flow_control.pause_quanta``) is drawn until the next frame."""
    if pfc is None or pfc.empty:
        raise PlotError("pause_timeline: no PFC frames (no class is lossless, or none paused)")
    _need(pfc, ["time_ns", "node_kind", "node", "port", "class", "pause"], "pause_timeline")
    last = float(end_ns if end_ns is not None else pfc["time_ns"].max())
    rows = [
        (f"{kind} {node} port {port} class {cls}", spans)
        for (kind, node, port, cls), spans in pause_spans(pfc, last).items()
    ]
    if not rows:
        raise PlotError("pause_timeline: no PAUSE frame among the frames")
    scale, unit = _time_unit(np.array([last], dtype=float))
    with _style():
        fig = _figure(5.0, 0.6 + 0.22 * len(rows))
        ax = fig.subplots()
        for i, (_, spans) in enumerate(rows):
            ax.broken_barh([(a / scale, w / scale) for a, w in spans], (i - 0.35, 0.7))
        ax.set_yticks(range(len(rows)), [label for label, _ in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, last / scale)
        ax.set_xlabel(f"Time ({unit})")
        ax.grid(axis="y", visible=False)
        if title:
            fig.suptitle(title)
    return fig


def flow_rates(
    series: pd.DataFrame | None, *, flows: Sequence[int] | None = None, title: str | None = None
) -> Any:
    """Traced flows' sending rate over time (RDMA), or their congestion window when they
    have no rate (TCP), from a run's time series (``Result.series``); ``flows`` picks
    some of them by id (default: every traced flow, at most 8)."""
    if series is None or series.empty:
        raise PlotError("flow_rates: no time series; set run.series in the scenario")
    _need(series, ["flow", "time_ns", "rate_bps", "cwnd_bytes"], "flow_rates")
    ids = list(flows) if flows else sorted(series["flow"].unique())[:8]
    missing = [f for f in ids if f not in set(series["flow"])]
    if missing:
        raise PlotError(f"flow_rates: flow {missing[0]} was not traced (run.series)")
    chosen = series[series["flow"].isin(ids)]
    rate = chosen["rate_bps"].notna().any()
    column, scale_y, label = (
        ("rate_bps", 1e9, "Rate (Gbps)") if rate else ("cwnd_bytes", 1e3, "Window (KB)")
    )
    scale, unit = _time_unit(chosen["time_ns"].to_numpy(dtype=float))
    with _style():
        fig = _figure(5.0, 2.8)
        ax = fig.subplots()
        for flow in ids:
            g = chosen[chosen["flow"] == flow].dropna(subset=[column])
            ax.step(
                g["time_ns"].to_numpy(dtype=float) / scale,
                g[column].to_numpy(dtype=float) / scale_y,
                where="post",
                label=f"flow {flow}",
            )
        ax.set_xlabel(f"Time ({unit})")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        _legend(fig, ax, len(ids), ncols=4)
        if title:
            fig.suptitle(title)
    return fig


def _targets(out: str | os.PathLike[str], formats: Sequence[str] | None) -> list[Path]:
    """The files :func:`save` writes for ``out`` and ``formats``."""
    path = Path(out)
    suffix = path.suffix.lower().lstrip(".")
    if formats is None:
        formats = [suffix] if suffix in ("png", "pdf", "svg") else ["png", "pdf"]
    stem = path.with_suffix("") if suffix in ("png", "pdf", "svg") else path
    return [stem.with_name(f"{stem.name}.{fmt}") for fmt in formats]


def save(
    fig: Any,
    out: str | os.PathLike[str],
    *,
    formats: Sequence[str] | None = None,
    stamp: str | None = None,
) -> list[Path]:
    """Write a figure; ``out`` with a ``.png``/``.pdf`` suffix writes that format,
    without one (or with ``formats``) writes ``out.png`` and ``out.pdf``. PNG at 300 dpi.

    The formats share one layout: constrained layout measures every text of the figure,
    a third of the time of a save, so it runs for the first format only. ``stamp``
    (from :func:`stamp`) goes into the files' metadata, for :func:`saved`.
    """
    written = []
    engine = fig.get_layout_engine()
    try:
        for i, target in enumerate(_targets(out, formats)):
            fmt = target.suffix.lstrip(".")
            metadata = dict(_METADATA[fmt])
            if stamp is not None:
                metadata[_STAMP_KEY[fmt]] = _STAMP_PREFIX + stamp

            def draw(tmp: Path, fmt: str = fmt, metadata: dict[str, Any] = metadata) -> None:
                fig.savefig(tmp, format=fmt, dpi=300 if fmt == "png" else None, metadata=metadata)

            written.append(replace_file(target, draw, _is_figure, "figure"))
            if i == 0 and engine is not None:
                fig.set_layout_engine("none")  # keep the layout just made
    finally:
        if fig.get_layout_engine() is not engine:
            fig.set_layout_engine(engine)
    return written


def stamp(data: pd.DataFrame, *parts: Any) -> str:
    """A digest of what a figure is drawn from: ``data``, ``parts`` (its kind, keys,
    title) and the code that draws it (Shoal's version and the source of its plotting
    modules, matplotlib's version). The same stamp means the same figure."""
    import hashlib
    import json

    digest = hashlib.sha256(_code_digest().encode())
    digest.update(json.dumps(parts, sort_keys=True, default=str).encode())
    digest.update(data.to_json(orient="split", default_handler=str).encode())
    return digest.hexdigest()[:32]


def saved(
    out: str | os.PathLike[str], stamp: str, *, formats: Sequence[str] | None = None
) -> list[Path] | None:
    """The files :func:`save` wrote for ``out`` with ``stamp``, when every one of them
    is there; ``None`` when one is missing or was drawn from something else."""
    mark = (_STAMP_PREFIX + stamp).encode()
    targets = _targets(out, formats)
    for target in targets:
        if not target.is_file() or target.is_symlink():
            return None
        if not (_is_figure(target) and has_mark(target, mark)):
            return None
    return targets


_CODE_DIGEST: list[str] = []


def _code_digest() -> str:
    """Shoal's version, matplotlib's, and a digest of the modules that draw figures
    (computed once a process)."""
    if not _CODE_DIGEST:
        import hashlib

        import matplotlib

        from shoal import _core

        here = Path(__file__).parent
        digest = hashlib.sha256(f"{_core.__version__} {matplotlib.__version__}".encode())
        for source in sorted([here / "plot.py", *(here / "reproduce").glob("*.py")]):
            digest.update(source.read_bytes())
        _CODE_DIGEST.append(digest.hexdigest())
    return _CODE_DIGEST[0]


#: Figure metadata: Shoal's mark (so a later save may replace the file), no timestamps
#: (the same figure gives the same bytes).
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": SHOAL_MARK},
    "pdf": {"Creator": SHOAL_MARK, "Producer": SHOAL_MARK, "CreationDate": None},
    "svg": {"Creator": SHOAL_MARK, "Date": None},
}
#: Where a figure's stamp goes, by format (keys each format's metadata accepts).
_STAMP_KEY = {"png": "Description", "pdf": "Subject", "svg": "Description"}
_STAMP_PREFIX = "shoal-figure "


def _is_figure(path: Path) -> bool:
    """Whether ``path`` is a figure Shoal saved (it carries Shoal's creator mark)."""
    mark = SHOAL_MARK.encode()
    marks = {".png": b"Software\x00" + mark, ".pdf": b"/Creator (" + mark}
    return has_mark(path, marks.get(path.suffix.lower(), b"<dc:title>" + mark))


def _with_params(frame: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame
    columns = [c for c in runs.attrs.get("axes", []) if c in runs]
    params = runs[["key", *columns]].drop_duplicates("key")
    out = frame.merge(params, on="key", how="left")
    out.attrs["axes"] = columns
    return out


def sweep_flows(store: Any, runs: pd.DataFrame) -> pd.DataFrame:
    """The flows of the finished runs of a sweep table, with its axis columns."""
    from shoal.store import Store

    db = store if isinstance(store, Store) else Store(store)
    keys = list(dict.fromkeys(_ok(runs)["key"]))
    return _with_params(db.flows(keys), runs)


def sweep_samples(store: Any, runs: pd.DataFrame) -> pd.DataFrame:
    """The queue samples of the finished runs of a sweep table, with its axis columns."""
    from shoal.store import Store

    db = store if isinstance(store, Store) else Store(store)
    keys = list(dict.fromkeys(_ok(runs)["key"]))
    return _with_params(db.samples(keys), runs)
