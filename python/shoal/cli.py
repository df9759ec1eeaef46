"""The ``shoal`` command line: run scenarios, summarize runs, export traces.

User mistakes (invalid scenarios, missing files, malformed ``--set``, unwritable output
directories) print ``error: <message>`` to stderr and exit with status 2, never a
traceback. Warnings print as ``warning: <message>`` to stderr.

This module is the entry point and stays light: the commands themselves (a typer app) are
in :mod:`shoal._cli_app`, imported only when needed, and what they share is in
:mod:`shoal._cli_util`. A plain ``shoal run SCENARIO [--out DIR] [--set K=V]... [--seed
N] [--quiet] [--json]`` is parsed here with the typer command's own options
(``RUN_OPTIONS``, which the command is declared from) and never imports typer: typer, the
pydantic it loads to run a command, and the other commands' modules add ~0.22 s to a
small run that takes ~0.06 s this way. Anything else (``--help``, ``--print-defaults``,
usage errors) goes to the typer app.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from shoal._cli_util import (
    EXIT_BROKEN_PIPE,
    EXIT_USER_ERROR,
    RUN_OPTIONS,
    console,
    run_command,
    warn,
)
from shoal._run import ShoalWarning

if TYPE_CHECKING:
    from shoal._cli_app import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    """``app``: the typer app (:mod:`shoal._cli_app`), imported on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from shoal._cli_app import app

    return app


_RUN_FLAGS = {flag: name for name, option in RUN_OPTIONS.items() for flag in option.flags}
_INT = re.compile(r"[0-9]{1,18}")


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    if issubclass(category, ShoalWarning):
        warn(str(message))
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


_default_showwarning = warnings.showwarning


def _parse_fast_run(args: list[str]) -> dict[str, Any] | None:
    """The arguments of a plain ``run`` command (:data:`RUN_OPTIONS`), or None when
    typer should parse them: help, --print-defaults, an unknown or repeated option, a
    missing value, a --seed that is not a number, anything unusual."""
    if len(args) < 2 or args[0] != "run":
        return None
    scenario: str | None = None
    given: dict[str, Any] = {}
    it = iter(args[1:])
    for arg in it:
        flag, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        name = _RUN_FLAGS.get(flag)
        if name is None:
            if arg.startswith("-") or not arg or scenario is not None:
                return None
            scenario = arg
            continue
        option = RUN_OPTIONS[name]
        if not option.value:
            if has_value or name in given:
                return None
            given[name] = True
            continue
        if not has_value:
            value = next(it, "")
            if value.startswith("-"):
                return None
        if not value or (name in given and not option.repeat):
            return None
        given[name] = [*given.get(name, []), value] if option.repeat else value
    seed = given.get("seed")
    if scenario is None or (seed is not None and not _INT.fullmatch(seed)):
        return None
    overrides = list(given.get("set_", []))
    if seed is not None:
        overrides.append(f"run.seed={int(seed)}")
    if "threads" in given:
        overrides.append(f"run.threads={given['threads']}")
    out = given.get("out")
    return {
        "scenario": Path(scenario),
        "out": None if out is None else Path(out),
        "overrides": overrides,
        "quiet": given.get("quiet", False),
        "as_json": given.get("as_json", False),
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
        console("stderr").print(
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
