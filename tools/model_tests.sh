#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Model tests: runs ember-run on each model of the anchor zoo and compares its output with the
# torch output exported beside the model and with ONNX Runtime's (tools/ort_run.js), within a
# tolerance on max |ember - ref| / max |ref|; and checks determinism: the output's bytes are the
# same at 1, 2 and 3 threads and after repeated runs of one session (--no-determinism skips
# that). The zoo is made by /work/shared/anchors/setup.sh
# (in ~/.cache/ember-anchors, or $EMBER_ANCHORS); nothing of it is committed.
#
#     bash tools/model_tests.sh [--ember-run PATH] [--models a,b,...] [--tol 1e-3] [--threads N]
#                               [--work DIR] [--no-ort] [--no-determinism]
#
# Exit 0: every model matched; 1: some model failed (the table says which and why: a missing
# op is named); 77: skipped, with the reason, when the zoo (or ember-run) is not there.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
anchors="${EMBER_ANCHORS:-$HOME/.cache/ember-anchors}"
models_dir="$anchors/models"
ember_run=""
models="mlp_tiny,resnet18,mobilenet_v2,squeezenet1_1,shufflenet_v2_x1_0,efficientnet_b0,encoder_small"
tol="1e-3"
threads=1
work="${TMPDIR:-/tmp}/ember-model-tests"
use_ort=1
determinism=1
while [ $# -gt 0 ]; do
    case "$1" in
        --ember-run) ember_run="$2"; shift 2 ;;
        --models) models="$2"; shift 2 ;;
        --tol) tol="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --no-ort) use_ort=0; shift ;;
        --no-determinism) determinism=0; shift ;;
        -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "model_tests: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$ember_run" ]; then
    for candidate in "$here/../build/gcc/examples/ember-run" "$here/../build/examples/ember-run"; do
        [ -x "$candidate" ] && ember_run="$candidate" && break
    done
fi
if [ -z "$ember_run" ] || [ ! -x "$ember_run" ]; then
    echo "model_tests: skipped: no ember-run binary (build the ember-run target and pass --ember-run PATH)"
    exit 77
fi
if [ ! -f "$models_dir/models.json" ]; then
    echo "model_tests: skipped: no model zoo in $models_dir (run /work/shared/anchors/setup.sh, or set EMBER_ANCHORS)"
    exit 77
fi
if [ "$use_ort" = 1 ]; then
    ort_dir="${ORT_NODE_DIR:-$anchors/node_modules/onnxruntime-node}"
    if ! command -v node > /dev/null || [ ! -d "$ort_dir" ]; then
        echo "model_tests: note: no node or no onnxruntime-node in $ort_dir: comparing with torch only"
        use_ort=0
    fi
fi

compare() {  # compare ACTUAL REFERENCE -> prints the one-line result, returns 0 when within tol
    node "$here/npy_compare.js" "$1" "$2" --tol "$tol"
}

rm -rf "$work" && mkdir -p "$work"
failed=0
passed=0
summary=()
IFS=',' read -r -a list <<< "$models"
for m in "${list[@]}"; do
    model="$models_dir/$m.onnx" input="$models_dir/$m.in.npy" torch_out="$models_dir/$m.out.npy"
    if [ ! -f "$model" ] || [ ! -f "$input" ] || [ ! -f "$torch_out" ]; then
        summary+=("$m: FAIL: missing $m.onnx, $m.in.npy or $m.out.npy in $models_dir")
        failed=$((failed + 1))
        continue
    fi
    out="$work/$m"
    start=$(date +%s.%N)
    if ! "$ember_run" "$model" --input "input=$input" --output-dir "$out/ember" --threads "$threads" > "$out.log" 2> "$out.err"; then
        summary+=("$m: FAIL: $(head -n 1 "$out.err")")
        failed=$((failed + 1))
        continue
    fi
    secs=$(printf "%.2f" "$(echo "$(date +%s.%N) - $start" | bc 2> /dev/null || echo 0)")
    status="PASS"
    line="$m: ember-run ${secs}s; vs torch: $(compare "$out/ember/output.npy" "$torch_out")" || status="FAIL"
    if [ "$use_ort" = 1 ]; then
        if node "$here/ort_run.js" "$model" --input "input=$input" --output-dir "$out/ort" 2> "$out.ort.err"; then
            line="$line; vs onnxruntime: $(compare "$out/ember/output.npy" "$out/ort/output.npy")" || status="FAIL"
            line="$line; (onnxruntime vs torch: $(compare "$out/ort/output.npy" "$torch_out" | cut -d' ' -f3))"
        else
            line="$line; onnxruntime failed: $(head -n 1 "$out.ort.err")"
        fi
    fi
    if [ "$determinism" = 1 ]; then
        # The same bits whatever the thread count (fixed partitioning and reduction order) and
        # run after run of one session (--repeat writes the last run's output).
        same="bits identical at 1, 2 and 3 threads"
        for t in 1 2 3; do
            [ "$t" = "$threads" ] && continue
            if ! "$ember_run" "$model" --input "input=$input" --output-dir "$out/t$t" --threads "$t" --repeat 2 > /dev/null 2> "$out.t$t.err"; then
                same="FAILED at $t threads: $(head -n 1 "$out.t$t.err")"; status="FAIL"; break
            fi
            if ! cmp -s "$out/ember/output.npy" "$out/t$t/output.npy"; then
                same="DIFFERENT bits at $t threads than at $threads"; status="FAIL"; break
            fi
        done
        line="$line; $same"
    fi
    summary+=("$m: $status: ${line#"$m: "}")
    if [ "$status" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

echo "model tests (tolerance: max |ember - ref| / max |ref| <= $tol; $threads thread(s); outputs in $work):"
for s in "${summary[@]}"; do echo "  $s"; done
echo "model_tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
