"""Options that more than one ``shoal`` command takes, declared once.

``shoal sweep`` and ``shoal reproduce`` both run a sweep: on local worker processes
(``--jobs``) or a dask cluster (``--cluster``), into a results store (``--store``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = ["ClusterOption", "JobsOption", "store_option"]

JobsOption = Annotated[
    int | None,
    typer.Option("--jobs", "-j", help="Local worker processes.", show_default="number of cores"),
]
ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster", help="Run on a dask.distributed scheduler, e.g. tcp://scheduler:8786."
    ),
]


def store_option(default: str) -> Any:
    """The ``--store`` option, for ``Annotated[Path | None, store_option(...)]``.

    Args:
        default: Where the command keeps its runs when ``--store`` is not given, for
            ``--help``.
    """
    return typer.Option("--store", help="Results store.", show_default=default)
