"""Runs end to end: run directories, determinism, atomic writes, traces, summaries."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import shoal
import shoal._run
from conftest import INCAST, TINY, CliRunner
from shoal._summary import parse_size

REPO = Path(__file__).resolve().parents[2]


def _run_dir_leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_cli_run_then_load_round_trip(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "results" / "tiny"
    proc = shoal_cli("run", tiny, "--quiet", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert {"flows.parquet", "summary.json", "scenario.json"} <= {p.name for p in out.iterdir()}
    assert _run_dir_leftovers(out.parent) == []

    result = shoal.load(out)
    flows = result.flows
    assert len(flows) == 20  # the scenario asks for 20 flows
    assert list(flows.columns) == [c for c, _ in shoal.table_schemas()["flows"]]
    assert sorted(flows["id"].tolist()) == list(range(20)) or flows["id"].is_unique
    assert flows["src"].between(0, 3).all() and flows["dst"].between(0, 3).all()
    assert (flows["src"] != flows["dst"]).all()
    assert result.scenario == json.loads((out / "scenario.json").read_text())
    assert result.scenario["topology"]["hosts"] == 4
    # Defaults are filled in: keys the tiny scenario never wrote are present.
    assert "pool_size" in result.scenario["switch"] and "cc" in result.scenario["transport"]
    assert result.summary["flows"]["total"] == len(flows)


def test_piped_cli_output_is_plain_text_with_the_summary_numbers(
    shoal_cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    """Captured stdout is not a terminal: the headline table comes as plain text (no
    terminal codes), one line per size bucket with the counts of summary.json."""
    out = tmp_path / "run"
    proc = shoal_cli("run", tiny, "--quiet", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    lines = proc.stdout.splitlines()
    for bucket, stats in summary["fct"].items():
        row = next(line.split() for line in lines if line.split()[:1] == [bucket])
        assert str(stats["count"]) in row, (bucket, row)
    assert lines[-1] == f"results written to {out}"


def test_default_out_dir_is_results_stem(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    proc = shoal_cli("run", tiny, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results" / "tiny" / "flows.parquet").is_file()


def test_flow_table_is_self_consistent(tiny: Path) -> None:
    flows = shoal.run(tiny).flows
    done = flows[flows["finished"]]
    assert len(done) > 0
    np.testing.assert_allclose(done["fct_ns"], done["finish_ns"] - done["start_ns"], rtol=1e-9)
    np.testing.assert_allclose(done["slowdown"], done["fct_ns"] / done["ideal_fct_ns"], rtol=1e-9)
    # The ideal FCT is a lower bound: no flow beats an empty network.
    assert (done["slowdown"] >= 1 - 1e-9).all(), done[["bytes", "fct_ns", "ideal_fct_ns"]]
    assert (done["delivered_bytes"] == done["bytes"]).all()
    assert done["finish_ns"].notna().all()
    assert flows.loc[~flows["finished"], "fct_ns"].isna().all()


def test_set_override_changes_resolved_scenario(tiny: Path) -> None:
    default = shoal.run(tiny)
    changed = shoal.run(tiny, set=["switch.marking.cutoff.k=200KB"])
    assert parse_size(changed.scenario["switch"]["marking"]["cutoff"]["k"]) == 200_000
    assert (
        "cutoff" not in default.scenario["switch"]["marking"]
        or parse_size(default.scenario["switch"]["marking"]["cutoff"]["k"]) != 200_000
    )
    via_dict = shoal.run(tiny, set={"switch.marking.cutoff.k": "200KB"})
    assert via_dict.scenario == changed.scenario


def test_cli_set_reaches_scenario_json(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "k200"
    proc = shoal_cli(
        "run",
        tiny,
        "--quiet",
        "--out",
        out,
        "--set",
        "switch.marking.cutoff.k=200KB",
        "--seed",
        "7",
    )
    assert proc.returncode == 0, proc.stderr
    scenario = json.loads((out / "scenario.json").read_text())
    assert parse_size(scenario["switch"]["marking"]["cutoff"]["k"]) == 200_000
    assert scenario["run"]["seed"] == 7


def test_same_seed_is_byte_identical_other_seed_differs(
    shoal_cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    for name, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        proc = shoal_cli("run", tiny, "--quiet", "--seed", seed, "--out", tmp_path / name)
        assert proc.returncode == 0, proc.stderr
    a, b, c = ((tmp_path / n / "flows.parquet").read_bytes() for n in "abc")
    assert a == b
    assert a != c
    fa, fc = shoal.load(tmp_path / "a").flows, shoal.load(tmp_path / "c").flows
    assert not (
        fa["bytes"].tolist() == fc["bytes"].tolist()
        and fa["start_ns"].tolist() == fc["start_ns"].tolist()
    )


def test_rewrite_replaces_previous_run(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    shoal.run(tiny, out=out)
    shoal.run(tiny, out=out, set=["run.seed=2"])
    assert shoal.load(out).scenario["run"]["seed"] == 2
    assert _run_dir_leftovers(tmp_path) == []


def test_interrupt_writes_nothing(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shoal._core.Simulation

    class Interrupted:
        def __init__(self, scenario_json: str, threads: int = 1) -> None:
            self._sim = real(scenario_json, threads)

        def __getattr__(self, name: str) -> object:
            return getattr(self._sim, name)

        def run(self, until_ps: int, max_events: int) -> bool:
            raise KeyboardInterrupt

    monkeypatch.setattr(shoal._run._core, "Simulation", Interrupted)
    out = tmp_path / "x"
    with pytest.raises(shoal.RunInterrupted, match="no results written"):
        shoal.run(tiny, out=out)
    assert not out.exists()
    assert _run_dir_leftovers(tmp_path) == []


#: Ten million events per simulated millisecond: three sources at the largest rate.
DENSE_UDP = """\
[topology]
kind = "star"
hosts = 4
[workload]
pattern = "udp"
senders = "1-3"
receiver = 0
rate = "100Tbps"
[run]
stop_time = "1s"
"""


@pytest.mark.parametrize("dense", [False, True], ids=["many_flows", "dense_events"])
def test_ctrl_c_stops_cleanly(tmp_path: Path, dense: bool) -> None:
    # Minutes of work at full speed: still running when the signal arrives.
    if dense:
        scenario, overrides = tmp_path / "udp.toml", []
        scenario.write_text(DENSE_UDP)
    else:
        scenario = REPO / "experiments" / "quickstart" / "star_dctcp.toml"
        overrides = ["--set", "workload.flows=300000"]
    out = tmp_path / "big"
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoal", "run", str(scenario), "--out", str(out), *overrides],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 130, stdout + stderr
    assert "error:" in stderr and "interrupted" in stderr and "no results written" in stderr
    assert "Traceback" not in stdout + stderr
    assert not out.exists()
    assert _run_dir_leftovers(tmp_path) == []


def test_trace_export_replays_the_same_flows(
    shoal_cli: CliRunner, tiny: Path, tmp_path: Path
) -> None:
    csv_path = tmp_path / "flows.csv"
    proc = shoal_cli("trace", tiny, "--out", csv_path)
    assert proc.returncode == 0, proc.stderr
    with csv_path.open() as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = list(reader)
    assert header == ["id", "src", "dst", "bytes", "start_ns", "priority"]
    assert len(rows) == 20
    for row in rows:
        int(row[0]), int(row[1]), int(row[2]), int(row[3]), float(row[4])

    original = tmp_path / "original"
    replay = tmp_path / "replay"
    assert shoal_cli("run", tiny, "--quiet", "--out", original).returncode == 0
    proc = shoal_cli(
        "run",
        tiny,
        "--quiet",
        "--out",
        replay,
        "--set",
        "workload.pattern=trace",
        "--set",
        f"workload.trace={csv_path}",
    )
    assert proc.returncode == 0, proc.stderr
    cols = ["id", "src", "dst", "bytes", "start_ns", "priority"]
    a = shoal.load(original).flows.sort_values("id")[cols].reset_index(drop=True)
    b = shoal.load(replay).flows.sort_values("id")[cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_trace_csv_matches_api(tiny: Path, tmp_path: Path, shoal_cli: CliRunner) -> None:
    csv_path = tmp_path / "t.csv"
    assert shoal_cli("trace", tiny, "--out", csv_path, "--seed", "3").returncode == 0
    api = shoal.trace(tiny, set=["run.seed=3"])
    from_csv = pd.read_csv(csv_path)
    assert from_csv["bytes"].tolist() == api["bytes"].tolist()
    assert from_csv["start_ns"].tolist() == pytest.approx(api["start_ns"].tolist())


def test_relative_trace_path_is_relative_to_the_scenario(tmp_path: Path) -> None:
    sub = tmp_path / "exp"
    sub.mkdir()
    (sub / "three.csv").write_text(
        "id,src,dst,bytes,start_ns\n0,0,1,5000,0\n1,2,3,7000,1000\n2,3,0,9000,2500\n"
    )
    scenario = sub / "replay.toml"
    scenario.write_text(
        '[topology]\nkind = "star"\nhosts = 4\n\n'
        '[workload]\npattern = "trace"\ntrace = "three.csv"\n'
    )
    flows = shoal.run(scenario).flows.sort_values("id")
    assert flows["bytes"].tolist() == [5000, 7000, 9000]
    assert flows["src"].tolist() == [0, 2, 3] and flows["dst"].tolist() == [1, 3, 0]
    assert flows["start_ns"].tolist() == [0.0, 1000.0, 2500.0]
    assert flows["finished"].all()


def test_summarize_json(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert shoal_cli("run", tiny, "--quiet", "--out", out).returncode == 0
    proc = shoal_cli("summarize", out, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    flows = shoal.load(out).flows
    done = flows[flows["finished"] & (flows["kind"] == "tcp")]
    assert summary["fct"]["all"]["count"] == len(done)
    small = done[done["bytes"] <= 100_000]
    assert summary["fct"]["small"]["count"] == len(small)
    assert sum(summary["fct"][b]["count"] for b in ("small", "medium", "large")) == len(done)
    assert summary["fct"]["all"]["mean_fct_ns"] == pytest.approx(done["fct_ns"].mean())
    assert summary["fct"]["all"]["p99_fct_ns"] <= done["fct_ns"].max() + 1e-6
    assert summary["seed"] == 1
    assert summary["shoal_version"] == shoal.__version__
    packets = summary["packets"]
    assert (
        packets["delivered"] + packets["dropped"] + packets.get("in_flight", 0) == packets["sent"]
    )
    assert summary["loss_rate"] == pytest.approx(packets["dropped"] / packets["sent"])
    # The table form mentions every bucket.
    table = shoal_cli("summarize", out)
    assert table.returncode == 0
    for bucket in ("small", "medium", "large", "all"):
        assert bucket in table.stdout


def test_run_json_output(shoal_cli: CliRunner, tiny: Path, tmp_path: Path) -> None:
    proc = shoal_cli("run", tiny, "--quiet", "--json", "--out", tmp_path / "r")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads((tmp_path / "r" / "summary.json").read_text())


def test_print_defaults_is_toml(shoal_cli: CliRunner) -> None:
    proc = shoal_cli("run", "--print-defaults")
    assert proc.returncode == 0, proc.stderr
    defaults = tomllib.loads(proc.stdout)
    for table in ("topology", "switch", "transport", "workload", "run"):
        assert table in defaults
    assert proc.stdout == shoal.default_scenario_toml()


def test_print_presets_is_the_presets_toml(shoal_cli: CliRunner) -> None:
    proc = shoal_cli("run", "--print-presets")
    assert proc.returncode == 0, proc.stderr
    presets = tomllib.loads(proc.stdout)
    assert presets == shoal.presets()
    assert presets["dsh_tomahawk"]["switch"]["buffer"] == "16MiB"
    assert "section V-A" in presets["dsh_tomahawk"]["description"]


def test_unfinished_flows_are_reported(
    shoal_cli: CliRunner, write_scenario, tmp_path: Path
) -> None:
    # 64 KB takes 5.2 us to serialize at 100 Gbps, so nothing can finish by 2 us.
    scenario = write_scenario(INCAST + '\n[run]\nstop_time = "2us"\n')
    out = tmp_path / "r"
    proc = shoal_cli("run", scenario, "--quiet", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert any(
        line.startswith("warning:") and "did not finish" in line
        for line in proc.stderr.splitlines()
    ), proc.stderr
    result = shoal.load(out)
    assert len(result.flows) == 3
    assert not result.flows["finished"].any()
    assert result.summary["flows"]["unfinished"] == 3
    assert result.summary["fct"]["all"]["count"] == 0
    assert (result.flows["delivered_bytes"] < result.flows["bytes"]).all()


def test_incast_without_stop_finishes_everything(write_scenario) -> None:
    result = shoal.run(write_scenario(INCAST))
    flows = result.flows
    assert len(flows) == 3 and flows["finished"].all()
    assert set(flows["src"]) == {1, 2, 3} and set(flows["dst"]) == {0}
    # Three 64 KB flows share one 100 Gbps link: the last cannot finish before 3 x 64 KB
    # have crossed it.
    assert flows["fct_ns"].max() >= 3 * 64_000 * 8 / 100
    assert result.summary["flows"]["unfinished"] == 0


def test_samples_are_written_when_requested(tiny: Path, tmp_path: Path) -> None:
    result = shoal.run(tiny, out=tmp_path / "r", set=['run.sample_interval="1us"'])
    assert result.samples is not None and len(result.samples) > 0
    loaded = shoal.load(tmp_path / "r")
    assert loaded.samples is not None
    assert list(loaded.samples.columns)[:6] == [
        "time_ns",
        "switch",
        "port",
        "queue",
        "bytes",
        "pool_bytes",
    ]
    assert shoal.run(tiny).samples is None


def test_scenario_from_text_and_dict(tiny: Path) -> None:
    from_file = shoal.run(tiny)
    from_text = shoal.run(TINY)
    from_dict = shoal.run(tomllib.loads(TINY))
    assert from_text.flows.equals(from_file.flows)
    assert from_dict.flows.equals(from_file.flows)


def test_quickstart_scenario_ships_with_the_package() -> None:
    from importlib import resources

    shipped = (resources.files("shoal") / "scenarios" / "star_dctcp.toml").read_text()
    assert shipped == (REPO / "experiments" / "quickstart" / "star_dctcp.toml").read_text()
    scenario = tomllib.loads(shipped)
    assert scenario["transport"]["mss"] + scenario["transport"]["header"] == 9000
    assert scenario["workload"]["senders"] == "0-23"


def test_demo(shoal_cli: CliRunner) -> None:
    proc = shoal_cli("demo", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    for bucket in ("small", "medium", "large", "all"):
        assert bucket in proc.stdout


def test_rdma_and_tcp_flows_side_by_side(tmp_path: Path) -> None:
    """One run with TCP and RDMA workloads: each flow's `kind` names its transport, the
    summary counts each, and an RDMA connection alone on its path (host 3 to host 2, no
    other traffic there) takes exactly its ideal FCT."""
    result = shoal.run(
        {
            "topology": {"kind": "star", "hosts": 4},
            "workload": {
                "pattern": "incast",
                "senders": "1",
                "receiver": 0,
                "size": "64KB",
                "extra": [
                    {
                        "pattern": "incast",
                        "senders": "3",
                        "receiver": 2,
                        "size": "64KB",
                        "transport": "rdma",
                    }
                ],
            },
        },
        out=tmp_path / "run",
    )
    flows = result.flows.set_index("src")
    assert flows.loc[1, "kind"] == "tcp" and flows.loc[3, "kind"] == "rdma"
    by_transport = result.summary["flows"]["by_transport"]
    assert by_transport == {"tcp": {"flows": 1, "finished": 1}, "rdma": {"flows": 1, "finished": 1}}
    assert flows.loc[3, "fct_ns"] == flows.loc[3, "ideal_fct_ns"]
    assert flows.loc[3, "retransmits"] == 0
    assert set(pd.read_parquet(tmp_path / "run" / "flows.parquet")["kind"]) == {"tcp", "rdma"}


def test_dcqcn_notifications_are_counted_and_shown(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """A 2-to-1 RDMA incast under DCQCN with RED marking: the ACK of every marked data
    packet echoes the mark (ns3-datacenter's model), so the senders count as many CNPs
    as the switch made marks; ``flatten_summary`` and ``shoal summarize`` show them."""
    from conftest import RDMA_MARKED_INCAST, run_cli

    result = shoal.run(RDMA_MARKED_INCAST, out=tmp_path / "run")
    summary = result.summary
    assert summary["cnps"] > 0 and summary["cnps"] == summary["ecn_marks"]
    assert shoal.store.flatten_summary(summary)["cnps"] == summary["cnps"]
    code, out, _ = run_cli(capsys, "summarize", tmp_path / "run")
    assert code == 0 and f"CNPs {summary['cnps']:,}" in out
