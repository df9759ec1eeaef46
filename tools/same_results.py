#!/usr/bin/env python3
"""Check that a change leaves every result unchanged: run the same scenarios with Shoal
built at a base commit and with the working tree, and compare the outputs byte for byte.

    python tools/same_results.py --base 53a234d            # scenarios + quick experiments
    python tools/same_results.py --base HEAD~3 --no-experiments
    python tools/same_results.py --base main --only benches/star_dctcp.toml
    python tools/same_results.py --base HEAD --threads 3   # the parallel engine

What runs: every scenario under experiments/, benches/ and validation/ (a scenario that
replays a trace gets an all-to-all workload instead, since the trace is generated per
comparison), each at a capped flow count unless --full, and every paper experiment's
quick mode (``shoal reproduce PAPER/NAME --quick``). What must match: ``flows.parquet``
byte for byte, and ``summary.json`` except its wall time and events per second (and,
with --ignore-events, the event count: say why in the commit when the event structure
changes on purpose). A summary key that the base does not have and whose value is zero
is a counter added since the base (e.g. a new drop reason) and is not a difference.

Each side runs a scenario file as its own commit has it, so a file may move to a new
spelling of its keys; a scenario the base commit does not have is listed as new and not
compared, and so are an experiment's runs that the base does not have (a new scheme or
axis value). The resolved scenarios (``summary.json``'s ``scenario``, and what
pairs an experiment's runs) are compared as the working tree reads them: the base's is
resolved again by the working tree, which reads old spellings as their new keys, so a
change of the scenario layout passes only if every old scenario means the same.

Both sides are built as wheels into virtual environments under --work (default
``/tmp/shoal-same-results``); the base is checked out with ``git worktree``. Building
takes about two minutes a side on two cores; the base side is reused while its commit
is unchanged. Exit status: 0 all identical, 1 some differ, 2 usage or build errors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCENARIO_DIRS = ("experiments", "benches", "validation")
#: summary.json keys that legitimately differ between two runs of the same scenario.
VOLATILE = {"wall_time_s", "events_per_s", "shoal_version"}


def sh(*args: str | os.PathLike[str], cwd: Path | None = None, env: dict | None = None) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"error: {' '.join(map(str, args))} failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def build(source: Path, venv: Path, stamp: str) -> Path:
    """A virtual environment at ``venv`` with Shoal built from ``source``; rebuilt unless
    its stamp file says it was built from ``stamp``. Returns its python."""
    python = venv / "bin" / "python"
    stamp_file = venv / "shoal-source"
    if python.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    sh(sys.executable, "-m", "venv", venv)
    print(f"building {source} ...", file=sys.stderr, flush=True)
    sh(python, "-m", "pip", "install", "-q", str(source))
    stamp_file.write_text(stamp)
    return python


def tree_stamp() -> str:
    """The working tree's state: HEAD plus a hash of its diff and untracked files."""
    head = sh("git", "rev-parse", "HEAD", cwd=REPO).strip()
    diff = sh("git", "diff", "HEAD", cwd=REPO)
    untracked = sh("git", "ls-files", "--others", "--exclude-standard", cwd=REPO).split()
    digest = hashlib.sha256(diff.encode())
    for name in sorted(untracked):
        digest.update(name.encode() + (REPO / name).read_bytes())
    return f"{head}+{digest.hexdigest()[:16]}"


def scenarios(only: list[str]) -> list[Path]:
    if only:
        return [REPO / p for p in only]
    found = []
    for folder in SCENARIO_DIRS:
        for path in sorted((REPO / folder).rglob("*.toml")):
            data = tomllib.loads(path.read_text())
            if "topology" in data or "workload" in data:  # a scenario, not a sweep
                found.append(path)
    return found


def overrides(path: Path, full: bool) -> list[str]:
    workload = tomllib.loads(path.read_text()).get("workload", {})
    sets = []
    if workload.get("pattern") == "trace":
        sets += ['workload.pattern="all_to_all"']
    if not full and not workload.get("duration"):
        sets += [f"workload.flows={min(int(workload.get('flows', 1000)), 3000)}"]
    return sets


def resolve_all(python: Path, texts: list[str]) -> list[dict]:
    """The scenarios ``texts`` (JSON) resolved by the Shoal of ``python``."""
    script = (
        "import json, sys\n"
        "from shoal import _core\n"
        "texts = json.load(sys.stdin)\n"
        "json.dump([json.loads(_core.resolve(t)[0]) for t in texts], sys.stdout)\n"
    )
    proc = subprocess.run(
        [str(python), "-c", script], input=json.dumps(texts), capture_output=True, text=True
    )
    if proc.returncode:
        raise SystemExit(f"error: resolving the base's scenarios failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


#: Each side's environment: with --threads, the new side runs every run on that many
#: threads (``SHOAL_THREADS``), the base on one.
SIDE_ENV: dict[str, dict[str, str]] = {}


def run_scenario(python: Path, scenario: Path, sets: list[str], out: Path, side: str) -> None:
    args = [python, "-m", "shoal", "run", scenario, "--quiet", "--out", out]
    for s in sets:
        args += ["--set", s]
    sh(*args, env=dict(os.environ, PYTHONWARNINGS="ignore", **SIDE_ENV.get(side, {})))


def reproduce(python: Path, experiment: str, store: Path, side: str) -> None:
    args = ["reproduce", experiment, "--quick", "--jobs", "2", "--store", store]
    sh(python, "-m", "shoal", *args, env=dict(os.environ, **SIDE_ENV.get(side, {})))


def experiments(python: Path) -> list[str]:
    listing = sh(python, "-m", "shoal", "reproduce", "--list")
    return list(dict.fromkeys(re.findall(r"^\W*([a-z]+/[a-z0-9-]+)\s", listing, re.MULTILINE)))


#: The two checkouts (the working tree; main adds the base's), whose locations are left
#: out of paths like the install path's: each side runs the files of its own checkout.
CHECKOUTS: list[Path] = [REPO]


def without_install_path(text: str) -> str:
    """``text`` with the location of the installed package (which differs between the two
    virtual environments: packaged CDF and topology files) and of the checkouts left out."""
    text = re.sub(r'"[^"]*/site-packages/', '"', text)
    for root in CHECKOUTS:
        text = text.replace(f'"{root}/', '"')
    return text


def summary(path: Path, ignore_events: bool) -> dict:
    data = json.loads(without_install_path(path.read_text()))
    for key in VOLATILE | ({"events"} if ignore_events else set()):
        data.pop(key, None)
    return data


def without_new_zeros(base, new):
    """``new`` without the keys, at any depth, that ``base`` lacks and whose value is 0."""
    if not (isinstance(base, dict) and isinstance(new, dict)):
        return new
    return {
        k: without_new_zeros(base.get(k), v)
        for k, v in new.items()
        if k in base or not (isinstance(v, (int, float)) and v == 0)
    }


def compare_dirs(a: Path, b: Path, ignore_events: bool, new_python: Path) -> list[str]:
    """Differences between two run directories (flows byte for byte, summaries by value;
    the base's scenario as the working tree reads it)."""
    problems = []
    for name in ("flows.parquet", "queues.parquet"):
        fa, fb = a / name, b / name
        if fa.exists() != fb.exists() or (fa.exists() and fa.read_bytes() != fb.read_bytes()):
            problems.append(f"{name} differs")
    sa, sb = summary(a / "summary.json", ignore_events), summary(b / "summary.json", ignore_events)
    if "scenario" in sa:
        # Resolved from the file as written: a file the scenario names must be found.
        raw = json.loads((a / "summary.json").read_text())["scenario"]
        (resolved,) = resolve_all(new_python, [json.dumps(raw)])
        sa["scenario"] = json.loads(without_install_path(json.dumps(resolved)))
    sb = without_new_zeros(sa, sb)
    keys = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
    if keys:
        problems.append(f"summary.json differs in {', '.join(keys)}")
    return problems


def checkout(rev: str, where: Path) -> str:
    """``rev`` checked out at ``where`` (a detached worktree); returns its full hash."""
    full = sh("git", "rev-parse", rev, cwd=REPO).strip()
    current = sh("git", "rev-parse", "HEAD", cwd=where).strip() if (where / ".git").exists() else ""
    if current != full:
        shutil.rmtree(where, ignore_errors=True)
        sh("git", "worktree", "prune", cwd=REPO)
        sh("git", "worktree", "add", "--detach", where, full, cwd=REPO)
    return full


def report(same: bool, what: str, problems: list[str]) -> None:
    print(f"{'same' if same else 'DIFFERENT':9} {what} {'; '.join(problems)}".rstrip())


def check_scenarios(sides: dict[str, Path], out: Path, args: argparse.Namespace) -> int:
    failures = 0
    for scenario in scenarios(args.only):
        rel = scenario.relative_to(REPO)
        sets = overrides(scenario, args.full)
        dirs = {side: out / side / str(rel).replace("/", "__") for side in sides}
        files = {"base": args.work / "base-src" / rel, "new": scenario}
        if not files["base"].exists():
            # A scenario added since the base may use what the base cannot run.
            print(f"new       {rel} (not in the base commit: nothing to compare)", flush=True)
            continue
        for side, python in sides.items():
            run_scenario(python, files[side], sets, dirs[side], side)
        problems = compare_dirs(dirs["base"], dirs["new"], args.ignore_events, sides["new"])
        failures += bool(problems)
        report(not problems, f"{rel} {' '.join(sets)}", problems)
    return failures


def runs_by_scenario(store: Path, python: Path) -> dict[str, Path]:
    """A store's run directories by their resolved scenario as the Shoal of ``python``
    reads it (install path left out)."""
    if not (store / "runs").is_dir():  # an experiment that runs no simulation
        return {}
    runs = sorted((store / "runs").iterdir())
    resolved = resolve_all(python, [(run / "scenario.json").read_text() for run in runs])
    return {
        without_install_path(json.dumps(sc, sort_keys=True)): run
        for sc, run in zip(resolved, runs, strict=True)
    }


def check_experiments(sides: dict[str, Path], out: Path, ignore_events: bool) -> int:
    failures = 0
    known_to_base = set(experiments(sides["base"]))
    for experiment in experiments(sides["new"]):
        if experiment not in known_to_base:
            print(f"new       reproduce {experiment} (the base has no such experiment)", flush=True)
            continue
        name = "reproduce__" + experiment.replace("/", "__")
        stores = {side: out / side / name for side in sides}
        for side, python in sides.items():
            reproduce(python, experiment, stores[side], side)
        runs = {side: runs_by_scenario(stores[side], sides["new"]) for side in sides}
        # Runs the experiment gained (a new scheme) are new; runs it lost are a difference.
        lost = runs["base"].keys() - runs["new"].keys()
        added = len(runs["new"].keys() - runs["base"].keys())
        problems = [f"{len(lost)} of the base's runs are not run any more"] if lost else []
        for scenario in runs["base"] if not problems else []:
            pair = (runs["base"][scenario], runs["new"][scenario])
            problems += [
                f"{pair[1].name[:8]}: {p}" for p in compare_dirs(*pair, ignore_events, sides["new"])
            ]
        failures += bool(problems)
        what = f"reproduce {experiment} --quick ({len(runs['base'])} runs"
        what += f"; {added} new runs not in the base)" if added else ")"
        report(not problems, what, problems)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--work", type=Path, default=Path("/tmp/shoal-same-results"))
    parser.add_argument("--only", nargs="*", default=[], help="scenario files to run")
    parser.add_argument("--no-experiments", action="store_true", help="skip quick modes")
    parser.add_argument("--full", action="store_true", help="scenarios at their own size")
    parser.add_argument("--ignore-events", action="store_true")
    parser.add_argument(
        "--threads",
        help="run the new side's runs on this many threads (run.threads), the base's on one: "
        "with --base HEAD, checks that the parallel engine changes no result",
    )
    args = parser.parse_args()

    if args.threads:
        SIDE_ENV["new"] = {"SHOAL_THREADS": args.threads}
    args.work.mkdir(parents=True, exist_ok=True)
    base_rev = checkout(args.base, args.work / "base-src")
    CHECKOUTS.append((args.work / "base-src").resolve())
    sides = {
        "base": build(args.work / "base-src", args.work / "base-venv", base_rev),
        "new": build(REPO, args.work / "new-venv", tree_stamp()),
    }
    out = args.work / "out"
    shutil.rmtree(out, ignore_errors=True)
    failures = check_scenarios(sides, out, args)
    if not args.no_experiments:
        failures += check_experiments(sides, out, args.ignore_events)
    print(f"{failures} difference(s)" if failures else "every result is identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
