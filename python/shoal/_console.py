"""The rich console of the ``shoal`` command line: piped output never wraps.

rich assumes 80 columns when its stream is not a terminal, so a table printed to a pipe
or a file (``shoal results runs STORE | cat``) wraps or truncates its cells at 80
columns. :class:`StreamConsole` decides the width at every print instead: ``COLUMNS``
when it is set (the user asked for that width), the terminal's width on a terminal, and
:data:`PIPE_WIDTH` otherwise, wide enough that no table or line of ours wraps.
"""

from __future__ import annotations

import os
from typing import IO, Any

from rich.console import Console, ConsoleDimensions

__all__ = ["PIPE_WIDTH", "StreamConsole", "stream_width"]

#: Width of output that goes to a pipe or a file: far more than any table we print, and
#: still small enough that a renderable that pads to the full width stays cheap.
PIPE_WIDTH = 10_000


def stream_width(stream: IO[str]) -> int | None:
    """The width to print ``stream`` at: ``COLUMNS`` when set, :data:`PIPE_WIDTH` when
    ``stream`` is not a terminal, None (ask the terminal) when it is one."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    isatty = getattr(stream, "isatty", None)
    try:
        # The stream itself, not Console.is_terminal: FORCE_COLOR makes that True in CI
        # logs, which are still not terminals.
        return None if isatty is not None and isatty() else PIPE_WIDTH
    except ValueError:  # a closed stream
        return PIPE_WIDTH


class StreamConsole(Console):
    """A :class:`rich.console.Console` whose width follows its stream at each print
    (:func:`stream_width`), not the environment it was created in: the CLI's consoles
    are made once and print to whatever ``sys.stdout`` is at the time."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # rich froze COLUMNS into _width here; without it, Console.size reads COLUMNS and
        # the terminal at each print.
        self._width = None

    @property
    def size(self) -> ConsoleDimensions:
        width = stream_width(self.file)
        if width is None:
            return super().size
        return ConsoleDimensions(width, super().size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        # Kept so that the property stays writable as in rich; the stream still decides.
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]
