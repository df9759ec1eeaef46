"""Figures of one run (``shoal plot queues / pauses / rates RUN``): drawn from any run
directory, with what they draw checked against the core's own accounting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import shoal
from shoal.plot import PlotError, flow_rates, pause_spans, pause_timeline, queues_over_time

INCAST = {
    "topology": {"kind": "star", "hosts": 9, "link_rate": "100Gbps", "link_delay": "1us"},
    "switch": {"pool_size": "300KB", "flow_control": {"kind": "pfc"}},
    "rdma": {"cc": "none"},
    "workload": {
        "pattern": "incast",
        "senders": "0-7",
        "receiver": 8,
        "size": "300KB",
        "transport": "rdma",
    },
    "run": {"sample_interval": "1us", "series": {"flows": [0, 5]}},
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plots") / "run"
    shoal.run(INCAST, out=path)
    return path


def test_the_pause_timeline_adds_up_to_the_cores_paused_time(run_dir: Path) -> None:
    """Each port class's spans, from its PAUSE to the RESUME after it, add up to the
    paused time the core accounts for it (``pfc_ports.paused_ns``)."""
    result = shoal.load(run_dir)
    assert result.pfc is not None and result.pfc_ports is not None
    end = result.summary["duration_ps"] / 1e3
    spans = pause_spans(result.pfc, end)
    assert spans, "the incast pauses the senders"
    ports = result.pfc_ports.set_index(["node_kind", "node", "port", "class"])
    for key, parts in spans.items():
        assert sum(length for _, length in parts) == pytest.approx(ports.loc[key, "paused_ns"])
    fig = pause_timeline(result.pfc, end_ns=end)
    assert len(fig.axes[0].collections) == len(spans)


def test_queue_and_rate_figures_draw_what_the_run_holds(run_dir: Path) -> None:
    result = shoal.load(run_dir)
    fig = queues_over_time(result.samples, ports=3)
    lines = fig.axes[0].get_lines()
    per_port = result.samples.groupby(["switch", "port", "time_ns"])["bytes"].sum()
    busy = per_port.groupby(["switch", "port"]).max()
    assert len(lines) == min(3, int((busy > 0).sum())) >= 1
    assert max(line.get_ydata().max() for line in lines) == pytest.approx(per_port.max() / 1e3)
    rates = flow_rates(result.series)
    assert [line.get_label() for line in rates.axes[0].get_lines()] == ["flow 0", "flow 5"]
    with pytest.raises(PlotError, match="flow 3 was not traced"):
        flow_rates(result.series, flows=[3])


def test_the_cli_draws_each_figure_of_a_run(run_dir: Path, tmp_path: Path) -> None:
    for kind in ("queues", "pauses", "rates"):
        out = tmp_path / f"{kind}.png"
        subprocess.run(
            [sys.executable, "-m", "shoal", "plot", kind, str(run_dir), "-o", str(out)],
            check=True,
            capture_output=True,
        )
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", kind


def test_a_run_without_the_data_is_a_clear_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    shoal.run({"topology": {"kind": "star", "hosts": 3}}, out=plain)
    done = subprocess.run(
        [sys.executable, "-m", "shoal", "plot", "rates", str(plain), "-o", str(tmp_path / "x")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "set run.series" in done.stderr
    assert "Traceback" not in done.stderr
