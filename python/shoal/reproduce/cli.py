"""``shoal reproduce``: run a paper experiment and print Shoal's numbers next to the paper's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``reproduce`` command to the ``shoal`` app."""

    @app.command("reproduce")
    def reproduce_cmd(
        experiment: Annotated[
            str | None,
            typer.Argument(help="PAPER/NAME, e.g. bcc/fig3 (see --list).", show_default=False),
        ] = None,
        quick: Annotated[
            bool, typer.Option("--quick", help="Small runs, minutes at most (the default).")
        ] = False,
        full: Annotated[bool, typer.Option("--full", help="The paper's scale (long).")] = False,
        jobs: Annotated[
            int | None, typer.Option("--jobs", "-j", help="Local workers \\[default: cores].")
        ] = None,
        store: Annotated[
            Path | None,
            typer.Option(help="Results store \\[default: results/reproduce/PAPER/NAME/MODE]."),
        ] = None,
        out: Annotated[
            Path | None, typer.Option("--out", "-o", help="Figures \\[default: STORE/figures].")
        ] = None,
        list_: Annotated[bool, typer.Option("--list", help="List the experiments.")] = False,
    ) -> None:
        """Reproduce a paper figure: run its sweep, draw it, print Shoal vs the paper."""
        from shoal._sweep import SweepError
        from shoal.cli import _escape, _fail, _user_errors, stderr, stdout
        from shoal.reproduce import ExperimentError, find, list_experiments, reproduce
        from shoal.store import StoreError

        if list_:
            table = Table(title="Experiments (shoal reproduce PAPER/NAME)", title_justify="left")
            for col in ("experiment", "figure", "title"):
                table.add_column(col)
            for exp in list_experiments():
                table.add_row(exp.id, exp.figure, exp.title)
            stdout.print(table)
            return
        if experiment is None:
            _fail("missing EXPERIMENT (PAPER/NAME); see `shoal reproduce --list`")
        if quick and full:
            _fail("--quick and --full exclude each other")
        mode = "full" if full else "quick"
        try:
            exp = find(experiment)
        except ExperimentError as exc:
            _fail(str(exc))
        stderr.print(f"{exp.id} ({mode}): {_escape(exp.title)}")
        with _user_errors():
            try:
                result = reproduce(
                    exp,
                    mode=mode,
                    jobs=jobs,
                    store=store,
                    out=out,
                    progress=stderr.is_terminal,
                    log=lambda line: stderr.print(_escape(line)),
                )
            except (SweepError, StoreError, ExperimentError) as exc:
                _fail(str(exc))
        failed = int((result.runs["status"] != "ok").sum())
        table = Table(
            title=f"Shoal vs paper: {exp.id} ({mode}), {_escape(exp.figure)}",
            title_justify="left",
        )
        table.add_column("metric")
        table.add_column("Shoal", justify="right")
        table.add_column("paper", justify="right")
        table.add_column("same direction", justify="center")
        for claim in result.claims:
            holds = "" if claim.holds is None else ("yes" if claim.holds else "NO")
            what = claim.what + (f" ({claim.expect})" if claim.expect else "")
            table.add_row(_escape(what), claim.text, _escape(claim.paper), holds)
        stdout.print(table)
        if mode == "quick":
            flows = (exp.sweep_spec("quick").get("set") or {}).get("workload.flows")
            size = f"{flows:,} flows per point" if isinstance(flows, int) else "a short run"
            stdout.print(
                f"quick mode: {size}; the paper's scale is `shoal reproduce {exp.id} --full`"
            )
        stdout.print(f"store: {_escape(str(result.store))}")
        for path in result.figures:
            stdout.print(f"figure: {_escape(str(path))}")
        if failed:
            _fail(f"{failed} run(s) failed; see `shoal results list {result.store} --failed`", 1)
