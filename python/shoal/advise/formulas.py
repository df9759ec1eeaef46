"""The advisor's formulas: each topic is a function returning a typed result.

Every function takes quantities as numbers (SI: bits per second, seconds, bytes) or as
strings with units (``"100Gbps"``, ``"2us"``, ``"3MB"``), computes exactly (fractions)
and returns a frozen dataclass whose numeric fields are bytes, seconds, bits per second
or plain ratios. ``result.to_dict()`` gives the JSON form that ``shoal advise ... --json``
prints; ``result.lines()`` gives the rows of the human-readable table (value, unit kind
and formula).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, ClassVar

from shoal.advise.chips import Chip, get_chip
from shoal.advise.limits import LIMITS, count_within, within
from shoal.advise.units import (
    AdviseError,
    Number,
    as_number,
    fmt_bytes,
    parse_positive,
    parse_rate,
    parse_size,
    parse_time,
)

__all__ = [
    "PFC_RESPONSE_BYTES",
    "REFERENCES",
    "TRANSPORTS",
    "Advice",
    "BccAdvice",
    "BdpAdvice",
    "DshBurstAdvice",
    "DtAdvice",
    "EcnAdvice",
    "HeadroomAdvice",
    "Line",
    "LossImpactAdvice",
    "TailDropAdvice",
    "bcc",
    "bdp",
    "dsh_burst",
    "dt",
    "ecn",
    "eta_bytes",
    "first_pause_time",
    "headroom",
    "loss_impact",
    "tail_drop",
]

#: The PFC standard's cap on the time to react to a PAUSE, expressed in bytes (DSH Eq. 1).
PFC_RESPONSE_BYTES = 3840

#: Short names of the papers (full titles in docs/advisor.md and :data:`REFERENCES`).
WP = "Buffer white paper (Huawei 2018)"
DSH = "DSH paper (Shan et al.)"
BCC = "BCC paper (Bai et al.)"
LOSSPASS = "LossPass paper (Kim and Lee, IEEE Comm. Letters 2019)"
DCTCP = "DCTCP paper (Alizadeh et al., SIGCOMM 2010), section 3.3"
REFERENCES = {
    WP: "White Paper on Buffering Requirements for Data Center Switches, Huawei, 2018",
    DSH: "Less is More: Dynamic and Shared Headroom Allocation in PFC-enabled Datacenter "
    "Networks, Shan et al.",
    BCC: "One More Config Is Enough: Saving (DC)TCP for High-Speed Extremely "
    "Shallow-Buffered Datacenters, W. Bai et al., IEEE/ACM ToN 2020",
    DCTCP: "Data Center TCP (DCTCP), M. Alizadeh et al., ACM SIGCOMM 2010",
    LOSSPASS: "Absorbing Microbursts Without Headroom for Data Center Networks, G. Kim and "
    "W. Lee, IEEE Communications Letters 2019",
}


@dataclass(frozen=True)
class Transport:
    name: str
    lam: float
    lam_source: str
    #: The smallest K (as a fraction of C*RTT) that keeps the link busy in theory.
    k_min_bdp: Fraction
    k_min_rule: str
    k_min_source: str


TRANSPORTS: dict[str, Transport] = {
    "dctcp": Transport(
        "DCTCP",
        0.72,
        f"{BCC}, sections II-C and III-C: 720KB (0.72 BDP) measured enough for 100% throughput",
        Fraction(1, 7),
        "K > C*RTT/7",
        DCTCP,
    ),
    "ecn_star": Transport(
        "ECN*",
        1.0,
        f"{BCC}, section II-C: lambda = 1 for regular ECN-enabled TCP (ECN*)",
        Fraction(1),
        "K >= C*RTT",
        f"{BCC}, section II-C; {WP}, section 4.2",
    ),
}


@dataclass(frozen=True)
class Line:
    """One row of a human-readable answer."""

    key: str
    label: str
    value: Any
    kind: str  # bytes, time, rate, ratio, count, number, text
    formula: str = ""


def _out(value: Fraction | float | int | None) -> int | float | None:
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return as_number(value)


@dataclass(frozen=True, kw_only=True)
class Advice:
    """Common part of every answer: inputs used, assumptions, sources and notes."""

    TOPIC: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    #: (field, label, kind, formula) of every output, in display order.
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = ()

    inputs: dict[str, Any] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def lines(self) -> list[Line]:
        return [
            Line(key, label, getattr(self, key), kind, formula)
            for key, label, kind, formula in self.OUTPUTS
        ]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.TOPIC}
        for key, _label, kind, _formula in self.OUTPUTS:
            value = getattr(self, key)
            out[key] = value if kind == "text" else _out(value)
        out["inputs"] = dict(self.inputs)
        out["formulas"] = {key: formula for key, _l, _k, formula in self.OUTPUTS if formula}
        out["assumptions"] = list(self.assumptions)
        out["sources"] = list(self.sources)
        out["notes"] = list(self.notes)
        return out

    def __post_init__(self) -> None:  # keep numbers JSON-friendly
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Fraction):
                object.__setattr__(self, f.name, as_number(value))
        object.__setattr__(
            self,
            "inputs",
            {k: as_number(v) if isinstance(v, Fraction) else v for k, v in self.inputs.items()},
        )


def _chip(chip: str | Chip | None) -> Chip | None:
    return None if chip is None else get_chip(chip)


def _require(param: str, value: Any, what: str) -> Any:
    if value is None:
        raise AdviseError(param, f"is required ({what})")
    return value


def _bytes(rate_bps: Fraction, seconds: Fraction) -> Fraction:
    return rate_bps * seconds / 8


def _chip_ports(n: int, c: Chip | None) -> int:
    """``n`` ports, no more than the chip has (when a chip is given)."""
    if c is not None and n > c.ports:
        raise AdviseError("ports", f"{n} is more than the {c.name} has; accepted: 1 to {c.ports}")
    return n


def _mmu_ports(n: int, c: Chip | None) -> int:
    """``n`` ports sharing one pool: no more than one MMU of the chip serves."""
    if c is not None and n > c.ports_per_mmu:
        raise AdviseError(
            "ports",
            f"{n} ports cannot share one pool of the {c.name}: its {c.ports} ports are split "
            f"over {c.mmus} MMU(s); accepted: 1 to {c.ports_per_mmu}",
        )
    return n


def _reserve_fits(reserve: Fraction, reserved: Number, pool: Fraction) -> Fraction:
    """The static reserve per queue (given as ``reserved``), no larger than the shared
    pool: a queue's private bytes beyond the whole shared pool is a typo."""
    if reserve > pool:
        raise AdviseError(
            "reserved",
            f"{reserved} per queue is larger than the shared pool ({fmt_bytes(pool)}); "
            f"accepted: 0 to the pool size",
        )
    return reserve


# --------------------------------------------------------------------------------- bdp


@dataclass(frozen=True, kw_only=True)
class BdpAdvice(Advice):
    TOPIC: ClassVar[str] = "bdp"
    TITLE: ClassVar[str] = "Bandwidth-delay product"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("bdp", "BDP", "bytes", "C * RTT"),
        ("bdp_packets", "BDP in MTU packets", "number", "C * RTT / MTU"),
    )
    rate: int | float
    rtt: int | float
    bdp: int | float
    bdp_packets: int | float | None = None


def bdp(
    rate: Number | None = None,
    rtt: Number | None = None,
    mtu: Number | None = None,
    chip: str | Chip | None = None,
) -> BdpAdvice:
    """The bandwidth-delay product C*RTT (white paper section 2.1)."""
    c = _chip(chip)
    if rate is None and c is not None:
        rate = c.port_rate_bps
    C = within("rate", parse_rate, _require("rate", rate, "the bottleneck link rate, e.g. 100Gbps"))
    T = within("rtt", parse_time, _require("rtt", rtt, "the round-trip time, e.g. 80us"))
    L = within("mtu", parse_size, mtu) if mtu is not None else None
    value = _bytes(C, T)
    packets = value / L if L is not None else None
    return BdpAdvice(
        rate=as_number(C),
        rtt=as_number(T),
        bdp=as_number(value),
        bdp_packets=_out(packets),
        inputs={"rate": C, "rtt": T, **({"mtu": L} if L is not None else {})},
        assumptions=(
            "C is the bottleneck link rate; RTT is the base round-trip time "
            "(propagation, serialization and host delay, no queueing).",
        ),
        sources=(f"{WP}, section 2.1 (BDP = C x RTT)",),
    )


# --------------------------------------------------------------------------- tail drop


@dataclass(frozen=True, kw_only=True)
class TailDropAdvice(Advice):
    TOPIC: ClassVar[str] = "tail-drop"
    TITLE: ClassVar[str] = "Buffer for TCP with tail drop"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("bdp", "BDP", "bytes", "C * RTT"),
        ("buffer_synchronized", "one flow / synchronized flows", "bytes", "B = C * RTT"),
        ("buffer_desynchronized", "n desynchronized flows", "bytes", "B = C * RTT / sqrt(n)"),
        ("regime", "regime used", "text", ""),
        ("buffer", "recommended buffer per port", "bytes", ""),
    )
    bdp: int | float
    flows: int
    buffer_synchronized: int | float
    buffer_desynchronized: int | float
    regime: str
    buffer: int | float


def tail_drop(
    rate: Number | None = None,
    rtt: Number | None = None,
    flows: Number = 1,
    sync: str = "auto",
    chip: str | Chip | None = None,
) -> TailDropAdvice:
    """Buffer that keeps a tail-drop bottleneck busy (white paper section 2).

    ``sync``: ``"auto"`` (synchronized unless told otherwise, as the white paper finds
    for datacenters), ``"sync"`` or ``"desync"``.
    """
    c = _chip(chip)
    if rate is None and c is not None:
        rate = c.port_rate_bps
    C = within("rate", parse_rate, _require("rate", rate, "the bottleneck link rate, e.g. 100Gbps"))
    T = within("rtt", parse_time, _require("rtt", rtt, "the round-trip time, e.g. 80us"))
    n = count_within("flows", flows)
    if sync not in ("auto", "sync", "desync"):
        raise AdviseError("sync", f"unknown value {sync!r}; accepted: auto, sync, desync")
    b = _bytes(C, T)
    desync = float(b) / math.sqrt(n)
    if n == 1:
        regime, buffer = "single flow: 1 BDP", float(b)
    elif sync == "desync":
        regime, buffer = f"{n} desynchronized flows: BDP/sqrt(n)", desync
    else:
        regime, buffer = f"{n} synchronized flows: 1 BDP", float(b)
    notes = [
        "1 BDP: one long flow, or many flows whose windows rise and fall together (incast, "
        "similar RTTs, drops at one switch) -- the common datacenter case (section 2.3).",
        "BDP/sqrt(n): many long flows with independent, desynchronized windows (McKeown); "
        "the white paper shows the link underflows with it under incast (Figs. 2-4, 2-5).",
        "These keep the link busy only. Avoiding timeouts of mice flows under tail drop "
        "needs far more: ~20 MB per 10GE port with 1000 concurrent flows and a 200 ms RTO, "
        "~5 MB with a 20 ms RTO (section 3.4).",
    ]
    if sync == "desync" and n > 1:
        notes.append("Use BDP/sqrt(n) only when flows really are desynchronized and independent.")
    return TailDropAdvice(
        bdp=as_number(b),
        flows=n,
        buffer_synchronized=as_number(b),
        buffer_desynchronized=desync,
        regime=regime,
        buffer=buffer,
        inputs={"rate": C, "rtt": T, "flows": n, "sync": sync},
        assumptions=(
            "Loss-based TCP (window halves on loss), long-lived flows, one bottleneck hop.",
            "The goal is a fully used link; RTT is the largest RTT of the flows (section 2.3).",
        ),
        sources=(
            f"{WP}, section 2.1 (1 BDP)",
            f"{WP}, section 2.2 (BDP/sqrt(n))",
            f"{WP}, section 2.3 (applicability in datacenters)",
            f"{WP}, section 3.4",
        ),
        notes=tuple(notes),
    )


# -------------------------------------------------------------------------------- ecn


@dataclass(frozen=True, kw_only=True)
class EcnAdvice(Advice):
    TOPIC: ClassVar[str] = "ecn"
    TITLE: ClassVar[str] = "ECN marking threshold"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("bdp", "BDP", "bytes", "C * RTT"),
        ("lam", "lambda", "number", ""),
        ("k", "K (transport rule)", "bytes", "K = lambda * C * RTT"),
        (
            "k_min",
            "smallest K for full throughput (theory)",
            "bytes",
            "DCTCP: C * RTT / 7; ECN*: C * RTT",
        ),
        ("k_elephant", "K, elephant-heavy traffic", "bytes", "K = 1 BDP"),
        ("k_mice", "K, mice-heavy traffic", "bytes", "K = BDP / sqrt(n)"),
        ("recommended_k", "recommended K", "bytes", "K rule; 1 BDP (elephant); BDP/sqrt(n) (mice)"),
        ("buffer", "buffer per port with K = 1 BDP", "bytes", "B >= 3 BDP"),
        ("buffer_for_k", "buffer per port for the recommended K", "bytes", "B >= 2K + BDP"),
        (
            "per_port_buffer",
            "per-port buffer for throughput and no loss",
            "bytes",
            "B_R = C * RTT * (1 + lambda)",
        ),
    )
    bdp: int | float
    lam: float
    k: int | float
    k_min: int | float
    k_elephant: int | float
    k_mice: int | float | None
    recommended_k: int | float
    buffer: int | float
    buffer_for_k: int | float
    per_port_buffer: int | float


def ecn(
    rate: Number | None = None,
    rtt: Number | None = None,
    transport: str = "dctcp",
    lam: Number | None = None,
    flows: Number | None = None,
    mix: str | None = None,
    chip: str | Chip | None = None,
) -> EcnAdvice:
    """ECN marking threshold K and the buffer it needs.

    ``mix``: ``"mice"`` (latency first: K = BDP/sqrt(n), needs ``flows``), ``"elephant"``
    (throughput first: K = 1 BDP) or ``None`` (the transport's K = lambda*C*RTT).
    """
    c = _chip(chip)
    if rate is None and c is not None:
        rate = c.port_rate_bps
    C = within("rate", parse_rate, _require("rate", rate, "the bottleneck link rate, e.g. 100Gbps"))
    T = within("rtt", parse_time, _require("rtt", rtt, "the round-trip time, e.g. 80us"))
    key = str(transport).lower().replace("-", "_").replace("*", "_star")
    if key == "ecnstar":
        key = "ecn_star"
    if key not in TRANSPORTS:
        raise AdviseError(
            "transport",
            f"unknown transport {transport!r}; accepted: "
            f"{', '.join(TRANSPORTS)} (loss-based TCP: see tail-drop)",
        )
    tp = TRANSPORTS[key]
    lam_f = (
        within("lam", parse_positive, lam, what="lambda, e.g. 0.72")
        if lam is not None
        else Fraction(tp.lam).limit_denominator(1000)
    )
    if mix not in (None, "mice", "elephant"):
        raise AdviseError("mix", f"unknown value {mix!r}; accepted: mice, elephant")
    n = count_within("flows", flows) if flows is not None else None
    if mix == "mice" and n is None:
        raise AdviseError(
            "flows",
            "is required with mix=mice (the number of concurrent long flows n, K = BDP/sqrt(n))",
        )
    b = _bytes(C, T)
    k = lam_f * b
    k_min = tp.k_min_bdp * b
    k_mice = float(b) / math.sqrt(n) if n else None
    if mix == "elephant":
        rec: float | Fraction = b
    elif mix == "mice":
        assert k_mice is not None
        rec = k_mice
    else:
        rec = k
    notes = [
        "Elephant-heavy traffic: keep the link busy, set K = 1 BDP (white paper 4.2).",
        "Mice-heavy traffic: keep queues short, set a lower K such as BDP/sqrt(n) "
        "(15% BDP for 48 flows in the white paper's test) and accept some link underflow.",
        f"{tp.name}: theory needs {tp.k_min_rule}; measured stacks need more "
        f"(lambda = {float(tp.lam):g}) because of TSO/GRO bursts (BCC II-C).",
    ]
    if float(rec) < float(k_min):
        notes.append(
            f"warning: the recommended K is below {tp.k_min_rule}: expect lost throughput."
        )
    return EcnAdvice(
        bdp=as_number(b),
        lam=float(lam_f),
        k=as_number(k),
        k_min=as_number(k_min),
        k_elephant=as_number(b),
        k_mice=k_mice,
        recommended_k=_out(rec) or 0,
        buffer=as_number(3 * b),
        buffer_for_k=_out(2 * Fraction(rec) + b) or 0,
        per_port_buffer=as_number((1 + lam_f) * b),
        inputs={
            "rate": C,
            "rtt": T,
            "transport": key,
            "lam": float(lam_f),
            **({"flows": n} if n else {}),
            **({"mix": mix} if mix else {}),
        },
        assumptions=(
            "Per-queue marking on the instantaneous queue; long-lived flows share one bottleneck.",
            "Buffer rule: in slow start the queue can reach w_e + K with w_e <= K + BDP when "
            "the first mark is fed back, so B >= 2K + BDP; with K = 1 BDP, B >= 3 BDP.",
            "B_R adds one RTT of slow-start growth (C * RTT) to the K a transport needs.",
        ),
        sources=(
            f"{BCC}, section II-C (K = lambda * C * RTT) and IV-C (B_R)",
            tp.lam_source,
            tp.k_min_source,
            f"{WP}, section 4.2 (threshold by traffic mix)",
            f"{WP}, section 4.3 (buffer >= 3 BDP with K = 1 BDP)",
        ),
        notes=tuple(notes),
    )


# -------------------------------------------------------------------------- headroom


def eta_bytes(rate_bps: Fraction, delay_s: Fraction, mtu: Fraction) -> Fraction:
    """PFC headroom per queue: eta = 2*(C*D_prop + MTU) + 3840 B (DSH Eq. 1)."""
    return 2 * (_bytes(rate_bps, delay_s) + mtu) + PFC_RESPONSE_BYTES


@dataclass(frozen=True, kw_only=True)
class HeadroomAdvice(Advice):
    TOPIC: ClassVar[str] = "headroom"
    TITLE: ClassVar[str] = "PFC headroom"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("eta", "headroom per queue (eta)", "bytes", "eta = 2 * (C * D_prop + MTU) + 3840 B"),
        (
            "static_total",
            "static headroom, total (eta per port and queue)",
            "bytes",
            "h = N_p * N_q * eta",
        ),
        ("dsh_total", "DSH insurance headroom, total (eta per port)", "bytes", "B_i = N_p * eta"),
        ("static_fraction", "static headroom / buffer", "ratio", "h / B"),
        ("dsh_fraction", "DSH headroom / buffer", "ratio", "B_i / B"),
    )
    eta: int | float
    static_total: int | float | None = None
    dsh_total: int | float | None = None
    static_fraction: float | None = None
    dsh_fraction: float | None = None


def headroom(
    rate: Number | None = None,
    delay: Number | None = None,
    mtu: Number = 1500,
    ports: Number | None = None,
    queues: Number = 8,
    buffer: Number | None = None,
    chip: str | Chip | None = None,
) -> HeadroomAdvice:
    """PFC headroom per queue, and in total for static (SIH) vs DSH allocation."""
    c = _chip(chip)
    if c is not None:
        rate = c.port_rate_bps if rate is None else rate
        ports = c.ports if ports is None else ports
        buffer = c.buffer if buffer is None else buffer
    C = within("rate", parse_rate, _require("rate", rate, "the upstream link rate, e.g. 100Gbps"))
    D = within(
        "delay",
        parse_time,
        _require("delay", delay, "the upstream link's one-way propagation delay, e.g. 2us"),
    )
    L = within("mtu", parse_size, mtu)
    nq = count_within("queues", queues)
    eta = eta_bytes(C, D, L)
    np_ = _chip_ports(count_within("ports", ports), c) if ports is not None else None
    B = within("buffer", parse_size, buffer) if buffer is not None else None
    static = np_ * nq * eta if np_ else None
    dsh = np_ * eta if np_ else None
    notes = []
    if B is not None and static is not None and static >= B:
        notes.append("warning: static headroom exceeds the buffer: no room left for shared buffer.")
    if np_ is None:
        notes.append(
            "Give --ports (and --buffer, or --chip) for the totals and their share of the buffer."
        )
    return HeadroomAdvice(
        eta=as_number(eta),
        static_total=_out(static),
        dsh_total=_out(dsh),
        static_fraction=float(static / B) if (static is not None and B) else None,
        dsh_fraction=float(dsh / B) if (dsh is not None and B) else None,
        inputs={
            "rate": C,
            "delay": D,
            "mtu": L,
            "queues": nq,
            **({"ports": np_} if np_ else {}),
            **({"buffer": B} if B is not None else {}),
            **({"chip": c.key} if c else {}),
        },
        assumptions=(
            "Worst case: the PAUSE waits for an MTU in flight (MTU/C), propagates (D_prop), "
            "is processed within the PFC cap (3840 B at line rate), the upstream finishes an "
            "MTU (MTU/C), and the last packet propagates back (D_prop).",
            "D_prop is the one-way propagation delay of the upstream link; MTU is the wire "
            "size of the largest frame.",
            "Static allocation (SIH) reserves eta for every lossless ingress queue; DSH "
            "reserves eta once per port and pauses the whole port when it is used.",
        ),
        sources=(
            f"{DSH}, section II-C, Eq. (1)",
            f"{DSH}, section III-A, Eq. (3)",
            f"{DSH}, section IV-B, Eq. (4)",
        ),
        notes=tuple(notes),
    )


# -------------------------------------------------------------------------------- dt


@dataclass(frozen=True, kw_only=True)
class DtAdvice(Advice):
    TOPIC: ClassVar[str] = "dt"
    TITLE: ClassVar[str] = "Dynamic threshold share"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("per_queue", "shared buffer per active queue", "bytes", "alpha * B / (1 + M * alpha)"),
        (
            "per_queue_with_reserved",
            "per queue incl. reserved",
            "bytes",
            "S + alpha * B / (1 + M * alpha)",
        ),
        (
            "total_used",
            "shared buffer used by M queues",
            "bytes",
            "M * alpha * B / (1 + M * alpha)",
        ),
        ("free", "shared buffer left free", "bytes", "B / (1 + M * alpha)"),
        ("share", "share of the pool per queue", "ratio", "alpha / (1 + M * alpha)"),
    )
    per_queue: int | float
    per_queue_with_reserved: int | float
    total_used: int | float
    free: int | float
    share: float


def dt(
    pool: Number | None = None,
    alpha: Number | None = None,
    active: Number = 1,
    reserved: Number = 0,
    chip: str | Chip | None = None,
) -> DtAdvice:
    """Steady-state buffer of each of M congested queues under the dynamic threshold."""
    c = _chip(chip)
    if pool is None and c is not None:
        pool = c.buffer_per_mmu
    B = within(
        "pool", parse_size, _require("pool", pool, "the shared pool size B, e.g. 3MB, or --chip")
    )
    a = _alpha(alpha)
    M = count_within("active", active)
    S = _reserve_fits(within("reserved", parse_size, reserved), reserved, B)
    per = a * B / (1 + M * a)
    return DtAdvice(
        per_queue=as_number(per),
        per_queue_with_reserved=as_number(S + per),
        total_used=as_number(M * per),
        free=as_number(B / (1 + M * a)),
        share=float(a / (1 + M * a)),
        inputs={
            "pool": B,
            "alpha": float(a),
            "active": M,
            "reserved": S,
            **({"chip": c.key} if c else {}),
        },
        assumptions=(
            "M queues are congested (always have packets to send); the others are empty.",
            "Threshold T(t) = alpha * (B - sum of shared occupancy); in steady state every "
            "congested queue sits at T.",
            "B is the shared part of one pool/MMU; reserved space is used first and is not in B.",
        ),
        sources=(
            f"{BCC}, section II-B, Eq. (1) and the alpha*B/(1+M*alpha) share "
            "(Choudhury and Hahne, dynamic threshold)",
            f"{DSH}, section II-C, Eq. (2)",
            f"{BCC}, section V-A: alpha = 1, one congested port of a 3MB pool gets ~1.5MB",
        ),
    )


_ALPHA_WHAT = "a number > 0 such as 4, 0.5 or 1/16"


def _alpha(alpha: Number | Sequence[Number] | None) -> Fraction:
    """The smallest of one or several alphas (comma-separated, a list, or 1/16 fractions)."""
    param = "alpha"
    _require(param, alpha, "the dynamic-threshold alpha, e.g. 4 or 1/16")
    values: list[Number]
    if isinstance(alpha, str) and "," in alpha:
        values = [v for v in alpha.split(",") if v.strip()]
    elif isinstance(alpha, Sequence) and not isinstance(alpha, str):
        values = list(alpha)
    else:
        values = [alpha]  # type: ignore[list-item]
    parsed = []
    for v in values:
        if isinstance(v, str) and "/" in v:
            num, _, den = v.partition("/")
            try:
                f = Fraction(int(num.strip()), int(den.strip()))
            except (ValueError, ZeroDivisionError):
                raise AdviseError(param, f"cannot read {v!r}; expected {_ALPHA_WHAT}") from None
            parsed.append(LIMITS["alpha"].check(param, f, v))
        else:
            parsed.append(within("alpha", parse_positive, v, what=_ALPHA_WHAT))
    if not parsed:
        raise AdviseError(param, "is required (the dynamic-threshold alpha, e.g. 4)")
    return min(parsed)


# ------------------------------------------------------------------------- dsh burst


@dataclass(frozen=True, kw_only=True)
class DshBurstAdvice(Advice):
    TOPIC: ClassVar[str] = "dsh-burst"
    TITLE: ClassVar[str] = "Longest burst absorbed without a PAUSE"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("eta", "headroom per queue (eta)", "bytes", "2 * (C * D_prop + MTU) + 3840 B"),
        ("case", "case", "text", "1 if R <= (1 - alpha*N)/(alpha*M) + 1, else 2"),
        (
            "dsh_duration",
            "DSH: longest burst",
            "time",
            "case 1: (alpha*(B - N_p*eta) - eta) / ([1 + alpha*(N+M)] * (R-1)); "
            "case 2: (alpha*(B - N_p*eta) - eta) / "
            "((1 + alpha*N) * [(1 + alpha*M)*(R-1) - alpha*N])  (/ drain rate)",
        ),
        (
            "sih_duration",
            "static headroom: longest burst",
            "time",
            "same with alpha*(B - N_q*N_p*eta) as the numerator  (/ C)",
        ),
        ("dsh_burst_bytes", "DSH: bytes arriving per bursting queue", "bytes", "R * drain * d"),
        ("sih_burst_bytes", "static: bytes arriving per bursting queue", "bytes", "R * drain * d"),
        ("ratio", "DSH / static", "number", "d_DSH / d_SIH"),
    )
    eta: int | float
    case: str
    dsh_duration: float | None
    sih_duration: float | None
    dsh_burst_bytes: float | None
    sih_burst_bytes: float | None
    ratio: float | None


def first_pause_time(
    *,
    shared: Fraction,
    pause_margin: Fraction,
    alpha: Fraction,
    congested: int,
    bursting: int,
    load: Fraction,
    congested_drain: Fraction = Fraction(1),
) -> tuple[int, Fraction | None]:
    """DSH Theorems 1 and 2 (section IV-C): how long bursting queues fill before a PAUSE.

    ``congested`` ingress queues (N) have sat at their pause threshold since long before
    t = 0; at t = 0, ``bursting`` empty queues (M) start receiving at ``load`` (R) times
    the rate they drain at. Time is normalized to that drain rate: one unit is the time a
    bursting queue takes to drain one byte, so a bursting queue receives R bytes a unit.
    The paper drains every queue at one rate; ``congested_drain`` lets the congested
    queues drain at another, which the DSH experiments need (their background queues
    share one egress port and the bursting queues another).

    Case 1 holds while the congested queues can fall as fast as the threshold,
    T'(0+) >= -congested_drain; by the paper's Eq. 13 that is
    alpha M (R - 1) <= (1 + alpha N) congested_drain, so the cases meet (the two durations
    are equal) at R = (1 + alpha N) congested_drain / (alpha M) + 1. The paper prints
    (1 - alpha N) there, which contradicts its Eq. 13 and leaves a jump between the cases
    whenever N > 0.

    Args:
        shared: the buffer the dynamic threshold shares out, in bytes: B - N_p eta under
            DSH, B - N_q N_p eta under static headroom, less any private buffer.
        pause_margin: how far below the threshold a queue sends its PAUSE, in bytes:
            eta under DSH (X_qoff = T - eta, Eq. 5), 0 under static headroom.
        alpha: the dynamic threshold's alpha.
        congested: N, the queues sitting at their pause threshold.
        bursting: M, the queues the burst arrives at.
        load: R, a bursting queue's arrival rate over its drain rate.
        congested_drain: the most a congested queue drains, over a bursting queue's
            drain rate.

    Returns:
        The case (1 or 2) and the time until the first PAUSE in normalized units: 0 when
        alpha x ``shared`` leaves no room above ``pause_margin``, None when the bursting
        queues never reach their pause threshold within the model.
    """
    room = alpha * shared - pause_margin
    # Multiplied out rather than divided by alpha M: M = 0 (no burst, which the analysis of
    # the DSH experiments may pass) is then case 1, not a ZeroDivisionError.
    if alpha * bursting * (load - 1) <= (1 + alpha * congested) * congested_drain:
        case, den = 1, (1 + alpha * (congested + bursting)) * (load - 1)
    else:
        case = 2
        den = (1 + alpha * congested) * (
            (1 + alpha * bursting) * (load - 1) - alpha * congested * congested_drain
        )
    if room <= 0:
        return case, Fraction(0)
    if den <= 0:
        return case, None
    return case, room / den


def dsh_burst(
    rate: Number | None = None,
    delay: Number | None = None,
    mtu: Number = 1500,
    buffer: Number | None = None,
    ports: Number | None = None,
    queues: Number = 8,
    alpha: Number | None = None,
    congested: Number = 0,
    bursting: Number = 1,
    load: Number | None = None,
    drain: Number | None = None,
    chip: str | Chip | None = None,
) -> DshBurstAdvice:
    """DSH Theorems 1 and 2: the longest burst M queues absorb before a PFC PAUSE.

    ``drain`` is the rate at which each queue drains (default: ``rate``, a queue that has
    its egress port to itself); the theorems' time unit is one byte at that rate."""
    c = _chip(chip)
    if c is not None:
        rate = c.port_rate_bps if rate is None else rate
        ports = c.ports if ports is None else ports
        buffer = c.buffer if buffer is None else buffer
    C = within("rate", parse_rate, _require("rate", rate, "the port rate, e.g. 100Gbps"))
    D = within(
        "delay",
        parse_time,
        _require("delay", delay, "the link's one-way propagation delay, e.g. 2us"),
    )
    L = within("mtu", parse_size, mtu)
    B = within(
        "buffer",
        parse_size,
        _require("buffer", buffer, "the lossless pool size B, e.g. 16MiB, or --chip"),
    )
    Np = _chip_ports(
        count_within(
            "ports", _require("ports", ports, "the number of ingress ports N_p, or --chip")
        ),
        c,
    )
    Nq = count_within("queues", queues)
    a = _alpha(alpha)
    N = count_within("congested", congested)
    M = count_within("bursting", bursting)
    if Np * Nq < N + M:
        raise AdviseError(
            "bursting",
            f"{N} congested + {M} bursting queues are more than the {Np} ports x {Nq} "
            f"lossless queues = {Np * Nq} there are; accepted: --congested + --bursting "
            f"at most --ports x --queues",
        )
    R = within(
        "load",
        parse_positive,
        _require(
            "load",
            load,
            "the offered load R of each bursting queue, normalized to its drain rate, > 1",
        ),
        what="a load R > 1, e.g. 2",
    )
    drain_bps = C if drain is None else within("drain", parse_rate, drain)
    eta = eta_bytes(C, D, L)
    case_d, d_dsh = first_pause_time(
        shared=B - Np * eta, pause_margin=eta, alpha=a, congested=N, bursting=M, load=R
    )
    case_s, d_sih = first_pause_time(
        shared=B - Nq * Np * eta,
        pause_margin=Fraction(0),
        alpha=a,
        congested=N,
        bursting=M,
        load=R,
    )
    byte_rate = drain_bps / 8

    def secs(d: Fraction | None) -> float | None:
        return None if d is None else float(d / byte_rate)

    def burst(d: Fraction | None) -> float | None:
        return None if d is None else float(R * d)

    notes = []
    if d_dsh is None or d_sih is None:
        notes.append(
            "unbounded (null in JSON): within the model the bursting queues never reach "
            "the pause threshold while the congested queues drain; the model stops "
            "holding once those queues are empty."
        )
    if B - Nq * Np * eta <= 0:
        notes.append("warning: static headroom N_q * N_p * eta exceeds the buffer.")
    ratio = float(d_dsh / d_sih) if d_dsh is not None and d_sih else None
    return DshBurstAdvice(
        eta=as_number(eta),
        case=str(case_d),
        dsh_duration=secs(d_dsh),
        sih_duration=secs(d_sih),
        dsh_burst_bytes=burst(d_dsh),
        sih_burst_bytes=burst(d_sih),
        ratio=ratio,
        inputs={
            "rate": C,
            "delay": D,
            "mtu": L,
            "buffer": B,
            "ports": Np,
            "queues": Nq,
            "alpha": float(a),
            "congested": N,
            "bursting": M,
            "load": float(R),
            "drain": drain_bps,
            **({"chip": c.key} if c else {}),
        },
        assumptions=(
            "N ingress queues are congested (at their pause threshold) long before t = 0; at "
            "t = 0, M empty queues start receiving a burst at R times the drain rate; every "
            "queue drains at that rate (--drain, default the port rate C).",
            "No private buffer; resume threshold equal to pause threshold; PAUSE takes effect "
            "instantly (DSH section IV-C assumptions 1-3).",
            "B is the lossless pool; DSH's shared buffer is B - N_p*eta, static's is "
            "B - N_q*N_p*eta. Durations are converted to seconds at the drain rate.",
        ),
        sources=(
            f"{DSH}, section IV-C, Theorem 1 (Eq. 7)",
            f"{DSH}, section IV-C, Theorem 2 (Eq. 20)",
            f"{DSH}, section II-C, Eq. (1)",
        ),
        notes=tuple(notes),
    )


# ------------------------------------------------------------------------------- bcc


@dataclass(frozen=True, kw_only=True)
class BccAdvice(Advice):
    TOPIC: ClassVar[str] = "bcc"
    TITLE: ClassVar[str] = "BCC shared-buffer ECN/RED parameters"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("bdp", "BDP", "bytes", "C * RTT"),
        ("k_port", "per-port ECN K (standard)", "bytes", "K = lambda * C * RTT"),
        ("b_r", "B_R, per-queue buffer needed", "bytes", "B_R = C * RTT * (1 + lambda) - S_min"),
        ("kmax", "Kmax (shared-buffer RED)", "bytes", "Kmax = B - B_R / alpha_min"),
        ("kmin", "Kmin (shared-buffer RED)", "bytes", "Kmin = Kmax - C * N * h"),
        ("pmax", "Pmax", "ratio", "10% (RED guideline)"),
    )
    bdp: int | float
    k_port: int | float
    b_r: int | float
    kmax: int | float
    kmin: int | float
    pmax: float


def bcc(
    rate: Number | None = None,
    rtt: Number | None = None,
    lam: Number = 0.72,
    pool: Number | None = None,
    alpha: Number | Sequence[Number] | None = None,
    reserved: Number = 0,
    ports: Number | None = None,
    h: Number = "8us",
    pmax: Number = 0.1,
    chip: str | Chip | None = None,
) -> BccAdvice:
    """BCC's shared-buffer ECN/RED thresholds (section IV-C, IV-D)."""
    c = _chip(chip)
    S = within("reserved", parse_size, reserved)
    notes: list[str] = []
    if c is not None:
        rate = c.port_rate_bps if rate is None else rate
        ports = c.ports_per_mmu if ports is None else ports
        if pool is None:
            n_ports = _mmu_ports(count_within("ports", ports), c)
            pool = c.buffer_per_mmu - n_ports * S
            if pool <= 0:
                raise AdviseError(
                    "reserved",
                    f"{reserved} per port x {n_ports} ports leaves no shared pool in the "
                    f"{c.name}'s {fmt_bytes(c.buffer_per_mmu)} per MMU; accepted: at most "
                    f"{fmt_bytes(c.buffer_per_mmu / n_ports)} per port",
                )
            notes.append(
                f"pool from --chip {c.key}: {float(c.buffer_per_mmu):,.0f} B per MMU minus "
                f"{n_ports} ports x the reserve S_min."
            )
    C = within("rate", parse_rate, _require("rate", rate, "the port rate, e.g. 100Gbps"))
    T = within("rtt", parse_time, _require("rtt", rtt, "the base round-trip time, e.g. 80us"))
    lam_f = within("lam", parse_positive, lam, what="lambda, e.g. 0.72 for DCTCP, 1 for ECN*")
    B = within(
        "pool",
        parse_size,
        _require("pool", pool, "the shared buffer pool size B, e.g. 3MB, or --chip"),
    )
    _reserve_fits(S, reserved, B)
    a = _alpha(alpha)
    N = _mmu_ports(
        count_within(
            "ports", _require("ports", ports, "the number of ports N sharing the pool, or --chip")
        ),
        c,
    )
    H = within("h", parse_time, h)
    P = within("pmax", parse_positive, pmax, what="a probability in (0, 1], e.g. 0.1")
    b = _bytes(C, T)
    b_r = b * (1 + lam_f) - S
    kmax = B - b_r / a
    kmin = kmax - _bytes(C, N * H)
    if b_r <= 0:
        notes.append("warning: the static reserve alone covers C*RTT*(1+lambda); B_R <= 0.")
    if kmax <= 0:
        notes.append(
            "warning: Kmax <= 0: the pool is smaller than B_R/alpha, so shared-buffer "
            "RED would mark every packet; raise alpha, enlarge the pool or lower lambda."
        )
    elif kmin <= 0:
        notes.append("warning: Kmin <= 0: C*N*h exceeds Kmax; lower h or mark from an empty pool.")
    return BccAdvice(
        bdp=as_number(b),
        k_port=as_number(lam_f * b),
        b_r=as_number(b_r),
        kmax=as_number(kmax),
        kmin=as_number(kmin),
        pmax=float(P),
        inputs={
            "rate": C,
            "rtt": T,
            "lam": float(lam_f),
            "pool": B,
            "alpha": float(a),
            "reserved": S,
            "ports": N,
            "h": H,
            "pmax": float(P),
            **({"chip": c.key} if c else {}),
        },
        assumptions=(
            "Shared-buffer output-queued switch; one queue per port (queue = port); marking "
            "on the instantaneous pool occupancy.",
            "B_R: synchronized long flows need lambda*C*RTT; one RTT of slow start adds C*RTT "
            "(the queue grows at C while the first mark is fed back); the static reserve "
            "S_min is used first.",
            "Kmax keeps the dynamic threshold T = alpha*(B - occupancy) above B_R; with several "
            "alphas use the smallest. Kmax - Kmin = C*N*h spreads marking to avoid global "
            "synchronization (h = 8us, Pmax = 10% in the paper).",
        ),
        sources=(
            f"{BCC}, section IV-B, Eq. (2)",
            f"{BCC}, section IV-C, Eq. (3)",
            f"{BCC}, section IV-D (alpha_min, S_min)",
            f"{BCC}, section V-B (100Gbps, 80us, lambda 0.72, 3MB, alpha 4, 128KB, N = 8: "
            "B_R ~1.6MB, Kmax ~2.6MB, Kmin ~1.8MB)",
        ),
        notes=tuple(notes),
    )


# ------------------------------------------------------------------------ loss impact


@dataclass(frozen=True, kw_only=True)
class LossImpactAdvice(Advice):
    TOPIC: ClassVar[str] = "loss-impact"
    TITLE: ClassVar[str] = "What one lost window costs a flow"
    OUTPUTS: ClassVar[tuple[tuple[str, str, str, str], ...]] = (
        ("fct", "expected FCT without loss", "time", "E[FCT_P] = (P / w_c) * E[T]"),
        ("loss_delay", "extra delay of one loss", "time", "E[T'] = RTO_min + E[T]"),
        ("impact", "impact of one loss (x the FCT)", "number", "E[I_P] = E[T'] / E[FCT_P]"),
        ("slowdown", "FCT with one loss / without", "number", "1 + E[I_P]"),
    )
    packets: int
    window: int
    fct: int | float
    loss_delay: int | float
    impact: int | float
    slowdown: int | float


def loss_impact(
    packets: Number = 1,
    rto_min: Number | None = None,
    rtt: Number | None = None,
    window: Number = 1,
) -> LossImpactAdvice:
    """How much one loss slows a flow of ``packets`` packets (LossPass Eq. 3).

    A flow of P packets sent w_c at a time takes P / w_c round trips of E[T] each; a loss
    costs the time to detect it, RTO_min (a tail or whole-window loss is only found by the
    timer), plus one round trip to resend. The ratio falls as 1/P: a loss multiplies a
    short flow's FCT and barely moves a long one's, the reason LossPass moves losses onto
    long flows.
    """
    P = count_within("packets", packets)
    w = count_within("window", window)
    rto = within("rto_min", parse_time, _require("rto_min", rto_min, "the minimum RTO, e.g. 5ms"))
    T = within("rtt", parse_time, _require("rtt", rtt, "the mean round-trip time, e.g. 250us"))
    fct = Fraction(P, w) * T
    delay = rto + T
    impact = delay / fct
    return LossImpactAdvice(
        packets=P,
        window=w,
        fct=as_number(fct),
        loss_delay=as_number(delay),
        impact=as_number(impact),
        slowdown=as_number(1 + impact),
        inputs={"packets": P, "window": w, "rto_min": rto, "rtt": T},
        assumptions=(
            "A constant window of w_c packets, every round trip E[T] long; one loss, found by "
            "the retransmission timer at RTO_min (the RTO is milliseconds, the RTT "
            "microseconds, so RTO ~ RTO_min) and repaired in one more round trip.",
        ),
        sources=(f"{LOSSPASS}, section II-A, Eqs. 1-3 and Fig. 2",),
    )
