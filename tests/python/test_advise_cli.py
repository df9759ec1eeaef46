"""``shoal advise``: JSON keys and units, human output, and error exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner as TyperRunner

from conftest import CliRunner
from shoal.cli import app

runner = TyperRunner()

BCC_ARGS = [
    "bcc",
    "--rate",
    "100Gbps",
    "--rtt",
    "80us",
    "--lambda",
    "0.72",
    "--pool",
    "3MB",
    "--alpha",
    "4",
    "--reserved",
    "128KB",
    "--ports",
    "8",
    "--h",
    "8us",
    "--json",
]


def _advise(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, ["advise", *args], env={"COLUMNS": "120", "NO_COLOR": "1"})
    return res.exit_code, res.stdout, res.stderr


def test_headroom_json(shoal_cli: CliRunner) -> None:
    # The exact invocation from the issue, in a real process.
    p = shoal_cli(
        "advise", "headroom", "--rate", "100Gbps", "--delay", "2us", "--mtu", "1500", "--json"
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["eta"] == 56_840
    assert data["inputs"] == {"rate": 100_000_000_000, "delay": 2e-06, "mtu": 1500, "queues": 8}
    assert data["sources"] and data["assumptions"] and data["formulas"]["eta"]


def test_bcc_json_keys_and_values() -> None:
    code, out, _ = _advise(*BCC_ARGS)
    assert code == 0
    data = json.loads(out)
    assert {"kmin", "kmax", "pmax", "b_r"} <= data.keys()
    assert (data["b_r"], data["kmax"], data["kmin"], data["pmax"]) == (
        1_592_000,
        2_602_000,
        1_802_000,
        0.1,
    )
    assert data["inputs"]["h"] == pytest.approx(8e-6)


def test_human_output_has_numbers_formula_assumptions_and_source() -> None:
    code, out, _ = _advise("headroom", "--chip", "trident2", "--delay", "1.5us")
    assert code == 0
    for text in (
        "5,591,040 B",
        "5.33 MiB",
        "44.4%",
        "eta = 2 * (C * D_prop + MTU) + 3840 B",
        "assumptions:",
        "sources:",
        "DSH paper",
        "section III-A",
    ):
        assert text in out


@pytest.mark.parametrize(
    "args",
    [
        ["bdp", "--rate", "100Gbps", "--rtt", "80us"],
        ["tail-drop", "--rate", "10Gbps", "--rtt", "100us", "--flows", "100", "--sync", "desync"],
        ["ecn", "--rate", "100Gbps", "--rtt", "80us", "--flows", "48", "--mix", "mice"],
        ["dt", "--pool", "3MB", "--alpha", "1", "--active", "1"],
        [
            "dsh-burst",
            "--chip",
            "tomahawk",
            "--delay",
            "2us",
            "--alpha",
            "1/16",
            "--queues",
            "7",
            "--load",
            "2",
            "--bursting",
            "16",
            "--congested",
            "2",
        ],
        ["bcc", "--chip", "tomahawk", "--rtt", "80us", "--alpha", "4", "--alpha", "2"],
        ["chip"],
        ["chip", "tomahawk"],
    ],
)
def test_every_topic_answers_in_both_forms(args: list[str]) -> None:
    code, out, err = _advise(*args)
    assert code == 0, err
    assert out.strip()
    code, out, err = _advise(*args, "--json")
    assert code == 0, err
    json.loads(out)


def test_dt_json_bcc_testbed() -> None:
    code, out, _ = _advise("dt", "--pool", "3MB", "--alpha", "1", "--json")
    assert json.loads(out)["per_queue"] == 1_500_000


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["headroom", "--rate", "100Gbs", "--delay", "2us"], ["--rate", "Gbps"]),
        (
            ["headroom", "--rate", "-100Gbps", "--delay", "2us"],
            ["--rate", "-100Gbps", "accepted: 1 Mbps to 10 Tbps"],
        ),
        (["headroom", "--delay", "2us"], ["--rate", "required"]),
        (["headroom", "--rate", "100Gbps", "--delay", "2"], ["--delay", "us"]),
        (["dt", "--pool", "3MB", "--alpha", "0"], ["--alpha", "0 is out of range", "1/1024"]),
        (
            ["bcc", "--rate", "100Gbps", "--rtt", "80us", "--pool", "3MB", "--ports", "8"],
            ["--alpha", "required"],
        ),
        (["bcc", *BCC_ARGS[1:], "--lambda", "x"], ["--lambda"]),
        (["headroom", "--chip", "trident9", "--delay", "1us"], ["--chip", "tomahawk"]),
        (["chip", "nope"], ["--chip", "trident2"]),
        (["headroom", "--rate", "1Gbps", "--delay", "1us", "--ports", "1.5"], ["--ports", "whole"]),
        (["ecn", "--rate", "1Gbps", "--rtt", "1us", "--mix", "mice"], ["--flows"]),
    ],
)
def test_bad_input_exits_2_with_error(args: list[str], words: list[str]) -> None:
    code, out, err = _advise(*args)
    assert code == 2
    assert err.startswith("error:"), err
    assert "Traceback" not in err + out
    for word in words:
        assert word in err


def test_check_with_set(shoal_cli: CliRunner, tmp_path: Path) -> None:
    scenario = tmp_path / "my.toml"
    scenario.write_text('[topology]\nkind = "star"\nhosts = 16\nlink_delay = "10us"\n')
    p = shoal_cli("advise", "check", scenario, "--set", "switch.marking.cutoff.k=10KB", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["context"]["k"] == 10_000
    rules = {f["rule"] for f in data["findings"]}
    assert "k-below-transport-minimum" in rules
    assert all(f["source"] for f in data["findings"])
    code, out, _ = _advise(
        "check", str(scenario), "--set", "switch.marking.cutoff.k=10KB", "--strict"
    )
    assert code == 1
    assert "k-below-transport-minimum" in out


def test_check_errors(tmp_path: Path) -> None:
    code, _, err = _advise("check", str(tmp_path / "missing.toml"))
    assert code == 2 and err.startswith("error:")
    scenario = tmp_path / "s.toml"
    scenario.write_text("[topology]\nhosts = 4\n")
    code, _, err = _advise("check", str(scenario), "--set", "switch.marking.cutoff.k=abc")
    assert code == 2 and "switch.marking.cutoff.k" in err


@pytest.mark.parametrize(
    ("topology", "key"),
    [
        ('kind = "leaf_spine"\nleaves = 2\nfailed_links = [[0, 999]]', "topology.failed_links"),
        ('kind = "file"\npath = "missing.txt"', "topology.path"),
    ],
)
def test_check_names_the_bad_topology_key(tmp_path: Path, topology: str, key: str) -> None:
    """The network the advisor reads is the core's: its errors name the key."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(f"[topology]\n{topology}\n")
    code, out, err = _advise("check", str(scenario))
    assert code == 2
    assert err.startswith(f"error: {key}: "), err
    assert "Traceback" not in err + out


HEADROOM = ["headroom", "--rate", "100Gbps", "--delay", "2us"]
DT = ["dt", "--pool", "3MB", "--alpha", "1"]
BCC_CHIP = ["bcc", "--chip", "tomahawk", "--rtt", "80us", "--alpha", "4"]
DSH_CHIP = ["dsh-burst", "--chip", "tomahawk", "--delay", "2us", "--alpha", "1", "--load", "2"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        # Out of physical range: the option, the value and the accepted range.
        ([*HEADROOM, "--mtu", "1e30"], ["--mtu", "1e30", "64 B to 65,535 B"]),
        ([*HEADROOM, "--mtu", "10"], ["--mtu", "64 B to 65,535 B"]),
        (["bdp", "--rate", "1e30Gbps", "--rtt", "80us"], ["--rate", "1 Mbps to 10 Tbps"]),
        (["bdp", "--rate", "0Gbps", "--rtt", "80us"], ["--rate", "0Gbps", "1 Mbps"]),
        (["bdp", "--rate", "100Gbps", "--rtt", "0us"], ["--rtt", "10 ns to 10 s"]),
        (["bdp", "--rate", "100Gbps", "--rtt", "-5us"], ["--rtt", "-5us", "10 ns to 10 s"]),
        (["bdp", "--rate", "100Gbps", "--rtt", "1e9s"], ["--rtt", "10 s"]),
        (["bdp", "--rate", "nanGbps", "--rtt", "80us"], ["--rate", "nanGbps"]),
        (["bdp", "--rate", "infGbps", "--rtt", "80us"], ["--rate", "infGbps"]),
        (["headroom", "--rate", "100Gbps", "--delay", "-1us"], ["--delay", "0 to 5 s"]),
        ([*HEADROOM, "--queues", "9"], ["--queues", "1 to 8", "802.1Qbb"]),
        ([*HEADROOM, "--ports", "0"], ["--ports", "1 to 1,024"]),
        ([*HEADROOM, "--ports", "4", "--buffer", "0"], ["--buffer", "more than 0"]),
        ([*HEADROOM, "--ports", "4", "--buffer", "-3MB"], ["--buffer", "-3MB"]),
        (["dt", "--pool", "0", "--alpha", "1"], ["--pool", "more than 0"]),
        (["dt", "--pool", "3MB", "--alpha", "-1"], ["--alpha", "-1", "1/1024 to 1,024"]),
        (["dt", "--pool", "3MB", "--alpha", "1/2000"], ["--alpha", "1/1024"]),
        (["dt", "--pool", "3MB", "--alpha", "5000"], ["--alpha", "1,024"]),
        ([*DT, "--active", "0"], ["--active", "1 to 1,048,576"]),
        ([*DT, "--reserved", "-1KB"], ["--reserved", "-1KB"]),
        (["ecn", "--rate", "1Gbps", "--rtt", "1us", "--lambda", "0"], ["--lambda", "more than 0"]),
        (["ecn", "--rate", "1Gbps", "--rtt", "1us", "--lambda", "-1"], ["--lambda", "-1"]),
        (["tail-drop", "--rate", "1Gbps", "--rtt", "1us", "--flows", "0"], ["--flows", "1 to"]),
        ([*BCC_ARGS[:-1], "--pmax", "2"], ["--pmax", "at most 1"]),
        ([*BCC_ARGS[:-1], "--h", "0us"], ["--h", "more than 0"]),
        ([*DSH_CHIP[:-2], "--load", "1"], ["--load", "more than 1"]),
        ([*DSH_CHIP, "--congested", "-1"], ["--congested", "0 to"]),
        # Inconsistent with each other or with the chip.
        ([*DT, "--reserved", "4MB"], ["--reserved", "4MB", "larger than the shared pool"]),
        ([*BCC_ARGS[:-1], "--reserved", "4MB"], ["--reserved", "larger than the shared pool"]),
        ([*BCC_CHIP, "--reserved", "1MB"], ["--reserved", "no shared pool", "512 KiB"]),
        (
            ["headroom", "--chip", "tomahawk", "--delay", "1us", "--ports", "64"],
            ["--ports", "1 to 32"],
        ),
        ([*DSH_CHIP, "--ports", "33"], ["--ports", "1 to 32"]),
        ([*BCC_CHIP, "--ports", "16"], ["--ports", "one pool", "1 to 8"]),
        ([*DSH_CHIP, "--queues", "1", "--bursting", "40"], ["--bursting", "32"]),
    ],
)
def test_out_of_range_input_exits_2_naming_option_value_and_range(
    args: list[str], words: list[str]
) -> None:
    code, out, err = _advise(*args)
    assert code == 2, out
    assert err.startswith("error:"), err
    assert "Traceback" not in err + out
    for word in words:
        assert word in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bdp", "--rate", "100Gbps", "--rtt", "80ms"], ["--rtt", "80ms", "did you mean us"]),
        ([*HEADROOM[:-1], "20ms"], ["--delay", "20ms"]),
        ([*HEADROOM, "--mtu", "64KB"], ["--mtu", "9,216 B"]),
        (["dt", "--pool", "3MB", "--alpha", "16"], ["--alpha", "1/128 to 8"]),
    ],
)
def test_unusual_input_warns_and_still_answers(args: list[str], words: list[str]) -> None:
    code, out, err = _advise(*args, "--json")
    assert code == 0, err
    json.loads(out)  # the warning goes to stderr, JSON stays clean
    assert err.startswith("warning:"), err
    for word in words:
        assert word in err


def test_help_states_accepted_ranges() -> None:
    code, out, _ = _advise("headroom", "--help")
    assert code == 0
    flat = " ".join(out.replace("│", " ").split())
    assert "64 B to 65,535 B" in flat
    assert "1 to 8" in flat
