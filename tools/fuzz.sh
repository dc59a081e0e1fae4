#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds ember's libFuzzer targets (fuzz/*_fuzz.cpp, clang with ASan + UBSan) in build/fuzz and
# runs each for a bounded time with fuzz/run_one.sh (which seeds the corpora: conformance models,
# the bundled model and pictures). Corpora grow in build/fuzz/corpus/<target>; a crash leaves
# <target>-crash-* files (and <target>.log) in build/fuzz/findings and makes this exit non-zero.
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

status=0
for target in "${targets[@]}"; do
    echo "== $target: ${seconds} s"
    bash fuzz/run_one.sh build/fuzz/fuzz/"$target" build/fuzz/corpus/"$target" build/fuzz/findings -max_total_time="$seconds" || status=1
done
exit $status
