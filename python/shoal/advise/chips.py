"""Switch-chip presets: ports, port speed, total buffer and MMUs, each with its source.

Sizes printed as "MB" by chip vendors and by the papers are read as MiB (2^20 bytes):
that is what BCC's Table I divides by (e.g. Trident+ 9MB / 48 ports = 192KB, Tomahawk
16MB / 32 = 512KB) and what reproduces DSH's "44.4% of 12MB" for Trident 2. Where a number
is not public, the preset says so in ``notes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from shoal.advise.units import AdviseError, as_number

__all__ = ["CHIPS", "Chip", "chip_names", "get_chip"]

MiB = 2**20

BCC_TABLE_I = (
    "BCC paper (Bai et al., IEEE/ACM ToN 2020), Table I 'Buffer and capacity "
    "information of commodity datacenter switching chips'"
)
BCC_TH_MMU = (
    "BCC Table I note and section III-A: Tomahawk has 4 switch cores, each with its own "
    "MMU and 4MB buffer; section V-A: ~1MB of each MMU is reserved, 3MB is shared"
)
FBOSS = (
    "Meta FBOSS source, fboss/agent/hw/switch_asics/{}Asic.h (github.com/facebook/fboss): "
    "getMMUSizeBytes() and getNumMemoryBuffers()"
)


@dataclass(frozen=True)
class Chip:
    """One switch chip. ``buffer`` is the total packet buffer in bytes."""

    key: str
    name: str
    ports: int
    port_rate_bps: int
    buffer: int
    mmus: int
    sources: dict[str, str]
    notes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default=())

    @property
    def capacity_bps(self) -> int:
        return self.ports * self.port_rate_bps

    @property
    def buffer_per_mmu(self) -> Fraction:
        return Fraction(self.buffer, self.mmus)

    @property
    def ports_per_mmu(self) -> Fraction:
        return Fraction(self.ports, self.mmus)

    @property
    def buffer_per_port(self) -> Fraction:
        return Fraction(self.buffer, self.ports)

    @property
    def buffer_per_port_per_gbps(self) -> Fraction:
        return self.buffer_per_port / Fraction(self.port_rate_bps, 10**9)

    @property
    def buffer_time(self) -> Fraction:
        """Buffer per unit of switching capacity, in seconds (DSH Fig. 4's metric)."""
        return Fraction(self.buffer * 8, self.capacity_bps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "ports": self.ports,
            "port_rate": self.port_rate_bps,
            "capacity": self.capacity_bps,
            "buffer": self.buffer,
            "mmus": self.mmus,
            "buffer_per_mmu": as_number(self.buffer_per_mmu),
            "ports_per_mmu": as_number(self.ports_per_mmu),
            "buffer_per_port": as_number(self.buffer_per_port),
            "buffer_per_port_per_gbps": as_number(self.buffer_per_port_per_gbps),
            "buffer_time": float(self.buffer_time),
            "sources": dict(self.sources),
            "notes": list(self.notes),
        }


_CHIPS = [
    Chip(
        key="bcm56538",
        name="Broadcom BCM56538",
        ports=48,
        port_rate_bps=10**9,
        buffer=4 * MiB,
        mmus=1,
        sources={"ports": BCC_TABLE_I, "buffer": BCC_TABLE_I},
        notes=("MMU count not stated in BCC Table I; modelled as one shared buffer.",),
    ),
    Chip(
        key="trident-plus",
        name="Broadcom Trident+ (BCM56840)",
        ports=48,
        port_rate_bps=10 * 10**9,
        buffer=9 * MiB,
        mmus=1,
        sources={
            "ports": BCC_TABLE_I,
            "buffer": BCC_TABLE_I
            + "; 46,080 cells x 208 B per people.ucsc.edu/~warner/Bufs/trident",
        },
        notes=("MMU count not stated in BCC Table I; modelled as one shared buffer.",),
        aliases=("trident+", "tridentplus", "bcm56840"),
    ),
    Chip(
        key="trident2",
        name="Broadcom Trident II (BCM56850)",
        ports=32,
        port_rate_bps=40 * 10**9,
        buffer=12 * MiB,
        mmus=1,
        sources={
            "ports": BCC_TABLE_I + "; DSH paper section III-A (32 x 40GbE)",
            "buffer": BCC_TABLE_I + "; DSH paper section III-A (12MB)",
        },
        notes=(
            "FBOSS's Trident2Asic.h reports 16 MiB of MMU memory; the papers' 12MB is used.",
            "MMU count not stated in BCC Table I; modelled as one shared buffer.",
        ),
        aliases=("tridentii", "trident-ii", "trident-2", "bcm56850"),
    ),
    Chip(
        key="tomahawk",
        name="Broadcom Tomahawk (BCM56960)",
        ports=32,
        port_rate_bps=100 * 10**9,
        buffer=16 * MiB,
        mmus=4,
        sources={
            "ports": BCC_TABLE_I + "; DSH section V-A",
            "buffer": BCC_TABLE_I + "; " + FBOSS.format("Tomahawk") + " (16 MiB)",
            "mmus": BCC_TH_MMU + "; " + FBOSS.format("Tomahawk") + " (4 memory buffers)",
        },
        aliases=("tomahawk1", "th", "th1", "bcm56960"),
    ),
    Chip(
        key="tofino",
        name="Barefoot Tofino",
        ports=64,
        port_rate_bps=100 * 10**9,
        buffer=22 * MiB,
        mmus=1,
        sources={"ports": BCC_TABLE_I, "buffer": BCC_TABLE_I},
        notes=(
            "BCC Table I's per-port figure (344KB) divides 22MB as 22,000KB; read here as MiB "
            "like the other chips.",
            "How Tofino partitions its buffer among pipes is not public; modelled as one pool.",
        ),
        aliases=("tofino1",),
    ),
    Chip(
        key="trident3",
        name="Broadcom Trident 3 (BCM56870, X7)",
        ports=32,
        port_rate_bps=100 * 10**9,
        buffer=32 * MiB,
        mmus=1,
        sources={
            "ports": "Broadcom Trident 3 information sheet (June 2017): BCM56870 X7, 3.2 Tbps, "
            "32 x 100G, as summarized at people.ucsc.edu/~warner/Bufs/trident3.html",
            "buffer": "Broadcom Trident 3 information sheet (June 2017): 'X7, X5 and X4 have 32 "
            "Mbyte packet buffer', unified (people.ucsc.edu/~warner/Bufs/trident3.html)",
            "mmus": "Broadcom: 'unified buffer, unlike the segmented buffer of the Tomahawk' "
            "(same page)",
        },
        notes=("Whether the data sheet's 32 MB means 10^6 or 2^20 bytes is not stated; MiB used.",),
        aliases=("td3", "trident-3", "bcm56870"),
    ),
    Chip(
        key="tomahawk3",
        name="Broadcom Tomahawk 3 (BCM56980)",
        ports=32,
        port_rate_bps=400 * 10**9,
        buffer=64 * MiB,
        mmus=2,
        sources={
            "ports": "Linley Group newsletter 'Broadcom Axes Ethernet-Switch Foes' (Dec 2017): "
            "BCM56980, 12.8 Tbps, up to 32 x 400GbE",
            "buffer": FBOSS.format("Tomahawk3") + ": 64 * 1024 * 1024",
            "mmus": FBOSS.format("Tomahawk3") + ": 2 memory buffers (ITMs); 'per ITM buffers "
            "limits the queue size'",
        },
        notes=("Broadcom's public product brief gives no buffer figure; FBOSS's value is used.",),
        aliases=("th3", "tomahawk-3", "bcm56980"),
    ),
    Chip(
        key="tomahawk4",
        name="Broadcom Tomahawk 4 (BCM56990)",
        ports=64,
        port_rate_bps=400 * 10**9,
        buffer=2 * 234606 * 254,
        mmus=2,
        sources={
            "ports": "Linley Group newsletter 'Tomahawk 4 Switch First to 25.6Tbps' (Dec 2019): "
            "BCM56990, up to 64 x 400GbE",
            "buffer": FBOSS.format("Tomahawk4") + ": 2 * 234606 cells * 254 B (~113.7 MiB)",
            "mmus": FBOSS.format("Tomahawk4") + ": 2 memory buffers (ITMs)",
        },
        notes=("Broadcom's public product brief gives no buffer figure; FBOSS's value is used.",),
        aliases=("th4", "tomahawk-4", "bcm56990"),
    ),
]

CHIPS: dict[str, Chip] = {chip.key: chip for chip in _CHIPS}


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in " _")


_LOOKUP: dict[str, Chip] = {}
for _chip in _CHIPS:
    for _alias in (_chip.key, *_chip.aliases):
        _LOOKUP[_norm(_alias)] = _chip
        _LOOKUP[_norm(_alias).replace("-", "")] = _chip


def chip_names() -> list[str]:
    return [chip.key for chip in _CHIPS]


def get_chip(name: str | Chip, param: str = "chip") -> Chip:
    """The preset named ``name`` (case, spaces, ``-`` and ``_`` do not matter)."""
    if isinstance(name, Chip):
        return name
    key = _norm(str(name))
    chip = _LOOKUP.get(key) or _LOOKUP.get(key.replace("-", ""))
    if chip is None:
        raise AdviseError(param, f"unknown chip {name!r}; accepted: {', '.join(chip_names())}")
    return chip
