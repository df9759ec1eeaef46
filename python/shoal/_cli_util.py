"""What every ``shoal`` command shares: the consoles, ``error:`` / ``warning:`` lines and
exit statuses, the handling of user mistakes, and the summary display.

Light on purpose (rich is imported on first print): :mod:`shoal.cli` runs a plain
``shoal run`` with it and nothing else. The command modules (:mod:`shoal._cli_app`,
:mod:`shoal._sweep_cli`, :mod:`shoal.advise.cli`, :mod:`shoal.reproduce.cli`) import
from here, never from :mod:`shoal.cli`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from shoal import _core
from shoal._files import CorruptFileError

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_USER_ERROR",
    "RUN_OPTIONS",
    "RunOption",
    "console",
    "escape",
    "fail",
    "run_command",
    "show_summary",
    "user_errors",
    "warn",
]

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE, as a shell reports a command that SIGPIPE ended.
EXIT_BROKEN_PIPE = 141

_CONSOLES: dict[str, Any] = {}


class RunOption(NamedTuple):
    """An option of ``shoal run``: its spellings, whether it takes a value (else it is a
    flag) and may be repeated, and its help."""

    flags: tuple[str, ...]
    value: bool
    repeat: bool
    help: str


#: The options of ``shoal run`` by parameter name, but ``--print-defaults`` (typer's).
RUN_OPTIONS = {
    "out": RunOption(("--out", "-o"), True, False, "Run directory."),
    "set_": RunOption(
        ("--set", "-s"),
        True,
        True,
        "Override a scenario key, e.g. --set switch.marking.cutoff.k=200KB (repeatable).",
    ),
    "seed": RunOption(("--seed",), True, False, "Override run.seed."),
    "threads": RunOption(
        ("--threads", "-j"),
        True,
        False,
        'Override run.threads: threads for this run, or "auto" for the cores available '
        "(the results are the same for any count).",
    ),
    "quiet": RunOption(("--quiet", "-q"), False, False, "No progress bar."),
    "as_json": RunOption(("--json",), False, False, "Print the summary as JSON."),
}


def console(name: str) -> Any:
    """The ``stdout`` or ``stderr`` rich console, made on first use; piped output never
    wraps (:class:`shoal._console.StreamConsole`)."""
    made = _CONSOLES.get(name)
    if made is None:
        from shoal._console import StreamConsole

        made = _CONSOLES[name] = StreamConsole(stderr=name == "stderr", highlight=False)
    return made


def _labelled(label: str, style: str, message: str) -> Any:
    """``label: message`` with the label styled and the message printed as it is: a
    message never goes through markup, whose escapes would eat a backslash before ``[``."""
    from rich.text import Text

    return Text.assemble((label, style), " ", message)


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print ``error: message`` (plain text, not markup) and exit with ``code``."""
    console("stderr").print(_labelled("error:", "bold red", message), soft_wrap=True)
    raise SystemExit(code)


def warn(message: str) -> None:
    """Print ``warning: message`` (plain text, not markup)."""
    console("stderr").print(_labelled("warning:", "yellow", message), soft_wrap=True)


@contextmanager
def user_errors(*errors: type[Exception]) -> Iterator[None]:
    """Turn user mistakes into ``error: <message>`` and exit 2: an invalid scenario, a
    damaged file, a path that cannot be read or written, and ``errors`` (a command's
    own, e.g. ``SweepError``). Ctrl-C exits 130 with the interruption's message."""
    try:
        yield
    except (_core.ScenarioError, CorruptFileError, *errors) as exc:
        fail(str(exc))
    except KeyboardInterrupt as exc:
        fail(str(exc) or "interrupted; no results written", EXIT_INTERRUPTED)
    except OSError as exc:
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        fail(f"{exc.strerror or exc}{where}")


def escape(text: str) -> str:
    """``text`` with rich markup escaped, to print it inside markup."""
    from rich.markup import escape

    return escape(text)


def show_summary(
    summary: Mapping[str, Any], path: Path | None, *, as_json: bool, written: bool = False
) -> None:
    """Print a run's summary: JSON, a rich table on a terminal, plain text otherwise;
    with ``written``, also where the run directory ``path`` was written."""
    if as_json:
        import json

        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    elif sys.stdout.isatty():
        from shoal._summary import summary_table

        stdout = console("stdout")
        stdout.print(summary_table(summary))
        if written and path is not None:
            stdout.print(f"results written to [bold]{escape(str(path))}[/bold]")
    else:
        # Piped or redirected: plain text, without importing rich (~40 ms).
        from shoal._summary import summary_text

        sys.stdout.write(summary_text(summary))
        if written and path is not None:
            sys.stdout.write(f"results written to {path}\n")


def run_command(
    scenario: Path,
    out: Path | None,
    overrides: list[str],
    *,
    quiet: bool,
    as_json: bool,
) -> None:
    """``shoal run`` once its arguments are parsed."""
    target = out if out is not None else Path("results") / scenario.stem
    with user_errors():
        progress = not quiet and console("stderr").is_terminal
        from shoal._run import run_to_dir

        # The core writes the run directory (no numpy / pandas / pyarrow here).
        path, summary = run_to_dir(scenario, target, set=overrides, progress=progress)
    show_summary(summary, path, as_json=as_json, written=True)
