#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages named on the command line, but only those not installed yet
# (checked with dpkg -s), so a second run costs nothing and needs no network. Used by test.sh and
# demo.sh; run as root (or with sudo available) on Debian 12.
#
#     bash tools/install_packages.sh cmake ninja-build g++
set -euo pipefail

missing=()
for package in "$@"; do
    info="$(dpkg -s "$package" 2>/dev/null || true)"
    case "$info" in
        *"Status: install ok installed"*) ;;
        *) missing+=("$package") ;;
    esac
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "install_packages.sh: missing ${missing[*]}; run as root to install them" >&2
        exit 1
    fi
fi

echo "install_packages.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
