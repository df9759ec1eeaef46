"""User mistakes: exit status 2, ``error:`` naming the key path, never a traceback.

Each case is a tiny scenario plus ``--set`` overrides; the assertion is on what the user
sees, so the exact wording of the message is free as long as it names the culprit.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import INCAST, TINY, CliRunner


@dataclass(frozen=True)
class Case:
    """One bad input: the scenario text, extra CLI args and the words the error must name."""

    id: str
    names: tuple[str, ...]  # the message must contain one of these (the key path)
    sets: tuple[str, ...] = ()
    scenario: str = TINY
    files: dict[str, str] = field(default_factory=dict)  # extra files next to the scenario


def _sets(*pairs: str) -> tuple[str, ...]:
    return tuple(pairs)


TRACE_OUT_OF_RANGE = "id,src,dst,bytes,start_ns\n0,0,1,1000,0\n1,2,9,1000,100\n"
#: A topology file whose second link has a rate in an unknown unit.
BAD_TOPOLOGY = "3 1 2\n2\n0 2 10Gbps 1us 0\n1 2 10Gbs 1us 0\n"

CASES = [
    Case("negative link rate", ("topology.link_rate",), _sets("topology.link_rate=-100Gbps")),
    Case("alpha zero", ("switch.alpha",), _sets("switch.alpha=0")),
    Case("alpha negative", ("switch.alpha",), _sets("switch.alpha=-1.0")),
    Case(
        "kmin above kmax",
        ("switch.marking.red.kmin", "switch.marking.red.kmax"),
        _sets("switch.marking.red.kmin=800KB", "switch.marking.red.kmax=200KB"),
    ),
    Case("pmax above 1", ("switch.marking.red.pmax",), _sets("switch.marking.red.pmax=1.5")),
    Case("pmax negative", ("switch.marking.red.pmax",), _sets("switch.marking.red.pmax=-0.1")),
    Case(
        "trace host out of range",
        ("workload.trace",),
        _sets("workload.pattern=trace", "workload.trace=bad_hosts.csv"),
        files={"bad_hosts.csv": TRACE_OUT_OF_RANGE},
    ),
    Case("bfc under fifo", ("switch.scheduler",), _sets("switch.flow_control.kind=bfc")),
    Case(
        "bfc vfids",
        ("switch.flow_control.vfids",),
        _sets("switch.flow_control.kind=bfc", "switch.flow_control.vfids=0"),
    ),
    Case(
        "bfc link without delay",
        ("switch.flow_control.interval",),
        _sets("switch.flow_control.kind=bfc", "topology.link_delay=0us"),
    ),
    Case(
        "bfc filter hashes",
        ("switch.flow_control.filter_hashes",),
        _sets("switch.flow_control.kind=bfc", "switch.flow_control.filter_hashes=3"),
    ),
    Case(
        "missing trace file",
        ("workload.trace",),
        _sets("workload.pattern=trace", "workload.trace=no_such_trace.csv"),
    ),
    Case(
        "malformed topology file",
        ("topology.path",),
        _sets("topology.kind=file", "topology.path=topology.txt"),
        files={"topology.txt": BAD_TOPOLOGY},
    ),
    Case(
        "missing topology file",
        ("topology.path",),
        _sets("topology.kind=file", "topology.path=no.txt"),
    ),
    Case(
        "failed link that is not a link",
        ("topology.failed_links",),
        _sets("topology.failed_links=[[0, 1]]"),
    ),
    Case(
        "own buffer of a host",
        ("switch.buffer_of_node.0",),
        _sets('switch.buffer_of_node={"0" = "1MB"}'),
    ),
    Case(
        "own buffer of no node",
        ("switch.buffer_of_node.9",),
        _sets('switch.buffer_of_node={"9" = "1MB"}'),
    ),
    Case(
        "remote fraction without sites",
        ("workload.remote_fraction",),
        _sets("workload.remote_fraction=0.2"),
    ),
    Case(
        "overlapping sites",
        ("workload.sites[1]",),
        _sets('workload.sites=["0-2", "2-3"]', "workload.remote_fraction=0.2"),
    ),
    Case(
        "sites missing a host",
        ("workload.sites",),
        _sets('workload.sites=["0-1", "2"]', "workload.remote_fraction=0.2"),
    ),
    Case("zero duration", ("workload.duration",), _sets('workload.duration="0s"')),
    Case("zero hosts", ("topology.hosts",), _sets("topology.hosts=0")),
    Case("unknown key", ("switch.ecnn",), _sets("switch.ecnn.k=200KB")),
    Case("unknown top-level table", ("swich",), _sets("swich.alpha=2")),
    Case("unknown topology kind", ("topology.kind",), _sets("topology.kind=ring")),
    Case("bad rate unit", ("topology.link_rate",), _sets("topology.link_rate=100Gbs")),
    Case("bad size unit", ("switch.pool_size",), _sets("switch.pool_size=3MBB")),
    Case("bad time unit", ("topology.link_delay",), _sets("topology.link_delay=1sec")),
    Case("wrong type", ("transport.init_cwnd",), _sets('transport.init_cwnd="ten"')),
    Case("unknown congestion control", ("transport.cc",), _sets("transport.cc=cubic")),
    Case(
        "empty cdf file",
        ("workload.cdf",),
        _sets("workload.cdf=empty.cdf"),
        files={"empty.cdf": ""},
    ),
    Case(
        "decreasing cdf",
        ("workload.cdf",),
        _sets("workload.cdf=decreasing.cdf"),
        files={"decreasing.cdf": "1000 0\n2000 60\n3000 40\n4000 100\n"},
    ),
    Case(
        "cdf not ending at 100",
        ("workload.cdf",),
        _sets("workload.cdf=short.cdf"),
        files={"short.cdf": "1000 0\n2000 50\n3000 90\n"},
    ),
    Case("missing cdf file", ("workload.cdf",), _sets("workload.cdf=nowhere/sizes.cdf")),
    Case(
        "red reference rate zero",
        ("switch.marking.red.reference_rate",),
        _sets("switch.marking.red.kmin=100KB", "switch.marking.red.reference_rate=0Gbps"),
    ),
    Case("mss zero", ("transport.mss",), _sets("transport.mss=0")),
    Case("zero queues", ("switch.queues",), _sets("switch.queues=0")),
    Case("too many queues", ("switch.queues",), _sets("switch.queues=1025")),
    Case("fat tree with odd k", ("topology.k",), _sets("topology.kind=fat_tree", "topology.k=3")),
    Case("set without equals", ("switch.marking.cutoff.k",), _sets("switch.marking.cutoff.k")),
    Case("set with empty key", ("=5",), _sets("=5")),
    Case("set into a value", ("topology.hosts",), _sets("topology.hosts.x=1")),
    Case("invalid toml", ("scenario.toml",), scenario="[topology\nhosts = 4\n"),
    Case("duplicate toml key", ("scenario.toml",), scenario="[run]\nseed = 1\nseed = 2\n"),
    Case("negative load", ("workload.load",), _sets("workload.load=-0.5")),
    Case(
        "pfc pause_quanta zero",
        ("switch.flow_control.pause_quanta",),
        _sets("switch.flow_control.kind=pfc", "switch.flow_control.pause_quanta=0"),
    ),
    Case(
        "pfc pause_quanta above 16 bits",
        ("switch.flow_control.pause_quanta",),
        _sets("switch.flow_control.kind=pfc", "switch.flow_control.pause_quanta=65536"),
    ),
    Case(
        "pfc pause_quanta a word",
        ("switch.flow_control.pause_quanta",),
        _sets("switch.flow_control.kind=pfc", 'switch.flow_control.pause_quanta="forever"'),
    ),
    Case(
        "pfc pause_quanta 1 leaves no refresh",
        ("switch.flow_control.pause_quanta",),
        _sets("switch.flow_control.kind=pfc", "switch.flow_control.pause_quanta=1"),
    ),
    Case(
        "pfc refresh_quanta zero",
        ("switch.flow_control.refresh_quanta",),
        _sets(
            "switch.flow_control.kind=pfc",
            "switch.flow_control.pause_quanta=100",
            "switch.flow_control.refresh_quanta=0",
        ),
    ),
    Case(
        "pfc refresh_quanta not below the timer",
        ("switch.flow_control.refresh_quanta",),
        _sets(
            "switch.flow_control.kind=pfc",
            "switch.flow_control.pause_quanta=100",
            "switch.flow_control.refresh_quanta=100",
        ),
    ),
    Case(
        "pfc refresh_quanta without a timer",
        ("switch.flow_control.refresh_quanta",),
        _sets("switch.flow_control.kind=pfc", "switch.flow_control.refresh_quanta=10"),
    ),
    Case(
        "incast receiver out of range",
        ("workload.receiver",),
        _sets("workload.receiver=7"),
        scenario=INCAST,
    ),
]


def _assert_user_error(proc: subprocess.CompletedProcess[str], names: tuple[str, ...]) -> None:
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}\n{output}"
    assert "error:" in proc.stderr, output
    assert "Traceback" not in output, output
    assert any(name in proc.stderr for name in names), f"none of {names} in:\n{proc.stderr}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_scenario_is_a_clean_error(
    case: Case, shoal_cli: CliRunner, write_scenario: Callable[..., Path], tmp_path: Path
) -> None:
    scenario = write_scenario(case.scenario)
    for name, text in case.files.items():
        (tmp_path / name).write_text(text)
    args: list[str] = []
    for item in case.sets:
        args += ["--set", item]
    out = tmp_path / "out"
    proc = shoal_cli("run", scenario, "--quiet", "--out", out, *args)
    _assert_user_error(proc, case.names)
    assert not out.exists(), "a failed run must not leave a run directory"


def test_malformed_topology_file_names_file_line_and_field(
    shoal_cli: CliRunner, write_scenario: Callable[..., Path], tmp_path: Path
) -> None:
    topology = tmp_path / "topology.txt"
    topology.write_text(BAD_TOPOLOGY)
    scenario = write_scenario('[topology]\nkind = "file"\npath = "topology.txt"\n')
    proc = shoal_cli("run", scenario, "--quiet", "--out", tmp_path / "out")
    _assert_user_error(proc, ("topology.path",))
    assert (
        f'error: topology.path: {topology.resolve()}: line 4: rate = "10Gbs" is not accepted'
        in proc.stderr
    ), proc.stderr


def test_missing_scenario_file(shoal_cli: CliRunner) -> None:
    proc = shoal_cli("run", "does_not_exist.toml", "--quiet")
    _assert_user_error(proc, ("does_not_exist.toml",))


def test_scenario_is_a_directory(shoal_cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "adir.toml").mkdir()
    proc = shoal_cli("run", "adir.toml", "--quiet")
    _assert_user_error(proc, ("adir.toml",))


def test_unwritable_out_dir(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    proc = shoal_cli("run", tiny, "--quiet", "--out", blocker / "run")
    _assert_user_error(proc, ("blocker",))
    assert blocker.read_text() == "a file, not a directory"


def test_out_is_an_existing_file(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me")
    proc = shoal_cli("run", tiny, "--quiet", "--out", target)
    _assert_user_error(proc, ("taken",))
    assert target.read_text() == "keep me"


def test_summarize_not_a_run_dir(shoal_cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = shoal_cli("summarize", tmp_path / "empty")
    _assert_user_error(proc, ("empty",))


def test_trace_bad_scenario(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "flows.csv"
    proc = shoal_cli("trace", tiny, "--out", out, "--set", "topology.hosts=0")
    _assert_user_error(proc, ("topology.hosts",))
    assert not out.exists()


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        (("workload.load=1.5",), "workload.load"),
        (("switch.marking.cutoff.k=100MB",), "switch.marking.cutoff.k"),
    ],
    ids=["load above 1", "K above the whole buffer"],
)
def test_questionable_values_warn_but_run(
    sets: tuple[str, ...], key: str, shoal_cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    args: list[str] = []
    for item in sets:
        args += ["--set", item]
    out = tmp_path / "out"
    proc = shoal_cli("run", tiny, "--quiet", "--out", out, *args)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Traceback" not in output
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert any(key in line for line in warnings), proc.stderr
    assert (out / "summary.json").is_file()


@pytest.mark.parametrize(
    ("command", "default"),
    [
        (("sweep",), "[default: (number of cores)]"),
        (("reproduce",), "[default: (results/reproduce/PAPER/NAME/MODE)]"),
        (("reproduce",), "[default: (--quick)]"),
        (("run",), "[default: (results/<scenario stem>)]"),
    ],
)
def test_help_shows_option_defaults(
    shoal_cli: CliRunner, command: tuple[str, ...], default: str
) -> None:
    """Defaults that are descriptions, not values (typer's show_default="..."), appear
    in the help as click writes them."""
    proc = shoal_cli(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert default in " ".join(proc.stdout.split())
