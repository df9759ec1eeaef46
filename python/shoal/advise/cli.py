"""``shoal advise``: buffer sizing, ECN and PFC headroom answers from the papers' formulas.

Every command prints the numbers with units, the formula behind each, the assumptions and
the paper section, or ``--json`` (numbers in bytes, seconds and bits per second). Bad
input prints ``error: --option: ...`` with the accepted values and exits with status 2.
"""

from __future__ import annotations

import inspect
import json
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from shoal._cli_util import console, fail, user_errors, warn
from shoal.advise import formulas
from shoal.advise.check import RULES, check
from shoal.advise.chips import CHIPS, get_chip
from shoal.advise.limits import LIMITS
from shoal.advise.units import (
    AdviseError,
    AdviseWarning,
    fmt_bytes,
    fmt_bytes_short,
    fmt_count,
    fmt_rate,
    fmt_ratio,
    fmt_time,
)

__all__ = ["advise_app"]

advise_app = typer.Typer(
    name="advise",
    help="Buffer sizing, ECN thresholds and PFC headroom from the papers' formulas.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
# The shoal CLI's consoles: piped output never wraps (shoal._console).
stdout = console("stdout")
stderr = console("stderr")

#: Formula parameter -> command-line option, where the option is not the parameter's name
#: (``lambda`` is a Python keyword).
_OPTION_NAMES = {"lam": "--lambda"}


def _option(param: str) -> str:
    """The option of a formula's parameter: the one the command takes and errors name."""
    return _OPTION_NAMES.get(param, "--" + param.replace("_", "-"))


@contextmanager
def _input_warnings() -> Iterator[None]:
    """Print each :class:`AdviseWarning` as ``warning: --option: ...`` (also when an error
    follows, so it comes first); other warnings pass through unchanged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AdviseWarning)
        try:
            yield
        finally:
            for w in caught:
                if isinstance(w.message, AdviseWarning):
                    warn(f"{_option(w.message.param)}: {w.message.message}")
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Bad input: ``error: --option: ...`` and exit status 2, after any input warnings."""
    with user_errors():
        try:
            with _input_warnings():
                yield
        except AdviseError as exc:
            fail(f"{_option(exc.param)}: {exc.message}")


_FORMAT: dict[str, Callable[[Any], str]] = {
    "bytes": fmt_bytes,
    "time": fmt_time,
    "rate": fmt_rate,
    "ratio": fmt_ratio,
    "count": fmt_count,
    "number": lambda v: "-" if v is None else fmt_count(v),
    "text": lambda v: "-" if v is None else str(v),
}


def _show(advice: formulas.Advice, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(advice.to_dict(), indent=2) + "\n")
        return
    table = Table(title=f"{advice.TITLE} (shoal advise {advice.TOPIC})", title_justify="left")
    table.add_column("quantity")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("formula")
    for line in advice.lines():
        if line.value is None and line.kind != "text" and line.key not in _SHOW_NONE:
            continue
        table.add_row(line.label, _FORMAT[line.kind](line.value), line.formula)
    stdout.print(table)
    inputs = ", ".join(f"{k} = {_fmt_input(k, v)}" for k, v in advice.inputs.items())
    stdout.print(f"[bold]inputs:[/bold] {escape(inputs)}")
    _bullets("assumptions", advice.assumptions)
    _bullets("notes", advice.notes)
    _bullets("sources", advice.sources)


_SHOW_NONE = {"dsh_duration", "sih_duration"}
_INPUT_KIND = {
    "rate": "rate",
    "rtt": "time",
    "delay": "time",
    "h": "time",
    "rto_min": "time",
    "mtu": "bytes",
    "buffer": "bytes",
    "pool": "bytes",
    "reserved": "bytes",
}


def _fmt_input(key: str, value: Any) -> str:
    kind = _INPUT_KIND.get(key)
    if kind is None or not isinstance(value, int | float):
        return str(value)
    return _FORMAT[kind](value)


def _bullets(title: str, items: tuple[str, ...] | list[str]) -> None:
    if not items:
        return
    stdout.print(f"[bold]{title}:[/bold]")
    for item in items:
        stdout.print(f"  - {escape(item)}", soft_wrap=False)


def _help(text: str, param: str) -> str:
    """``text`` and the accepted range of ``param`` with its reason (from LIMITS)."""
    limits = LIMITS[param]
    return f"{text} Accepted: {limits.accepted}; {limits.why}."


# The options of the formula commands are made from the formulas' signatures
# (_advise_command): each takes a string, parsed by shoal.advise.units and checked against
# shoal.advise.limits so that every mistake gets the same "error: --option: ...".

#: The help of each formula parameter's option, where a command does not say otherwise.
_HELP = {
    "rate": _help("Link rate, e.g. 100Gbps.", "rate"),
    "rtt": _help("Base round-trip time, e.g. 80us.", "rtt"),
    "delay": _help("One-way propagation delay of the link, e.g. 2us.", "delay"),
    "mtu": _help("Largest frame on the wire, bytes (e.g. 1500, 9KB).", "mtu"),
    "ports": _help("Number of ports.", "ports"),
    "queues": _help("Lossless queues per port.", "queues"),
    "buffer": _help("Total buffer, e.g. 12MiB.", "buffer"),
    "pool": _help("Shared buffer pool B, e.g. 3MB.", "pool"),
    "alpha": _help(
        "Dynamic-threshold alpha (e.g. 4, 0.5, 1/16); repeat or "
        "comma-separate for several queues (the smallest is used).",
        "alpha",
    ),
    "chip": f"Fill in rate, ports and buffer from a preset: {', '.join(CHIPS)}.",
    "flows": _help("Concurrent long flows n.", "flows"),
    "sync": "auto (datacenter default: synchronized), sync or desync.",
    "transport": "dctcp or ecn_star.",
    "lam": _help("Override the transport's lambda (K = lambda x C x RTT).", "lam"),
    "mix": "mice (latency first) or elephant (throughput first).",
    "active": _help("Congested queues M.", "active"),
    "reserved": _help("Static reserve per queue, at most --pool.", "reserved"),
    "congested": _help("Queues already congested N; N + M at most ports x queues.", "congested"),
    "bursting": _help("Queues receiving the burst M.", "bursting"),
    "load": _help("Burst rate R of each bursting queue / its drain rate.", "load"),
    "drain": _help("Rate each queue drains at (default: --rate).", "drain"),
    "h": _help("Kmax - Kmin = C x N x h.", "h"),
    "pmax": _help("RED maximum marking probability.", "pmax"),
    "packets": _help("Flow size P in packets.", "packets"),
    "rto_min": _help("Minimum RTO, e.g. 5ms.", "rto_min"),
    "window": _help("Constant window w_c in packets.", "window"),
}

Json = Annotated[bool, typer.Option("--json", help="Print JSON (bytes, seconds, bits/s).")]


def _formula_option(param: inspect.Parameter, help_text: str) -> inspect.Parameter:
    """The command-line option of a formula's parameter: a string, with the parameter's
    default as one; ``alpha`` is repeatable (its values are joined with commas)."""
    value_type: Any
    if param.name == "alpha":
        value_type = list[str] | None
    elif param.default is None:
        value_type = str | None
    else:
        value_type = str
    default = None if param.default is None else str(param.default)
    option = typer.Option(_option(param.name), help=help_text)
    return param.replace(
        kind=inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[value_type, option],
    )


def _advise_command(
    name: str, formula: Callable[..., formulas.Advice], summary: str, **help_for: str
) -> None:
    """Register ``shoal advise NAME``, which prints what ``formula`` advises.

    Its options are the formula's parameters, in their order and with their defaults,
    then ``--json``: typer reads them, and ``--help`` shows them, from the signature made
    here, so the command cannot fall out of step with its formula. A parameter that
    :data:`_HELP` does not know stops the import (KeyError) until it is given help.

    Args:
        name: The command.
        formula: The function of :mod:`shoal.advise.formulas` it runs.
        summary: The command's help.
        **help_for: Help of a parameter's option where this formula means something else
            by it than :data:`_HELP` says.
    """
    options = [
        _formula_option(param, help_for.get(param.name) or _HELP[param.name])
        for param in inspect.signature(formula).parameters.values()
    ]
    as_json = inspect.Parameter(
        "as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Json
    )

    def command(*, as_json: bool, **args: Any) -> None:
        if "alpha" in args:
            args["alpha"] = ",".join(args["alpha"]) if args["alpha"] else None
        with _user_errors():
            advice = formula(**args)
        _show(advice, as_json)

    command.__signature__ = inspect.Signature([*options, as_json])  # type: ignore[attr-defined]
    command.__doc__ = summary
    advise_app.command(name)(command)


_advise_command(
    "bdp",
    formulas.bdp,
    "Bandwidth-delay product C x RTT.",
    mtu="Also give the BDP in packets of this size.",
)
_advise_command(
    "tail-drop",
    formulas.tail_drop,
    "Buffer for loss-based TCP: 1 BDP, or BDP/sqrt(n) for desynchronized flows.",
)
_advise_command(
    "ecn", formulas.ecn, "ECN marking threshold K per transport and the buffer it needs."
)
_advise_command(
    "headroom",
    formulas.headroom,
    "PFC headroom per queue (eta), static vs DSH totals and their share of the buffer.",
)
_advise_command(
    "dt", formulas.dt, "Buffer each of M congested queues gets under the dynamic threshold."
)
_advise_command(
    "dsh-burst",
    formulas.dsh_burst,
    "Longest burst absorbed without a PAUSE: DSH vs static headroom (DSH Theorems 1, 2).",
)
_advise_command(
    "bcc",
    formulas.bcc,
    "BCC shared-buffer ECN/RED parameters: B_R, Kmax, Kmin, Pmax.",
    lam=_help("Transport constant (0.72 DCTCP, 1 ECN*).", "lam"),
    reserved=_help("Static reserve S_min per queue, at most --pool.", "reserved"),
    ports=_help("Ports N sharing the pool (with --chip: at most one MMU's).", "ports"),
)


@advise_app.command("chip")
def chip_cmd(
    name: Annotated[str | None, typer.Argument(help="A chip preset; all when omitted.")] = None,
    as_json: Json = False,
) -> None:
    """Switch-chip presets: ports, speed, buffer, MMUs, buffer per port per Gbps, sources."""
    with _user_errors():
        chips = [get_chip(name)] if name is not None else list(CHIPS.values())
    if as_json:
        data: Any = chips[0].to_dict() if name is not None else [c.to_dict() for c in chips]
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    table = Table(title="Switch chips (shoal advise chip)", title_justify="left")
    for col, just in (
        ("chip", "left"),
        ("name", "left"),
        ("ports", "right"),
        ("buffer", "right"),
        ("MMUs", "right"),
        ("per port", "right"),
        ("per port per Gbps", "right"),
        ("buffer / capacity", "right"),
    ):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in chips:
        table.add_row(
            c.key,
            c.name,
            f"{c.ports} x {fmt_rate(c.port_rate_bps)}",
            fmt_bytes_short(c.buffer),
            str(c.mmus),
            fmt_bytes_short(c.buffer_per_port),
            fmt_bytes_short(c.buffer_per_port_per_gbps),
            fmt_time(c.buffer_time),
        )
    stdout.print(table)
    stdout.print(
        "buffer per port per Gbps = buffer / ports / port speed in Gbps (BCC Table I); "
        "buffer / capacity = buffer x 8 / (ports x speed) (DSH Fig. 4)."
    )
    for c in chips if name is not None else []:
        stdout.print(
            f"[bold]buffer per MMU:[/bold] {fmt_bytes(c.buffer_per_mmu)} for "
            f"{fmt_count(c.ports_per_mmu)} ports"
        )
        _bullets("sources", [f"{k}: {v}" for k, v in c.sources.items()])
        _bullets("notes", list(c.notes))
    if name is None:
        stdout.print("sources and notes: `shoal advise chip NAME`; all: docs/advisor.md.")


# After `chip`: `shoal advise --help` lists the commands in the order they are registered.
_advise_command(
    "loss-impact",
    formulas.loss_impact,
    "How much one loss slows a flow of P packets (LossPass Eq. 3).",
)


SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Override a scenario key, e.g. --set switch.marking.cutoff.k=10KB (repeatable).",
    ),
]


@advise_app.command("check")
def check_cmd(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    set_: SetOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with status 1 on warnings.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Warn about scenario settings likely to lose packets or throughput."""
    with _user_errors():
        report = check(scenario, set=list(set_ or []))
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        ctx = report.context
        stdout.print(
            f"[bold]{escape(report.scenario)}[/bold]: C = {fmt_rate(ctx['link_rate'])}, base RTT = "
            f"{fmt_time(ctx['rtt'])}, BDP = {fmt_bytes(ctx['bdp'])}, "
            f"pool = {fmt_bytes(ctx['pool'])}, "
            f"{ctx['congested_ports_per_pool']} of {ctx['ports_per_pool']} ports per pool can be "
            "congested together",
            soft_wrap=True,
        )
        if not report.findings:
            stdout.print(f"no problems found ({len(RULES)} rules checked)")
        else:
            table = Table(show_lines=True)
            table.add_column("severity")
            table.add_column("rule", overflow="fold")
            table.add_column("finding")
            table.add_column("source")
            for f in report.findings:
                table.add_row(f.severity, f.rule, escape(f.message), escape(f.source))
            stdout.print(table)
    if strict and report.warnings:
        raise typer.Exit(1)
