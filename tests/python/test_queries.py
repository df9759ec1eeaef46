"""Query completion time: an incast round completes when its last flow does."""

from __future__ import annotations

import shoal
from conftest import INCAST_ROUNDS

SCENARIO = INCAST_ROUNDS


def test_qct_is_the_last_flow_of_each_round() -> None:
    result = shoal.run(SCENARIO)
    flows = result.flows
    assert sorted(flows["query"].unique()) == [0, 1, 2]
    queries = result.summary["queries"]
    assert queries["count"] == 3 and queries["finished"] == 3
    # Theory: 8 senders x 64 KB must cross the receiver's 10 Gbps link, so no round can
    # complete faster than 8 x 64,000 B x 8 / 10 Gbps = 409.6 us (headers add more).
    bound_ns = 8 * 64_000 * 8 / 10e9 * 1e9
    per_round = flows.groupby("query").apply(lambda g: g.finish_ns.max() - g.start_ns.min())
    assert (per_round >= bound_ns).all()
    assert abs(queries["mean_qct_ns"] - per_round.mean()) < 1e-6 * per_round.mean()


def test_other_flows_have_no_query() -> None:
    flows = shoal.run({**SCENARIO, "workload": {"pattern": "all_to_all", "flows": 20}}).flows
    assert (flows["query"] == -1).all()
