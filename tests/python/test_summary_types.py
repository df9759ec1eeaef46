"""The summary's Python types (``shoal.Summary``, ``python/shoal/_summary_types.py``) are
generated from the core's JSON Schema of ``summary.json`` by ``tools/gen_summary_types.py``:
the committed file is what the generator writes from this core, and a run's summary has
exactly the keys the types declare, with values of the declared types, at every level."""

from __future__ import annotations

import importlib.util
import types
import typing
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

import shoal
from conftest import INCAST_ROUNDS, TINY
from shoal._summary_types import FlowCounts, QueryStats, Summary

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "gen_summary_types.py"
GENERATED = ROOT / "python" / "shoal" / "_summary_types.py"

#: TINY as is (no lossless class, so no ``pfc``; no query, so no query times), with a
#: lossless class (``pfc``), and under BFC (a scheme section, ``bfc``, among the counters'
#: keys); incast rounds (query times); a collective (``collectives``). Each with the
#: optional parts (``OPTIONAL``) its summary has.
OPTIONAL = {"pfc", "collectives"}
RUNS: dict[str, tuple[str | dict[str, Any], list[str], set[str]]] = {
    "lossy": (TINY, [], set()),
    "pfc": (TINY, ["switch.flow_control.kind=pfc"], {"pfc"}),
    "bfc": (
        TINY,
        [
            "switch.flow_control.kind=bfc",
            "switch.scheduler.kind=dwrr",
            "switch.scheduler.strict_queues=2",
            "workload.transport=rdma",
            "rdma.cc.kind=none",
        ],
        set(),
    ),
    "queries": (INCAST_ROUNDS, [], set()),
    "collectives": (TINY, ["workload.pattern=collective", "workload.size=40KB"], {"collectives"}),
}


def _generator() -> types.ModuleType:
    """``tools/gen_summary_types.py`` as a module (``tools`` is not a package)."""
    spec = importlib.util.spec_from_file_location("gen_summary_types", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_types_are_generated_from_the_core_schema() -> None:
    expected = _generator().render(shoal.summary_schema())
    committed = GENERATED.read_text(encoding="utf-8")
    assert committed == expected, "out of date: run python tools/gen_summary_types.py"


@pytest.mark.parametrize(
    "part",
    [
        {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        {"type": ["integer", "string"]},
        {"type": "object", "properties": {"x": {"type": "integer"}}},  # not in $defs
        {"type": "string", "enum": ["a", "b"]},
    ],
)
def test_the_generator_refuses_a_shape_it_has_no_type_for(part: dict[str, Any]) -> None:
    generator = _generator()
    schema = {"title": "Summary", "type": "object", "properties": {"part": part}}
    with pytest.raises(generator.UnknownShapeError, match=r"^Summary\.part: "):
        generator.render(schema)


@pytest.mark.parametrize(("scenario", "overrides", "optional"), RUNS.values(), ids=list(RUNS))
def test_a_runs_summary_has_the_keys_the_types_declare(
    scenario: str | dict[str, Any], overrides: list[str], optional: set[str]
) -> None:
    summary = shoal.run(scenario, set=overrides).summary
    declared = set(typing.get_type_hints(Summary))
    assert set(summary) == declared - (OPTIONAL - optional)
    assert set(summary["flows"]) == set(typing.get_type_hints(FlowCounts))
    assert list(_mismatches(summary, Summary, "summary")) == []


def test_query_times_are_declared_and_absent_until_a_query_finishes() -> None:
    """The query times come from a flattened optional struct of the core (QctStats): the
    schema marks them only as not required, and a run without a finished query leaves
    them out, which the type's ``total=False`` allows."""
    with_queries = shoal.run(INCAST_ROUNDS).summary["queries"]
    without_queries = shoal.run(TINY).summary["queries"]
    assert with_queries.get("finished") and not without_queries.get("count")
    assert set(with_queries) == set(typing.get_type_hints(QueryStats))
    assert set(without_queries) == set(_schema_of(QueryStats)["required"])


def _mismatches(value: Any, hint: Any, where: str) -> Iterator[str]:
    """Where ``value`` (a part of a run's summary, at ``where``) differs from its type
    ``hint``: a missing or undeclared key of a TypedDict, or a value of another type. A
    TypedDict whose schema allows other keys (RunCounters' scheme sections) may have them,
    and a key the schema does not require may be missing (``pfc``, the query times)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        if value is None and type(None) in typing.get_args(hint):
            return
        [hint] = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            yield f"{where}: expected a table, found {value!r}"
            return
        fields = typing.get_type_hints(hint)
        schema = _schema_of(hint)
        open_table = isinstance(schema.get("additionalProperties"), dict)
        missing = set(schema.get("required", [])) - value.keys()
        undeclared = set() if open_table else value.keys() - fields.keys()
        if missing or undeclared:
            yield f"{where}: missing {sorted(missing)}, undeclared {sorted(undeclared)}"
        for key in fields.keys() & value.keys():
            yield from _mismatches(value[key], fields[key], f"{where}.{key}")
    elif typing.get_origin(hint) in (list, dict):
        if not isinstance(value, typing.get_origin(hint)):
            yield f"{where}: expected a {hint}, found {value!r}"
            return
        # A list's entries by position, a map's by name.
        entries: Iterable[tuple[object, Any]]
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        for at, entry in entries:
            yield from _mismatches(entry, typing.get_args(hint)[-1], f"{where}[{at!r}]")
    elif hint is not Any and not _is_instance(value, hint):
        yield f"{where}: expected {hint.__name__}, found {value!r}"


def _schema_of(typed_dict: Any) -> dict[str, Any]:
    """The object of the summary's schema that ``typed_dict`` was generated from."""
    schema = shoal.summary_schema()
    return schema if typed_dict is Summary else schema["$defs"][typed_dict.__name__]


def _is_instance(value: Any, scalar: type) -> bool:
    """Whether ``value`` is a ``scalar`` as JSON reads back: an integer is a float too,
    and true is no number."""
    if scalar in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, int | float) if scalar is float else isinstance(value, scalar)
