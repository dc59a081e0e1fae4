#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the examples (no tests) in build/demo and runs the demo: for now examples/custom_graph,
# a small CNN built in C++, compiled and run on a thread pool, checked against plain loops.
# On Debian 12 as root it first installs the apt packages that are missing. Arguments are
# passed on to the demo.
#
#     bash tools/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/install_packages.sh cmake ninja-build g++

cmake -S . -B build/demo -G Ninja \
    -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_BUILD_TESTS=OFF \
    -DEMBER_BUILD_EXAMPLES=ON
cmake --build build/demo --parallel "$(nproc 2>/dev/null || echo 2)" --target custom_graph
exec build/demo/examples/custom_graph "$@"
