#!/usr/bin/env bash
# Is sockbench's concurrent client as fast as pgbench's? Starts one throwaway cluster
# (md5 authentication, TLS on), then on each transport (unix, tcp, tls), for ROUNDS
# rounds (default 5), alternately runs
#   pgbench -n -f select1.sql -c 10 -j 2 -T 10   (under perf stat)
#   sockbench postgres --experiments concurrent --clients 10 --threads 2 --duration 10s
# and prints both TPS and sockbench ÷ pgbench (target: within 10%, 0.9-1.1), with
# the median over rounds. CLIENTS, THREADS and SECONDS_PER_RUN change the load;
# TRANSPORTS the list. Both count transactions over their measured time without
# connecting (pgbench's "tps" excludes its connection set-up; sockbench's window
# opens once every client has connected and run an uncounted warm-up).
# TPS swings by ±20% from round to round on these VMs, so it also prints the client
# CPU time per transaction (pgbench's whole process from perf stat; sockbench's client
# threads over the measured window, from its own counters; target sockbench ≤ 1.05×
# pgbench) and, where the hardware counts them, instructions per transaction.
#
# Each comparison runs in each of MODES (default "simple prepared rate"): the simple
# protocol; pgbench -M prepared against sockbench -M prepared; and a fixed rate,
# pgbench -R RATE against sockbench --rate RATE (RATE default 1000 transactions/s),
# where throughput is set by the schedule, so the figure compared is the mean latency
# counted from each transaction's scheduled start, pgbench's over sockbench's (target
# ≥ 0.95), with each one's achieved rate and schedule lag.
#
# Each round runs in both placements of PLACEMENTS (default "pinned free"), the two
# tools alternating within each, so that placement is held equal between them:
#   pinned  the server (postmaster and every backend), pgbench, and sockbench on the
#           one CPU PIN_CPU (default 0): the server pinned with taskset -a -p before
#           the placement's runs, both clients started under taskset -c PIN_CPU, and
#           sockbench given --placement same (which pins its backends to the first
#           CPU it is allowed, PIN_CPU: the same CPU);
#   free    nothing pinned: the server's CPUs given back, sockbench given
#           --placement free (its default on a --url is same, which would pin its
#           backends while pgbench's run where the scheduler puts them).
# Each line carries the 1-minute load average when the pair started; the summary
# gives, per placement, the median ratio and its spread (lowest-highest) over rounds.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
transports=${TRANSPORTS:-unix tcp tls}
seconds=${SECONDS_PER_RUN:-10}
clients=${CLIENTS:-10}
threads=${THREADS:-2}
modes=${MODES:-simple prepared rate}
rate=${RATE:-1000}
placements=${PLACEMENTS:-pinned free}
pin_to=${PIN_CPU:-0}
all_cpus=$(taskset -p -c $$ | sed 's/.*: //')

PIN_DEFAULT=none
PIN_CPU=none # the cluster starts unpinned; each placement places it below
# shellcheck source=bench/lib/throwaway-cluster.sh
source bench/lib/throwaway-cluster.sh

# Places the server and both clients for PLACEMENT: sets pin (the clients' prefix)
# and sb_placement (sockbench's --placement). New backends inherit the
# postmaster's CPUs.
place() { # PLACEMENT
    local cpus pid
    case $1 in
        pinned) cpus=$pin_to; pin=(taskset -c "$pin_to"); sb_placement=same ;;
        free) cpus=$all_cpus; pin=(); sb_placement=free ;;
        *) echo "unknown placement $1 (pinned, free)" >&2; exit 2 ;;
    esac
    for pid in "$pg_pid" $(ps -o pid= --ppid "$pg_pid"); do
        taskset -a -p -c "$cpus" "$pid" >/dev/null
    done
}
load1() { cut -d' ' -f1 /proc/loadavg; }

# pgbench's options and sockbench's for a mode.
mode_args() { # MODE
    case $1 in
        simple) ;;
        prepared) echo "-M prepared" ;;
        rate) echo "-R $rate" ;;
        *) echo "unknown mode $1 (simple, prepared, rate)" >&2; exit 2 ;;
    esac
}

# pgbench's TPS, its client CPU ns and instructions (or nan) per transaction, its mean
# latency and schedule lag (ns, nan without a rate).
pgbench_run() { # TRANSPORT MODE
    local out n
    # shellcheck disable=SC2046 # the mode's options are words
    out=$(PGSSLMODE=${sslmode[$1]} PGGSSENCMODE=disable perf stat -x, \
        -e task-clock,instructions:u,instructions:k -o "$work/pg.csv" \
        "${pin[@]}" "$bindir/pgbench" -n $(mode_args "$2") \
        -c "$clients" -j "$threads" -T "$seconds" -f "$work/select1.sql" \
        -h "${host[$1]}" -p "$port" -U foo foo 2>/dev/null)
    n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    python3 - "$work/pg.csv" "$n" "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')" \
        "$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p')" \
        "$(echo "$out" | sed -n 's/^rate limit schedule lag: avg \([0-9.]*\).*/\1/p')" <<'PY'
import math, sys
v = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) > 2:
        try:
            v[f[2]] = float(f[0])
        except ValueError:
            v[f[2]] = math.nan
n = float(sys.argv[2])
instr = v.get("instructions:u", math.nan) + v.get("instructions:k", math.nan)
ms = lambda t: float(t) * 1e6 if t else math.nan
print(sys.argv[3], v["task-clock"] * 1e6 / n, instr / n, ms(sys.argv[4]), ms(sys.argv[5]))
PY
}

# The same figures of sockbench.
sockbench_run() { # TRANSPORT MODE
    # shellcheck disable=SC2046 # the mode's options are words
    "${pin[@]}" "$sb" postgres --url "$1=$(url_of "$1")" --experiments concurrent \
        --clients "$clients" --threads "$threads" --duration "${seconds}s" --trials 1 \
        --placement "$sb_placement" $(mode_args "$2") --json "$work/sb.json" >/dev/null
    python3 - "$work/sb.json" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))["results"][0]["metrics"]
c = m["cpu"]["client"]
u, k = c.get("instructions_user"), c.get("instructions_kernel")
lag = m.get("lag_ns", {}).get("mean", math.nan)
print(m["tps"], c["cpu_ns"], u + k if u is not None and k is not None else math.nan,
      m["latency_ns"]["mean"], lag)
PY
}

printf '%-5s %-7s %-9s %-9s %-16s %12s %12s %7s %5s\n' round place transport mode figure pgbench sockbench ratio load
declare -A ratios cpu_ratios instr_ratios loads
for round in $(seq "$rounds"); do
  for placement in $placements; do
    place "$placement"
    for t in $transports; do
        for mode in $modes; do
            key="$placement $t $mode"
            load=$(load1)
            loads[$placement]+="$load "
            read -r pg pg_cpu pg_instr pg_lat pg_lag <<<"$(pgbench_run "$t" "$mode")"
            read -r sbt sb_cpu sb_instr sb_lat sb_lag <<<"$(sockbench_run "$t" "$mode")"
            if [ "$mode" = rate ]; then
                # Throughput is the schedule's: latency is the figure, pgbench's over ours.
                r=$(python3 -c "print(f'{$pg_lat/$sb_lat:.3f}')")
                printf '%-5s %-7s %-9s %-9s %-16s %9.0f µs %9.0f µs %7s %5s\n' "$round" "$placement" "$t" "$mode" \
                    "latency mean" "$(python3 -c "print($pg_lat/1e3)")" "$(python3 -c "print($sb_lat/1e3)")" "$r" "$load"
                printf '%-5s %-7s %-9s %-9s %-16s %9.0f µs %9.0f µs\n' "$round" "$placement" "$t" "$mode" \
                    "schedule lag" "$(python3 -c "print($pg_lag/1e3)")" "$(python3 -c "print($sb_lag/1e3)")"
                printf '%-5s %-7s %-9s %-9s %-16s %10.0f/s %10.0f/s\n' "$round" "$placement" "$t" "$mode" "TPS reached" "$pg" "$sbt"
            else
                r=$(python3 -c "print(f'{$sbt/$pg:.3f}')")
                printf '%-5s %-7s %-9s %-9s %-16s %10.0f/s %10.0f/s %7s %5s\n' "$round" "$placement" "$t" "$mode" TPS "$pg" "$sbt" "$r" "$load"
            fi
            ratios[$key]+="$r "
            r=$(python3 -c "print(f'{$sb_cpu/$pg_cpu:.3f}')")
            cpu_ratios[$key]+="$r "
            printf '%-5s %-7s %-9s %-9s %-16s %9.0f ns %9.0f ns %7s\n' "$round" "$placement" "$t" "$mode" "client CPU/tx" "$pg_cpu" "$sb_cpu" "$r"
            r=$(python3 -c "import math; print(f'{$sb_instr/$pg_instr:.3f}')" 2>/dev/null || echo nan)
            instr_ratios[$key]+="$r "
            printf '%-5s %-7s %-9s %-9s %-16s %12s %12s %7s\n' "$round" "$placement" "$t" "$mode" "instructions/tx" "$pg_instr" "$sb_instr" "$r"
        done
    done
  done
done

keys() {
    for p in $placements; do for t in $transports; do for mode in $modes; do
        echo "$p $t $mode"
    done; done; done
}
# The median of VALUES and their spread (lowest-highest).
median() { # LABEL VALUES...
    python3 -c "
import statistics, sys
v = sorted(map(float, sys.argv[2:]))
print(f'  {sys.argv[1]:<22} {statistics.median(v):.3f}  ({v[0]:.3f}-{v[-1]:.3f})')" "$@"
}

echo
echo "sockbench ÷ pgbench, client CPU per transaction, median (spread) over $rounds rounds (target ≤ 1.05):"
while read -r key; do
    # shellcheck disable=SC2086 # a list of numbers
    median "$key" ${cpu_ratios[$key]}
done < <(keys)
echo "sockbench ÷ pgbench, client instructions per transaction (target ≤ 1.05):"
while read -r key; do
    # shellcheck disable=SC2086 # a list of numbers
    python3 -c "
import math, statistics, sys
v = [float(x) for x in sys.argv[2:] if x != 'nan']
print(f'  {sys.argv[1]:<22} ' + (f'{statistics.median(v):.3f}' if v else 'not counted: no hardware instruction counters here (bench/compare-pgbench.sh counts them with callgrind)'))" \
        "$key" ${instr_ratios[$key]}
done < <(keys)

echo
echo "$clients clients on $threads threads, median (spread) over $rounds rounds (target: within 10%):"
echo "  sockbench ÷ pgbench TPS; at a fixed rate ($rate/s), pgbench's mean latency ÷ sockbench's"
while read -r key; do
    # shellcheck disable=SC2086 # a list of numbers
    median "$key" ${ratios[$key]}
done < <(keys)
echo "1-minute load average when each pair started (lowest-highest):"
for p in $placements; do
    # shellcheck disable=SC2086 # a list of numbers
    python3 -c "import sys; v = sorted(map(float, sys.argv[2:])); print(f'  {sys.argv[1]:<22} {v[0]:.2f}-{v[-1]:.2f}')" "$p" ${loads[$p]}
done
