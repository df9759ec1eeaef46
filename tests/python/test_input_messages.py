"""What a user sees for mistyped input on the command line (issue 30, items 7, 10 and 13):
the full key path, the value and what is accepted, never a traceback."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import TINY, CliRunner


def _error(proc: subprocess.CompletedProcess[str]) -> str:
    """The ``error:`` line of a refused run (exit status 2, no traceback)."""
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}\n{output}"
    assert "Traceback" not in output, output
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert lines, output
    return " ".join(proc.stderr[proc.stderr.index(lines[0]) :].split())


@pytest.mark.parametrize(
    ("sets", "words"),
    [
        # NaN and infinities travel as JSON words Python writes and JSON lacks.
        (["workload.load=nan"], ["error: workload.load: NaN is not accepted", "a finite number"]),
        (["topology.link_rate=inf"], ["error: topology.link_rate: Infinity is not accepted"]),
        (["switch.alpha=-inf"], ["error: switch.alpha: -Infinity is not accepted"]),
        (
            ["switch.flow_control.kind=pfc", "switch.flow_control.pause_quanta=1",
             "switch.flow_control.refresh_quanta=1"],
            ["error: switch.flow_control.pause_quanta: 1 leaves no refresh interval", "2 to 65535"],
        ),
        (["switch.flow_control.knd=pfc"], ["error: switch.flow_control.knd:", "did you mean `kind`?"]),
        (
            ["switch.flow_control.classes=[3]"],
            ["error: switch.flow_control.classes:", 'set kind = "pfc"'],
        ),
        (["rdma.cc.kidn=hpcc"], ["error: rdma.cc.kidn:", "did you mean `kind`?"]),
        (["transport.cc=hpcc"], ["error: transport.cc:", 'set it in [rdma.cc] (kind = "hpcc")']),
        (["switch.buffer=2PB"], ["error: switch.buffer:", "up to 1PB"]),
    ],
    ids=["nan", "inf", "-inf", "pause_quanta", "knd", "classes", "kidn", "hpcc", "2PB"],
)
def test_mistyped_input_is_named_with_what_is_accepted(
    sets: list[str], words: list[str], shoal_cli: CliRunner, write_scenario: Callable[..., Path]
) -> None:
    scenario = write_scenario(TINY)
    args = [a for s in sets for a in ("--set", s)]
    message = _error(shoal_cli("run", scenario, "--quiet", "--out", "r", *args))
    for w in words:
        assert w in message, f"{w!r} not in: {message}"
    for wrong in ("expected value", "there are no fields", "1 to 0", "unknown unit"):
        assert wrong not in message, message


def test_a_size_in_pb_is_read(shoal_cli: CliRunner, write_scenario: Callable[..., Path]) -> None:
    """The README states the limits in PB: the limit itself, so written, is accepted."""
    scenario = write_scenario(TINY)
    proc = shoal_cli("run", scenario, "--quiet", "--out", "r", "--set", "host.nic_buffer=1PB")
    assert proc.returncode == 0, proc.stderr


def test_a_buffer_spent_on_unused_queues_is_warned_about(
    shoal_cli: CliRunner, write_scenario: Callable[..., Path]
) -> None:
    scenario = write_scenario(TINY)
    proc = shoal_cli("run", scenario, "--quiet", "--out", "r", "--set", "switch.buffer=12MB")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stderr.split())
    assert "switch.reserved: 128KB is reserved per queue" in text, proc.stderr
    assert "only queue 0" in text and "set switch.queues = 1" in text, proc.stderr


def test_an_impossible_buffer_gives_the_total_and_its_parts(
    shoal_cli: CliRunner, write_scenario: Callable[..., Path]
) -> None:
    scenario = write_scenario(TINY)
    message = _error(shoal_cli("run", scenario, "--quiet", "--out", "r", "--set", "switch.buffer=100KB"))
    # A star of 4 hosts: one pool of 4 ports, 4 x 8 x 128 KB reserved.
    assert "error: switch.buffer: 100KB is too small: it leaves 0 B shared" in message, message
    assert "needs at least 4097514 B" in message and "4096000 B of reserves" in message, message
