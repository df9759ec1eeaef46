"""The accepted range of every advisor input, and why.

Every quantity the advisor reads is parsed by :mod:`shoal.advise.units` and then checked
here: a value outside its accepted range is an :class:`~shoal.advise.units.AdviseError`
naming the input, the value and the range; a value inside it but outside the usual range
(an RTT of 80 ms where 80 us was probably meant) is an
:class:`~shoal.advise.units.AdviseWarning`. The ranges are physical: they reject what no
network has (a 10^30-byte MTU, a 0 bps link), not what is merely unusual.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from shoal.advise.units import (
    AdviseError,
    AdviseWarning,
    Number,
    fmt_bytes_short,
    fmt_count,
    fmt_rate,
    fmt_time,
    parse_count,
)

__all__ = ["LIMITS", "Limits", "count_within", "within"]


def _fmt_size(value: Fraction | int) -> str:
    """Exact bytes below 1 MB (65,535 B must not print as 64 KiB), binary units above."""
    return f"{int(value):,} B" if value < 10**6 else fmt_bytes_short(value)


def _fmt_number(value: Fraction | int) -> str:
    """1/128 as 1/128, not 0.0078."""
    value = Fraction(value)
    return f"1/{value.denominator}" if value.numerator == 1 and value < 1 else fmt_count(value)


@dataclass(frozen=True)
class Limits:
    """An input's accepted range ``low``..``high`` (``low`` excluded when ``low_open``),
    the reason for it, and an optional ``usual`` range: a value accepted but outside
    ``usual`` gets a warning with ``usual_why``."""

    low: Fraction | int
    high: Fraction | int
    why: str
    fmt: Callable[[Any], str] = fmt_count
    low_open: bool = False
    usual: tuple[Fraction | int, Fraction | int] | None = None
    usual_why: str = ""

    @property
    def accepted(self) -> str:
        """The range in words, for error messages and ``--help``."""
        low = "0" if self.low == 0 else self.fmt(self.low)  # not "0 ps"
        if self.low_open:
            return f"more than {low}, at most {self.fmt(self.high)}"
        return f"{low} to {self.fmt(self.high)}"

    def check(self, param: str, value: Fraction, raw: object) -> Fraction:
        """``value`` if it is in range; an AdviseError otherwise; warns when unusual."""
        above_low = value > self.low if self.low_open else value >= self.low
        if not above_low or value > self.high:
            raise AdviseError(
                param, f"{raw} is out of range; accepted: {self.accepted} ({self.why})"
            )
        if self.usual is not None and not self.usual[0] <= value <= self.usual[1]:
            lo, hi = (self.fmt(v) for v in self.usual)
            # stacklevel 4: the caller of the advisor function, past within() and check().
            warnings.warn(
                AdviseWarning(param, f"{raw} is outside {lo} to {hi}: {self.usual_why}"),
                stacklevel=4,
            )
        return value


_MS, _NS = Fraction(1, 10**3), Fraction(1, 10**9)
#: Queues that can share one pool: 1,024 ports x 1,024 queues (the schema's most per port).
_QUEUES_IN_POOL = 1024 * 1024
#: Lossless queues of a switch: 1,024 ports x 8 PFC priorities.
_LOSSLESS_QUEUES = 1024 * 8


def _size(why: str, *, low_open: bool = True) -> Limits:
    """Up to 64 GiB: deep-buffer switch chips (HBM) hold a few GB; none holds 64 GiB."""
    return Limits(0, 64 * 2**30, why, _fmt_size, low_open=low_open)


LIMITS: dict[str, Limits] = {
    "rate": Limits(
        10**6,
        10 * 10**12,
        "from below the slowest Ethernet, 10 Mbps, to far beyond the fastest links, 1.6 Tbps",
        fmt_rate,
    ),
    "drain": Limits(
        10**3,
        10 * 10**12,
        "a queue's share of its egress port, up to far beyond the fastest links, 1.6 Tbps",
        fmt_rate,
    ),
    "rtt": Limits(
        10 * _NS,
        10,
        "10 ns is about 1 m of fibre and back; no network path takes 10 s: "
        "a geostationary satellite hop takes 0.6 s",
        fmt_time,
        usual=(10 * _NS, 10 * _MS),
        usual_why="datacenter round trips are microseconds; did you mean us?",
    ),
    "delay": Limits(
        0,
        5,
        "0 leaves out propagation; 5 s is half the longest RTT accepted",
        fmt_time,
        usual=(0, 5 * _MS),
        usual_why="5 ms is 1,000 km of fibre; datacenter links are microseconds; did you mean us?",
    ),
    "h": Limits(
        0,
        10,
        "BCC's marking spread per port, 8 us in the paper, is no longer than the longest RTT",
        fmt_time,
        low_open=True,
        usual=(0, 10 * _MS),
        usual_why="BCC uses 8 us, a tenth of the RTT; did you mean us?",
    ),
    "mtu": Limits(
        64,
        65_535,
        "the smallest Ethernet frame to the largest IP packet",
        _fmt_size,
        usual=(64, 9216),
        usual_why="switches forward jumbo frames of at most 9,216 B",
    ),
    "buffer": _size("an empty buffer holds nothing; deep-buffer chips hold a few GB"),
    "pool": _size("an empty pool holds nothing; deep-buffer chips hold a few GB"),
    "reserved": _size("0 is no reserve; deep-buffer chips hold a few GB", low_open=False),
    "ports": Limits(1, 1024, "today's largest switch chips have 512 SerDes lanes, e.g. 512 x 100G"),
    "queues": Limits(1, 8, "PFC, IEEE 802.1Qbb, has 8 priorities, so at most 8 lossless queues"),
    "flows": Limits(1, 10**6, "a million concurrent long flows on one port is beyond any network"),
    "active": Limits(1, _QUEUES_IN_POOL, "at most 1,024 ports x 1,024 queues share a pool"),
    "congested": Limits(0, _LOSSLESS_QUEUES, "at most 1,024 ports x 8 lossless queues"),
    "bursting": Limits(1, _LOSSLESS_QUEUES, "at most 1,024 ports x 8 lossless queues"),
    "alpha": Limits(
        Fraction(1, 1024),
        1024,
        "below 1/1024 a queue gets almost nothing; above 1024 the threshold no longer limits",
        _fmt_number,
        usual=(Fraction(1, 128), 8),
        usual_why="switch chips offer alpha from 1/128 to 8 (Broadcom)",
    ),
    "lam": Limits(
        0,
        10,
        "K = lambda x C x RTT: DCTCP needs 1/7 to 0.72, ECN* 1; "
        "more than 10 BDP only adds queueing delay",
        _fmt_number,
        low_open=True,
    ),
    "load": Limits(
        1,
        1000,
        "an overload (R > 1); beyond 1,000x the drain rate the burst lasts under a packet time",
        _fmt_number,
        low_open=True,
    ),
    "pmax": Limits(0, 1, "a probability", _fmt_number, low_open=True),
    "packets": Limits(1, 10**9, "a flow of one packet up to a terabyte-sized flow"),
    "window": Limits(1, 10**6, "a congestion window of 1 packet up to a million packets"),
    "rto_min": Limits(
        10 * _NS,
        10,
        "a retransmission timer no shorter than 10 ns, no longer than the longest RTT accepted",
        fmt_time,
        usual=(10 * _NS, 1),
        usual_why="minimum RTOs range from 200 us (datacenter tuning) to 200 ms (Linux default)",
    ),
}


def within(param: str, parse: Callable[..., Fraction], value: Number, **kwargs: Any) -> Fraction:
    """``parse(param, value, **kwargs)`` (a :mod:`~shoal.advise.units` parser), checked
    against ``LIMITS[param]``."""
    # any_sign: a negative or zero value gets the range message, which names the range.
    return LIMITS[param].check(param, parse(param, value, any_sign=True, **kwargs), value)


def count_within(param: str, value: Number | None) -> int:
    """A whole number, checked against ``LIMITS[param]``."""
    number = parse_count(param, value, minimum=None)
    return int(LIMITS[param].check(param, Fraction(number), value))
