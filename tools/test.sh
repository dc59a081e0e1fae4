#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, as CI runs it: on Debian 12, as root, from a clean clone. Installs the
# apt packages that are missing, then configures, builds and runs ctest three times:
#   1. g++ in build/gcc, Release with -O2 (not -O3 -DNDEBUG, so EMBER_ASSERT stays on); the
#      benchmarks and the CUDA extension's test are built there (not run);
#   then the kernel tests under QEMU (tools/qemu_tests.sh: x86-64 without AVX-512, and AArch64);
#   2. clang++ in build/clang with AddressSanitizer and UndefinedBehaviorSanitizer at -O1: every
#      test again (with the baseline kernel set), plus a short run of each libFuzzer target
#      (fuzz/, ctest's fuzz.*);
#   3. clang++ in build/tsan with ThreadSanitizer: the concurrency tests.
# Every executable links one shared op table (ember_op_table), which keeps CI within its
# 90 minutes on 2 cores. ONNX's conformance suite (libonnx-testdata) and, when ../shared/anchors
# is there, the model zoo run as part of ctest. Exits non-zero on the first failure; the last
# lines are ctest's summary.
#
#     bash tools/test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/install_packages.sh \
    cmake ninja-build g++ clang libclang-rt-14-dev \
    doctest-dev libxsimd-dev libeigen3-dev libstb-dev libbenchmark-dev python3 fonts-dejavu-core \
    libcpp-httplib-dev nlohmann-json3-dev \
    libonnx-testdata qemu-user-static g++-aarch64-linux-gnu dataset-fashion-mnist

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

# The CUDA extension's test and benchmark build with nvcc where the toolkit is (CI has it, no GPU:
# the test then checks lowering and says the GPU half is skipped). Once, in the g++ suite.
cuda_flag() {
    if [ "$1" = g++ ] && [ -x /usr/local/cuda/bin/nvcc ]; then echo -DEMBER_BUILD_CUDA=ON; else echo -DEMBER_BUILD_CUDA=OFF; fi
}

# run_suite COMPILER DIR RELEASE_FLAGS [more cmake arguments]
run_suite() {
    local compiler="$1" dir="$2" flags="$3"
    shift 3
    echo "== ${compiler} ${flags}: configure, build and test in ${dir}"
    cmake -S . -B "$dir" -G Ninja "$(cuda_flag "$compiler")" \
        -DCMAKE_CXX_COMPILER="$compiler" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_FLAGS_RELEASE="$flags" \
        -DEMBER_BUILD_TESTS=ON \
        -DEMBER_BUILD_EXAMPLES=ON \
        "$(bench_flag "$compiler")" "$@"
    cmake --build "$dir" --parallel "$jobs"
    # --timeout: a deadlocked test fails in minutes instead of ctest's default 25.
    ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600
}

run_suite g++ build/gcc -O2
# The kernel tests without AVX-512 (QEMU's Nehalem and Haswell CPUs) and on AArch64 (NEON,
# cross-compiled), reusing build/gcc's test binary: tools/qemu_tests.sh says what each proves.
echo "== QEMU: the kernel tests under -cpu Nehalem, -cpu Haswell and on aarch64"
bash tools/qemu_tests.sh build/gcc

# The clang suite is the sanitizer suite: every test again, built by clang++ at -O1 with
# AddressSanitizer and UndefinedBehaviorSanitizer (a report fails the test: UBSan does not
# recover), plus a smoke run of each libFuzzer target (ctest's fuzz.*). UBSan skips Debian's
# stb_image (tools/ubsan_ignorelist.txt says why); ASan does not. Leak checking is on.
sanitize="-fsanitize=address,undefined -fsanitize-ignorelist=$PWD/tools/ubsan_ignorelist.txt -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
export UBSAN_OPTIONS=print_stacktrace=1
# One kernel set (the baseline's, SSE2): the g++ suite and QEMU test every set against the
# reference. Through dispatch all the same (EMBER_KERNEL_SETS=sse2, not EMBER_DISPATCH_ALL=OFF),
# so the table is compiled once, in its own file, instead of in every test file that calls
# compile(): under ASan+UBSan that is 15 s a file instead of 2 minutes.
baseline_set=sse2
[ "$(uname -m)" = x86_64 ] || baseline_set=""  # AArch64 has one set, NEON
run_suite clang++ build/clang "-O1 $sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" -DEMBER_BUILD_FUZZ=ON -DEMBER_KERNEL_SETS="$baseline_set" -DEMBER_HEADER_CHECK=OFF

# ThreadSanitizer on the concurrency tests: the thread pool, sessions of one plan on many
# threads, the batcher, the parked-thread pool (one ISA: the kernels are not what it checks).
echo "== clang++ -fsanitize=thread: the concurrency tests in build/tsan"
cmake -S . -B build/tsan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g -fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
    -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_INSTALL=OFF -DEMBER_KERNEL_SETS="$baseline_set" \
    -DEMBER_TEST_ONLY="runtime/thread_pool;runtime/shared_plan;runtime/batcher;runtime/session"
cmake --build build/tsan --parallel "$jobs" --target ember_tests ember_pool_condvar_test
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build/tsan --output-on-failure -j2 --timeout 600 \
    -R '^runtime/(thread_pool|shared_plan|batcher|session)$|^runtime.thread_pool_condvar$'
