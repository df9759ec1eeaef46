"""The BFC paper's Fig. 9 (``shoal reproduce bfc/fig9``): two T2 data centers joined by
their gateways. Checked against what the topology and the settings force, not against
Shoal's output: the shipped network is the generator's, a lone flow across the 200 us
link takes exactly its propagation and serialization, the gateways' own buffers apply,
and a fifth of the flows cross between the data centers."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shoal
from shoal.reproduce import find, reproduce
from shoal.reproduce.bfc import DC_HOSTS, gateway_ids, two_dc_topology

EXPERIMENTS = Path(shoal.__file__).parent / "experiments" / "bfc"
TOPOLOGY = EXPERIMENTS / "two_t2.txt"
PAYLOAD, HEADER, ACK = 1000, 36, 48  # RDMA: bytes of payload and headers a packet; an ACK


def test_the_shipped_network_is_the_generators() -> None:
    """two_t2.txt is two_dc_topology()'s output, so the file and its documentation
    (the generator's docstring) cannot drift apart; and it has the paper's shape: 128
    hosts, 26 switches, 8 x 16 + 2 x (32 + 8) + 1 links."""
    text = TOPOLOGY.read_text()
    assert text == two_dc_topology()
    header = next(line for line in text.splitlines() if not line.startswith("#"))
    assert header.split() == ["154", "26", str(128 + 2 * (32 + 8) + 1)]
    assert gateway_ids() == (140, 153)
    assert "140 153 100Gbps 200us 0" in text.splitlines()


def lone_flow(tmp_path: Path, src: int, dst: int, size: int, **rdma: Any) -> dict[str, Any]:
    """One RDMA flow of ``size`` bytes from ``src`` to ``dst`` on Fig. 9's network; its
    row of the flows table."""
    scenario = {
        "topology": {"kind": "file", "path": str(TOPOLOGY)},
        "switch": {
            "buffer": "9MiB",
            "buffer_of_node": {str(g): "60MB" for g in gateway_ids()},
            "ports_per_pool": 32,
            "reserved": "4KiB",
            "reserve_per": "port",
        },
        "rdma": {"cc": {"kind": "none"}, "window": "0B", **rdma},
        "workload": {
            "pattern": "incast",
            "senders": str(src),
            "receiver": dst,
            "size": f"{size}B",
            "transport": "rdma",
        },
        "run": {"fct_until": "acked"},
    }
    result = shoal.run(scenario, out=tmp_path / f"lone-{src}-{dst}-{len(rdma)}")
    flows = result.flows
    assert len(flows) == 1
    return dict(flows.iloc[0])


def ser_ns(size: int, gbps: float) -> float:
    return size * 8 / gbps


@pytest.mark.parametrize("rdma", [{}, {"cc": {"kind": "dcqcn"}, "window": "bdp"}])
def test_a_lone_inter_dc_flow_takes_propagation_plus_serialization(
    tmp_path: Path, rdma: dict[str, Any]
) -> None:
    """Host 0 (data center 0) to host 64 (data center 1): host-ToR-spine-gateway at
    10 Gbps and 1 us, the gateways' 100 Gbps and 200 us, then gateway-spine-ToR-host. The
    first packet is stored and forwarded at every hop; the rest follow at the 10 Gbps
    of the first link; the last ACK comes back the same way. 100 packets fit in
    DCQCN+Win's window of the path's BDP (10 Gbps x ~413 us), and DCQCN starts at line
    rate, so it takes the same time."""
    packets = 100
    size = packets * PAYLOAD
    rates = [10, 10, 10, 100, 10, 10, 10]  # Gbps, in path order
    delay_ns = 6 * 1000 + 200_000
    packet = PAYLOAD + HEADER
    expected = (
        delay_ns
        + sum(ser_ns(packet, r) for r in rates)
        + (packets - 1) * ser_ns(packet, 10)
        + delay_ns
        + sum(ser_ns(ACK, r) for r in rates)
    )
    flow = lone_flow(tmp_path, 0, DC_HOSTS, size, **rdma)
    assert flow["fct_ns"] == pytest.approx(expected, abs=1.0)
    assert flow["slowdown"] == pytest.approx(1.0, abs=1e-6)
    # Inside a data center (host 0 to host 16, another rack): 4 links of 10 Gbps, 1 us.
    inside = lone_flow(tmp_path, 0, 16, size, **rdma)
    expected_inside = (
        2 * 4000 + 4 * ser_ns(packet, 10) + (packets - 1) * ser_ns(packet, 10) + 4 * ser_ns(ACK, 10)
    )
    assert inside["fct_ns"] == pytest.approx(expected_inside, abs=1.0)


def _at(exp_id: str, duration: str) -> Any:
    """The experiment's quick mode with ``duration`` of arrivals."""
    exp = copy.deepcopy(find(exp_id))
    exp.modes["quick"] = {"set": {"workload.duration": duration}, "seeds": [1]}
    return exp


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    store = tmp_path_factory.mktemp("bfc-fig9")
    runs = reproduce("bfc/fig9", mode="quick", store=store, jobs=2, progress=False).runs
    assert (runs["status"] == "ok").all(), runs[["scheme", "error"]]
    return runs, store


def test_quick_runs_each_scheme_with_and_without_the_inter_dc_traffic(
    quick: tuple[Any, Path],
) -> None:
    """Six runs (three schemes, each with and without the inter-DC traffic); every flow
    finishes and none is lost (PFC beneath all); the share of flows that cross is 20%
    within 4 binomial sigmas where there is inter-DC traffic, and none without; no flow
    beats its lone FCT (slowdown >= 1, up to rounding)."""
    import pandas as pd

    from shoal.store import Store

    runs, store = quick
    assert {(s, v) for s, v in zip(runs["scheme"], runs["variant"], strict=True)} == {
        (s, v)
        for s in ("bfc", "bfc_pfc_alpha1", "dcqcn_win")
        for v in ("with inter-DC", "intra-DC only")
    }
    assert (runs["unfinished"] == 0).all() and (runs["packets_dropped"] == 0).all()
    for _, row in runs.iterrows():
        flows = pd.read_parquet(Store(store).run_dir(row["key"]) / "flows.parquet")
        assert flows["slowdown"].min() >= 1 - 1e-9, row["scheme"]
        inter = (flows["src"] // DC_HOSTS) != (flows["dst"] // DC_HOSTS)
        n = len(flows)
        if row["variant"] == "with inter-DC":
            assert abs(inter.mean() - 0.2) < 4 * np.sqrt(0.2 * 0.8 / n), inter.mean()
            assert row["inter_flows"] == inter.sum()
        else:
            assert not inter.any()
    # The two variants of a scheme differ only in the inter-DC flows and the load.
    assert (runs.groupby("scheme")["workload.load"].nunique() == 2).all()


def test_quick_and_full_differ_only_in_the_arrival_window() -> None:
    from shoal._sweep import load_sweep, resolve_runs

    exp = find("bfc/fig9")
    quick, full = exp.sweep_spec("quick"), exp.sweep_spec("full")
    assert quick["scenario"] == full["scenario"] and quick["schemes"] == full["schemes"]
    assert set(quick.get("set", {})) == {"workload.duration"}
    for spec in (quick, full):
        runs = resolve_runs(load_sweep(spec))
        assert len(runs) == 6 and all(r.error is None for r in runs), [r.error for r in runs]
