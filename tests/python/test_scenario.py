"""Scenario input handling in Python: override parsing and path resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    apply_overrides(data, ["switch.ecn.k=200KB", "switch.alpha=2", "run.seed=9"])
    assert data == {"switch": {"alpha": 2, "ecn": {"k": "200KB"}}, "run": {"seed": 9}}


def test_apply_overrides_dict_values_are_not_parsed() -> None:
    data: dict = {}
    apply_overrides(data, {"workload.senders": "1", "run.seed": 3})
    assert data == {"workload": {"senders": "1"}, "run": {"seed": 3}}


@pytest.mark.parametrize("bad", ["switch.ecn.k", "=3", "a..b=1"])
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


def test_builtin_cdf_name_is_kept(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('[workload]\ncdf = "websearch"\n')
    assert load_scenario(scenario).data["workload"]["cdf"] == "websearch"


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
