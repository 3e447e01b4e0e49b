#!/usr/bin/env bash
# Is sockbench's Redis client loop as fast as redis-benchmark's? Starts one throwaway
# redis-server with the settings sockbench's own uses (bench/lib/throwaway-redis.sh:
# a Unix socket in a 0700 directory, 127.0.0.1, a TLS port with a fresh ECDSA P-256
# certificate, no RDB/AOF, one ACL user allowed only the commands measured, with a
# random password given as its SHA-256 in the config file), then for ROUNDS rounds
# (default 3), on each transport of TRANSPORTS (default "unix tcp tls") and each
# client count of CLIENTS (default "1 50"), alternately:
#   - redis-benchmark -t ping,get -c C -P 1 -n REQUESTS --csv   (over -s SOCKET,
#     -h 127.0.0.1 -p PORT, or --tls --insecure -p TLS_PORT)
#   - sockbench redis --url T=URL against the same server: its ping and get
#     experiments at one client, its concurrent experiment (GETs) with -c C at more
# and prints requests/s for each, their ratio, and the median over rounds. Targets
# (issue 20): sockbench ≥ 0.95× redis-benchmark at 1 client, ≥ 0.9× at 50.
#
# GET reads one key, `key:__rand_int__` (redis-benchmark's name without -r), set
# beforehand to VALUE_BYTES bytes (default 64) so both clients read a value of
# that size rather than a nil. PING is redis-benchmark's PING_MBULK (a RESP array,
# as sockbench sends it), not PING_INLINE.
#
# redis-benchmark takes the password only as an argument (-a), so it is visible
# in /proc to local accounts while this script runs; on this throwaway server that
# user can run only the commands of src/redis/config.rs, and the server is gone when
# the script ends. sockbench itself never puts it on a command line.
#
# As root the server runs as the 'redis' account (else 'nobody'). Each round runs in
# both placements of PLACEMENTS (default "pinned free"), the two tools alternating
# within each, so that placement is held equal between them:
#   pinned  the server (every thread, taskset -a -p before the placement's runs),
#           redis-benchmark and sockbench all on the one CPU PIN_CPU (default 0):
#           both clients started under taskset -c PIN_CPU, sockbench given
#           --placement same, which pins the server to the first CPU it is allowed,
#           PIN_CPU, and puts it back after the run;
#   free    nothing pinned: the server's CPUs given back, sockbench given
#           --placement free (its default on a --url is free too, said here so that
#           it stays held).
# Each line carries the 1-minute load average when the pair started; the summary
# gives, per placement, the median ratio and its spread (lowest-highest).
#
# What each one measures, and why they differ at many clients: both drive every
# connection from one thread (epoll), one GET out per connection; both count one
# reply per GET. redis-benchmark's rate is its requests over its whole run; sockbench's
# is its GETs over its measured window. The figures that tell where the time goes
# are the CPU time per GET of each client and of the server (the server's from
# /proc/PID/task/*/schedstat over each tool's run; redis-benchmark's from perf stat;
# sockbench's client and server from its result file), and their product with the
# rate, the share of a CPU each kept busy. A client that keeps its CPU ~100% busy is
# the bottleneck, and the rate is then the client's, not the server's.
#
# What to expect on these 2-vCPU VMs (measured 2026-11-24, other builds running):
# unpinned, one client's GETs over unix run at ~60-65k/s on the server's CPU,
# ~45-50k/s on the other one, and ~9-20k/s when a compiler shares its CPU (the
# same modes for redis-benchmark when pinned there); a trial keeps its mode (no
# migrations), so a 1-client ratio says where the scheduler put each client more
# than what each client costs. PIN_CPU=0 takes placement out:
# then sockbench's loop (about 10 µs of client CPU and 2 syscalls per GET over
# unix, against redis-benchmark's 15 µs and 9) is the faster one. At 50 clients
# both are one event loop (epoll) driving every connection from one thread.
#
# sockbench runs --trials TRIALS_ONE (default 3) rounds at one client and
# TRIALS_MANY (default 2) at more, so that one sockbench run lasts about as long
# as one redis-benchmark run of the default REQUESTS; the "seconds" columns show
# both.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
requests=${REQUESTS:-100000}
transports=${TRANSPORTS:-unix tcp tls}
clients_list=${CLIENTS:-1 50}
value_bytes=${VALUE_BYTES:-64}
trials_one=${TRIALS_ONE:-3}
trials_many=${TRIALS_MANY:-2}
placements=${PLACEMENTS:-pinned free}
pin_to=${PIN_CPU:-0}
all_cpus=$(taskset -p -c $$ | sed 's/.*: //')

command -v redis-benchmark >/dev/null || {
    echo "redis-benchmark is needed: apt-get install redis-tools" >&2
    exit 1
}
pin=()
# shellcheck source=bench/lib/throwaway-redis.sh
source bench/lib/throwaway-redis.sh

# Places the server and both clients for PLACEMENT: sets pin (the clients' prefix)
# and sb_placement (sockbench's --placement).
place() { # PLACEMENT
    case $1 in
        pinned) taskset -a -p -c "$pin_to" "$server_pid" >/dev/null
            pin=(taskset -c "$pin_to"); sb_placement=same ;;
        free) taskset -a -p -c "$all_cpus" "$server_pid" >/dev/null
            pin=(); sb_placement=free ;;
        *) echo "unknown placement $1 (pinned, free)" >&2; exit 2 ;;
    esac
}
load1() { cut -d' ' -f1 /proc/loadavg; }
# The server's CPU time so far, ns, every thread.
server_ns() { awk '{ s += $1 } END { printf "%.0f\n", s }' /proc/"$server_pid"/task/*/schedstat; }

declare -A where=(
    [unix]="-s $socket"
    [tcp]="-h 127.0.0.1 -p $port"
    [tls]="--tls --insecure -h 127.0.0.1 -p $tls_port"
)

# redis-benchmark's "PING_RPS GET_RPS CLIENT_NS SERVER_NS": requests/s, and the CPU
# time per request of its own process and of the server over its run. One client:
# PING and GET; more: GET alone (sockbench has no PING with many clients), so that
# the CPU per request is per GET.
benchmark_rps() { # TRANSPORT CLIENTS
    local t=$1 c=$2 out tests=ping,get n=2 s0 s1
    if [ "$c" != 1 ]; then tests=get n=1; fi
    s0=$(server_ns)
    # shellcheck disable=SC2086 # where[] holds several words
    out=$(perf stat -x, -e task-clock -o "$work/rb.csv" "${pin[@]}" redis-benchmark ${where[$t]} \
        "${auth[@]}" -t "$tests" -c "$c" -P 1 -n "$requests" --csv 2>/dev/null)
    s1=$(server_ns)
    awk -F'","' -v n="$((n * requests))" -v s="$((s1 - s0))" -v f="$work/rb.csv" '
        /^"PING_MBULK"/ { p = $2 } /^"GET"/ { g = $2 }
        END {
            while ((getline line < f) > 0) {
                split(line, v, ","); if (v[3] == "task-clock") ms = v[1]
            }
            print (p == "" ? "-" : p), g, ms * 1e6 / n, s / n
        }' <<<"$out"
}

# sockbench's half: `sockbench redis --url T=URL` against this same server, the
# password in REDISCLI_AUTH (its environment, which other accounts cannot read),
# never on its command line. One client: its ping and get experiments (GET of
# VALUE_BYTES); C > 1 clients: its concurrent experiment with -c C (GETs of 64 B,
# so VALUE_BYTES should stay 64 to compare GETs at 50). It has no PING with many
# clients: that row stays "-". Prints "PING_RPS GET_RPS" from the result file's
# metrics.ops_per_s (the median over its trials) of redis.ping, redis.get and
# redis.concurrent, then the client's and the server's CPU per GET (ns) from its
# metrics.cpu.
sockbench_rps() { # TRANSPORT CLIENTS
    local t=$1 c=$2 experiments trials
    if [ "$c" = 1 ]; then
        experiments=(--experiments ping,get -d "$value_bytes")
        trials=$trials_one
    else
        experiments=(--experiments concurrent -c "$c")
        trials=$trials_many
    fi
    rm -f "$work/sb.json"
    REDISCLI_AUTH=$password "${pin[@]}" "$sb" redis --url "$t=${url[$t]}" "${experiments[@]}" \
        --placement "$sb_placement" --trials "$trials" --quiet --json "$work/sb.json" >/dev/null || {
        echo "sockbench redis failed on $t with $c clients (its message is above)" >&2
        exit 1
    }
    python3 - "$work/sb.json" <<'PY'
import json, sys
metrics = {r["experiment"]: r["metrics"] for r in json.load(open(sys.argv[1]))["results"]}
ping = metrics.get("redis.ping", {}).get("ops_per_s")
m = metrics.get("redis.get", metrics.get("redis.concurrent"))
cpu = m.get("cpu", {})
client = cpu.get("client", {}).get("cpu_ns")
server = cpu.get("server", {}).get("cpu_ns")
print(*("-" if x is None else f"{x:.0f}" for x in (ping, m["ops_per_s"], client, server)))
PY
}

ratio() { # SOCKBENCH BENCHMARK
    if [ "$1" = - ]; then echo -; else python3 -c "print(f'{$1/$2:.3f}')"; fi
}

# Seconds since START (an $EPOCHREALTIME).
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$EPOCHREALTIME"; }

printf '%-5s %-7s %-9s %-7s %-4s %15s %13s %7s %11s %5s\n' round place transport clients test \
    redis-benchmark sockbench ratio 'seconds r/s' load
declare -A rb_rates sb_rates sb_ratios cpu loads
for round in $(seq "$rounds"); do
  for placement in $placements; do
    place "$placement"
    for t in $transports; do
        for c in $clients_list; do
            load=$(load1)
            loads[$placement]+="$load "
            t0=$EPOCHREALTIME
            read -r rb_ping rb_get rb_client rb_server <<<"$(benchmark_rps "$t" "$c")"
            rb_s=$(since "$t0")
            t0=$EPOCHREALTIME
            read -r sb_ping sb_get sb_client sb_server <<<"$(sockbench_rps "$t" "$c")"
            sb_s=$(since "$t0")
            for test in ping get; do
                rb_var=rb_$test sb_var=sb_$test
                rb=${!rb_var} s=${!sb_var}
                [ "$rb" = - ] && continue
                r=$(ratio "$s" "$rb")
                key="$placement $t $c $test"
                rb_rates[$key]+="$rb "
                if [ "$r" != - ]; then
                    sb_rates[$key]+="$s "
                    sb_ratios[$key]+="$r "
                fi
                printf '%-5s %-7s %-9s %-7s %-4s %13.0f/s %11s/s %7s %5s %5s %5s\n' \
                    "$round" "$placement" "$t" "$c" "$test" "$rb" "$s" "$r" "$rb_s" "$sb_s" "$load"
            done
            key="$placement $t $c"
            cpu[$key]+="$rb_get $rb_client $rb_server $sb_get $sb_client $sb_server;"
            printf '%-5s %-7s %-9s %-7s %-4s %10.0f ns/req %8s ns/GET   (client CPU; server: %.0f and %s ns)\n' \
                "$round" "$placement" "$t" "$c" cpu "$rb_client" "$sb_client" "$rb_server" "$sb_server"
        done
    done
  done
done

echo
echo "median over $rounds rounds (requests/s; ratio = sockbench ÷ redis-benchmark, the"
echo "median of each round's ratio, with its spread lowest-highest; target within 10%,"
echo "or a difference the CPU per GET below accounts for):"
printf '  %-7s %-9s %-7s %-4s %15s %13s %7s\n' place transport clients test redis-benchmark sockbench ratio
for p in $placements; do
  for t in $transports; do
    for c in $clients_list; do
        for test in ping get; do
            key="$p $t $c $test"
            [ -n "${rb_rates[$key]:-}" ] || continue
            python3 - "$p" "$t" "$c" "$test" "${rb_rates[$key]}" "${sb_rates[$key]:-}" "${sb_ratios[$key]:-}" <<'PY'
import statistics, sys
p, t, c, test, rb, sb, ratios = sys.argv[1:]
med = lambda xs: statistics.median(map(float, xs.split()))
r = sorted(map(float, ratios.split()))
m = statistics.median(r)
word = "within 10%" if 0.9 <= m <= 1.1 else "sockbench faster" if m > 1.1 else "sockbench slower"
verdict = f"{m:7.3f} ({r[0]:.3f}-{r[-1]:.3f})  {word}"
print(f"  {p:<7} {t:<9} {c:<7} {test:<4} {med(rb):13.0f}/s {med(sb):11.0f}/s {verdict}")
PY
        done
    done
  done
done
echo
echo "where the time goes, median over rounds: CPU per GET (per request at 1 client) of"
echo "each client and of the server; the share of one CPU each kept busy (CPU per"
echo "request × rate); and the most those costs allow, 'bound': on one CPU (pinned)"
echo "1 ÷ (client + server), each on its own CPU (free) 1 ÷ the larger of the two, so"
echo "that sockbench's bound ÷ redis-benchmark's is the ratio a quiet machine would give:"
printf '  %-7s %-9s %-7s %-15s %8s %8s %8s %8s %9s %6s\n' place transport clients tool client server \
    'client%' 'server%' bound 'ratio'
for p in $placements; do
  for t in $transports; do
    for c in $clients_list; do
        python3 - "$p" "$t" "$c" "${cpu[$p $t $c]}" <<'PY'
import statistics, sys
p, t, c, rows = sys.argv[1:]
rows = [[float(x) if x != "-" else float("nan") for x in r.split()] for r in rows.split(";") if r.strip()]
med = lambda i: statistics.median(r[i] for r in rows)
bound = lambda cl, sv: 1e9 / (cl + sv if p == "pinned" else max(cl, sv))
first = None
for name, o in (("redis-benchmark", 0), ("sockbench", 3)):
    rate, client, server = med(o), med(o + 1), med(o + 2)
    b = bound(client, server)
    ratio = "" if first is None else f"{b / first:6.2f}"
    first = first or b
    print(f"  {p:<7} {t:<9} {c:<7} {name:<15} {client:6.0f}ns {server:6.0f}ns "
          f"{client * rate / 1e7:7.0f}% {server * rate / 1e7:7.0f}% {b / 1e3:7.0f}k/s {ratio}")
PY
    done
  done
done
echo "1-minute load average when each pair started (lowest-highest):"
for p in $placements; do
    # shellcheck disable=SC2086 # a list of numbers
    python3 -c "import sys; v = sorted(map(float, sys.argv[2:])); print(f'  {sys.argv[1]:<7} {v[0]:.2f}-{v[-1]:.2f}')" "$p" ${loads[$p]}
done
