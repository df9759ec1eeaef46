"""The shapes of sweep and experiment files, as pydantic models, and their errors as
messages for people.

Imported only by :func:`shoal.load_sweep` and :mod:`shoal.reproduce` (pydantic takes
tens of milliseconds to import; ``shoal run`` never needs it). The models check the
shape of what a file holds: which keys exist and the kind of each value. What needs the
values together (the base scenario, the number of runs, list lengths) stays with the
code that uses them.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = ["Claim", "ExperimentSpec", "Figure", "SweepFile", "problem"]

_STRICT = ConfigDict(extra="forbid", strict=True)

NonEmptyList = Annotated[list[Any], Field(min_length=1)]
Seeds = (
    Annotated[int, Field(ge=1)] | Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)]
)
#: Keys of ``[axes]`` that give the seeds (column ``seed``).
SEED_AXES = ("seeds", "seed", "run.seed")


class SweepFile(BaseModel):
    """A sweep file's tables (see :mod:`shoal._sweep` for their meaning)."""

    model_config = _STRICT

    # The name is a file name in the store (sweeps/<name>.json): no '/' or NUL, and
    # short enough for any file system (255 bytes, less ".json").
    name: Annotated[str, Field(pattern=r"^([^./\x00][^/\x00]*)?$", max_length=200)] | None = Field(
        None,
        description="text without '/' or NUL, of at most 200 characters, that does not "
        "start with '.'",
    )
    base: str | dict[str, Any] | None = Field(None, description="a scenario file path or a table")
    scenario: dict[str, Any] | None = Field(None, description="a table (the base scenario)")
    store: Annotated[str, Field(pattern=r"^[^\x00]+$")] | None = Field(
        None, description="a directory path"
    )
    set: dict[str, Any] = Field({}, description="a table of overrides")
    schemes: dict[str, dict[str, Any]] = Field(
        {}, description="a table of overrides for each scheme"
    )
    axes: dict[str, NonEmptyList] = Field(
        {}, description='a non-empty list of values (quote dotted keys: "a.b" = [...])'
    )
    axis_seeds: Seeds | None = Field(
        None, description="a positive count or a non-empty list of non-negative integers"
    )
    zip: dict[str, NonEmptyList] = Field(
        {}, description='a non-empty list of values (quote dotted keys: "a.b" = [...])'
    )
    labels: dict[str, NonEmptyList] = Field({}, description="a non-empty list of names")
    seeds: Seeds | None = Field(
        None, description="a positive count or a non-empty list of non-negative integers"
    )

    @model_validator(mode="before")
    @classmethod
    def _seed_axis(cls, data: Any) -> Any:
        """``[axes] seeds = ...`` (or ``seed``, ``run.seed``) is the seeds, not an axis of
        values: it moves to ``axis_seeds`` (a name no file can use: unknown keys are
        refused first)."""
        if not isinstance(data, dict):
            return data
        if "axis_seeds" in data:
            raise ValueError("unknown key 'axis_seeds'")
        axes = data.get("axes")
        if not isinstance(axes, dict):
            return data
        given = [k for k in SEED_AXES if k in axes]
        if len(given) + ("seeds" in data) > 1:
            raise ValueError("seeds are given twice")
        if given:
            data = {**data, "axes": {k: v for k, v in axes.items() if k != given[0]}}
            data["axis_seeds"] = axes[given[0]]
        return data

    @model_validator(mode="after")
    def _one_base(self) -> SweepFile:
        if (self.base is None) == (self.scenario is None):
            raise ValueError(
                'give the base scenario as `base = "file.toml"` or a [scenario] table (exactly one)'
            )
        return self


class Claim(BaseModel):
    """A row of the "Shoal vs paper" table (see :mod:`shoal.reproduce`)."""

    model_config = _STRICT

    what: str = Field(description="text")
    paper: str = Field("", description="text")
    metric: str = Field(description="a column of the runs table")
    where: dict[str, Any] = Field({}, description="a table of column = value")
    ratio_to: dict[str, Any] | None = Field(None, description="a table of column = value")
    format: Literal["pct", "ratio", "int", "us", "ms", "gbps", "num"] = Field(
        "num", description="pct, ratio, int, us, ms, gbps or num"
    )
    expect: str | None = Field(None, description="'<op> <number>', e.g. '> 1'")
    paper_value: float | int | None = Field(
        None, description="a number: the paper's, in the units of Shoal's value"
    )
    effect: Literal["value", "reduction", "increase"] = Field(
        "value", description="value, reduction or increase"
    )
    best_over: str | None = Field(None, description="a column of the runs table")
    modes: list[Literal["quick", "full"]] = Field(
        ["quick", "full"], description="the modes whose runs can give it: quick, full"
    )

    @model_validator(mode="after")
    def _effect_needs_a_number(self) -> Claim:
        if self.effect != "value" and self.paper_value is None:
            raise ValueError(f"effect = {self.effect!r} compares with paper_value: give it")
        return self


class Figure(BaseModel):
    """A figure of an experiment. Keys beyond these go to the plot function (its own
    parameters), so they are allowed here."""

    model_config = ConfigDict(extra="allow", strict=True)

    name: str = Field(description="a file stem")
    kind: str = Field(description="a plot: fct_vs_load, loss_vs_load, metric_vs, ...")
    each: str | None = Field(None, description="a column name")
    where: dict[str, Any] | None = Field(None, description="a table of column = value")
    title: str | None = Field(None, description="text")


class ExperimentSpec(BaseModel):
    """An experiment file's ``[experiment]`` table."""

    model_config = _STRICT

    title: str = Field(description="text")
    paper: str = Field(description="the paper's file name")
    figure: str = Field(description="text")
    description: str = Field("", description="text")
    analysis: str | None = Field(None, description="the name of an analysis")
    quick: dict[str, Any] = Field({}, description="a table of sweep keys")
    full: dict[str, Any] = Field({}, description="a table of sweep keys")
    figures: list[Figure] = Field([], description="a list of [[experiment.figures]] tables")
    claims: list[Claim] = Field([], description="a list of [[experiment.claims]] tables")


def _path(loc: tuple[int | str, ...]) -> str:
    """A location as a key path: ``axes.workload.load``, ``claims[2].format``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _in_data(data: Any, loc: tuple[int | str, ...]) -> tuple[tuple[int | str, ...], Any]:
    """The parts of ``loc`` that are a path in ``data`` (pydantic adds the names of
    union members, which are not), and the value there."""
    found: tuple[int | str, ...] = ()
    for part in loc:
        in_list = isinstance(data, list) and isinstance(part, int) and part < len(data)
        if in_list or (isinstance(data, dict) and part in data):
            found, data = (*found, part), data[part]
    return found, data


def _nested(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The model that field ``name`` of ``model`` holds (itself or as list items)."""
    field = model.model_fields.get(name)
    args = getattr(field.annotation, "__args__", ()) if field else ()
    return next((t for t in args if isinstance(t, type) and issubclass(t, BaseModel)), None)


def _field(model: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[type[BaseModel], str]:
    """The model and field name that ``loc`` (without list indices) ends in, or that
    holds the free-form table it goes into."""
    keys = [p for p in loc if isinstance(p, str)]
    for key in keys[:-1]:
        nested = _nested(model, key)
        if nested is None:
            return model, key
        model = nested
    return model, keys[-1] if keys else ""


def problem(error: ValidationError, model: type[BaseModel], data: Any, prefix: str = "") -> str:
    """The main problem of ``error`` (validating ``data`` as ``model``) as one line: the
    key path under ``prefix``, the bad value and what is accepted, or the unknown key
    and the keys that exist."""
    # Of a union's errors (one per member), the one that reaches deepest into the data.
    errors = error.errors(include_url=False)
    first = max(errors, key=lambda e: len(_in_data(data, tuple(e["loc"]))[0]))
    loc = tuple(first["loc"])
    full = ((prefix,) if prefix else ()) + loc
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        owner, _ = _field(model, (*loc[:-1], ""))
        known = ", ".join(sorted(k for k in owner.model_fields if k != "axis_seeds"))
        return f"unknown key {_path(full)!r}; expected one of {known}"
    if first["type"] == "value_error" and loc:
        found, value = _in_data(data, loc)
        if isinstance(value, dict):  # a check of a whole nested table
            return f"{_path(((prefix,) if prefix else ()) + found)}: {message}"
    owner, name = _field(model, loc)
    accepted = owner.model_fields[name].description if name in owner.model_fields else None
    if first["type"] == "missing":
        return f"{_path(full)}: missing; expected {accepted or 'a value'}"
    if not loc:  # a check of the whole table
        return f"{prefix}: {message}" if prefix else message
    found, value = _in_data(data, loc)
    where = _path(((prefix,) if prefix else ()) + found)
    return f"{where}: expected {accepted or message}, got {_show(value)}"
