#!/usr/bin/env bash
# The fault matrix: sockbench interrupted by SIGINT, SIGTERM, SIGHUP or SIGKILL while
# its throwaway cluster starts, in the middle of an experiment and while it tears
# down; its PostgreSQL server killed mid-run; two `sockbench run` in one directory at
# once; its PostgreSQL backend or its socket server stopped (SIGSTOP) mid-run, left
# to time out or followed by Ctrl-C. For each row it prints the exit code, whether every experiment finished
# before the fault is still in a valid result file, what was left right after
# (processes, directories and sockets in TMPDIR), and what is left once the next
# run has started and finished in the same TMPDIR. Target: every finished result
# kept and nothing left after the next run, in every row.
#
# `--stall-only` runs only the four stalled-server rows (about a minute).
# Takes about six minutes (the two `run`s and the teardown rows are most of it). Every run and server is
# bounded in time; everything it starts is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet
sb=$PWD/target/release/sockbench
work=$(mktemp -d /tmp/sockbench-faults-XXXXXX)
chmod 755 "$work"
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# Experiments in a result file, comma-separated, or "invalid" / "none".
experiments_in() {
    [ -f "$1" ] || { echo none; return; }
    python3 - "$1" <<'PY'
import json, sys
try:
    f = json.load(open(sys.argv[1]))
    names = []
    for r in f["results"]:
        name = r["experiment"].split(".")[-1]
        if name not in names:
            names.append(name)
    print(",".join(names) or "none")
except Exception:
    print("invalid")
PY
}

# Processes whose command line mentions $1 (the scenario's TMPDIR).
processes_in() {
    local n=0 pid
    for pid in $(pgrep -f -- "$1" 2>/dev/null || true); do
        [ "$pid" = "$$" ] || n=$((n + 1))
    done
    echo "$n"
}

# Waits up to $2 seconds for the command $1 to succeed.
wait_for() {
    local deadline=$((SECONDS + $2))
    until eval "$1"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.05
    done
}

# Whether every experiment of $1 is in $2 (both comma-separated).
kept() {
    local before=$1 after=$2 e
    [ "$before" = none ] && { [ "$after" = invalid ] && echo no || echo "n/a"; return; }
    for e in ${before//,/ }; do
        case ",$after," in *",$e,"*) ;; *) echo no; return ;; esac
    done
    echo yes
}

echo "exit: sockbench's exit code; finished before: experiments saved when the fault came;"
echo "kept: all of them still in a valid result file; procs, dirs: processes and entries left"
echo "in TMPDIR right after; after next: both, once the next run in that TMPDIR finished;"
echo "stall rows add how long the run took after the stop (timeout) or after Ctrl-C, and its last line."
echo
printf '%-26s %5s %-18s %-5s %6s %5s %11s\n' scenario exit "finished before" kept procs dirs "after next"

# One row: $1 name, $2 signal, $3 moment (start|mid|teardown|postmaster).
row() {
    local name=$1 sig=$2 moment=$3
    local tmp=$work/$name json=$work/$name.json
    mkdir -p "$tmp"; chmod 755 "$tmp"
    TMPDIR=$tmp "$sb" postgres --quiet --experiments query,concurrent --transports unix,tcp \
        --quick --duration 20s --trials 1 --json "$json" >/dev/null 2>"$work/$name.err" &
    local pid=$!
    started+=("$pid")
    case $moment in
        start) wait_for "ls -d $tmp/sockbench-pg-*/data >/dev/null 2>&1" 30 || true ;;
        mid | postmaster) wait_for "grep -q postgres.query $json 2>/dev/null" 60 || true; sleep 1 ;;
        teardown) wait_for "grep -q postgres.concurrent $json 2>/dev/null" 90 || true ;;
    esac
    local before
    before=$(experiments_in "$json")
    if [ "$moment" = postmaster ]; then
        local pm
        pm=$(head -1 "$tmp"/sockbench-pg-*/data/postmaster.pid 2>/dev/null || true)
        [ -n "$pm" ] && kill -KILL "$pm"
    else
        kill -"$sig" "$pid" 2>/dev/null || true
    fi
    local code=0
    { wait "$pid"; } 2>/dev/null || code=$?
    sleep 1 # the servers' death signals
    local procs dirs after left
    procs=$(processes_in "$tmp")
    dirs=$(find "$tmp" -mindepth 1 -maxdepth 1 | wc -l)
    after=$(experiments_in "$json")
    # The next run in the same TMPDIR removes what a killed run left.
    TMPDIR=$tmp "$sb" sockets --quiet --quick --trials 1 --workloads connect \
        --transports unix >/dev/null 2>&1 || true
    left=$(( $(find "$tmp" -mindepth 1 -maxdepth 1 | wc -l) + $(processes_in "$tmp") ))
    printf '%-26s %5s %-18s %-5s %6s %5s %11s\n' "$name" "$code" "$before" \
        "$(kept "$before" "$after")" "$procs" "$dirs" "$left"
}

# One stalled-server row: $1 name, $2 family (postgres|sockets), $3 what follows the
# stop (timeout: nothing, the run must give up within its 10 s; INT: Ctrl-C 1 s later).
stall_row() {
    local name=$1 family=$2 after_stop=$3
    local tmp=$work/$name json=$work/$name.json
    mkdir -p "$tmp"; chmod 755 "$tmp"
    if [ "$family" = postgres ]; then
        TMPDIR=$tmp "$sb" postgres --quiet --experiments query,rows --transports unix \
            --trials 3 --json "$json" >/dev/null 2>"$work/$name.err" &
    else
        TMPDIR=$tmp "$sb" sockets --quiet --quick --trials 3 --transports unix,tcp \
            --workloads connect,pingpong,stream --json "$json" >/dev/null 2>"$work/$name.err" &
    fi
    local pid=$! first=$family.query victim=""
    [ "$family" = sockets ] && first=sockets.connect
    started+=("$pid")
    wait_for "grep -q $first $json 2>/dev/null" 90 || true
    local before
    before=$(experiments_in "$json")
    # The server to stop: the backend of the experiment now running, or the serve child.
    if [ "$family" = postgres ]; then
        local pm
        pm=$(head -1 "$tmp"/sockbench-pg-*/data/postmaster.pid 2>/dev/null || true)
        wait_for "[ -n \"\$(pgrep -P $pm -f 'foo foo')\" ]" 30 || true
        victim=$(pgrep -P "$pm" -f 'foo foo' | head -1)
    else
        victim=$(pgrep -P "$pid" -f serve | head -1)
    fi
    started+=("$victim")
    kill -STOP "$victim"
    local from=$EPOCHREALTIME
    if [ "$after_stop" = INT ]; then
        sleep 1
        from=$EPOCHREALTIME
        kill -INT "$pid"
    fi
    # Bounded: a run that does not end within 60 s is killed (and shows as exit 137).
    local deadline=$((SECONDS + 60))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.02; done
    local took
    took=$(python3 -c "print(f'{$EPOCHREALTIME - $from:.1f}s')")
    kill -KILL "$pid" 2>/dev/null || true
    local code=0
    { wait "$pid"; } 2>/dev/null || code=$?
    kill -CONT "$victim" 2>/dev/null || true
    sleep 1 # the servers' death signals
    local procs dirs after left
    procs=$(processes_in "$tmp")
    dirs=$(find "$tmp" -mindepth 1 -maxdepth 1 | wc -l)
    after=$(experiments_in "$json")
    TMPDIR=$tmp "$sb" sockets --quiet --quick --trials 1 --workloads connect \
        --transports unix >/dev/null 2>&1 || true
    left=$(( $(find "$tmp" -mindepth 1 -maxdepth 1 | wc -l) + $(processes_in "$tmp") ))
    printf '%-26s %5s %-18s %-5s %6s %5s %11s  %s\n' "$name" "$code" "$before" \
        "$(kept "$before" "$after")" "$procs" "$dirs" "$left" "$took"
    printf '    %s\n' "$(tail -1 "$work/$name.err")"
}

if [ "${1:-}" = --stall-only ]; then
    for family in postgres sockets; do
        stall_row "$family-stalled" "$family" timeout
        stall_row "$family-stalled-then-INT" "$family" INT
    done
    exit 0
fi

for sig in INT TERM HUP KILL; do
    for moment in start mid teardown; do
        row "$sig-at-$moment" "$sig" "$moment"
    done
done
row "postmaster-killed-mid-run" KILL postmaster
for family in postgres sockets; do
    stall_row "$family-stalled" "$family" timeout
    stall_row "$family-stalled-then-INT" "$family" INT
done

# Two default runs in one directory at once: two result files, both complete.
both=$work/both
mkdir -p "$both/tmp"; chmod 755 "$both" "$both/tmp"
codes=()
for i in 1 2; do
    (cd "$both" && TMPDIR=$both/tmp timeout 600 "$sb" run --quiet >/dev/null 2>&1) &
    started+=("$!")
done
for pid in "${started[@]: -2}"; do
    code=0; { wait "$pid"; } 2>/dev/null || code=$?; codes+=("$code")
done
files=$(find "$both/sockbench-results" -name '*.json' 2>/dev/null | wc -l)
valid=0
for f in "$both"/sockbench-results/*.json; do
    [ -f "$f" ] && [ "$(experiments_in "$f")" != invalid ] && valid=$((valid + 1))
done
printf '%-26s %5s %-18s %-5s %6s %5s %11s\n' "two-runs-at-once" "${codes[*]}" \
    "$files files,$valid valid" "$([ "$valid" = 2 ] && echo yes || echo no)" \
    "$(processes_in "$both/tmp")" "$(find "$both/tmp" -mindepth 1 -maxdepth 1 | wc -l)" "-"
