"""Quantities read back from a stored (resolved) scenario, with the simulator's own
parser, so that an analysis reads a value exactly as the run did: plain integers are
bytes, picoseconds and bits per second, as in scenario files.

(The advisor reads its inputs with the same grammar, exactly, as fractions; see
:mod:`shoal.advise.units`.)
"""

from __future__ import annotations

from typing import Any

from shoal import _core

__all__ = ["rate_bps", "size_bytes", "time_s"]


def size_bytes(value: Any) -> float:
    """A scenario size (``"3MB"``, ``128000``) in bytes."""
    return float(_core.parse_bytes(str(value)))


def rate_bps(value: Any) -> float:
    """A scenario rate (``"100Gbps"``) in bits per second."""
    return float(_core.parse_rate_bps(str(value)))


def time_s(value: Any) -> float:
    """A scenario time (``"5ms"``, or an integer of picoseconds) in seconds."""
    return _core.parse_time_ps(str(value)) / 1e12
