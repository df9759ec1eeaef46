"""``shoal advise check``: warnings for scenario settings likely to lose packets or throughput.

The scenario is read with :func:`shoal.load_scenario` and resolved by the core
(:func:`shoal._core.resolve`), so defaults and ``--set`` overrides apply exactly as for
``shoal run``. Its network is the one the core builds (:func:`shoal._core.network_facts`):
the hosts, each switch's ports, the receivers, the longest path and its base round trip,
for a topology file and with failed links too. Each rule is a function
``rule(ctx) -> list[Finding]`` registered in :data:`RULES`; a rule cites the paper it
comes from.

Lossless classes (``[switch.flow_control]`` ``pfc`` or ``dsh``, or BFC's PFC
``backstop``) are paused, not dropped: the rules about queues that overflow or drop
apply to the traffic of lossy classes only, TCP's rules to TCP traffic only, and the
PFC headroom rule checks the headroom of the lossless classes against eta.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from shoal import _core
from shoal._scenario import Overrides, ScenarioInput, load_scenario
from shoal.advise.formulas import BCC, DSH, TRANSPORTS, WP, Transport, eta_bytes
from shoal.advise.units import as_number, fmt_bytes, parse_size

__all__ = ["RULES", "CheckContext", "CheckReport", "Finding", "check", "rule"]


@dataclass(frozen=True)
class Finding:
    """One warning (or note) about a scenario."""

    rule: str
    severity: str  # "warning" or "note"
    message: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "source": self.source,
        }


@dataclass
class CheckContext:
    """What the rules see: the resolved scenario and quantities derived from it."""

    scenario: dict[str, Any]
    link_rate: Fraction
    rtt: Fraction
    bdp: Fraction
    pool: Fraction
    reserved: Fraction
    alpha: Fraction
    queues: int
    ports_per_pool: int
    congested_per_pool: int
    mtu: Fraction
    link_delay: Fraction
    cc: str
    ecn_capable: bool
    k: Fraction | None
    kmin: Fraction | None
    kmax: Fraction | None
    #: ``switch.flow_control``'s kind, and the classes it makes lossless (priority p is
    #: class min(p, 7)).
    flow_control: str = "lossy"
    lossless_classes: frozenset[int] = frozenset()
    #: Whether some TCP traffic runs, whether some of it is in a lossy class, and whether
    #: any reliable traffic (TCP or RDMA) is: the drop rules are about that traffic only.
    tcp: bool = True
    lossy_tcp: bool = True
    lossy_traffic: bool = True
    #: The network as the core builds it (:func:`shoal._core.network_facts`).
    network: dict[str, Any] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict)

    @property
    def k_low(self) -> Fraction | None:
        """Where marking starts: K, or RED's Kmin."""
        return self.k if self.k is not None else self.kmin

    @property
    def k_high(self) -> Fraction | None:
        """Where every packet is marked: K, or RED's Kmax."""
        return self.k if self.k is not None else self.kmax

    @property
    def transport(self) -> Transport | None:
        """The ECN-reacting transport (DCTCP, ECN*) in use; None for loss-based TCP."""
        return TRANSPORTS.get(self.cc)

    def dt_share(self, active: int) -> Fraction:
        """Bytes one of ``active`` congested queues gets: reserved + alpha*B/(1+M*alpha)."""
        return self.reserved + self.alpha * self.pool / (1 + active * self.alpha)


@dataclass
class CheckReport:
    scenario: str
    context: dict[str, Any]
    findings: list[Finding]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "context": self.context,
            "findings": [f.to_dict() for f in self.findings],
        }


Rule = Callable[[CheckContext], list[Finding]]
RULES: list[Rule] = []


def rule(fn: Rule) -> Rule:
    """Register a check rule."""
    RULES.append(fn)
    return fn


# ------------------------------------------------------------------------ value parsing


def _size(v: Any) -> Fraction:
    return Fraction(v) if isinstance(v, int) else parse_size("size", v, allow_zero=True)


def _seconds(ps: int) -> Fraction:
    return Fraction(ps, 10**12)


def _most_congested(switches: list[list[dict[str, Any]]], ports_per_pool: int) -> int:
    """The most ports of one pool that can be congested together; a pool is a run of
    ``ports_per_pool`` consecutive ports of a switch (as the core forms them)."""
    worst = 0
    for ports in switches:
        congestible = [p["congestible"] for p in ports]
        for start in range(0, len(congestible), ports_per_pool):
            worst = max(worst, sum(congestible[start : start + ports_per_pool]))
    return worst


#: Every class; PFC's default lossless classes.
_ALL_CLASSES = tuple(range(8))
#: DSH's default lossless classes (the eighth carries ACKs and control frames).
_DSH_CLASSES = tuple(range(7))


def _flow_control(sw: dict[str, Any]) -> tuple[str, dict[str, Any], str, frozenset[int]]:
    """``switch.flow_control`` as (kind, the table whose keys are PFC's, its key path,
    the lossless classes): PFC's and DSH's own table, BFC's ``backstop`` (PFC beneath
    it; no lossless class without one)."""
    fc = sw.get("flow_control", "lossy")
    table = fc if isinstance(fc, dict) else {}
    kind = str(table.get("kind", fc if isinstance(fc, str) else "lossy"))
    path = "switch.flow_control"
    if kind == "bfc":
        backstop = table.get("backstop")
        if not isinstance(backstop, dict):
            return kind, {}, path, frozenset()
        table, path = backstop, f"{path}.backstop"
    if kind not in ("pfc", "dsh", "bfc"):
        return kind, {}, path, frozenset()
    default = _DSH_CLASSES if kind == "dsh" else _ALL_CLASSES
    classes = table.get("classes", default)
    return kind, table, path, frozenset(int(c) for c in classes)


def _traffic(wl: dict[str, Any], lossless: frozenset[int]) -> tuple[bool, bool, bool]:
    """(some TCP traffic, some TCP traffic in a lossy class, some reliable traffic in a
    lossy class) of the workload and its extra workloads; UDP is neither."""
    tables = [wl, *[t for t in wl.get("extra", []) or [] if isinstance(t, dict)]]
    tcp = lossy_tcp = lossy = False
    for t in tables:
        if t.get("pattern", wl.get("pattern")) == "udp":
            continue
        transport = str(t.get("transport", "tcp"))
        priorities = t.get("priorities") or [t.get("priority", 0)]
        in_lossy = any(min(int(p), 7) not in lossless for p in priorities)
        lossy = lossy or in_lossy
        if transport != "rdma":
            tcp = True
            lossy_tcp = lossy_tcp or in_lossy
    return tcp, lossy_tcp, lossy


def build_context(resolved: dict[str, Any], network: dict[str, Any] | None = None) -> CheckContext:
    """The context of a resolved scenario.

    Args:
        resolved: The scenario as :func:`shoal._core.resolve` returns it, parsed.
        network: Its network (:func:`shoal._core.network_facts`); asked of the core when
            None.

    Raises:
        ScenarioError: when the core refuses the scenario.
    """
    if network is None:
        network = _core.network_facts(json.dumps(resolved))
    sw, tr, wl = (resolved[k] for k in ("switch", "transport", "workload"))
    host_rate = Fraction(network["host_rate_bps"])
    # The base RTT as the core computes it: one TCP segment and its ACK over every link
    # of the longest path, each serialization rounded up to a whole picosecond.
    rtt = _seconds(network["base_round_trip_ps"])
    mtu = Fraction(int(tr["mss"]) + int(tr["header"]))
    ppp = int(sw["ports_per_pool"])
    worst = _most_congested(network["switches"], ppp)
    alpha_v = sw["alpha"]
    alphas = alpha_v if isinstance(alpha_v, list) else [alpha_v]
    alpha = min(Fraction(a).limit_denominator(1 << 20) for a in alphas)
    marking = sw.get("marking", {})
    cutoff, red = marking.get("cutoff", {}), marking.get("red", {})
    cc = str(tr["cc"]["kind"])
    mode = str(tr.get("ecn", "auto"))
    ecn_capable = mode == "on" or (mode == "auto" and cc in ("dctcp", "ecn_star"))
    bdp = host_rate * rtt / 8
    fc_kind, _, _, lossless = _flow_control(sw)
    tcp, lossy_tcp, lossy = _traffic(wl, lossless)
    ctx = CheckContext(
        scenario=resolved,
        link_rate=host_rate,
        rtt=rtt,
        bdp=bdp,
        pool=_size(sw["pool_size"]),
        reserved=_size(sw["reserved"]),
        alpha=alpha,
        queues=int(sw["queues"]),
        ports_per_pool=ppp,
        congested_per_pool=max(worst, 1),
        mtu=mtu,
        link_delay=_seconds(network["longest_path"][0]["delay_ps"]),
        cc=cc,
        ecn_capable=ecn_capable,
        k=_size(cutoff["k"]) if "k" in cutoff else None,
        kmin=_size(red["kmin"]) if "kmin" in red else None,
        kmax=_size(red["kmax"]) if "kmax" in red else None,
        flow_control=fc_kind,
        lossless_classes=lossless,
        tcp=tcp,
        lossy_tcp=lossy_tcp,
        lossy_traffic=lossy,
        network=network,
    )
    ctx.derived = {
        "link_rate": as_number(host_rate),
        "rtt": float(rtt),
        "bdp": as_number(bdp),
        "pool": as_number(ctx.pool),
        "reserved": as_number(ctx.reserved),
        "alpha": float(alpha),
        "ports_per_pool": ppp,
        "congested_ports_per_pool": ctx.congested_per_pool,
        "k": _opt(ctx.k),
        "kmin": _opt(ctx.kmin),
        "kmax": _opt(ctx.kmax),
        "cc": cc,
        "ecn_capable": ecn_capable,
        "dt_share_one_queue": as_number(ctx.dt_share(1)),
        "dt_share_congested": as_number(ctx.dt_share(ctx.congested_per_pool)),
        "flow_control": fc_kind,
        "lossless_classes": sorted(lossless),
        "lossy_traffic": lossy,
    }
    return ctx


def _opt(v: Fraction | None) -> int | float | None:
    return None if v is None else as_number(v)


def _b(v: Fraction) -> str:
    return fmt_bytes(v)


# ------------------------------------------------------------------------------- rules


@rule
def ecn_sum_over_pool(ctx: CheckContext) -> list[Finding]:
    """Sum of K over ports congested together must fit in their pool (traffic of lossy
    classes: lossless ones pause rather than drop)."""
    k = ctx.k_high
    if k is None or not ctx.lossy_traffic:
        return []
    m = ctx.congested_per_pool
    need, have = m * k, ctx.pool + m * ctx.reserved
    if m < 2 or need <= have:
        return []
    what = "K" if ctx.k is not None else "Kmax"
    return [
        Finding(
            "ecn-sum-over-pool",
            "warning",
            f"{m} ports of one pool can be congested together; the sum of their {what} "
            f"({m} x {_b(k)} = {_b(need)}) exceeds the buffer they can use (pool + {m} x reserved "
            f"= {_b(have)}): queues overflow before marking slows senders, so packets drop. "
            "Lower K, or add shared-buffer marking (`shoal advise bcc`).",
            f"{BCC}, section III-A (standard ECN overflows a shallow shared buffer)",
        )
    ]


@rule
def ecn_above_dt_share(ctx: CheckContext) -> list[Finding]:
    """K above the dynamic-threshold share of M congested queues (traffic of lossy
    classes: lossless ones pause rather than drop)."""
    k = ctx.k_high
    if k is None or not ctx.lossy_traffic:
        return []
    m = ctx.congested_per_pool
    share = ctx.dt_share(m)
    if k <= share:
        return []
    what = "K" if ctx.k is not None else "Kmax"
    return [
        Finding(
            "ecn-above-dt-share",
            "warning",
            f"with {m} congested port(s) in a pool, the dynamic threshold gives each queue "
            f"reserved + alpha*B/(1+M*alpha) = {_b(share)}, below {what} = {_b(k)}: the queue hits "
            "the threshold and drops before it is marked.",
            f"{BCC}, sections II-B and IV-B (T(t) <= B_R means losses)",
        )
    ]


def _whole(v: Fraction) -> str:
    """Whole bytes: ``38,273 B``."""
    return f"{math.ceil(v):,} B"


def _unit(text: str) -> str:
    """``100 Gbps`` as a command-line value: ``100Gbps``."""
    return text.replace(" ", "")


@rule
def k_below_transport_minimum(ctx: CheckContext) -> list[Finding]:
    """K below what the transport needs to keep the link busy (TCP traffic, lossy or not:
    the link underflows either way)."""
    k, tp = ctx.k_low, ctx.transport
    if k is None or tp is None or not ctx.ecn_capable or not ctx.tcp:
        return []
    what = "K" if ctx.k is not None else "Kmin"
    minimum = tp.k_min_bdp * ctx.bdp
    if k >= minimum:
        return []
    return [
        Finding(
            "k-below-transport-minimum",
            "warning",
            f"{what} = {_b(k)} is below {tp.k_min_rule} = {_b(minimum)} for {ctx.cc} (C = "
            f"{float(ctx.link_rate) / 1e9:g} Gbps, base RTT = {float(ctx.rtt) * 1e6:.3g} us): the "
            "link underflows after each window cut and throughput is lost.",
            tp.k_min_source,
        )
    ]


@rule
def drop_threshold_below_bdp(ctx: CheckContext) -> list[Finding]:
    """For TCP traffic that is not ECN-capable, K is a drop threshold: below 1 BDP loses
    throughput (lossy classes: lossless packets are never dropped for a marking rule)."""
    k = ctx.k_low
    if k is None or ctx.ecn_capable or k >= ctx.bdp or not ctx.lossy_tcp:
        return []
    return [
        Finding(
            "drop-threshold-below-bdp",
            "warning",
            f"{ctx.cc} packets are not ECN-capable, so they are dropped where they would be "
            "marked: "
            f"K = {_b(k)} acts as a tail-drop buffer below 1 BDP = {_b(ctx.bdp)}; the link "
            "underflows after each loss.",
            f"{WP}, section 2.1 (1 BDP keeps the link busy)",
        )
    ]


@rule
def buffer_for_marking(ctx: CheckContext) -> list[Finding]:
    """The buffer one congested queue can get must hold the slow-start overshoot (TCP
    traffic of lossy classes: a lossless queue pauses its upstream instead)."""
    if not ctx.lossy_tcp:
        return []
    share = ctx.dt_share(1)
    k = ctx.k_high
    if k is None or not ctx.ecn_capable:
        if share >= ctx.bdp:
            return []
        return [
            Finding(
                "buffer-below-bdp",
                "warning",
                f"without ECN marking a single congested queue gets at most {_b(share)} "
                f"(reserved + alpha*B/(1+alpha)), below 1 BDP = {_b(ctx.bdp)}: tail-drop TCP "
                "cannot keep the link busy.",
                f"{WP}, sections 2.1 and 3.6",
            )
        ]
    need = 2 * k + ctx.bdp
    if share >= need:
        return []
    return [
        Finding(
            "buffer-below-2k-plus-bdp",
            "warning",
            f"a single congested queue gets at most {_b(share)}, below 2K + BDP = {_b(need)} "
            f"(K = {_b(k)}): the slow-start overshoot after the first mark can overflow it "
            "(3 BDP when K = 1 BDP).",
            f"{WP}, section 4.3",
        )
    ]


@rule
def pfc_headroom(ctx: CheckContext) -> list[Finding]:
    """PFC headroom per (ingress port, lossless class), or DSH's insurance per port, must
    be at least eta for the link that feeds it (its rate and delay, the largest packet)."""
    sw = ctx.scenario.get("switch", {})
    kind, table, path, lossless = _flow_control(sw)
    if not lossless:
        return []
    rule_ = table.get("headroom", "eta")
    if rule_ == "eta":
        return []
    packet = _largest_packet(ctx.scenario)
    worst: tuple[Fraction, Fraction, Fraction, str] | None = None
    for name, rate, delay in _link_kinds(ctx.network):
        have = 3 * rate * delay / 8 if rule_ == "3cd" else _size(rule_)
        eta = eta_bytes(rate, delay, packet)
        if have < eta and (worst is None or eta - have > worst[1] - worst[0]):
            worst = (have, eta, rate, name)
    if worst is None:
        return []
    have, eta, rate, name = worst
    what = "insurance headroom per port" if kind == "dsh" else "headroom per port and class"
    given = f'"3cd" = 3 x C x D = {_whole(have)}' if rule_ == "3cd" else _whole(have)
    return [
        Finding(
            "pfc-headroom-below-eta",
            "warning",
            f"{path}.headroom = {given} ({what}) is below eta = 2 x (C x D_prop + MTU) + "
            f"3840 B = {_whole(eta)} on the {name} ({float(rate) / 1e9:g} Gbps, largest "
            f"packet {_whole(packet)}): packets in flight after a PAUSE can overflow it "
            'and lossless traffic drops. Use headroom = "eta".',
            f"{DSH}, section II-C, Eq. (1)",
        )
    ]


def _largest_packet(resolved: dict[str, Any]) -> Fraction:
    """The largest packet on the wire, as the core sizes headroom by it: a TCP segment or
    ACK, an RDMA packet or ACK."""
    tr, rdma = resolved["transport"], resolved.get("rdma", {})
    sizes = [
        int(tr["mss"]) + int(tr["header"]),
        int(tr["ack_size"]),
        int(rdma.get("mtu", 0)) + int(rdma.get("header", 0)),
        int(rdma.get("ack_size", 0)),
    ]
    return Fraction(max(sizes))


def _link_kinds(network: dict[str, Any]) -> list[tuple[str, Fraction, Fraction]]:
    """(name, rate, one-way delay) of each kind of link into a switch: host links, then
    uplinks (from another switch), each distinct rate and delay once. A port's link out
    has the rate and delay of the link in beside it."""
    kinds: dict[tuple[bool, int, int], None] = {}
    for ports in network["switches"]:
        for p in ports:
            kinds[("switch" in p, p["rate_bps"], p["delay_ps"])] = None
    return [
        ("uplinks" if up else "host links", Fraction(rate), _seconds(delay))
        for up, rate, delay in sorted(kinds, key=lambda kind: kind[0])
    ]


# ------------------------------------------------------------------------------- entry


def check(
    scenario: ScenarioInput,
    set: Overrides = None,  # noqa: A002 - mirrors shoal.run
    rules: Iterable[Rule] | None = None,
) -> CheckReport:
    """Check a scenario (path, TOML text or dict) with overrides, like ``shoal run``.

    Raises:
        ScenarioError: when the scenario is invalid (as ``shoal run`` would).
    """
    loaded = load_scenario(scenario, set)
    resolved_json, core_warnings = _core.resolve(loaded.to_json())
    ctx = build_context(json.loads(resolved_json), _core.network_facts(resolved_json))
    findings = [Finding("scenario", "warning", w, "shoal core validation") for w in core_warnings]
    for fn in rules if rules is not None else RULES:
        findings.extend(fn(ctx))
    return CheckReport(scenario=loaded.name, context=ctx.derived, findings=findings)
