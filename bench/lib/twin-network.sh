# shellcheck shell=bash disable=SC2154 # work: set by the script
# A twin of the container's network sockbench builds (src/container/), in shell, for
# another tool's server and client: the same namespaces, links and NAT, made by the
# same programs (ip, nft) the same way, so that a round trip crosses the same kernel
# paths as sockbench's `veth`, `bridge` and `published` transports.
#
#   server   a network namespace of its own: eth0, the far end of a veth pair whose
#            host end is LINK (198.19.255.1/30 on the host, .2/30 inside), and eth1
#            on the bridge (198.19.255.10/29);
#   bridge   a namespace holding br0 with two veth ports, one to the server's eth1
#            and one to the client's eth0, as docker0 has one per container;
#   client   a namespace whose eth0 is on the bridge (198.19.255.11/29): a client run
#            there (in_ns "$client_ns" …) reaches the server across the bridge;
#   published  the server's port on the host's 127.0.0.1 through a DNAT rule in an
#            nftables table of its own (TABLE: hook output, masquerade of 127.0.0.0/8
#            leaving through LINK, route_localnet on LINK), a host port held bound
#            meanwhile so that no other program takes it, as src/container/nat.rs.
#
# Addresses: 198.19.255.0/24 is network 511 of sockbench's 512 (it takes a /24 of
# 198.18.0.0/15 at random and claims it by making the host link sbk<N>h). This twin
# claims network 511 the same way, by making LINK=sbk511h: a sockbench run started
# meanwhile sees the name taken and picks another network, and one already holding
# it makes this claim fail, with a message, before anything else is made. The
# link's alias does not start with "sockbench run ", so sockbench's sweep never
# takes it for a killed run's.
#
# The namespaces are held by processes, not named: nothing appears in `ip netns`,
# nothing is mounted on /run/netns. Each holder (and each server started with
# start_in_ns) gets SIGKILL from the kernel when the script's shell dies, however it
# dies (setpriv --pdeathsig), so a killed script leaves no namespace, and the veth
# pairs go with their namespaces; only the nftables table would stay, and the next
# run, once it holds the claim, removes it (no other run can be using it). On every
# ordinary way out (the end, an error, Ctrl-C, SIGTERM) twin_network_down removes
# everything in reverse order: the table, the link, the holders.
#
# Before sourcing: work (a private directory this script removes) and the traps
# calling twin_network_down. Sets: server_ns, bridge_ns, client_ns (holders' PIDs),
# host_addr, veth_addr, bridge_addr, LINK, TABLE. Functions: in_ns, twin_network_up,
# twin_publish, twin_network_down.

LINK=sbk511h
TABLE=sockbench_bench
host_addr=198.19.255.1
veth_addr=198.19.255.2
bridge_addr=198.19.255.10
client_addr=198.19.255.11
server_ns=
bridge_ns=
client_ns=
port_holder=
link_made=
table_made=

# Runs a command in the network namespace held by PID (the host's when PID is empty).
in_ns() { # PID COMMAND...
    local pid=$1
    shift
    if [ -z "$pid" ]; then "$@"; else nsenter --net=/proc/"$pid"/ns/net -- "$@"; fi
}

# Starts a holder of a new network namespace with its loopback up; sets REPLY to
# its PID. Must run in the script's own shell (not in $(…)), which is the parent
# whose death kills the holder.
new_ns() {
    # The holder's command line names the work directory, for whoever looks for
    # what a run left (tests/bench_sockperf.rs).
    ln -sf "$(command -v sleep)" "$work/netns-holder"
    setpriv --pdeathsig KILL unshare --net -- "$work/netns-holder" infinity &
    REPLY=$!
    local ours
    ours=$(readlink /proc/self/ns/net)
    for _ in $(seq 100); do
        [ "$(readlink /proc/"$REPLY"/ns/net 2>/dev/null || echo "$ours")" != "$ours" ] && break
        sleep 0.02
    done
    [ "$(readlink /proc/"$REPLY"/ns/net 2>/dev/null || echo "$ours")" != "$ours" ] || {
        echo "cannot make a network namespace (unshare --net)" >&2
        return 1
    }
    in_ns "$REPLY" ip link set lo up
}

# Builds the namespaces, the host link, the bridge and their addresses.
twin_network_up() {
    new_ns; server_ns=$REPLY
    new_ns; bridge_ns=$REPLY
    new_ns; client_ns=$REPLY
    local said
    said=$(ip link add "$LINK" type veth peer name eth0 netns "$server_ns" 2>&1) || {
        echo "cannot claim network 511 (198.19.255.0/24) by making the host link $LINK: $said" >&2
        [ -e /sys/class/net/"$LINK" ] &&
            echo "$LINK is held by: $(cat /sys/class/net/"$LINK"/ifalias 2>/dev/null)" >&2
        return 1
    }
    link_made=1
    ip link set "$LINK" alias "sockbench bench twin of pid $$"
    if ip -4 -o addr show to 198.19.255.0/24 | grep -q .; then
        echo "198.19.255.0/24 is in use on this host by something else than sockbench:" >&2
        ip -4 -o addr show to 198.19.255.0/24 >&2
        return 1
    fi
    if nft list table ip "$TABLE" >/dev/null 2>&1; then
        # Only a run holding the claim makes this table, and this one holds it now.
        echo "removing nftables table ip $TABLE, left by a run that was killed" >&2
        nft delete table ip "$TABLE"
    fi
    ip addr add "$host_addr/30" dev "$LINK"
    ip link set "$LINK" up
    echo 1 >/proc/sys/net/ipv4/conf/"$LINK"/route_localnet
    in_ns "$server_ns" ip addr add "$veth_addr/30" dev eth0
    in_ns "$server_ns" ip link set eth0 up
    in_ns "$bridge_ns" ip link add br0 type bridge
    in_ns "$bridge_ns" ip link add to-server type veth peer name eth1 netns "$server_ns"
    in_ns "$bridge_ns" ip link add to-client type veth peer name eth0 netns "$client_ns"
    local port
    for port in to-server to-client; do
        in_ns "$bridge_ns" ip link set "$port" master br0
        in_ns "$bridge_ns" ip link set "$port" up
    done
    in_ns "$bridge_ns" ip link set br0 up
    in_ns "$server_ns" ip addr add "$bridge_addr/29" dev eth1
    in_ns "$server_ns" ip link set eth1 up
    in_ns "$client_ns" ip addr add "$client_addr/29" dev eth0
    in_ns "$client_ns" ip link set eth0 up
}

# Publishes the server's PORT (on its veth address) on a free port of the host's
# 127.0.0.1, held bound meanwhile; sets REPLY to that port. In the script's own
# shell, as new_ns.
twin_publish() { # PORT
    local to=$1 held=$work/published-port
    setpriv --pdeathsig KILL python3 -c '
import signal, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
with open(sys.argv[1] + ".new", "w") as f:
    f.write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".new", sys.argv[1])
signal.pause()' "$held" &
    port_holder=$!
    for _ in $(seq 100); do [ -s "$held" ] && break; sleep 0.02; done
    [ -s "$held" ] || { echo "cannot hold a port of 127.0.0.1 to publish" >&2; return 1; }
    REPLY=$(cat "$held")
    nft -f - <<EOF
create table ip $TABLE
add chain ip $TABLE output { type nat hook output priority -100; policy accept; }
add chain ip $TABLE postrouting { type nat hook postrouting priority 100; policy accept; }
add rule ip $TABLE postrouting oifname "$LINK" ip saddr 127.0.0.0/8 masquerade
add rule ip $TABLE output ip daddr 127.0.0.1 tcp dport $REPLY dnat to $veth_addr:$to
EOF
    table_made=1
}

# Removes what twin_network_up and twin_publish made; safe to call more than once.
twin_network_down() {
    if [ -n "$table_made" ]; then
        nft delete table ip "$TABLE" 2>/dev/null || echo "cannot remove nftables table ip $TABLE" >&2
        table_made=
    fi
    if [ -n "$link_made" ]; then
        # Its peer, eth0 in the server's namespace, goes with it.
        ip link del "$LINK" 2>/dev/null || echo "cannot remove link $LINK" >&2
        link_made=
    fi
    local pid
    for pid in $port_holder $client_ns $bridge_ns $server_ns; do
        { kill "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    port_holder='' client_ns='' bridge_ns='' server_ns=''
    return 0
}
