"""The ``shoal`` command line: run scenarios, summarize runs, export traces.

User mistakes (invalid scenarios, missing files, malformed ``--set``, unwritable output
directories) print ``error: <message>`` to stderr and exit with status 2, never a
traceback. Warnings print as ``warning: <message>`` to stderr.

This module is the entry point and stays light: the commands themselves (a typer app) are
in :mod:`shoal._cli_app`, imported only when needed. A plain ``shoal run SCENARIO
[--out DIR] [--set K=V]... [--seed N] [--quiet] [--json]`` takes a fast path that parses
its arguments here and never imports typer: typer, the pydantic it loads to run a command
and the other commands' modules add ~0.25 s to a process that otherwise takes ~0.35 s
(the ns-3 validation scenarios, 0.2 s of it simulating). Anything else (``--help``,
``--print-defaults``, unusual spellings, usage errors) goes to the typer app, which
behaves identically. ``app`` and the helpers below are also reachable as
``shoal.cli.app`` etc.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from shoal import _core
from shoal._run import RunInterrupted, ShoalWarning

if TYPE_CHECKING:
    from shoal._cli_app import app

__all__ = ["app", "main"]

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE, as a shell reports a command that SIGPIPE ended.
EXIT_BROKEN_PIPE = 141

_CONSOLES: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """``stdout`` / ``stderr`` (rich consoles, made on first use); ``app`` and the
    commands from :mod:`shoal._cli_app`."""
    if name in ("stdout", "stderr"):
        return _console(name)
    if name.startswith("__"):
        raise AttributeError(name)
    from shoal import _cli_app

    return getattr(_cli_app, name)


def _console(name: str) -> Any:
    """The ``stdout`` or ``stderr`` rich console, made on first use; piped output never
    wraps (:class:`shoal._console.StreamConsole`)."""
    console = _CONSOLES.get(name)
    if console is None:
        from shoal._console import StreamConsole

        console = _CONSOLES[name] = StreamConsole(stderr=name == "stderr", highlight=False)
    return console


def _labelled(label: str, style: str, message: str) -> Any:
    """``label: message`` with the label styled and the message printed as it is: a
    message never goes through markup, whose escapes would eat a backslash before ``[``."""
    from rich.text import Text

    return Text.assemble((label, style), " ", message)


def _fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print ``error: message`` (plain text, not markup) and exit with ``code``."""
    _console("stderr").print(_labelled("error:", "bold red", message), soft_wrap=True)
    raise SystemExit(code)


def _warn(message: str) -> None:
    """Print ``warning: message`` (plain text, not markup)."""
    _console("stderr").print(_labelled("warning:", "yellow", message), soft_wrap=True)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn user mistakes into ``error: ...`` + exit 2 (and Ctrl-C into exit 130)."""
    try:
        yield
    except _core.ScenarioError as exc:
        _fail(str(exc))
    except RunInterrupted as exc:
        _fail(str(exc), EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        _fail("interrupted; no results written", EXIT_INTERRUPTED)
    except OSError as exc:
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        _fail(f"{exc.strerror or exc}{where}")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    if issubclass(category, ShoalWarning):
        _warn(str(message))
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


_default_showwarning = warnings.showwarning


def _show_summary(
    summary: dict[str, Any], path: Path | None, *, as_json: bool, written: bool = False
) -> None:
    if as_json:
        import json

        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    elif sys.stdout.isatty():
        from shoal._summary import summary_table

        stdout = _console("stdout")
        stdout.print(summary_table(summary))
        if written and path is not None:
            stdout.print(f"results written to [bold]{_escape(str(path))}[/bold]")
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
    """``shoal run`` once its arguments are parsed (by typer or by the fast path)."""
    target = out if out is not None else Path("results") / scenario.stem
    with _user_errors():
        progress = not quiet and _console("stderr").is_terminal
        from shoal._run import run_to_dir

        # The core writes the run directory (no numpy / pandas / pyarrow here).
        path, summary = run_to_dir(scenario, target, set=overrides, progress=progress)
    _show_summary(summary, path, as_json=as_json, written=True)


_INT = re.compile(r"[0-9]{1,18}")


def _parse_fast_run(args: list[str]) -> dict[str, Any] | None:
    """The arguments of a plain ``run`` command, or None when typer should parse them
    (help, --print-defaults, unknown or repeated options, anything unusual)."""
    if len(args) < 2 or args[0] != "run":
        return None
    scenario: str | None = None
    out: str | None = None
    seed: str | None = None
    overrides: list[str] = []
    quiet = as_json = False
    it = iter(args[1:])
    for arg in it:
        value: str | None = None
        if arg.startswith("--") and "=" in arg:
            arg, value = arg.split("=", 1)
            if arg not in ("--out", "--set", "--seed"):
                return None
        if arg in ("--quiet", "-q") and not quiet:
            quiet = True
        elif arg == "--json" and not as_json:
            as_json = True
        elif arg in ("--out", "-o", "--set", "-s", "--seed"):
            if value is None:
                value = next(it, None)
                if value is None or value.startswith("-"):
                    return None
            if not value:
                return None
            if arg in ("--out", "-o"):
                if out is not None:
                    return None
                out = value
            elif arg == "--seed":
                if seed is not None or not _INT.fullmatch(value):
                    return None
                seed = value
            else:
                overrides.append(value)
        elif not arg.startswith("-") and arg and scenario is None:
            scenario = arg
        else:
            return None
    if scenario is None:
        return None
    if seed is not None:
        overrides.append(f"run.seed={int(seed)}")
    return {
        "scenario": Path(scenario),
        "out": None if out is None else Path(out),
        "overrides": overrides,
        "quiet": quiet,
        "as_json": as_json,
    }


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``shoal`` console script.

    Output that cannot be written ends it without a traceback: a closed pipe (``shoal
    ... | head -1``) quietly with status 141, as SIGPIPE ends Unix tools (SIGPIPE itself
    stays ignored: it would also kill a sweep writing to a dead worker); a full disk
    with ``error: cannot write output: ...`` and status 2.
    """
    stdout_file = _fd_identity(1)
    try:
        try:
            warnings.simplefilter("always", ShoalWarning)
            warnings.showwarning = _show_warning
            fast = _parse_fast_run(list(sys.argv[1:] if argv is None else argv))
            if fast is not None:
                scenario, out = fast.pop("scenario"), fast.pop("out")
                run_command(scenario, out, fast.pop("overrides"), **fast)
                raise SystemExit(0)  # as the typer app exits after a command
            from shoal._cli_app import app

            app(args=argv, prog_name="shoal")
        except SystemExit as exc:
            # click and rich end at a closed stdout themselves, with status 1: click
            # wraps sys.stdout in its PacifyFlushWrapper, rich points fd 1 at /dev/null.
            closed = type(sys.stdout).__name__ == "PacifyFlushWrapper"
            if exc.code == 1 and (closed or _fd_identity(1) != stdout_file):
                raise SystemExit(EXIT_BROKEN_PIPE) from None
            raise
        finally:
            # Now, while errors can be reported; at exit they print "Exception ignored".
            sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        _discard_stdout()
        _console("stderr").print(
            f"[bold red]error:[/bold red] cannot write output: {exc.strerror}", soft_wrap=True
        )
        raise SystemExit(EXIT_USER_ERROR) from None


def _fd_identity(fd: int) -> tuple[int, int] | None:
    """The file behind ``fd`` (device, inode), or None when it is closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what could not be
    written succeeds (see the note on SIGPIPE in the documentation of :mod:`signal`)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
