"""Headline metrics of a run: the summary the core computes (``summary.json``), and its
table form.

The summary has one implementation, in the core (``shoal_core::results::summary``, with
its definitions: FCT, ideal FCT, slowdown, size buckets, query completion times, loss and
ECN mark rates); a run returns it (:attr:`shoal.Result.summary`) and writes it
(``summary.json``).

A ``summary.json`` read back (``shoal summarize``, the results store) may have been
edited or replaced: :func:`read_summary` and :func:`check_summary` refuse one whose
parts have the wrong shape (``{"fct": 1}``, a string where a number belongs) with a
:class:`~shoal.CorruptFileError` naming the file and the key. A missing or null part is
legitimate (an older or partial summary): it is shown as "—".
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shoal import _core
from shoal._files import CorruptFileError, read_json
from shoal._units import fmt_size, fmt_time

if TYPE_CHECKING:  # rich is imported where used (fast `import shoal`)
    from rich.table import Table

__all__ = [
    "summary_table",
    "summary_text",
    "check_summary",
    "read_summary",
    "parse_size",
]

_COUNT = "a non-negative integer"
_NUMBER = "a number"
#: The parts of a summary that its readers use (the table and text here,
#: :func:`shoal.store.flatten_summary`, :func:`shoal.load`), and the kind of each value.
_TOP = {
    **dict.fromkeys(("timeouts", "retransmits", "cnps", "events", "duration_ps"), _COUNT),
    **dict.fromkeys(
        ("loss_rate", "switch_drop_rate", "ecn_mark_rate", "wall_time_s", "events_per_s"),
        _NUMBER,
    ),
}
_SECTIONS = {
    "flows": dict.fromkeys(("total", "finished", "unfinished"), _COUNT),
    "packets": dict.fromkeys(("sent", "dropped"), _COUNT),
    "link_utilization": dict.fromkeys(("mean", "max", "core_mean"), _NUMBER),
    "pfc": {
        **dict.fromkeys(
            (
                "pause_frames_sent",
                "resume_frames_sent",
                "pause_frames_received",
                "resume_frames_received",
                "paused_queues",
                "lossless_drops",
            ),
            _COUNT,
        ),
        **dict.fromkeys(("paused_ns", "max_paused_ns", "longest_pause_ns"), _NUMBER),
    },
}
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
_BUCKET = {
    "count": _COUNT,
    **dict.fromkeys(BUCKET_STATS[1:], _NUMBER),
    **dict.fromkeys(("min_bytes_exclusive", "max_bytes_inclusive"), _COUNT),
}
_POOL = dict.fromkeys(("mean", "p99", "max"), _NUMBER)


def parse_size(value: Any) -> int:
    """Bytes of a size value as the scenario writes it (``100KB``, ``1MiB``, ``1500``),
    read by the core's own parser so Python and the simulator never disagree."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    return int(_core.parse_bytes(str(value)))


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``summary.json`` at ``path``, checked by :func:`check_summary`.

    Raises:
        CorruptFileError: it is not a JSON object, or a part has the wrong shape.
        OSError: it cannot be read.
    """
    summary = read_json(path)
    check_summary(summary, path)
    return summary


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


def _shape_problems(summary: Mapping[str, Any]) -> Iterator[str]:
    """What is wrong with the shape of ``summary``, one message per wrong key."""
    yield from _table_problems(summary, _TOP, "")
    for name, fields in _SECTIONS.items():
        yield from _table_problems(summary.get(name), fields, name)
    fct = summary.get("fct")
    if fct is not None and not isinstance(fct, Mapping):
        yield f"key 'fct': expected a table of size buckets, found {_short(fct)}"
    for bucket, stats in (fct if isinstance(fct, Mapping) else {}).items():
        yield from _table_problems(stats, _BUCKET, f"fct.{bucket}", required=True)
    pools = summary.get("pools")
    if pools is not None and not isinstance(pools, list):
        yield f"key 'pools': expected a list of buffer pools, found {_short(pools)}"
    for i, pool in enumerate(pools if isinstance(pools, list) else []):
        yield from _table_problems(pool, _POOL, f"pools[{i}]", required=True)
    warnings = summary.get("warnings")
    if warnings is not None and not (
        isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)
    ):
        yield f"key 'warnings': expected a list of strings, found {_short(warnings)}"
    scenario = summary.get("scenario")
    if scenario is not None and not isinstance(scenario, Mapping):
        yield f"key 'scenario': expected a table, found {_short(scenario)}"


def _table_problems(
    table: Any, fields: Mapping[str, str], where: str, *, required: bool = False
) -> Iterator[str]:
    """What is wrong with ``table`` (at key ``where``; ``""`` is the top level): not a
    table (unless null and not ``required``), or a field of the wrong kind."""
    if table is None and not required:
        return
    if not isinstance(table, Mapping):
        yield f"key {where!r}: expected a table, found {_short(table)}"
        return
    for field, kind in fields.items():
        value = table.get(field)
        if value is not None and not _is_kind(value, kind):
            key = f"{where}.{field}" if where else field
            yield f"key {key!r}: expected {kind} or null, found {_short(value)}"


def _is_kind(value: Any, kind: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return kind == _NUMBER or (isinstance(value, int) and value >= 0)


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
