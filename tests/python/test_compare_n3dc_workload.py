"""validation/compare_n3dc_workload.py without ns3-datacenter: the reference's ideal FCT
computed by hand on its 128-host topology, its FCT file, the marking maps and input files
the script writes, the scenario, and the errors on bad arguments or a missing reference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from shoal._run import _resolve

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_n3dc  # noqa: E402
import compare_n3dc_workload as workload  # noqa: E402

TOPOLOGY = VALIDATION / "n3dc" / "topology.txt"


@pytest.fixture
def n3dc(tmp_path: Path) -> Path:
    """A stand-in for the reference's tree: its config-burst.txt keys and websearch.txt."""
    root = tmp_path / "ns-3.39"
    (root / compare_n3dc.TEMPLATE).parent.mkdir(parents=True)
    (root / compare_n3dc.TEMPLATE).write_text(
        "ENABLE_QCN 1\nTOPOLOGY_FILE x\nFLOW_FILE x\nSIMULATOR_STOP_TIME 0.2\n"
        "CC_MODE 3\nBUFFER_SIZE 16\n"
        "KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600\n"
        "KMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400\n"
        "PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2\n"
    )
    (root / workload.N3DC_CDF).write_text("0 0.0\n2000 0.0\n2100 0.02\n30000000 1\n")
    return root


def trace() -> pd.DataFrame:
    # Hosts 0 and 1 share a ToR; 32 is under the other ToR of the pod; 127 in the other pod.
    return pd.DataFrame(
        {
            "src": [0, 32, 127],
            "dst": [1, 0, 0],
            "bytes": [5985, 1000, 72661],
            "start_ns": [0.0, 10.0, 1500.25],
        }
    )


def test_the_ideal_fct_is_the_reference_standalone_fct_by_hand():
    hosts, links = workload.read_topology(TOPOLOGY)
    assert hosts == 128
    # 2 x one-way delay + 1,000 B at every hop (320 ns at 25 Gbps, 80 ns at 100 Gbps)
    # + (bytes + 48 B per packet) x 8 / 25 Gbps, in whole ns.
    same_tor = 2 * 2_000 + 2 * 320 + (5985 + 6 * 48) * 8 // 25  # 6273 B: 2007 ns
    same_pod = 2 * 4_000 + 2 * 320 + 2 * 80 + (1000 + 48) * 8 // 25
    other_pod = 2 * 14_000 + 2 * 320 + 4 * 80 + (72661 + 73 * 48) * 8 // 25
    assert workload.n3dc_ideal_fct_ns(trace(), hosts, links) == [same_tor, same_pod, other_pod]
    assert (same_tor, same_pod, other_pod) == (6647, 9135, 53332)


def test_the_reference_fct_file_is_read_by_destination_port(tmp_path: Path):
    path = tmp_path / "fct.txt"
    # sip dip sport dport size start fct standalone; flow 1 (port 101) did not finish.
    path.write_text(
        "0b000001 0b000101 10000 100 5985 100000000 7000 6647\n"
        "0b007f01 0b000001 10000 102 72661 100001500 60000 53332\n"
    )
    fct, ideal = workload.read_n3dc_fct(path, 3)
    assert list(fct[[0, 2]]) == [7000, 60000] and list(ideal[[0, 2]]) == [6647, 53332]
    assert pd.isna(fct[1]) and pd.isna(ideal[1])


def test_marking_maps_scale_with_the_rate_only_with_a_reference_rate():
    rates = [25_000_000_000, 100_000_000_000]
    red = {"kmin": "400KB", "kmax": "1600KB", "pmax": 0.2}
    assert workload.red_maps(red, rates)["KMIN_MAP"] == "2 25000000000 400 100000000000 400"
    scaled = workload.red_maps({**red, "reference_rate": "100Gbps"}, rates)
    # The reference's own maps (config-burst.txt): 100 / 400 KB at 25 Gbps.
    assert scaled["KMIN_MAP"] == "2 25000000000 100 100000000000 400"
    assert scaled["KMAX_MAP"] == "2 25000000000 400 100000000000 1600"
    assert scaled["PMAX_MAP"] == "2 25000000000 0.2 100000000000 0.2"
    assert workload.red_maps(None, rates) == {"ENABLE_QCN": 0}


def test_inputs_carry_the_buffer_marking_and_flows(n3dc: Path, tmp_path: Path):
    import tomllib

    sc = tomllib.loads(workload.SCENARIO.read_text())
    conf = workload.n3dc_inputs(tmp_path, n3dc, TOPOLOGY, trace(), sc, 0.1)
    keys = dict(line.split(" ", 1) for line in conf.read_text().splitlines())
    assert keys["BUFFER_SIZE"] == "4" and keys["TOPOLOGY_FILE"] == str(TOPOLOGY)
    assert keys["SIMULATOR_STOP_TIME"] == "0.200"  # 0.1 s offset + last start + 0.1 s
    assert keys["KMIN_MAP"] == "2 25000000000 100 100000000000 400"  # reference_rate
    flows = (tmp_path / "n3dc_flows.txt").read_text().splitlines()
    assert flows[0] == "3" and flows[3] == "127 0 3 102 72661 0.100001500"
    sc["switch"]["pool_size"] = "4MB"
    with pytest.raises(compare_n3dc.UserError, match="whole number of MiB"):
        workload.n3dc_inputs(tmp_path, n3dc, TOPOLOGY, trace(), sc, 0.1)


def test_the_reference_cdf_becomes_percent(n3dc: Path, tmp_path: Path):
    path = workload.shoal_cdf_from_n3dc(n3dc / workload.N3DC_CDF, tmp_path)
    assert path.read_text() == "0 0\n2000 0\n2100 2\n30000000 100\n"


def test_the_scenario_resolves_without_warnings():
    _, resolved, warnings = _resolve(workload.SCENARIO, None)
    assert warnings == []
    assert resolved["workload"]["load_on"] == "core_nominal"
    assert resolved["switch"]["flow_control"]["kind"] == "pfc"
    assert resolved["rdma"]["cc"]["model"] == "ns3_datacenter"


def test_bad_arguments_exit_2_and_a_missing_reference_exits_1(tmp_path: Path, capsys):
    for bad in (["--flows", "0"], ["--load", "1.5"], ["--n3dc-tail", "0"], ["--runs", "0"]):
        with pytest.raises(SystemExit) as e:
            workload.main(["--n3dc", str(tmp_path), *bad])
        assert e.value.code == 2, bad
    capsys.readouterr()
    assert workload.main(["--n3dc", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("error: ")


def test_each_reference_run_shifts_the_ports_that_pick_its_paths(tmp_path: Path):
    # Run 1 keeps port 100 + index; later runs shift it (new ECMP hashes), and the FCT
    # file's ports map back to the same flows.
    assert [workload.flow_port(i, 1) for i in (0, 2)] == [100, 102]
    ports = {workload.flow_port(i, 3) for i in range(20_000)}
    assert len(ports) == 20_000 and max(ports) < 65_536
    assert workload.flow_port(2, 3) == 100 + 2 + 2 * workload.PORT_SHIFT
    assert all(workload.flow_index(workload.flow_port(i, 4), 4) == i for i in (0, 1, 64_999))
    assert workload.flow_port(2, 3, same_paths=True) == 102
    workload.write_n3dc_flows(tmp_path, trace(), run=2)
    rows = (tmp_path / "n3dc_flows.txt").read_text().splitlines()
    assert rows[1] == f"0 1 3 {100 + workload.PORT_SHIFT} 5985 0.100000000"
    path = tmp_path / "fct.txt"
    path.write_text(f"0b000001 0b000101 10000 {100 + workload.PORT_SHIFT} 5985 1 7000 6647\n")
    fct, _ = workload.read_n3dc_fct(path, 3, run=2)
    assert fct[0] == 7000


def test_the_reference_flags_of_each_control_are_its_scripts():
    # script-workload.sh:46-77: DCQCN is cc mode 1 without a window; HPCC and PowerTCP
    # (INT) cc mode 3 with one, --wien only for PowerTCP.
    assert workload.N3DC_FLAGS == {
        "dcqcn": ["--algorithm=1", "--wien=false", "--delayWien=false", "--windowCheck=0"],
        "hpcc": ["--algorithm=3", "--wien=false", "--delayWien=false", "--windowCheck=1"],
        "powertcp": ["--algorithm=3", "--wien=true", "--delayWien=false", "--windowCheck=1"],
    }


def test_shoal_takes_the_experiment_scheme_of_the_control(tmp_path: Path):
    assert workload.scheme_sets("dcqcn") == {}
    experiment = tmp_path / "workload.toml"
    experiment.write_text(
        '[schemes.hpcc]\n"rdma.cc.kind" = "hpcc"\n"rdma.cc.max_stage" = 5\n'
        '"rdma.window" = "max_bdp"\n"rdma.window_scales_with_rate" = true\n'
    )
    assert workload.scheme_sets("hpcc", experiment) == {
        "rdma.cc": '{kind = "hpcc"}',
        "rdma.cc.kind": '"hpcc"',
        "rdma.cc.max_stage": "5",
        "rdma.window": '"max_bdp"',
        "rdma.window_scales_with_rate": "true",
    }
    with pytest.raises(compare_n3dc.UserError, match=r"no \[schemes.powertcp\]"):
        workload.scheme_sets("powertcp", experiment)


@pytest.mark.parametrize("cc", ["hpcc", "powertcp"])
def test_the_int_scenarios_resolve_as_the_experiment_runs_them(cc: str):
    sets = [f"{k}={v}" for k, v in workload.scheme_sets(cc).items()]
    _, resolved, warnings = _resolve(workload.SCENARIO, sets)
    assert warnings == []
    rdma = resolved["rdma"]
    assert rdma["cc"]["kind"] == cc and "model" not in rdma["cc"]
    # Windows of one bandwidth-delay product scaled by the rate (HAS_WIN, VAR_WIN 1),
    # the reference's 88 B ACK carrying the INT header.
    assert rdma["window"] == "max_bdp" and rdma["window_scales_with_rate"] is True
    assert rdma["ack_size"] == 88
    if cc == "hpcc":
        assert rdma["cc"]["max_stage"] == 5  # MI_THRESH 5 (config-burst.txt)
    else:
        assert rdma["cc"]["revision"] == "published"


@pytest.mark.parametrize("cc", ["dcqcn", "hpcc", "powertcp"])
def test_the_reference_runs_with_the_flags_of_the_control(
    cc: str, n3dc: Path, tmp_path: Path, monkeypatch
):
    program = tmp_path / "burst"
    program.write_text("")
    calls = []

    def fake_run_n3dc(cmd, log, rng_run):
        calls.append(cmd)
        raise compare_n3dc.UserError("stop here", 1)

    monkeypatch.setattr(workload, "run_n3dc", fake_run_n3dc)
    monkeypatch.setattr(workload, "HERE", tmp_path)
    args = ["--n3dc", str(n3dc), "--n3dc-program", str(program), "--flows", "3"]
    assert workload.main([*args, *(["--cc", cc] if cc != "dcqcn" else [])]) == 1
    assert calls[0][2:] == workload.N3DC_FLAGS[cc]
    # DCQCN keeps the output directory it always had; the others get their own.
    suffix = "" if cc == "dcqcn" else f"_{cc}"
    assert (tmp_path / "results" / f"n3dc_workload_3_load0.8_seed1{suffix}").is_dir()


def test_an_unknown_control_is_refused_naming_the_choices(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as e:
        workload.main(["--n3dc", str(tmp_path), "--cc", "cubic"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    # argparse quotes the choices from Python 3.12 on: look for each, not the list.
    assert "argument --cc: invalid choice: 'cubic'" in err
    assert all(cc in err for cc in ("dcqcn", "hpcc", "powertcp"))
