#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# classify end to end on the bundled Fashion-MNIST CNN: every bundled picture gets its own class
# first (the class is the number that starts its file name), each line has the path and 5
# label:probability pairs best first, a folder run shows the progress bar and the throughput,
# and bad input (a corrupt picture, a missing file, a bad option) gives a message on stderr and
# a non-zero exit, never a crash.
#
#     bash tests/tools/classify_test.sh path/to/classify SOURCE_DIR WORK_DIR
set -u
if [ $# -ne 3 ]; then
    echo "usage: $0 CLASSIFY SOURCE_DIR WORK_DIR" >&2
    exit 2
fi
CLASSIFY="$1"
IMAGES="$2/models/fashion_mnist/images"
WORK="$3"
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
failures=0
fail() { echo "classify_test: FAIL: $*"; failures=$((failures + 1)); }

# The labels file, by class index, to compare names.
mapfile -t LABELS < "$2/models/fashion_mnist/labels.txt"

"$CLASSIFY" "$IMAGES" > "$WORK/out.txt" 2> "$WORK/err.txt"
rc=$?
[ $rc -eq 0 ] || fail "folder run exited $rc: $(cat "$WORK/err.txt")"
count=$(ls "$IMAGES" | grep -Ec '\.(png|jpg)$')
[ "$(wc -l < "$WORK/out.txt")" -eq "$count" ] || fail "expected $count lines, got $(wc -l < "$WORK/out.txt")"
while IFS= read -r line; do
    path="${line%% *}"
    rest="${line#* }"
    file=$(basename "$path")
    want="${LABELS[${file%%_*}]}"
    first="${rest%%:*}"
    [ "$first" = "$want" ] || fail "$file: first label '$first', expected '$want' ($line)"
    pairs=$(printf '%s\n' "$rest" | grep -oE ':[0-9]+\.[0-9]{4}' | tr -d ':')
    [ "$(printf '%s\n' "$pairs" | wc -l)" -eq 5 ] || fail "$file: not 5 label:probability pairs: $line"
    sorted=$(printf '%s\n' "$pairs" | sort -rn)
    [ "$pairs" = "$sorted" ] || fail "$file: probabilities not best first: $line"
done < "$WORK/out.txt"
# The top-1 probability agrees with PyTorch's (images/expected.txt, written by
# tools/train_fashion_mnist.py) to within 0.002, the JPEGs through decode, gray and resize too.
while read -r file label probability; do
    got=$(grep -F "/$file " "$WORK/out.txt" | grep -oE ':[0-9]+\.[0-9]{4}' | head -1 | tr -d ':')
    awk -v a="$got" -v b="$probability" 'BEGIN { d = a - b; exit !(a != "" && d < 0.002 && d > -0.002) }' ||
        fail "$file: top-1 probability ${got:-missing}, PyTorch gives $probability"
done < "$IMAGES/expected.txt"
grep -q '\[##############################\] 100%' "$WORK/err.txt" || fail "no progress bar: $(cat "$WORK/err.txt")"
grep -qE "classify: $count images in [0-9.]+ s: [0-9.]+ images/s" "$WORK/err.txt" || fail "no throughput line: $(cat "$WORK/err.txt")"

# One picture, top 3, no folder: no progress bar.
"$CLASSIFY" --top 3 "$IMAGES/9_ankle_boot.png" > "$WORK/one.txt" 2> "$WORK/one_err.txt" || fail "single picture: $(cat "$WORK/one_err.txt")"
grep -qE "^.*9_ankle_boot.png Ankle boot:[0-9.]+ [^:]+:[0-9.]+ [^:]+:[0-9.]+$" "$WORK/one.txt" || fail "single picture line: $(cat "$WORK/one.txt")"
[ ! -s "$WORK/one_err.txt" ] || fail "single picture wrote to stderr: $(cat "$WORK/one_err.txt")"

# Bad input: each gives a non-zero exit below 128 (not a signal) and a 'classify:' message.
expect_error() {
    local what="$1" code="$2"
    shift 2
    "$CLASSIFY" "$@" > "$WORK/bad_out.txt" 2> "$WORK/bad_err.txt"
    local rc=$?
    [ $rc -eq "$code" ] || fail "$what: exit $rc, expected $code"
    grep -q '^classify: ' "$WORK/bad_err.txt" || fail "$what: no 'classify:' message: $(cat "$WORK/bad_err.txt")"
}
echo "not a picture" > "$WORK/junk.png"
head -c 200 "$IMAGES/7_sneaker_112.jpg" > "$WORK/truncated.jpg"
expect_error "corrupt picture" 1 "$WORK/junk.png"
grep -q "junk.png" "$WORK/bad_err.txt" || fail "corrupt picture: message does not name the file"
expect_error "truncated JPEG" 1 "$WORK/truncated.jpg"
expect_error "missing file" 1 "$WORK/nonexistent.png"
expect_error "missing model" 1 --model "$WORK/nonexistent.onnx" "$IMAGES/1_trouser.png"
expect_error "model that is not ONNX" 1 --model "$WORK/junk.png" "$IMAGES/1_trouser.png"
expect_error "unknown option" 2 --frobnicate "$IMAGES/1_trouser.png"
expect_error "no image" 2
expect_error "bad --top" 2 --top zero "$IMAGES/1_trouser.png"
mkdir -p "$WORK/empty"
expect_error "empty folder" 1 "$WORK/empty"
# A bad picture among good ones: the good ones are still classified.
"$CLASSIFY" "$WORK/junk.png" "$IMAGES/1_trouser.png" > "$WORK/mixed.txt" 2> /dev/null
[ $? -eq 1 ] || fail "mixed run: expected exit 1"
grep -q "1_trouser.png Trouser:" "$WORK/mixed.txt" || fail "mixed run: the good picture was not classified"

if [ $failures -eq 0 ]; then
    echo "classify_test: ok"
else
    echo "classify_test: $failures failure(s)"
    exit 1
fi
