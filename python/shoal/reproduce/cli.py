"""``shoal reproduce``: run a paper experiment and print Shoal's numbers next to the paper's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from shoal._cli_options import ClusterOption, JobsOption, store_option
from shoal._cli_util import console, escape, fail, user_errors

__all__ = ["register"]


def reproduce_cmd(
    experiment: Annotated[
        str | None,
        typer.Argument(help="PAPER/NAME, e.g. bcc/fig3 (see --list).", show_default=False),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full/--quick",
            help="The paper's scale (minutes to hours), or small runs (seconds to about a "
            "minute on two cores).",
            show_default="--quick",
        ),
    ] = False,
    jobs: JobsOption = None,
    cluster: ClusterOption = None,
    store: Annotated[Path | None, store_option("results/reproduce/PAPER/NAME/MODE")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Figures.", show_default="STORE/figures")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments.")] = False,
) -> None:
    """Reproduce a paper figure: run its sweep, draw it, print Shoal vs the paper."""
    from shoal._sweep import SweepError
    from shoal.reproduce import (
        FAILS,
        MAGNITUDE_FACTOR,
        ExperimentError,
        find,
        list_experiments,
        reproduce,
    )
    from shoal.store import StoreError

    stdout, stderr = console("stdout"), console("stderr")

    if list_:
        table = Table(title="Experiments (shoal reproduce PAPER/NAME)", title_justify="left")
        for col in ("experiment", "figure", "title"):
            table.add_column(col)
        for exp in list_experiments():
            table.add_row(exp.id, exp.figure, exp.title)
        stdout.print(table)
        return
    if experiment is None:
        fail("missing EXPERIMENT (PAPER/NAME); see `shoal reproduce --list`")
    mode = "full" if full else "quick"
    try:
        exp = find(experiment)
    except ExperimentError as exc:
        fail(str(exc))
    stderr.print(f"{exp.id} ({mode}): {escape(exp.title)}")
    with user_errors(SweepError, StoreError, ExperimentError):
        result = reproduce(
            exp,
            mode=mode,
            jobs=jobs,
            cluster=cluster,
            store=store,
            out=out,
            progress=stderr.is_terminal,
            log=lambda line: stderr.print(escape(line)),
        )
    failed = int((result.runs["status"] != "ok").sum())
    table = Table(
        title=f"Shoal vs paper: {exp.id} ({mode}), {escape(exp.figure)}",
        title_justify="left",
    )
    table.add_column("metric")
    table.add_column("Shoal", justify="right")
    table.add_column("paper", justify="right")
    table.add_column("Shoal / paper", justify="right")
    table.add_column("verdict", justify="center")
    for claim in result.claims:
        what = claim.what + (f" ({claim.expect})" if claim.expect else "")
        factor = "" if claim.factor is None else f"{claim.factor:.3g}"
        judged = "" if claim.verdict is None else claim.verdict
        if claim.verdict == FAILS:
            judged = judged.upper()
        table.add_row(escape(what), claim.text, escape(claim.paper), factor, judged)
    stdout.print(table)
    if any(c.factor is not None for c in result.claims):
        stdout.print(
            "verdict: holds = direction right and, where the paper gives a number, "
            f"Shoal's effect within {MAGNITUDE_FACTOR:g}x of it; "
            f"direction only = right direction, not within {MAGNITUDE_FACTOR:g}x"
        )
    if exp.analytic:
        stdout.print("no simulation: computed from the paper's equations")
    elif mode == "quick":
        flows = (exp.sweep_spec("quick").get("set") or {}).get("workload.flows")
        size = f"{flows:,} flows per point" if isinstance(flows, int) else "a short run"
        stdout.print(f"quick mode: {size}; the paper's scale is `shoal reproduce {exp.id} --full`")
    stdout.print(f"store: {escape(str(result.store))}")
    for path in result.figures:
        stdout.print(f"figure: {escape(str(path))}")
    if failed:
        fail(f"{failed} run(s) failed; see `shoal results list {result.store} --failed`", 1)


def register(app: typer.Typer) -> None:
    """Add the ``reproduce`` command to the ``shoal`` app."""
    app.command("reproduce")(reproduce_cmd)
