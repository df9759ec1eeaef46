"""Labels that say what the number is (issue 30, item 11): PFC's longest pause and most
paused port, the advisor's headroom totals, flows counted by transport, CNPs only where
the controller uses them, a star without uplinks, and ``Mb`` in a size."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import shoal
from conftest import RDMA_MARKED_INCAST as MARKED
from conftest import run_cli
from shoal import advise

#: Eight RDMA senders at line rate into host 0 through a 200 KB pool: PFC pauses each
#: sender hundreds of times.
INCAST_PFC = {
    "topology": {"kind": "star", "hosts": 9, "link_rate": "100Gbps", "link_delay": "1us"},
    "switch": {"pool_size": "200KB", "reserved": "0B", "flow_control": {"kind": "pfc"}},
    "rdma": {"cc": {"kind": "none"}},
    "workload": {"pattern": "incast", "receiver": 0, "size": "200KB", "transport": "rdma"},
}


def _pauses(events: pd.DataFrame, end_ns: float) -> dict[tuple, list[float]]:
    """Each (node_kind, node, port, class)'s pauses, from the frame log alone: from a
    PAUSE to the next RESUME, repeats ignored, an open pause closed at ``end_ns``."""
    out: dict[tuple, list[float]] = {}
    for key, frames in events.groupby(["node_kind", "node", "port", "class"], sort=True):
        since, spans = None, []
        for time_ns, pause in zip(frames["time_ns"], frames["pause"], strict=True):
            if pause and since is None:
                since = time_ns
            elif not pause and since is not None:
                spans.append(time_ns - since)
                since = None
        if since is not None:
            spans.append(end_ns - since)
        out[key] = spans
    return out


@pytest.fixture(scope="module")
def incast(tmp_path_factory: pytest.TempPathFactory) -> tuple[shoal.Result, Path]:
    out = tmp_path_factory.mktemp("incast") / "run"
    return shoal.run(INCAST_PFC, out=out), out


def test_the_longest_pause_is_one_pause(incast: tuple[shoal.Result, Path]) -> None:
    result, _ = incast
    assert result.pfc is not None
    pauses = _pauses(result.pfc, result.summary["duration_ps"] / 1e3)
    assert max(len(p) for p in pauses.values()) > 1, "each port must pause more than once"
    pfc = result.summary["pfc"]
    longest = max(max(p) for p in pauses.values())
    assert abs(pfc["longest_pause_ns"] - longest) < 1e-6
    # The most paused port class's total, as before, is a different and larger number.
    assert abs(pfc["max_paused_ns"] - max(sum(p) for p in pauses.values())) < 1e-6
    assert pfc["longest_pause_ns"] < pfc["max_paused_ns"]


def test_summarize_names_the_longest_pause_and_the_most_paused_port(
    incast: tuple[shoal.Result, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from shoal._units import fmt_time

    result, out = incast
    code, text, _ = run_cli(capsys, "summarize", out)
    assert code == 0
    line = next(line for line in text.splitlines() if line.startswith("PFC:"))
    pfc = result.summary["pfc"]
    assert f"longest pause {fmt_time(pfc['longest_pause_ns'])}" in line, line
    assert f"most paused port class {fmt_time(pfc['max_paused_ns'])} in all" in line, line
    assert f"longest {fmt_time(pfc['max_paused_ns'])}" not in line, line


def test_an_old_summary_without_the_longest_pause_still_prints() -> None:
    """A summary.json from before the key: the line says nothing wrong about it."""
    from shoal._summary import summary_text

    old = {"pfc": {"pause_frames_sent": 3, "paused_ns": 2000.0, "max_paused_ns": 1500.0}}
    text = summary_text(old)
    assert "longest pause" not in text and "most paused port class 1.5 µs in all" in text


def test_rdma_flows_are_counted_as_rdma(incast: tuple[shoal.Result, Path]) -> None:
    result, _ = incast
    flows = result.summary["flows"]
    assert flows["by_transport"] == {"rdma": {"flows": 8, "finished": 8}}
    assert flows["total"] == 8
    assert "flows" not in result.summary["counters"], "counted once, in summary.flows"


def test_tcp_flows_are_counted_as_tcp(tmp_path: Path) -> None:
    from conftest import TINY

    flows = shoal.run(TINY).summary["flows"]
    assert flows["by_transport"] == {"tcp": {"flows": 20, "finished": 20}}
    assert flows["total"] == 20


#: MARKED with thresholds so low that every controller sees marks.
LOW_MARKS = {
    **MARKED,
    "switch": {
        **MARKED["switch"],  # type: ignore[dict-item]
        "marking": {"red": {"kmin": "2KB", "kmax": "8KB", "pmax": 1.0}},
    },
}


@pytest.mark.parametrize("cc", ["hpcc", "powertcp", "theta_powertcp", "timely"])
def test_controllers_without_cnps_print_none(
    cc: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Their senders count marked ACKs (the summary keeps them), but they have no CNP."""
    scenario = {**LOW_MARKS, "rdma": {"cc": {"kind": cc}}}
    assert shoal.run(scenario, out=tmp_path / "run").summary["cnps"] > 0
    code, text, _ = run_cli(capsys, "summarize", tmp_path / "run")
    assert code == 0 and "CNPs" not in text, text


def test_dcqcn_prints_its_cnps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = shoal.run(MARKED, out=tmp_path / "run").summary
    assert summary["cnps"] > 0
    code, text, _ = run_cli(capsys, "summarize", tmp_path / "run")
    assert code == 0 and f"CNPs {summary['cnps']:,}" in text


def test_a_star_has_no_uplinks() -> None:
    """A star's warnings speak of its host links only."""
    scenario = {
        **INCAST_PFC,
        "switch": {"pool_size": "200KB", "flow_control": {"kind": "pfc", "headroom": "20KB"}},
    }
    loaded = shoal.load_scenario(scenario)
    _, warnings = shoal._core.resolve(loaded.to_json())
    headroom = [w for w in warnings if "headroom" in w]
    assert any("host links" in w for w in headroom), warnings
    assert not any("uplink" in w for w in warnings), warnings


def test_leaf_spine_warns_about_its_uplinks_too() -> None:
    scenario = {
        **INCAST_PFC,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4},
        "switch": {"pool_size": "200KB", "flow_control": {"kind": "pfc", "headroom": "20KB"}},
    }
    _, warnings = shoal._core.resolve(shoal.load_scenario(scenario).to_json())
    assert any("uplinks" in w for w in warnings), warnings


# -- the advisor's headroom totals ----------------------------------------------------------


def test_headroom_totals_are_labelled_totals() -> None:
    answer = advise.headroom(rate="100Gbps", delay="2us", mtu=1500, ports=32, queues=8)
    labels = {key: label for key, label, _, _ in answer.OUTPUTS}
    assert "per queue" in labels["eta"]
    for key in ("static_total", "dsh_total"):
        assert "total" in labels[key] and "per " not in labels[key].split("(")[0], labels[key]
    # The numbers behind them: 32 x 8 x eta and 32 x eta.
    assert answer.static_total == 32 * 8 * answer.eta and answer.dsh_total == 32 * answer.eta


def test_headroom_cli_prints_totals_as_totals(capsys: pytest.CaptureFixture[str]) -> None:
    code, text, _ = run_cli(
        capsys, "advise", "headroom", "--rate", "100Gbps", "--delay", "2us", "--ports", "32"
    )
    assert code == 0
    assert "static headroom (per queue)" not in text and "(per port)" not in text, text
    assert "total" in text


# -- Mb in a size ----------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["3Mb", "3mb", "720Kb", "720kb", "1Gb", "1500b", "128kib"])
def test_a_size_in_bits_is_refused_naming_bytes(size: str) -> None:
    with pytest.raises(shoal.ScenarioError) as info:
        shoal.run({**INCAST_PFC, "switch": {"pool_size": size}})
    message = str(info.value)
    assert "switch.pool_size" in message and "bits" in message, message
    assert "B" in message.split("bits", 1)[1], message  # says what to write instead


@pytest.mark.parametrize(
    ("size", "nbytes"), [("3MB", 3_000_000), ("3mB", 3_000_000), ("720kB", 720_000), ("2KiB", 2048)]
)
def test_sizes_in_bytes_are_read_as_before(size: str, nbytes: int) -> None:
    assert shoal._core.parse_bytes(size) == nbytes


def test_the_advisor_refuses_a_size_in_bits() -> None:
    with pytest.raises(advise.AdviseError, match="bits"):
        advise.headroom(rate="100Gbps", delay="2us", mtu="1500b")


def test_rates_in_bits_are_read_as_before() -> None:
    assert shoal._core.parse_rate_bps("100Gbps") == 100_000_000_000
    assert shoal._core.parse_rate_bps("2.5 Gb/s") == 2_500_000_000
