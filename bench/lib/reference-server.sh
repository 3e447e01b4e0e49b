# Shared by the scripts that compare sockbench with the C reference client: builds
# sockbench and bench/ref/ref.c, and starts one `sockbench serve` on a unix socket
# and on loopback TCP in a temporary directory, stopped by its PID and removed on
# exit. Source it after setting `pin` (a command prefix such as "taskset -c 0").
# Sets: sb, work, server_pid, addr[unix], addr[tcp].

cargo build --release --quiet
sb=target/release/sockbench
mkdir -p bench/ref/build
gcc -O2 -Wall -o bench/ref/build/ref bench/ref/ref.c

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

$pin "$sb" serve --listen "unix:$work/sb.sock" --listen tcp:127.0.0.1:0 >"$work/serve.out" &
server_pid=$!
for _ in $(seq 100); do grep -q '^ready$' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready$' "$work/serve.out" || { echo "server did not start" >&2; exit 1; }
declare -A addr
addr[unix]=$(grep '^listening unix:' "$work/serve.out" | cut -d' ' -f2)
addr[tcp]=$(grep '^listening tcp:' "$work/serve.out" | cut -d' ' -f2)
