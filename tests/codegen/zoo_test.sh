#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The codegen round trip for one anchor zoo model, at test time: ember-codegen writes the header,
# the build's compiler compiles tests/codegen/generated.cpp over it (ember's warning flags, no
# ONNX importer in the header), links it with the driver library and runs it on NAME.in.npy.
# Exits 77 (skipped) with the reason when the zoo or the model is absent.
#
#     bash tests/codegen/zoo_test.sh EMBER_CODEGEN DRIVER_LIB CXX "CXXFLAGS" SOURCE_DIR WORK_DIR NAME
#
# NAME may also be the path of an .onnx file outside the zoo, run on the driver's seeded inputs.
set -u
if [ $# -ne 7 ]; then
    echo "usage: $0 EMBER_CODEGEN DRIVER_LIB CXX CXXFLAGS SOURCE_DIR WORK_DIR NAME" >&2
    exit 2
fi
CODEGEN="$1" DRIVER="$2" CXX="$3" FLAGS="$4" SRC="$5" WORK="$6" NAME="$7"
if [[ "$NAME" == *.onnx ]]; then
    # A model outside the zoo (ONNX's test data: If and Scan bodies), run on seeded inputs.
    MODEL="$NAME" INPUT=""
    NAME=$(basename "$(dirname "$MODEL")")
    if [ ! -f "$MODEL" ]; then
        echo "codegen zoo test: skipped: no '$MODEL' (Debian's libonnx-testdata)"
        exit 77
    fi
else
    if [ -n "${EMBER_ANCHORS:-}" ]; then ZOO="$EMBER_ANCHORS/models"; else ZOO="${HOME:-}/.cache/ember-anchors/models"; fi
    MODEL="$ZOO/$NAME.onnx" INPUT="$ZOO/$NAME.in.npy"
    if [ ! -f "$MODEL" ] || [ ! -f "$INPUT" ]; then
        echo "codegen zoo test: skipped: no $NAME.onnx and $NAME.in.npy in '$ZOO' (run ../shared/anchors/setup.sh, or set EMBER_ANCHORS)"
        exit 77
    fi
fi
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
HEADER="$WORK/$NAME.hpp"

seconds() { awk "BEGIN { printf \"%.2f\", $2 - $1 }"; }
start=$(date +%s.%N)
"$CODEGEN" "$MODEL" -o "$HEADER" --namespace "zoo::$NAME" || exit 1
generated=$(date +%s.%N)
includes=$(grep '^#include' "$HEADER" | tr '\n' ' ')
if [ "$includes" != "#include <cstdint> #include <ember/ember.hpp> #include <ember/graph/codegen.hpp> " ]; then
    echo "FAIL: the header includes more than ember.hpp and graph/codegen.hpp: $includes"
    exit 1
fi
# shellcheck disable=SC2086  # FLAGS is a list of flags
"$CXX" -std=gnu++17 $FLAGS -Wall -Wextra -Werror -DEMBER_OP_TABLE_IN_ONE_TU -I"$SRC/include" -I"$SRC/tests/codegen" -I"$WORK" \
    -DEMBER_CODEGEN_HEADER="\"$NAME.hpp\"" -DEMBER_CODEGEN_NAMESPACE="zoo::$NAME" -DEMBER_CODEGEN_GRAPH_ONLY \
    -c "$SRC/tests/codegen/generated.cpp" -o "$WORK/generated.o" || exit 1
compiled=$(date +%s.%N)
# shellcheck disable=SC2086  # the same flags at link time: a sanitizer build needs its runtime
"$CXX" $FLAGS "$WORK/generated.o" "$DRIVER" -pthread -o "$WORK/roundtrip" || exit 1
linked=$(date +%s.%N)
echo "codegen zoo test: $NAME: header $(stat -c %s "$HEADER") bytes, ember-codegen $(seconds "$start" "$generated") s," \
    "compile $(seconds "$generated" "$compiled") s, link $(seconds "$compiled" "$linked") s"
"$WORK/roundtrip" "$MODEL" ${INPUT:+"$INPUT"} ${EMBER_CODEGEN_TIME:+--time "$EMBER_CODEGEN_TIME"}
