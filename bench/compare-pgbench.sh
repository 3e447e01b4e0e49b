#!/usr/bin/env bash
# Is sockbench's PostgreSQL client loop as fast as pgbench's? Starts one throwaway
# cluster (md5 authentication, TLS on), then on each transport (unix, tcp, tls), for
# ROUNDS rounds (default 5; TRANSPORTS="unix tcp tls" to choose), alternately:
#   - pgbench -n -c 1 -T 10 -f select1.sql   and sockbench's query experiment
#   - pgbench -n -C -c 1 -T 10 -f select1.sql and sockbench's connect experiment
# and prints sockbench ÷ pgbench for queries/s and for connections/s (target ≥ 1.0),
# with the median over rounds. Wall-time ratios swing by ±20% from round to round on
# these VMs, so it also prints what does not swing with the host, per SELECT 1:
#   - client CPU time: pgbench's from `perf stat` (its whole process over the run),
#     sockbench's from its own counters over the timed batches;
#   - client instructions in user mode, counted by valgrind's callgrind for both
#     clients, as the difference between two runs of different lengths over the
#     queries added (so start-up and connection cost drop out); and instructions
#     from perf where the hardware counts them.
# Target for both: sockbench ≤ 1.05× pgbench (CALLGRIND=0 skips the callgrind count).
#
# The queries/s comparison runs in each protocol of PROTOCOLS (default "simple
# prepared"): pgbench -M prepared against sockbench -M prepared as well (target
# ≥ 0.95× pgbench), and so do the callgrind counts; the CPU figures are for the
# simple protocol.
#
# Both clients use libpq with gssencmode disabled and the same sslmode. pgbench is
# called from /usr/lib/postgresql/NN/bin directly (Debian's /usr/bin/pgbench is a
# wrapper script). As root, the server runs as the 'postgres' account.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
callgrind_n=${CALLGRIND_N:-2000}
transports=${TRANSPORTS:-unix tcp tls}
seconds=${SECONDS_PER_RUN:-10}
protocols=${PROTOCOLS:-simple prepared}

# Server and clients share one CPU (PIN_CPU, default 0; PIN_CPU=none to let them
# roam). Unpinned, each round trip on these VMs costs either ~20 µs or ~100 µs,
# depending on whether the scheduler keeps client and backend on one CPU, which
# swamps any difference between the two clients.
PIN_DEFAULT=0
# shellcheck source=bench/lib/throwaway-cluster.sh
source bench/lib/throwaway-cluster.sh

pgbench_tps() { # TRANSPORT [OPTIONS…]
    local t=$1; shift
    PGSSLMODE=${sslmode[$t]} PGGSSENCMODE=disable "${pin[@]}" "$bindir/pgbench" -n "$@" -c 1 -T "$seconds" \
        -f "$work/select1.sql" -h "${host[$t]}" -p "$port" -U foo foo 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

# pgbench's client CPU per transaction, ns, from perf stat over a whole -T run.
pgbench_cpu() { # TRANSPORT
    local t=$1 out
    out=$(PGSSLMODE=${sslmode[$t]} PGGSSENCMODE=disable perf stat -x, -e task-clock -o "$work/pg.csv" \
        "${pin[@]}" "$bindir/pgbench" -n -c 1 -T "$seconds" -f "$work/select1.sql" \
        -h "${host[$t]}" -p "$port" -U foo foo 2>/dev/null)
    local n ms
    n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    ms=$(awk -F, '$3 == "task-clock" { print $1 }' "$work/pg.csv")
    python3 -c "print($ms * 1e6 / $n)"
}

# Client instructions (user mode) of COMMAND..., counted by callgrind.
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# sockbench's instructions in its query trial (connection, warm-up and timed batches)
# and how many queries it sent there (calls of PQsendQuery, PQsendQueryParams or
# PQsendQueryPrepared): "INSTRUCTIONS CALLS". The call count makes the per-query
# figure exact even when a batch or a trial was run again.
sockbench_instructions() { # ARGS...
    valgrind --tool=callgrind --toggle-collect='*query_trial*' \
        --callgrind-out-file="$work/cg.out" "$sb" "$@" >/dev/null 2>&1
    python3 - "$work/cg.out" <<'PY'
import re, sys
names, calls, current, total = {}, 0, None, 0
for line in open(sys.argv[1]):
    m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(2):
            names[m.group(1)] = m.group(2).strip()
        current = names.get(m.group(1)) if line.startswith("cfn=") else current
        continue
    if line.startswith("calls=") and current in ("PQsendQuery", "PQsendQueryParams", "PQsendQueryPrepared"):
        calls += int(line.split()[0][6:])
    m = re.match(r"summary: (\d+)", line) or re.match(r"totals: (\d+)", line)
    if m:
        total = int(m.group(1))
print(total, calls)
PY
}

# Instructions per SELECT 1 for pgbench and sockbench: the difference between a run of
# N and one of 2N (pgbench) or between two query trials (sockbench), over the queries
# it added, so connection and start-up drop out.
instructions_per_query() { # TRANSPORT PROTOCOL
    local t=$1 m=$2 url a b c d
    url=$(url_of "$t")
    export PGSSLMODE=${sslmode[$t]} PGGSSENCMODE=disable
    a=$(instructions "$bindir/pgbench" -n -M "$m" -c 1 -t "$callgrind_n" -f "$work/select1.sql" \
        -h "${host[$t]}" -p "$port" -U foo foo)
    b=$(instructions "$bindir/pgbench" -n -M "$m" -c 1 -t "$((2 * callgrind_n))" -f "$work/select1.sql" \
        -h "${host[$t]}" -p "$port" -U foo foo)
    read -r c c_calls <<<"$(sockbench_instructions postgres --url "$t=$url" --experiments query -M "$m" \
        --trials 1 --quiet --queries "$callgrind_n,$((2 * callgrind_n))" --json "$work/cg.json")"
    read -r d d_calls <<<"$(sockbench_instructions postgres --url "$t=$url" --experiments query -M "$m" \
        --trials 1 --quiet --queries "$((2 * callgrind_n)),$((4 * callgrind_n))" --json "$work/cg.json")"
    unset PGSSLMODE PGGSSENCMODE
    python3 -c "print(($b - $a) / $callgrind_n, ($d - $c) / ($d_calls - $c_calls))"
}

sockbench_rate() { # TRANSPORT EXPERIMENT METRIC [OPTIONS…]
    local t=$1 url
    url=$(url_of "$t")
    "${pin[@]}" "$sb" postgres --url "$t=$url" --experiments "$2" --trials 3 "${@:4}" \
        --json "$work/sb.json" >/dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['metrics']['$3'])" \
        "$work/sb.json"
}

# sockbench's client CPU (and instructions, where counted) per query, from the last
# query run's result file: "CPU_NS INSTRUCTIONS_OR_nan".
sockbench_cost() {
    python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['results'][0]['metrics']['cpu']['client']
u, k = c.get('instructions_user'), c.get('instructions_kernel')
print(c['cpu_ns'], u + k if u is not None and k is not None else 'nan')" "$work/sb.json"
}

printf '%-5s %-6s %-12s %12s %12s %7s\n' round transport figure pgbench sockbench ratio
declare -A ratios cpu_ratios
for round in $(seq "$rounds"); do
    for t in $transports; do
        for protocol in $protocols; do
            [ "$protocol" = simple ] && continue
            pg=$(pgbench_tps "$t" -M "$protocol")
            sbq=$(sockbench_rate "$t" query qps -M "$protocol")
            r=$(python3 -c "print(f'{$sbq/$pg:.3f}')")
            ratios[queries-$protocol-$t]+="$r "
            printf '%-5s %-9s %-12s %10.0f/s %10.0f/s %7s\n' "$round" "$t" "q/s $protocol" "$pg" "$sbq" "$r"
        done
        pg=$(pgbench_tps "$t")
        sbq=$(sockbench_rate "$t" query qps)
        r=$(python3 -c "print(f'{$sbq/$pg:.3f}')")
        ratios[queries-$t]+="$r "
        printf '%-5s %-9s %-12s %10.0f/s %10.0f/s %7s\n' "$round" "$t" queries/s "$pg" "$sbq" "$r"
        read -r sb_cpu _ <<<"$(sockbench_cost)"
        pg_cpu=$(pgbench_cpu "$t")
        r=$(python3 -c "print(f'{$sb_cpu/$pg_cpu:.3f}')")
        cpu_ratios[$t]+="$r "
        printf '%-5s %-9s %-12s %9.0f ns %9.0f ns %7s\n' "$round" "$t" "client CPU/q" "$pg_cpu" "$sb_cpu" "$r"

        pg=$(pgbench_tps "$t" -C)
        sbc=$(sockbench_rate "$t" connect conn_per_s)
        r=$(python3 -c "print(f'{$sbc/$pg:.3f}')")
        ratios[connections-$t]+="$r "
        printf '%-5s %-9s %-12s %10.0f/s %10.0f/s %7s\n' "$round" "$t" connections/s "$pg" "$sbc" "$r"
    done
done

echo
echo "client instructions per SELECT 1, user mode, callgrind ($callgrind_n and $((2 * callgrind_n)) transactions):"
[ "${CALLGRIND:-1}" = 0 ] && transports_counted= || transports_counted=$transports
for t in $transports_counted; do
    for m in $protocols; do
        read -r pg_i sb_i <<<"$(instructions_per_query "$t" "$m")"
        python3 -c "import sys; p, s = float(sys.argv[2]), float(sys.argv[3]); print(f'  {sys.argv[1]:<15} pgbench {p:9.0f}  sockbench {s:9.0f}  ratio {s / p:.3f} (target ≤ 1.05)')" \
            "$t $m" "$pg_i" "$sb_i"
    done
done
if perf stat -e instructions true 2>&1 | grep -q 'not supported'; then
    echo "  (hardware instruction counters: not available on this machine; perf counts none)"
fi

echo
echo "sockbench ÷ pgbench, client CPU per SELECT 1, median over $rounds rounds (target ≤ 1.05):"
for t in $transports; do
    python3 -c "import statistics,sys; print(f'  {sys.argv[1]:<6} {statistics.median(map(float, sys.argv[2:])):.3f}')" \
        "$t" ${cpu_ratios[$t]}
done

echo
echo "sockbench ÷ pgbench, median over $rounds rounds (target ≥ 1.0; ≥ 0.95 in the prepared protocol):"
for key in $(printf "%s\n" "${!ratios[@]}" | sort); do
    python3 -c "import statistics,sys; print(f'  {sys.argv[1]:<18} {statistics.median(map(float, sys.argv[2:])):.3f}')" \
        "$key" ${ratios[$key]}
done
