#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the examples (no tests) in build/demo and runs the demo: examples/classify with the
# bundled Fashion-MNIST CNN (models/fashion_mnist) on its sample pictures, one line per picture
# (path, then the top-5 label:probability pairs), a progress bar and the throughput on stderr.
# On Debian 12 as root it first installs the apt packages that are missing. Arguments replace
# the pictures (files or folders) and can set options, e.g.
#
#     bash tools/demo.sh
#     bash tools/demo.sh --top 3 models/fashion_mnist/images/9_ankle_boot.png
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/install_packages.sh cmake ninja-build g++ libxsimd-dev libstb-dev

cmake -S . -B build/demo -G Ninja \
    -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_BUILD_TESTS=OFF \
    -DEMBER_BUILD_EXAMPLES=ON
cmake --build build/demo --parallel "$(nproc 2>/dev/null || echo 2)" --target classify
if [ $# -eq 0 ]; then
    set -- models/fashion_mnist/images
fi
exec build/demo/examples/classify "$@"
