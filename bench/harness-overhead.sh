#!/usr/bin/env bash
# How much do sockbench's own timed loops cost? Runs a minimal C client (bench/ref/ref.c)
# and sockbench against the same `sockbench serve`, alternately, on unix and tcp, for
# 3 rounds, and prints sockbench ÷ reference for pingpong p50 (target ≤ 1.05) and for
# connect rate (target ≥ 0.95).
#
# Server and clients are pinned to one CPU (PIN_CPU, default 0). Unpinned, the
# scheduler sometimes puts client and server on one CPU (a ~6 µs round trip here) and
# sometimes on two (~75 µs on these VMs, where waking an idle CPU is slow), which
# would swamp the few nanoseconds this script looks for. On one CPU the harness's
# share of each operation is as large as it can get: the strictest comparison.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
pin="taskset -c ${PIN_CPU:-0}"
size=64
connect_ms=1000
pingpong_ms=500

# shellcheck source=bench/lib/reference-server.sh
source bench/lib/reference-server.sh

json_get() { # FILE EXPR
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print($2)" "$1"
}

printf '%-5s %-9s %-6s %14s %14s %7s\n' round workload transport reference sockbench ratio
declare -A ratios
for round in $(seq "$rounds"); do
    for t in unix tcp; do
        ref_conn=$($pin bench/ref/build/ref connect "${addr[$t]}" "$connect_ms" | cut -d' ' -f2)
        $pin "$sb" sockets --server "${addr[$t]}" --workloads connect --trials 1 \
            --json "$work/c.json" >/dev/null
        sb_conn=$(json_get "$work/c.json" "r['metrics']['conn_per_s']")
        ratio=$(python3 -c "print(f'{$sb_conn/$ref_conn:.3f}')")
        ratios[connect-$t]+="$ratio "
        printf '%-5s %-9s %-6s %12.0f/s %12.0f/s %7s\n' "$round" connect "$t" "$ref_conn" "$sb_conn" "$ratio"

        ref_p50=$($pin bench/ref/build/ref pingpong "${addr[$t]}" "$size" "$pingpong_ms" | cut -d' ' -f2)
        $pin "$sb" sockets --server "${addr[$t]}" --workloads pingpong --sizes "$size" --trials 1 \
            --json "$work/p.json" >/dev/null
        sb_p50=$(json_get "$work/p.json" "r['metrics']['rtt_ns']['p50']")
        ratio=$(python3 -c "print(f'{$sb_p50/$ref_p50:.3f}')")
        ratios[pingpong-$t]+="$ratio "
        printf '%-5s %-9s %-6s %11.0f ns %11.0f ns %7s\n' "$round" pingpong "$t" "$ref_p50" "$sb_p50" "$ratio"
    done
done

echo
echo "median ratio over $rounds rounds (sockbench ÷ reference):"
for key in connect-unix connect-tcp pingpong-unix pingpong-tcp; do
    median=$(python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" ${ratios[$key]})
    case $key in
        connect-*) target="target ≥ 0.95 (connections/s)" ;;
        pingpong-*) target="target ≤ 1.05 (p50 round trip)" ;;
    esac
    printf '  %-14s %s   %s\n' "$key" "$median" "$target"
done
