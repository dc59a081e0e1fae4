#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A bounded load test of ember-serve (issue 7): wrk with 32 connections for 10 s on loopback, each
# POSTing the bundled Fashion-MNIST model's infer request (one picture, 1_trouser.png, as 784 FP32
# values in JSON). Prints wrk's requests/s and latency, the answers counted by HTTP status, and
# ember-serve's own counters (/metrics: requests by outcome, batch sizes). Fails when an answer is
# neither 200 nor a deliberate 503 (load shedding), when wrk saw a socket error, when the first
# answer is not Trouser, or when the server does not stop cleanly on SIGTERM. Not part of ctest
# (it takes 10 s of both cores); the README's serving section gives its figures.
#
#     bash tools/serve_load.sh [--build DIR] [--connections N] [--duration S] [-- EMBER-SERVE OPTIONS...]
#
# DIR holds the built ember-serve (default: the first of build/serve, build/gcc, build/clang that
# has examples/ember-serve): cmake --build DIR --target ember-serve. Installs wrk, curl and python3
# when they are missing (tools/install_packages.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build="" connections=32 duration=10
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --) shift; break ;;
        *) echo "serve_load.sh: unknown option $1 (options: --build DIR --connections N --duration S -- SERVER-OPTIONS)" >&2; exit 2 ;;
    esac
done
if [ -z "$build" ]; then
    for dir in build/serve build/gcc build/clang; do
        if [ -x "$dir/examples/ember-serve" ]; then build="$dir"; break; fi
    done
fi
server_bin="${build:-build/gcc}/examples/ember-serve"
[ -x "$server_bin" ] || { echo "serve_load.sh: no $server_bin (cmake --build DIR --target ember-serve)" >&2; exit 1; }
bash tools/install_packages.sh wrk curl python3

work="$(mktemp -d)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill -KILL "$server_pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/repo/fashion_mnist/1"
ln -s "$PWD/models/fashion_mnist/model.onnx" "$work/repo/fashion_mnist/1/model.onnx"

# The request: the picture's gray values / 255, decoded here (8-bit gray PNG, zlib and filters).
python3 - "$PWD/models/fashion_mnist/images/1_trouser.png" > "$work/body.json" <<'EOF'
import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I", data[pos:pos + 4])[0], data[pos + 4:pos + 8]
    if kind == b"IHDR":
        w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[pos + 8:pos + 21])
        assert (depth, color, interlace) == (8, 0, 0), "expected an 8-bit gray, non-interlaced PNG"
    elif kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw, prev, pixels = zlib.decompress(idat), bytearray(w), []
for y in range(h):
    kind, line = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
    for x in range(w):
        a, b, c = (line[x - 1] if x else 0), prev[x], (prev[x - 1] if x else 0)
        p = a + b - c
        pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c][kind]
        line[x] = (line[x] + pred) & 255
    pixels += line
    prev = line
print(json.dumps({"inputs": [{"name": "input", "shape": [1, 1, 28, 28], "datatype": "FP32", "data": [v / 255 for v in pixels]}]}))
EOF

"$server_bin" --models "$work/repo" --port 0 "$@" > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 600); do
    grep -q "listening on" "$work/server.out" 2> /dev/null && break
    kill -0 "$server_pid" 2> /dev/null || { echo "serve_load.sh: ember-serve exited: $(cat "$work/server.err")" >&2; exit 1; }
    sleep 0.1
done
line="$(head -1 "$work/server.out")"
url="$(printf '%s\n' "$line" | grep -oE 'http://[^,]+')" || { echo "serve_load.sh: ember-serve did not start: $(cat "$work/server.err")" >&2; exit 1; }
echo "$line"

# One answer first, checked: class 1 (Trouser) on top.
curl -sS -X POST -H 'Content-Type: application/json' --data-binary @"$work/body.json" "$url/v2/models/fashion_mnist/infer" > "$work/answer.json"
python3 - "$work/answer.json" <<'EOF'
import json, sys
logits = json.load(open(sys.argv[1]))["outputs"][0]["data"]
top = max(range(10), key=lambda i: logits[i])
print("first answer: top class", top, "(1 is Trouser)")
sys.exit(0 if top == 1 else 1)
EOF

cat > "$work/post.lua" <<'EOF'
-- POSTs the infer request; counts the answers by HTTP status in every thread, summed in done().
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("SERVE_LOAD_BODY"), "rb"))
wrk.body = f:read("*a")
f:close()
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) codes = {} end
function response(status, headers, body) codes[status] = (codes[status] or 0) + 1 end
function done(summary, latency, requests)
    local total = {}
    for _, t in ipairs(threads) do
        for code, n in pairs(t:get("codes")) do total[code] = (total[code] or 0) + n end
    end
    for code, n in pairs(total) do io.write(string.format("answers with status %d: %d\n", code, n)) end
end
EOF

wrk_threads=$(( connections < 2 ? connections : 2 ))
echo "== wrk -t$wrk_threads -c$connections -d${duration}s --latency POST $url/v2/models/fashion_mnist/infer"
SERVE_LOAD_BODY="$work/body.json" wrk -t"$wrk_threads" -c"$connections" -d"${duration}s" --timeout 10s --latency -s "$work/post.lua" \
    "$url/v2/models/fashion_mnist/infer" | tee "$work/wrk.txt"

echo "== ember-serve /metrics"
curl -sS "$url/metrics" | grep -E '^ember_(inference_requests_total|batch_size_(bucket|sum|count)|batcher_refused_total|http_responses_total)' || true

kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""

failed=0
bad_codes="$(grep -E '^answers with status' "$work/wrk.txt" | grep -vE 'status (200|503):' || true)"
if [ -n "$bad_codes" ]; then echo "serve_load.sh: FAIL: answers other than 200 and 503: $bad_codes"; failed=1; fi
if grep -q 'Socket errors' "$work/wrk.txt"; then echo "serve_load.sh: FAIL: $(grep 'Socket errors' "$work/wrk.txt")"; failed=1; fi
if ! grep -qE '^answers with status 200' "$work/wrk.txt"; then echo "serve_load.sh: FAIL: no successful answer"; failed=1; fi
if [ "$rc" -ne 0 ]; then echo "serve_load.sh: FAIL: ember-serve exited $rc on SIGTERM: $(cat "$work/server.err")"; failed=1; fi
shed="$(grep -oE '^answers with status 503: [0-9]+' "$work/wrk.txt" | grep -oE '[0-9]+$' || echo 0)"
if [ "$failed" -eq 0 ]; then
    echo "serve_load.sh: ok: $(grep -E 'Requests/sec' "$work/wrk.txt" | tr -s ' '), no failed answers (${shed} deliberate 503s)"
else
    exit 1
fi
