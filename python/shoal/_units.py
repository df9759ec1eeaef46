"""Quantities for people: times, sizes and rates in the largest unit that fits.

One set of formatters for the summary table, progress display, figures and reports.
(Reading quantities is the core's: ``_core.parse_bytes``, ``parse_time_ps``,
``parse_rate_bps`` and ``split_quantity`` follow the scenario schema's grammar.)
"""

from __future__ import annotations

import math

__all__ = ["MISSING", "fmt_rate", "fmt_size", "fmt_time"]

#: What a missing or non-finite value shows as.
MISSING = "—"

_TIME_NS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3))
_SIZE_B = (("GB", 10**9), ("MB", 10**6), ("KB", 10**3))
_RATE_BPS = (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3))


def _scaled(
    value: float | None, units: tuple[tuple[str, float], ...], last: str, spec: str, sep: str
) -> str:
    """``value`` in the first of ``units`` (largest first) it reaches, else in ``last``
    (scale 1), its number formatted with ``spec``."""
    if value is None or not math.isfinite(value):
        return MISSING
    for unit, scale in units:
        if abs(value) >= scale:
            return f"{value / scale:{spec}}{sep}{unit}"
    return f"{value:{spec}}{sep}{last}"


def fmt_time(ns: float | None, digits: int = 3) -> str:
    """A duration given in nanoseconds: ``"12.3 µs"``."""
    return _scaled(ns, _TIME_NS, "ns", f".{digits}g", " ")


def fmt_size(nbytes: float | None, spec: str = "g") -> str:
    """A size given in bytes, decimal units: ``"100KB"``, ``"1.5MB"``, ``"64B"``."""
    return _scaled(nbytes, _SIZE_B, "B", spec, "")


def fmt_rate(bps: float | None, digits: int = 3) -> str:
    """A rate given in bits per second: ``"100 Gbps"``."""
    return _scaled(bps, _RATE_BPS, "bps", f".{digits}g", " ")
