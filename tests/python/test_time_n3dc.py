"""validation/time_n3dc.py without ns3-datacenter: the two program copies it derives, the
flows it reads from the listing copy, its measurement of a process (CPU time and the
child's own peak memory), a whole run with stand-in reference programs and the real
Shoal, and its errors."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_n3dc  # noqa: E402
import compare_n3dc_workload  # noqa: E402
import time_n3dc  # noqa: E402
from compare_ns3 import UserError  # noqa: E402

# Three flows as the listing copy prints them (its std::cout line plus size and start),
# out of start order, with other output around them.
LISTING = """Over-subscription ratio: 4
 from 3 to 40 fromLeadId 0 serverCount 32 leafCount 2 size 1234 startns 100001807
 from 40 to 2 fromLeadId 1 serverCount 32 leafCount 2 size 99000 startns 100000500
Finished installation of applications from leaf-0
 from 7 to 33 fromLeadId 0 serverCount 32 leafCount 2 size 5000 startns 100002000
Total flow: 4
"""

FAKE_PROGRAM = """#!{python}
import sys
if "flows" in sys.argv[0]:
    sys.stdout.write({listing!r})
x = sum(range(200_000))
"""


@pytest.fixture
def n3dc(tmp_path: Path) -> Path:
    """A stand-in for the reference's tree: the lines of the two programs the copies
    change, its CMakeLists, config-burst.txt and websearch.txt."""
    root = tmp_path / "ns-3.39"
    programs = root / time_n3dc.PROGRAMS
    programs.mkdir(parents=True)
    (programs / f"{time_n3dc.WORKLOAD}.cc").write_text(
        'int main() {\n\t\t\tstd::cout << " from " << a'
        + time_n3dc.FLOWS_PRINT[0]
        + "\n\t\t\tappCon.Start(Seconds(startTime));\n}\n"
    )
    (programs / "powertcp-evaluation-burst.cc").write_text(
        "int main() {\n" + time_n3dc.QUIET_REPORT[0] + "\n}\n"
    )
    (programs / "CMakeLists.txt").write_text(
        "build_example(\n  NAME powertcp-evaluation-burst\n)\n"
    )
    (root / compare_n3dc.TEMPLATE).write_text(
        "ENABLE_QCN 1\nTOPOLOGY_FILE x\nFLOW_FILE x\nFCT_OUTPUT_FILE x\nSIMULATOR_STOP_TIME 0.2\n"
        "BUFFER_SIZE 16\nENABLE_TRACE 1\n"
    )
    (root / compare_n3dc_workload.N3DC_CDF).write_text("0 0.0\n2000 0.0\n30000000 1\n")
    return root


def build_fakes(root: Path) -> None:
    """Stand-ins for the three built programs: the listing copy prints LISTING."""
    for name in (time_n3dc.WORKLOAD, time_n3dc.FLOWS, time_n3dc.QUIET):
        exe = root / time_n3dc.BUILT.format(name)
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text(FAKE_PROGRAM.format(python=sys.executable, listing=LISTING))
        exe.chmod(0o755)


def test_each_copy_changes_one_line_and_is_added_to_the_build_once(n3dc: Path):
    programs = n3dc / time_n3dc.PROGRAMS
    assert time_n3dc.write_copy(n3dc, time_n3dc.WORKLOAD, time_n3dc.FLOWS, time_n3dc.FLOWS_PRINT)
    assert time_n3dc.write_copy(
        n3dc, "powertcp-evaluation-burst", time_n3dc.QUIET, time_n3dc.QUIET_REPORT
    )
    flows = (programs / f"{time_n3dc.FLOWS}.cc").read_text()
    assert (
        '" size " << flowSize << " startns "' in flows
        and "appCon.Start(Seconds(startTime));" in flows
    )
    quiet = (programs / f"{time_n3dc.QUIET}.cc").read_text()
    assert (
        "PrintResults" in quiet
        and "\tSimulator::Schedule(Seconds(delay), PrintResults" not in quiet
    )
    # A second call changes nothing: the build is not redone, the entries not repeated.
    assert not time_n3dc.write_copy(
        n3dc, time_n3dc.WORKLOAD, time_n3dc.FLOWS, time_n3dc.FLOWS_PRINT
    )
    cmake = (programs / "CMakeLists.txt").read_text()
    assert (
        cmake.count(f"NAME {time_n3dc.FLOWS}\n") == 1
        and cmake.count(f"NAME {time_n3dc.QUIET}\n") == 1
    )


def test_a_program_that_is_not_the_expected_source_is_refused(n3dc: Path):
    (n3dc / time_n3dc.PROGRAMS / "powertcp-evaluation-burst.cc").write_text("int main() {}\n")
    with pytest.raises(UserError, match="cannot derive powertcp-evaluation-burst-quiet") as e:
        time_n3dc.write_copy(
            n3dc, "powertcp-evaluation-burst", time_n3dc.QUIET, time_n3dc.QUIET_REPORT
        )
    assert e.value.code == 1


def test_unbuilt_copies_ask_for_build(n3dc: Path):
    with pytest.raises(UserError, match="--build"):
        time_n3dc.prepare_programs(n3dc, build=False)
    build_fakes(n3dc)
    time_n3dc.prepare_programs(n3dc, build=False)  # written and built: nothing to do


def test_the_listed_flows_become_a_trace_in_start_order(n3dc: Path, tmp_path: Path):
    build_fakes(n3dc)
    out = tmp_path / "out"
    out.mkdir()
    args = argparse.Namespace(seed=7, load=0.8, arrivals=1.0, tail=0.1)
    conf = time_n3dc.workload_conf(n3dc, out)
    trace = time_n3dc.list_flows(n3dc, conf, out, args)
    # Starts are relative to the reference's START_TIME of 0.1 s.
    assert trace.to_dict("list") == {
        "id": [0, 1, 2],
        "src": [40, 3, 7],
        "dst": [2, 40, 33],
        "bytes": [99000, 1234, 5000],
        "start_ns": [500, 1807, 2000],
        "priority": [3, 3, 3],
    }
    assert pd.read_csv(out / "trace.csv").equals(trace)
    # The workload program writes its outputs apart from the burst program's.
    config = conf.read_text()
    assert (
        f"FCT_OUTPUT_FILE {out / 'workload_n3dc_fct.txt'}" in config and "ENABLE_TRACE 0" in config
    )


def test_a_process_is_measured_by_its_own_peak_memory(tmp_path: Path):
    # The driver's own memory (pandas and all) must not count as the child's.
    hog = bytearray(300 << 20)
    small = time_n3dc.measure([sys.executable, "-c", "pass"], tmp_path / "small.txt")
    big = time_n3dc.measure(
        [
            sys.executable,
            "-c",
            "import time; b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096]); "
            "time.sleep(0.3)",
        ],
        tmp_path / "big.txt",
    )
    del hog
    assert small["peak_mib"] < 100
    assert 200 <= big["peak_mib"] < 300
    assert big["cpu_s"] > 0 and big["wall_s"] >= 0.3


def test_a_failing_process_is_an_error_with_its_output(tmp_path: Path):
    with pytest.raises(UserError, match="exit 3") as e:
        time_n3dc.measure(
            [sys.executable, "-c", "print('boom'); raise SystemExit(3)"], tmp_path / "log.txt"
        )
    assert "boom" in str(e.value) and e.value.code == 1


def test_a_whole_run_times_both_references_and_shoal_on_the_same_flows(n3dc: Path, tmp_path: Path):
    build_fakes(n3dc)
    out = tmp_path / "timing"
    # The copies are written on the first call, which asks for them to be built ...
    assert time_n3dc.main(["--n3dc", str(n3dc), "--out", str(out), "--shoal-runs", "1"]) == 1
    # ... and the stand-ins are there already.
    assert time_n3dc.main(["--n3dc", str(n3dc), "--out", str(out), "--shoal-runs", "1"]) == 0
    report = json.loads((out / "timing.json").read_text())
    assert report["flows"] == 3 and report["bytes"] == 99000 + 1234 + 5000
    for name in ("workload", "burst_quiet", "shoal"):
        assert report[name]["cpu_s"] > 0 and report[name]["peak_mib"] > 0
    assert report["speedup_cpu"]["workload"] == pytest.approx(
        report["workload"]["cpu_s"] / report["shoal"]["cpu_s"]
    )
    # Shoal ran the listed flows, and finished them.
    summary = json.loads((out / "shoal" / "summary.json").read_text())
    assert summary["flows"]["total"] == 3 and summary["flows"]["finished"] == 3
    # The burst program got the same flows, in the reference's flow-file format.
    lines = (out / "n3dc_flows.txt").read_text().splitlines()
    assert lines[0] == "3" and [line.split()[:2] for line in lines[1:]] == [
        ["40", "2"],
        ["3", "40"],
        ["7", "33"],
    ]
    # A second call with --reuse keeps the references' measurements.
    before = {
        name: json.loads((out / f"{name}.json").read_text()) for name in ("workload", "burst_quiet")
    }
    assert (
        time_n3dc.main(["--n3dc", str(n3dc), "--out", str(out), "--shoal-runs", "1", "--reuse"])
        == 0
    )
    assert before == {
        name: json.loads((out / f"{name}.json").read_text()) for name in ("workload", "burst_quiet")
    }


def test_bad_arguments_exit_2_and_a_missing_reference_exits_1(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as e:
        time_n3dc.main(["--n3dc", str(tmp_path), "--load", "0"])
    assert e.value.code == 2 and "--load must be positive, got 0.0" in capsys.readouterr().err
    assert time_n3dc.main(["--n3dc", str(tmp_path / "nowhere")]) == 1
    assert "is not ns3-datacenter's ns-3.39" in capsys.readouterr().err
