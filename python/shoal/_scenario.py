"""Scenario loading: TOML/dict input, ``--set`` overrides and relative paths.

Everything here is plain Python data handling. Validation of keys, values and ranges
belongs to the Rust core (:func:`shoal._core.resolve`), which names the offending key
path in its :class:`ScenarioError` messages; this module only reports problems the core
cannot see (unreadable files, TOML syntax, malformed overrides).
"""

from __future__ import annotations

import json
import os
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

# Keys inside a workload table that name files, resolved against the scenario's folder.
_PATH_KEYS = ("trace", "cdf")
_CDF_SUFFIXES = (".cdf", ".txt", ".csv")


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


def parse_value(text: str) -> Any:
    """Parse an override value.

    The text is read as a TOML value when it is one (numbers, booleans, quoted strings,
    arrays, inline tables); anything else is kept verbatim as a string, so
    ``200KB`` gives ``"200KB"`` and ``0-23`` gives ``"0-23"``.
    """
    stripped = text.strip()
    try:
        return tomllib.loads(f"v = {stripped}")["v"]
    except tomllib.TOMLDecodeError:
        return stripped


def parse_override(item: str) -> tuple[str, Any]:
    """Split ``"a.b.c=value"`` into the key path and its parsed value.

    Raises:
        ScenarioError: when there is no ``=`` or the key path is empty.
    """
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep:
        raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, e.g. switch.ecn.k=200KB")
    if not key or any(not part.strip() for part in key.split(".")):
        raise ScenarioError(f"--set {item!r}: empty key path")
    return key, parse_value(value)


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
    else:
        pairs = [parse_override(item) for item in overrides]
    for key, value in pairs:
        parts = [p.strip() for p in key.split(".")]
        table: dict[str, Any] = data
        for depth, part in enumerate(parts[:-1]):
            child = table.setdefault(part, {})
            if not isinstance(child, dict):
                path = ".".join(parts[: depth + 1])
                raise ScenarioError(f"--set {key}: {path} is a value, not a table")
            table = child
        table[parts[-1]] = value
    return data


def _looks_like_path(value: str) -> bool:
    return "/" in value or os.sep in value or value.lower().endswith(_CDF_SUFFIXES)


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    """Make workload file paths absolute, relative to ``base``.

    ``workload.trace`` is always a path. ``workload.cdf`` is a path when it names an
    existing file relative to ``base`` or looks like one (has a ``/`` or a ``.cdf`` /
    ``.txt`` / ``.csv`` suffix); otherwise it is a built-in distribution name.
    """
    workload = data.get("workload")
    if not isinstance(workload, dict):
        return
    tables: list[tuple[str, dict[str, Any]]] = [("workload", workload)]
    extra = workload.get("extra")
    if isinstance(extra, list):
        tables += [(f"workload.extra[{i}]", t) for i, t in enumerate(extra) if isinstance(t, dict)]
    for prefix, table in tables:
        for key in _PATH_KEYS:
            value = table.get(key)
            if not isinstance(value, str) or not value:
                continue
            candidate = (base / value).expanduser()
            is_path = key == "trace" or candidate.is_file() or _looks_like_path(value)
            if not is_path:
                continue
            if not candidate.is_file():
                raise ScenarioError(f"{prefix}.{key}: file not found: {candidate}")
            table[key] = str(candidate.resolve())


def _json_default(value: Any) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise ScenarioError(f"scenario value {value!r} ({type(value).__name__}) is not TOML/JSON data")


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``data`` as plain JSON types (paths become strings)."""
    out: dict[str, Any] = json.loads(json.dumps(data, default=_json_default))
    return out


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
        source = Path(text).expanduser()
        if not source.is_file():
            raise error(f"{what} file not found: {source}")
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise error(f"cannot read {what} file {source}: {exc}") from None
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as exc:
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
    data = _plain(data)  # TOML dates or override values that are not JSON data fail here
    base = source.parent.resolve() if source is not None else Path.cwd()
    _resolve_paths(data, base)
    return LoadedScenario(data=data, source=source, name=name)
