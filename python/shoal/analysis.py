"""What Shoal computes from finished runs, shared by the paper experiments
(:mod:`shoal.reproduce`) and the validation drivers, so that each of those holds only
what is particular to its paper or its reference simulator.

Claims and verdicts
    A paper's claim is checked against a runs table (one row per run, as
    :meth:`shoal.store.Store.runs` gives it) by the rule of the project's audit of the
    papers: **holds** when the direction is right and, if the paper gives a number,
    Shoal's effect is within :data:`MAGNITUDE_FACTOR` of it; **direction only** when the
    direction is right but the effect is not within that factor; **fails** when the
    direction is wrong (:func:`verdict`, :func:`evaluate_claims`).

Size buckets
    Flows fall in ``small`` (at most the first bound, 100 KB by default), ``medium`` (up
    to the second, 10 MB) and ``large`` buckets, as in ``summary.json``; ``all`` holds
    every flow. :func:`bucket_stats` gives each bucket's FCT and slowdown statistics.

Pauses and occupancy
    :func:`pause_totals` reads a run's PFC totals from its summary;
    :func:`paused_ns_by_link` times each link's pauses in a window from the frame log
    (``pfc.parquet``); :func:`pooled_occupancy`, :func:`pooled_quantile` and
    :func:`time_at_least` read the switch pools' occupancy distribution
    (``occupancy.parquet``).

Flow sizes
    :func:`flow_size_cdf` reads a workload's flow-size distribution (a built-in name or a
    CDF file) as the core interpolates it; :func:`byte_fraction_upto` weighs it by bytes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where used (keeps `shoal run` start-up lean)
    import numpy.typing as npt
    import pandas as pd

__all__ = [
    "BUCKETS",
    "BUCKET_LABELS",
    "SIZE_BOUNDS",
    "DIRECTION_ONLY",
    "FAILS",
    "HOLDS",
    "MAGNITUDE_FACTOR",
    "Claim",
    "ClaimError",
    "best_over",
    "pause_totals",
    "paused_ns_by_link",
    "pooled_occupancy",
    "pooled_quantile",
    "time_at_least",
    "bucket_masks",
    "bucket_stats",
    "byte_fraction_upto",
    "flow_size_cdf",
    "claim_value",
    "direction_holds",
    "effect_size",
    "evaluate_claims",
    "format_value",
    "select_rows",
    "verdict",
]


class ClaimError(ValueError):
    """A claim that cannot be evaluated on a runs table (a column it names is missing, an
    ``expect`` that is no comparison)."""


# ---------------------------------------------------------------- claims and verdicts

#: Verdicts of a claim (see the module's documentation).
HOLDS, DIRECTION_ONLY, FAILS = "holds", "direction only", "fails"

#: How far Shoal's effect may be from the paper's, as a factor either way, and still hold.
MAGNITUDE_FACTOR = 2.0


@dataclass(slots=True)
class Claim:
    """One row of the Shoal-vs-paper table.

    ``holds`` is whether the direction is right (None when the claim states none);
    ``factor`` is Shoal's effect over the paper's (None without ``paper_value``);
    ``verdict`` is ``HOLDS``, ``DIRECTION_ONLY``, ``FAILS`` or None.
    """

    what: str
    paper: str
    shoal: float | None
    text: str
    expect: str | None
    holds: bool | None
    paper_value: float | None = None
    factor: float | None = None
    verdict: str | None = None


def effect_size(value: float, effect: str) -> float:
    """The size of a claim's effect: the value itself, the reduction ``1 - value`` of a
    new / old ratio ("X% lower"), or the increase ``value - 1`` ("X% higher")."""
    if effect == "reduction":
        return 1.0 - value
    if effect == "increase":
        return value - 1.0
    return value


def verdict(
    value: float | None, expect: str | None, paper_value: float | None, effect: str = "value"
) -> tuple[bool | None, float | None, str | None]:
    """Whether the direction holds, Shoal's effect over the paper's, and the verdict.

    Without ``expect`` the direction is that of the paper's effect (for a reduction or an
    increase: the same sign), or none at all for a plain value.
    """
    if value is None or not math.isfinite(value):
        return None, None, None
    direction = direction_holds(value, expect)
    if paper_value is None:
        return direction, None, None if direction is None else (HOLDS if direction else FAILS)
    ours, theirs = effect_size(value, effect), effect_size(paper_value, effect)
    factor = ours / theirs if theirs != 0 else None
    if direction is None:
        direction = True if effect == "value" else (factor is not None and factor > 0)
    if not direction:
        return direction, factor, FAILS
    within = factor is not None and 1 / MAGNITUDE_FACTOR <= factor <= MAGNITUDE_FACTOR
    return direction, factor, HOLDS if within else DIRECTION_ONLY


def direction_holds(value: float | None, expect: str | None) -> bool | None:
    """Whether ``value`` satisfies ``expect`` (``"<op> <number>"``, op one of ``> >= <
    <=``); None without an expectation or a finite value."""
    if expect is None or value is None or not math.isfinite(value):
        return None
    op, _, number = expect.strip().partition(" ")
    bound = float(number)
    checks: dict[str, Callable[[float, float], bool]] = {
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
    }
    if op not in checks:
        raise ClaimError(f"claim: expect must be '<op> <number>', got {expect!r}")
    return checks[op](value, bound)


def select_rows(runs: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``runs`` where each column of ``where`` has its value; ``"max"`` and
    ``"min"`` stand for that column's extremes among the rows selected so far."""
    rows = runs
    for column, value in where.items():
        if column not in rows:
            raise ClaimError(f"claim: no column {column!r} in the runs table")
        if value in ("max", "min"):
            values = rows[column].dropna()
            if values.empty:
                return rows.iloc[0:0]
            value = values.max() if value == "max" else values.min()
        rows = rows[rows[column] == value]
    return rows


def _mean_where(runs: pd.DataFrame, metric: str, where: Mapping[str, Any]) -> float | None:
    rows = select_rows(runs, where)
    if metric not in rows or rows.empty:
        return None
    import pandas as pd

    values = pd.to_numeric(rows[metric], errors="coerce").dropna()
    return float(values.mean()) if not values.empty else None


def format_value(value: float | None, fmt: str) -> str:
    """A claim's value as its table shows it: ``pct ratio int us ms gbps``, else 4
    significant digits; ``n/a`` for none."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if fmt == "pct":
        return f"{value * 100:.3g}%"
    if fmt == "ratio":
        return f"{value:.3g}x"
    if fmt == "int":
        return f"{value:,.0f}"
    if fmt == "us":
        return f"{value / 1e3:,.0f} us"
    if fmt == "ms":
        return f"{value / 1e6:.3g} ms"
    if fmt == "gbps":
        return f"{value:.1f} Gbps"
    return f"{value:.4g}"


def claim_value(
    rows: pd.DataFrame, claim: Mapping[str, Any], where: Mapping[str, Any]
) -> float | None:
    """A claim's value on ``rows``: the mean of its ``metric`` where ``where`` holds, over
    the same metric where ``ratio_to`` also holds if it has one."""
    # Resolve "max"/"min" on the numerator's rows so the ratio compares like with like.
    fixed = {}
    selected = rows
    for column, value in where.items():
        sel = select_rows(selected, {column: value})
        fixed[column] = sel[column].iloc[0] if not sel.empty else value
        selected = sel
    value = _mean_where(rows, claim["metric"], fixed)
    if claim.get("ratio_to") and value is not None:
        other = _mean_where(rows, claim["metric"], {**fixed, **dict(claim["ratio_to"])})
        value = value / other if other not in (None, 0.0) else None
    return value


def best_over(
    rows: pd.DataFrame, claim: Mapping[str, Any], where: Mapping[str, Any], column: str
) -> tuple[float | None, Any]:
    """The claim's value at the value of ``column`` where its effect is largest (for a
    plain value expected below a bound, the smallest), and that value."""
    if column not in rows:
        raise ClaimError(f"claim: no column {column!r} in the runs table")
    effect = str(claim.get("effect", "value"))
    below = str(claim.get("expect") or "").lstrip().startswith("<")
    sign = -1.0 if effect == "value" and below else 1.0
    values = (
        (claim_value(rows, claim, {**where, column: at}), at)
        for at in sorted(rows[column].dropna().unique())
    )
    candidates = [(value, at) for value, at in values if value is not None and math.isfinite(value)]
    if not candidates:
        return None, None
    # The first of equal effects, as the values of the column come in order.
    return max(candidates, key=lambda c: sign * effect_size(c[0], effect))


def evaluate_claims(claims: Iterable[Mapping[str, Any]], runs: pd.DataFrame) -> list[Claim]:
    """Shoal's value for each claim (a ``[[experiment.claims]]`` table: ``what paper
    metric where ratio_to format expect paper_value effect best_over``) on the runs that
    succeeded, means over seeds, with its verdict against the paper's."""
    ok = runs[runs["status"] == "ok"] if "status" in runs else runs
    out = []
    for c in claims:
        where = dict(c.get("where") or {})
        fmt = str(c.get("format", "num"))
        if c.get("best_over"):
            column = str(c["best_over"])
            value, at = best_over(ok, c, where, column)
            shown = f"{at:g}" if isinstance(at, int | float) else str(at)
            text = format_value(value, fmt) + (
                "" if at is None else f" ({column.split('.')[-1]} {shown})"
            )
        else:
            value = claim_value(ok, c, where)
            text = format_value(value, fmt)
        expect = c.get("expect")
        paper_value = c.get("paper_value")
        paper_value = None if paper_value is None else float(paper_value)
        holds, factor, judged = verdict(value, expect, paper_value, str(c.get("effect", "value")))
        out.append(
            Claim(
                what=str(c["what"]),
                paper=str(c.get("paper", "")),
                shoal=value,
                text=text,
                expect=expect,
                holds=holds,
                paper_value=paper_value,
                factor=factor,
                verdict=judged,
            )
        )
    return out


# ---------------------------------------------------------------- size buckets

#: The upper bounds (bytes) of the small and medium buckets: ``run.size_buckets``'s
#: default, so that statistics here match the buckets of ``summary.json``.
SIZE_BOUNDS: tuple[float, float] = (100_000, 10_000_000)
#: The buckets, in the order every table shows them.
BUCKETS = ("small", "medium", "large", "all")
#: How reports name the buckets of :data:`SIZE_BOUNDS`.
BUCKET_LABELS = {"small": "<=100KB", "medium": "100KB-10MB", "large": ">10MB", "all": "all"}


def bucket_masks(
    bytes_: Any, bounds: tuple[float, float] = SIZE_BOUNDS
) -> dict[str, npt.NDArray[Any]]:
    """Which flows of sizes ``bytes_`` each bucket of :data:`BUCKETS` holds: ``small``
    up to ``bounds[0]`` bytes, ``medium`` above it up to ``bounds[1]``, ``large`` above
    that, ``all`` every flow."""
    import numpy as np

    size = np.asarray(bytes_)
    return {
        "small": size <= bounds[0],
        "medium": (size > bounds[0]) & (size <= bounds[1]),
        "large": size > bounds[1],
        "all": np.ones(size.shape, dtype=bool),
    }


def bucket_stats(
    bytes_: Any,
    fct_ns: Any,
    slowdown: Any = None,
    *,
    finished: Any = None,
    bounds: tuple[float, float] = SIZE_BOUNDS,
    percentiles: Iterable[float] = (50, 95, 99),
) -> dict[str, dict[str, Any]]:
    """Per bucket of :data:`BUCKETS` (:func:`bucket_masks`): ``count`` (flows),
    ``finished``, and over the finished flows ``mean_fct_ns``, ``median_fct_ns`` and
    ``p<q>_fct_ns`` for each of ``percentiles``; with ``slowdown`` (one value per flow,
    e.g. FCT over an ideal FCT; NaN values are left out) also ``mean_slowdown`` and
    ``p<q>_slowdown``. A statistic of no flows is None.

    A flow is finished where ``finished`` is true, or, without it, where its FCT is not
    NaN. Percentiles interpolate linearly (:func:`numpy.percentile`); the median is
    :func:`numpy.median`'s, which can differ from the 50th percentile in the last bit.
    """
    import numpy as np

    fct = np.asarray(fct_ns, dtype=float)
    done = ~np.isnan(fct) if finished is None else np.asarray(finished, dtype=bool)
    slow = None if slowdown is None else np.asarray(slowdown, dtype=float)
    qs = tuple(percentiles)
    out: dict[str, dict[str, Any]] = {}
    for name, mask in bucket_masks(bytes_, bounds).items():
        part = fct[mask & done]
        stats: dict[str, Any] = {"count": int(mask.sum()), "finished": int((mask & done).sum())}
        stats["mean_fct_ns"] = float(part.mean()) if len(part) else None
        stats["median_fct_ns"] = float(np.median(part)) if len(part) else None
        for q in qs:
            stats[f"p{q:g}_fct_ns"] = float(np.percentile(part, q)) if len(part) else None
        if slow is not None:
            values = slow[mask & done]
            values = values[~np.isnan(values)]
            stats["mean_slowdown"] = float(values.mean()) if len(values) else None
            for q in qs:
                stats[f"p{q:g}_slowdown"] = float(np.percentile(values, q)) if len(values) else None
        out[name] = stats
    return out


# ---------------------------------------------------------------- pauses and occupancy


def pause_totals(summary: Mapping[str, Any]) -> dict[str, float]:
    """A run's PAUSE frames sent (``pauses``) and paused time summed over port classes
    (``paused_ms``), from its ``summary.json``; both 0 for a run without a lossless
    class."""
    pfc = summary.get("pfc") or {}
    return {
        "pauses": float(pfc.get("pause_frames_sent", 0)),
        "paused_ms": float(pfc.get("paused_ns", 0.0)) / 1e6,
    }


def pooled_occupancy(occupancy: pd.DataFrame) -> pd.DataFrame:
    """The time-weighted occupancy distribution of a switch pool picked uniformly at
    random, from ``occupancy.parquet`` (columns ``switch pool min_bytes max_bytes
    time_ns``): each bucket's time summed over the pools, and the CDF at its upper edge.
    Every pool's window has the same length, so summing times weighs the pools equally.
    Columns ``min_bytes max_bytes time_ns cdf``, buckets in increasing order."""
    import numpy as np

    missing = [c for c in ("min_bytes", "max_bytes", "time_ns") if c not in occupancy]
    if missing:
        raise ValueError(f"occupancy: no column {missing[0]!r}")
    pooled = occupancy.groupby(["min_bytes", "max_bytes"], sort=True)["time_ns"].sum().reset_index()
    total = float(pooled["time_ns"].sum())
    pooled["cdf"] = pooled["time_ns"].cumsum() / total if total > 0 else np.nan
    return pooled


def pooled_quantile(pooled: pd.DataFrame, q: float) -> float:
    """The upper edge of the bucket holding the ``q``-quantile (0 < q <= 1) of a
    distribution from :func:`pooled_occupancy`: the quantile lies within that bucket, at
    most 1/64 below the edge (NaN for an empty distribution)."""
    if not 0 < q <= 1:
        raise ValueError(f"q must be in (0, 1], got {q}")
    reached = pooled[pooled["cdf"] >= q - 1e-12]
    return float(reached["max_bytes"].iloc[0]) if len(reached) else float("nan")


def time_at_least(pooled: pd.DataFrame, nbytes: float) -> float:
    """The fraction of the time a distribution from :func:`pooled_occupancy` spent in the
    buckets that start at ``nbytes`` or above: the time at ``nbytes`` or more, less what
    falls in the one bucket that straddles it (at most 1/64 above ``nbytes``)."""
    total = float(pooled["time_ns"].sum())
    above = float(pooled.loc[pooled["min_bytes"] >= nbytes, "time_ns"].sum())
    return above / total if total > 0 else float("nan")


def paused_ns_by_link(events: pd.DataFrame, start_ns: float, end_ns: float) -> pd.Series:
    """The time each (node_kind, node, port) link, as the sending side of its egress, was
    paused by PFC within ``[start_ns, end_ns]``, from the frame log ``pfc.parquet``
    (``time_ns node_kind node port class pause``, in time order): a link is paused while
    at least one of its classes is, a class from its first PAUSE until the next RESUME
    (a repeated frame changes nothing, as at the receiver), a pause still in force at
    ``end_ns`` counts to ``end_ns``. Timed pauses (``pause_quanta``) are not supported:
    their expiries are not in the log."""
    if end_ns < start_ns:
        raise ValueError(f"window [{start_ns}, {end_ns}] ns ends before it starts")
    missing = [
        c for c in ("time_ns", "node_kind", "node", "port", "class", "pause") if c not in events
    ]
    if missing:
        raise ValueError(f"pfc events: no column {missing[0]!r}")
    import pandas as pd

    out: dict[tuple[Any, ...], float] = {}
    for link, frames in events.groupby(["node_kind", "node", "port"], sort=True):
        paused_classes: set[int] = set()
        since: float | None = None
        total = 0.0
        for time_ns, cls, pause in zip(
            frames["time_ns"], frames["class"], frames["pause"], strict=True
        ):
            was_paused = bool(paused_classes)
            if pause:
                paused_classes.add(int(cls))
            else:
                paused_classes.discard(int(cls))
            if not was_paused and paused_classes:
                since = float(time_ns)
            elif was_paused and not paused_classes and since is not None:
                total += max(0.0, min(float(time_ns), end_ns) - max(since, start_ns))
                since = None
        if since is not None:
            total += max(0.0, end_ns - max(since, start_ns))
        out[tuple(link)] = total
    index = pd.MultiIndex.from_tuples(list(out), names=["node_kind", "node", "port"])
    return pd.Series(list(out.values()), index=index, dtype=float, name="paused_ns")


def flow_size_cdf(cdf: str | os.PathLike[str]) -> pd.DataFrame:
    """A flow-size distribution as ``workload.cdf`` names it (a built-in name such as
    ``"websearch"``, or a file of ``<bytes> <percent>`` lines, ``#`` comments), read and
    checked by the core as a run reads it: points ``bytes`` and ``cdf`` (a fraction)
    between which sizes are interpolated linearly.

    Raises:
        ScenarioError: neither a built-in name nor a readable file, or not a CDF.
    """
    import pandas as pd

    from shoal import _core

    points = pd.DataFrame(_core.flow_size_cdf(os.fspath(cdf)), columns=["bytes", "cdf"])
    points["cdf"] /= 100
    return points


def byte_fraction_upto(cdf: pd.DataFrame, size: float) -> float:
    """The share of all bytes carried by flows of at most ``size`` bytes, for a
    distribution from :func:`flow_size_cdf`: between two points sizes are uniform, so a
    segment of probability p from a to b carries p (a + b) / 2 bytes per flow."""
    import numpy as np

    sizes = cdf["bytes"].to_numpy(dtype=float)
    a, b = sizes[:-1], sizes[1:]
    p = np.diff(cdf["cdf"].to_numpy(dtype=float))
    total = float((p * (a + b) / 2).sum())
    upto = np.clip(size, a, b)
    inside = np.where(b > a, (upto - a) / np.where(b > a, b - a, 1.0), (b <= size).astype(float))
    below = float((p * inside * (a + upto) / 2).sum())
    return below / total if total > 0 else math.nan
