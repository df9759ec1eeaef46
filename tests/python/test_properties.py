"""Property tests: hostile scenarios, traces, CDF files and sweep files, through the
public API and the CLI, end in a run or a clear error, never in another exception.

Through the API, only the documented exceptions may escape (``ScenarioError``,
``SweepError``); through the CLI, the exit status is 0 or 2, stderr has an ``error:``
line and no traceback. Errors name a key path or the file at fault.

Example counts: the "ci" profile (default, about a minute in all) or
``SHOAL_HYPOTHESIS_PROFILE=thorough`` for a long run.
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import json
import math
import os
import re
import tomllib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import shoal
from conftest import TINY, run_cli

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    database=None,
    # The same examples on every run, so that a run of the tests passes or fails for
    # what changed; "thorough" explores (random examples, ten times as many).
    derandomize=True,
    # run_cli reads capsys after every example, and tmp_path is only a parent folder.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", settings.get_profile("ci"), max_examples=600, derandomize=False
)
PROFILE = os.environ.get("SHOAL_HYPOTHESIS_PROFILE", "ci")


def examples(weight: float = 1.0) -> settings:
    """The selected profile's settings, with ``weight`` times its example count."""
    base = settings.get_profile(PROFILE)
    return settings(base, max_examples=max(1, int(base.max_examples * weight)))


# --------------------------------------------------------------------------------------
# Documents

#: The tiny scenario every mutation starts from (4 hosts, 20 small flows).
BASE: dict[str, Any] = tomllib.loads(TINY)
#: The schema's tables and keys, with their defaults.
DEFAULTS: dict[str, Any] = tomllib.loads(shoal.default_scenario_toml())


def key_paths(value: Any, prefix: str = "") -> list[str]:
    """Every dotted key path in ``value``, tables included; list items share their
    list's path (``workload.extra.load`` for ``workload.extra[0].load``)."""
    if isinstance(value, list):
        return [p for item in value for p in key_paths(item, prefix)]
    if not isinstance(value, dict):
        return []
    paths = []
    for key, item in value.items():
        # Python's messages quote an empty key or one with a dot, as TOML does; the
        # core's do not: accept either spelling.
        spellings = {key, json.dumps(key)} if not key or any(c in key for c in '. "[]') else {key}
        for spelled in sorted(spellings):
            path = f"{prefix}{spelled}"
            paths += [path, *key_paths(item, f"{path}.")]
    return paths


OPTIONAL_KEYS = [
    "topology.uplink_delay",
    "topology.path",
    "topology.failed_links",
    "switch.marking.cutoff.k",
    "switch.marking.red.kmin",
    "switch.marking.red.kmax",
    "switch.marking.red.pmax",
    "switch.marking.shared_cutoff.k",
    "switch.marking.bcc.h",
    # Old spellings, still read as their new keys (input_checks.rs): hostile values for
    # them must end in a run or a named error too.
    "switch.ecn.k",
    "switch.ecn.kmin",
    "switch.ecn.kmax",
    "switch.shared_ecn.k",
    "workload.duration",
    "workload.senders",
    "workload.receivers",
    "workload.period",
    "workload.stop",
    "workload.trace",
    "workload.extra",
    "run.stop_time",
    "run.sample_interval",
]
SCHEMA_KEYS = sorted(set(key_paths(DEFAULTS)) | set(OPTIONAL_KEYS))

#: Keys whose valid values make a run long (more hosts, flows, packets, events or
#: simulated time). They get bounded values, or invalid ones: runs must take milliseconds.
#: Their extremes are the Rust suite's and tests/limits.rs' business.
SCALING_KEYS = {
    "topology",
    "topology.hosts",
    "topology.hosts_right",
    "topology.leaves",
    "topology.spines",
    "topology.hosts_per_leaf",
    "topology.k",
    "topology.link_rate",
    "topology.uplink_rate",
    "topology.link_delay",
    "topology.uplink_delay",
    "transport",
    "transport.mss",
    "transport.init_cwnd",
    "transport.rto_min",
    "transport.rto_init",
    "transport.rto_max",
    "transport.ack_size",
    "workload",
    "workload.pattern",
    "workload.cdf",
    "workload.load",
    "workload.flows",
    "workload.duration",
    "workload.size",
    "workload.repeats",
    "workload.period",
    "workload.rate",
    "workload.stop",
    "workload.start",
    "workload.extra",
    "run",
    "run.stop_time",
    "run.sample_interval",
}

HUGE_INTS = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**30, -(10**30)]
UNITS = ["ps", "ns", "us", "µs", "ms", "s", "bps", "Gbps", "Tbps", "B", "KB", "KiB", "GB", "PB", ""]


def quantities() -> st.SearchStrategy[str]:
    """Quantity-like text: numbers (huge, negative, non-finite) with real and bad units."""
    numbers = st.one_of(
        st.integers(-(10**25), 10**25).map(str),
        st.floats().map(repr),
        st.sampled_from(["1e400", "nan", "inf", "-0", "1_000", "0x10", ""]),
    )
    return st.builds(lambda n, u: f"{n}{u}", numbers, st.sampled_from(UNITS))


def scalars() -> st.SearchStrategy[Any]:
    """Hostile leaves: every JSON type, integers beyond 64 bits, NaN, TOML dates and
    times, unicode text, and Python objects that are no data at all."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from(HUGE_INTS),
        st.just(5000).map(lambda digits: 10**digits),  # more digits than int() converts
        st.floats(),
        st.text(max_size=12),
        quantities(),
        st.sampled_from(["star", "fat_tree", "incast", "udp", "trace", "dwrr", "0-3", "3-0"]),
        st.dates(),
        st.datetimes(),
        st.times(),
        st.sampled_from([b"bytes", {1, 2}, 1j, decimal.Decimal("1.5"), object()]),
    )


def values() -> st.SearchStrategy[Any]:
    """Any value: leaves, lists and tables of them (unicode keys), or deep nesting."""
    nested = st.recursive(
        scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3),  # no "": above
        ),
        max_leaves=8,
    )
    return st.one_of(nested, st.integers(1, 300).map(deep))


def deep(depth: int) -> Any:
    """A list nested ``depth`` levels deep, around a table."""
    value: Any = {"a": 1}
    for _ in range(depth):
        value = [value]
    return value


def bounded() -> st.SearchStrategy[Any]:
    """Values for scaling keys: small valid ones, or invalid ones of every type."""
    return st.one_of(
        st.integers(-3, 6),
        st.sampled_from(["10us", "1ms", "10Gbps", "1Gbps", "4KB", "0B", "0s", "-1us", "2.5"]),
        st.sampled_from(
            ["incast", "trace", "udp", "long_lived", "fb_hadoop", "nope.cdf", "/dev/zero"]
        ),
        st.sampled_from(HUGE_INTS),
        # No loads of 0.01 to 1e13: with a duration of a few ps they start up to as many
        # flows as the machine's memory holds, which takes minutes to simulate.
        st.floats(allow_nan=True).filter(lambda f: not 0.01 < abs(f) < 1e13),
        st.text(max_size=6),
        st.dates(),
        st.lists(st.integers(-1, 3), max_size=2),
        st.dictionaries(st.text(max_size=4), st.integers(0, 3), max_size=2),
    )


def value_for(path: str) -> st.SearchStrategy[Any]:
    """Values for the key ``path``: bounded ones for scaling keys, else anything."""
    if path == "run.sample_interval":
        # Intervals below 1 ns are refused; short legal ones make slow runs.
        return st.one_of(st.sampled_from(["10us", "1ms", 0, -1, "0s", "6ps", "x"]), st.dates())
    return bounded() if path in SCALING_KEYS else values()


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Sets ``path`` (dotted) in ``data``, replacing whatever is on the way by tables."""
    *tables, last = path.split(".")
    for key in tables:
        if not isinstance(data.get(key), dict):
            data[key] = {}
        data = data[key]
    data[last] = value


@st.composite
def scenario_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """The base scenario after 1 to 3 mutations: a key of the schema (or an unknown
    one) set to a hostile value, or removed."""
    data = json.loads(json.dumps(BASE))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.one_of(st.sampled_from(SCHEMA_KEYS), st.text(min_size=1, max_size=8)))
        if draw(st.integers(0, 9)) == 0:
            table = data.get(path.split(".")[0])
            if isinstance(table, dict):
                table.pop(path.split(".")[-1], None)
            continue
        value = draw(value_for(path))
        set_path(data, path, value)
    return data


def toml_key(key: str) -> str:
    """A TOML quoted key (also a basic string)."""
    return json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """``value`` as an inline TOML value; None and non-data become text TOML refuses."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # more digits than Python converts: TOML text has no limit
            return "9" * 5000
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, str):
        return toml_key(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
        )
    return repr(value)  # None, bytes, sets...: not TOML


def to_toml(data: dict[str, Any]) -> str:
    """TOML text: the root's plain values, then a ``[section]`` per root table."""
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"[{toml_key(k)}]")
            lines += [f"{toml_key(str(k2))} = {toml_value(v2)}" for k2, v2 in v.items()]
    return "\n".join(lines) + "\n"


def hostile_toml() -> st.SearchStrategy[str]:
    """TOML text: mutated scenarios, with a BOM, deep nesting, huge integers, dates,
    arrays of tables where tables belong, or anything at all."""
    mutated = scenario_dicts().map(to_toml)
    return st.one_of(
        mutated,
        mutated.map(lambda t: "\ufeff" + t),
        st.integers(1, 3000).map(lambda n: "[topology]\nhosts = " + "[" * n + "\n"),
        st.integers(1, 6000).map(lambda n: "[topology]\nhosts = 1" + "0" * n + "\n"),
        st.sampled_from(
            [
                "[[topology]]\nhosts = 4\n",
                "topology = [1, 2]\n",
                "[workload]\nstart = 1979-05-27T07:32:00Z\n",
                "[run]\nseed = 07:32:00\n",
                "[topology]\nhosts = 4\n[topology]\nhosts = 5\n",
                "[workload.extra]\nflows = 1\n",
                "\x00",
            ]
        ),
        st.text(max_size=40),
    )


# --------------------------------------------------------------------------------------
# Checks


def quiet(call: Callable[[], Any]) -> Any:
    """``call()`` with Shoal's warnings (legal but suspicious settings) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", shoal.ShoalWarning)
        return call()


def assert_names_a_key(message: str, keys: list[str]) -> None:
    """The message starts with one of ``keys`` (key paths, files, "sweep"...), as in
    ``workload.extra[0].load: ...``; list indices and the ``...`` of a path shortened
    for the message are ignored, and an extra workload has the workload's keys.
    Whitespace and control characters are ignored (keys may be "\\r"; the console
    rewraps lines and drops control characters)."""

    def normal(key: str) -> str:
        key = key.replace("workload.extra.", "workload.")
        return "".join(c for c in key if c.isprintable() and not c.isspace())

    if message.lstrip().startswith("unknown key ``"):
        return  # the empty key: its path is empty, and the message names it
    names = {normal(k) for k in [*keys, "top level"]}

    def names_a_key(head: str) -> bool:
        if head.endswith("..."):  # a long path cut short, maybe inside an index: "a[0][0..."
            head = re.sub(r"\[\d*$", "", head.removesuffix("..."))
        return normal(re.sub(r"\[\d+\]", "", head)) in names

    head = message.split(": ", 1)[0]
    if names_a_key(head):
        return
    # A key that TOML must quote may be quoted and escaped in the message, and cut short
    # inside the quotes: then the path up to it names a key (or it is the first key).
    assert '"' in head, f"the message does not start with a key or file: {message}"
    parent = head.split('"', 1)[0].removesuffix(".")
    assert not normal(parent) or names_a_key(parent), f"no key before the quoted one: {message}"


def input_keys(data: Any) -> list[str]:
    """The key paths of the input and of the schema (errors may name defaults)."""
    return SCHEMA_KEYS + key_paths(data)


def toml_keys(text: str) -> list[str]:
    """The key paths of TOML text; if it cannot be read, its quoted keys."""
    try:
        return key_paths(tomllib.loads(text.removeprefix("\ufeff")))  # as Shoal reads it
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        quoted = re.findall(r'^\[?("(?:[^"\\]|\\.)*")\]?', text, re.MULTILINE)
        return [json.loads(key) for key in quoted]


def assert_cli_outcome(code: int, err: str, names: list[str]) -> None:
    """Exit 0, or exit 2 with an ``error:`` line naming a key or file; no traceback."""
    assert "Traceback" not in err, err
    assert code in (0, 2), f"exit {code}: {err}"
    if code == 2:
        assert "error:" in err, err
        assert_names_a_key(err.split("error:", 1)[1].replace("\n", " "), names)


@pytest.fixture
def fresh_dir(tmp_path: Path) -> Callable[[], Path]:
    """A new empty folder under ``tmp_path`` for each example."""
    counter = itertools.count()
    return lambda: Path(tmp_path / f"case{next(counter)}").resolve()


# --------------------------------------------------------------------------------------
# Scenarios


@examples(2)
@given(data=scenario_dicts())
# A key that starts with a quote, with control and astral characters, under a known key:
# the message quotes and escapes it, and cuts it short.
@example(
    data={
        "topology": {"kind": "star", "hosts": 4},
        "workload": {"pattern": "all_to_all", "flows": 20},
        "rdma": {
            "window_scales_with_rate": {
                '"\x1f\x1f\U00010000\U00010000\U00010000': datetime.date(2000, 1, 1)
            }
        },
    }
)
# A key with a quote that the message does not quote.
@example(data={"topology": {"kind": "star", "hosts": 4}, "run": {"seed": 1}, '0"': None})
def test_scenario_mapping_runs_or_names_the_key(data: dict[str, Any]) -> None:
    """A mapping: simulated, or refused with a ScenarioError naming a key path."""
    try:
        result = quiet(lambda: shoal.run(data))
    except shoal.ScenarioError as exc:
        assert_names_a_key(str(exc), input_keys(data))
    else:
        assert len(result.flows) == result.summary["flows"]["total"]


@examples(2)
@given(text=hostile_toml())
@example(text="~0")  # a path of an unknown user's home: once a RuntimeError from pathlib
def test_scenario_toml_text_runs_or_names_the_key(text: str) -> None:
    """TOML text: simulated, or refused with a ScenarioError naming a key path or the
    whole document ("invalid TOML")."""
    try:
        quiet(lambda: shoal.run(text))
    except shoal.ScenarioError as exc:
        # Text without a newline, "=" or "[" is a file name: "scenario file not found".
        names = ["scenario", "scenario file not found"]
        assert_names_a_key(str(exc), SCHEMA_KEYS + toml_keys(text) + names)


@examples(1)
@given(text=hostile_toml())
# A top-level key that is one quote, holding an array of tables.
@example(text='"\\"" = [{"a" = 1}]\n[topology]\nkind = "star"\nhosts = 4\n')
def test_cli_run_exits_0_or_2(
    text: str, fresh_dir: Callable[[], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``shoal run`` on a hostile scenario file: a run directory, or ``error:`` and
    exit 2, never a traceback."""
    folder = fresh_dir()
    folder.mkdir()
    path = folder / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli(capsys, "run", path, "-o", folder / "out", "-q")
    assert_cli_outcome(code, err, SCHEMA_KEYS + toml_keys(text) + [str(path)])
    assert (folder / "out" / "summary.json").is_file() == (code == 0)


# --------------------------------------------------------------------------------------
# The lossless surface

FLOW_CONTROLS = ["pfc", "dsh", "bfc"]
RDMA_CCS = ["none", "dcqcn", "timely", "dctcp", "hpcc", "powertcp", "theta_powertcp"]


def lossless_base(flow_control: str, cc: str) -> dict[str, Any]:
    """The tiny scenario as RDMA in class 3 under ``flow_control`` and ``cc``, with every
    key of ``[switch.flow_control]``, ``[rdma]`` and ``[host]`` written out at its default
    (as Shoal resolves it), so that mutations reach each of them."""
    data = json.loads(json.dumps(BASE))
    data["switch"] = {"flow_control": {"kind": flow_control}}
    if flow_control == "bfc":  # its queues: ACKs, first packets, 32 physical, overflow
        data["switch"].update(queues=35, scheduler={"kind": "dwrr", "strict_queues": 2})
    data["rdma"] = {"cc": {"kind": cc}}
    data["workload"].update(transport="rdma", priority=3)
    data["run"]["stop_time"] = "1ms"
    resolved = json.loads(shoal._core.resolve(json.dumps(data))[0])
    data["switch"]["flow_control"] = resolved["switch"]["flow_control"]
    data["rdma"] = resolved["rdma"]
    data["host"] = resolved["host"]
    return data


LOSSLESS_BASES = [lossless_base(fc, cc) for fc in FLOW_CONTROLS for cc in RDMA_CCS]
LOSSLESS_KEYS = sorted(
    {
        path
        for base in LOSSLESS_BASES
        for path in key_paths(base)
        if path.split(".")[0] in ("rdma", "host") or path.startswith("switch.flow_control")
    }
    | {"topology.failed_links", "workload.priority", "rdma.ack_priority", "preset"}
)


def lossless_value(path: str) -> st.SearchStrategy[Any]:
    """Hostile values for the lossless keys: boundaries, tiny and huge quantities (1 ps
    timers, 1 bps rates, petabytes), non-finite numbers, lists, and anything at all."""
    return st.one_of(
        st.sampled_from(
            [0, 1, 5, 63, 64, 255, 65535, 65536, -1, 2**63, 1e30, 0.5, float("nan")]
            + ["1ps", "5", "1ns", "1bps", "0.5", "1PB", "1Mb", "0B", "1B", "1e30", "10000s"]
            + ["dsh_tomahawk", "pfc"]
            + [[], [64], [3, 3], [[0, 5]], [[0, 0]], [[0, 99]], {}, {"kind": "pfc"}]
        ),
        value_for(path),
    )


@st.composite
def lossless_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A lossless base after 1 to 3 mutations of its lossless keys (or unknown keys
    beside them), or removals."""
    data = json.loads(json.dumps(draw(st.sampled_from(LOSSLESS_BASES))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(LOSSLESS_KEYS))
        if draw(st.integers(0, 9)) == 0:
            path += "." + draw(st.sampled_from(["kind", "knd", "kidn", "bogus"]))
        if draw(st.integers(0, 9)) == 0:
            *tables, last = path.split(".")
            table: Any = data
            for key in tables:
                table = table.get(key) if isinstance(table, dict) else None
            if isinstance(table, dict):
                table.pop(last, None)
            continue
        set_path(data, path, draw(lossless_value(path)))
    return data


@examples(2)
@given(data=lossless_dicts())
def test_lossless_mapping_runs_or_names_the_key(data: dict[str, Any]) -> None:
    """A lossless scenario with hostile flow-control, RDMA or host keys: simulated, or
    refused with a ScenarioError naming a key path."""
    try:
        result = quiet(lambda: shoal.run(data))
    except shoal.ScenarioError as exc:
        assert_names_a_key(str(exc), input_keys(data) + LOSSLESS_KEYS)
    else:
        assert len(result.flows) == result.summary["flows"]["total"]
        assert not any("invariant" in w for w in result.summary["warnings"]), result.summary[
            "warnings"
        ]


@examples(1)
@given(data=lossless_dicts())
def test_cli_lossless_run_exits_0_or_2(
    data: dict[str, Any], fresh_dir: Callable[[], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``shoal run`` on the same: a run directory, or ``error:`` and exit 2."""
    folder = fresh_dir()
    folder.mkdir()
    path = folder / "scenario.toml"
    text = to_toml_deep(data)
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli(capsys, "run", path, "-o", folder / "out", "-q")
    assert_cli_outcome(code, err, SCHEMA_KEYS + LOSSLESS_KEYS + toml_keys(text) + [str(path)])


def to_toml_deep(data: dict[str, Any]) -> str:
    """TOML text with nested tables as ``[a.b]`` sections (``to_toml`` inlines them)."""
    lines: list[str] = []

    def section(table: dict[str, Any], prefix: str) -> None:
        if prefix:
            lines.append(f"[{prefix}]")
        lines.extend(
            f"{toml_key(str(k))} = {toml_value(v)}"
            for k, v in table.items()
            if not isinstance(v, dict)
        )
        for k, v in table.items():
            if isinstance(v, dict):
                section(v, f"{prefix}.{toml_key(str(k))}" if prefix else toml_key(str(k)))

    section(data, "")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Traces and CDF files

FIELDS = st.one_of(
    st.integers(0, 5).map(str),
    st.integers().map(str),
    st.sampled_from(["", " ", "-1", "1.5", "1e3", "1e400", "nan", "inf", "\ufeff1", "10" * 20]),
    st.floats().map(repr),
    st.text(max_size=5),
)
TRACE_HEADERS = st.sampled_from(
    [
        "id,src,dst,bytes,start_ns",
        "id,src,dst,bytes,start_ns,priority",
        "\ufeffid,src,dst,bytes,start_ns",
        "id,src,dst,bytes",
        "",
    ]
)
TRACES = st.one_of(
    st.builds(
        lambda header, rows: "\n".join([header, *(",".join(r) for r in rows)]) + "\n",
        TRACE_HEADERS,
        st.lists(st.lists(FIELDS, min_size=4, max_size=7), max_size=6),
    ),
    st.text(max_size=60),
)


@examples(2)
@given(text=TRACES)
def test_trace_files(text: str, fresh_dir: Callable[[], Path]) -> None:
    """A hostile trace: replayed, or refused naming ``workload.trace`` and the file."""
    folder = fresh_dir()
    folder.mkdir()
    path = folder / "flows.csv"
    path.write_text(text, encoding="utf-8")
    overrides = {"workload.pattern": "trace", "workload.trace": str(path)}
    try:
        flows = quiet(lambda: shoal.trace(TINY, set=overrides))
    except shoal.ScenarioError as exc:
        assert "workload.trace" in str(exc) and str(path) in str(exc), str(exc)
        return
    assert flows["src"].between(0, 3).all() and flows["dst"].between(0, 3).all()
    assert flows["bytes"].between(1, 10**15).all()


CDF_NUMBERS = st.one_of(
    st.integers(0, 150).map(str),
    st.floats(min_value=-1, max_value=1e15).map(repr),
    st.sampled_from(["100", "nan", "inf", "-0", "1e400", "1e16", "1e20", "x", ""]),
)
CDFS = st.one_of(
    st.lists(st.builds(lambda s, p: f"{s} {p}", CDF_NUMBERS, CDF_NUMBERS), max_size=6).map(
        lambda lines: "\n".join(sorted(lines)) + "\n"
    ),
    st.text(max_size=40).filter(lambda t: "e" not in t.lower()),
)


@examples(2)
@given(text=CDFS)
def test_cdf_files(text: str, fresh_dir: Callable[[], Path]) -> None:
    """A hostile CDF file: sampled within the size limit, or refused naming
    ``workload.cdf`` and the file."""
    folder = fresh_dir()
    folder.mkdir()
    path = folder / "sizes.cdf"
    path.write_text(text, encoding="utf-8")
    try:
        flows = quiet(lambda: shoal.trace(TINY, set={"workload.cdf": str(path)}))
    except shoal.ScenarioError as exc:
        # The file's own faults name it; legal but huge sizes make workload.load refuse.
        assert_names_a_key(str(exc), SCHEMA_KEYS)
        assert (str(path) in str(exc)) == str(exc).startswith("workload.cdf"), str(exc)
        return
    assert flows["bytes"].between(1, 10**15).all()


# --------------------------------------------------------------------------------------
# Sweeps

SWEEP_KEYS = [
    "workload.load",
    "workload.flows",
    "switch.marking.cutoff.k",
    "run.seed",
    "x.y",
    "topology",
]


@st.composite
def sweep_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A small sweep over the tiny scenario, with hostile tables, lists and values."""
    axis_values = st.one_of(st.lists(bounded(), max_size=3), bounded())
    tables = st.dictionaries(st.sampled_from(SWEEP_KEYS), axis_values, max_size=2)
    spec: dict[str, Any] = {"scenario": json.loads(json.dumps(BASE))}
    optional = {
        "name": st.one_of(st.text(max_size=8), values()),
        "base": st.one_of(st.text(max_size=8), values()),
        "set": st.one_of(
            st.dictionaries(st.sampled_from(SWEEP_KEYS), bounded(), max_size=2), values()
        ),
        "schemes": st.one_of(st.dictionaries(st.text(max_size=4), tables, max_size=2), values()),
        "axes": st.one_of(tables, values()),
        "zip": st.one_of(tables, values()),
        "labels": st.one_of(tables, values()),
        "seeds": st.one_of(
            st.integers(-2, 4),
            st.sampled_from([10**8, 2**63 - 1]),
            st.lists(st.integers(-2, 3), max_size=3),
            scalars(),
        ),
        "bogus": values(),
    }
    for key in draw(st.sets(st.sampled_from(sorted(optional)), max_size=4)):
        spec[key] = draw(optional[key])
    return spec


def sweep_name(spec: dict[str, Any]) -> str:
    """The name a sweep's errors start with, when it has a text name."""
    name = spec.get("name")
    return name if isinstance(name, str) else "sweep"


@examples(2)
@given(spec=sweep_dicts())
def test_sweep_mappings_load_or_name_the_key(
    spec: dict[str, Any], fresh_dir: Callable[[], Path]
) -> None:
    """A hostile sweep: loaded and expanded, or refused with a SweepError or
    ScenarioError that names the sweep's key or the scenario's."""
    from shoal._sweep import dry_run

    try:
        loaded = shoal.load_sweep(spec, store=fresh_dir())
        table = quiet(lambda: dry_run(loaded))
    except (shoal.SweepError, shoal.ScenarioError) as exc:
        # A run's error starts with the sweep's name: "<name>: run 1 (...): <key>: ...".
        assert_names_a_key(str(exc), input_keys(spec) + ["sweep", "base", sweep_name(spec)])
    else:
        assert len(table) >= 1


@examples(1)
@given(spec=sweep_dicts())
def test_cli_sweep_dry_run_exits_0_or_2(
    spec: dict[str, Any], fresh_dir: Callable[[], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``shoal sweep --dry-run`` on a hostile sweep file: exit 0 or 2, no traceback."""
    folder = fresh_dir()
    folder.mkdir()
    path = folder / "sweep.toml"
    path.write_text(to_toml(spec), encoding="utf-8")
    code, _, err = run_cli(capsys, "sweep", path, "--dry-run", "--store", folder / "store", "-q")
    names = [str(path), "sweep", "base", "scenario", sweep_name(spec)]
    assert_cli_outcome(code, err, input_keys(spec) + names)
