"""Human units in and out: rates, times and sizes.

Input strings are read with the scenario schema's own grammar, in the core
(``_core.split_quantity``): rates ``100Gbps``, times ``2us``, sizes ``3MB`` (KB/MB/GB are
powers of 1000) or ``128KiB`` (KiB/MiB/GiB are powers of 1024); a plain number is bytes
for a size. A rate or a time needs a unit here (``100`` alone would be ambiguous).
Numbers given from Python (``int``/``float``) are SI: bits per second, seconds, bytes.

Values are exact (:class:`fractions.Fraction` of the number as written times the unit)
so that the papers' worked examples come out to the byte.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from shoal import _core, _units

__all__ = [
    "AdviseError",
    "AdviseWarning",
    "Number",
    "as_number",
    "fmt_bytes",
    "fmt_bytes_short",
    "fmt_count",
    "fmt_rate",
    "fmt_ratio",
    "fmt_time",
    "parse_count",
    "parse_positive",
    "parse_rate",
    "parse_size",
    "parse_time",
]

#: What the advisor functions accept for a quantity: a number (SI) or a string with units.
Number = int | float | str | Fraction

#: The SI value of one base unit of the core's quantities (bps, ps, B).
_BASE = {"rate": Fraction(1), "time": Fraction(1, 10**12), "size": Fraction(1)}
RATE_HELP = "a rate with a unit: bps, Kbps, Mbps, Gbps, Tbps (e.g. 100Gbps)"
TIME_HELP = "a time with a unit: ps, ns, us, ms, s (e.g. 2us)"
SIZE_HELP = (
    "a size in bytes, optionally with a unit: B, KB, MB, GB (powers of 1000) or "
    "KiB, MiB, GiB (powers of 1024) (e.g. 1500, 3MB, 128KiB)"
)

_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\d\s].*?)?\s*$")


class AdviseError(ValueError):
    """A bad input to the advisor. ``param`` names the input (a Python keyword)."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message


class AdviseWarning(UserWarning):
    """A legal but probably mistaken input (80 ms where 80 us was meant). ``param`` names
    the input (a Python keyword)."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message


def _split(param: str, value: str, expected: str) -> tuple[Fraction, str]:
    match = _QUANTITY.match(value)
    if not match:
        raise AdviseError(param, f"cannot read {value!r}; expected {expected}")
    try:
        number = Fraction(Decimal(match.group(1)))
    except (InvalidOperation, ValueError):
        raise AdviseError(param, f"cannot read {value!r}; expected {expected}") from None
    return number, (match.group(2) or "").strip()


def _from_python(param: str, value: object, expected: str) -> Fraction | None:
    """A Python number as a Fraction; None for strings; error for anything else."""
    if isinstance(value, bool):
        raise AdviseError(param, f"expected {expected}, got {value!r}")
    if isinstance(value, Fraction | int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise AdviseError(param, f"must be finite, got {value!r}")
        return Fraction(value)
    if isinstance(value, str):
        return None
    raise AdviseError(param, f"expected {expected}, got {type(value).__name__} {value!r}")


def _check_sign(
    param: str, value: Fraction, raw: object, *, allow_zero: bool, any_sign: bool = False
) -> Fraction:
    """``value`` if it is positive (or 0 with ``allow_zero``, or anything with
    ``any_sign``: callers that check a whole range themselves)."""
    if any_sign:
        return value
    if value < 0 or (value == 0 and not allow_zero):
        need = "at least 0" if allow_zero else "greater than 0"
        raise AdviseError(param, f"must be {need} (got {raw})")
    return value


def _parse_quantity(
    param: str,
    value: Number,
    kind: str,
    expected: str,
    *,
    unit_required: bool,
    allow_zero: bool,
    any_sign: bool,
) -> Fraction:
    """A Python number as it is (SI), or a string read by the core's grammar (exactly:
    its number as written times its unit). An unreadable string or unknown unit, a
    missing required unit or a sign outside the range is an :class:`AdviseError` naming
    ``param``."""
    number = _from_python(param, value, expected)
    if number is None:
        try:
            digits, factor = _core.split_quantity(kind, str(value))
        except _core.ScenarioError as exc:
            raise AdviseError(param, str(exc)) from None
        if factor is None and unit_required:
            raise AdviseError(param, f"{value!r} needs a unit; expected {expected}")
        number = Fraction(Decimal(digits)) * (factor or 1) * _BASE[kind]
    return _check_sign(param, number, value, allow_zero=allow_zero, any_sign=any_sign)


def parse_rate(
    param: str, value: Number, *, allow_zero: bool = False, any_sign: bool = False
) -> Fraction:
    """A rate in bits per second."""
    return _parse_quantity(
        param,
        value,
        "rate",
        RATE_HELP,
        unit_required=True,
        allow_zero=allow_zero,
        any_sign=any_sign,
    )


def parse_time(
    param: str, value: Number, *, allow_zero: bool = False, any_sign: bool = False
) -> Fraction:
    """A time in seconds."""
    return _parse_quantity(
        param,
        value,
        "time",
        TIME_HELP,
        unit_required=True,
        allow_zero=allow_zero,
        any_sign=any_sign,
    )


def parse_size(
    param: str, value: Number, *, allow_zero: bool = False, any_sign: bool = False
) -> Fraction:
    """A size in bytes (a plain number is bytes)."""
    return _parse_quantity(
        param,
        value,
        "size",
        SIZE_HELP,
        unit_required=False,
        allow_zero=allow_zero,
        any_sign=any_sign,
    )


def parse_positive(
    param: str,
    value: Number,
    *,
    allow_zero: bool = False,
    any_sign: bool = False,
    what: str = "a number",
) -> Fraction:
    """A plain (unitless) positive number, e.g. alpha, lambda or a load."""
    number = _from_python(param, value, what)
    if number is None:
        number, unit = _split(param, str(value), what)
        if unit == "%":
            number /= 100
        elif unit:
            raise AdviseError(param, f"expected {what} without a unit, got {value!r}")
    return _check_sign(param, number, value, allow_zero=allow_zero, any_sign=any_sign)


def parse_count(param: str, value: Number | None, *, minimum: int | None = 1) -> int:
    """A whole number >= ``minimum`` (ports, queues, flows); any whole number when
    ``minimum`` is None (the caller checks the range)."""
    expected = "a whole number" + (f" >= {minimum}" if minimum is not None else "")
    if isinstance(value, bool) or value is None:
        raise AdviseError(param, f"expected {expected}, got {value!r}")
    try:
        number = Fraction(value) if not isinstance(value, str) else Fraction(value.strip())
    except (ValueError, ZeroDivisionError):
        raise AdviseError(param, f"expected {expected}, got {value!r}") from None
    if number.denominator != 1 or (minimum is not None and number < minimum):
        raise AdviseError(param, f"expected {expected}, got {value!r}")
    return int(number)


def as_number(value: Fraction | int | float) -> int | float:
    """A JSON number: an int when the value is whole, else a float."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _sig(value: float, digits: int = 3) -> str:
    if value == 0:
        return "0"
    text = f"{value:.{digits}g}"
    if "e" in text:
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return text


def fmt_bytes(value: float | Fraction | None) -> str:
    """``5,591,040 B (5.59 MB, 5.33 MiB)``."""
    if value is None:
        return "-"
    v = float(value)
    exact = f"{v:,.0f} B" if abs(v - round(v)) < 1e-9 else f"{v:,.1f} B"
    if abs(v) < 1000:
        return exact
    for unit, dec, binu, binv in (
        ("GB", 1e9, "GiB", 2**30),
        ("MB", 1e6, "MiB", 2**20),
        ("KB", 1e3, "KiB", 2**10),
    ):
        if abs(v) >= dec:
            return f"{exact} ({_sig(v / dec)} {unit}, {_sig(v / binv)} {binu})"
    return exact


def fmt_bytes_short(value: float | Fraction | None) -> str:
    """``16 MiB``: binary units, three significant digits (chip tables)."""
    if value is None:
        return "-"
    v = float(value)
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(v) >= scale:
            return f"{_sig(v / scale)} {unit}"
    return f"{_sig(v)} B"


def fmt_time(value: float | Fraction | None) -> str:
    if value is None:
        return "-"
    v = float(value)
    if math.isinf(v):
        return "unbounded"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(v) >= scale:
            return f"{_sig(v / scale, 4)} {unit}"
    return f"{_sig(v / 1e-12, 4)} ps"


def fmt_rate(value: float | Fraction | None) -> str:
    """``100 Gbps``: four significant digits."""
    return "-" if value is None else _units.fmt_rate(float(value), 4)


def fmt_ratio(value: float | Fraction | None) -> str:
    if value is None:
        return "-"
    return f"{float(value) * 100:.1f}%"


def fmt_count(value: float | Fraction | None) -> str:
    if value is None:
        return "-"
    v = float(value)
    return f"{int(v):,}" if v.is_integer() else _sig(v, 4)
