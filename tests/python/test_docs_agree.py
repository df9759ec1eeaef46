"""What the documentation says agrees with what Shoal does (issue 30, item 12): the
README's recipes run without warnings, the commands it names exist, the times it gives
match the CLI's, and nothing points to files outside the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import shoal
from shoal import _core

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _markdown() -> list[Path]:
    return [p for p in ROOT.glob("**/*.md") if "target" not in p.parts and ".git" not in p.parts]


def test_the_readme_rdma_recipe_runs_without_a_warning() -> None:
    """The README's marking recipe for RDMA, as a scenario: RED 400 KB / 1,600 KB / 0.2 at
    dequeue with the `non_ect` the README gives, PFC, RDMA connections."""
    recipe = README[README.index("It needs switches") :][:400]
    non_ect = re.search(r'non_ect = "(\w+)"', recipe)
    assert non_ect, recipe
    scenario = {
        "topology": {"kind": "star", "hosts": 4},
        "switch": {
            "flow_control": "pfc",
            "ecn": {"at": "dequeue", "non_ect": non_ect[1]},
            "marking": {"red": {"kmin": "400KB", "kmax": "1600KB", "pmax": 0.2}},
        },
        "workload": {"flows": 10, "transport": "rdma"},
    }
    _, warnings = _core.resolve(shoal.load_scenario(scenario).to_json())
    assert warnings == [], warnings


def test_docs_name_only_advise_topics_that_exist() -> None:
    from shoal.advise.cli import advise_app

    topics = {c.name or c.callback.__name__ for c in advise_app.registered_commands}  # type: ignore[union-attr]
    named = {
        (path.name, topic)
        for path in [*_markdown(), *ROOT.glob("python/shoal/**/*.py")]
        for topic in re.findall(r"shoal advise ([a-z][a-z-]*)", path.read_text(encoding="utf-8"))
    }
    unknown = {(f, t) for f, t in named if t not in topics}
    assert not unknown, f"unknown topics {unknown}; the CLI has {sorted(topics)}"


def test_advisor_doc_knows_pfc_is_in_the_schema() -> None:
    text = (ROOT / "docs" / "advisor.md").read_text(encoding="utf-8")
    assert "PFC is not in the scenario schema" not in text
    assert "switch.pfc" not in text
    assert "[switch.flow_control]" in text


#: What Shoal ships or prints: the package (its experiments, analyses), the core's
#: defaults and presets (--print-defaults, --print-presets), the docs and the tests.
SHIPPED = [
    *ROOT.glob("python/shoal/**/*.py"),
    *ROOT.glob("python/shoal/**/*.toml"),
    ROOT / "crates" / "shoal-core" / "src" / "scenario" / "defaults.toml",
    ROOT / "crates" / "shoal-core" / "src" / "scenario" / "presets.toml",
    *ROOT.glob("validation/*.py"),
    *ROOT.glob("tests/python/*.py"),
]


@pytest.mark.parametrize("pattern", ["lossless-facts", "../shared", "papers/"])
def test_nothing_cites_files_outside_the_repository(pattern: str) -> None:
    here = Path(__file__).name
    found = [
        str(p.relative_to(ROOT))
        for p in [*SHIPPED, *_markdown()]
        if p.name != here and pattern in p.read_text(encoding="utf-8")
    ]
    assert not found, f"{pattern!r} in {found}"


def test_the_readme_installs_dask_from_the_source_tree() -> None:
    assert "shoal[cluster]" not in README
    assert 'pip install ".[cluster]"' in README


def test_the_readme_fct_statistics_cover_rdma_flows() -> None:
    stats = README[README.index("`summary.json` reports, per size bucket") :][:300]
    assert "for finished TCP flows:" not in stats
    assert "TCP and RDMA flows" in stats


def _reproduce_help() -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "shoal", "reproduce", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200", NO_COLOR="1"),
        timeout=60,
    )
    return " ".join(proc.stdout.split())


def test_quick_mode_takes_the_same_time_in_the_cli_and_the_readme() -> None:
    help_text = _reproduce_help()
    readme = " ".join(README.split())
    assert "minutes at most" not in help_text
    claim = "seconds to about a minute on two cores"
    assert claim in help_text, help_text
    assert f"Quick mode (the default) runs in {claim}" in readme


def test_the_readme_gives_the_install_and_test_times_beside_its_commands() -> None:
    head = README[: README.index("# Shoal")]
    commands = re.findall(r"```sh\n(.*?)```", head, re.S)[0].splitlines()
    assert commands == [
        "pip install . && shoal demo",
        'pip install ".[test,cluster]" && cargo test --workspace --exclude shoal-py '
        "--exclude shoal-bench && pytest -q tests/python",
    ]
    prose = " ".join(head.split())
    assert "pip install -v ." in prose
    assert "about 13 minutes on two idle cores" in prose


def test_the_readme_lists_every_run_table_with_its_columns() -> None:
    """The README's table of run files names every table the core publishes, each with
    its columns in order (the flow table's in the line below it)."""
    readme = (ROOT / "README.md").read_text()
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `(\w+)\.parquet` \| (.*) \|$", readme, re.M)}
    flows = " ".join(readme.split("Flow columns: `", 1)[1].split("`", 1)[0].split())
    for name, columns in shoal.table_schemas().items():
        listed = " ".join(c for c, _ in columns)
        assert name in rows, name
        assert listed in (flows if name == "flows" else rows[name]), (name, listed)
