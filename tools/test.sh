#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, as CI runs it: on Debian 12, as root, from a clean clone. Installs the
# apt packages that are missing, then configures, builds and runs ctest twice: with g++ in
# build/gcc, then with clang++ in build/clang. Release with -O2 (not -O3 -DNDEBUG), so
# EMBER_ASSERT stays on. The benchmarks are built in the g++ suite (so they keep compiling) but
# not run; the clang suite skips them, and builds the examples for one ISA, to stay within CI's
# 90 minutes on 2 cores. Exits
# non-zero on the first failure; the last lines are ctest's summary. Between the two suites the
# kernel tests run under QEMU (tools/qemu_tests.sh: x86-64 without AVX-512, and AArch64). ONNX's
# conformance suite (libonnx-testdata) and, when ../shared/anchors is there, the model zoo run as
# part of ctest.
#
#     bash tools/test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/install_packages.sh \
    cmake ninja-build g++ clang \
    doctest-dev libxsimd-dev libeigen3-dev libstb-dev libbenchmark-dev python3 fonts-dejavu-core \
    libcpp-httplib-dev nlohmann-json3-dev \
    libonnx-testdata qemu-user-static g++-aarch64-linux-gnu

# The model tests (ctest label "models") need the anchor zoo: torch exports of resnet18 & co. and
# onnxruntime-node, made by the team's shared scripts beside this repository. Without them the
# test says it is skipped and why; a failed setup is reported here, not hidden.
if [ -f ../shared/anchors/setup.sh ]; then
    bash ../shared/anchors/setup.sh || echo "test.sh: warning: ../shared/anchors/setup.sh failed; models.anchor_zoo will be skipped"
fi

jobs="$(nproc 2>/dev/null || echo 2)"

# The benchmarks build (not run) in the g++ suite only.
bench_flag() {
    if [ "$1" = g++ ]; then echo -DEMBER_BUILD_BENCH=ON; else echo -DEMBER_BUILD_BENCH=OFF; fi
}

# The clang suite builds the examples and tools for one ISA (the compiler flags'), not with every
# kernel set: each dispatching executable compiles the whole op table three more times, and CI has
# 90 minutes on 2 cores. Its test binaries (ember_tests, ember_conformance) still dispatch, so
# clang compiles and tests every kernel set; the g++ suite builds everything dispatching.
dispatch_flag() {
    if [ "$1" = g++ ]; then echo -DEMBER_EXAMPLES_DISPATCH=ON; else echo -DEMBER_EXAMPLES_DISPATCH=OFF; fi
}

# The CUDA extension's test and benchmark build with nvcc where the toolkit is (CI has it, no GPU:
# the test then checks lowering and says the GPU half is skipped). Once, in the g++ suite.
cuda_flag() {
    if [ "$1" = g++ ] && [ -x /usr/local/cuda/bin/nvcc ]; then echo -DEMBER_BUILD_CUDA=ON; else echo -DEMBER_BUILD_CUDA=OFF; fi
}

run_suite() {
    local compiler="$1" dir="$2"
    echo "== ${compiler}: configure, build and test in ${dir}"
    cmake -S . -B "$dir" -G Ninja "$(cuda_flag "$compiler")" \
        -DCMAKE_CXX_COMPILER="$compiler" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_FLAGS_RELEASE=-O2 \
        -DEMBER_BUILD_TESTS=ON \
        -DEMBER_BUILD_EXAMPLES=ON \
        "$(bench_flag "$compiler")" \
        "$(dispatch_flag "$compiler")"
    cmake --build "$dir" --parallel "$jobs"
    # --timeout: a deadlocked test fails in minutes instead of ctest's default 25.
    ctest --test-dir "$dir" --output-on-failure -j2 --timeout 300
}

run_suite g++ build/gcc
# The kernel tests without AVX-512 (QEMU's Nehalem and Haswell CPUs) and on AArch64 (NEON,
# cross-compiled), reusing build/gcc's test binary: tools/qemu_tests.sh says what each proves.
echo "== QEMU: the kernel tests under -cpu Nehalem, -cpu Haswell and on aarch64"
bash tools/qemu_tests.sh build/gcc
run_suite clang++ build/clang
