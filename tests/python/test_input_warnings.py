"""Legal but likely mistaken input gets a warning naming the key; malformed input an
error naming it (tables given as arrays, byte-order marks accepted)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import shoal
from conftest import TINY


def _warnings(scenario: object, **kwargs: object) -> list[str]:
    with pytest.warns(shoal.ShoalWarning) as caught:
        shoal.run(scenario, **kwargs)  # type: ignore[arg-type]
    return [str(w.message) for w in caught]


def test_keys_without_effect_and_unit_mistakes_are_named() -> None:
    found = _warnings(
        TINY.replace('link_delay = "1us"', "link_delay = 10\nk = 8"),
        set=["workload.size=1MB"],
    )
    assert any(m.startswith("topology.link_delay = 10 is 10 ps") for m in found), found
    assert any(m.startswith("topology.k: has no effect on a star topology") for m in found)
    assert any(
        m.startswith('workload.size: has no effect with pattern = "all_to_all"') for m in found
    )


def test_overlapping_many_to_few_sets() -> None:
    found = _warnings(
        TINY,
        set=[
            'workload.pattern="many_to_few"',
            'workload.senders="0-2"',
            'workload.receivers="2-3"',
        ],
    )
    assert any(m.startswith("workload.receivers: hosts 2 are senders too") for m in found), found


def test_a_workload_without_flows() -> None:
    found = _warnings(TINY, set=["workload.duration=1ns"])
    assert any(m.startswith("the workload generated no flows") for m in found), found


@pytest.mark.parametrize(
    ("data", "path"),
    [({"switch": [1, 2]}, "switch"), ({"topology": {"kind": "star"}, "run": [1]}, "run")],
)
def test_tables_given_as_arrays_are_refused(data: dict, path: str) -> None:
    with pytest.raises(shoal.ScenarioError, match=rf"^{path}: expected a table, found an array"):
        shoal.run(data)


def test_byte_order_marks_are_accepted(tmp_path: Path) -> None:
    scenario = tmp_path / "bom.toml"
    scenario.write_bytes(b"\xef\xbb\xbf" + TINY.encode())
    trace = tmp_path / "trace.csv"
    trace.write_bytes(b"\xef\xbb\xbfid,src,dst,bytes,start_ns\n0,1,2,1000,0\n")
    assert shoal.run(scenario).summary["flows"]["total"] == 20
    # The tiny scenario's all-to-all keys do nothing for a trace: said, not hidden.
    with pytest.warns(shoal.ShoalWarning, match='has no effect with pattern = "trace"'):
        replay = shoal.run(scenario, set=['workload.pattern="trace"', f'workload.trace="{trace}"'])
    assert replay.summary["flows"]["finished"] == 1


def test_a_resolved_scenario_gets_no_warnings_about_its_defaults(tmp_path: Path) -> None:
    """Every key written out at its default (a run's scenario.json) is not a mistake."""
    import warnings as _warnings

    first = shoal.run(TINY, out=tmp_path / "r")
    with _warnings.catch_warnings():
        _warnings.simplefilter("error", shoal.ShoalWarning)
        again = shoal.run(json.loads((tmp_path / "r" / "scenario.json").read_text()))
    assert again.flows.equals(first.flows)


def test_sweep_runs_carry_no_warnings_about_the_shared_base(tmp_path: Path) -> None:
    sweep = {
        "name": "s",
        "store": str(tmp_path / "store"),
        "scenario": tomllib.loads(TINY.replace('kind = "star"', 'kind = "star"\nk = 8')),
        "schemes": {"a": {"run.seed": 1}, "b": {"run.seed": 2}},
    }
    table = shoal.sweep(sweep, jobs=1)
    assert (table["status"] == "ok").all()
    for key in table["key"]:
        summary = json.loads((tmp_path / "store" / "runs" / key / "summary.json").read_text())
        assert not [w for w in summary["warnings"] if "has no effect" in w], summary["warnings"]


def test_a_run_that_cannot_progress_ends_at_the_time_limit() -> None:
    """One bit per second (a unit mistake): the run ends at the simulated-time limit with
    a warning, instead of overflowing the clock."""
    scenario = {
        "topology": {"kind": "star", "hosts": 2, "link_rate": "1bps"},
        "transport": {"rto_min": "1s", "rto_init": "1s", "rto_max": "1000s"},
        "workload": {"pattern": "incast", "senders": "1", "receiver": 0, "size": "1MB"},
    }
    found = _warnings(scenario)
    assert any("simulated-time limit (4000000 s)" in m for m in found), found


#: An RDMA incast of 3 x 20 KB into host 0 of the tiny star.
RDMA_INCAST = TINY.replace(
    'pattern = "all_to_all"\ncdf = "google_rpc"\nload = 0.3\nflows = 20',
    'pattern = "incast"\nsenders = "1-3"\nreceiver = 0\nsize = "20KB"\ntransport = "rdma"',
)


def test_lossless_mistakes_are_warned_of_by_key() -> None:
    """Issue 30, item 8: legal lossless settings that are almost surely a mistake."""
    found = _warnings(
        RDMA_INCAST
        + '[switch]\nbuffer = "12MB"\npool_size = "4MB"\n'
        + '[switch.flow_control]\nkind = "pfc"\nalpha = 1e30\nclasses = []\n'
        + '[rdma.cc]\nmin_rate = "200Gbps"\n'
    )
    for prefix in (
        "switch.flow_control.alpha: 1e30",
        "switch.flow_control.classes: [] makes no class lossless",
        "switch.pool_size: has no effect with switch.buffer",
        "rdma.cc.min_rate: 200Gbps is above the line rate",
        "rdma.cc: dcqcn reacts to ECN marks, and no switch.marking rule",
    ):
        assert any(m.startswith(prefix) for m in found), (prefix, found)
    tcp = _warnings(TINY + "[rdma]\nmtu = 4000\n")
    assert any(m.startswith("rdma.mtu: has no effect") for m in tcp), tcp


@pytest.mark.parametrize(
    ("keys", "path", "words"),
    [
        ('[rdma]\nrto = "1ps"\n', "rdma.rto", "at least 121120ps"),
        ("[switch.flow_control]\nkind = \"pfc\"\ndeadlock_after = 5\n", "switch.flow_control.deadlock_after", "at least 121120ps"),
        ("[rdma.cc]\nincrease_interval = \"1ps\"\n", "rdma.cc.increase_interval", "at least 5120ps"),
        ("[rdma]\nack_priority = 64\n", "rdma.ack_priority", "accepted: 0 to 63"),
    ],
)
def test_lossless_inputs_that_cannot_run_are_refused_by_key(keys: str, path: str, words: str) -> None:
    """Issue 30, items 4 and 5: a timer below its floor, a class beyond 63."""
    with pytest.raises(shoal.ScenarioError, match=rf"^{path}: .*{words}"):
        shoal.run(RDMA_INCAST + keys)


def test_an_rdma_cc_table_without_kind_runs_dcqcn() -> None:
    """Issue 30, item 5: the documented default, not line rate."""
    marking = '[switch.ecn]\nnon_ect = "pass"\n[switch.marking.cutoff]\nk = "10KB"\n'
    without_kind = shoal.run(RDMA_INCAST + marking + "[rdma.cc]\ng = 0.5\n")
    dcqcn = shoal.run(RDMA_INCAST + marking + '[rdma.cc]\nkind = "dcqcn"\ng = 0.5\n')
    assert without_kind.flows.equals(dcqcn.flows)
