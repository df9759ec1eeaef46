#!/usr/bin/env bash
# Runs the reference scenarios in release mode, one process each, and prints wall time,
# CPU time (of the setup and the run; the machine may be shared), simulated events per
# second and peak memory (resident set high-water mark).
#   bash benches/run.sh [FILE.toml ...]     (default: every benches/*.toml; the paper-scale
#                                            runs of benches/scale/ are named explicitly)
#   bash benches/run.sh --base REV [--repeat N] [FILE.toml ...]
#       builds the same benchmark at commit REV (in a worktree under /tmp) and runs the two
#       builds interleaved, N times each (default 3): base, new, base, new, ... so that a
#       noisy machine affects both alike. Compare CPU times and events/s pairwise.
#   bash benches/run.sh --ns3 [FILE.toml ...]
#       then also Shoal against ns-3 on the 2,000-flow star and dumbbell traces of
#       validation/compare_ns3.py (needs Debian's libns3-dev and `pip install .`; ~2 min):
#       both wall times, whole process and simulation only, and the speedups.
set -euo pipefail
cd "$(dirname "$0")/.."
ns3=0
base=""
repeat=1
while [ $# -gt 0 ]; do
  case "$1" in
    --ns3) ns3=1; shift ;;
    --base) base="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    *) break ;;
  esac
done
cargo build --release --example bench -q
new=target/release/examples/bench
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(benches/*.toml)
if [ -n "$base" ]; then
  [ "$repeat" = 1 ] && repeat=3
  rev=$(git rev-parse --short "$base")
  tree=/tmp/shoal-bench-base-$rev
  [ -d "$tree" ] || git worktree add --detach "$tree" "$rev" >/dev/null
  CARGO_TARGET_DIR=/tmp/shoal-bench-base-target cargo build --release --example bench -q --manifest-path "$tree/Cargo.toml"
  cp /tmp/shoal-bench-base-target/release/examples/bench "/tmp/shoal-bench-$rev"
fi
header=1
for f in "${files[@]}"; do
  for i in $(seq "$repeat"); do
    runs=("new:$new")
    [ -n "$base" ] && runs=("$rev:/tmp/shoal-bench-$rev" "${runs[@]}")
    for run in "${runs[@]}"; do
      label=${run%%:*}
      out=$("${run#*:}" "$f")
      if [ "$header" = 1 ]; then
        echo "build    $(head -n 1 <<<"$out")"
        header=0
      fi
      printf '%-8s %s\n' "$label" "$(tail -n 1 <<<"$out")"
    done
  done
done
if [ "$ns3" = 1 ]; then
  for topology in star dumbbell; do
    echo
    echo "== $topology, 2000 flows: Shoal vs ns-3"
    python3 validation/compare_ns3.py "$topology" --flows 2000 | grep -E '^(wall:|targets )'
  done
fi
