"""Headline metrics of a run, computed from the flow table and the core's counters.

Definitions (as the papers report them):

* **FCT** (flow completion time) = the time the receiver holds every byte of the flow
  minus the flow's start time (when the sender's application handed the flow over).
  Unfinished flows have no FCT; they are counted and reported, never dropped silently.
* **Ideal FCT** is computed by the core (see its documentation): the FCT the flow would
  have alone in an empty network, i.e. base round-trip/handshake latency plus
  serialization of all its packets at the bottleneck rate along its path.
* **Slowdown** = FCT / ideal FCT (>= 1 up to rounding).
* Size buckets come from ``run.size_buckets`` ``[b0, b1]`` (bytes):
  ``small``: size <= b0, ``medium``: b0 < size <= b1, ``large``: size > b1; ``all``
  covers every finished flow. FCT statistics use finished TCP flows only (UDP flows have
  no completion).
* Percentiles are numpy's default (linear interpolation between order statistics).
* **Packet loss rate** = dropped packets / sent packets (all packets, data and control).
* **ECN mark rate** = ECN-marked packets / data packets sent.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy / pandas / rich are imported where used (fast `import shoal`)
    import numpy as np
    import pandas as pd
    from rich.table import Table

__all__ = ["compute_summary", "summary_table", "parse_size", "format_ns", "bucket_labels"]

def parse_size(value: Any) -> int:
    """Bytes of a size value as the scenario writes it (``100KB``, ``1MiB``, ``1500``),
    read by the core's own parser so Python and the simulator never disagree."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    from shoal import _core

    return int(_core.parse_bytes(str(value)))


def bucket_labels(n_bounds: int) -> list[str]:
    """Names of the size buckets for ``n_bounds`` boundaries."""
    if n_bounds == 2:
        return ["small", "medium", "large"]
    if n_bounds == 1:
        return ["small", "large"]
    return [f"bucket{i}" for i in range(n_bounds + 1)]


def _stat(values: np.ndarray, fn: str) -> float | None:
    import numpy as np

    if values.size == 0:
        return None
    if fn == "mean":
        out = float(np.mean(values))
    elif fn == "p50":
        out = float(np.percentile(values, 50))
    elif fn == "p99":
        out = float(np.percentile(values, 99))
    else:  # pragma: no cover - internal
        raise ValueError(fn)
    return out if math.isfinite(out) else None


def _bucket_stats(fct: np.ndarray, slowdown: np.ndarray) -> dict[str, Any]:
    return {
        "count": int(fct.size),
        "mean_fct_ns": _stat(fct, "mean"),
        "p50_fct_ns": _stat(fct, "p50"),
        "p99_fct_ns": _stat(fct, "p99"),
        "mean_slowdown": _stat(slowdown, "mean"),
        "p50_slowdown": _stat(slowdown, "p50"),
        "p99_slowdown": _stat(slowdown, "p99"),
    }


def _rate(numerator: Any, denominator: Any) -> float | None:
    try:
        num, den = float(numerator), float(denominator)
    except (TypeError, ValueError):
        return None
    return num / den if den > 0 else None


def _jsonable(value: Any) -> Any:
    """Replace NaN/inf by None and numpy scalars by Python ones, recursively."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    np = sys.modules.get("numpy")  # numpy scalars can only exist once numpy is imported
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def compute_summary(
    flows: pd.DataFrame | Mapping[str, Any],
    counters: Mapping[str, Any],
    scenario: Mapping[str, Any],
    *,
    version: str,
    warnings: Sequence[str] = (),
    wall_time_s: float | None = None,
) -> dict[str, Any]:
    """Build the ``summary.json`` dictionary of a run.

    Args:
        flows: the flow table (columns as :attr:`shoal.Result.flows`), as a DataFrame
            or a mapping of column name to array.
        counters: the core's counters (``Simulation.counters()``); unknown keys are kept
            under ``"counters"``.
        scenario: the resolved scenario.
        version: the Shoal version that produced the run.
        warnings: warnings of the scenario and of the run.
        wall_time_s: wall-clock seconds spent simulating.
    """
    import numpy as np

    run_cfg = scenario.get("run", {}) if isinstance(scenario.get("run"), Mapping) else {}
    bounds = [parse_size(b) for b in run_cfg.get("size_buckets", ["100KB", "10MB"])]
    labels = bucket_labels(len(bounds))

    # A DataFrame or a mapping of column arrays (the core's output, no pandas needed).
    cols = {
        name: np.asarray(flows[name])
        for name in (
            "finished",
            "kind",
            "bytes",
            "fct_ns",
            "slowdown",
            "delivered_bytes",
            "timeouts",
            "retransmits",
        )
    }
    n_flows = len(cols["finished"])
    finished = cols["finished"].astype(bool)
    is_tcp = cols["kind"].astype(str) == "tcp"
    done = finished & is_tcp
    sizes = cols["bytes"][done].astype(np.float64)
    fct = cols["fct_ns"][done].astype(np.float64)
    slowdown = cols["slowdown"][done].astype(np.float64)
    # Bucket index: number of bounds strictly below the size (size <= b0 -> 0).
    index = np.searchsorted(np.asarray(bounds, dtype=np.float64), sizes, side="left")
    fct_stats: dict[str, Any] = {}
    for i, label in enumerate(labels):
        sel = index == i
        fct_stats[label] = _bucket_stats(fct[sel], slowdown[sel])
        lo = bounds[i - 1] if i > 0 else None
        hi = bounds[i] if i < len(bounds) else None
        fct_stats[label]["min_bytes_exclusive"] = lo
        fct_stats[label]["max_bytes_inclusive"] = hi
    fct_stats["all"] = _bucket_stats(fct, slowdown)

    unfinished = int((~finished).sum())
    unfinished_tcp = int((~finished & is_tcp).sum())
    all_warnings = list(warnings)
    if unfinished_tcp:
        all_warnings.append(
            f"{unfinished_tcp} of {int(is_tcp.sum())} TCP flows did not finish before the "
            "run stopped; they are excluded from FCT statistics"
        )

    packets = dict(counters.get("packets", {}) or {})
    events = counters.get("events")
    duration_ps = counters.get("duration_ps")
    summary: dict[str, Any] = {
        "shoal_version": version,
        "seed": run_cfg.get("seed"),
        "flows": {
            "total": n_flows,
            "finished": int(finished.sum()),
            "unfinished": unfinished,
            "tcp": int(is_tcp.sum()),
            "udp": int((~is_tcp).sum()),
            "bytes": int(cols["bytes"].sum()) if n_flows else 0,
            "delivered_bytes": int(cols["delivered_bytes"].sum()) if n_flows else 0,
        },
        "size_buckets_bytes": bounds,
        "fct": fct_stats,
        "queries": query_stats(flows),
        "packets": packets,
        "loss_rate": _rate(packets.get("dropped"), packets.get("sent")),
        "drops": dict(counters.get("drops", {}) or {}),
        "bytes_dropped": counters.get("bytes_dropped"),
        "timeouts": int(cols["timeouts"].sum()) if n_flows else 0,
        "retransmits": int(cols["retransmits"].sum()) if n_flows else 0,
        "ecn_marks": counters.get("ecn_marks"),
        "ecn_mark_rate": _rate(counters.get("ecn_marks"), counters.get("data_packets_sent")),
        "pools": list(counters.get("pools", []) or []),
        "links": dict(counters.get("links", {}) or {}),
        "link_utilization": _link_utilization(counters.get("links")),
        "duration_ps": duration_ps,
        "events": events,
        "wall_time_s": wall_time_s,
        "events_per_s": _rate(events, wall_time_s),
        "warnings": all_warnings,
        "counters": dict(counters),
        "scenario": dict(scenario),
    }
    out: dict[str, Any] = _jsonable(summary)
    return out


def query_stats(flows: pd.DataFrame | Mapping[str, Any]) -> dict[str, Any]:
    """Query completion times: a query (one incast round, ``query >= 0``) completes when
    its last flow does; QCT = that time minus the query's first start. Queries with an
    unfinished flow are counted but have no QCT."""
    import numpy as np

    if "query" not in flows or not (np.asarray(flows["query"]) >= 0).any():
        return {"count": 0, "finished": 0}
    import pandas as pd

    if not isinstance(flows, pd.DataFrame):  # a mapping of column arrays
        flows = pd.DataFrame({k: np.asarray(v) for k, v in flows.items()})
    grouped = flows[flows["query"] >= 0].groupby("query")
    done = grouped["finished"].all()
    qct = (grouped["finish_ns"].max() - grouped["start_ns"].min())[done].to_numpy(dtype=np.float64)
    out: dict[str, Any] = {"count": int(len(done)), "finished": int(done.sum())}
    if qct.size:
        out |= {
            "mean_qct_ns": float(qct.mean()),
            "p50_qct_ns": float(np.percentile(qct, 50)),
            "p99_qct_ns": float(np.percentile(qct, 99)),
        }
    return out


def _link_utilization(links: Any) -> dict[str, float | None]:
    """Mean/max utilization of host access links and of core links, from the counters.

    Accepts the flat form (``mean_utilization``, ``max_utilization``,
    ``core_mean_utilization``) and the grouped form (``{"host_downlinks": {"mean",
    "max"}, "core": {"mean", "max"}}``).
    """
    out: dict[str, float | None] = {"mean": None, "max": None, "core_mean": None, "core_max": None}
    if not isinstance(links, Mapping):
        return out
    if "mean_utilization" in links or "max_utilization" in links:
        out["mean"] = links.get("mean_utilization")
        out["max"] = links.get("max_utilization")
        out["core_mean"] = links.get("core_mean_utilization")
        out["core_max"] = links.get("core_max_utilization")
        return out
    access = links.get("host_downlinks") or links.get("access") or {}
    core = links.get("core") or {}
    if isinstance(access, Mapping):
        out["mean"], out["max"] = access.get("mean"), access.get("max")
    if isinstance(core, Mapping):
        out["core_mean"], out["core_max"] = core.get("mean"), core.get("max")
    return {k: (None if v is None else abs(float(v))) for k, v in out.items()}


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


def summary_table(summary: Mapping[str, Any]) -> Table:
    """The headline results of a run as a :class:`rich.table.Table`.

    One row per size bucket (mean and p99 FCT and slowdown), with loss, timeouts, ECN marking,
    utilization, unfinished flows and simulation speed in the caption.
    """
    from rich.table import Table

    flows = summary.get("flows", {})
    seed = summary.get("seed")
    table = Table(
        title=f"Shoal {summary.get('shoal_version', '')} — seed {seed}, "
        f"{flows.get('finished', 0)}/{flows.get('total', 0)} flows finished",
        title_justify="left",
        caption_justify="left",
    )
    table.add_column("bucket", no_wrap=True)
    table.add_column("size", no_wrap=True)
    table.add_column("flows", justify="right")
    table.add_column("mean FCT", justify="right", no_wrap=True)
    table.add_column("p99 FCT", justify="right", no_wrap=True)
    table.add_column("mean\nslowdown", justify="right")
    table.add_column("p99\nslowdown", justify="right")
    buckets = list(summary.get("fct", {}).items())
    for i, (name, stats) in enumerate(buckets):
        lo, hi = stats.get("min_bytes_exclusive"), stats.get("max_bytes_inclusive")
        if name == "all":
            size = "any"
        elif lo is None:
            size = f"≤ {_fmt_bytes(hi)}"
        elif hi is None:
            size = f"> {_fmt_bytes(lo)}"
        else:
            size = f"{_fmt_bytes(lo)}–{_fmt_bytes(hi)}"
        table.add_row(
            name,
            size,
            str(stats.get("count", 0)),
            format_ns(stats.get("mean_fct_ns")),
            format_ns(stats.get("p99_fct_ns")),
            _fmt_num(stats.get("mean_slowdown")),
            _fmt_num(stats.get("p99_slowdown")),
            end_section=i + 1 < len(buckets) and buckets[i + 1][0] == "all",
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
    unfinished = flows.get("unfinished", 0)
    if unfinished:
        lines.append(f"[yellow]{unfinished} flows unfinished (excluded from FCT)[/yellow]")
    table.caption = "\n".join(lines)
    return table


def _ps_to_ns(ps: Any) -> float | None:
    return None if ps is None else float(ps) / 1e3


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n}B"
