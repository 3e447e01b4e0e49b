# Shared by the scripts that measure a Redis server as a user's own: builds
# sockbench and starts one throwaway redis-server with the settings sockbench's own
# uses (src/redis/config.rs: a Unix socket in a 0700 directory, 127.0.0.1, a TLS
# port with a fresh ECDSA P-256 certificate, no RDB/AOF, one ACL user allowed only
# the commands measured, its random password given as its SHA-256), as the 'redis'
# account when root (else 'nobody'), in a temporary directory removed on exit, the
# server stopped by its PID. Sets key:__rand_int__ to value_bytes bytes (default 64).
# Sets: sb, work, server_pid, socket, port, tls_port, password, auth (redis-cli's
# arguments), url[T] (sockbench's --url for unix, tcp and tls).
redis_server=${REDIS_SERVER:-$(command -v redis-server || true)}
[ -n "$redis_server" ] && command -v redis-cli >/dev/null || {
    echo "redis-server and redis-cli are needed: apt-get install redis-server redis-tools" >&2
    exit 1
}

cargo build --release --quiet
sb=$PWD/target/release/sockbench

as_server=()
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
# NOTE: the same settings as src/redis/config.rs; change both together. One
# difference: the ACL rule sockbench gives its user `sockbench` is given here to
# the user `default`, so that redis-benchmark's `-a PASSWORD` and sockbench's
# REDISCLI_AUTH both log in with `AUTH PASSWORD`. Which user a command runs as
# costs nothing. And one addition: +info, so that sockbench finds the server's
# process (INFO server's process_id) as it does on a user's server, to pin it with
# --placement same and to count its CPU.
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
user default reset on #$hash ~* resetchannels -@all +ping +echo +get +set +mget +mset +setrange +getrange +strlen +exists +del +auth +hello +select +client|setname +info
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
auth=(-a "$password")
redis-cli -s "$socket" "${auth[@]}" --no-auth-warning \
    SET 'key:__rand_int__' "$(head -c "${value_bytes:-64}" /dev/zero | tr '\0' x)" >/dev/null

declare -A url=(
    [unix]="unix://$socket"
    [tcp]="redis://127.0.0.1:$port"
    [tls]="rediss://127.0.0.1:$tls_port"
)
