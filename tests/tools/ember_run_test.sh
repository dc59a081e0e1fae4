#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ember-run end to end: runs it on a two-node model (y = Relu(x + b), both sum and y are outputs,
# one with a name that must be sanitised), checks the output .npy files byte for byte, the
# statistics of --repeat, the Chrome trace of --profile (python3's json reads it: one event per
# step per timed run) and its summary table, the Graphviz file of --dot (and, given the source
# folder, the bundled model's fused Conv+Relu nodes in it and its batch throughput), and checks
# that every bad input gives exactly one line on stderr ("ember-run: ...") and a non-zero exit
# that is not a crash.
#
#     bash tests/tools/ember_run_test.sh path/to/ember-run WORK_DIR [SOURCE_DIR]
#
# The fixtures are tiny and written here from hex. They were made with onnx 1.12 and numpy:
#   Add(x: float[2,3], b: float[3]) -> 'sum/0:x'; Relu('sum/0:x') -> 'y'; opset 13, IR 8
#   x = [[1, -2, 3], [-4, 5, -6]], b = [0.5, 0.5, -10]; numpy.save of x, b, x + b, max(x + b, 0).
set -u
if [ $# -ne 2 ] && [ $# -ne 3 ]; then
    echo "usage: $0 EMBER_RUN WORK_DIR [SOURCE_DIR]" >&2
    exit 2
fi
EMBER_RUN="$1"
WORK="$2"
SOURCE="${3:-}"
if ! command -v python3 > /dev/null; then
    echo "ember_run_test: python3 is needed to read --profile's JSON back"
    exit 1
fi
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1

unhex() { printf '%b' "$(printf '%s' "$1" | sed 's/../\\x&/g')"; }

HEADER_2x3=934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a
HEADER_3=934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a
unhex 08081205656d6265723a90010a140a01780a0162120773756d2f303a7822034164640a120a0773756d2f303a78120179220452656c75120e656d6265725f72756e5f746573745a130a0178120e0a0c080112080a0208020a0208035a0f0a0162120a0a08080112040a02080362190a0773756d2f303a78120e0a0c080112080a0208020a02080362130a0179120e0a0c080112080a0208020a02080342040a00100d > model.onnx
unhex "${HEADER_2x3}0000803f000000c000004040000080c00000a0400000c0c0" > x.npy
unhex "${HEADER_3}0000003f0000003f000020c1" > b.npy
unhex "${HEADER_2x3}0000c03f0000c0bf0000e0c0000060c00000b040000080c1" > expected_sum.npy
unhex "${HEADER_2x3}0000c03f0000000000000000000000000000b04000000000" > expected_y.npy
# Bad fixtures: x as int32, x with a third axis, b with four elements, a truncated file, junk.
unhex "934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000000000000000000000000000000000000000000000000" > x_int32.npy
unhex "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c20332c2031292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000000000000000000000000000000000000000000000000" > x_rank3.npy
unhex "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028342c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a00000000000000000000000000000000" > b4.npy
head -c 140 x.npy > x_truncated.npy
echo "not a model" > junk.onnx
touch a_file

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect_ok NAME ARGS...: exit 0 and nothing on stderr.
expect_ok() {
    local name="$1"
    shift
    checks=$((checks + 1))
    "$EMBER_RUN" "$@" > out.txt 2> err.txt
    local rc=$?
    if [ $rc -ne 0 ] || [ -s err.txt ]; then
        fail "$name: exit $rc, stderr: $(cat err.txt)"
        return 1
    fi
    return 0
}

# expect_error NAME PATTERN ARGS...: a non-zero exit below 128 (no signal), exactly one line on
# stderr that starts with "ember-run: " and matches the extended regex PATTERN.
expect_error() {
    local name="$1" pattern="$2"
    shift 2
    checks=$((checks + 1))
    "$EMBER_RUN" "$@" > out.txt 2> err.txt
    local rc=$?
    local lines
    lines=$(wc -l < err.txt)
    if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
        fail "$name: exit $rc (want a non-zero exit without a crash); stderr: $(cat err.txt)"
    elif [ "$lines" -ne 1 ] || [ "$(tail -c 1 err.txt | od -An -c | tr -d ' ')" != '\n' ]; then
        fail "$name: $lines lines on stderr (want exactly one):"
        cat err.txt
    elif ! grep -q '^ember-run: ' err.txt; then
        fail "$name: stderr does not start with 'ember-run: ': $(cat err.txt)"
    elif ! grep -Eq -- "$pattern" err.txt; then
        fail "$name: stderr does not match /$pattern/: $(cat err.txt)"
    else
        echo "ok: $name: $(cat err.txt)"
    fi
}

# expect_same FILE EXPECTED: byte-identical .npy files.
expect_same() {
    checks=$((checks + 1))
    if ! cmp -s "$1" "$2"; then
        fail "$1 differs from $2: $(od -An -tx1 "$1" 2> /dev/null | tail -n 2 | tr -s ' ')"
        return 1
    fi
}

# -- runs that work ----------------------------------------------------------------------------
if expect_ok "run" model.onnx --input x=x.npy --input b=b.npy --output-dir out; then
    expect_same out/sum_0_x.npy expected_sum.npy
    expect_same out/y.npy expected_y.npy
    checks=$((checks + 1))
    grep -q "^sum/0:x: float32 \[2, 3\] -> out/sum_0_x.npy$" out.txt || fail "run: stdout does not list sum/0:x: $(cat out.txt)"
    n=$(ls out | wc -l)
    [ "$n" -eq 2 ] || fail "run: out/ holds $n files, want 2: $(ls -A out)"
fi
if expect_ok "--flag=value, threads, nested new output folder" --threads=2 model.onnx --input=b=b.npy --input x=x.npy --output-dir new/deeper; then
    expect_same new/deeper/y.npy expected_y.npy
fi
if expect_ok "--fix" model.onnx --input x=x.npy --fix b=b.npy --output-dir fixed; then
    expect_same fixed/sum_0_x.npy expected_sum.npy
    expect_same fixed/y.npy expected_y.npy
fi
if expect_ok "--repeat" model.onnx --input x=x.npy --input b=b.npy --repeat 5 --warmup 2 --threads 2; then
    checks=$((checks + 1))
    grep -Eq '^latency ms over 5 runs \(2 warmup, 2 threads\): min [0-9.]+ p50 [0-9.]+ p90 [0-9.]+ p99 [0-9.]+ max [0-9.]+$' out.txt ||
        fail "--repeat: no latency line in stdout: $(cat out.txt)"
    checks=$((checks + 1))
    # min <= p50 <= p90 <= p99 <= max
    sed -n 's/^latency ms over .*: min \([0-9.]*\) p50 \([0-9.]*\) p90 \([0-9.]*\) p99 \([0-9.]*\) max \([0-9.]*\)$/\1 \2 \3 \4 \5/p' out.txt |
        python3 -c 'import sys; v = [float(x) for x in sys.stdin.read().split()]; sys.exit(0 if len(v) == 5 and v == sorted(v) else 1)' ||
        fail "--repeat: the statistics are not in order: $(grep '^latency' out.txt)"
    checks=$((checks + 1))
    # x is [2, 3]: the leading dimension 2 is taken as the batch.
    grep -Eq '^throughput: [0-9]+\.[0-9] runs/s, [0-9]+\.[0-9] items/s \(batch 2\)$' out.txt ||
        fail "--repeat: no throughput line in stdout: $(cat out.txt)"
    checks=$((checks + 1))
    grep -Eq '^memory: arena [0-9]+ bytes, weights [0-9]+ bytes, peak RSS [0-9]+\.[0-9] MiB$' out.txt ||
        fail "--repeat: no memory line in stdout: $(cat out.txt)"
    checks=$((checks + 1))
    grep -q '^y: float32 \[2, 3\] (not written: no --output-dir)$' out.txt || fail "--repeat: stdout does not list y: $(cat out.txt)"
fi
if expect_ok "--spin 0 (threads park at once)" model.onnx --input x=x.npy --input b=b.npy --threads 2 --spin 0 --output-dir spin0; then
    expect_same spin0/y.npy expected_y.npy
fi
# --profile: a Chrome trace with one complete event per step per timed run, in step order.
# check_trace FILE RUNS: reads FILE with python3's json; prints the number of steps per run.
check_trace() {
    python3 - "$1" "$2" << 'EOF'
import collections, json, sys
trace, runs = json.load(open(sys.argv[1], encoding="utf-8")), int(sys.argv[2])
events = trace["traceEvents"]
assert all(e["ph"] == "X" and e["pid"] == 1 and e["dur"] >= 0 and e["ts"] >= 0 for e in events), "bad event fields"
assert all(e["cat"] == e["args"]["op"] and isinstance(e["name"], str) for e in events), "bad names"
steps = [e["args"]["step"] for e in events]
per_run = len(set(steps))
assert per_run > 0 and len(events) == per_run * runs, f"{len(events)} events for {per_run} steps x {runs} runs"
assert steps == list(range(per_run)) * runs, f"steps out of order: {steps}"
assert trace["otherData"]["dropped_events"] == 0
print(per_run)
EOF
}
if expect_ok "--profile with --repeat" model.onnx --input x=x.npy --input b=b.npy --repeat 4 --profile trace.json; then
    checks=$((checks + 1))
    if steps=$(check_trace trace.json 4 2>&1); then
        grep -q "^profile: $((steps * 4)) events ($steps steps x 4 runs) -> trace.json$" out.txt ||
            fail "--profile: no 'profile:' line for $steps steps x 4 runs: $(cat out.txt)"
        grep -q '"name":"node 0 (Add)"' trace.json || fail "--profile: the Add step is not named in the trace"
    else
        fail "--profile: trace.json: $steps"
    fi
    checks=$((checks + 1))
    grep -Eq '^op type +count +total ms +mean us +% of total$' out.txt && grep -Eq '^Add +4 +[0-9.]+ +[0-9.]+ +[0-9.]+$' out.txt &&
        grep -Eq '^Relu +4 ' out.txt && grep -Eq '^all +8 +[0-9.]+ +[0-9.]+ +100\.0$' out.txt ||
        fail "--profile: no summary table with Add 4, Relu 4, all 8: $(cat out.txt)"
fi
if expect_ok "--profile of one run, --dot" model.onnx --input x=x.npy --input b=b.npy --profile=one.json --dot graph.dot; then
    checks=$((checks + 1))
    steps=$(check_trace one.json 1 2>&1) && [ "$steps" = 2 ] || fail "--profile of one run: $steps"
    checks=$((checks + 1))
    head -n 1 graph.dot | grep -q '^digraph "ember_run_test" {$' && grep -q '^  n0 -> n1;$' graph.dot && grep -q 'label="sum/0:x"' graph.dot &&
        tail -n 1 graph.dot | grep -q '^}$' || fail "--dot: not the model's graph: $(cat graph.dot)"
    grep -q '^graph: 2 nodes (0 fused) -> graph.dot$' out.txt || fail "--dot: no 'graph:' line: $(cat out.txt)"
fi
# The bundled model: its three Conv + Relu are fused, and a batch of 4 is 4 items a run.
if [ -n "$SOURCE" ]; then
    python3 - << 'EOF'
import struct
d = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1, 28, 28), }"
h = d + " " * (63 - (10 + len(d)) % 64) + "\n"
open("fm4.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + bytes(4 * 28 * 28 * 4))
EOF
    if expect_ok "bundled model: --dot, --profile, batch 4" "$SOURCE/models/fashion_mnist/model.onnx" --input input=fm4.npy --repeat 3 \
        --dot fm.dot --profile fm.json; then
        checks=$((checks + 1))
        [ "$(grep -c 'label="Conv+Relu\\n.*fillcolor' fm.dot)" = 3 ] && grep -q '^graph: [0-9]* nodes (3 fused) -> fm.dot$' out.txt ||
            fail "--dot: the bundled model's three fused Conv+Relu are not there: $(cat fm.dot out.txt)"
        checks=$((checks + 1))
        steps=$(check_trace fm.json 3 2>&1) && grep -Eq '^FusedConv +9 ' out.txt || fail "--profile of the bundled model: $steps $(cat out.txt)"
        checks=$((checks + 1))
        grep -Eq '^throughput: [0-9.]+ runs/s, [0-9.]+ items/s \(batch 4\)$' out.txt || fail "no items/s for batch 4: $(cat out.txt)"
    fi
fi

checks=$((checks + 1))
if ! "$EMBER_RUN" --help > out.txt 2> err.txt || ! grep -q '^usage: ember-run' out.txt || [ -s err.txt ]; then
    fail "--help: $(cat out.txt err.txt)"
fi

# -- every bad input: one line on stderr, a non-zero exit ---------------------------------------
expect_error "no arguments" "no model given"
expect_error "unknown flag" "--bogus: unknown flag" model.onnx --bogus --input x=x.npy
expect_error "short flag" "-t: unknown flag" model.onnx -t 2
expect_error "flag without value" "--output-dir: needs a value" model.onnx --input x=x.npy --input b=b.npy --output-dir
expect_error "two models" "more than one model" model.onnx other.onnx
expect_error "--threads 0" "--threads: must be at least 1" model.onnx --threads 0
expect_error "--threads abc" "--threads: expected a whole number" model.onnx --threads abc
expect_error "--spin abc" "--spin: expected a whole number" model.onnx --spin abc
expect_error "--repeat -1" "--repeat: expected a whole number" model.onnx --repeat -1
expect_error "--warmup alone" "--warmup: only makes sense with --repeat" model.onnx --warmup 2
expect_error "--profile without a file" "--profile: needs a file name" model.onnx --input x=x.npy --input b=b.npy --profile=
expect_error "--profile into a missing folder" "--profile 'nope/trace.json': cannot create the file" model.onnx --input x=x.npy --input b=b.npy --profile nope/trace.json
expect_error "--dot into a folder" "--dot 'out': cannot create the file" model.onnx --input x=x.npy --input b=b.npy --dot out
expect_error "--input without =" "expected NAME=FILE.npy" model.onnx --input x.npy
expect_error "--input with empty name" "expected NAME=FILE.npy" model.onnx --input =x.npy
expect_error "an input given twice" "input 'x': given more than once" model.onnx --input x=x.npy --input x=x.npy
expect_error "an input both given and fixed" "input 'b': given more than once" model.onnx --input x=x.npy --input b=b.npy --fix b=b.npy
expect_error "missing model file" "model 'nope.onnx': .*cannot open" nope.onnx --input x=x.npy --input b=b.npy
expect_error "a model that is not ONNX" "model 'junk.onnx'" junk.onnx --input x=x.npy --input b=b.npy
expect_error "a folder as the model" "model '\.': is a folder" . --input x=x.npy --input b=b.npy
expect_error "unknown input" "--input z: the model has no input 'z' \(its inputs: x, b\)" model.onnx --input x=x.npy --input b=b.npy --input z=x.npy
expect_error "missing input" "input 'b': missing: give it with --input b=FILE.npy" model.onnx --input x=x.npy
expect_error "missing .npy" "--input b: .*nope.npy.*cannot open" model.onnx --input x=x.npy --input b=nope.npy
expect_error "a folder as the .npy" "--input b: .*'out'" model.onnx --input x=x.npy --input b=out
expect_error "truncated .npy" "--input x: .*x_truncated.npy.*truncated" model.onnx --input x=x_truncated.npy --input b=b.npy
expect_error "a model as the .npy" "--input x: .*not a .npy file" model.onnx --input x=model.onnx --input b=b.npy
expect_error "wrong dtype" "--input x: the model's input is float32 but 'x_int32.npy' holds int32" model.onnx --input x=x_int32.npy --input b=b.npy
expect_error "wrong rank" "compile 'model.onnx': .*input 'x' is declared" model.onnx --input x=x_rank3.npy --input b=b.npy
expect_error "wrong shape for --fix" "compile 'model.onnx': .*do not broadcast" model.onnx --input x=x.npy --fix b=b4.npy
expect_error "output dir is a file" "--output-dir 'a_file': exists and is not a folder" model.onnx --input x=x.npy --input b=b.npy --output-dir a_file
expect_error "output dir cannot be made" "--output-dir '/proc/ember-run-test/out': cannot create it" model.onnx --input x=x.npy --input b=b.npy --output-dir /proc/ember-run-test/out

if [ "$failures" -ne 0 ]; then
    echo "ember_run_test: $failures of $checks checks failed"
    exit 1
fi
echo "ember_run_test: ok ($checks checks)"
