#!/usr/bin/env bash
# Are sockbench's CPU figures right? Checks them against an independent count: the
# minimal C client (bench/ref/ref.c) runs the same 64-byte pingpong loop against a
# `sockbench serve`, under `perf stat` (the client) while `perf stat -p` watches the
# server; per round trip is the count divided by the round trips of the loop and its
# warm-up (process start is well under 1%). Between two such runs, sockbench runs the
# same loop with its own server and reports client and server CPU time and context
# switches per round trip (and instructions, where the hardware counts them) in its
# result file. For ROUNDS rounds (default 9), on unix and tcp, prints both and their ratio;
# target: within 10% (0.90–1.10), as the median over rounds, since this VM's speed
# itself drifts by 20% from one minute to the next.
#
# Everything runs on one CPU (PIN_CPU, default 0; sockbench with --placement same),
# so both loops take the same kernel paths: on two CPUs, every round trip also pays
# for waking the other one.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-9}
pin="taskset -c ${PIN_CPU:-0}"
size=64
ms=1000

command -v perf >/dev/null || { echo "perf is needed (Debian: linux-perf)" >&2; exit 1; }
# shellcheck source=bench/lib/reference-server.sh
source bench/lib/reference-server.sh

events=task-clock,context-switches,instructions:u,instructions:k

# perf stat's CSV value of EVENT in FILE, or "nan" when it was not counted.
perf_value() { # FILE EVENT
    awk -F, -v e="$2" '$3 == e { print ($1 ~ /^[0-9.]+$/) ? $1 : "nan" }' "$1"
}

# One reference run of MS milliseconds: prints "ops client_ms client_cs client_iu
# client_ik server_ms server_cs server_iu server_ik", ops counting the warm-up.
reference_run() { # ADDR MS
    perf stat -x, -e "$events" -p "$server_pid" -o "$work/server.csv" &
    local watcher=$!
    sleep 0.2
    local out
    out=$(perf stat -x, -e "$events" -o "$work/client.csv" \
        $pin bench/ref/build/ref pingpong "$1" "$size" "$2")
    kill -INT "$watcher"
    wait "$watcher" || true
    local timed warm
    timed=$(echo "$out" | awk '{ print $4 }')
    warm=$(echo "$out" | awk '{ print $6 }')
    echo "$((timed + warm))" \
        "$(perf_value "$work/client.csv" task-clock)" \
        "$(perf_value "$work/client.csv" context-switches)" \
        "$(perf_value "$work/client.csv" instructions:u)" \
        "$(perf_value "$work/client.csv" instructions:k)" \
        "$(perf_value "$work/server.csv" task-clock)" \
        "$(perf_value "$work/server.csv" context-switches)" \
        "$(perf_value "$work/server.csv" instructions:u)" \
        "$(perf_value "$work/server.csv" instructions:k)"
}

printf '%-5s %-5s %-28s %14s %14s %7s\n' round transport figure reference sockbench ratio
declare -A ratios
for round in $(seq "$rounds"); do
    for t in unix tcp; do
        # The reference before and after sockbench: their sum cancels a steady drift.
        read -r -a a <<<"$(reference_run "${addr[$t]}" "$ms")"
        $pin "$sb" sockets --transports "$t" --placement same --workloads pingpong \
            --sizes "$size" --trials 1 --quiet --json "$work/p.json" >/dev/null
        read -r -a b <<<"$(reference_run "${addr[$t]}" "$ms")"
        python3 - "$work/p.json" "$round" "$t" "${a[@]}" "${b[@]}" >>"$work/rows" <<'EOF'
import json, math, sys
cost = json.load(open(sys.argv[1]))["results"][0]["metrics"]["cpu"]
round_, t = sys.argv[2], sys.argv[3]
a = [float(x) for x in sys.argv[4:13]]
b = [float(x) for x in sys.argv[13:22]]
ops = a[0] + b[0]
per = lambda i, scale: (a[i] + b[i]) * scale / ops
server = cost.get("server") or {}
client = cost["client"]
def instr(side):
    u, k = side.get("instructions_user"), side.get("instructions_kernel")
    return u + k if u is not None and k is not None else math.nan
rows = [
    ("client CPU ns/op", per(1, 1e6), client["cpu_ns"]),
    ("client switches/op", per(2, 1), client.get("context_switches", math.nan)),
    ("client instructions/op", per(3, 1) + per(4, 1), instr(client)),
    ("server CPU ns/op", per(5, 1e6), server.get("cpu_ns", math.nan)),
    ("server switches/op", per(6, 1), server.get("context_switches", math.nan)),
    ("server instructions/op", per(7, 1) + per(8, 1), instr(server)),
]
for name, ref, ours in rows:
    ratio = ours / ref if ref and not math.isnan(ref) and not math.isnan(ours) else math.nan
    print(f"{round_} {t} {name.replace(' ', '_')} {ref} {ours} {ratio}")
EOF
        tail -n 6 "$work/rows" | while read -r r tr name ref ours ratio; do
            printf '%-5s %-9s %-28s %14.3f %14.3f %7.3f\n' "$r" "$tr" "${name//_/ }" "$ref" "$ours" "$ratio"
        done
    done
done

echo
echo "sockbench ÷ independent count, median over $rounds rounds (target 0.90–1.10):"
python3 - "$work/rows" <<'EOF'
import math, statistics, sys
by = {}
for line in open(sys.argv[1]):
    _, t, name, _, _, ratio = line.split()
    by.setdefault((name, t), []).append(float(ratio))
for (name, t), ratios in sorted(by.items()):
    ratios = [r for r in ratios if not math.isnan(r)]
    label = f"{name.replace('_', ' ')} ({t})"
    if not ratios:
        print(f"  {label:<34} not counted on this machine (no hardware counters)")
        continue
    m = statistics.median(ratios)
    verdict = "within 10%" if 0.9 <= m <= 1.1 else "OUTSIDE 10%"
    print(f"  {label:<34} {m:.3f}  {verdict}")
EOF
