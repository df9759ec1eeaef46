"""Type stubs of the compiled Rust core (crates/shoal-py)."""

from typing import Any

import numpy.typing as npt

__version__: str

class ScenarioError(ValueError):
    """An invalid scenario; the message names the key path, the value and the accepted range."""

def default_scenario_toml() -> str:
    """Every scenario key with its default value, as commented TOML."""

def resolve(scenario_json: str) -> tuple[str, list[str]]:
    """Validate a scenario; return the resolved scenario JSON (defaults filled) and warnings."""

def parse_bytes(text: str) -> int: ...
def parse_time_ps(text: str) -> int: ...
def parse_rate_bps(text: str) -> int: ...
def generate_trace(scenario_json: str) -> dict[str, npt.NDArray[Any]]:
    """The flows the workload generates: columns id, src, dst, bytes, start_ns, priority."""

class Simulation:
    """A built network and workload, advanced with :meth:`run`."""

    now_ps: int
    end_ps: int | None
    flows_total: int
    flows_finished: int
    events: int
    done: bool

    def __init__(self, scenario_json: str) -> None: ...
    def run(self, until_ps: int) -> bool:
        """Advance to simulated time ``until_ps`` (GIL released); True when the run is over."""
    def flows(self) -> dict[str, npt.NDArray[Any]]: ...
    def counters(self) -> dict[str, Any]: ...
    def samples(self) -> dict[str, npt.NDArray[Any]] | None: ...
    def check_invariants(self) -> list[str]: ...
