#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ember-quantize end to end on the bundled Fashion-MNIST model: the ten bundled pictures (decoded
# by python3's zlib, pixels / 255 as the model was trained) are the calibration set; each method
# (minmax, percentile, entropy; per tensor and per channel; a file, a folder, the pictures
# themselves) writes a QDQ
# model that ember-run loads and runs, whose logits pick the same class as the FP32 model's for
# every picture and stay within a few steps of them (the largest difference is printed); with
# onnxruntime-node present (tools/ort_run.js) ONNX Runtime runs the QDQ model too. --progress
# draws the bar on stderr, and without a terminal or --progress there is none. Every bad input
# gives one line on stderr ("ember-quantize: ...") and a non-zero exit that is not a crash.
#
#     bash tests/tools/quantize_test.sh EMBER_QUANTIZE EMBER_RUN SOURCE_DIR WORK_DIR
set -u
if [ $# -ne 4 ]; then
    echo "usage: $0 EMBER_QUANTIZE EMBER_RUN SOURCE_DIR WORK_DIR" >&2
    exit 2
fi
QUANTIZE="$1"
EMBER_RUN="$2"
SOURCE="$3"
WORK="$4"
MODEL="$SOURCE/models/fashion_mnist/model.onnx"
if ! command -v python3 > /dev/null; then
    echo "quantize_test: python3 is needed to make the .npy samples"
    exit 1
fi
rm -rf "$WORK" && mkdir -p "$WORK/folder" && cd "$WORK" || exit 1

# The ten bundled PNGs as calib.npy [10, 1, 28, 28] float32, two halves in folder/, and bad
# fixtures: int32 data, a sample of the wrong size, a rank-1 array.
python3 - "$SOURCE/models/fashion_mnist/images" <<'PY' || exit 1
import struct, sys, zlib, os
def png_gray(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', path
    pos, idat, w, h = 8, b'', 0, 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, color, _, _, interlace = struct.unpack('>IIBBBBB', body)
            assert depth == 8 and color == 0 and interlace == 0, path
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw, rows, prev = zlib.decompress(idat), [], [0] * w
    for y in range(h):
        f, line = raw[y * (w + 1)], list(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
        for x in range(w):
            a = line[x - 1] if x else 0
            b, c = prev[x], prev[x - 1] if x else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return [v for r in rows for v in r]
def save(path, descr, shape, values, fmt):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ''.join('%d, ' % d for d in shape).rstrip(' ') if len(shape) != 1 else '%d,' % shape[0])
    header += ' ' * (63 - (len(header) + 10) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(values), fmt), *values))
folder = sys.argv[1]
names = sorted(n for n in os.listdir(folder) if n.endswith('.png'))
pixels = [v / 255.0 for n in names for v in png_gray(os.path.join(folder, n))]
assert len(names) == 10
save('calib.npy', '<f4', (10, 1, 28, 28), pixels, 'f')
save('folder/a.npy', '<f4', (4, 1, 28, 28), pixels[:4 * 784], 'f')
save('folder/b.npy', '<f4', (6, 1, 1, 28, 28), pixels[4 * 784:], 'f')  # with the batch axis
save('calib_int.npy', '<i4', (2, 1, 28, 28), [0] * (2 * 784), 'i')
save('calib_small.npy', '<f4', (2, 1, 28, 20), [0.0] * (2 * 560), 'f')
save('calib_flat.npy', '<f4', (4,), [0.0] * 4, 'f')
save('labels.npy', '|u1', (10,), [int(n[0]) for n in names], 'B')  # "<class index>_<name>.png"
save('labels_short.npy', '<i8', (3,), [0, 1, 2], 'q')
PY
echo "not a model" > junk.onnx
mkdir -p empty_folder pictures bad_pictures mixed && cp "$SOURCE"/models/fashion_mnist/images/*.png pictures/
echo "not a picture" > bad_pictures/x.png
cp pictures/1_trouser.png calib.npy mixed/

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# The FP32 logits of the ten pictures.
"$EMBER_RUN" "$MODEL" --input input=calib.npy --output-dir fp32 > /dev/null 2> err.txt || fail "ember-run on the FP32 model: $(cat err.txt)"

# compare NAME DIR: DIR/logits.npy against fp32/logits.npy: the same class for every picture, and
# a largest difference within 0.1 of the logits' range (a few uint8 steps of each activation).
compare() {
    python3 - "$1" fp32/logits.npy "$2/logits.npy" <<'PY'
import struct, sys
def load(path):
    data = open(path, 'rb').read()
    n = struct.unpack('<H', data[8:10])[0]
    values = data[10 + n:]
    return struct.unpack('<%df' % (len(values) // 4), values)
name, a, b = sys.argv[1], load(sys.argv[2]), load(sys.argv[3])
assert len(a) == len(b) == 100, (len(a), len(b))
span = max(a) - min(a)
worst = max(abs(x - y) for x, y in zip(a, b))
same = sum(a[i * 10:(i + 1) * 10].index(max(a[i * 10:(i + 1) * 10])) == b[i * 10:(i + 1) * 10].index(max(b[i * 10:(i + 1) * 10])) for i in range(10))
print('%s: max |logit diff| %.4f of a %.2f range (%.2f%%), same class for %d/10 pictures' % (name, worst, span, 100 * worst / span, same))
sys.exit(0 if same == 10 and worst <= 0.1 * span else 1)
PY
}

# quantize NAME ARGS...: ember-quantize succeeds and prints its summary, ember-run runs the output,
# and its logits are close to FP32's.
quantize() {
    local name="$1"
    shift
    checks=$((checks + 1))
    if ! "$QUANTIZE" "$MODEL" --output "$name.onnx" "$@" > out.txt 2> err.txt; then
        fail "$name: ember-quantize failed: $(cat err.txt)"
        return
    fi
    [ -s err.txt ] && fail "$name: stderr is not empty without a terminal or --progress: $(cat err.txt)"
    grep -q "^quantized 4 of 4 Conv/MatMul/Gemm nodes .* -> $name.onnx$" out.txt || fail "$name: summary: $(cat out.txt)"
    if ! "$EMBER_RUN" "$name.onnx" --input input=calib.npy --output-dir "$name" > /dev/null 2> err.txt; then
        fail "$name: ember-run on the QDQ model: $(cat err.txt)"
        return
    fi
    compare "$name" "$name" || fail "$name: the QDQ model's logits are too far from FP32's"
}

quantize minmax --calibration calib.npy
quantize minmax_per_channel --calibration calib.npy --per-channel
quantize percentile --calibration calib.npy --method percentile --percentile 99.9
quantize entropy --calibration calib.npy --method entropy --per-channel
quantize folder --calibration folder --method=minmax
quantize pictures --calibration pictures  # the same ten pictures, decoded and scaled by ember
cmp -s minmax.onnx folder.onnx || fail "the folder's samples gave another model than the same samples in one file"
# int8 weights: the QDQ file is about a quarter of the FP32 one (the float weights are dropped).
checks=$((checks + 1))
[ "$(wc -c < minmax.onnx)" -lt $(($(wc -c < "$MODEL") * 2 / 5)) ] || fail "minmax.onnx is $(wc -c < minmax.onnx) bytes, the FP32 model $(wc -c < "$MODEL")"

# ONNX Runtime runs the QDQ model too (when onnxruntime-node is installed, as for the model tests).
ORT_DIR="${ORT_NODE_DIR:-${EMBER_ANCHORS:-$HOME/.cache/ember-anchors}/node_modules/onnxruntime-node}"
if command -v node > /dev/null && [ -d "$ORT_DIR" ]; then
    checks=$((checks + 1))
    if ORT_NODE_DIR="$ORT_DIR" node "$SOURCE/tools/ort_run.js" minmax_per_channel.onnx --input input=calib.npy --output-dir ort > /dev/null 2> err.txt; then
        compare "onnxruntime" ort || fail "ONNX Runtime's logits on the QDQ model are too far from FP32's"
    else
        fail "ONNX Runtime cannot run the QDQ model: $(cat err.txt)"
    fi
else
    echo "onnxruntime: skipped (no node or no onnxruntime-node at $ORT_DIR)"
fi

# --keep-fp32: the named node stays float.
checks=$((checks + 1))
if "$QUANTIZE" "$MODEL" --calibration calib.npy --output keep.onnx --keep-fp32 /classifier/Gemm > out.txt 2> err.txt; then
    grep -q "^quantized 3 of 4 " out.txt || fail "--keep-fp32: summary: $(cat out.txt)"
else
    fail "--keep-fp32: $(cat err.txt)"
fi

# --keep-fp32 auto: entropy ranges put the logits 3 % off; auto keeps the most sensitive nodes in
# FP32 until they are within --max-error (1 %), and the written model is.
checks=$((checks + 1))
if "$QUANTIZE" "$MODEL" --calibration calib.npy --output auto.onnx --method entropy --keep-fp32 auto > out.txt 2> err.txt; then
    cat out.txt
    grep -Eq "^--keep-fp32 auto: kept [^ ]+.* \(output error 0\.[0-9]+ % of the range; 3\.[0-9]+ % with every node quantized\)$" out.txt ||
        fail "--keep-fp32 auto: $(cat out.txt)"
    "$EMBER_RUN" auto.onnx --input input=calib.npy --output-dir auto > /dev/null 2> err.txt || fail "ember-run on auto.onnx: $(cat err.txt)"
    compare "keep-fp32 auto" auto || fail "--keep-fp32 auto: logits too far"
else
    fail "--keep-fp32 auto: $(cat err.txt)"
fi

# --evaluate: the FP32 and INT8 top-1 accuracy on labelled samples (the ten pictures, each
# classified right by both models).
checks=$((checks + 1))
if "$QUANTIZE" "$MODEL" --calibration calib.npy --output eval.onnx --per-channel --evaluate calib.npy --labels labels.npy > out.txt 2> err.txt; then
    grep -q "^top-1 accuracy on 10 samples: FP32 100.00 %, INT8 100.00 % (+0.00 points)$" out.txt || fail "--evaluate: $(cat out.txt)"
else
    fail "--evaluate: $(cat err.txt)"
fi

# --progress: the bar on stderr.
checks=$((checks + 1))
"$QUANTIZE" "$MODEL" --calibration calib.npy --output progress.onnx --method entropy --progress > out.txt 2> err.txt || fail "--progress: $(cat err.txt)"
grep -q '\[##############################\] 100% 20/20' err.txt || fail "--progress: no bar on stderr: $(cat err.txt)"

# expect_error NAME PATTERN ARGS...: a non-zero exit below 128 (no signal) and exactly one line on
# stderr, starting "ember-quantize: " and matching the extended regex PATTERN.
expect_error() {
    local name="$1" pattern="$2"
    shift 2
    checks=$((checks + 1))
    "$QUANTIZE" "$@" > out.txt 2> err.txt
    local rc=$?
    if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
        fail "$name: exit $rc (want a non-zero exit without a crash); stderr: $(cat err.txt)"
    elif [ "$(wc -l < err.txt)" -ne 1 ]; then
        fail "$name: want one line on stderr, got: $(cat err.txt)"
    elif ! grep -Eq "^ember-quantize: $pattern" err.txt; then
        fail "$name: stderr does not match '$pattern': $(cat err.txt)"
    fi
}

expect_error "no arguments" "command line: no model given" 
expect_error "missing model" "model 'missing.onnx': cannot open model file" missing.onnx --calibration calib.npy --output x.onnx
expect_error "junk model" "model 'junk.onnx': " junk.onnx --calibration calib.npy --output x.onnx
expect_error "no calibration" "command line: no calibration data" "$MODEL" --output x.onnx
expect_error "no output" "command line: no output file" "$MODEL" --calibration calib.npy
expect_error "missing data" "--calibration 'missing.npy': no such file or folder" "$MODEL" --calibration missing.npy --output x.onnx
expect_error "empty folder" "--calibration 'empty_folder': the folder has no .npy files or pictures" "$MODEL" --calibration empty_folder --output x.onnx
expect_error "bad picture" "--calibration 'bad_pictures/x.png': " "$MODEL" --calibration bad_pictures --output x.onnx
expect_error "mixed folder" "--calibration 'mixed': the folder holds both .npy files and pictures" "$MODEL" --calibration mixed --output x.onnx
expect_error "picture flags on npy" "--resize, --mean, --std, --bgr: only apply to pictures" "$MODEL" --calibration calib.npy --output x.onnx --mean 0.5
expect_error "int data" "--calibration 'calib_int.npy': holds int32, the model's input 'input' is float32" "$MODEL" --calibration calib_int.npy --output x.onnx
expect_error "wrong size" "--calibration 'calib_small.npy': a sample is \[1, 1, 28, 20\]" "$MODEL" --calibration calib_small.npy --output x.onnx
expect_error "wrong rank" "--calibration 'calib_flat.npy': has shape \[4\]; expected \[N, ...\]" "$MODEL" --calibration calib_flat.npy --output x.onnx
expect_error "not npy" "--calibration 'junk.onnx': " "$MODEL" --calibration junk.onnx --output x.onnx
expect_error "unknown method" "--method: unknown method 'kl' \(expected minmax, percentile or entropy\)" "$MODEL" --calibration calib.npy --output x.onnx --method kl
expect_error "bad percentile" "--percentile: expected a number in \(0, 100\], got '101'" "$MODEL" --calibration calib.npy --output x.onnx --method percentile --percentile 101
expect_error "percentile alone" "--percentile: only applies with --method percentile" "$MODEL" --calibration calib.npy --output x.onnx --percentile 99
expect_error "unknown node" "--keep-fp32 nope: the model has no node of that name" "$MODEL" --calibration calib.npy --output x.onnx --keep-fp32 nope
expect_error "max-error alone" "--max-error: only applies with --keep-fp32 auto" "$MODEL" --calibration calib.npy --output x.onnx --max-error 2
expect_error "bad max-error" "--max-error: expected a percentage in \[0, 100\], got 'x'" "$MODEL" --calibration calib.npy --output x.onnx --keep-fp32 auto --max-error x
expect_error "unknown flag" "--bits: unknown flag" "$MODEL" --calibration calib.npy --output x.onnx --bits 4
expect_error "unwritable output" "--output 'no/such/dir/x.onnx': cannot create" "$MODEL" --calibration calib.npy --output no/such/dir/x.onnx
expect_error "evaluate alone" "--evaluate: needs --labels LABELS.npy" "$MODEL" --calibration calib.npy --output x.onnx --evaluate calib.npy
expect_error "labels alone" "--labels: only applies with --evaluate DATA" "$MODEL" --calibration calib.npy --output x.onnx --labels labels.npy
expect_error "float labels" "--labels 'calib_flat.npy': holds float32; expected int64, int32, uint8 or int8 class indices" "$MODEL" --calibration calib.npy --output x.onnx --evaluate calib.npy --labels calib_flat.npy
expect_error "labels of rank 4" "--labels 'calib.npy': has shape \[10, 1, 28, 28\]; expected \[N\]" "$MODEL" --calibration calib.npy --output x.onnx --evaluate calib.npy --labels calib.npy
expect_error "too few labels" "--evaluate with '.*model.onnx': top1_accuracy: 3 labels for 10 rows \(10 samples of 1\)" "$MODEL" --calibration calib.npy --output x.onnx --evaluate calib.npy --labels labels_short.npy
expect_error "bad evaluate data" "--evaluate 'calib_small.npy': a sample is \[1, 1, 28, 20\]" "$MODEL" --calibration calib.npy --output x.onnx --evaluate calib_small.npy --labels labels.npy
expect_error "bad threads" "--threads: expected a whole number" "$MODEL" --calibration calib.npy --output x.onnx --threads two

if [ $failures -ne 0 ]; then
    echo "quantize_test: $failures of $checks checks failed"
    exit 1
fi
echo "quantize_test: ok ($checks checks)"
