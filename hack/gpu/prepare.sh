#!/usr/bin/env bash
# Runs the workplace's GPU measurement kit (../shared/gpu: prepare.sh and run.sh, see its
# README) against this checkout. The kit names the kernel's packages by their paths before
# the engine became the top-level library vmaf/ (worker/vmaf, worker/vmaf/vkkernel), so this
# runs a copy with today's paths; the kit itself is read-only. Then, on the GPU machine:
# bash .gpu/run.sh (the device tool: command "bash .gpu/run.sh", carry [".gpu"]), and
# after it this project's own steps the kit lacks: bash .gpu/extra.sh (hack/gpu/extra.sh).
set -euo pipefail
ROOT=$(git rev-parse --show-toplevel)
KIT=${VMAFX_GPU_KIT:-$ROOT/../shared/gpu}
[ -f "$KIT/prepare.sh" ] || { echo "no GPU kit at $KIT (set VMAFX_GPU_KIT)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in prepare.sh run.sh gen.py; do sed 's#worker/vmaf#vmaf#g' "$KIT/$f" > "$tmp/$f"; done
ln -s "$(readlink -f "$KIT/vmaf-3.2.0-src.tar.gz")" "$tmp/vmaf-3.2.0-src.tar.gz"
cd "$ROOT" && bash "$tmp/prepare.sh"
cp "$ROOT/hack/gpu/extra.sh" "$ROOT/.gpu/extra.sh"
