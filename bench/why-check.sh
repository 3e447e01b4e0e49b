#!/usr/bin/env bash
# Is sockbench's kernel account right? Checks it against perf on the minimal C client
# (bench/ref/ref.c) running the same 64-byte pingpong against a `sockbench serve`, for
# the client and for the server, on unix and tcp:
#   - events per operation (the record's counters.why.{client,server}.events) against
#     `perf stat -e <the same tracepoints, with the same filters>` on the reference
#     loop and `perf stat -p` on the server, per round trip of the loop and its
#     warm-up; target: within 2% (or 0.02 per operation for counts near zero);
#   - CPU by layer (layer_samples) against `perf record -e cpu-clock -g` on the same
#     loop and server, with sockbench's OWN layer table (parsed from
#     src/cpu/why/layers.rs by bench/lib/why_layers.py) applied to `perf script`;
#     target: each kernel layer's share of the kernel samples within 5 points (user
#     space's share is shown, not judged: sockbench's harness is not ten lines of C).
#     The reference is counted and sampled at once, as sockbench's counting trial
#     is, so both pay the tracepoint counters' cost (left out on both sides).
# Measured here (2 vCPU KVM, quiet, 2026-11-24, ROUNDS=9): every event count agrees
# within 0.5% except wakeups (4-8%: how often the peer is already awake varies).
# Layer shares do NOT meet the target: 8 of 28 kernel-layer rows are outside 5
# points, and with 9 rounds the gap is systematic, not noise. perf's profile of the
# C loop puts 37-40% of tcp's kernel samples in the scheduler where sockbench's
# counting trial (its own client loop) puts 21-23%, and sockbench has more in TCP,
# socket and syscall entry. On unix, the socket layer is 33% for the C loop against
# 23-24% in sockbench. The event counts agree, so the two loops do the same kernel
# work per round trip; what differs is where the time goes. Whether that is the
# clients' loops (the C loop's plain blocking recv against sockbench's) or the
# sampling is not settled.
# The tracepoints and filters are read from src/cpu/why/tracepoints.rs (the first
# candidate of each event that sockbench reports using). For ROUNDS rounds (default
# 3), medians over rounds. Everything runs on one CPU (PIN_CPU, default 0; sockbench
# with --placement same), as in bench/cpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
pin="taskset -c ${PIN_CPU:-0}"
size=64
ms=1000
# sockbench's sampling period, ns, so the reference is sampled alike.
period=$(grep -oP 'PERIOD_NS: u64 = \K[0-9_]+' src/cpu/why/sampler.rs | tr -d _)

command -v perf >/dev/null || { echo "perf is needed (Debian: linux-perf)" >&2; exit 1; }
# shellcheck source=bench/lib/reference-server.sh
source bench/lib/reference-server.sh

# sockbench's own record first: which tracepoints it used.
$pin "$sb" sockets --transports unix --placement same --workloads pingpong --sizes "$size" \
    --trials 1 --quiet --json "$work/first.json" >/dev/null
# "event tracepoint filter" lines, in order, for the tracepoints sockbench used.
python3 - "$work/first.json" >"$work/events" <<'EOF_PY'
import json, re, sys
why = json.load(open(sys.argv[1]))["results"][0]["counters"]["why"]
used = set(why["tracepoints"])
mod = open("src/cpu/why/mod.rs").read()
names = dict(re.findall(r'(\w+) = "([^"]+)"', mod.split("pub enum Event")[1].split("pub enum Layer")[0]))
src = open("src/cpu/why/tracepoints.rs").read()
table = src.split("pub const CANDIDATES")[1].split("];")[0]
for variant, body in re.findall(r'\(\s*Event::(\w+),\s*&\[(.*?)\],?\s*\)', table, re.S):
    for tp, filt in re.findall(r'\("([^"]+)",\s*(?:None|Some\("([^"]+)"\))\)', body):
        if tp in used:
            print(names[variant], tp, (filt or "-").replace(" ", "~"))
            break
EOF_PY
perf_args=()
while read -r _ tp filt; do
    perf_args+=(-e "$tp")
    [ "$filt" != - ] && perf_args+=(--filter "${filt//\~/ }")
done <"$work/events"

# One reference run, counted and sampled at once like sockbench's counting trial
# (whose tracepoint counters cost CPU, in perf's own functions, which both sides
# leave out): `perf stat` inside `perf record -g` on the client, both with `-p`
# on the server. Prints "ops"; writes {client,server}.csv and .layers.
reference_run() { # ADDR
    perf stat -x, "${perf_args[@]}" -p "$server_pid" -o "$work/server.csv" &
    local counter=$!
    perf record -q -e cpu-clock -c "$period" -g -p "$server_pid" -o "$work/server.data" \
        2>/dev/null &
    local sampler=$!
    sleep 0.3
    local out
    out=$(perf record -q -e cpu-clock -c "$period" -g -o "$work/client.data" -- \
        perf stat -x, "${perf_args[@]}" -o "$work/client.csv" \
        $pin bench/ref/build/ref pingpong "$1" "$size" "$ms" 2>/dev/null)
    kill -INT "$counter" "$sampler"
    wait "$counter" || true
    wait "$sampler" || true
    for side in client server; do
        # The client's samples of the loop only (not of perf stat around it).
        local comms=
        [ "$side" = client ] && comms=--comms=ref
        perf script -i "$work/$side.data" $comms -F ip,sym,dso >"$work/$side.script" 2>/dev/null
        python3 bench/lib/why_layers.py src/cpu/why/layers.rs src/cpu/why/mod.rs \
            "$work/$side.script" >"$work/$side.layers"
    done
    echo "$out" | awk '{ print $4 + $6 }'
}

for round in $(seq "$rounds"); do
    for t in unix tcp; do
        ops=$(reference_run "${addr[$t]}")
        $pin "$sb" sockets --transports "$t" --placement same --workloads pingpong \
            --sizes "$size" --trials 1 --quiet --json "$work/p.json" >/dev/null
        python3 - "$work" "$round" "$t" "$ops" >>"$work/rows" <<'EOF_PY'
import json, sys
work, round_, t, ops = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
why = json.load(open(f"{work}/p.json"))["results"][0]["counters"]["why"]
events = [line.split()[0] for line in open(f"{work}/events")]
for side in ("client", "server"):
    counts = [l.split(",") for l in open(f"{work}/{side}.csv") if l.strip() and not l.startswith("#")]
    ours = (why.get(side) or {}).get("events", {})
    for event, row in zip(events, counts):
        ref = float(row[0]) / ops if row[0].replace(".", "").isdigit() else float("nan")
        print(f"{round_} {t} {side} count {event} {ref:.4f} {ours.get(event, float('nan')):.4f}")
    ref_layers = {}
    for line in open(f"{work}/{side}.layers"):
        k, v = line.split()
        if k != "left-out":
            ref_layers[k.replace("_", " ")] = int(v)
    mine = (why.get(side) or {}).get("layer_samples", {})
    # Kernel layers as shares of kernel samples: the kernel paths are the same,
    # while user space is sockbench's harness on one side and ten lines of C on
    # the other. User space's share of all samples is shown, not judged.
    user = {"user", "tls"}
    kernel = lambda d: sum(v for k, v in d.items() if k not in user) or 1
    rk, mk = kernel(ref_layers), kernel(mine)
    for layer in sorted((set(ref_layers) | set(mine)) - user):
        print(f"{round_} {t} {side} share {layer.replace(' ', '_')} "
              f"{100 * ref_layers.get(layer, 0) / rk:.2f} {100 * mine.get(layer, 0) / mk:.2f}")
    rt, mt = sum(ref_layers.values()) or 1, sum(mine.values()) or 1
    ru = sum(v for k, v in ref_layers.items() if k in user)
    mu = sum(v for k, v in mine.items() if k in user)
    print(f"{round_} {t} {side} user-share user {100 * ru / rt:.2f} {100 * mu / mt:.2f}")
EOF_PY
        grep "^$round $t " "$work/rows" | while read -r r tr side kind name ref ours; do
            printf '%-3s %-5s %-7s %-6s %-18s %10s %10s\n' "$r" "$tr" "$side" "$kind" "${name//_/ }" "$ref" "$ours"
        done
    done
done

echo
echo "perf on the C reference loop against sockbench, median over $rounds rounds"
echo "(events per round trip: within 2% or 0.02; layer shares, %: within 5 points):"
python3 - "$work/rows" <<'EOF_PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    _, t, side, kind, name, ref, ours = line.split()
    by.setdefault((t, side, kind, name), []).append((float(ref), float(ours)))
failed = 0
for (t, side, kind, name), pairs in sorted(by.items()):
    ref = statistics.median(p[0] for p in pairs)
    ours = statistics.median(p[1] for p in pairs)
    if kind == "user-share":
        print(f"  {t:<5} {side:<7} user   share of all samples  {ours:5.1f}% vs {ref:5.1f}%  (not judged)")
        continue
    if kind == "count":
        ok = abs(ours - ref) <= max(0.02 * abs(ref), 0.02)
        label = f"{ours:.3f} vs {ref:.3f}"
    else:
        ok = abs(ours - ref) <= 5
        label = f"{ours:5.1f}% vs {ref:5.1f}%"
    failed += not ok
    print(f"  {t:<5} {side:<7} {kind:<6} {name.replace('_', ' '):<18} {label:<22} "
          f"{'ok' if ok else 'OUTSIDE'}")
print(f"{'PASS' if not failed else 'FAIL'}: {failed} outside the target")
sys.exit(1 if failed else 0)
EOF_PY
