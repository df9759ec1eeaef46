"""Scenario loading: TOML/dict input, ``--set`` overrides and relative paths.

Everything here is plain Python data handling. Validation of keys, values and ranges
belongs to the Rust core (:func:`shoal._core.resolve`), which names the offending key
path in its :class:`ScenarioError` messages; this module only reports problems the core
cannot see (unreadable files, TOML syntax, malformed overrides).
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from shoal._core import ScenarioError

__all__ = [
    "Overrides",
    "ScenarioInput",
    "LoadedScenario",
    "load_scenario",
    "apply_overrides",
    "parse_override",
    "parse_value",
]

#: A scenario: a path to a TOML file, TOML text, or an already parsed mapping.
ScenarioInput: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any]"
#: Overrides: ``["a.b.c=value", ...]`` or ``{"a.b.c": value}``.
Overrides: TypeAlias = "Iterable[str] | Mapping[str, Any] | None"

#: Key paths whose values name files, resolved against the folder of the file they are
#: written in: a topology file, and the trace and size distribution of each workload.
_FILE_KEY_PATH = re.compile(r"topology\.path|workload(?:\.extra\[\d+\])?\.(?:trace|cdf)")
_CDF_SUFFIXES = (".cdf", ".txt", ".csv")
#: Deepest nesting of tables and arrays a scenario may have (scenarios use four levels;
#: deeper data would exhaust the Python stack here or the core's JSON reader).
MAX_DEPTH = 64
#: Integers the core can read: i64 or u64 (a JSON reader makes larger ones floats).
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
_INT_RANGE = "integers must be within -2^63 .. 2^64-1"


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    """A parsed scenario, before validation by the core.

    Attributes:
        data: the scenario tables, with overrides applied and file paths made absolute.
        source: the scenario file, or ``None`` when given as text or a mapping.
        name: a short name for the run (the file stem, else ``"scenario"``).
    """

    data: dict[str, Any]
    source: Path | None
    name: str

    def to_json(self) -> str:
        """The scenario as JSON text, as the core expects it."""
        return json.dumps(self.data, sort_keys=False)


class _TomlLimit(ValueError):
    """TOML beyond what can be read: nested too deep for the Python stack, or an
    integer longer than Python converts (``sys.get_int_max_str_digits()``)."""


def _digits_text(digits: str) -> str:
    """A long number abbreviated for a message: ``1000...0 (100000 digits)``."""
    sign = "-" if digits.startswith("-") else ""
    digits = digits.lstrip("+-").replace("_", "")
    return sign + (
        digits if len(digits) <= 24 else f"{digits[:4]}...{digits[-1]} ({len(digits)} digits)"
    )


def _toml_loads(text: str) -> dict[str, Any]:
    """``tomllib.loads``, whose limits raise :class:`_TomlLimit` with a clear message
    instead of a RecursionError or an integer-conversion ValueError.

    Raises:
        tomllib.TOMLDecodeError: invalid TOML.
        _TomlLimit: nesting too deep, or an integer too long.
    """
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))  # editors may add a BOM
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        raise _TomlLimit("nesting too deep") from None
    except ValueError as exc:  # int(): more digits than Python converts
        limit = sys.get_int_max_str_digits()
        found = re.search(rf"[+-]?[0-9](?:_?[0-9]){{{limit},}}", text) if limit else None
        if found is None:
            raise _TomlLimit(str(exc)) from None
        message = f"{_digits_text(found.group())} is out of range: {_INT_RANGE}"
        if "\n" in text:  # a file, not an override value
            line = text.count("\n", 0, found.start()) + 1
            message = f"line {line}: {message}"
        raise _TomlLimit(message) from None


def parse_value(text: str) -> Any:
    """Parse an override value.

    The text is read as a TOML value when it is one (numbers, booleans, quoted strings,
    arrays, inline tables); anything else is kept verbatim as a string, so
    ``200KB`` gives ``"200KB"`` and ``0-23`` gives ``"0-23"``.

    Raises:
        ScenarioError: a value nested too deep, or an integer with too many digits.
    """
    stripped = text.strip()
    try:
        return _toml_loads(f"v = {stripped}")["v"]
    except tomllib.TOMLDecodeError:
        return stripped
    except _TomlLimit as exc:
        raise ScenarioError(str(exc)) from None


def parse_override(item: str) -> tuple[str, Any]:
    """Split ``"a.b.c=value"`` into the key path and its parsed value.

    Raises:
        ScenarioError: when there is no ``=`` or the key path is empty.
    """
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep:
        raise ScenarioError(
            f"--set {item!r}: expected KEY=VALUE, e.g. switch.marking.cutoff.k=200KB"
        )
    if not key or any(not part.strip() for part in key.split(".")):
        raise ScenarioError(f"--set {item!r}: empty key path")
    try:
        return key, parse_value(value)
    except ScenarioError as exc:
        raise ScenarioError(f"--set {key}: {exc}") from None


def apply_overrides(data: dict[str, Any], overrides: Overrides) -> dict[str, Any]:
    """Apply overrides in place (and return ``data``).

    Intermediate tables are created as needed; the core later rejects unknown keys.
    """
    if overrides is None:
        return data
    if isinstance(overrides, Mapping):
        pairs = [(str(k), v) for k, v in overrides.items()]
    elif isinstance(overrides, str):
        pairs = [parse_override(overrides)]
    elif isinstance(overrides, Iterable) and not isinstance(overrides, bytes | bytearray):
        pairs = [parse_override(_override_text(item)) for item in overrides]
    else:
        raise ScenarioError(
            f"set: expected a list of 'key.path=value' strings or a mapping of key paths "
            f"to values, got {_shown(overrides)}"
        )
    for key, value in pairs:
        parts = [p.strip() for p in key.split(".")]
        table: dict[str, Any] = data
        for depth, part in enumerate(parts[:-1]):
            path = ".".join(parts[: depth + 1])
            indexed = _INDEXED.fullmatch(part)
            if indexed:
                child = _list_item(table, indexed[1], int(indexed[2]), key, path)
            else:
                child = table.setdefault(part, {})
            if not isinstance(child, dict):
                raise ScenarioError(f"--set {key}: {path} is a value, not a table")
            table = child
        table[parts[-1]] = value
    return data


def _override_text(item: Any) -> str:
    """An override of a list, which must be a ``key.path=value`` string."""
    if not isinstance(item, str):
        raise ScenarioError(
            f"set: each override is a 'key.path=value' string, e.g. run.seed=2; got {_shown(item)}"
        )
    return item


def _shown(value: Any) -> str:
    """A value and its type for a message, cut to a readable length."""
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{text} ({type(value).__name__})"


#: A key path's step into an array of tables: ``extra[0]``.
_INDEXED = re.compile(r"(\w+)\[(\d+)\]")


def _list_item(table: dict[str, Any], name: str, index: int, key: str, path: str) -> Any:
    """Item ``index`` of the array ``table[name]`` (``workload.extra[0]``), which must
    exist: an override changes a table of the scenario, it does not add one."""
    items = table.get(name)
    if not isinstance(items, list) or not items:
        raise ScenarioError(f"--set {key}: {path}: the scenario has no array of tables {name!r}")
    if index >= len(items):
        last = len(items) - 1
        raise ScenarioError(
            f"--set {key}: {path}: {name} has {len(items)} tables (accepted: index 0 to {last})"
        )
    return items[index]


def _looks_like_path(value: str) -> bool:
    """Whether a ``cdf`` value is meant as a file even where none exists (so that a
    mistyped file is reported, not taken for an unknown distribution name)."""
    return "/" in value or os.sep in value or value.lower().endswith(_CDF_SUFFIXES)


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    """Make the file paths of a scenario absolute, relative to ``base``; in place.

    ``topology.path`` and each workload's ``trace`` (``workload`` and every
    ``workload.extra[i]``) are always paths. A ``cdf`` is a path when it names an existing
    file relative to ``base`` or looks like one (has a ``/`` or a ``.cdf`` / ``.txt`` /
    ``.csv`` suffix); otherwise it is a built-in distribution name and stays as it is.

    Raises:
        ScenarioError: a path that names no file, with its key path.
    """
    _absolute_paths(data, "", base)


def _resolve_override_paths(key: str, value: Any, base: Path) -> Any:
    """``value`` with the file paths :func:`_resolve_paths` would make absolute once
    ``key`` (a key path: ``workload.cdf``, ``workload.extra[0]``, ``workload``) is set to
    it in a scenario; a copy.

    A sweep file's overrides are resolved once applied, against the sweep file's folder;
    a sweep handed over as a mapping has no folder, so whoever builds one from a file (a
    paper experiment) resolves its overrides with this first, by the same rule.

    Raises:
        ScenarioError: a path that names no file, with its key path.
    """
    key = ".".join(part.strip() for part in key.split("."))  # as apply_overrides reads it
    return _absolute_paths(copy.deepcopy(value), key, base)


def _absolute_paths(value: Any, key_path: str, base: Path) -> Any:
    """``value``, found at ``key_path`` of a scenario, with its file paths resolved
    against ``base``: tables and arrays in place, a file path returned absolute."""
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = _absolute_paths(item, f"{key_path}.{key}" if key_path else key, base)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = _absolute_paths(item, f"{key_path}[{index}]", base)
    elif isinstance(value, str) and value and _FILE_KEY_PATH.fullmatch(key_path):
        candidate = _expand_user(base / value)
        is_distribution_name = (
            key_path.endswith(".cdf") and not candidate.is_file() and not _looks_like_path(value)
        )
        if is_distribution_name:
            return value
        if not candidate.is_file():
            raise ScenarioError(f"{key_path}: file not found: {candidate}")
        return str(candidate.resolve())
    return value


def _join_key(path: str, key: str) -> str:
    """``path.key``, the key quoted as TOML quotes it when it is empty or holds a space, a
    quote or a bracket (so that ``{"": {"0": ...}}`` reads ``"".0``, not ``0``). Dotted
    keys stay as they are: in a sweep they are scenario key paths (``axes.workload.load``)."""
    if not key or any(c in key for c in ' "[]'):
        key = json.dumps(key)
    return f"{path}.{key}" if path else key


def _plain(
    data: Mapping[str, Any], error: type[Exception] = ScenarioError, where: str = ""
) -> dict[str, Any]:
    """A deep copy of ``data`` as plain JSON types (paths become strings).

    Whatever JSON or the core cannot hold raises ``error`` naming its key path (after
    ``where``, e.g. a file): a value that is not TOML/JSON data (a TOML date), an
    integer beyond 64 bits (a JSON reader would silently make it a float) or nesting
    deeper than :data:`MAX_DEPTH`.
    """

    def fail(path: str, message: str) -> Exception:
        path = path or "top level"
        if len(path) > 80:  # the path of something nested too deep
            path = path[:60] + "..."
        return error(f"{where}: {path}: {message}" if where else f"{path}: {message}")

    def walk(value: Any, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise fail(path, f"nesting too deep (more than {MAX_DEPTH} levels)")
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                key = _plain_key(k)
                if key is None:
                    raise fail(path, f"key {k!r} is not a string")
                out[key] = walk(v, _join_key(path, key), depth + 1)
            return out
        if isinstance(value, list | tuple):
            return [walk(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
        if value is None or isinstance(value, bool | float | str):
            return value
        if isinstance(value, int):
            if not INT_MIN <= value <= INT_MAX:
                raise fail(path, f"{_int_text(value)} is out of range: {_INT_RANGE}")
            return int(value)  # an IntEnum, a numpy integer subclass...
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if isinstance(value, datetime.date | datetime.time):
            raise fail(
                path,
                f"{value.isoformat()} is a TOML date/time; expected a number, string, "
                "boolean, array or table",
            )
        if hasattr(value, "tolist"):  # numpy scalars and arrays
            return walk(value.tolist(), path, depth)
        raise fail(path, f"{value!r} ({type(value).__name__}) is not TOML/JSON data")

    out: dict[str, Any] = walk(data, "", 0)
    return out


def _plain_key(key: Any) -> str | None:
    """A table key as JSON writes it (``1`` -> ``"1"``); None for keys JSON rejects."""
    if isinstance(key, str):
        return key
    return json.dumps(key) if key is None or isinstance(key, int | float) else None


def _int_text(value: int) -> str:
    try:
        return _digits_text(str(value))
    except ValueError:  # more digits than Python converts to text
        return f"an integer of more than {sys.get_int_max_str_digits()} digits"


def _expand_user(path: Path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; unchanged when that user or
    home directory is unknown (the file is then reported as not found, not a crash)."""
    try:
        return path.expanduser()
    except RuntimeError:
        return path


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing file (False for text no path can be, such as
    a TOML document longer than the system's file-name limit)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def read_toml(
    spec: str | os.PathLike[str], what: str, error: type[Exception]
) -> tuple[dict[str, Any], Path | None]:
    """TOML text, or the path of a TOML file, as tables, with the file (None for text).

    A string is TOML text when it contains a newline or a ``=``/``[`` and does not name
    an existing file; otherwise it is a path. A missing, unreadable or invalid file raises
    ``error`` with a message that names ``what`` ("scenario", "sweep") and the file.
    """
    text = os.fspath(spec)
    looks_like_toml = "\n" in text or "=" in text or "[" in text
    if isinstance(spec, str) and looks_like_toml and not _is_file(text):
        source = None
    else:
        source = _expand_user(Path(text))
        if not source.is_file():
            raise error(f"{what} file not found: {source}")
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise error(f"cannot read {what} file {source}: {exc}") from None
    try:
        return _toml_loads(text), source
    except (tomllib.TOMLDecodeError, _TomlLimit) as exc:
        raise error(f"{source or what}: invalid TOML: {exc}") from None


def load_scenario(scenario: ScenarioInput, overrides: Overrides = None) -> LoadedScenario:
    """Read a scenario from a file path, TOML text or mapping, and apply overrides.

    A string is taken as TOML text when it contains a newline or a ``=``/``[`` and does
    not name an existing file; otherwise it is a path.

    Raises:
        ScenarioError: on a missing or unreadable file, invalid TOML or a bad override.
    """
    source: Path | None = None
    if isinstance(scenario, Mapping):
        data = _plain(scenario)
    else:
        data, source = read_toml(scenario, "scenario", ScenarioError)
    name = (source.stem or "scenario") if source is not None else "scenario"
    apply_overrides(data, overrides)
    data = _plain(data)  # TOML dates, 65-bit integers... fail here, naming the key
    base = source.parent.resolve() if source is not None else Path.cwd()
    _resolve_paths(data, base)
    return LoadedScenario(data=data, source=source, name=name)
