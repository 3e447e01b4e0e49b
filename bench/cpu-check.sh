#!/usr/bin/env bash
# Are sockbench's CPU figures right? Checks them against independent counts of the
# minimal C client (bench/ref/ref.c) running the same 64-byte pingpong loop against a
# `sockbench serve`, per round trip of its loop and warm-up (process start is well
# under 1%), in two ways, like with like:
#   - times, no counters: the client's CPU time from wait4's rusage and the server's
#     from /proc/PID/stat, against sockbench's CPU rows (getrusage and /proc);
#   - counters: the client under `perf stat` while `perf stat -p` watches the server,
#     against sockbench's counting trial (CPU time, context switches, and
#     instructions where the hardware counts them). Counters cost at every context
#     switch, so these run slower than the first pair.
# Each reference runs before and after sockbench, which runs the same loop with its
# own server. For ROUNDS rounds (default 9), on unix and tcp, prints both and their
# ratio; target: within 10% (0.90–1.10), as the median over rounds, since this VM's
# speed itself drifts by 20% from one minute to the next.
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

# One reference run of MS milliseconds without counters: prints "ops client_ms
# server_ms", the client's CPU time from wait4's rusage and the server's from
# /proc/PID/stat (clock ticks), ops counting the warm-up.
reference_times() { # ADDR MS
    python3 - "$server_pid" "${PIN_CPU:-0}" "$1" "$size" "$2" <<'PY'
import os, subprocess, sys
pid, cpu, addr, size, ms = sys.argv[1:6]
tick = os.sysconf("SC_CLK_TCK")
def server_ms():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 / tick
before = server_ms()
p = subprocess.Popen(["taskset", "-c", cpu, "bench/ref/build/ref", "pingpong", addr, size, ms],
                     stdout=subprocess.PIPE, text=True)
out = p.stdout.read().split()
_, _, ru = os.wait4(p.pid, 0)
print(int(out[3]) + int(out[5]), (ru.ru_utime + ru.ru_stime) * 1000, server_ms() - before)
PY
}

printf '%-5s %-5s %-34s %14s %14s %7s\n' round transport figure reference sockbench ratio
for round in $(seq "$rounds"); do
    for t in unix tcp; do
        # Each kind of reference before and after sockbench: their sum cancels a
        # steady drift of the machine.
        read -r -a ta <<<"$(reference_times "${addr[$t]}" "$ms")"
        read -r -a pa <<<"$(reference_run "${addr[$t]}" "$ms")"
        $pin "$sb" sockets --transports "$t" --placement same --workloads pingpong \
            --sizes "$size" --trials 1 --quiet --json "$work/p.json" >/dev/null
        read -r -a pb <<<"$(reference_run "${addr[$t]}" "$ms")"
        read -r -a tb <<<"$(reference_times "${addr[$t]}" "$ms")"
        python3 - "$work/p.json" "$round" "$t" "${ta[@]}" "${tb[@]}" "${pa[@]}" "${pb[@]}" \
            >>"$work/rows" <<'EOF'
import json, math, sys
record = json.load(open(sys.argv[1]))["results"][0]
times, counted = record["metrics"]["cpu"], record.get("counters") or {}
round_, t = sys.argv[2], sys.argv[3]
v = [float(x) for x in sys.argv[4:]]
ta, tb, pa, pb = v[0:3], v[3:6], v[6:15], v[15:24]
t_per = lambda i, scale: (ta[i] + tb[i]) * scale / (ta[0] + tb[0])
p_per = lambda i, scale: (pa[i] + pb[i]) * scale / (pa[0] + pb[0])
nan = math.nan
def side(cost, name):
    return cost.get(name) or {}
def instr(s):
    u, k = s.get("instructions_user"), s.get("instructions_kernel")
    return u + k if u is not None and k is not None else nan
rows = [
    ("client CPU ns/op, times", t_per(1, 1e6), side(times, "client").get("cpu_ns", nan)),
    ("server CPU ns/op, times", t_per(2, 1e6), side(times, "server").get("cpu_ns", nan)),
    ("client CPU ns/op, counters", p_per(1, 1e6), side(counted, "client").get("cpu_ns", nan)),
    ("client switches/op, counters", p_per(2, 1), side(counted, "client").get("context_switches", nan)),
    ("client instructions/op", p_per(3, 1) + p_per(4, 1), instr(side(counted, "client"))),
    ("server CPU ns/op, counters", p_per(5, 1e6), side(counted, "server").get("cpu_ns", nan)),
    ("server switches/op, counters", p_per(6, 1), side(counted, "server").get("context_switches", nan)),
    ("server instructions/op", p_per(7, 1) + p_per(8, 1), instr(side(counted, "server"))),
]
for name, ref, ours in rows:
    ratio = ours / ref if ref and not math.isnan(ref) and not math.isnan(ours) else nan
    print(f"{round_} {t} {name.replace(' ', '_')} {ref} {ours} {ratio}")
EOF
        tail -n 8 "$work/rows" | while read -r r tr name ref ours ratio; do
            printf '%-5s %-9s %-34s %14.3f %14.3f %7.3f\n' "$r" "$tr" "${name//_/ }" "$ref" "$ours" "$ratio"
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
        print(f"  {label:<44} not counted on this machine (no hardware counters)")
        continue
    m = statistics.median(ratios)
    verdict = "within 10%" if 0.9 <= m <= 1.1 else "OUTSIDE 10%"
    print(f"  {label:<44} {m:.3f}  {verdict}")
EOF
