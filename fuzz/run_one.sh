#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one of ember's libFuzzer targets over a corpus folder, seeding the folder first from what
# the repository and Debian have: the ONNX targets get libonnx-testdata's 1072 models and the
# bundled model (and fuzz/onnx.dict), image_fuzz the bundled and test pictures, the others
# start empty (libFuzzer finds the .npy magic and header in seconds). A crash, a sanitizer
# report, a timeout or running out of memory leaves FINDINGS/<target>-* and exits non-zero.
# tools/fuzz.sh (long runs) and the fuzz.* ctest tests (short smoke runs) call it.
#
#     bash fuzz/run_one.sh BINARY CORPUS FINDINGS [libFuzzer flags, e.g. -max_total_time=60]
set -uo pipefail
if [ $# -lt 3 ]; then sed -n '2,10p' "${BASH_SOURCE[0]}"; exit 2; fi
binary="$1" corpus="$2" findings="$3"
shift 3
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$(basename "$binary")"
mkdir -p "$corpus" "$findings"
extra=()
case "$target" in
    onnx_*)
        cp -n "$root/models/fashion_mnist/model.onnx" "$corpus/bundled.onnx"
        for model in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
            [ -f "$model" ] && cp -n "$model" "$corpus/$(basename "$(dirname "$model")").onnx"
        done
        extra=(-dict="$root/fuzz/onnx.dict") ;;
    image_*)
        cp -n "$root"/models/fashion_mnist/images/* "$root"/tests/image/fixtures/*.png "$corpus/" 2>/dev/null ;;
esac
log="$findings/$target.log"
"$binary" "${extra[@]}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$findings/$target-" "$@" "$corpus" > "$log" 2>&1
rc=$?
echo "$target: $(ls "$corpus" | wc -l) corpus files; $(grep -m1 -oE '^stat::number_of_executed_units: [0-9]+' "$log" | sed 's/.*: //') executions; exit $rc"
if [ $rc -ne 0 ]; then
    grep -m5 -E "==[0-9]+==ERROR|SUMMARY|runtime error|Assertion|deadly signal|Test unit written" "$log"
    echo "$target: FOUND a failure (log: $log)"
fi
exit $rc
