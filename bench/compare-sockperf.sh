#!/usr/bin/env bash
# Does sockbench's pingpong time a round trip as sockperf does? Measures the 64 B round
# trip (TCP; UDP on the udp path) on each path of TRANSPORTS (default "tcp veth bridge
# published udp") with both tools, placement held equal, for ROUNDS rounds (default
# 5), in each placement of PLACEMENTS (default "same split"); each line is a pair run
# back to back, which tool goes first alternating from round to round:
#   sockperf ping-pong --tcp -m 64 -t SOCKPERF_TIME -i ADDR -p PORT   (TRIALS runs;
#       on udp without --tcp: UDP is sockperf's default)
#   sockbench sockets --workloads pingpong --transports PATH --sizes 64 \
#       --placement same|split --trials TRIALS
# and prints per line each tool's median round trip, sockbench ÷ sockperf, and per
# path the median ratio over rounds with its spread (lowest-highest). Target: within
# 1.1× (0.91-1.1).
#
# The paths, for sockperf's server (a twin of sockbench's, bench/lib/twin-network.sh;
# sockbench builds its own network for each of its runs, src/container/):
#   tcp        the host's 127.0.0.1, client and server in the host's namespace;
#   veth       the server in a network namespace of its own, reached from the host
#              by its address over a veth pair (198.19.255.2);
#   bridge     the same server namespace reached from a client namespace across a
#              Linux bridge in a third namespace (198.19.255.10; sockperf's client
#              runs in the client namespace, through nsenter);
#   published  the host's 127.0.0.1:PORT, DNAT to the server's veth address (an
#              nftables table of its own, sockbench_bench, masquerade out of the veth
#              pair, route_localnet on its host end);
#   udp        the host's 127.0.0.1 over UDP, client and server in the host's
#              namespace (sockbench's udp transport).
# One sockperf server per path (`sockperf server --tcp -i ADDR -p PORT`, on udp
# without --tcp; started once, serving each run's connection or datagrams in turn), in
# the server namespace for the three container paths. Everything made is removed on
# every way out (the end, an error, Ctrl-C, SIGTERM): the servers, the nftables table,
# the host link, the namespaces, and what an interrupted sockbench leaves for its next
# run to sweep (its nftables table; its private directories, in a TMPDIR inside this
# script's directory). A SIGKILLed run leaves the table and its directory in TMPDIR
# (the namespaces, the link and the servers die with it, bench/lib/twin-network.sh);
# the next run removes the table.
# No unix-dgram path (nor unix, unix-seqpacket): sockperf 3.7 has no Unix domain
# sockets (its --help and man page know IP addresses only, -i ADDR -p PORT, UDP or
# TCP; they came after 3.7, Mellanox/sockperf#178, 2022), so sockbench's Unix
# transports are not anchored here.
#
# Placement is held equal, on the two CPUs CPUS (default: the first two this script
# may use, "A,B"):
#   same   client and server pinned together on one CPU;
#   split  client on one CPU, server on the other.
# sockbench is started under `taskset -c A,B` with --placement same or split: it pins
# its client thread and its server child (every thread) itself, and moves them every
# round (sockbench's rotation, src/cpu/affinity.rs): same, both on A then both on B;
# split, client A server B then client B server A. sockperf's TRIALS runs (default 2,
# even) take the same CPUs in the same order: its client started under taskset -c,
# its server moved with taskset -a -p before each run. Each line's figures are then
# the same statistic for both tools: the median over the TRIALS runs (sockbench:
# trials) of each one's median round trip. On these 2-vCPU VMs a wakeup on the other
# CPU costs 30-60 µs and decides a split round trip; same takes it out.
#
# Equal footing, and what still differs:
# - Both: one TCP connection (TCP_NODELAY on both ends: sockperf's default outside its
#   throughput mode, sockbench's always), or on udp one UDP socket at each end; one
#   64-byte message out, the same 64 bytes back, the next sent once the reply is read;
#   blocking send and receive on both ends, no busy polling (sockperf's server and
#   client use recvfrom() when given one address, -i; its default --mps is max in
#   ping-pong). 64 B is sockperf's whole message (-m counts its 14-byte header), on
#   udp one 64-byte datagram each way.
# - udp: sockperf's sockets are unconnected, sockbench's connected. sockperf's client
#   (3.7; its --help does not say, strace shows it) makes its socket and never calls
#   connect() or bind(): it sends each request with sendto() to the server's address
#   (bound to a port at its first send) and reads the reply with recvfrom(); its
#   server answers each with sendto() to the address it came from. sockbench's client
#   connect()s its socket to the server's, and its server answers from a socket of its
#   own connected to the client (src/sockets/server/datagram.rs): both send and
#   receive without an address, on a route the socket keeps, where an unconnected
#   send looks its route up every time. A datagram lost on the way would leave
#   sockperf's client waiting out its run; the script stops on any message sockperf
#   counts dropped, duplicated or out of order (none on loopback, one in flight).
# - Warm-up: sockperf (3.7) sends no warm-up message over TCP nor to one UDP address
#   (only to multicast groups; it prints "Warmup stage" all the same), sleeps 2 s once
#   connected (on udp, once its socket is made), then times -t seconds of round trips
#   and leaves out its first 400 ms and last 50 ms: with -t 1 its figures come from
#   about 0.55 s of round trips, and a run takes about 3.5 s (3.2 s on udp). sockbench
#   sends up to 1000 untimed round trips (at most 50 ms), then times 0.5 s.
# - A new connection (on udp, socket) per run (sockperf) and per trial (sockbench).
# - sockperf reports half a round trip, over UDP as over TCP: its "percentile 50.000"
#   and "avg-latency" are RTT/2 (each round trip's time, halved; --full-rtt would
#   print RTT). The RTT here is 2 × sockperf's figure.
# - sockbench runs a trial again when other processes disturbed it (at most twice,
#   within 1.5× its expected time); sockperf keeps whatever happened, unless it
#   found no round trip to report in its window ("No valid observations found", seen
#   on a busy host), when it is run again here (at most twice). The "reruns" column counts both (sockperf/
#   sockbench); on a busy host sockbench's favour it.
# - sockbench adds 4 counting rounds after its trials (kernel counters; their times
#   are not used), and builds its network at its start: its "seconds" are longer.
#
# Where the time goes: "cpu/rt" is each tool's CPU per round trip, client + server, µs
# (sockperf's client from the shell's `times` of it over all its messages, its server
# from /proc/PID/task/*/schedstat; sockbench's from its result file, over its timed
# loops). With both on one CPU (same), the mean round trip is at least that. "busy" is
# the share of one CPU the two kept busy together, CPU per round trip × round trips
# per second: on one CPU, well under 100% means other processes took the rest of
# it, and the round trip is theirs as much as the tool's; a ratio far from 1 with one
# tool's busy far below the other's says which one the host slowed.
#
# What to expect on these 2-vCPU VMs, measured 2026-11-27 with other builds and
# sockbench runs going: four runs of the defaults then, without udp (load average
# 2-10), had the median ratio within 1.1× on 8, 6, 5 and 8 of the 8 lines, each
# round's ratio ranging 0.3-5 with whatever shared the pinned CPUs at the time (same
# tcp's median: 0.99, 0.98, 1.79, 1.07 from run to run). Pooled over the 20 rounds,
# every line's median lay in 0.95-1.05, the 95% interval of its geometric mean held
# 1, and each tool's best round was within 10% of the other's. The round trip (each
# line's median over the 20): 8.3-10.2 µs on one CPU, 19.5-22 µs split. The CPU per
# round trip, sockbench's 0.8-1.1× sockperf's (whose figure counts its whole process,
# its start and the sorting of its samples included). Only a quiet machine (load < 1)
# gives 5-round ratios to hold against the target to better than about ±20%.
# udp, one run of 5 rounds (TRANSPORTS=udp, load average 1.6-2.7): median ratio 0.97
# (0.95-0.98) on one CPU, round trip 11.2 µs sockperf, 10.8 µs sockbench, CPU per
# round trip 11.9/11.2 µs; split 0.94 (0.71-0.96), either tool's round trip 21-32 µs
# from round to round. Both within 1.1×.
#
# As root (namespaces, links, nftables). SOCKBENCH names the binary (default: built
# here with cargo, target/release/sockbench), SOCKPERF sockperf's. Wall time about
# ROUNDS × placements × paths × (TRIALS × (SOCKPERF_TIME + 2.5 s) + sockbench's run,
# about (TRIALS + 4) × 0.6 s + 1 s): with the defaults, 50 lines in about 12 minutes.
set -euo pipefail
# A failure inside $(…) ends the script too.
shopt -s inherit_errexit
if [ -n "${SOCKBENCH:-}" ]; then
    sb=$(realpath "$SOCKBENCH")
    cd "$(dirname "$0")/.."
else
    cd "$(dirname "$0")/.."
    cargo build --release --quiet
    sb=$PWD/target/release/sockbench
fi
[ -x "$sb" ] || { echo "no sockbench binary at $sb (SOCKBENCH)" >&2; exit 1; }
sockperf=${SOCKPERF:-$(command -v sockperf || true)}
[ -n "$sockperf" ] || { echo "sockperf is needed: apt-get install sockperf" >&2; exit 1; }
sockperf=$(realpath "$sockperf")
for program in ip nft nsenter unshare setpriv taskset python3; do
    command -v "$program" >/dev/null || {
        echo "$program is needed (iproute2, nftables, util-linux, python3)" >&2
        exit 1
    }
done
[ "$(id -u)" = 0 ] || { echo "run as root: it builds network namespaces, links and NAT" >&2; exit 1; }

rounds=${ROUNDS:-5}
transports=${TRANSPORTS:-tcp veth bridge published udp}
placements=${PLACEMENTS:-same split}
trials=${TRIALS:-2}
sp_time=${SOCKPERF_TIME:-1}
cpus=${CPUS:-$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')}
IFS=, read -r cpu_a cpu_b <<<"$cpus"
cpu_b=${cpu_b:-}
if [ $((trials % 2)) != 0 ] || [ "$trials" -lt 2 ]; then
    echo "TRIALS must be even (2, 4, …): the runs take the two CPUs in turn" >&2
    exit 2
fi
for t in $transports; do
    case $t in tcp | veth | bridge | published | udp) ;; *)
        echo "unknown path $t (tcp, veth, bridge, published, udp)" >&2; exit 2 ;;
    esac
done
for p in $placements; do
    case $p in same | split) ;; *) echo "unknown placement $p (same, split)" >&2; exit 2 ;; esac
done
if [ -z "$cpu_b" ] || [ "$cpu_a" = "$cpu_b" ]; then
    echo "two CPUs are needed (CPUS=A,B; this script may use $cpus)" >&2
    exit 2
fi
# Whatever outlives this (a server that stopped answering) is stopped.
sp_limit=$((sp_time + 10))
sb_limit=$((60 + trials * 10))

# shellcheck source=bench/lib/twin-network.sh
source bench/lib/twin-network.sh
declare -A server_pid target client_ns_of

# sockbench's own nftables tables (sockbench_N), and those there at the start; only
# where sockbench makes them, for published (the twin uses nftables then too, so
# listing them loads nothing into the kernel that the run would not).
publishes=
for t in $transports; do [ "$t" = published ] && publishes=1; done
sockbench_tables() {
    [ -n "$publishes" ] || return 0
    nft list tables ip | sed -n 's/^table ip \(sockbench_[0-9]*\)$/\1/p'
}
tables_at_start=$(sockbench_tables)

work=$(mktemp -d "${TMPDIR:-/tmp}/sockbench-sockperf-XXXXXX")
cleanup() {
    set +e
    local pid table
    for pid in "${server_pid[@]}"; do
        { kill "$pid" && wait "$pid"; } 2>/dev/null
    done
    server_pid=()
    twin_network_down
    # An interrupted sockbench (Ctrl-C, SIGTERM) leaves its nftables table for its next
    # run to sweep: one made since this script started whose host link sbk<N>h is
    # gone is abandoned (sockbench's own rule, src/container/sweep.rs), and removed.
    # Its link goes with its namespace, which the kernel removes a moment after the
    # run ends: waited for, a few seconds at most.
    for table in $(sockbench_tables); do
        grep -qx "$table" <<<"$tables_at_start" && continue
        for _ in $(seq 30); do
            [ -e /sys/class/net/sbk"${table#sockbench_}"h ] || break
            sleep 0.1
        done
        [ -e /sys/class/net/sbk"${table#sockbench_}"h ] && continue
        nft delete table ip "$table" &&
            echo "removed nftables table ip $table, left by an interrupted sockbench" >&2
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# sockperf is run by this name, so that its command line names the work directory.
ln -s "$sockperf" "$work/sockperf"
sp=$work/sockperf
# sockbench's TMPDIR: the private directories an interrupted sockbench leaves for its
# next run to sweep go with this script's.
mkdir "$work/tmp"

# sockperf's protocol option for PATH, in the array proto: --tcp, or none on udp
# (UDP, sockperf's default).
protocol_of() { # PATH
    proto=(--tcp)
    [ "$1" != udp ] || proto=()
}

# Starts a sockperf server for PATH in the namespace NS (the host's when empty) on
# ADDR:PORT and waits until it listens (on udp: until its socket is bound). In the
# script's own shell (its death kills the server). Returns 1 when the port was taken.
start_server() { # PATH NS ADDR PORT
    local t=$1 ns=$2 addr=$3 port=$4 prefix=() proto i pid listening sockets=-t
    [ -n "$ns" ] && prefix=(nsenter --net=/proc/"$ns"/ns/net --)
    protocol_of "$t"
    [ "$t" != udp ] || sockets=-u
    setpriv --pdeathsig KILL "${prefix[@]}" "$sp" server "${proto[@]}" -i "$addr" -p "$port" \
        >"$work/server-$t.log" 2>&1 &
    pid=$!
    server_pid[$t]=$pid
    for i in $(seq 100); do
        if ! kill -0 "$pid" 2>/dev/null; then
            unset "server_pid[$t]"
            return 1
        fi
        listening=$(in_ns "$ns" ss -Hlnp "$sockets" "src $addr:$port")
        [[ $listening == *"pid=$pid,"* ]] && return 0
        sleep 0.05
    done
    echo "sockperf server for $t did not listen on $addr:$port: $(tail -3 "$work/server-$t.log")" >&2
    exit 1
}

# A free TCP or UDP port of the host's 127.0.0.1 (taken again by the server started on
# it next: start_server checks that its own process holds it).
free_port() { # tcp|udp
    python3 -c 'import socket, sys
s = socket.socket(type=socket.SOCK_DGRAM if sys.argv[1] == "udp" else socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' "$1"
}

needs_network=
for t in $transports; do
    case $t in tcp | udp) ;; *) needs_network=1 ;; esac
done
[ -n "$needs_network" ] && twin_network_up
for t in $transports; do
    case $t in
        tcp | udp)
            for _ in 1 2 3 4 5; do
                port=$(free_port "$t")
                start_server "$t" "" 127.0.0.1 "$port" && break
            done
            [ -n "${server_pid[$t]:-}" ] || { echo "no free port for sockperf's $t server" >&2; exit 1; }
            client_ns_of[$t]="" target[$t]="127.0.0.1 $port" ;;
        veth)
            start_server veth "$server_ns" "$veth_addr" 11111
            client_ns_of[veth]="" target[veth]="$veth_addr 11111" ;;
        bridge)
            start_server bridge "$server_ns" "$bridge_addr" 11112
            client_ns_of[bridge]=$client_ns target[bridge]="$bridge_addr 11112" ;;
        published)
            start_server published "$server_ns" "$veth_addr" 11113
            twin_publish 11113
            client_ns_of[published]="" target[published]="127.0.0.1 $REPLY" ;;
    esac
done

# The client's and the server's CPU of run I (from 0) in PLACEMENT, as sockbench's
# rotation gives them round by round.
cpus_of() { # PLACEMENT I
    local first=$cpu_a second=$cpu_b
    [ $(($2 % 2)) = 1 ] && first=$cpu_b second=$cpu_a
    if [ "$1" = same ]; then echo "$first $first"; else echo "$first $second"; fi
}
load1() { cut -d' ' -f1 /proc/loadavg; }
# The CPU time so far of PID (every thread), ns.
cpu_ns() { awk '{ s += $1 } END { printf "%.0f\n", s }' /proc/"$1"/task/*/schedstat; }
# Seconds since START (an $EPOCHREALTIME).
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$EPOCHREALTIME"; }

# sockperf's half of a line: TRIALS runs; prints "RTT_US MEAN_US CPU_US BUSY RERUNS":
# the median over the runs of each run's median round trip and mean round trip (2 ×
# what sockperf prints), of its CPU per round trip, client + server, and of the share
# of one CPU they kept busy (that CPU × its round trips per second); and how many runs
# were run again because sockperf found no round trip to report in its window (it
# leaves out its first 400 ms and last 50 ms): at most 2 more runs each, as
# sockbench's reruns.
sockperf_run() { # PATH PLACEMENT
    local t=$1 p=$2 i cc sc addr port s0 s1 out figures prefix=() proto runs="" reruns=0 tries
    read -r addr port <<<"${target[$t]}"
    protocol_of "$t"
    [ -n "${client_ns_of[$t]}" ] && prefix=(nsenter --net=/proc/"${client_ns_of[$t]}"/ns/net --)
    for ((i = 0; i < trials; i++)); do
        read -r cc sc <<<"$(cpus_of "$p" "$i")"
        taskset -a -p -c "$sc" "${server_pid[$t]}" >/dev/null
        for tries in 1 2 3; do
            s0=$(cpu_ns "${server_pid[$t]}")
            # The shell's `times` after the run gives its children's user and system
            # time: sockperf's client alone (nsenter and taskset exec it).
            out=$( (rc=0
                timeout --foreground -k 5 "$sp_limit" "${prefix[@]}" taskset -c "$cc" \
                    "$sp" ping-pong "${proto[@]}" -i "$addr" -p "$port" -m 64 -t "$sp_time" || rc=$?
                times
                exit "$rc") 2>&1) || {
                echo "sockperf ping-pong failed on $t ($addr:$port): $(tail -5 <<<"$out")" >&2
                exit 1
            }
            s1=$(cpu_ns "${server_pid[$t]}")
            printf '%s\n' "$out" >"$work/sockperf.out"
            figures=$(python3 - "$t" "$((s1 - s0))" "$work/sockperf.out" <<'PY'
import re, sys
path, server_ns = sys.argv[1], int(sys.argv[2])
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[3]).read()).strip()
if "No valid observations found" in text:
    print("none")
    sys.exit()
def one(pattern):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"sockperf on {path}: no '{pattern}' in its output:\n{text}")
    return m.groups()
half_p50, = one(r"percentile 50\.000 = +([0-9.]+)$")
half_avg, = one(r"avg-latency=([0-9.]+)")
sent, = one(r"\[Total Run\].*SentMessages=(\d+)")
lost = one(r"# dropped messages = (\d+); # duplicated messages = (\d+); # out-of-order messages = (\d+)")
if any(int(x) for x in lost):
    sys.exit(f"sockperf on {path} lost messages (dropped, duplicated, out of order: {lost})")
# `times`: children's "XmY.YYYs XmY.YYYs" on the last line.
client_s = sum(float(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([0-9.]+)s", text.splitlines()[-1]))
cpu_us = (client_s * 1e9 + server_ns) / int(sent) / 1e3
valid_s, valid_n = one(r"\[Valid Duration\] RunTime=([0-9.]+) sec;.*ReceivedMessages=(\d+)")
busy = cpu_us * int(valid_n) / float(valid_s) / 1e4
# sockperf prints half a round trip (latency = RTT/2): twice it is the round trip.
print(f"{2 * float(half_p50):.3f} {2 * float(half_avg):.3f} {cpu_us:.2f} {busy:.1f}")
PY
)
            [ "$figures" != none ] && break
            [ "$tries" = 3 ] && {
                echo "sockperf found no round trip in its window on $t, 3 runs in a row:" >&2
                tail -4 "$work/sockperf.out" >&2
                exit 1
            }
            reruns=$((reruns + 1))
        done
        runs+="$figures;"
    done
    python3 - "$runs" "$reruns" <<'PY'
import statistics, sys
runs = [list(map(float, r.split())) for r in sys.argv[1].split(";") if r.strip()]
print(" ".join(f"{statistics.median(r[i] for r in runs):.2f}" for i in range(4)), sys.argv[2])
PY
}

# sockbench's half: prints "RTT_US MEAN_US CPU_US BUSY RERUNS" from its result file:
# the median over its trials of each trial's median and mean round trip, of its CPU per
# round trip (client + server) and of its round trips per second (BUSY: the two
# multiplied, a share of one CPU), and how many trials it ran again. Checks that every
# trial ran on the CPUs the placement gives.
sockbench_run() { # PATH PLACEMENT
    local t=$1 p=$2
    rm -f "$work/sb.json"
    TMPDIR=$work/tmp timeout --foreground -k 5 "$sb_limit" taskset -c "$cpu_a,$cpu_b" "$sb" sockets \
        --workloads pingpong --transports "$t" --sizes 64 --placement "$p" \
        --trials "$trials" --quiet --json "$work/sb.json" >/dev/null 2>"$work/sb.err" || {
        echo "sockbench sockets failed on $t: $(tail -5 "$work/sb.err")" >&2
        exit 1
    }
    python3 - "$work/sb.json" "$t" "$p" "$cpu_a" "$cpu_b" <<'PY'
import json, statistics, sys
path, t, placement, a, b = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
records = [r for r in json.load(open(path))["results"]
           if r["experiment"] == "sockets.pingpong" and r["transport"] == t]
if len(records) != 1:
    sys.exit(f"{path}: {len(records)} pingpong records over {t}")
r = records[0]
m = r["metrics"]
for i, trial in enumerate(r["trials"]):
    first, second = (a, b) if i % 2 == 0 else (b, a)
    want = (first, [first]) if placement == "same" else (first, [second])
    got = (trial["cpu"].get("client_cpu"), trial["cpu"].get("server_cpus"))
    if got[0] != want[0] or got[1] not in (None, want[1]):
        print(f"sockbench's trial {i} on {t} ran client, server on {got}, not {want}", file=sys.stderr)
cpu = m.get("cpu", {})
cpu_ns = cpu.get("client", {}).get("cpu_ns", float("nan")) + cpu.get("server", {}).get("cpu_ns", float("nan"))
reruns = sum(trial.get("reruns", 0) for trial in r["trials"])
busy = cpu_ns * m["ops_per_s"] / 1e7
print(f"{m['rtt_ns']['p50'] / 1e3:.2f} {m['rtt_ns']['mean'] / 1e3:.2f} {cpu_ns / 1e3:.2f} {busy:.1f} {reruns}")
PY
}

ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

echo "sockbench: $sb"
protocols=
for t in $transports; do [ "$t" = udp ] && protocols=" (on udp without --tcp: UDP)"; done
echo "sockperf: $sockperf ($("$sockperf" --version 2>&1 | head -1 | sed 's/.*version //')):" \
    "ping-pong --tcp -m 64 -t $sp_time$protocols, $trials runs a line; sockbench --trials $trials"
echo "placement: same = client and server on one CPU, split = client on one CPU, server on"
echo "  the other; CPUs $cpu_a,$cpu_b, each tool's runs taking them in turn (same: $cpu_a then" \
    "$cpu_b; split: $cpu_a→$cpu_b then $cpu_b→$cpu_a)"
echo "RTT: median round trip, µs, the median over the runs; sockperf prints half a round trip"
echo "  (its latency = RTT/2, percentile 50.000), so its RTT here is 2 × that"
printf '%-5s %-6s %-10s %9s %9s %7s %15s %13s %9s %7s %11s %5s\n' round place path sockperf \
    sockbench ratio 'mean sp/sb' 'cpu/rt sp/sb' 'busy' 'reruns' 'seconds' load
declare -A sp_rtts sb_rtts ratios mean_ratios cpu_cols loads
started=$EPOCHREALTIME
for round in $(seq "$rounds"); do
  for placement in $placements; do
    for t in $transports; do
        load=$(load1)
        loads[$placement]+="$load "
        if [ $((round % 2)) = 1 ]; then order=(sockperf sockbench); else order=(sockbench sockperf); fi
        for tool in "${order[@]}"; do
            t0=$EPOCHREALTIME
            # Run in this shell, not in $(…): on Ctrl-C or SIGTERM it waits for the tool
            # to end before the trap cleans up after both.
            if [ "$tool" = sockperf ]; then
                sockperf_run "$t" "$placement" >"$work/figures"
                read -r p_rtt p_mean p_cpu p_busy p_reruns <"$work/figures"
                p_s=$(since "$t0")
            else
                sockbench_run "$t" "$placement" >"$work/figures"
                read -r s_rtt s_mean s_cpu s_busy s_reruns <"$work/figures"
                s_s=$(since "$t0")
            fi
        done
        r=$(ratio "$s_rtt" "$p_rtt")
        mr=$(ratio "$s_mean" "$p_mean")
        key="$placement $t"
        sp_rtts[$key]+="$p_rtt "
        sb_rtts[$key]+="$s_rtt "
        ratios[$key]+="$r "
        mean_ratios[$key]+="$mr "
        cpu_cols[$key]+="$p_cpu $s_cpu $p_busy $s_busy;"
        printf '%-5s %-6s %-10s %7.2fµs %7.2fµs %7s %6.1f/%-6.1fµs %5.1f/%-5.1fµs %3.0f/%-3.0f%% %3s/%-3s %5s/%-5s %5s\n' \
            "$round" "$placement" "$t" "$p_rtt" "$s_rtt" "$r" "$p_mean" "$s_mean" "$p_cpu" \
            "$s_cpu" "$p_busy" "$s_busy" "$p_reruns" "$s_reruns" "$p_s" "$s_s" "$load"
    done
  done
done

echo
echo "median over $rounds rounds (RTT, µs; ratio = sockbench ÷ sockperf, the median of each"
echo "round's ratio, with its spread lowest-highest; target within 1.1×, 0.91-1.1):"
printf '  %-6s %-10s %9s %9s %21s %20s %13s %9s\n' place path sockperf sockbench ratio \
    'mean ratio' 'cpu/rt sp/sb' 'busy'
for p in $placements; do
    for t in $transports; do
        key="$p $t"
        python3 - "$p" "$t" "${sp_rtts[$key]}" "${sb_rtts[$key]}" "${ratios[$key]}" \
            "${mean_ratios[$key]}" "${cpu_cols[$key]}" <<'PY'
import statistics, sys
p, t, sp, sb, ratios, means, cpu = sys.argv[1:]
med = lambda xs: statistics.median(map(float, xs.split()))
spread = lambda xs: (lambda v: f"{statistics.median(v):.3f} ({v[0]:.3f}-{v[-1]:.3f})")(sorted(map(float, xs.split())))
r = med(ratios)
word = "within 1.1×" if 1 / 1.1 <= r <= 1.1 else "sockbench slower" if r > 1.1 else "sockbench faster"
rows = [list(map(float, c.split())) for c in cpu.split(";") if c.strip()]
c = [statistics.median(row[i] for row in rows) for i in range(4)]
print(f"  {p:<6} {t:<10} {med(sp):7.2f}µs {med(sb):7.2f}µs {spread(ratios):>21} {spread(means):>20} "
      f"{c[0]:5.1f}/{c[1]:<5.1f}µs {c[2]:3.0f}/{c[3]:<3.0f}%  {word}")
PY
    done
done
echo "1-minute load average when each pair started (lowest-highest):"
for p in $placements; do
    # shellcheck disable=SC2086 # a list of numbers
    python3 -c "import sys; v = sorted(map(float, sys.argv[2:])); print(f'  {sys.argv[1]:<6} {v[0]:.2f}-{v[-1]:.2f}')" "$p" ${loads[$p]}
done
echo "wall time: $(since "$started") s"
