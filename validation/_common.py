"""What several ns3-datacenter drivers need alike and no one comparison owns: the reference's
flags per congestion control, a scenario's rates in bits per second, and the options of the
drivers that replay one trace in both simulators (``compare_n3dc.py``,
``compare_n3dc_workload.py``).

The drivers import it as they import ``compare_ns3``: as a sibling module, found because
``validation/`` is on ``sys.path`` (a driver run as a script has its own folder there; the
tests put the folder there before importing a driver).
"""

from __future__ import annotations

import argparse

# The reference's flags per congestion control, as its script-burst.sh and
# script-workload.sh run them: its program's --algorithm overrides CC_MODE, --windowCheck
# both HAS_WIN and VAR_WIN (powertcp-evaluation-burst.cc:717-719). Each driver offers
# the ones its experiment compares.
N3DC_CC_FLAGS = {
    "dcqcn": ["--algorithm=1", "--wien=false", "--delayWien=false", "--windowCheck=0"],
    "dcqcn_win": ["--algorithm=1", "--wien=false", "--delayWien=false", "--windowCheck=1"],
    "hpcc": ["--algorithm=3", "--wien=false", "--delayWien=false", "--windowCheck=1"],
    "powertcp": ["--algorithm=3", "--wien=true", "--delayWien=false", "--windowCheck=1"],
}


def rate_bps(rate: str) -> int:
    """A rate of the scenario in bits per second.

    Read by Shoal's own unit grammar, so that the reference is given the rate Shoal runs.

    Args:
        rate: A rate as a scenario writes it, such as ``"100Gbps"``.

    Returns:
        The rate in bits per second.
    """
    from shoal import _core

    return _core.parse_rate_bps(rate)


def check_replay_args(
    parser: argparse.ArgumentParser, args: argparse.Namespace, max_flows: int | None = None
) -> None:
    """Rejects out-of-range values of the options every trace-replaying driver takes.

    Those are ``--flows``, ``--runs``, ``--load``, ``--n3dc-tail`` and ``--buffer-mib``;
    ``parser.error`` prints the first one wrong and exits with status 2.

    Args:
        parser: The driver's parser, which reports the error.
        args: Its parsed arguments.
        max_flows: The most flows the driver can name in the reference (which names a
            flow by its port), or None for no such limit.
    """
    if args.flows < 1 or args.runs < 1:
        parser.error("--flows and --runs must be >= 1")
    if max_flows is not None and args.flows > max_flows:
        parser.error(f"--flows must be <= {max_flows} (the reference names flows by port)")
    if not 0 < args.load < 1:
        parser.error("--load must be in (0, 1)")
    if args.n3dc_tail <= 0:
        parser.error("--n3dc-tail must be > 0")
    if args.buffer_mib is not None and args.buffer_mib < 1:
        parser.error("--buffer-mib must be >= 1")


def override_pool_size(sc: dict, buffer_mib: int | None) -> dict[str, object]:
    """Applies ``--buffer-mib`` to the scenario both simulators are set up from.

    The reference's inputs are written from ``sc``, Shoal is told by ``--set``, so both
    get the same switch pool.

    Args:
        sc: The scenario, changed in place: its ``switch.pool_size`` becomes
            ``buffer_mib`` MiB.
        buffer_mib: The option's value, or None to keep the scenario's pool.

    Returns:
        Shoal's ``--set`` pairs for the change (none without one).
    """
    shoal_sets: dict[str, object] = {}
    if buffer_mib is not None:
        sc["switch"]["pool_size"] = f"{buffer_mib}MiB"
        shoal_sets["switch.pool_size"] = sc["switch"]["pool_size"]
    return shoal_sets
