# Shared by the pgbench comparisons: builds sockbench and starts one throwaway
# PostgreSQL cluster (TLS on with an ECDSA P-256 certificate) in a temporary directory
# removed on exit, with the server stopped by its PID. Loopback and the socket admit
# only the unprivileged role foo (database foo) by md5 with a random password, which
# both clients read from PGPASSWORD (this script's environment, which other accounts
# cannot read), as sockbench's own cluster does; the superuser, named after the
# server's OS account, is admitted by peer authentication alone, so no other local
# user reaches either while the benchmark runs.
# Source it after setting PIN_DEFAULT (a CPU number, or none).
# Sets: bindir, sb, pin (command prefix), work, port, host[T], sslmode[T].

bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$bindir/pgbench" ] || { echo "pgbench not found; set PG_BINDIR" >&2; exit 1; }

cargo build --release --quiet
sb=$PWD/target/release/sockbench

pin_cpu=${PIN_CPU:-$PIN_DEFAULT}
pin=()
if [ "$pin_cpu" != none ]; then pin=(taskset -c "$pin_cpu"); fi
as_server=("${pin[@]}")
admin=$(id -un)
if [ "$(id -u)" = 0 ]; then
    as_server+=(setpriv --reuid=postgres --regid=postgres --clear-groups)
    admin=postgres
fi

PGPASSWORD=$(openssl rand -hex 16)
export PGPASSWORD
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

mkdir -m 700 "$work/sock"
[ ${#as_server[@]} -gt 0 ] && chown postgres: "$work" "$work/sock"
"${as_server[@]}" "$bindir/initdb" -D "$work/data" -U "$admin" --auth-local=peer --auth-host=reject \
    --no-sync >"$work/initdb.log" 2>&1
cat >"$work/data/pg_hba.conf" <<HBA
local all $admin peer
local foo foo md5
host foo foo 127.0.0.1/32 md5
HBA
openssl req -new -x509 -nodes -days 1 -subj /CN=localhost \
    -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$work/data/server.key" -out "$work/data/server.crt" 2>/dev/null
chmod 600 "$work/data/server.key"
[ ${#as_server[@]} -gt 0 ] && chown postgres: "$work/data/server.key" "$work/data/server.crt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as_server[@]}" "$bindir/postgres" -D "$work/data" -c listen_addresses=127.0.0.1 -c port="$port" \
    -c unix_socket_directories="$work/sock" -c ssl=on -c fsync=off -c max_connections=200 \
    >"$work/postgres.log" 2>&1 &
pg_pid=$! # setpriv and taskset exec, so this is the postmaster's PID
for _ in $(seq 100); do "$bindir/pg_isready" -q -h "$work/sock" -p "$port" && break; sleep 0.1; done
"$bindir/pg_isready" -q -h "$work/sock" -p "$port" || { cat "$work/postgres.log" >&2; exit 1; }
"${as_server[@]}" "$bindir/psql" -X -q -h "$work/sock" -p "$port" -U "$admin" -d postgres \
    -c "SET password_encryption = 'md5'" -c "CREATE ROLE foo LOGIN PASSWORD '$PGPASSWORD'" \
    -c "CREATE DATABASE foo OWNER foo" >/dev/null
echo "SELECT 1;" >"$work/select1.sql"

declare -A host sslmode
host[unix]=$work/sock; sslmode[unix]=disable
host[tcp]=127.0.0.1;   sslmode[tcp]=disable
host[tls]=127.0.0.1;   sslmode[tls]=require

# The URL sockbench gets for a transport.
url_of() {
    echo "postgres://foo@/foo?host=${host[$1]}&port=$port&sslmode=${sslmode[$1]}"
}
