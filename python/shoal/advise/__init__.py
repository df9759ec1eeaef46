"""The buffer advisor: how much buffer a network needs and how to set ECN and PFC headroom.

Each topic is a function that takes quantities as numbers (SI: bits per second, seconds,
bytes) or strings with units (``"100Gbps"``, ``"2us"``, ``"3MB"``, ``"128KiB"``) and
returns a typed result with ``.to_dict()``; ``shoal advise <topic>`` prints the same::

    from shoal import advise

    advise.headroom(rate="100Gbps", delay="2us", mtu=1500).eta          # 56840 bytes
    advise.bcc(rate="100Gbps", rtt="80us", lam=0.72, pool="3MB", alpha=4,
               reserved="128KB", ports=8, h="8us").to_dict()["kmax"]    # 2602000
    advise.check("my.toml", set=["switch.marking.cutoff.k=10KB"]).findings

Formulas, assumptions and sources: docs/advisor.md.
"""

from __future__ import annotations

from shoal.advise.check import CheckReport, Finding, check
from shoal.advise.chips import CHIPS, Chip, chip_names, get_chip
from shoal.advise.formulas import (
    Advice,
    BccAdvice,
    BdpAdvice,
    DshBurstAdvice,
    DtAdvice,
    EcnAdvice,
    HeadroomAdvice,
    LossImpactAdvice,
    TailDropAdvice,
    bcc,
    bdp,
    dsh_burst,
    dt,
    ecn,
    eta_bytes,
    headroom,
    loss_impact,
    tail_drop,
)
from shoal.advise.limits import LIMITS, Limits
from shoal.advise.units import AdviseError, AdviseWarning

__all__ = [
    "CHIPS",
    "Advice",
    "AdviseError",
    "AdviseWarning",
    "BccAdvice",
    "BdpAdvice",
    "CheckReport",
    "Chip",
    "DshBurstAdvice",
    "DtAdvice",
    "EcnAdvice",
    "Finding",
    "HeadroomAdvice",
    "LIMITS",
    "LossImpactAdvice",
    "Limits",
    "TailDropAdvice",
    "bcc",
    "bdp",
    "check",
    "chip_names",
    "dsh_burst",
    "dt",
    "ecn",
    "eta_bytes",
    "get_chip",
    "headroom",
    "loss_impact",
    "tail_drop",
]
