#!/usr/bin/env bash
# Is sockbench's concurrent client as fast as pgbench's? Starts one throwaway cluster
# (trust authentication, TLS on), then on each transport (unix, tcp, tls), for ROUNDS
# rounds (default 5), alternately runs
#   pgbench -n -f select1.sql -c 10 -j 2 -T 10   (under perf stat)
#   sockbench postgres --experiments concurrent --clients 10 --threads 2 --duration 10s
# and prints both TPS and sockbench ÷ pgbench (target ≥ 1.0), with the median over
# rounds. CLIENTS, THREADS and SECONDS_PER_RUN change the load; TRANSPORTS the list.
# TPS swings by ±20% from round to round on these VMs, so it also prints the client
# CPU time per transaction (pgbench's whole process from perf stat; sockbench's client
# threads over the measured window, from its own counters; target sockbench ≤ 1.05×
# pgbench) and, where the hardware counts them, instructions per transaction.
#
# Nothing is pinned by default (PIN_CPU=N pins everything to one CPU): two client
# threads on two cores is the point of this comparison.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
transports=${TRANSPORTS:-unix tcp tls}
seconds=${SECONDS_PER_RUN:-10}
clients=${CLIENTS:-10}
threads=${THREADS:-2}

PIN_DEFAULT=none
# shellcheck source=bench/lib/throwaway-cluster.sh
source bench/lib/throwaway-cluster.sh

# pgbench's TPS, and its client CPU ns and instructions (or nan) per transaction.
pgbench_run() { # TRANSPORT
    local out n
    out=$(PGSSLMODE=${sslmode[$1]} PGGSSENCMODE=disable perf stat -x, \
        -e task-clock,instructions:u,instructions:k -o "$work/pg.csv" \
        "${pin[@]}" "$bindir/pgbench" -n \
        -c "$clients" -j "$threads" -T "$seconds" -f "$work/select1.sql" \
        -h "${host[$1]}" -p "$port" -U foo foo 2>/dev/null)
    n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    python3 - "$work/pg.csv" "$n" "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')" <<'PY'
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
print(sys.argv[3], v["task-clock"] * 1e6 / n, instr / n)
PY
}

# sockbench's TPS, and its client CPU ns and instructions (or nan) per transaction.
sockbench_run() { # TRANSPORT
    "${pin[@]}" "$sb" postgres --url "$1=$(url_of "$1")" --experiments concurrent \
        --clients "$clients" --threads "$threads" --duration "${seconds}s" --trials 1 \
        --json "$work/sb.json" >/dev/null
    python3 - "$work/sb.json" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))["results"][0]["metrics"]
c = m["cpu"]["client"]
u, k = c.get("instructions_user"), c.get("instructions_kernel")
print(m["tps"], c["cpu_ns"], u + k if u is not None and k is not None else math.nan)
PY
}

printf '%-5s %-9s %-16s %12s %12s %7s\n' round transport figure pgbench sockbench ratio
declare -A ratios cpu_ratios instr_ratios
for round in $(seq "$rounds"); do
    for t in $transports; do
        read -r pg pg_cpu pg_instr <<<"$(pgbench_run "$t")"
        read -r sbt sb_cpu sb_instr <<<"$(sockbench_run "$t")"
        r=$(python3 -c "print(f'{$sbt/$pg:.3f}')")
        ratios[$t]+="$r "
        printf '%-5s %-9s %-16s %10.0f/s %10.0f/s %7s\n' "$round" "$t" TPS "$pg" "$sbt" "$r"
        r=$(python3 -c "print(f'{$sb_cpu/$pg_cpu:.3f}')")
        cpu_ratios[$t]+="$r "
        printf '%-5s %-9s %-16s %9.0f ns %9.0f ns %7s\n' "$round" "$t" "client CPU/tx" "$pg_cpu" "$sb_cpu" "$r"
        r=$(python3 -c "import math; print(f'{$sb_instr/$pg_instr:.3f}')" 2>/dev/null || echo nan)
        instr_ratios[$t]+="$r "
        printf '%-5s %-9s %-16s %12s %12s %7s\n' "$round" "$t" "instructions/tx" "$pg_instr" "$sb_instr" "$r"
    done
done

echo
echo "sockbench ÷ pgbench, client CPU per transaction, median over $rounds rounds (target ≤ 1.05):"
for t in $transports; do
    python3 -c "import statistics,sys; print(f'  {sys.argv[1]:<6} {statistics.median(map(float, sys.argv[2:])):.3f}')" \
        "$t" ${cpu_ratios[$t]}
done
echo "sockbench ÷ pgbench, client instructions per transaction (target ≤ 1.05):"
for t in $transports; do
    python3 -c "
import math, statistics, sys
v = [float(x) for x in sys.argv[2:] if x != 'nan']
print(f'  {sys.argv[1]:<6} ' + (f'{statistics.median(v):.3f}' if v else 'not counted: no hardware instruction counters here (bench/compare-pgbench.sh counts them with callgrind)'))" \
        "$t" ${instr_ratios[$t]}
done

echo
echo "sockbench ÷ pgbench TPS, $clients clients on $threads threads, median over $rounds rounds (target ≥ 1.0):"
for t in $transports; do
    python3 -c "import statistics,sys; print(f'  {sys.argv[1]:<6} {statistics.median(map(float, sys.argv[2:])):.3f}')" \
        "$t" ${ratios[$t]}
done
