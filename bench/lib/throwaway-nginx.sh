# shellcheck shell=bash disable=SC2154 # sb, site_* and proxy_workers: set by the script
# Shared by the scripts that point another HTTP client at the servers of
# `sockbench proxy`: starts a twin of them, sockbench's app server
# (`$sb serve --http`, one Unix socket and one 127.0.0.1 port) and a throwaway nginx
# in front of it whose nginx.conf is the text src/proxy/nginx.rs writes, line for
# line. Both run as www-data when root (else nobody; as the current user when not
# root), with an empty environment, in a private temporary directory (0711, root's;
# nginx's own srv/ inside, 0700, the server account's), removed on exit; each process
# is stopped by its PID, on every way out (an error, Ctrl-C, SIGTERM).
#
# Why a twin and not sockbench's own servers: sockbench starts its nginx and app
# server inside its run and stops them when the run ends, and tells nobody their
# ports, so another client cannot reach the very same processes. The twin is the
# same nginx binary (found as sockbench finds it) with the same configuration text
# and the same app server binary with the same arguments, so what differs between
# the two clients' figures is the client.
#
# What differs from sockbench's own, none of it on a request's path: nginx's master
# is started here by setpriv, not inside a PID namespace of its own (so a master
# killed with SIGKILL would leave its workers: the stop below ends the workers by
# their PIDs too); the app server and nginx share one private directory instead of
# one each; and nginx has only the sites compared (no site that renews its upstream
# connection per request, which sockbench's also has and nothing here sends to).
#
# Before sourcing, set: sb (the sockbench binary, absolute), site_transports (a list
# of unix and tcp) and site_connections (a list of connection counts), and
# proxy_workers (nginx's worker processes).
# Sets: work (the private directory), app_pid, app_port (the app server's 127.0.0.1
# port), nginx_pid (the master), nginx_workers (their PIDs, space-separated),
# site_port["T C"] (nginx's port for the hop over transport T with C clients), and
# server_pids (every process of both, for placing them and counting their CPU).

# NOTE: the same search as nginx::find_program; change both together.
nginx_program=${NGINX:-}
if [ -z "$nginx_program" ]; then
    for d in /usr/sbin /usr/local/sbin /usr/local/nginx/sbin; do
        [ -x "$d/nginx" ] && { nginx_program=$d/nginx; break; }
    done
fi
nginx_program=${nginx_program:-$(command -v nginx || true)}
[ -n "$nginx_program" ] || {
    echo "nginx is needed: apt-get install nginx" >&2
    exit 1
}

# The server account, as nginx::server_account chooses it.
as_server=()
account=
account_args=()
if [ "$(id -u)" = 0 ]; then
    account=www-data
    id "$account" >/dev/null 2>&1 || account=nobody
    as_server=(setpriv --reuid="$account" --regid="$(id -g "$account")" --clear-groups)
    account_args=(--account "$account")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sockbench-wrkbench-XXXXXX")
app_pid=
nginx_pid=
nginx_workers=
# Stops a process by its PID: TERM, up to 5 s to go, then KILL.
stop_pid() { # PID
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
    # nginx first (TERM: its fast shutdown ends its workers), then any worker still
    # there, then the app server behind it.
    [ -n "$nginx_pid" ] && stop_pid "$nginx_pid"
    for pid in $nginx_workers; do kill -KILL "$pid" 2>/dev/null || true; done
    [ -n "$app_pid" ] && stop_pid "$app_pid"
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The top directory stays root's, passable by the server account (as sockbench's
# private directories are): the app server binds its socket here as root and hands
# it to the account (mode 0600); nginx's log is here, opened by this script.
chmod 711 "$work"
srv=$work/srv
mkdir -m 700 "$srv"
[ -n "$account" ] && chown "$account:" "$srv"

# Each server runs in a process group of its own, as sockbench's do, so that a
# Ctrl-C at the terminal reaches this script and the client running, and the
# servers are stopped by the cleanup, in order. A process group, not a session
# (setsid): with the kernel's autogroup scheduling (kernel.sched_autogroup_enabled,
# 1 on these VMs) each session shares a busy CPU as one group, and sockbench's
# servers stay in its session; a twin in sessions of its own would get a share of
# its own against other work, and wrk with it. (in_group forks nothing: the PID
# is the server's.)
in_group=(python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])')
# The app server, as src/proxy/app_process.rs starts it.
app_socket=$work/sockbench.sock
"${in_group[@]}" env -i "$sb" serve --http --listen "unix:$app_socket" --listen tcp:127.0.0.1:0 \
    "${account_args[@]}" </dev/null >"$work/app.out" 2>"$work/app.err" &
app_pid=$!
for _ in $(seq 150); do
    grep -qx ready "$work/app.out" 2>/dev/null && break
    kill -0 "$app_pid" 2>/dev/null || break
    sleep 0.1
done
grep -qx ready "$work/app.out" 2>/dev/null || {
    echo "the sockbench app server did not start: $(tail -3 "$work/app.err")" >&2
    exit 1
}
app_port=$(sed -n 's/^listening tcp:127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/app.out")

# One port per site, free a moment ago (as sockbench chooses them).
declare -A site_port
sites=()
for t in $site_transports; do
    for c in $site_connections; do sites+=("$t $c"); done
done
read -r -a ports <<<"$(python3 -c '
import socket, sys
held = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in held: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in held))' "${#sites[@]}")"

# NOTE: the text of config_text in src/proxy/nginx.rs, with its constants
# (WORKER_CONNECTIONS, WORKER_OPEN_FILES, LISTEN_BACKLOG, KEEPALIVE_REQUESTS,
# UPSTREAM_IDLE, TEMP_PATHS); change both together. Each site is the one sockbench
# makes for the same hop with C clients (Site::kept with C idle connections): its
# upstream connections kept, `keepalive` the larger of C and 16.
{
    echo "# Written by sockbench for one run: nothing else is read."
    echo "daemon off;"
    echo "master_process on;"
    echo "worker_processes $proxy_workers;"
    echo "worker_rlimit_nofile 8192;"
    echo "pid \"$srv/nginx.pid\";"
    echo "lock_file \"$srv/nginx.lock\";"
    echo "error_log stderr warn;"
    echo "events {"
    echo "    worker_connections 4096;"
    echo "}"
    echo "http {"
    echo "    access_log off;"
    echo "    keepalive_requests 1000000;"
    echo "    client_body_temp_path \"$srv/client_body\";"
    echo "    proxy_temp_path \"$srv/proxy\";"
    echo "    fastcgi_temp_path \"$srv/fastcgi\";"
    echo "    uwsgi_temp_path \"$srv/uwsgi\";"
    echo "    scgi_temp_path \"$srv/scgi\";"
    for i in "${!sites[@]}"; do
        read -r t c <<<"${sites[$i]}"
        site_port[${sites[$i]}]=${ports[$i]}
        case $t in
            unix) upstream="\"unix:$app_socket\"" ;;
            tcp) upstream=127.0.0.1:$app_port ;;
            *) echo "nginx reaches the app server over unix or tcp, not $t" >&2; exit 2 ;;
        esac
        echo "    upstream site_$i {"
        echo "        server $upstream;"
        echo "        keepalive $((c > 16 ? c : 16));"
        echo "        keepalive_requests 1000000;"
        echo "    }"
        echo "    server {"
        echo "        listen 127.0.0.1:${ports[$i]} backlog=4096;"
        echo "        location / {"
        echo "            proxy_pass http://site_$i;"
        echo "            proxy_http_version 1.1;"
        echo "            proxy_set_header Connection \"\";"
        echo "        }"
        echo "    }"
    done
    echo "}"
} >"$srv/nginx.conf"
chmod 600 "$srv/nginx.conf"
[ -n "$account" ] && chown "$account:" "$srv/nginx.conf"

# As sockbench starts it: told where everything is, so it reads nothing else, with
# an empty environment, its standard error the log.
(cd / && exec "${in_group[@]}" env -i "${as_server[@]}" "$nginx_program" -p "$srv/" -c "$srv/nginx.conf" \
    -e stderr </dev/null >"$work/nginx.log" 2>&1) &
nginx_pid=$!
ready=
for _ in $(seq 150); do
    kill -0 "$nginx_pid" 2>/dev/null || break
    nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ' || true)
    ready=yes
    for s in "${sites[@]}"; do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 \
            "http://127.0.0.1:${site_port[$s]}/?size=0" || true)
        [ "$code" = 200 ] || { ready=; break; }
    done
    [ -n "$ready" ] && [ "$(wc -w <<<"$nginx_workers")" -ge "$proxy_workers" ] && break
    ready=
    sleep 0.1
done
[ -n "$ready" ] || {
    echo "nginx did not serve every site: $(tail -3 "$work/nginx.log")" >&2
    exit 1
}
# The app server's port for the direct lines.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$app_port/?size=0" || true)
[ "$code" = 200 ] || { echo "the sockbench app server does not answer on 127.0.0.1:$app_port" >&2; exit 1; }
# shellcheck disable=SC2034,SC2206 # read by the script; lists of PIDs
server_pids=($app_pid $nginx_pid $nginx_workers)
