#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ember against ONNX Runtime on the anchor zoo, interleaved: for each model, --rounds rounds; in
# each round, for each thread count, one short ember-run --repeat and one short bench_ort.js run
# (which goes first alternates from round to round), each timing about --time seconds of runs
# after a warm-up. A round's number is that run's median; the table gives the median of the rounds'
# medians, the ratio ember/ORT (< 1: ember is faster), then per thread count the geometric mean of
# the ratios and the worst one.
#
#     bash bench/zoo_vs_ort.sh [--models a,b] [--threads 1,2] [--rounds 3] [--time 1]
#                              [--ember-run PATH] [--work DIR]
#
# Defaults: the whole zoo (models.json), threads 1,2, 3 rounds, 1 s of timed runs per engine per
# round, ember-run from build/gcc/examples/ember-run. That takes about 4 minutes for the whole zoo
# on a 2-core machine, and stays under 10 however slow ember is (each run is at least 3 timed
# runs: one round of the zoo at 1 thread took 39 s, 9 of them the batch-8 ResNet-50);
# --rounds 1 gives a first look in about a minute. Run it on an otherwise idle machine.
#
# mlp_tiny measures the per-call overhead: ember-run --repeat with many runs (sub-ms latencies
# are printed to the nanosecond), and for ONNX Runtime bench_ort.js --mlp, its native binding's
# synchronous run() per call ("sync_binding"; the async node API adds ~3-5 us that is node's, not
# ORT's). Even so, ORT's figure includes the node binding (the README's C API figure is ~2.3 us).
#
# The zoo: ~/.cache/ember-anchors/models (or $EMBER_ANCHORS/models), from ../shared/anchors/setup.sh;
# each model's input is <model>.in.npy, fed to the model's one graph input. Raw logs and per-round
# numbers (rounds.tsv) stay in the work folder (default: a new folder under $TMPDIR, named at the
# end). Exit status 0 when every cell was measured, 1 when some run failed (its cell says "fail",
# the log holds why), 2 on a bad command line.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
anchors="${EMBER_ANCHORS:-$HOME/.cache/ember-anchors}"
models_dir="$anchors/models"
bench_ort="$root/../shared/anchors/bench_ort.js"
ember_run="$root/build/gcc/examples/ember-run"
models=""
threads="1,2"
rounds=3
budget=1
work=""

usage() {
    sed -n '3,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}
die() {
    echo "zoo_vs_ort: $*" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
        --models) models="${2:-}"; shift 2 || die "--models needs a value" ;;
        --threads) threads="${2:-}"; shift 2 || die "--threads needs a value" ;;
        --rounds) rounds="${2:-}"; shift 2 || die "--rounds needs a value" ;;
        --time) budget="${2:-}"; shift 2 || die "--time needs a value" ;;
        --ember-run) ember_run="${2:-}"; shift 2 || die "--ember-run needs a value" ;;
        --work) work="${2:-}"; shift 2 || die "--work needs a value" ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds: expected a whole number >= 1, got '$rounds'"
[[ "$threads" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--threads: expected a list like 1,2, got '$threads'"
[[ "$budget" =~ ^[0-9]*\.?[0-9]+$ ]] || die "--time: expected seconds, got '$budget'"
[ -x "$ember_run" ] || die "no ember-run at '$ember_run' (build the ember-run target, or pass --ember-run PATH)"
[ -f "$models_dir/models.json" ] || die "no model zoo in $models_dir (run ../shared/anchors/setup.sh, or set EMBER_ANCHORS)"
[ -f "$bench_ort" ] || die "no $bench_ort (the team's shared anchors, beside this repository)"
command -v node > /dev/null || die "node not found (ONNX Runtime is measured through onnxruntime-node)"
command -v python3 > /dev/null || die "python3 not found"
if [ -z "$models" ]; then
    models="$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(",".join(k for k in m if not m[k].get("error")))' "$models_dir/models.json")"
fi
if [ -z "$work" ]; then work="$(mktemp -d "${TMPDIR:-/tmp}/zoo_vs_ort.XXXXXX")"; fi
mkdir -p "$work" || die "cannot create --work '$work'"
tsv="$work/rounds.tsv"
printf 'model\tthreads\tround\tengine\tmedian_ms\n' > "$tsv"
IFS=',' read -r -a model_list <<< "$models"
IFS=',' read -r -a thread_list <<< "$threads"
for m in "${model_list[@]}"; do
    for f in "$m.onnx" "$m.in.npy"; do [ -f "$models_dir/$f" ] || die "no $models_dir/$f"; done
done

# The model's graph input (the first one that is not an initializer): python3's onnx when it is
# there (Debian's python3-onnx, /usr/bin/python3), else "input", what the zoo's exports use.
input_name() {
    local name
    name="$(/usr/bin/python3 - "$1" 2> /dev/null << 'EOF'
import sys, onnx
g = onnx.load(sys.argv[1], load_external_data=False).graph
init = {t.name for t in g.initializer}
print(next(i.name for i in g.input if i.name not in init))
EOF
)" || name=""
    echo "${name:-input}"
}

# ember: median ms of one ember-run --repeat (its line "latency ms over ...: min X p50 Y p90 Z ...").
ember_round() {  # model threads repeat log -> prints the median or nothing
    local m="$1" t="$2" repeat="$3" log="$4"
    "$ember_run" "$models_dir/$m.onnx" --input "${inputs[$m]}=$models_dir/$m.in.npy" --threads "$t" \
        --repeat "$repeat" --warmup "$(( repeat < 10 ? 1 : 10 ))" > "$log" 2>&1 || return 0
    sed -n 's/^latency ms over .* p50 \([0-9.]*\) p90 .*$/\1/p' "$log" | tail -n 1
}

# ONNX Runtime: median ms from bench_ort.js's JSON (--mlp: the sync binding's per-call median).
ort_round() {  # model threads log json -> prints the median or nothing
    local m="$1" t="$2" log="$3" json="$4"
    rm -f "$json"
    if [ "$m" = mlp_tiny ]; then
        node "$bench_ort" --mlp --models "$m" --threads "$t" --calls 5000 --models-dir "$models_dir" --json "$json" > "$log" 2>&1 || return 0
    else
        node "$bench_ort" --models "$m" --threads "$t" --min-runs 3 --min-time "$budget" --warmup-runs 2 --warmup-time 0 \
            --no-check --models-dir "$models_dir" --json "$json" > "$log" 2>&1 || return 0
    fi
    python3 - "$json" << 'EOF' 2> /dev/null || true
import json, sys
r = json.load(open(sys.argv[1]))["results"]
mlp = [x for x in r if x.get("variant") == "sync_binding"]
print(f'{mlp[0]["per_call_us"]["median"] / 1000:.6f}' if mlp else f'{r[0]["stats_ms"]["median"]:.6f}')
EOF
}

declare -A inputs repeats
failed=0
start=$SECONDS
for m in "${model_list[@]}"; do
    inputs[$m]="$(input_name "$models_dir/$m.onnx")"
    for t in "${thread_list[@]}"; do
        # How many ember runs make about --time seconds: one untimed calibration run (it also
        # warms the page cache with the model file).
        log="$work/$m.t$t.calibrate.log"
        one="$(ember_round "$m" "$t" 1 "$log")"
        if [ -z "$one" ]; then
            repeats[$m.$t]=0
            why="$(grep -m 1 'ember-run:' "$log" || tail -n 1 "$log")"
            echo "zoo_vs_ort: $m, $t thread(s): ember-run failed: ${why:-no latency line}; see $log" >&2
        else
            repeats[$m.$t]="$(awk -v b="$budget" -v one="$one" 'BEGIN { n = b * 1000 / (one > 0.0005 ? one : 0.0005); n = n < 3 ? 3 : (n > 200000 ? 200000 : n); printf "%d", n }')"
        fi
    done
    for ((r = 1; r <= rounds; r++)); do
        for t in "${thread_list[@]}"; do
            if ((r % 2)); then engines="ember ort"; else engines="ort ember"; fi
            for engine in $engines; do
                log="$work/$m.t$t.r$r.$engine.log"
                if [ "$engine" = ember ]; then
                    if [ "${repeats[$m.$t]}" -gt 0 ]; then ms="$(ember_round "$m" "$t" "${repeats[$m.$t]}" "$log")"; else ms=""; fi
                else
                    ms="$(ort_round "$m" "$t" "$log" "$work/$m.t$t.r$r.ort.json")"
                fi
                if [ -z "$ms" ]; then
                    # (an ember-run that failed its calibration run was reported above)
                    if [ "$engine" = ort ] || [ "${repeats[$m.$t]}" -gt 0 ]; then
                        echo "zoo_vs_ort: $m, $t thread(s), round $r: $engine failed; see $log" >&2
                    fi
                    ms=fail
                fi
                printf '%s\t%s\t%s\t%s\t%s\n' "$m" "$t" "$r" "$engine" "$ms" >> "$tsv"
            done
        done
    done
    echo "zoo_vs_ort: $m done ($((SECONDS - start)) s so far)" >&2
done

python3 - "$tsv" "$rounds" "$((SECONDS - start))" "$work" << 'EOF' || failed=1
import math, statistics, sys
from collections import defaultdict
tsv, rounds, secs, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cells = defaultdict(list)  # (model, threads, engine) -> per-round medians
order = []
bad = False
for line in open(tsv).read().splitlines()[1:]:
    model, threads, _, engine, ms = line.split("\t")
    key = (model, int(threads))
    if key not in order:
        order.append(key)
    cells[key + (engine,)].append(None if ms == "fail" else float(ms))

def median(xs):
    if any(x is None for x in xs) or not xs:
        return None
    return statistics.median(xs)

def fmt(ms):
    if ms is None:
        return "fail"
    return f"{ms:.6f}" if ms < 0.01 else f"{ms:.4f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"

print(f"| model | threads | ember median ms | ORT median ms | ember/ORT |")
print(f"|---|---|---|---|---|")
ratios = defaultdict(list)
for model, threads in order:
    e, o = median(cells[(model, threads, "ember")]), median(cells[(model, threads, "ort")])
    ratio = e / o if e is not None and o else None
    bad |= ratio is None
    if ratio is not None:
        ratios[threads].append((ratio, model))
    print(f"| {model}{' (per call)' if model == 'mlp_tiny' else ''} | {threads} | {fmt(e)} | {fmt(o)} | "
          f"{'n/a' if ratio is None else f'{ratio:.2f}'} |")
print()
for threads in sorted(ratios):
    rs = ratios[threads]
    geo = math.exp(sum(math.log(r) for r, _ in rs) / len(rs))
    worst, worst_model = max(rs)
    others = [r for r, m in rs if m != "mlp_tiny"]
    without = (f" ({math.exp(sum(map(math.log, others)) / len(others)):.2f} without mlp_tiny)"
               if others and len(others) < len(rs) else "")
    print(f"{threads} thread{'s' if threads > 1 else ''}: geometric mean ember/ORT {geo:.2f} over {len(rs)} models{without}; "
          f"worst {worst:.2f} ({worst_model})")
if not ratios:
    print("no model was measured by both engines")
print(f"\n(median of {rounds} interleaved round(s) each; {secs} s in all; logs and rounds.tsv in {work})")
sys.exit(1 if bad else 0)
EOF
exit "$failed"
