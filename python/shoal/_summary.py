"""Headline metrics of a run: the summary the core computes (``summary.json``), and its
table form.

The summary has one implementation, in the core (``shoal_core::results::summary``, with
its definitions: FCT, ideal FCT, slowdown, size buckets, query completion times, loss and
ECN mark rates); a run returns it (:attr:`shoal.Result.summary`) and writes it
(``summary.json``). Its Python type, :class:`shoal.Summary`, is generated from the
schema (``_summary_types.py``, by ``tools/gen_summary_types.py``).

A ``summary.json`` read back (``shoal summarize``, the results store) may have been
edited or replaced: :func:`read_summary` and :func:`check_summary` refuse one whose
parts have the wrong shape (``{"fct": 1}``, a string where a number belongs) with a
:class:`~shoal.CorruptFileError` naming the file and the key. A missing or null part is
legitimate (an older or partial summary): it is shown as "—".
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from shoal import _core
from shoal._files import CorruptFileError, read_json
from shoal._units import fmt_size, fmt_time

if TYPE_CHECKING:  # rich is imported where used (fast `import shoal`)
    from rich.table import Table

    from shoal._summary_types import Summary

__all__ = [
    "summary_table",
    "summary_text",
    "check_summary",
    "read_summary",
    "parse_size",
]

#: The statistics of each size bucket of ``summary.json``'s ``fct``, in order.
BUCKET_STATS = (
    "count",
    "mean_fct_ns",
    "p50_fct_ns",
    "p99_fct_ns",
    "mean_slowdown",
    "p50_slowdown",
    "p99_slowdown",
)


def parse_size(value: Any) -> int:
    """Bytes of a size value as the scenario writes it (``100KB``, ``1MiB``, ``1500``),
    read by the core's own parser so Python and the simulator never disagree."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    return int(_core.parse_bytes(str(value)))


def read_summary(path: str | os.PathLike[str]) -> Summary:
    """The ``summary.json`` at ``path``, checked by :func:`check_summary`.

    Raises:
        CorruptFileError: it is not a JSON object, or a part has the wrong shape.
        OSError: it cannot be read.
    """
    summary = read_json(path)
    check_summary(summary, path)
    # Checked against the schema that Summary is generated from (missing keys allowed:
    # every part of Summary may be absent).
    return cast("Summary", summary)


def check_summary(summary: Mapping[str, Any], path: str | os.PathLike[str] | None = None) -> None:
    """Refuse a summary whose parts its readers use have the wrong shape (a section that
    is not a table, a string where a number belongs); missing or null parts are fine.

    Raises:
        CorruptFileError: naming ``path`` (its ``summary.json``) and the key, when given.
        ValueError: naming the key, for a summary that is not from a file.
    """
    problem = next(_shape_problems(summary), None)
    if problem is not None:
        if path is not None:
            raise CorruptFileError(path, problem)
        raise ValueError(f"not a Shoal summary: {problem}")


@functools.cache
def summary_schema() -> dict[str, Any]:
    """The JSON Schema of ``summary.json``, as the core generates it from the structs that
    write the file (their documentation is its descriptions)."""
    schema: dict[str, Any] = json.loads(_core.summary_schema())
    return schema


def _shape_problems(summary: Mapping[str, Any]) -> Iterator[str]:
    """What is wrong with the shape of ``summary`` by :func:`summary_schema`, one message
    per wrong key. A key's value may be missing or null (an older or partial summary);
    an entry of a table of entries (a size bucket) or of a list (a pool) may not."""
    schema = summary_schema()
    yield from _value_problems(summary, schema, "", schema["$defs"], nullable=False)


def _value_problems(
    value: Any, schema: Mapping[str, Any], where: str, defs: Mapping[str, Any], *, nullable: bool
) -> Iterator[str]:
    """What is wrong with ``value`` at key ``where`` (``""`` is the top) by ``schema``."""
    if "anyOf" in schema:  # how the schema writes an optional table: a table or null
        nullable = nullable or {"type": "null"} in schema["anyOf"]
        schema = next(s for s in schema["anyOf"] if s != {"type": "null"})
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else types
    if value is None:
        if not (nullable or "null" in types):
            yield f"key {where!r}: expected {_expected(schema, types)}, found null"
        return
    if not types or any(_is_type(value, t, schema) for t in types):
        yield from _part_problems(value, schema, where, defs)
        return
    or_null = " or null" if nullable or "null" in types else ""
    yield f"key {where!r}: expected {_expected(schema, types)}{or_null}, found {_short(value)}"


def _part_problems(
    value: Any, schema: Mapping[str, Any], where: str, defs: Mapping[str, Any]
) -> Iterator[str]:
    """What is wrong with the keys of a table or the entries of a list."""
    prefix = f"{where}." if where else ""
    if isinstance(value, Mapping):
        properties = schema.get("properties", {})
        for key, part in properties.items():
            yield from _value_problems(value.get(key), part, prefix + key, defs, nullable=True)
        entries = schema.get("additionalProperties")
        if isinstance(entries, Mapping):
            for key, entry in value.items():
                if key not in properties:
                    yield from _value_problems(entry, entries, prefix + key, defs, nullable=False)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, entry in enumerate(value):
            yield from _value_problems(
                entry, schema["items"], f"{where}[{i}]", defs, nullable=False
            )


def _is_type(value: Any, kind: str, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` is of JSON Schema type ``kind`` (and at least its minimum)."""
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if kind == "integer" and not isinstance(value, int):
            return False
        return bool(value >= schema.get("minimum", value))
    return {
        "object": isinstance(value, Mapping),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
    }.get(kind, False)


def _expected(schema: Mapping[str, Any], types: list[str]) -> str:
    """What a value of ``schema`` is, in words."""
    kind = next((t for t in types if t != "null"), "")
    if kind == "integer" and schema.get("minimum") == 0:
        return "a non-negative integer"
    return {
        "integer": "an integer",
        "number": "a number",
        "object": "a table",
        "array": "a list",
        "string": "a string",
        "boolean": "true or false",
    }.get(kind, "a value")


def _short(value: Any) -> str:
    """A value as JSON, cut to a readable length."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _fmt_num(value: float | None, spec: str = ".3g") -> str:
    return "—" if value is None else format(value, spec)


def _fmt_count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _fmt_pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.3g}%"


HEADERS = ("bucket", "size", "flows", "mean FCT", "p99 FCT", "mean slowdown", "p99 slowdown")


def _summary_parts(summary: Mapping[str, Any]) -> tuple[str, list[list[str]], list[str], int]:
    """The headline results as text: title, one row per size bucket (in ``HEADERS``
    order), caption lines, and the number of unfinished flows. Missing parts show as
    "—"; parts of the wrong shape are a ValueError (:func:`check_summary`)."""
    check_summary(summary)
    flows = summary.get("flows") or {}
    title = (
        f"Shoal {summary.get('shoal_version', '')} — seed {_fmt_count(summary.get('seed'))}, "
        f"{_fmt_count(flows.get('finished'))}/{_fmt_count(flows.get('total'))} flows finished"
    )
    rows = []
    for name, stats in (summary.get("fct") or {}).items():
        lo, hi = stats.get("min_bytes_exclusive"), stats.get("max_bytes_inclusive")
        if name == "all":
            size = "any"
        elif lo is None:
            size = f"≤ {fmt_size(hi)}"
        elif hi is None:
            size = f"> {fmt_size(lo)}"
        else:
            size = f"{fmt_size(lo)}–{fmt_size(hi)}"
        rows.append(
            [
                str(name),
                size,
                _fmt_count(stats.get("count")),
                fmt_time(stats.get("mean_fct_ns")),
                fmt_time(stats.get("p99_fct_ns")),
                _fmt_num(stats.get("mean_slowdown")),
                _fmt_num(stats.get("p99_slowdown")),
            ]
        )
    links = summary.get("link_utilization") or {}
    packets = summary.get("packets") or {}
    lines = [
        f"loss {_fmt_pct(summary.get('loss_rate'))} "
        f"({_fmt_count(packets.get('dropped'))}/{_fmt_count(packets.get('sent'))} packets)"
        f" · timeouts {_fmt_count(summary.get('timeouts'))}"
        f" · retransmits {_fmt_count(summary.get('retransmits'))}"
        + (f" · CNPs {summary['cnps']:,}" if summary.get("cnps") and _uses_cnps(summary) else ""),
        f"ECN marks {_fmt_pct(summary.get('ecn_mark_rate'))} of data packets"
        f" · downlink utilization mean {_fmt_pct(links.get('mean'))}"
        f", max {_fmt_pct(links.get('max'))}",
        *_pfc_lines(summary.get("pfc")),
        *_collective_lines(summary.get("collectives")),
        f"{fmt_time(_ps_to_ns(summary.get('duration_ps')))} simulated"
        f" in {_fmt_num(summary.get('wall_time_s'), '.3g')} s"
        f" ({_fmt_num(summary.get('events_per_s'), '.3g')} events/s)",
    ]
    return title, rows, lines, int(flows.get("unfinished") or 0)


def _uses_cnps(summary: Mapping[str, Any]) -> bool:
    """Whether the run's RDMA congestion control is told of congestion by CNPs: DCQCN.
    The others' senders count marked ACKs too, but they have no CNP to show. A summary
    without its scenario is taken at its word."""
    scenario = summary.get("scenario")
    if not isinstance(scenario, Mapping):
        return True
    rdma = scenario.get("rdma")
    cc = rdma.get("cc", "dcqcn") if isinstance(rdma, Mapping) else "dcqcn"
    kind = cc.get("kind", "dcqcn") if isinstance(cc, Mapping) else cc
    return kind == "dcqcn"


def _pfc_lines(pfc: Mapping[str, Any] | None) -> list[str]:
    """PFC's headline (runs with a lossless class): frames, paused time (in all, the
    longest single pause, and the most paused port class's sum), lossless drops."""
    if not pfc:
        return []
    longest = pfc.get("longest_pause_ns")  # not in summaries written before it
    return [
        f"PFC: {_fmt_count(pfc.get('pause_frames_sent'))} PAUSE"
        f" / {_fmt_count(pfc.get('resume_frames_sent'))} RESUME frames sent"
        f" · {_fmt_count(pfc.get('paused_queues'))} port classes paused,"
        f" {fmt_time(pfc.get('paused_ns'))} in all"
        + ("" if longest is None else f", longest pause {fmt_time(longest)}")
        + f", most paused port class {fmt_time(pfc.get('max_paused_ns'))} in all"
        f" · lossless drops {_fmt_count(pfc.get('lossless_drops'))}"
    ]


def _collective_lines(jobs: Any) -> list[str]:
    """Each collective job's headline: its iterations' mean and p99 time, the mean time
    from one iteration's start to the next, and NCCL's bus bandwidth."""
    if not isinstance(jobs, list):
        return []
    lines = []
    for job in jobs:
        if not isinstance(job, Mapping):
            continue
        busbw = job.get("bus_bandwidth_gbps")
        name = f"{job.get('collective', '?')} ({job.get('workload', '?')})"
        lines.append(
            f"{name}: {_fmt_count(job.get('hosts'))} hosts, {fmt_size(job.get('bytes'))},"
            f" {_fmt_count(job.get('finished'))}/{_fmt_count(job.get('iterations'))} iterations"
            f" · time mean {fmt_time(job.get('mean_time_ns'))},"
            f" p99 {fmt_time(job.get('p99_time_ns'))}"
            f" · iteration {fmt_time(job.get('mean_iteration_ns'))}"
            + ("" if busbw is None else f" · bus bandwidth {_fmt_num(busbw)} Gbps")
        )
    return lines


def summary_table(summary: Mapping[str, Any]) -> Table:
    """The headline results of a run as a :class:`rich.table.Table`.

    One row per size bucket (mean and p99 FCT and slowdown), with loss, timeouts, ECN marking,
    utilization, unfinished flows and simulation speed in the caption.
    """
    from rich.table import Table

    title, rows, lines, unfinished = _summary_parts(summary)
    table = Table(title=title, title_justify="left", caption_justify="left")
    for i, header in enumerate(HEADERS):
        wrap = header.endswith("slowdown")
        table.add_column(
            header.replace(" slowdown", "\nslowdown"),
            justify="right" if i >= 2 else "left",
            no_wrap=not wrap,
        )
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i + 1 < len(rows) and rows[i + 1][0] == "all")
    if unfinished:
        lines.append(f"[yellow]{unfinished} flows unfinished (excluded from FCT)[/yellow]")
    table.caption = "\n".join(lines)
    return table


def summary_text(summary: Mapping[str, Any]) -> str:
    """The same headline results as :func:`summary_table`, as plain fixed-width text (for
    pipes and logs: no terminal codes, and no need to import rich)."""
    title, rows, lines, unfinished = _summary_parts(summary)
    widths = [max(len(r[i]) for r in [list(HEADERS), *rows]) for i in range(len(HEADERS))]

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs)

    out = [title, line(HEADERS), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    if unfinished:
        lines.append(f"{unfinished} flows unfinished (excluded from FCT)")
    return "\n".join(out + lines) + "\n"


def _ps_to_ns(ps: Any) -> float | None:
    return None if ps is None else float(ps) / 1e3
