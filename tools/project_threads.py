"""Project the speedup of a run on more cores than this machine has.

Runs the scenario on one thread, then once per thread count N with its partitions taking
turns on one thread (SHOAL_WINDOW_PROFILE=serial), which times each window's work in
each partition alone; the rounds alternate, since a shared machine's speed drifts. From
a profile, the time on N cores is

    T_N = critical path + time between windows + windows x 2 barriers x BARRIER_S

where the critical path sums, over the windows, the time the window would take on N
threads (each runs its home partition, then takes the others as it comes free). The
speedup is the one-thread time over T_N. See docs/parallel.md.

    python tools/project_threads.py benches/fat_tree_dctcp.toml --threads 8 16 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# A barrier where every thread has a core: a cache line passed around, about a
# microsecond (docs/parallel.md).
BARRIER_S = 1e-6

PROFILE = re.compile(
    r"WindowProfile \{ windows: (\d+), threads: (\d+), work_ns: \[([\d, ]*)\], "
    r"critical_ns: (\d+), between_ns: (\d+) \}"
)


def run(scenario: str, threads: int, sets: list[str], serial: bool) -> tuple[float, str]:
    """One run; returns its simulation wall time (from its summary) and its stderr."""
    env = dict(os.environ, SHOAL_WINDOW_PROFILE="serial") if serial else dict(os.environ)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "shoal", "run", scenario, "-o", out, "-j", str(threads), "-q"]
        for s in sets:
            cmd += ["-s", s]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
        wall = json.loads((Path(out) / "summary.json").read_text())["wall_time_s"]
    return float(wall), done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenario")
    parser.add_argument("--threads", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--set", "-s", action="append", default=[], help="KEY=VALUE, as shoal run's"
    )
    args = parser.parse_args()
    sequential: list[float] = []
    projected: dict[int, list[float]] = {n: [] for n in args.threads}
    for r in range(args.rounds):
        seq, _ = run(args.scenario, 1, args.set, serial=False)
        sequential.append(seq)
        print(f"round {r + 1}: 1 thread {seq:.2f} s", flush=True)
        for n in args.threads:
            _, stderr = run(args.scenario, n, args.set, serial=True)
            found = PROFILE.search(stderr)
            if found is None:
                sys.exit(f"{n} threads: no window profile (is the network cut at all?)\n{stderr}")
            windows, used, work, critical, between = found.groups()
            work_s = [int(w) / 1e9 for w in work.split(",")]
            t_n = int(critical) / 1e9 + int(between) / 1e9 + int(windows) * 2 * BARRIER_S
            projected[n].append(seq / t_n)
            print(
                f"  {n} threads ({used} used, {len(work_s)} partitions): {windows} windows, "
                f"work {sum(work_s):.2f} s, critical path {int(critical) / 1e9:.3f} s, "
                f"between {int(between) / 1e9:.3f} s -> T = {t_n:.3f} s, {seq / t_n:.1f}x",
                flush=True,
            )
    print(f"1 thread: median {statistics.median(sequential):.2f} s")
    for n, speedups in projected.items():
        print(
            f"{n} threads: projected speedup median {statistics.median(speedups):.1f}x "
            f"(min {min(speedups):.1f}x, max {max(speedups):.1f}x; {0.7 * n:.1f}x is 0.7 N)"
        )


if __name__ == "__main__":
    main()
