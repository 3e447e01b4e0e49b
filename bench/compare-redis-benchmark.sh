#!/usr/bin/env bash
# Is sockbench's Redis client loop as fast as redis-benchmark's? Starts one throwaway
# redis-server with the settings sockbench's own uses (src/redis/config.rs: a Unix
# socket in a 0700 directory, 127.0.0.1, a TLS port with a fresh ECDSA P-256
# certificate, no RDB/AOF, the default user off and one ACL user `sockbench` with a
# random password, given as its SHA-256 in the config file), then for ROUNDS rounds
# (default 3), on each transport of TRANSPORTS (default "unix tcp tls") and each
# client count of CLIENTS (default "1 50"), alternately:
#   - redis-benchmark -t ping,get -c C -P 1 -n REQUESTS --csv   (over -s SOCKET,
#     -h 127.0.0.1 -p PORT, or --tls --insecure -p TLS_PORT)
#   - sockbench's PING and GET round trips with C clients against the same server
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
# As root the server runs as the 'redis' account (else 'nobody'). PIN_CPU (a CPU
# number, default none) pins server and clients to one CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
requests=${REQUESTS:-100000}
transports=${TRANSPORTS:-unix tcp tls}
clients_list=${CLIENTS:-1 50}
value_bytes=${VALUE_BYTES:-64}

redis_server=${REDIS_SERVER:-$(command -v redis-server || true)}
[ -n "$redis_server" ] && command -v redis-benchmark >/dev/null && command -v redis-cli >/dev/null || {
    echo "redis-server, redis-cli and redis-benchmark are needed: apt-get install redis-server redis-tools" >&2
    exit 1
}

cargo build --release --quiet
sb=$PWD/target/release/sockbench

pin_cpu=${PIN_CPU:-none}
pin=()
if [ "$pin_cpu" != none ]; then pin=(taskset -c "$pin_cpu"); fi
as_server=("${pin[@]}")
account=
if [ "$(id -u)" = 0 ]; then
    account=redis
    id redis >/dev/null 2>&1 || account=nobody
    as_server+=(setpriv --reuid="$account" --regid="$(id -g "$account")" --clear-groups)
fi

work=$(mktemp -d /tmp/sockbench-redisbench-XXXXXX)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# The top directory stays ours; the server account's own is srv/ (0700).
chmod 711 "$work"
srv=$work/srv
mkdir -m 700 "$srv"
password=$(openssl rand -hex 16)
hash=$(printf '%s' "$password" | sha256sum | cut -d' ' -f1)
openssl req -new -x509 -nodes -days 1 -subj /CN=localhost \
    -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$srv/server.key" -out "$srv/server.crt" 2>/dev/null
read -r port tls_port <<<"$(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')"
socket=$srv/redis.sock
# NOTE: the same settings as src/redis/config.rs; change both together.
(umask 077 && cat >"$srv/redis.conf") <<CONF
daemonize no
logfile ""
bind 127.0.0.1
protected-mode yes
port $port
unixsocket "$socket"
unixsocketperm 700
tls-port $tls_port
tls-cert-file "$srv/server.crt"
tls-key-file "$srv/server.key"
tls-auth-clients no
dir "$srv"
pidfile "$srv/redis.pid"
save ""
appendonly no
enable-debug-command no
enable-module-command no
enable-protected-configs no
user default off
user sockbench reset on #$hash ~* resetchannels -@all +ping +echo +get +set +mget +mset +setrange +getrange +strlen +exists +del +auth +hello +select +client|setname
CONF
chmod 600 "$srv"/*
[ -n "$account" ] && chown -R "$account:" "$srv"

"${as_server[@]}" "$redis_server" "$srv/redis.conf" >"$work/redis.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
    redis-cli -s "$socket" PING 2>/dev/null | grep -q NOAUTH && break
    sleep 0.1
done
redis-cli -s "$socket" PING 2>/dev/null | grep -q NOAUTH || {
    echo "redis-server did not start: $(tail -3 "$work/redis.log")" >&2
    exit 1
}
auth=(--user sockbench -a "$password")
redis-cli -s "$socket" "${auth[@]}" --no-auth-warning \
    SET 'key:__rand_int__' "$(head -c "$value_bytes" /dev/zero | tr '\0' x)" >/dev/null

declare -A where=(
    [unix]="-s $socket"
    [tcp]="-h 127.0.0.1 -p $port"
    [tls]="--tls --insecure -h 127.0.0.1 -p $tls_port"
)

# redis-benchmark's requests/s: "PING GET".
benchmark_rps() { # TRANSPORT CLIENTS
    local t=$1 c=$2 out
    # shellcheck disable=SC2086 # where[] holds several words
    out=$("${pin[@]}" redis-benchmark ${where[$t]} "${auth[@]}" -t ping,get -c "$c" -P 1 \
        -n "$requests" --csv 2>/dev/null)
    awk -F'","' '/^"PING_MBULK"/ { p = $2 } /^"GET"/ { g = $2 } END { print p, g }' <<<"$out"
}

# TODO(lead, once `sockbench redis` exists): sockbench's half. Run its PING and
# GET (VALUE_BYTES) round trips with CLIENTS clients on transport T against this
# server and print "PING_RPS GET_RPS" from its result file, for example:
#   "${pin[@]}" "$sb" redis --url "$t=$(url_of "$t")" --experiments ping,get \
#       --clients "$c" --value-bytes "$value_bytes" --json "$work/sb.json" >/dev/null
#   python3 -c '…["results"][…]["metrics"][…]' "$work/sb.json"
# where url_of gives unix://$socket, redis://sockbench@127.0.0.1:$port or
# rediss://sockbench@127.0.0.1:$tls_port, and the password reaches sockbench
# other than through its command line (it never takes one there). Until then it
# prints "- -" and no ratio is computed.
sockbench_rps() { # TRANSPORT CLIENTS
    : "$sb"
    echo "- -"
}

ratio() { # SOCKBENCH BENCHMARK
    if [ "$1" = - ]; then echo -; else python3 -c "print(f'{$1/$2:.3f}')"; fi
}

printf '%-5s %-5s %-7s %-4s %15s %15s %7s\n' round transport clients test redis-benchmark sockbench ratio
declare -A rb_rates sb_ratios
for round in $(seq "$rounds"); do
    for t in $transports; do
        for c in $clients_list; do
            read -r rb_ping rb_get <<<"$(benchmark_rps "$t" "$c")"
            read -r sb_ping sb_get <<<"$(sockbench_rps "$t" "$c")"
            for test in ping get; do
                rb_var=rb_$test sb_var=sb_$test
                rb=${!rb_var} s=${!sb_var}
                r=$(ratio "$s" "$rb")
                rb_rates[$t-$c-$test]+="$rb "
                [ "$r" != - ] && sb_ratios[$t-$c-$test]+="$r "
                printf '%-5s %-9s %-7s %-4s %13.0f/s %15s %7s\n' "$round" "$t" "$c" "$test" "$rb" "$s" "$r"
            done
        done
    done
done

echo
echo "median over $rounds rounds: redis-benchmark requests/s, and sockbench ÷ redis-benchmark"
echo "(target ≥ 0.95 at 1 client, ≥ 0.9 at 50):"
for t in $transports; do
    for c in $clients_list; do
        for test in ping get; do
            key=$t-$c-$test
            python3 -c "
import statistics, sys
key, rates, ratios = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
ratio = f'{statistics.median(map(float, ratios)):.3f}' if ratios else '- (TODO: sockbench half)'
print(f'  {key:<14} {statistics.median(map(float, rates)):10.0f}/s   {ratio}')" \
                "$key" "${rb_rates[$key]}" "${sb_ratios[$key]:-}"
        done
    done
done
