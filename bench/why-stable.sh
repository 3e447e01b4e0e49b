#!/usr/bin/env bash
# Do two runs count the same kernel events per operation? Compares the kernel's
# account (`counters.why.*.events`, client and server) of every record that two or
# more result files share, run against run, and prints for each event its largest
# difference: relative for counts of at least one per operation, absolute for the
# rarer ones (a tenth of a softirq per op cannot be 2% of nothing). Target: within
# 2% (or 0.02 per operation), for work done one request at a time (round trips,
# queries, connections). Printed apart and not held to it: wakeups, which depend
# on whether the peer had gone to sleep before the message came, and bulk or
# many-client work (streams, rows, pipelines, concurrent clients), whose packets,
# ACKs and softirqs per operation depend on how much the kernel coalesced.
#
#   bench/why-stable.sh A.json B.json [C.json …]   compare saved default runs
#   bench/why-stable.sh                            make two default runs first
#   ONLY='sockets.pingpong|postgres.query' bench/why-stable.sh …   those experiments
set -euo pipefail
cd "$(dirname "$0")/.."

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    cargo build --release --quiet
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    chmod 755 "$scratch" # the throwaway cluster's account must reach its directory
    for run in 1 2; do
        TMPDIR=$scratch target/release/sockbench run --quiet --json "$scratch/run-$run.json" >/dev/null
        files+=("$scratch/run-$run.json")
    done
fi

python3 - "${files[@]}" <<'PY'
import itertools, json, os, re, sys

ONLY = re.compile(os.environ.get("ONLY", ".*"))

TIMING = {"wakeups"}  # depends on timing, not on the work
BULK = ("stream", "rows", "concurrent", "pipeline")  # coalescing depends on timing

def accounts(path):
    out = {}
    for r in json.load(open(path))["results"]:
        why = (r.get("counters") or {}).get("why")
        if not why or not ONLY.fullmatch(r["experiment"]):
            continue
        params = {k: v for k, v in r["params"].items() if k not in ("duration_ms", "counts", "threads")}
        key = (r["experiment"], json.dumps(params, sort_keys=True), r["transport"])
        for side in ("client", "server"):
            for event, n in ((why.get(side) or {}).get("events") or {}).items():
                out[key + (side, event)] = n
    return out

runs = [accounts(f) for f in sys.argv[1:]]
if not all(runs):
    sys.exit("no kernel account in one of the files (not permitted, or an older sockbench)")

def bulk(key):
    return key[0].rsplit(".", 1)[-1] in BULK

failed = 0
for title, keep in (("one request at a time", lambda k: not bulk(k)),
                    ("bulk and many clients (not held)", bulk)):
    worst = {}  # event -> (difference, relative?, where)
    for a, b in itertools.combinations(runs, 2):
        for key in a.keys() & b.keys():
            if not keep(key):
                continue
            x, y = a[key], b[key]
            big = max(x, y) >= 1.0
            d = abs(x - y) / max(x, y) if big else abs(x - y)
            event = key[-1]
            if d > worst.get(event, (-1,))[0]:
                worst[event] = (d, big, f"{key[0]} {key[2]} {key[3]} ({x:.3f} vs {y:.3f})")
    print(f"{title}: largest difference between {len(runs)} runs per event")
    for event, (d, big, where) in sorted(worst.items()):
        shown = f"{100 * d:.2f}%" if big else f"{d:.3f}/op"
        ok = d <= 0.02
        if event in TIMING or title.startswith("bulk"):
            verdict = "ok" if ok else "(not held)"
        else:
            verdict = "ok" if ok else "OVER"
            failed += not ok
        print(f"  {event:<18} {shown:>9}  {verdict:<11} {where}")
print("target for one request at a time: within 2% (0.02/op below one per op):",
      "met" if failed == 0 else f"{failed} over")
PY
