#!/usr/bin/env bash
# Do two runs on one machine tell the same story? Runs the default `sockbench run`
# (what `cargo run --release` runs) RUNS times back to back (default 3), then prints,
# for every headline ratio (each transport against the reference, per case), each
# run's value and 95% interval and whether the intervals of all runs overlap. Target:
# every headline either overlaps across the runs or is reported "not settled" by the
# runs themselves.
#
# It also prints the CPU cost per operation (client + server) of every headline in
# each run and its largest difference between runs: instructions where the hardware
# counts them (target: at most 3%), else CPU time.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-3}
cargo build --release --quiet
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch" # the throwaway cluster's account must reach its directory

files=()
for run in $(seq "$runs"); do
    json="$scratch/run-$run.json"
    start=$(date +%s)
    TMPDIR=$scratch target/release/sockbench run --quiet --json "$json" >/dev/null
    echo "run $run: $(($(date +%s) - start)) s"
    files+=("$json")
done

python3 - "${files[@]}" <<'EOF'
import json, sys

runs = [json.load(open(f))["results"] for f in sys.argv[1:]]

def key(r):
    p = {k: v for k, v in r["params"].items() if k not in ("duration_ms", "counts", "threads")}
    return (r["experiment"], json.dumps(p, sort_keys=True), r["transport"])

def label(k):
    experiment, params, transport = k
    p = ", ".join(f"{v}" for v in json.loads(params).values())
    return f"{experiment} {p} {transport}".replace("  ", " ")

def pct(x):
    return f"{(x - 1) * 100:+.1f}%"

print()
print(f"{'headline ratio (time per op vs reference)':<52} " + " ".join(f"{'run ' + str(i + 1):>26}" for i in range(len(runs))) + "  overlap")
keys = [key(r) for r in runs[0] if r["headline"].get("vs_reference")]
failures = 0
for k in keys:
    cells, intervals, settled = [], [], True
    for results in runs:
        r = next((r for r in results if key(r) == k), None)
        v = r and r["headline"].get("vs_reference")
        if not v:
            cells.append("-")
            settled = False
            continue
        i = v["ratio"]
        intervals.append(i)
        settled &= r["headline"].get("settled", False)
        cells.append(f"{pct(i['estimate'])} [{pct(i['low'])}, {pct(i['high'])}]{'' if r['headline'].get('settled') else '*'}")
    overlap = len(intervals) == len(runs) and max(i["low"] for i in intervals) <= min(i["high"] for i in intervals)
    verdict = "yes" if overlap else ("no, not settled" if not settled else "NO")
    if verdict == "NO":
        failures += 1
    print(f"{label(k):<52} " + " ".join(f"{c:>26}" for c in cells) + f"  {verdict}")
print("* not settled: the run itself says its interval is wider than ±5%")

print()
print("CPU cost per operation, client + server (median over each run's rounds):")
worst = 0.0
source = None
for results in runs[:1]:
    for r in results:
        k = key(r)
        values = []
        for other in runs:
            o = next((o for o in other if key(o) == k), None)
            cost = o and o["metrics"].get("cpu")
            if not cost:
                continue
            sides = [cost["client"]] + ([cost["server"]] if cost.get("server") else [])
            instr = [s.get("instructions_user", 0) + s.get("instructions_kernel", 0)
                     for s in sides if s.get("instructions_user") is not None]
            if len(instr) == len(sides):
                values.append(sum(instr)); source = "instructions"
            else:
                values.append(sum(s["cpu_ns"] for s in sides)); source = source or "CPU ns"
        if len(values) == len(runs) and min(values) > 0:
            spread = max(values) / min(values) - 1
            worst = max(worst, spread)
            print(f"  {label(k):<52} " + " ".join(f"{v:12.0f}" for v in values) + f"  {spread * 100:5.1f}%")
if source == "instructions":
    print(f"largest difference between runs, instructions per op: {worst * 100:.1f}% (target ≤ 3%)")
else:
    print(f"largest difference between runs, CPU time per op: {worst * 100:.1f}% "
          "(no hardware instruction counters on this machine, so the 3% target on "
          "instructions cannot be checked here)")
print(f"headline ratios whose settled intervals do not overlap: {failures} (target 0)")
EOF
