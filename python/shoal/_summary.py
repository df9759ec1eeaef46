"""Headline metrics of a run: the summary the core computes (``summary.json``), and its
table form.

The summary has one implementation, in the core (``shoal_core::results::summary``, with
its definitions: FCT, ideal FCT, slowdown, size buckets, query completion times, loss and
ECN mark rates); :func:`compute_summary` calls it through the binding. Means and
percentiles are NumPy's (``np.mean``; ``np.percentile``'s default linear interpolation),
reproduced bit for bit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shoal import _core

if TYPE_CHECKING:  # pandas / rich are imported where used (fast `import shoal`)
    import pandas as pd
    from rich.table import Table

__all__ = ["compute_summary", "summary_table", "summary_text", "parse_size", "format_ns"]


def parse_size(value: Any) -> int:
    """Bytes of a size value as the scenario writes it (``100KB``, ``1MiB``, ``1500``),
    read by the core's own parser so Python and the simulator never disagree."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    return int(_core.parse_bytes(str(value)))


def compute_summary(
    flows: pd.DataFrame | Mapping[str, Any],
    counters: Mapping[str, Any],
    scenario: Mapping[str, Any],
    *,
    version: str,
    warnings: Sequence[str] = (),
    wall_time_s: float | None = None,
) -> dict[str, Any]:
    """Build the ``summary.json`` dictionary of a run (computed by the core).

    Args:
        flows: the flow table (columns as :attr:`shoal.Result.flows`), as a DataFrame
            or a mapping of column name to array. ``query`` may be missing (no queries).
        counters: the core's counters (``Simulation.counters()``); kept whole under
            ``"counters"``.
        scenario: the resolved scenario.
        version: the Shoal version that produced the run.
        warnings: warnings of the scenario and of the run.
        wall_time_s: wall-clock seconds spent simulating.
    """
    import numpy as np

    n = len(flows["finished"])
    columns: dict[str, Any] = {}
    for name, dtype, missing in (
        ("bytes", np.uint64, None),
        ("start_ns", np.float64, math.nan),
        ("finish_ns", np.float64, math.nan),
        ("fct_ns", np.float64, None),
        ("slowdown", np.float64, None),
        ("retransmits", np.uint32, None),
        ("timeouts", np.uint32, None),
        ("delivered_bytes", np.uint64, None),
        ("finished", np.bool_, None),
        ("query", np.int64, -1),
    ):
        if name in flows or missing is None:
            columns[name] = np.ascontiguousarray(flows[name], dtype=dtype)
        else:
            columns[name] = np.full(n, missing, dtype=dtype)
    columns["kind"] = [str(kind) for kind in np.asarray(flows["kind"]).tolist()]
    text = _core.summarize(
        columns, dict(counters), dict(scenario), version, list(warnings), wall_time_s
    )
    summary: dict[str, Any] = json.loads(text)
    return summary


def format_ns(ns: float | None) -> str:
    """Human-readable duration from nanoseconds (``"12.3 µs"``)."""
    if ns is None or not math.isfinite(ns):
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def _fmt_num(value: float | None, spec: str = ".3g") -> str:
    return "—" if value is None else format(value, spec)


def _fmt_pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.3g}%"


HEADERS = ("bucket", "size", "flows", "mean FCT", "p99 FCT", "mean slowdown", "p99 slowdown")


def _summary_parts(summary: Mapping[str, Any]) -> tuple[str, list[list[str]], list[str], int]:
    """The headline results as text: title, one row per size bucket (in ``HEADERS``
    order), caption lines, and the number of unfinished flows."""
    flows = summary.get("flows", {})
    title = (
        f"Shoal {summary.get('shoal_version', '')} — seed {summary.get('seed')}, "
        f"{flows.get('finished', 0)}/{flows.get('total', 0)} flows finished"
    )
    rows = []
    for name, stats in summary.get("fct", {}).items():
        lo, hi = stats.get("min_bytes_exclusive"), stats.get("max_bytes_inclusive")
        if name == "all":
            size = "any"
        elif lo is None:
            size = f"≤ {_fmt_bytes(hi)}"
        elif hi is None:
            size = f"> {_fmt_bytes(lo)}"
        else:
            size = f"{_fmt_bytes(lo)}–{_fmt_bytes(hi)}"
        rows.append(
            [
                name,
                size,
                str(stats.get("count", 0)),
                format_ns(stats.get("mean_fct_ns")),
                format_ns(stats.get("p99_fct_ns")),
                _fmt_num(stats.get("mean_slowdown")),
                _fmt_num(stats.get("p99_slowdown")),
            ]
        )
    links = summary.get("link_utilization", {})
    packets = summary.get("packets", {})
    lines = [
        f"loss {_fmt_pct(summary.get('loss_rate'))} "
        f"({packets.get('dropped', 0)}/{packets.get('sent', 0)} packets)"
        f" · timeouts {summary.get('timeouts', 0)}"
        f" · retransmits {summary.get('retransmits', 0)}",
        f"ECN marks {_fmt_pct(summary.get('ecn_mark_rate'))} of data packets"
        f" · downlink utilization mean {_fmt_pct(links.get('mean'))}"
        f", max {_fmt_pct(links.get('max'))}",
        f"{format_ns(_ps_to_ns(summary.get('duration_ps')))} simulated"
        f" in {_fmt_num(summary.get('wall_time_s'), '.3g')} s"
        f" ({_fmt_num(summary.get('events_per_s'), '.3g')} events/s)",
    ]
    return title, rows, lines, int(flows.get("unfinished", 0))


def summary_table(summary: Mapping[str, Any]) -> Table:
    """The headline results of a run as a :class:`rich.table.Table`.

    One row per size bucket (mean and p99 FCT and slowdown), with loss, timeouts, ECN marking,
    utilization, unfinished flows and simulation speed in the caption.
    """
    from rich.table import Table

    title, rows, lines, unfinished = _summary_parts(summary)
    table = Table(title=title, title_justify="left", caption_justify="left")
    for i, header in enumerate(HEADERS):
        wrap = header.endswith("slowdown")
        table.add_column(
            header.replace(" slowdown", "\nslowdown"),
            justify="right" if i >= 2 else "left",
            no_wrap=not wrap,
        )
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i + 1 < len(rows) and rows[i + 1][0] == "all")
    if unfinished:
        lines.append(f"[yellow]{unfinished} flows unfinished (excluded from FCT)[/yellow]")
    table.caption = "\n".join(lines)
    return table


def summary_text(summary: Mapping[str, Any]) -> str:
    """The same headline results as :func:`summary_table`, as plain fixed-width text (for
    pipes and logs: no terminal codes, and no need to import rich)."""
    title, rows, lines, unfinished = _summary_parts(summary)
    widths = [max(len(r[i]) for r in [list(HEADERS), *rows]) for i in range(len(HEADERS))]

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs)

    out = [title, line(HEADERS), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    if unfinished:
        lines.append(f"{unfinished} flows unfinished (excluded from FCT)")
    return "\n".join(out + lines) + "\n"


def _ps_to_ns(ps: Any) -> float | None:
    return None if ps is None else float(ps) / 1e3


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n}B"
