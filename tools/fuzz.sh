#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds ember's libFuzzer targets (fuzz/*_fuzz.cpp, clang with ASan + UBSan) in build/fuzz and
# runs each for a bounded time over a corpus seeded from what the repository and Debian have:
# the ONNX targets from libonnx-testdata's models and the bundled model (with fuzz/onnx.dict),
# image targets from the bundled pictures; npy_fuzz starts empty (libFuzzer finds the format's
# magic and header in seconds). Corpora grow in build/fuzz/corpus/<target>;
# a crash leaves crash-* files in build/fuzz/findings and makes this script exit non-zero.
#
#     bash tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET ...]    (default 60 s, every built target)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
shift || true
bash tools/install_packages.sh cmake ninja-build clang libclang-rt-14-dev libonnx-testdata

cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_INSTALL=OFF -DEMBER_BUILD_FUZZ=ON >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for source in fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi
cmake --build build/fuzz --target "${targets[@]}"

mkdir -p build/fuzz/findings
status=0
for target in "${targets[@]}"; do
    corpus="build/fuzz/corpus/$target"
    mkdir -p "$corpus"
    extra=()
    case "$target" in
        onnx_*)
            cp -n models/fashion_mnist/model.onnx "$corpus/bundled.onnx"
            for model in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
                [ -f "$model" ] && cp -n "$model" "$corpus/$(basename "$(dirname "$model")").onnx"
            done
            extra=(-dict=fuzz/onnx.dict) ;;
        image_*)
            cp -n models/fashion_mnist/images/* "$corpus/" 2>/dev/null || true ;;
    esac
    echo "== $target: ${seconds} s over $(ls "$corpus" | wc -l) seed files"
    if ! build/fuzz/fuzz/"$target" "${extra[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix=build/fuzz/findings/"$target"- "$corpus" 2>&1 | grep -E "^(stat::number_of_executed_units|Done|==[0-9]+==ERROR|SUMMARY)"; then
        :
    fi
    if ls build/fuzz/findings/"$target"-* >/dev/null 2>&1; then
        echo "$target: FOUND a crash: $(ls build/fuzz/findings/"$target"-*)"
        status=1
    fi
done
exit $status
