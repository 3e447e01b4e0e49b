#!/usr/bin/env bash
# Is sockbench's PostgreSQL client loop as fast as pgbench's? Starts one throwaway
# cluster (trust authentication, TLS on), then on each transport (unix, tcp, tls), for
# ROUNDS rounds (default 2; TRANSPORTS="unix tcp tls" to choose), alternately:
#   - pgbench -n -c 1 -T 10 -f select1.sql   and sockbench's query experiment
#   - pgbench -n -C -c 1 -T 10 -f select1.sql and sockbench's connect experiment
# and prints sockbench ÷ pgbench for queries/s and for connections/s (target ≥ 1.0),
# with the median over rounds.
#
# Both clients use libpq with gssencmode disabled and the same sslmode. pgbench is
# called from /usr/lib/postgresql/NN/bin directly (Debian's /usr/bin/pgbench is a
# wrapper script). As root, the server runs as the 'postgres' account.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-2}
transports=${TRANSPORTS:-unix tcp tls}
seconds=${SECONDS_PER_RUN:-10}

# Server and clients share one CPU (PIN_CPU, default 0; PIN_CPU=none to let them
# roam). Unpinned, each round trip on these VMs costs either ~20 µs or ~100 µs,
# depending on whether the scheduler keeps client and backend on one CPU, which
# swamps any difference between the two clients.
PIN_DEFAULT=0
# shellcheck source=bench/lib/throwaway-cluster.sh
source bench/lib/throwaway-cluster.sh

pgbench_tps() { # TRANSPORT [-C]
    local t=$1; shift
    PGSSLMODE=${sslmode[$t]} PGGSSENCMODE=disable "${pin[@]}" "$bindir/pgbench" -n "$@" -c 1 -T "$seconds" \
        -f "$work/select1.sql" -h "${host[$t]}" -p "$port" -U foo foo 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

sockbench_rate() { # TRANSPORT EXPERIMENT METRIC
    local t=$1 url
    url=$(url_of "$t")
    "${pin[@]}" "$sb" postgres --url "$t=$url" --experiments "$2" --trials 3 --json "$work/sb.json" >/dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['metrics']['$3'])" \
        "$work/sb.json"
}

printf '%-5s %-6s %-12s %12s %12s %7s\n' round transport figure pgbench sockbench ratio
declare -A ratios
for round in $(seq "$rounds"); do
    for t in $transports; do
        pg=$(pgbench_tps "$t")
        sbq=$(sockbench_rate "$t" query qps)
        r=$(python3 -c "print(f'{$sbq/$pg:.3f}')")
        ratios[queries-$t]+="$r "
        printf '%-5s %-9s %-12s %10.0f/s %10.0f/s %7s\n' "$round" "$t" queries/s "$pg" "$sbq" "$r"

        pg=$(pgbench_tps "$t" -C)
        sbc=$(sockbench_rate "$t" connect conn_per_s)
        r=$(python3 -c "print(f'{$sbc/$pg:.3f}')")
        ratios[connections-$t]+="$r "
        printf '%-5s %-9s %-12s %10.0f/s %10.0f/s %7s\n' "$round" "$t" connections/s "$pg" "$sbc" "$r"
    done
done

echo
echo "sockbench ÷ pgbench, median over $rounds rounds (target ≥ 1.0):"
for key in $(printf "%s\n" "${!ratios[@]}" | sort); do
    python3 -c "import statistics,sys; print(f'  {sys.argv[1]:<18} {statistics.median(map(float, sys.argv[2:])):.3f}')" \
        "$key" ${ratios[$key]}
done
