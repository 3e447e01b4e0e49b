#!/usr/bin/env bash
# Does `sockbench run` (what `cargo run --release` runs) fit its budget of 120 s on
# this machine? Builds the release binary, then runs it ROUNDS times (default 1),
# each into a scratch result file, and prints the wall time of each run, the
# experiments each file holds, and the budget. Build time is not counted.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-1}
budget=120

cargo build --release --quiet
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch" # the throwaway cluster's account must reach its directory

for round in $(seq 1 "$rounds"); do
    json="$scratch/run-$round.json"
    start=$(date +%s.%N)
    TMPDIR=$scratch target/release/sockbench run --quiet --json "$json" >/dev/null
    end=$(date +%s.%N)
    experiments=$(grep -o '"experiment": "[a-z.]*"' "$json" | sort -u | wc -l)
    awk -v r="$round" -v s="$start" -v e="$end" -v n="$experiments" -v b="$budget" \
        'BEGIN { printf "round %d: %.1f s wall, %d experiments (budget %d s)\n", r, e - s, n, b }'
done
