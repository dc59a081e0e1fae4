#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ember-codegen's command line: the runs that work (stdout and -o give the same header, the
# default namespace comes from the file name, the header includes only ember.hpp and
# graph/codegen.hpp), and every bad input: exactly one line on stderr ("ember-codegen: ..."),
# a non-zero exit that is not a crash, and no header (or half of one) left behind.
#
#     bash tests/codegen/bad_input_test.sh path/to/ember-codegen MODEL.onnx WORK_DIR
set -u
if [ $# -ne 3 ]; then
    echo "usage: $0 EMBER_CODEGEN MODEL.onnx WORK_DIR" >&2
    exit 2
fi
CODEGEN="$1"
MODEL="$2"
WORK="$3"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1

cp "$MODEL" model.onnx
cp "$MODEL" "my-model.v2.onnx"
cp "$MODEL" "3d.onnx"
cp "$MODEL" "int.onnx"
head -c 1000 "$MODEL" > truncated.onnx
echo "not a model" > junk.onnx
: > empty.onnx
mkdir folder.onnx

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect_ok NAME ARGS...: exit 0 and nothing on stderr.
expect_ok() {
    local name="$1"
    shift
    checks=$((checks + 1))
    "$CODEGEN" "$@" > out.txt 2> err.txt
    local rc=$?
    if [ $rc -ne 0 ] || [ -s err.txt ]; then
        fail "$name: exit $rc, stderr: $(cat err.txt)"
        return 1
    fi
    return 0
}

# expect_error NAME CODE PATTERN ARGS...: exit CODE, exactly one line on stderr that starts with
# "ember-codegen: " and matches the extended regex PATTERN, and no out.hpp or out.hpp.tmp.
expect_error() {
    local name="$1" code="$2" pattern="$3"
    shift 3
    checks=$((checks + 1))
    rm -f out.hpp out.hpp.tmp
    "$CODEGEN" "$@" > out.txt 2> err.txt
    local rc=$?
    local lines
    lines=$(wc -l < err.txt)
    if [ $rc -ne "$code" ]; then
        fail "$name: exit $rc (want $code); stderr: $(cat err.txt)"
    elif [ "$lines" -ne 1 ] || [ "$(tail -c 1 err.txt | od -An -c | tr -d ' ')" != '\n' ]; then
        fail "$name: $lines lines on stderr (want exactly one):"
        cat err.txt
    elif ! grep -q '^ember-codegen: ' err.txt; then
        fail "$name: stderr does not start with 'ember-codegen: ': $(cat err.txt)"
    elif ! grep -Eq -- "$pattern" err.txt; then
        fail "$name: stderr does not match /$pattern/: $(cat err.txt)"
    elif [ -e out.hpp ] || [ -e out.hpp.tmp ]; then
        fail "$name: left out.hpp or out.hpp.tmp behind"
    else
        echo "ok: $name: $(cat err.txt)"
    fi
}

# -- runs that work ----------------------------------------------------------------------------
if expect_ok "-o" model.onnx -o model.hpp && expect_ok "stdout" model.onnx; then
    checks=$((checks + 1))
    cmp -s model.hpp out.txt || fail "stdout and -o give different headers"
    checks=$((checks + 1))
    includes=$(grep '^#include' model.hpp | tr '\n' ' ')
    [ "$includes" = "#include <cstdint> #include <ember/ember.hpp> #include <ember/graph/codegen.hpp> " ] ||
        fail "the header includes more than ember.hpp and graph/codegen.hpp: $includes"
    checks=$((checks + 1))
    grep -q '^namespace model {$' model.hpp || fail "model.onnx: namespace is not 'model'"
    checks=$((checks + 1))
    [ -e model.hpp.tmp ] && fail "-o left model.hpp.tmp behind"
fi
namespace_of() {
    expect_ok "default namespace of $1" "$1" && grep -E '^namespace [A-Za-z0-9_:]+ \{$' out.txt | head -n 1
}
checks=$((checks + 3))
[ "$(namespace_of my-model.v2.onnx)" = "namespace my_model {" ] || fail "my-model.v2.onnx: $(namespace_of my-model.v2.onnx)"
[ "$(namespace_of 3d.onnx)" = "namespace model_3d {" ] || fail "3d.onnx: $(namespace_of 3d.onnx)"
[ "$(namespace_of int.onnx)" = "namespace int_model {" ] || fail "int.onnx: $(namespace_of int.onnx)"
if expect_ok "--namespace a::b" model.onnx --namespace=game::models -o nested.hpp; then
    checks=$((checks + 1))
    grep -q '^namespace game::models {$' nested.hpp || fail "--namespace game::models not in the header"
fi
checks=$((checks + 1))
if ! "$CODEGEN" --help > out.txt 2> err.txt || ! grep -q '^usage: ember-codegen' out.txt || [ -s err.txt ]; then
    fail "--help: $(cat out.txt err.txt)"
fi

# -- every bad input: one line on stderr, a non-zero exit ---------------------------------------
expect_error "no arguments" 2 "no model given"
expect_error "unknown flag" 2 "--bogus: unknown flag" model.onnx --bogus
expect_error "-o without value" 2 "-o: needs a value" model.onnx -o
expect_error "two models" 2 "more than one model" model.onnx other.onnx -o out.hpp
expect_error "namespace with a digit first" 2 "--namespace: '1abc' starts with a digit" model.onnx --namespace 1abc -o out.hpp
expect_error "namespace a keyword" 2 "--namespace: 'int' is a C\+\+ keyword" model.onnx --namespace int -o out.hpp
expect_error "namespace ember" 2 "--namespace: 'ember' is a C\+\+ keyword or a namespace the header uses" model.onnx --namespace ember -o out.hpp
expect_error "namespace with a dash" 2 "--namespace: 'a-b' has characters" model.onnx --namespace a-b -o out.hpp
expect_error "namespace ending in ::" 2 "--namespace: an empty name" model.onnx --namespace a:: -o out.hpp
expect_error "namespace with __" 2 "--namespace: 'a__b' is reserved" model.onnx --namespace a__b -o out.hpp
expect_error "missing model" 1 "nope.onnx: cannot open model file" nope.onnx -o out.hpp
expect_error "a folder as the model" 1 "folder.onnx: cannot read" folder.onnx -o out.hpp
expect_error "a model that is not ONNX" 1 "junk.onnx: .*junk.onnx: " junk.onnx -o out.hpp
expect_error "a truncated model" 1 "truncated.onnx: .*truncated" truncated.onnx -o out.hpp
expect_error "an empty file" 1 "empty.onnx: " empty.onnx -o out.hpp
expect_error "-o in a missing folder" 1 "-o no/such/dir/out.hpp: cannot create 'no/such/dir/out.hpp.tmp'" model.onnx -o no/such/dir/out.hpp
expect_error "-o onto a folder" 1 "-o folder.onnx: cannot rename" model.onnx -o folder.onnx
checks=$((checks + 1))
[ -e folder.onnx.tmp ] && fail "-o onto a folder left folder.onnx.tmp behind"
if [ -w /dev/full ]; then
    "$CODEGEN" model.onnx > /dev/full 2> err.txt
    rc=$?
    checks=$((checks + 1))
    [ $rc -eq 1 ] && grep -q "cannot write" err.txt || fail "stdout to /dev/full: exit $rc, $(cat err.txt)"
fi

if [ "$failures" -ne 0 ]; then
    echo "bad_input_test: $failures of $checks checks failed"
    exit 1
fi
echo "bad_input_test: ok ($checks checks)"
