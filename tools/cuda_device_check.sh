#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CUDA extension's check on a GPU machine: the CUDA tests (every op and the anchor zoo against
# the CPU) and the resnet50 benchmark at batch 1, 8 and 64. Two steps:
#
#   bash tools/cuda_device_check.sh prepare   # here: build/cuda (EMBER_BUILD_CUDA=ON) and the small
#                                             # zoo models into .devrun/models (add /.devrun/ to
#                                             # .git/info/exclude); carry build/cuda's binaries and .devrun
#   bash tools/cuda_device_check.sh run       # there: finds cuDNN/cuBLAS, exports the big zoo models
#                                             # with its torch, writes logs to $OUT (default .devrun/out)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=build/cuda/tests/cuda
case "${1:-}" in
prepare)
    cmake -S . -B build/cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_CUDA=ON -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_EXAMPLES=OFF &&
        cmake --build build/cuda || exit 1
    zoo="${EMBER_ANCHORS:-$HOME/.cache/ember-anchors}/models"
    mkdir -p .devrun/models
    cp "$zoo/models.json" .devrun/models/ || exit 1
    for m in encoder_small mlp_tiny squeezenet1_1 shufflenet_v2_x1_0 mobilenet_v2; do
        cp "$zoo/$m.onnx" "$zoo/$m.in.npy" .devrun/models/ || exit 1
    done
    echo "carry: $bin/ember_cuda_tests $bin/ember_cuda_bench $bin/ember_cuda_readme_snippet .devrun"
    ;;
run)
    out="${OUT:-.devrun/out}"
    mkdir -p "$out"
    export EMBER_ANCHORS=$PWD/.devrun
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu.txt"
    libdirs=$(find /usr /opt -xdev \( -name 'libcudnn.so.9' -o -name 'libcublas.so.13' -o -name 'libcublasLt.so.13' \) -printf '%h\n' 2>/dev/null | sort -u | tr '\n' ':')
    export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:-}
    python3 tools/export_zoo_torch2.py .devrun/models 2>&1 | grep -vi warn
    timeout 60 $bin/ember_cuda_readme_snippet 2>&1 | tee "$out/snippet.log"
    timeout 330 $bin/ember_cuda_tests --no-version=true > "$out/tests.log" 2>&1
    echo "ember_cuda_tests rc=$?"
    grep -E "MESSAGE|ERROR|test cases|assertions" "$out/tests.log"
    timeout 150 $bin/ember_cuda_bench .devrun/models/resnet50.onnx --repeat 30 2>&1 | tee "$out/bench.log"
    ;;
*)
    echo "usage: bash tools/cuda_device_check.sh prepare|run" >&2
    exit 2
    ;;
esac
