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

bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$bindir/pgbench" ] || { echo "pgbench not found; set PG_BINDIR" >&2; exit 1; }

cargo build --release --quiet
sb=$PWD/target/release/sockbench

# Server and clients share one CPU (PIN_CPU, default 0; PIN_CPU=none to let them
# roam). Unpinned, each round trip on these VMs costs either ~20 µs or ~100 µs,
# depending on whether the scheduler keeps client and backend on one CPU, which
# swamps any difference between the two clients.
pin=()
if [ "${PIN_CPU:-0}" != none ]; then pin=(taskset -c "${PIN_CPU:-0}"); fi
as_server=("${pin[@]}")
if [ "$(id -u)" = 0 ]; then
    as_server+=(setpriv --reuid=postgres --regid=postgres --clear-groups)
fi

work=$(mktemp -d /tmp/sockbench-pgbench-XXXXXX)
chmod 755 "$work"
pg_pid=
cleanup() {
    if [ -n "$pg_pid" ]; then
        kill -INT "$pg_pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pg_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/sock"
[ ${#as_server[@]} -gt 0 ] && chown postgres: "$work" "$work/sock"
"${as_server[@]}" "$bindir/initdb" -D "$work/data" -U foo -A trust --no-sync >"$work/initdb.log" 2>&1
openssl req -new -x509 -nodes -days 1 -subj /CN=localhost \
    -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$work/data/server.key" -out "$work/data/server.crt" 2>/dev/null
chmod 600 "$work/data/server.key"
[ ${#as_server[@]} -gt 0 ] && chown postgres: "$work/data/server.key" "$work/data/server.crt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as_server[@]}" "$bindir/postgres" -D "$work/data" -c listen_addresses=127.0.0.1 -c port="$port" \
    -c unix_socket_directories="$work/sock" -c ssl=on -c fsync=off >"$work/postgres.log" 2>&1 &
pg_pid=$! # setpriv and taskset exec, so this is the postmaster's PID
for _ in $(seq 100); do "$bindir/pg_isready" -q -h "$work/sock" -p "$port" && break; sleep 0.1; done
"$bindir/pg_isready" -q -h "$work/sock" -p "$port" || { cat "$work/postgres.log" >&2; exit 1; }
echo "SELECT 1;" >"$work/select1.sql"

declare -A host sslmode
host[unix]=$work/sock; sslmode[unix]=disable
host[tcp]=127.0.0.1;   sslmode[tcp]=disable
host[tls]=127.0.0.1;   sslmode[tls]=require

pgbench_tps() { # TRANSPORT [-C]
    local t=$1; shift
    PGSSLMODE=${sslmode[$t]} PGGSSENCMODE=disable "${pin[@]}" "$bindir/pgbench" -n "$@" -c 1 -T "$seconds" \
        -f "$work/select1.sql" -h "${host[$t]}" -p "$port" -U foo postgres 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

sockbench_rate() { # TRANSPORT EXPERIMENT METRIC
    local t=$1 url="postgres://foo@/postgres?host=${host[$1]}&port=$port&sslmode=${sslmode[$1]}"
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
