"""``shoal reproduce``: paper experiments, each one sweep plus what the paper reported.

An experiment is a sweep file (the format of ``shoal sweep``) with an ``[experiment]``
table, stored as ``shoal/experiments/<paper>/<name>.toml`` (package data, so an
installed Shoal finds it; ``experiments/<paper>/README.md`` in the repository points
there)::

    [experiment]
    title = "..."
    paper = "bcc-shared-buffer-ecn.md"      # the paper's short name
    figure = "Fig. 3 (section III-C)"
    description = "..."
    analysis = "bcc.goodput"                 # optional: extra columns (see ANALYSES)

    [experiment.quick]                       # merged into the sweep in quick mode:
    set = { "workload.flows" = 400 }         #   set/schemes/axes/zip merge key by key,
    axes = { "workload.load" = [0.4, 0.9] }  #   other keys (seeds) are replaced
    seeds = [1]
    [experiment.full]                        # the same for --full (the paper's scale)

    [[experiment.figures]]                   # figures, drawn with shoal.plot
    name = "fct"                             # file stem: <out>/<name>.png and .pdf
    kind = "fct_vs_load"                     # fct_vs_load | loss_vs_load | metric_vs
    normalize_to = "dctcp_k200"              # further keys go to the plot function
    each = "workload.cdf"                    # optional: one figure per value of a column

    [[experiment.claims]]                    # rows of the "Shoal vs paper" table
    what = "loss rate, K=720KB, highest load"
    paper = "0.34% (90% load)"               # the paper's number, as text
    metric = "loss_rate"                     # a column of the runs table (mean over seeds)
    where = { scheme = "dctcp_k720", "workload.load" = "max" }   # "max"/"min": extremes
    ratio_to = { scheme = "dctcp_k200" }     # optional: divide by the same row but these
    format = "pct"                           # pct | ratio | int | us | ms | gbps | num
    expect = "> 1"                           # optional: the paper's direction, checked
    paper_value = 3.4                        # optional: the paper's number, in Shoal's units
    effect = "value"                         # how magnitudes compare (see `verdict`)
    best_over = "workload.load"              # optional: for "up to X": the value of this
                                             #   column where the effect is largest
    modes = ["full"]                         # optional: the modes that make its runs
                                             #   (default both); others leave it out

Each claim gets a verdict, by the rule of the project's audit of the five papers:
**holds** when the direction is right and, if the paper gives a number, Shoal's effect is
within 2x of it; **direction only** when the direction is right but the effect is not
within 2x; **fails** when the direction is wrong. A claim with neither ``expect`` nor
``paper_value`` is shown without a verdict.

A file without ``[scenario]`` (and without ``base``) simulates nothing: its analysis
(required then) gets an empty runs table and returns the rows to draw and to check the
claims on, each with ``status = "ok"`` (e.g. ``dsh/fig4``, computed from the paper's
equations and the advisor's chip presets).

Run with :func:`reproduce` or ``shoal reproduce PAPER/NAME [--quick|--full]``.
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shoal._core import ScenarioError
from shoal._scenario import _resolve_override_paths, _resolve_paths
from shoal.analysis import (
    DIRECTION_ONLY,
    FAILS,
    HOLDS,
    MAGNITUDE_FACTOR,
    Claim,
    ClaimError,
    effect_size,
    select_rows,
    verdict,
)
from shoal.analysis import evaluate_claims as _evaluate_claims

if TYPE_CHECKING:  # pandas is imported where used (keeps `shoal run` start-up lean)
    import pandas as pd

__all__ = [
    "ANALYSES",
    "DIRECTION_ONLY",
    "FAILS",
    "FIGURES",
    "HOLDS",
    "MAGNITUDE_FACTOR",
    "Claim",
    "Experiment",
    "ExperimentError",
    "ReproduceResult",
    "effect_size",
    "evaluate_claims",
    "experiments_root",
    "find",
    "list_experiments",
    "load_experiment",
    "reproduce",
    "verdict",
]

MODES = ("quick", "full")
_MERGED = ("set", "schemes", "axes", "zip", "labels")


class ExperimentError(ValueError):
    """An unknown experiment or a malformed experiment file."""


def experiments_root() -> Path:
    """The folder holding ``<paper>/<name>.toml`` (package data of ``shoal``)."""
    return Path(str(resources.files("shoal") / "experiments"))


@dataclass(slots=True)
class Experiment:
    """One experiment file: its sweep (without mode overrides) and its description."""

    id: str
    path: Path
    title: str
    paper: str
    figure: str
    description: str
    sweep: dict[str, Any]
    modes: dict[str, dict[str, Any]]
    figures: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    analysis: str | None = None

    @property
    def analytic(self) -> bool:
        """True for a file with no sweep (no ``[scenario]`` nor ``base``): its analysis
        computes the whole table from the paper's formulas."""
        return "scenario" not in self.sweep and "base" not in self.sweep

    def sweep_spec(self, mode: str) -> dict[str, Any]:
        """The sweep for ``mode`` (``quick`` or ``full``), as a mapping for shoal.sweep,
        its file paths made absolute (relative ones are relative to the experiment file).

        Raises:
            ExperimentError: an unknown mode, or a file path that names no file.
        """
        if mode not in MODES:
            raise ExperimentError(f"unknown mode {mode!r}; expected quick or full")
        spec = copy.deepcopy(self.sweep)
        for key, value in self.modes.get(mode, {}).items():
            if key in _MERGED and isinstance(value, Mapping):
                merged = dict(spec.get(key) or {})
                merged.update(copy.deepcopy(dict(value)))
                spec[key] = merged
            else:
                spec[key] = copy.deepcopy(value)
        if "seeds" in self.modes.get(mode, {}) and isinstance(spec.get("axes"), Mapping):
            spec["axes"] = {
                k: v for k, v in spec["axes"].items() if k not in ("seeds", "seed", "run.seed")
            }
        if "seeds" in (spec.get("axes") or {}) and "seeds" in spec:
            del spec["seeds"]
        folder = self.path.parent.resolve()
        if isinstance(spec.get("base"), str):  # relative to the experiment file
            spec["base"] = str((folder / spec["base"]).resolve())
        try:
            _resolve_files(spec, folder)
        except ScenarioError as exc:
            raise ExperimentError(f"{self.path}: {exc}") from None
        spec["name"] = self.id.replace("/", "-") + f"-{mode}"
        return spec


def _resolve_files(spec: dict[str, Any], folder: Path) -> None:
    """Make the file paths of an experiment's sweep absolute, relative to the experiment's
    ``folder``, by the rule of scenario files (:func:`shoal._scenario._resolve_paths`):
    in the inline scenario (``[scenario]`` or a ``base`` table), in every override and in
    each value of an axis or a zipped list. The sweep reaches :func:`shoal.sweep` as a
    mapping, whose paths would be read relative to the working directory; resolved here,
    experiments can ship such files.

    Raises:
        ScenarioError: a path that names no file next to the experiment.
    """
    for inline in ("scenario", "base"):  # `base` is a table here, or a file resolved before
        if isinstance(spec.get(inline), dict):
            _resolve_paths(spec[inline], folder)
    schemes = spec.get("schemes")
    for overrides in (spec.get("set"), *(schemes.values() if isinstance(schemes, dict) else ())):
        if isinstance(overrides, dict):
            for key, value in overrides.items():
                overrides[key] = _resolve_override_paths(key, value, folder)
    for section in ("axes", "zip"):  # key path -> the values it takes, one per run
        lists = spec.get(section)
        if isinstance(lists, dict):
            for key, values in lists.items():
                if isinstance(values, list):
                    lists[key] = [_resolve_override_paths(key, v, folder) for v in values]


def load_experiment(path: str | os.PathLike[str], exp_id: str | None = None) -> Experiment:
    """Parse one experiment file; its ``[experiment]`` table is checked against
    :class:`shoal._specs.ExperimentSpec` (an ExperimentError names the key path, the
    value and what is accepted)."""
    from pydantic import ValidationError  # here: `shoal run` never imports pydantic

    from shoal._specs import ExperimentSpec, problem

    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ExperimentError(f"{path}: {exc}") from None
    meta = raw.pop("experiment", None)
    if not isinstance(meta, dict):
        raise ExperimentError(f"{path}: no [experiment] table")
    try:
        spec = ExperimentSpec.model_validate(meta)
    except ValidationError as exc:
        raise ExperimentError(
            f"{path}: {problem(exc, ExperimentSpec, meta, 'experiment')}"
        ) from None
    return Experiment(
        id=exp_id or f"{path.parent.name}/{path.stem}",
        path=path,
        title=spec.title,
        paper=spec.paper,
        figure=spec.figure,
        description=" ".join(spec.description.split()),
        sweep=raw,
        modes={"quick": spec.quick, "full": spec.full},
        figures=[dict(f) for f in meta.get("figures", [])],
        claims=[dict(c) for c in meta.get("claims", [])],
        analysis=spec.analysis,
    )


def list_experiments(root: Path | None = None) -> list[Experiment]:
    """Every experiment under ``root`` (default: the packaged ones), sorted by id."""
    root = root or experiments_root()
    found = []
    for path in sorted(root.glob("*/*.toml")):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if "[experiment]" in text:
            found.append(load_experiment(path))
    return found


def find(exp_id: str, root: Path | None = None) -> Experiment:
    """The experiment ``<paper>/<name>``; ExperimentError if there is none."""
    root = root or experiments_root()
    parts = exp_id.strip("/").split("/")
    path = root / parts[0] / f"{parts[-1]}.toml" if len(parts) == 2 else None
    if path is None or not _is_file(path) or any(p.startswith(".") for p in parts):
        known = ", ".join(e.id for e in list_experiments(root))
        shown = exp_id if len(exp_id) <= 60 else exp_id[:57] + "..."
        raise ExperimentError(f"unknown experiment {shown!r}; known: {known}")
    return load_experiment(path, exp_id)


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a path no file can have (a name longer
    than the file system allows, a NUL byte), which ``Path.is_file`` raises on."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------- claims


@contextmanager
def _claim_errors() -> Iterator[None]:
    """A claim or figure that names what the runs table lacks is the experiment file's
    mistake: raised as an ExperimentError, which the CLI reports as such."""
    try:
        yield
    except ClaimError as exc:
        raise ExperimentError(str(exc)) from None


def _select(runs: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    with _claim_errors():
        return select_rows(runs, where)


def evaluate_claims(exp: Experiment, runs: pd.DataFrame, mode: str | None = None) -> list[Claim]:
    """Shoal's value for each of the experiment's claims (means over seeds), with its
    verdict against the paper's (:func:`shoal.analysis.evaluate_claims`). With ``mode``,
    only the claims whose runs that mode makes (a claim's ``modes``; both by default)."""
    from shoal._specs import Claim as ClaimSpec

    every_mode = ClaimSpec.model_fields["modes"].default
    claims = [c for c in exp.claims if mode is None or mode in c.get("modes", every_mode)]
    with _claim_errors():
        return _evaluate_claims(claims, runs)


# ---------------------------------------------------------------- analyses and figures

#: Experiment-specific analysis, keyed by ``experiment.analysis``: takes the experiment,
#: the runs table and the store path; returns the runs table with extra columns.
ANALYSES: dict[str, Callable[[Experiment, pd.DataFrame, Path], pd.DataFrame]] = {}

#: Experiment-specific figures, keyed by ``kind`` in ``[[experiment.figures]]``: take the
#: successful runs, the store path and the figure's keys (``title`` among them); return a
#: matplotlib figure. Other kinds are :mod:`shoal.plot`'s functions of the runs table.
FIGURES: dict[str, Callable[..., Any]] = {}


def _register_builtin() -> None:
    from shoal.reproduce import bcc

    ANALYSES.update(bcc.ANALYSES)
    FIGURES.update(bcc.FIGURES)
    losspass = __import__("shoal.reproduce.losspass", fromlist=["ANALYSES"])
    ANALYSES.update(losspass.ANALYSES)
    FIGURES.update(losspass.FIGURES)
    ANALYSES.update(__import__("shoal.reproduce.whitepaper", fromlist=["ANALYSES"]).ANALYSES)
    rdma = __import__("shoal.reproduce.rdma", fromlist=["ANALYSES"])
    ANALYSES.update(rdma.ANALYSES)
    FIGURES.update(rdma.FIGURES)
    dsh = __import__("shoal.reproduce.dsh", fromlist=["ANALYSES"])
    ANALYSES.update(dsh.ANALYSES)
    FIGURES.update(dsh.FIGURES)
    bfc = __import__("shoal.reproduce.bfc", fromlist=["ANALYSES"])
    ANALYSES.update(bfc.ANALYSES)
    FIGURES.update(bfc.FIGURES)


def _draw(exp: Experiment, runs: pd.DataFrame, out: Path, store: Path) -> list[Path]:
    from shoal import plot

    written: list[Path] = []
    ok = runs[runs["status"] == "ok"]
    for spec in exp.figures:
        spec = dict(spec)
        name = spec.pop("name")
        kind = spec.pop("kind")
        each = spec.pop("each", None)
        where = spec.pop("where", None)
        data = _select(ok, where) if where else ok
        parts = (
            [(f"{name}_{_slug(v)}", data[data[each] == v], f" ({v})") for v in data[each].unique()]
            if each
            else [(name, data, "")]
        )
        for stem, frame, suffix in parts:
            title = spec.pop("title", None) or f"{exp.figure}{suffix}"
            # The figure is already there, drawn from these runs by this code: drawing
            # it again (its layout and its save are most of a cached redraw) gives
            # the same file.
            stamp = plot.stamp(
                frame.drop(columns="cached", errors="ignore"), exp.id, kind, spec, title
            )
            existing = plot.saved(out / stem, stamp)
            if existing is not None:
                written += existing
                continue
            if kind == "metric_vs":
                fig = _metric_vs(frame, title=title, **spec)
            elif kind in _figures():
                fig = _figures()[kind](frame, store, title=title, **spec)
            else:
                fig = getattr(plot, kind)(frame, title=title, **spec)
            written += plot.save(fig, out / stem, stamp=stamp)
            import matplotlib.pyplot as plt

            plt.close(fig)
    return written


def _figures() -> dict[str, Callable[..., Any]]:
    if not FIGURES:
        _register_builtin()
    return FIGURES


def _slug(value: Any) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(value))


def _metric_vs(
    runs: pd.DataFrame,
    *,
    x: str,
    y: str,
    by: str | None = "scheme",
    ylabel: str | None = None,
    xlabel: str | None = None,
    scale: float = 1.0,
    title: str | None = None,
) -> Any:
    """A line per ``by`` of ``y`` (mean over seeds) against ``x`` (categorical if text);
    an x value that is no quantity ("N/A", a scheme) is a point of its own."""
    import numpy as np

    from shoal import plot

    with plot._style():
        fig = plot._figure(3.6, 2.6)
        ax = fig.subplots()
        groups = runs.groupby(by, sort=False) if by and by in runs else [("", runs)]
        for i, (label, g) in enumerate(groups):
            series = g.groupby(x, sort=False)[y].mean() / scale
            names = [str(v) for v in series.index]
            # A line between two x values says there is something between them: only
            # between quantities ("1.5MB", "1.75MB"), not to a category ("N/A", a scheme).
            joined = [plot._is_quantity(v) for v in series.index]
            style = {"marker": plot._MARKERS[i % len(plot._MARKERS)], "color": f"C{i % 10}"}
            ax.plot(names, series.to_numpy(), linestyle="none", label=str(label) or None, **style)
            run: list[int] = []
            for j in [*range(len(names)), None]:
                if j is not None and joined[j]:
                    run.append(j)
                    continue
                if len(run) > 1:
                    ax.plot([names[k] for k in run], series.to_numpy()[run], **style)
                run = []
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(ylabel or y)
        top = float(np.nanmax(runs[y].to_numpy(dtype=float))) / scale if len(runs) else 0.0
        # From 0, with room above the highest point so its marker is drawn whole.
        ax.set_ylim(0, max(ax.get_ylim()[1], top * 1.06) if top > 0 else None)
        if by and by in runs and runs[by].nunique() > 1:
            ax.legend(frameon=False, fontsize="small")
        if title:
            fig.suptitle(title)
    return fig


# ---------------------------------------------------------------- running


@dataclass(slots=True)
class ReproduceResult:
    """What :func:`reproduce` produced."""

    experiment: Experiment
    mode: str
    runs: pd.DataFrame
    claims: list[Claim]
    figures: list[Path]
    store: Path
    out: Path


def default_store(exp: Experiment, mode: str) -> Path:
    return Path("results") / "reproduce" / exp.id / mode


def reproduce(
    experiment: str | Experiment,
    *,
    mode: str = "quick",
    jobs: int | None = None,
    cluster: Any = None,
    store: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> ReproduceResult:
    """Run an experiment's sweep (cached in its store), draw its figures, check claims.

    The store defaults to ``results/reproduce/<paper>/<name>/<mode>``, the figures go to
    ``out`` (default: ``<store>/figures``). ``jobs`` local workers run the sweep, or a
    dask.distributed ``cluster`` (as :func:`shoal.sweep`'s); both are checked for every
    experiment, also one computed without a simulation.

    Raises:
        ExperimentError: an unknown experiment or mode, a malformed experiment file, or a
            ``store`` or ``out`` path with a NUL byte.
        SweepError: ``jobs`` below 1, a ``cluster`` that is no scheduler address or
            without dask.distributed installed, or a sweep that cannot run.
    """
    from shoal._sweep import check_execution, sweep

    if mode not in MODES:
        raise ExperimentError(f"unknown mode {mode!r}; expected quick or full")
    for name, path in (("store", store), ("out", out)):
        if path is not None and "\0" in os.fspath(path):
            raise ExperimentError(f"{name}: a path cannot hold a NUL byte: {os.fspath(path)!r}")
    check_execution(jobs, cluster)
    exp = experiment if isinstance(experiment, Experiment) else find(experiment)
    store_path = Path(store) if store is not None else default_store(exp, mode)
    out_path = Path(out) if out is not None else store_path / "figures"
    if exp.analytic:
        import pandas as pd

        if not exp.analysis:
            raise ExperimentError(f"{exp.id}: no [scenario] to run and no analysis to compute")
        runs = pd.DataFrame({"status": pd.Series(dtype=str)})
    else:
        runs = sweep(
            exp.sweep_spec(mode),
            jobs=jobs,
            cluster=cluster,
            store=store_path,
            progress=progress,
            log=log,
        )
    if exp.analysis:
        if not ANALYSES:
            _register_builtin()
        if exp.analysis not in ANALYSES:
            raise ExperimentError(f"{exp.id}: unknown analysis {exp.analysis!r}")
        runs = ANALYSES[exp.analysis](exp, runs, store_path)
    figures = _draw(exp, runs, out_path, store_path) if (runs["status"] == "ok").any() else []
    claims = evaluate_claims(exp, runs, mode)
    return ReproduceResult(exp, mode, runs, claims, figures, store_path, out_path)
