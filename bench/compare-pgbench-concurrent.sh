#!/usr/bin/env bash
# Is sockbench's concurrent client as fast as pgbench's? Starts one throwaway cluster
# (trust authentication, TLS on), then on each transport (unix, tcp, tls), for ROUNDS
# rounds (default 2), alternately runs
#   pgbench -n -f select1.sql -c 10 -j 2 -T 10
#   sockbench postgres --experiments concurrent --clients 10 --threads 2 --duration 10s
# and prints both TPS and sockbench ÷ pgbench (target ≥ 1.0), with the median over
# rounds. CLIENTS, THREADS and SECONDS_PER_RUN change the load; TRANSPORTS the list.
#
# Nothing is pinned by default (PIN_CPU=N pins everything to one CPU): two client
# threads on two cores is the point of this comparison.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-2}
transports=${TRANSPORTS:-unix tcp tls}
seconds=${SECONDS_PER_RUN:-10}
clients=${CLIENTS:-10}
threads=${THREADS:-2}

PIN_DEFAULT=none
# shellcheck source=bench/lib/throwaway-cluster.sh
source bench/lib/throwaway-cluster.sh

pgbench_tps() { # TRANSPORT
    PGSSLMODE=${sslmode[$1]} PGGSSENCMODE=disable "${pin[@]}" "$bindir/pgbench" -n \
        -c "$clients" -j "$threads" -T "$seconds" -f "$work/select1.sql" \
        -h "${host[$1]}" -p "$port" -U foo foo 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

sockbench_tps() { # TRANSPORT
    "${pin[@]}" "$sb" postgres --url "$1=$(url_of "$1")" --experiments concurrent \
        --clients "$clients" --threads "$threads" --duration "${seconds}s" --trials 1 \
        --json "$work/sb.json" >/dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['metrics']['tps'])" \
        "$work/sb.json"
}

printf '%-5s %-9s %12s %12s %7s\n' round transport pgbench sockbench ratio
declare -A ratios
for round in $(seq "$rounds"); do
    for t in $transports; do
        pg=$(pgbench_tps "$t")
        sbt=$(sockbench_tps "$t")
        r=$(python3 -c "print(f'{$sbt/$pg:.3f}')")
        ratios[$t]+="$r "
        printf '%-5s %-9s %10.0f/s %10.0f/s %7s\n' "$round" "$t" "$pg" "$sbt" "$r"
    done
done

echo
echo "sockbench ÷ pgbench TPS, $clients clients on $threads threads, median over $rounds rounds (target ≥ 1.0):"
for t in $transports; do
    python3 -c "import statistics,sys; print(f'  {sys.argv[1]:<6} {statistics.median(map(float, sys.argv[2:])):.3f}')" \
        "$t" ${ratios[$t]}
done
