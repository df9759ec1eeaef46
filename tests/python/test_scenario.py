"""Scenario input handling in Python: override parsing and path resolution."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import CliRunner
from shoal import ScenarioError, apply_overrides, load_scenario, parse_value
from shoal._summary import parse_size


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("200KB", "200KB"),
        ("0-23", "0-23"),
        ("42", 42),
        ("0.5", 0.5),
        ("true", True),
        ('"quoted"', "quoted"),
        ("[1, 2.5]", [1, 2.5]),
        ("fat_tree", "fat_tree"),
        (" 7 ", 7),
    ],
)
def test_parse_value(text: str, value: object) -> None:
    assert parse_value(text) == value


def test_apply_overrides_creates_tables() -> None:
    data: dict = {"switch": {"alpha": 1.0}}
    apply_overrides(data, ["switch.marking.cutoff.k=200KB", "switch.alpha=2", "run.seed=9"])
    assert data == {
        "switch": {"alpha": 2, "marking": {"cutoff": {"k": "200KB"}}},
        "run": {"seed": 9},
    }


def test_apply_overrides_dict_values_are_not_parsed() -> None:
    data: dict = {}
    apply_overrides(data, {"workload.senders": "1", "run.seed": 3})
    assert data == {"workload": {"senders": "1"}, "run": {"seed": 3}}


def test_apply_overrides_reach_into_extra_workloads() -> None:
    data: dict = {"workload": {"load": 0.5, "extra": [{"load": 0.1}, {"load": 0.2}]}}
    apply_overrides(data, ["workload.extra[1].load=0.4"])
    assert data["workload"]["extra"] == [{"load": 0.1}, {"load": 0.4}]
    bad_ones = (("workload.extra[2].load=1", "index 0 to 1"), ("run.extra[0].x=1", "no array"))
    for bad, says in bad_ones:
        with pytest.raises(ScenarioError, match=says):
            apply_overrides(data, [bad])


@pytest.mark.parametrize("bad", ["switch.marking.cutoff.k", "=3", "a..b=1"])
def test_bad_override(bad: str) -> None:
    with pytest.raises(ScenarioError):
        apply_overrides({}, [bad])


def test_cdf_path_relative_to_scenario(tmp_path: Path) -> None:
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "mine.cdf").write_text("1000 0\n2000 100\n")
    scenario = tmp_path / "exp" / "s.toml"
    scenario.write_text('[workload]\ncdf = "mine.cdf"\n')
    loaded = load_scenario(scenario)
    assert loaded.data["workload"]["cdf"] == str((tmp_path / "exp" / "mine.cdf").resolve())
    assert loaded.name == "s"


def test_topology_path_relative_to_scenario(tmp_path: Path) -> None:
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "topology.txt").write_text("3 1 2\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n")
    scenario = tmp_path / "exp" / "s.toml"
    scenario.write_text('[topology]\nkind = "file"\npath = "topology.txt"\n')
    loaded = load_scenario(scenario)
    assert loaded.data["topology"]["path"] == str((tmp_path / "exp" / "topology.txt").resolve())
    scenario.write_text('[topology]\nkind = "file"\npath = "elsewhere.txt"\n')
    with pytest.raises(ScenarioError, match=r"^topology.path: file not found: .*elsewhere.txt"):
        load_scenario(scenario)


def test_builtin_cdf_name_is_kept(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('[workload]\ncdf = "websearch"\n')
    assert load_scenario(scenario).data["workload"]["cdf"] == "websearch"


@pytest.mark.parametrize(
    ("key", "value", "files"),
    [
        ("workload.cdf", "sizes.cdf", 1),
        ("workload.cdf", "websearch", 0),  # a built-in distribution: stays a name
        ("workload.trace", "flows.csv", 1),
        ("workload.extra[0].cdf", "sizes.cdf", 1),
        ("workload.extra[0].trace", "flows.csv", 1),
        ("workload.extra", [{"cdf": "sizes.cdf"}, {"trace": "flows.csv"}], 2),
        ("workload", {"cdf": "websearch", "extra": [{"cdf": "sizes.cdf"}]}, 1),
        ("topology.path", "topology.txt", 1),
        ("topology", {"kind": "file", "path": "topology.txt"}, 1),
        (" workload . cdf ", "sizes.cdf", 1),  # apply_overrides strips each part
        ("workload.load", "sizes.cdf", 0),  # not a file key: left alone
    ],
)
def test_an_override_resolves_as_the_scenario_it_is_applied_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: object, files: int
) -> None:
    """An override resolved on its own (how a paper experiment hands its sweep over)
    gives the scenario that resolving after applying it gives (how a sweep file does),
    relative to the folder passed, not to the working directory (which holds files of
    the same names)."""
    from shoal._scenario import _resolve_override_paths, _resolve_paths

    folder, elsewhere = tmp_path.resolve() / "experiment", tmp_path / "elsewhere"
    for where in (folder, elsewhere):
        where.mkdir()
        (where / "sizes.cdf").write_text("1000 0\n2000 100\n")
        (where / "flows.csv").write_text("id,src,dst,bytes,start_ns\n0,1,0,1000,0\n")
        (where / "topology.txt").write_text("3 1 2\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n")
    monkeypatch.chdir(elsewhere)

    def scenario() -> dict:
        return {"workload": {"extra": [{}]}}

    applied_then_resolved = apply_overrides(scenario(), {key: value})
    _resolve_paths(applied_then_resolved, folder)
    resolved = _resolve_override_paths(key, value, folder)
    assert apply_overrides(scenario(), {key: resolved}) == applied_then_resolved
    assert repr(resolved).count(f"'{folder}/") == files
    assert str(elsewhere) not in repr(resolved)


def test_a_missing_file_is_reported_relative_to_its_folder(tmp_path: Path) -> None:
    """A ``trace`` or ``path`` is always a file, a ``cdf`` that looks like one too; a
    bare ``cdf`` name that is no file is a distribution name, for the core to check."""
    from shoal._scenario import _resolve_override_paths

    for key, value in (
        ("workload.extra[1].trace", "flows"),
        ("topology.path", "topology"),
        ("workload.cdf", "sizes.cdf"),
        ("workload.cdf", "sub/sizes"),
    ):
        message = re.escape(f"{key}: file not found: {tmp_path / value}")
        with pytest.raises(ScenarioError, match=f"^{message}$"):
            _resolve_override_paths(key, value, tmp_path)
    assert _resolve_override_paths("workload.cdf", "sizes", tmp_path) == "sizes"


def test_scenario_error_is_value_error() -> None:
    assert issubclass(ScenarioError, ValueError)


@pytest.mark.parametrize(
    ("text", "size"),
    [("100KB", 100_000), ("1MiB", 2**20), ("1500", 1500), (9000, 9000), ("1.5MB", 1_500_000)],
)
def test_parse_size(text: object, size: int) -> None:
    assert parse_size(text) == size


def test_long_toml_text_is_text_not_a_file_name() -> None:
    """A TOML document longer than any file name is read as TOML (the path check must
    not fail with 'File name too long')."""
    body = "\n".join(f"# comment line {i} to make the text long" for i in range(20))
    text = body + '\n[topology]\nkind = "star"\nhosts = 4\n'
    assert len(text) > 512
    loaded = load_scenario(text)
    assert loaded.data["topology"]["hosts"] == 4


# -- hostile input: limits of TOML, JSON and the core's 64-bit integers ---------------

BASE = "[topology]\nhosts = 4\n[workload]\n"
DIGITS = "1" + "0" * 99_999  # a 100,000-digit integer
RANGE = "integers must be within -2^63 .. 2^64-1"


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("scenario", "overrides", "message"),
    [
        (BASE + "flows = " + "[" * 100_000, None, "scenario: invalid TOML: nesting too deep"),
        (BASE, ["workload.flows=" + "[" * 100_000], "--set workload.flows: nesting too deep"),
        ({"workload": {"flows": _nested(500)}}, None, "workload.flows[0][0]"),
        (
            BASE + "flows = " + DIGITS,
            None,
            f"invalid TOML: line 4: 1000...0 (100000 digits) is out of range: {RANGE}",
        ),
        (
            BASE,
            ["workload.flows=" + DIGITS],
            f"--set workload.flows: 1000...0 (100000 digits) is out of range: {RANGE}",
        ),
        (
            BASE + "flows = 1" + "0" * 29,
            None,
            "workload.flows: 1000...0 (30 digits) is out of range",
        ),
        ({"workload": {"flows": 10**100_000}}, None, "workload.flows: an integer of more than"),
        (
            {"workload": {"flows": 2**64}},
            None,
            f"workload.flows: 18446744073709551616 is out of range: {RANGE}",
        ),
        ({"run": {"seed": -(2**63) - 1}}, None, "run.seed: -9223372036854775809 is out of range"),
        (BASE + "[run]\nseed = 1979-05-27\n", None, "run.seed: 1979-05-27 is a TOML date/time"),
        ({"workload": {"extra": [{"flows": 2**65}]}}, None, "workload.extra[0].flows: 3689"),
    ],
    ids=[
        "deep-toml",
        "deep-set",
        "deep-mapping",
        "long-int-toml",
        "long-int-set",
        "30-digit-toml",
        "long-int-mapping",
        "2^64",
        "-2^63-1",
        "toml-date",
        "in-a-list",
    ],
)
def test_hostile_values_are_scenario_errors_naming_the_key(
    scenario: object, overrides: list[str] | None, message: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(scenario, overrides)  # type: ignore[arg-type]
    assert message in str(info.value)
    assert len(str(info.value)) < 300  # the number or the path is abbreviated


def test_integers_at_the_64_bit_limits_reach_the_core_as_integers() -> None:
    import json

    from shoal import _core

    for seed in (2**64 - 1, 0):
        loaded = load_scenario({"run": {"seed": seed}})
        resolved = json.loads(_core.resolve(loaded.to_json())[0])
        assert resolved["run"]["seed"] == seed


def test_hostile_scenario_file_in_the_cli(shoal_cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "deep.toml").write_text(BASE + "flows = " + "[" * 100_000)
    (tmp_path / "long.toml").write_text(BASE + "flows = " + DIGITS)
    (tmp_path / "ok.toml").write_text(BASE + "flows = 10\n")
    for args, message in (
        (["run", "deep.toml"], "deep.toml: invalid TOML: nesting too deep"),
        (["run", "long.toml"], "long.toml: invalid TOML: line 4: 1000...0 (100000 digits)"),
        (["run", "ok.toml", "--set", "run.seed=" + DIGITS], "--set run.seed: 1000...0 (100000"),
        (["trace", "long.toml", "-o", "x.csv"], "long.toml: invalid TOML"),
    ):
        proc = shoal_cli(*args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: ") and message in proc.stderr
        assert "Traceback" not in proc.stderr


def test_hostile_sweep_values_are_sweep_errors(tmp_path: Path) -> None:
    from shoal import SweepError, load_sweep

    cases = {
        "[scenario]\n[axes]\nseeds = " + "[" * 100_000: "invalid TOML: nesting too deep",
        "[scenario]\n[axes]\nseeds = " + DIGITS: "line 3: 1000...0 (100000 digits)",
        '[scenario]\n[axes]\n"workload.flows" = [1, 2, 1'
        + "0" * 25
        + "]": "axes.workload.flows[2]",
        "[scenario]\n[axes]\nseeds = [1979-05-27]": "axes.seeds[0]: 1979-05-27",
    }
    for i, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"s{i}.toml"
        path.write_text(text + "\n")
        with pytest.raises(SweepError) as info:
            load_sweep(path)
        assert str(path) in str(info.value) and message in str(info.value)


def test_units_are_one_grammar_for_scenarios_and_the_advisor() -> None:
    """`100gbps` means 100 Gbps in a scenario as in the advisor (the core reads both);
    a capital B is bytes, which a rate refuses in both."""
    from shoal import _core, advise
    from shoal.advise.units import AdviseError, parse_rate

    spellings = ("100Gbps", "100gbps", "100 Gb/s", "0.1Tbps")
    resolved = {
        _core.resolve(load_scenario({"topology": {"link_rate": r}}).to_json())[0] for r in spellings
    }
    assert len(resolved) == 1 and '"link_rate":"100Gbps"' in resolved.pop()
    assert {parse_rate("rate", r) for r in spellings} == {100 * 10**9}
    assert advise.bdp(rate="100gbps", rtt="80US").bdp == 1_000_000
    with pytest.raises(ScenarioError, match="capital B is bytes"):
        _core.resolve(load_scenario({"topology": {"link_rate": "100GBps"}}).to_json())
    with pytest.raises(AdviseError, match="capital B is bytes"):
        parse_rate("rate", "100GBps")
