#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What ember costs a project that uses it: the time to compile a translation unit that includes
# <ember/ember.hpp> and compiles a graph (with the op table inline, as by default, and with
# EMBER_OP_TABLE_IN_ONE_TU, as a project's other TUs are once one TU holds the table; config.hpp
# says how) and one that also includes <ember/onnx.hpp>, the loader, at -O0 and -O2, the median
# of N runs each; and the size of the classify example (built as tools/demo.sh builds it:
# Release -O2, runtime dispatch over AVX-512, AVX2 and SSE2, image decoding and the ONNX loader),
# as built and stripped. Prints a Markdown table (the README's figures come from it).
#
#     bash tools/compile_cost.sh [--runs N] [--compiler g++] [--build-dir build/cost]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=5 cxx=g++ dir=build/cost
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --compiler) cxx="$2"; shift 2 ;;
        --build-dir) dir="$2"; shift 2 ;;
        *) echo "usage: bash tools/compile_cost.sh [--runs N] [--compiler g++] [--build-dir DIR]" >&2; exit 2 ;;
    esac
done
command -v "$cxx" >/dev/null || { echo "compile_cost.sh: no compiler '$cxx'" >&2; exit 2; }
mkdir -p "$dir"

# The smallest real use of each header: compile a graph, run it.
cat > "$dir/use_ember.cpp" <<'CPP'
#include <ember/ember.hpp>
int main() {
    ember::graph_builder b("g");
    ember::value_id x = b.input("x", ember::dtype::float32, {1, 4});
    b.output(b.node("Relu", {x}), "y");
    auto g = std::move(b).build();
    auto p = g ? ember::compile(*g) : ember::result<ember::plan>(g.error());
    return p ? 0 : 1;
}
CPP
cat > "$dir/use_onnx.cpp" <<'CPP'
#include <ember/ember.hpp>
#include <ember/onnx.hpp>
int main(int argc, char** argv) {
    auto g = ember::onnx::load_file(argc > 1 ? argv[1] : "model.onnx");
    auto p = g ? ember::compile(*g) : ember::result<ember::plan>(g.error());
    return p ? 0 : 1;
}
CPP

# median_seconds FILE FLAGS...: compile FILE to an object N times, print the median wall time.
median_seconds() {
    local src="$1"; shift
    local times=()
    for _ in $(seq "$runs"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$cxx" -std=c++17 -Iinclude "$@" -c "$src" -o "$dir/tu.o"
        t1=$(date +%s.%N)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'
}

echo "| translation unit ($("$cxx" --version | head -1)) | -O0 s | -O2 s |"
echo "|---|---|---|"
echo "| use_ember.cpp: ember.hpp, compile() and the op table (by default in every TU that compiles) | $(median_seconds "$dir/use_ember.cpp" -O0) | $(median_seconds "$dir/use_ember.cpp" -O2) |"
echo "| use_ember.cpp with -DEMBER_OP_TABLE_IN_ONE_TU (a project's other TUs: the table is in one) | $(median_seconds "$dir/use_ember.cpp" -O0 -DEMBER_OP_TABLE_IN_ONE_TU) | $(median_seconds "$dir/use_ember.cpp" -O2 -DEMBER_OP_TABLE_IN_ONE_TU) |"
echo "| use_onnx.cpp: the same plus onnx.hpp's loader | $(median_seconds "$dir/use_onnx.cpp" -O0) | $(median_seconds "$dir/use_onnx.cpp" -O2) |"

cmake -S . -B "$dir/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 \
    -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=ON -DEMBER_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir/build" --target classify >/dev/null
strip --strip-all -o "$dir/classify.stripped" "$dir/build/examples/classify"
size_of() { stat -c %s "$1" | awk '{printf "%.2f MiB (%d bytes)", $1 / 1048576, $1}'; }
echo
echo "| classify (Release -O2, dispatch AVX-512/AVX2/SSE2) | size |"
echo "|---|---|"
echo "| as built | $(size_of "$dir/build/examples/classify") |"
echo "| stripped | $(size_of "$dir/classify.stripped") |"
