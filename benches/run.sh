#!/usr/bin/env bash
# Runs the reference scenarios in release mode, one process each, and prints wall time,
# simulated events per second and peak memory (resident set high-water mark).
#   bash benches/run.sh [FILE.toml ...]     (default: every benches/*.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example bench -q
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(benches/*.toml)
for f in "${files[@]}"; do
  target/release/examples/bench "$f" | { [ "$f" = "${files[0]}" ] && cat || tail -n +2; }
done
