#!/usr/bin/env python3
"""Time ns3-datacenter in its fastest configurations against Shoal, on the same flows.

    python validation/time_n3dc.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        [--load 0.8] [--arrivals 1.0] [--seed 7] [--shoal-runs 3] [--out DIR] [--reuse]

The reference's own web-search experiment is its ``powertcp-evaluation-workload``
program (``script-workload.sh``): 64 Poisson sources (hosts 0-63, seed 7) on its
128-host topology (``topology.txt``), DCQCN over PFC, flows drawn inside the program.
This driver times, one process after the other on the same machine:

1. **the workload program** as it is, with the script's flags (DCQCN: ``--algorithm=1
   --windowCheck=0``), its packet trace off (``ENABLE_TRACE 0``) and the 128-host
   topology: the reference's speed on its own experiment;
2. **the burst program with its report off** on the same flows: the program the
   cross-validations run (``compare_n3dc_workload.py``), less the throughput report it
   prints every 1.5 round trips, which costs it about 4x per packet;
3. **Shoal** (``shoal run validation/n3dc_workload.toml``) on the same flows, from a
   trace, ``--shoal-runs`` times (the median is reported).

The flows come from a copy of the workload program that also prints each flow's size,
start and ports (``powertcp-evaluation-workload-flows``; it draws exactly what the
program draws) and stops before simulating. The driver writes that copy and the burst
program's quiet copy next to the originals (a string substitution in each; ``--build``
builds them with the tree's own CMake) so that the repository holds none of the
reference's code.

Both reference programs simulate until 0.1 s after the last arrival (``--tail``);
Shoal runs until the last flow is acknowledged. What differs between the reference's
two programs is the buffer: the workload program gives each switch 4 MiB less the
headroom of every port, the burst program 4 MiB with the headroom on top (as
``n3dc_workload.toml`` does); see validation/README.md.

Reported: wall time, CPU time (user + system of the process: other jobs on a shared
machine stretch wall time, hardly CPU time), peak resident memory, and Shoal's speed-up
on CPU time against each reference program. Written to ``timing.json`` in the output
directory (default ``validation/results/n3dc_timing_load<load>_seed<seed>``); each
process's measurement is kept in ``<name>.json`` there, and ``--reuse`` keeps those of a
run on the same inputs (the reference programs take 10-20 minutes each). Exit 0 on
success, 1 when a program is missing or fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from compare_n3dc import START_OFFSET_S, n3dc_files, write_n3dc_config
from compare_n3dc_workload import N3DC_CDF, N3DC_FLAGS, SCENARIO, n3dc_inputs
from compare_ns3 import UserError, run_guarded, sets, shoal_cmd

HERE = Path(__file__).resolve().parent
PROGRAMS = "examples/PowerTCP"
BUILT = "build/examples/PowerTCP/ns3.39-{}-optimized"
WORKLOAD = "powertcp-evaluation-workload"
FLOWS = "powertcp-evaluation-workload-flows"
QUIET = "powertcp-evaluation-burst-quiet"
TOPOLOGY = HERE / "n3dc" / "topology.txt"

# The copies' one change each, as (original, replacement) in the original's source.
FLOWS_PRINT = (
    '" leafCount " << LEAF_COUNT <<  std::endl;\n'
    "//\t\tappCon.Start(Seconds(flow_input.start_time));",
    '" leafCount " << LEAF_COUNT << " size " << flowSize << " startns "'
    " << Seconds(startTime).GetNanoSeconds() << std::endl;",
)
QUIET_REPORT = (
    "\tSimulator::Schedule(Seconds(delay), PrintResults, switchDown, 1, delay);",
    "\t// (report off) Simulator::Schedule(Seconds(delay), PrintResults, switchDown, 1, delay);",
)
CMAKE_ENTRY = """
build_example(
  NAME {name}
  SOURCE_FILES
    {name}.cc
    cdf.c
  HEADER_FILES
    cdf.h
  LIBRARIES_TO_LINK
    ${{libpoint-to-point}}
    ${{libtraffic-control}}
    ${{libinternet}}
    ${{libapplications}}
)
"""


def write_if_changed(path: Path, text: str) -> bool:
    """Writes ``text`` to ``path`` unless it holds it already; returns whether it wrote."""
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def write_program(n3dc: Path, name: str, text: str) -> bool:
    """Writes program ``name``'s source next to the reference's programs, and its CMake
    entry; returns whether anything changed."""
    changed = write_if_changed(n3dc / PROGRAMS / f"{name}.cc", text)
    cmake = n3dc / PROGRAMS / "CMakeLists.txt"
    if f"NAME {name}\n" not in cmake.read_text():
        cmake.write_text(cmake.read_text() + CMAKE_ENTRY.format(name=name))
        changed = True
    return changed


def write_copy(n3dc: Path, original: str, name: str, change: tuple[str, str]) -> bool:
    """Writes program ``name``, ``original`` with one substitution, and its CMake entry;
    returns whether anything changed."""
    src = (n3dc / PROGRAMS / f"{original}.cc").read_text()
    if src.count(change[0]) != 1:
        raise UserError(f"{original}.cc is not ns3-datacenter 6ddb4a4's: cannot derive {name}", 1)
    return write_program(n3dc, name, src.replace(change[0], change[1]))


def build_targets(n3dc: Path, targets: list[str]) -> None:
    """Builds ``targets`` with the reference tree's own CMake; a failure is an error with
    the build's output."""
    print("building the reference's programs (minutes) ...", flush=True)
    cmd = ["cmake", "--build", str(n3dc / "cmake-cache"), "--target", *targets]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise UserError(
            f"building failed: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}", 1
        )


def prepare_programs(n3dc: Path, build: bool) -> None:
    changed = write_copy(n3dc, WORKLOAD, FLOWS, FLOWS_PRINT)
    changed |= write_copy(n3dc, "powertcp-evaluation-burst", QUIET, QUIET_REPORT)
    missing = [p for p in (WORKLOAD, FLOWS, QUIET) if not (n3dc / BUILT.format(p)).is_file()]
    if not (changed or missing):
        return
    if not build:
        raise UserError(
            f"build {', '.join(missing) or 'the changed programs'} first: rerun with --build "
            f"(cmake --build {n3dc / 'cmake-cache'} --target ...; the tree must be configured "
            "with the optimized profile, validation/README.md says how)",
            1,
        )
    build_targets(n3dc, [WORKLOAD, FLOWS, QUIET])


def peak_rss_kib(pid: int) -> int | None:
    """The resident-memory high-water mark of process ``pid`` (``VmHWM``), if readable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def measure(cmd: list[str], stdout: Path) -> dict:
    """Runs ``cmd`` to the end, its output into ``stdout``; its wall and CPU time and peak
    resident memory.

    The peak is read from the process while it runs: the ``ru_maxrss`` that ``wait4``
    reports starts from this driver's own memory (the fork it was started from)."""
    t0 = time.perf_counter()
    peak = 0
    with stdout.open("w") as out:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        except OSError as e:
            raise UserError(f"cannot run {cmd[0]}: {e.strerror or e}", 1) from None
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                peak = max(peak, peak_rss_kib(proc.pid) or 0)
                time.sleep(0.05)
        except BaseException:  # Ctrl-C: the reference would run on for minutes
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    code = proc.returncode
    if code != 0:
        tail = stdout.read_text()[-3000:]
        raise UserError(f"{' '.join(cmd)} failed (exit {code}):\n{tail}", 1)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mib": (peak or usage.ru_maxrss) / 1024,
    }


def workload_conf(n3dc: Path, out: Path) -> Path:
    """The configuration the workload script gives its program (``config-burst.txt``),
    on the 128-host topology, outputs in ``out`` and its packet trace off."""
    files = {
        key: out / f"workload_{path.name}"
        for key, path in n3dc_files(out).items()
        if isinstance(path, Path)
    }
    conf = write_n3dc_config(n3dc, out, {"TOPOLOGY_FILE": TOPOLOGY, **n3dc_files(out), **files})
    return conf.rename(out / "n3dc_workload_config.txt")


def workload_cmd(n3dc: Path, program: str, conf: Path, args, end_s: float) -> list[str]:
    return [
        str(n3dc / BUILT.format(program)),
        f"--conf={conf}",
        *N3DC_FLAGS["dcqcn"],
        f"--randomSeed={args.seed}",
        f"--load={args.load}",
        f"--START_TIME={START_OFFSET_S}",
        f"--FLOW_LAUNCH_END_TIME={START_OFFSET_S + args.arrivals}",
        f"--END_TIME={end_s}",
        "--queryRequestRate=0",
        "--request=0",
        f"--cdfFileName={n3dc / N3DC_CDF}",
    ]


def list_flows(n3dc: Path, conf: Path, out: Path, args):
    """The flows the workload program draws, as a Shoal trace (``trace.csv``)."""
    import pandas as pd

    log = out / "flows_stdout.txt"
    measure(workload_cmd(n3dc, FLOWS, conf, args, START_OFFSET_S), log)
    rows = []
    for line in log.read_text().splitlines():
        parts = line.split()
        if parts[:1] == ["from"] and "size" in parts:
            f = dict(zip(parts[0::2], parts[1::2], strict=False))
            start_ns = int(f["startns"]) - round(START_OFFSET_S * 1e9)
            rows.append((int(f["from"]), int(f["to"]), int(f["size"]), start_ns))
    if not rows:
        raise UserError(f"{FLOWS} listed no flows (see {log})", 1)
    trace = pd.DataFrame(rows, columns=["src", "dst", "bytes", "start_ns"])
    trace = trace.sort_values("start_ns", kind="stable").reset_index(drop=True)
    trace.insert(0, "id", range(len(trace)))
    trace["priority"] = 3
    trace.to_csv(out / "trace.csv", index=False)
    return trace


def timed(out: Path, name: str, inputs: str, reuse: bool, run) -> dict:
    """``run()``'s measurement, or the one kept in ``out/<name>.json`` for the same
    ``inputs`` with ``reuse``."""
    record = out / f"{name}.json"
    if reuse and record.is_file():
        saved = json.loads(record.read_text())
        if saved.get("inputs") == inputs:
            print(f"{name}: reusing {record.name}", flush=True)
            return saved
    print(f"{name} ...", flush=True)
    result = {"inputs": inputs, **run()}
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(record)
    print(
        f"  {result['wall_s']:.1f} s wall, {result['cpu_s']:.1f} s CPU, "
        f"{result['peak_mib']:.0f} MiB",
        flush=True,
    )
    return result


def compare(args) -> int:
    n3dc = Path(args.n3dc).resolve()
    if not (n3dc / N3DC_CDF).is_file():
        raise UserError(f"{n3dc / N3DC_CDF} is missing: --n3dc is not ns3-datacenter's ns-3.39", 1)
    prepare_programs(n3dc, args.build)
    out = Path(
        args.out or HERE / "results" / f"n3dc_timing_load{args.load}_seed{args.seed}"
    ).resolve()
    out.mkdir(parents=True, exist_ok=True)
    conf = workload_conf(n3dc, out)
    print(
        f"listing the workload program's flows (load {args.load}, seed {args.seed}) ...", flush=True
    )
    trace = list_flows(n3dc, conf, out, args)
    last_start_s = START_OFFSET_S + trace.start_ns.max() / 1e9
    end_s = round(last_start_s + args.tail, 3)
    # What the reference programs' times depend on: the flows, the program and its flags.
    flags = workload_cmd(n3dc, WORKLOAD, Path("conf"), args, end_s)[2:]
    digest = hashlib.sha256((out / "trace.csv").read_bytes() + " ".join(flags).encode()).hexdigest()
    print(
        f"{len(trace)} flows, {trace.bytes.sum() / 1e9:.1f} GB, arrivals until "
        f"{last_start_s:.3f} s, references stop at {end_s} s",
        flush=True,
    )

    results = {}
    results["workload"] = timed(
        out,
        "workload",
        digest,
        args.reuse,
        lambda: measure(
            workload_cmd(n3dc, WORKLOAD, conf, args, end_s), out / "workload_stdout.txt"
        ),
    )
    # The burst program's configuration and flow file (the trace's flows, in its format).
    scenario = tomllib.loads(SCENARIO.read_text())
    burst_conf = n3dc_inputs(out, n3dc, TOPOLOGY, trace, scenario, end_s - last_start_s)
    results["burst_quiet"] = timed(
        out,
        "burst_quiet",
        digest,
        args.reuse,
        lambda: measure(
            [str(n3dc / BUILT.format(QUIET)), f"--conf={burst_conf}", *N3DC_FLAGS["dcqcn"]],
            out / "burst_quiet_stdout.txt",
        ),
    )
    shoal = shoal_cmd()
    pairs = {"workload.pattern": "trace", "workload.trace": out / "trace.csv"}
    runs = []
    for k in range(1, args.shoal_runs + 1):
        runs.append(
            timed(
                out,
                f"shoal_run{k}",
                digest,
                False,
                lambda: measure(
                    shoal + ["run", str(SCENARIO), "--out", str(out / "shoal"), "-q"] + sets(pairs),
                    out / "shoal_stdout.txt",
                ),
            )
        )
    summary = json.loads((out / "shoal" / "summary.json").read_text())
    results["shoal"] = {
        key: statistics.median(r[key] for r in runs) for key in ("wall_s", "cpu_s", "peak_mib")
    }
    results["shoal"]["runs"] = runs
    results["shoal"]["events"] = summary.get("events")
    report = {
        "flows": len(trace),
        "bytes": int(trace.bytes.sum()),
        "load": args.load,
        "seed": args.seed,
        "arrivals_s": args.arrivals,
        "reference_end_s": end_s,
        **results,
        "speedup_cpu": {
            name: results[name]["cpu_s"] / results["shoal"]["cpu_s"]
            for name in ("workload", "burst_quiet")
        },
        "speedup_wall": {
            name: results[name]["wall_s"] / results["shoal"]["wall_s"]
            for name in ("workload", "burst_quiet")
        },
    }
    tmp = out / "timing.json.tmp"
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(out / "timing.json")
    print()
    print(f"{'':<34}{'wall (s)':>10}{'CPU (s)':>10}{'peak MiB':>10}{'CPU / Shoal':>13}")
    for name, label in (
        ("workload", "ns3-datacenter workload program"),
        ("burst_quiet", "ns3-datacenter burst, report off"),
        ("shoal", f"Shoal (median of {args.shoal_runs})"),
    ):
        r = results[name]
        ratio = r["cpu_s"] / results["shoal"]["cpu_s"]
        print(
            f"{label:<34}{r['wall_s']:>10.1f}{r['cpu_s']:>10.1f}{r['peak_mib']:>10.0f}{ratio:>12.1f}x"
        )
    print(f"\nwritten: {out / 'timing.json'}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--n3dc", required=True, help="ns3-datacenter's simulator/ns-3.39, built (optimized)"
    )
    p.add_argument("--build", action="store_true", help="build the reference's programs if needed")
    p.add_argument(
        "--load", type=float, default=0.8, help="the workload program's --load (default 0.8)"
    )
    p.add_argument(
        "--arrivals",
        type=float,
        default=1.0,
        help="seconds of arrivals (FLOW_LAUNCH_END_TIME - START_TIME; default 1.0: 23,433 "
        "flows, 40.2 GB at load 0.8)",
    )
    p.add_argument(
        "--tail",
        type=float,
        default=0.1,
        help="seconds the references simulate after the last arrival (default 0.1)",
    )
    p.add_argument(
        "--seed", type=int, default=7, help="the workload program's --randomSeed (default 7)"
    )
    p.add_argument(
        "--shoal-runs", type=int, default=3, help="Shoal runs, median reported (default 3)"
    )
    p.add_argument("--out", help="output directory")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="reuse the reference programs' measurements of an earlier call on the same inputs",
    )
    args = p.parse_args(argv)
    for name in ("load", "arrivals", "tail"):
        if getattr(args, name) <= 0:
            p.error(f"--{name} must be positive, got {getattr(args, name)}")
    if args.shoal_runs < 1:
        p.error(f"--shoal-runs must be at least 1, got {args.shoal_runs}")
    return run_guarded(compare, args)


if __name__ == "__main__":
    sys.exit(main())
