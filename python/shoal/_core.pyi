"""Type stubs of the compiled Rust core (crates/shoal-py)."""

from typing import Any

import numpy.typing as npt

__version__: str

class ScenarioError(ValueError):
    """An invalid scenario; the message names the key path, the value and the accepted range."""

def default_scenario_toml() -> str:
    """Every scenario key with its default value, as commented TOML."""

def presets_toml() -> str:
    """The named presets (``preset = "<name>"``) as TOML: each a description and keys."""

def flow_size_cdf(cdf: str) -> list[tuple[float, float]]:
    """The points (bytes, cumulative percent) of a built-in or file flow-size CDF, read and
    checked as a run reads ``workload.cdf``; ScenarioError when it cannot be."""

def resolve(scenario_json: str, as_written: bool = False) -> tuple[str, list[str]]:
    """Validate a scenario; return the resolved scenario JSON (defaults filled) and warnings
    (with ``as_written``, also those about the scenario as written: keys without effect,
    likely unit mistakes)."""

def parse_bytes(text: str) -> int:
    """Bytes of a size as a scenario writes it (``"720KB"``, ``"1MiB"``, ``"1500"``)."""

def parse_time_ps(text: str) -> int:
    """Picoseconds of a time as a scenario writes it (``"2us"``, ``"1.5ms"``)."""

def parse_rate_bps(text: str) -> int:
    """Bits per second of a rate as a scenario writes it (``"100Gbps"``, ``"2.5 Gb/s"``)."""

def split_quantity(kind: str, text: str) -> tuple[str, int | None]:
    """A quantity's number as written and its unit's factor in bps, ps or B (None without
    a unit); ``kind`` is ``"rate"``, ``"time"`` or ``"size"``. No range check."""

def generate_trace(scenario_json: str) -> dict[str, npt.NDArray[Any]]:
    """The flows the workload generates, as the columns of :func:`trace_columns`."""

def trace_columns() -> list[str]:
    """The columns of a trace, in order: id, src, dst, bytes, start_ns, priority."""

def table_schemas() -> list[tuple[str, list[tuple[str, str]]]]:
    """The tables a run writes (``<name>.parquet``), each with its columns in order as
    (name, type); types are u8 u32 u64 i64 f64 bool str."""

def summary_schema() -> str:
    """The JSON Schema of ``summary.json`` (as JSON text), generated from the structs
    that write it."""

def run_threads(scenario_json: str) -> int:
    """The threads the scenario asks one run to use (``run.threads``; ``"auto"``: the
    cores available)."""

def memory_estimate(scenario_json: str) -> list[tuple[str, str, int]]:
    """The memory a run of the scenario needs, by part: ``(what, key, bytes)``."""

def network_facts(scenario_json: str) -> dict[str, Any]:
    """The network a scenario builds, as the core builds it (a topology file and
    ``topology.failed_links`` included). The scenario is validated and resolved first, as
    by :func:`resolve`; ScenarioError names the key when it is invalid.

    Returns:
        A dict with ``hosts`` (the host count); ``switches``, each switch's ports in port
        order (a pool is ``switch.ports_per_pool`` consecutive ports; a failed link is no
        port), each port a dict of its far end (``"host": i`` or ``"switch": i``, an
        index among the hosts or the switches), ``"rate_bps"``, ``"delay_ps"`` (one way)
        and ``"congestible"``, true when it leads to a switch or to a receiver;
        ``receivers``, the sorted hosts some workload's flows can go to (every
        host for a trace); ``host_rate_bps``, the fastest host link; ``longest_path``,
        the links ``{"rate_bps", "delay_ps"}`` of the longest host-to-host route; and
        ``base_round_trip_ps``, that route's round trip for one TCP segment
        (``transport.mss + transport.header``) and its ACK, the RTT of the derived ECN
        cut-off.
    """

def available_memory() -> int | None:
    """Bytes of memory the system can still give a run: the least of Linux's
    MemAvailable, the address-space limit less what the process maps, and its cgroups'
    memory limits less their usage (or ``SHOAL_MEMORY_LIMIT``); ``None`` where none can
    be read."""

def check_output_dir(out: str) -> None:
    """Raise ``OSError`` unless ``out`` may become a run directory: missing, empty, or a
    run directory Shoal wrote."""

class Simulation:
    """A built network and workload, advanced with :meth:`run`."""

    now_ps: int
    end_ps: int | None
    flows_total: int
    flows_finished: int
    events: int
    done: bool
    reached_time_limit: bool

    def __init__(self, scenario_json: str, threads: int = 1) -> None: ...
    def run(self, until_ps: int, max_events: int = ...) -> bool:
        """Advance to simulated time ``until_ps``, or by ``max_events`` events if that
        comes first (GIL released); True when the run is over."""
    def flows(self) -> dict[str, Any]:
        """The flow table as NumPy columns (``kind``: a list of str)."""
    def counters(self) -> dict[str, Any]: ...
    def tables(self) -> dict[str, dict[str, Any]]:
        """Every table the run has made so far, by name (as :func:`table_schemas`), as
        NumPy columns in order (text columns as lists of str)."""
    def summary(self, warnings: list[str], wall_time_s: float | None = None) -> str:
        """The summary as JSON text; ``warnings``: the scenario's (the run's are added)."""
    def write_run_dir(self, out: str, warnings: list[str], wall_time_s: float | None = None) -> str:
        """Write the run directory ``out`` atomically; return the summary as JSON text."""
    def check_invariants(self) -> list[str]: ...
