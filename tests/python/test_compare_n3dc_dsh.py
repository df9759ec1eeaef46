"""validation/compare_n3dc_dsh.py without ns3-datacenter: the DSH it adds to the
reference's MMU and the program it derives (each once, and only from the expected
source), the fabric and flows it gives the reference, the MMU it configures, how it reads
a deadlock, its summaries, and a whole fig12 run with a stand-in reference and the real
Shoal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

VALIDATION = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(VALIDATION))

import compare_n3dc  # noqa: E402
import compare_n3dc_dsh as dsh  # noqa: E402
from compare_ns3 import UserError  # noqa: E402

BURST = (
    "#include <time.h>\n"
    "int main(int argc, char *argv[])\n{\n"
    + dsh.SWITCH_CONFIG_START
    + "\t\t\tsw->m_mmu->SetAlphaIngress(1.0 / 8);\n"
    + dsh.SWITCH_CONFIG_END
    + dsh.PROGRAM_CHANGES[1][0]
    + "\n\tSimulator::Stop(Seconds(simulator_stop_time));\n\tSimulator::Run();\n}\n"
)

# A stand-in for the built program: reads its configuration, writes an empty FCT file, and
# reports a deadlock at 1.5 ms (of its clock, which starts flows at 0.1 s) under SIH only.
FAKE_PROGRAM = """#!{python}
import os, sys
conf = dict(l.split(" ", 1) for l in open(sys.argv[1].split("=", 1)[1]).read().splitlines() if l)
open(conf["FCT_OUTPUT_FILE"].strip(), "w").close()
if os.environ["SHOAL_HEADROOM"] == "sih":
    print("SHOAL_DEADLOCK onset_ns 101500000 detected_ns 102500000 cycle 65 69 66 68")
"""


@pytest.fixture
def n3dc(tmp_path: Path) -> Path:
    """A stand-in for the reference's tree: the lines that the changes anchor on."""
    root = tmp_path / "ns-3.39"
    model, programs = root / dsh.MODEL, root / dsh.PROGRAMS
    model.mkdir(parents=True)
    programs.mkdir(parents=True)
    (model / "switch-mmu.h").write_text("class SwitchMmu {\n\tuint32_t lpfUpdatedOnce;\n};\n")
    (model / "switch-mmu.cc").write_text(
        "namespace ns3 {\nvoid SwitchMmu::SetPause(uint32_t port, uint32_t qIndex) {\n"
        + dsh.SET_PAUSE[0]
        + "\n}\n"
    )
    (model / "switch-node.cc").write_text(
        "void SwitchNode::CheckAndSendPfc(uint32_t inDev, uint32_t qIndex) {}\n"
        + "\t\t\t"
        + dsh.ADMIT[0]
        + "(idx, qIndex, p->GetSize(), found,unsched)) {\n\t\t\t\t"
        + dsh.ENQUEUE[0]
        + dsh.DEQUEUE[0]
        + dsh.RESUME[0]
    )
    (programs / "powertcp-evaluation-burst.cc").write_text(BURST)
    (programs / "CMakeLists.txt").write_text(
        "build_example(\n  NAME powertcp-evaluation-burst\n)\n"
    )
    (root / compare_n3dc.TEMPLATE).write_text(
        "".join(
            f"{k} x\n"
            for k in [
                "TOPOLOGY_FILE",
                "FLOW_FILE",
                "FCT_OUTPUT_FILE",
                "PFC_OUTPUT_FILE",
                "TRACE_OUTPUT_FILE",
                "QLEN_MON_FILE",
                "ENABLE_TRACE",
                "SIMULATOR_STOP_TIME",
                "ACK_HIGH_PRIO",
                "KMIN_MAP",
                "KMAX_MAP",
                "PMAX_MAP",
            ]
        )
    )
    return root


def build_fake(root: Path) -> None:
    exe = root / dsh.BUILT.format(dsh.PROGRAM)
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(FAKE_PROGRAM.format(python=sys.executable))
    exe.chmod(0o755)


def test_dsh_is_added_to_the_mmu_once_and_a_newer_version_replaces_it(n3dc: Path, monkeypatch):
    model = n3dc / dsh.MODEL
    original = (model / "switch-mmu.h").read_text()
    assert dsh.patch_mmu(n3dc)
    header = (model / "switch-mmu.h").read_text()
    # The new members come after the last old one: programs built before keep their offsets.
    assert header.index("lpfUpdatedOnce") < header.index("bool dsh = false;") < header.index("};")
    assert (model / "switch-mmu.cc").read_text().rstrip().endswith("}")
    source = (model / "switch-mmu.cc").read_text()
    assert "SwitchMmu::DshUpdate" in source and "shoalPausesSent[port]++;" in source
    node = (model / "switch-node.cc").read_text()
    assert node.count("DshSyncPort(m_mmu") == 2 and "else CheckAndSendResume" in node
    assert node.count("ShoalNoteHeadroom(inDev, qIndex)") == 2
    assert node.index("static void DshSyncPort") < node.index("SwitchNode::CheckAndSendPfc")
    assert (model / "switch-mmu.h.shoal-orig").read_text() == original
    assert not dsh.patch_mmu(n3dc)  # a second call changes nothing
    monkeypatch.setattr(dsh, "MMU_DECLS", dsh.MMU_DECLS + "\tint shoal_newer = 1;\n")
    assert dsh.patch_mmu(n3dc)
    header = (model / "switch-mmu.h").read_text()
    assert header.count("bool dsh = false;") == 1 and "shoal_newer" in header


def test_an_earlier_patch_without_originals_or_an_unknown_tree_is_refused(n3dc: Path):
    model = n3dc / dsh.MODEL
    header = (model / "switch-mmu.h").read_text()
    (model / "switch-mmu.h").write_text(f"// {dsh.MARK}\n")
    with pytest.raises(UserError, match="earlier version"):
        dsh.patch_mmu(n3dc)
    (model / "switch-mmu.h").write_text("class SwitchMmu {};\n")
    with pytest.raises(UserError, match="not ns3-datacenter 6ddb4a4's") as e:
        dsh.patch_mmu(n3dc)
    assert e.value.code == 1
    del header


def test_the_program_replaces_the_switch_setup_and_watches_for_deadlocks(n3dc: Path):
    with pytest.raises(UserError, match="--build"):
        dsh.prepare_program(n3dc, build=False)
    source = (n3dc / dsh.PROGRAMS / f"{dsh.PROGRAM}.cc").read_text()
    assert "1.0 / 8" not in source and 'getenv("SHOAL_ALPHA")' in source
    assert source.index("static void ShoalDeadlockWatch") < source.index("int main(")
    assert source.index("ShoalDeadlockWatch, (int64_t)") < source.index("Simulator::Stop(Seconds")
    assert "// (report off) Simulator::Schedule" in source
    assert source.index("Simulator::Run();") < source.index('"SHOAL_HEADROOM_PEAK "')
    build_fake(n3dc)
    assert dsh.prepare_program(n3dc, build=False).is_file()  # nothing changed: no build
    cmake = (n3dc / dsh.PROGRAMS / "CMakeLists.txt").read_text()
    assert cmake.count(f"NAME {dsh.PROGRAM}\n") == 1


def test_fig12s_fabric_loses_exactly_its_two_failed_links(tmp_path: Path):
    topology = {
        "kind": "leaf_spine",
        "leaves": 4,
        "spines": 2,
        "hosts_per_leaf": 16,
        "link_rate": "100Gbps",
        "uplink_rate": "400Gbps",
        "link_delay": "2us",
        "failed_links": [[68, 67], [69, 64]],
    }
    head, ids, *links = dsh.write_topology(tmp_path / "t.txt", topology).read_text().splitlines()
    pairs = {frozenset(map(int, row.split()[:2])) for row in links}
    assert head.split() == ["70", "6", "4", str(64 + 8 - 2)] and len(links) == 70
    assert ids.split() == [str(i) for i in range(64, 70)]
    assert frozenset((68, 67)) not in pairs and frozenset((69, 64)) not in pairs
    assert {frozenset((68, 64)), frozenset((69, 67)), frozenset((68, 65))} <= pairs
    up = [row for row in links if int(row.split()[0]) >= 64]
    assert all(row.split()[2] == "400000000000.0" for row in up)


def test_fig13s_dumbbell_is_numbered_as_shoal_numbers_it(tmp_path: Path):
    topology = {
        "kind": "dumbbell",
        "hosts": 2,
        "hosts_right": 26,
        "link_rate": "100Gbps",
        "uplink_rate": "100Gbps",
        "link_delay": "2us",
    }
    head, ids, *links = dsh.write_topology(tmp_path / "d.txt", topology).read_text().splitlines()
    assert head.split() == ["30", "2", "2", "29"] and ids == "28 29"
    pairs = [tuple(map(int, row.split()[:2])) for row in links]
    assert pairs[:3] == [(0, 28), (1, 28), (2, 29)] and pairs[-1] == (28, 29)
    assert all(row.split()[3] == "2000ns" for row in links)


def test_the_innocent_flows_rate_is_read_around_the_burst():
    # 50 Gbps (6,250 B per us) until the burst at 1 ms, 25 Gbps for 100 us, then 50 again.
    times = [i * 5_000 for i in range(400)]
    tx, sent = [], 0
    for t in times:
        tx.append(sent)
        sent += 3_125 * 5 if 1_000_000 <= t < 1_100_000 else 6_250 * 5
    r = dsh.innocent_rate(times, tx, 1_000_000)
    assert r["f0_before_gbps"] == pytest.approx(50) and r["f0_min_gbps"] == pytest.approx(25)
    assert r["f0_min_ratio"] == pytest.approx(0.5)
    assert r["f0_mean_ratio"] == pytest.approx((20 * 0.5 + 80) / 100)
    out = "SHOAL_TX 100005000 31250\nx\nSHOAL_TX 100010000 62500\n"
    assert dsh.read_tx(out) == {"tx_ns": [5000, 10000], "tx_bytes": [31250, 62500]}


def test_the_mmu_settings_come_from_the_scheme():
    args = type("A", (), {"stop": "5ms", "duration": None, "load": 0.6, "flows": None})()
    fig12 = dsh.scenarios("fig12", ["sih_dcqcn", "dsh_dcqcn"], args)
    sih, dsh_env = (dsh.mmu_env(fig12[s]) for s in ("sih_dcqcn", "dsh_dcqcn"))
    assert sih["SHOAL_HEADROOM"] == "sih" and dsh_env["SHOAL_HEADROOM"] == "dsh"
    # The DSH paper's Tomahawk: 16 MiB less 32 ports' headroom (SIH: 7 queues' eta of
    # 56,840 B; DSH: one) and 3 KiB private per queue, for 32 x 7 queues.
    private = 32 * 7 * 3072
    assert int(sih["SHOAL_POOL"]) == 16 * 2**20 - 32 * 7 * 56_840 - private
    assert int(dsh_env["SHOAL_POOL"]) == 16 * 2**20 - 32 * 56_840 - private
    assert sih["SHOAL_DEADLOCK_NS"] == "1000000" and float(sih["SHOAL_ALPHA"]) == 1 / 16
    assert sih["NS_ATTRIBUTE_DEFAULT"] == "ns3::SwitchNode::AckHighPrio=1"
    fig14 = dsh.scenarios("fig14", ["sih_dcqcn"], args)["sih_dcqcn"]
    env = dsh.mmu_env(fig14)
    assert env["SHOAL_BUFFER"] == str(16 * 2**20) and "SHOAL_POOL" not in env
    assert "SHOAL_DEADLOCK_NS" not in env
    with pytest.raises(UserError, match="background loads are 0.2, 0.4, 0.6, 0.8") as e:
        dsh.scenarios("fig14", ["sih_dcqcn"], type("A", (), {**vars(args), "load": 0.5})())
    assert e.value.code == 2


def test_a_deadlock_line_is_read_relative_to_the_first_flow():
    assert dsh.read_deadlock(
        "x\nSHOAL_DEADLOCK onset_ns 105250000 detected_ns 106250000 cycle 65 69\n"
    ) == {
        "deadlocked": True,
        "onset_ms": pytest.approx(5.25),
        "detected_ms": pytest.approx(6.25),
        "cycle": [65, 69],
    }
    assert dsh.read_deadlock("Running Simulation.\n") == {"deadlocked": False}


def test_headroom_episodes_are_read_and_their_percentiles_weighted_by_count():
    out = "x\nSHOAL_HEADROOM_PEAK 56840 1048 98\nSHOAL_HEADROOM_PEAK 56840 51156 2\n"
    peaks = dsh.read_peaks(out)
    assert peaks == [[56840, 1048, 98], [56840, 51156, 2]]
    util = dsh.utilization([p / eta for eta, p, _ in peaks], [c for *_, c in peaks])
    assert util == {"episodes": 100, "util_p50": 1048 / 56840, "util_p99": 51156 / 56840}
    # Unweighted: each value once (Shoal's episodes, one row each).
    assert dsh.utilization([0.3, 0.1, 0.2])["util_p50"] == 0.2


def test_fig5s_summary_divides_the_smallest_buffer_by_the_largest():
    def run(mean):
        return {sim: {"mean_us": mean} for sim in ("n3dc", "shoal")}

    out = dsh.summarize("fig5", {"30MB": [run(100)], "14MB": [run(178.1)]})
    assert out["14MB"]["n3dc_vs_largest"] == pytest.approx(1.781)
    assert "n3dc_vs_largest" not in out["30MB"]


def test_fig14s_summary_divides_each_dsh_scheme_by_its_sih_twin():
    def run(bg, fanin):
        return {
            sim: {"background_mean_us": bg, "fanin_mean_us": fanin} for sim in ("n3dc", "shoal")
        }

    rows = {"sih_dcqcn": [run(100, 40), run(300, 60)], "dsh_dcqcn": [run(110, 20), run(330, 30)]}
    out = dsh.summarize("fig14", rows)
    assert out["sih_dcqcn"]["n3dc_background_mean_us"] == 200
    assert out["dsh_dcqcn"]["shoal_background_vs_sih"] == pytest.approx(1.1)
    assert out["dsh_dcqcn"]["n3dc_fanin_vs_sih"] == pytest.approx(0.5)
    assert "n3dc_background_vs_sih" not in out["sih_dcqcn"]


def test_bad_arguments_name_what_is_accepted(n3dc: Path, capsys):
    assert dsh.main(["--n3dc", str(n3dc), "--schemes", "pfc"]) == 2
    assert "'pfc' is not one of sih_dcqcn" in capsys.readouterr().err
    assert dsh.main(["--n3dc", str(n3dc), "--seeds", "1-x"]) == 2
    assert "expected numbers and ranges" in capsys.readouterr().err
    assert dsh.main(["--n3dc", str(n3dc), "--experiment", "fig5", "--buffers", "15MB"]) == 2
    assert "no run '15MB' (it has 14MB, 16MB, 20MB, 24MB, 30MB)" in capsys.readouterr().err


def test_a_whole_fig12_run_compares_both_simulators_on_the_same_flows(n3dc: Path, tmp_path: Path):
    out = tmp_path / "out"
    argv = ["--n3dc", str(n3dc), "--seeds", "2", "--stop", "2ms", "--out", str(out)]
    assert dsh.main(argv) == 1  # the program must be built first
    build_fake(n3dc)
    assert dsh.main(argv) == 0
    result = json.loads((out / "comparison.json").read_text())
    sih, dsh_row = (result["runs"][s] for s in ("sih_dcqcn", "dsh_dcqcn"))
    assert sih["n3dc_deadlock_fraction"] == 1 and dsh_row["n3dc_deadlock_fraction"] == 0
    assert sih["runs"][0]["n3dc"]["onset_ms"] == pytest.approx(1.5)
    # Shoal ran the same scheme: under SIH its fabric locks within 2 ms for this seed too.
    assert sih["runs"][0]["shoal"]["deadlocked"] and sih["runs"][0]["shoal"]["onset_ms"] < 2
    # The reference was given Shoal's flows, in their priority.
    run_dir = out / "sih_dcqcn" / "seed2"
    flows = (run_dir / "n3dc_flows.txt").read_text().splitlines()
    trace = (run_dir / "trace.csv").read_text().splitlines()
    assert int(flows[0]) == len(trace) - 1 > 0
    assert {row.split()[2] for row in flows[1:]} == {"3"}
    config = (run_dir / "n3dc_config.txt").read_text()
    assert (
        "SIMULATOR_STOP_TIME 0.1020" in config
        and "KMIN_MAP 2 100000000000 5 400000000000 5" in config
    )
    # A second call reads both runs back.
    before = (run_dir / "n3dc_run.json").read_text()
    assert dsh.main(argv) == 0
    assert (run_dir / "n3dc_run.json").read_text() == before
