#!/usr/bin/env bash
# Do the intervals of one run hold in the next? Runs the default `sockbench run`
# RUNS times back to back (default 3; or give result files as arguments to only
# read them) and prints, over every pair of runs and every headline ratio (each
# transport's time per operation against the reference transport, per case):
#
#   cross-run share: how many pairs' estimates differ beyond their combined
#     intervals, |z| > 1.96 with z = (ln e1 − ln e2) / sqrt(se1² + se2²). Each run's
#     standard error is its interval's half-width in log space divided by the t
#     quantile it was built with (t_975 at n − 1 degrees of freedom, n = the rounds
#     in its `n`): the interval is mean ± t·se on the log ratios, so this recovers
#     se exactly. (Dividing by 1.96 instead would inflate se by t/1.96 — 1.6x at 4
#     rounds — and hide misses.) Honest 95% intervals give about 5%. Target ≤ 10%.
#   settled share: per run, the headline ratios whose interval is within ±5%.
#     Target ≥ 50%.
#   each run's wall time (target ≤ 120 s on 2 cores) and the load average before it.
#
# With TARGET=postgres-server it runs instead `sockbench postgres --server URL
# --quick --experiments EXPERIMENTS` (default query,rows; QUICK= drops --quick)
# against one PostgreSQL server it starts as a user's own (bench/lib/
# throwaway-cluster.sh: TLS on, role foo by md5, reached over loopback TCP), the
# placement sockbench's default for a user's server (its backends with the client).
# With TARGET=redis-url, `sockbench redis --url unix=… --url tcp=… --url tls=…
# --quick --experiments EXPERIMENTS --placement PLACEMENT` (default ping,get and
# same: a user's Redis server is pinned only when asked) against one redis-server
# it starts (bench/lib/throwaway-redis.sh).
#
# On the 2-core VM, 2026-11-24: before issue 21 part 4, 21.4% (9/42, two runs under
# another build, load 3-9), 9 and 3 of 42 settled, 236 s and 289 s. After it (one
# CPU per round, 6+ short rounds, 1% between-run widening), load 1.4-3.2: 12.7%
# (16/126), 24, 22 and 17 of 42 settled (50%), 105-107 s.
set -euo pipefail
cd "$(dirname "$0")/.."

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    runs=${RUNS:-3}
    case ${TARGET:-run} in
        run) command=(run) ;;
        postgres-server)
            PIN_DEFAULT=none
            # shellcheck source=bench/lib/throwaway-cluster.sh
            source bench/lib/throwaway-cluster.sh
            command=(postgres --server "$(url_of tcp)"
                --experiments "${EXPERIMENTS:-query,rows}" ${QUICK-"--quick"}) ;;
        redis-url)
            # shellcheck source=bench/lib/throwaway-redis.sh
            source bench/lib/throwaway-redis.sh
            export REDISCLI_AUTH=$password
            command=(redis --url "unix=${url[unix]}" --url "tcp=${url[tcp]}"
                --url "tls=${url[tls]}" --experiments "${EXPERIMENTS:-ping,get}"
                --placement "${PLACEMENT:-same}" ${QUICK-"--quick"}) ;;
        *) echo "TARGET is run, postgres-server or redis-url, not ${TARGET}" >&2; exit 2 ;;
    esac
    cargo build --release --quiet
    keep=${KEEP:-$(mktemp -d)}
    mkdir -p "$keep"
    chmod 755 "$keep" # the throwaway cluster's account must reach its directory
    # A copy, so that a build meanwhile does not change the runs' program.
    cp target/release/sockbench "$keep/sockbench"
    for run in $(seq "$runs"); do
        json="$keep/run-$run.json"
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        start=$(date +%s.%N)
        TMPDIR=$keep "$keep/sockbench" "${command[@]}" --quiet --json "$json" >/dev/null
        secs=$(echo "$(date +%s.%N) - $start" | bc)
        printf 'run %d: %.1f s (load before: %s, after: %s)\n' "$run" "$secs" "$load" \
            "$(cut -d' ' -f1-3 /proc/loadavg)"
        files+=("$json")
    done
    echo "result files in $keep"
fi

python3 - "${files[@]}" <<'PY'
import itertools, json, math, sys

# scipy.stats.t.ppf(0.975, df), df = 1..30; beyond, the normal quantile's expansion.
T = [12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
     2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
     2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
     2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272]
def t975(df):
    if df <= 30:
        return T[df - 1]
    z, v = 1.959963984540054, float(df)
    return z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v * v)

def key(r):
    p = {k: v for k, v in r["params"].items() if k not in ("duration_ms", "counts", "threads")}
    return (r["experiment"], json.dumps(p, sort_keys=True), r["transport"])

def ratios(path):
    out = {}
    for r in json.load(open(path))["results"]:
        v = r["headline"].get("vs_reference")
        if not v:
            continue
        i = v["ratio"]
        e, n = math.log(i["estimate"]), i["n"]
        half = max(math.log(i["high"]) - e, e - math.log(i["low"]))
        out[key(r)] = (e, half / t975(n - 1), r["headline"].get("settled", False), i)
    return out

runs = [ratios(f) for f in sys.argv[1:]]
verbose = len(sys.argv) > 1 and __import__("os").environ.get("VERBOSE")
for k, f in enumerate(sys.argv[1:]):
    total = len(runs[k])
    settled = sum(1 for v in runs[k].values() if v[2])
    print(f"run {k + 1}: {settled}/{total} headline ratios settled ({settled / max(total, 1):.0%})  {f}")
pairs = misses = 0
worst = []
for a, b in itertools.combinations(range(len(runs)), 2):
    for k in runs[a].keys() & runs[b].keys():
        (ea, sa, _, ia), (eb, sb, _, ib) = runs[a][k], runs[b][k]
        se = math.hypot(sa, sb)
        z = (ea - eb) / se if se > 0 else (0.0 if ea == eb else math.inf)
        pairs += 1
        if abs(z) > 1.96:
            misses += 1
        worst.append((abs(z), a, b, k, ia, ib))
worst.sort(reverse=True)
print("largest |z| (run a vs run b: ratio [interval]):")
for z, a, b, k, ia, ib in worst[: (len(worst) if verbose else 12)]:
    name = f"{k[0]} {' '.join(str(v) for v in json.loads(k[1]).values())} {k[2]}"
    fmt = lambda i: f"{(i['estimate']-1)*100:+.1f}% [{(i['low']-1)*100:+.1f}, {(i['high']-1)*100:+.1f}] n={i['n']}"
    print(f"  {z:5.2f}  {a+1} v {b+1}  {name:<48} {fmt(ia):>32}  {fmt(ib):>32}")
total = sum(len(r) for r in runs)
settled = sum(1 for r in runs for v in r.values() if v[2])
print(f"cross-run share: {misses}/{pairs} pairs differ beyond their intervals (|z| > 1.96): "
      f"{misses / max(pairs, 1):.1%} (target ≤ 10%)")
print(f"settled share: {settled}/{total} headline ratios settled over all runs: "
      f"{settled / max(total, 1):.1%} (target ≥ 50%)")

# What if each paired interval also held a between-run standard error `floor` (in
# log space, added in quadrature: t·sqrt(s²/n + floor²))? Recomputed from each
# record's rounds, the rounds as they ran (a run with it would stop differently).
def read(m, path):
    for p in path.split("."):
        m = m.get(p) if isinstance(m, dict) else None
    return m

def paired_logs(path):
    groups = {}
    for r in json.load(open(path))["results"]:
        groups.setdefault((r["experiment"], json.dumps(
            {k: v for k, v in r["params"].items() if k not in ("duration_ms", "counts", "threads")},
            sort_keys=True)), []).append(r)
    out = {}
    for g, rs in groups.items():
        labels = [r["transport"] for r in rs]
        ref = rs[labels.index("unix")] if "unix" in labels else rs[0]
        def costs(r):
            v = [read(t, r["headline"]["metric"]) for t in r["trials"]]
            return [None if x is None or x <= 0 else (1 / x if r["headline"]["higher_is_better"] else x) for x in v]
        for r in rs:
            a, b = costs(ref), costs(r)
            if r is ref or len(a) != len(b) or len(a) < 2 or None in a + b:
                continue
            out[g + (r["transport"],)] = [math.log(y / x) for x, y in zip(a, b)]
    return out

def with_floor(logs, floor):
    n = len(logs)
    m = sum(logs) / n
    se = math.sqrt(sum((l - m) ** 2 for l in logs) / (n - 1) / n + floor ** 2)
    return m, se, t975(n - 1) * se

logs = [paired_logs(f) for f in sys.argv[1:]]
for floor in (0.005, 0.01, 0.015):
    miss = pairs = settled = total = 0
    for run in logs:
        for l in run.values():
            h = with_floor(l, floor)[2]
            total += 1
            settled += math.exp(h) - 1 < 0.05 and 1 - math.exp(-h) < 0.05
    for a, b in itertools.combinations(logs, 2):
        for k in a.keys() & b.keys():
            (ma, sa, _), (mb, sb, _) = with_floor(a[k], floor), with_floor(b[k], floor)
            pairs += 1
            miss += abs(ma - mb) / math.hypot(sa, sb) > 1.96
    print(f"  with a between-run floor of {floor:.1%}: cross-run {miss}/{pairs} = "
          f"{miss / max(pairs, 1):.1%}, settled {settled}/{total} = {settled / max(total, 1):.1%}")
PY
