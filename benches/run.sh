#!/usr/bin/env bash
# Runs the reference scenarios in release mode, one process each, and prints wall time,
# simulated events per second and peak memory (resident set high-water mark).
#   bash benches/run.sh [FILE.toml ...]     (default: every benches/*.toml)
#   bash benches/run.sh --ns3 [FILE.toml ...]
#       then also Shoal against ns-3 on the 2,000-flow star and dumbbell traces of
#       validation/compare_ns3.py (needs Debian's libns3-dev and `pip install .`; ~2 min):
#       both wall times, whole process and simulation only, and the speedups.
set -euo pipefail
cd "$(dirname "$0")/.."
ns3=0
if [ "${1:-}" = "--ns3" ]; then
  ns3=1
  shift
fi
cargo build --release --example bench -q
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(benches/*.toml)
for f in "${files[@]}"; do
  target/release/examples/bench "$f" | { [ "$f" = "${files[0]}" ] && cat || tail -n +2; }
done
if [ "$ns3" = 1 ]; then
  for topology in star dumbbell; do
    echo
    echo "== $topology, 2000 flows: Shoal vs ns-3"
    python3 validation/compare_ns3.py "$topology" --flows 2000 | grep -E '^(wall:|targets )'
  done
fi
