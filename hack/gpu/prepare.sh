#!/usr/bin/env bash
# Runs the workplace's GPU measurement kit (../shared/gpu: prepare.sh and run.sh, see its
# README) against this checkout. The kit names the kernel's packages by their paths before
# the engine became the top-level library vmaf/ (worker/vmaf, worker/vmaf/vkkernel), so this
# runs a copy with today's paths; the kit itself is read-only. Then, on the GPU machine:
# bash .gpu/run.sh (the device tool: command "bash .gpu/run.sh", carry [".gpu"]), and
# after it this project's own steps the kit lacks: bash .gpu/extra.sh (hack/gpu/extra.sh).
# With VMAFX_GPU_BASELINE=<commit>, it also builds that commit's worker and vkkernel test
# binary (.gpu/base-*.xz), which extra.sh's step A times against this checkout's, side by
# side on the same machine.
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
cd "$ROOT" && CGO_ENABLED=0 go test -c -trimpath -ldflags='-s -w' -o .gpu/vulkan.test ./vmaf/vulkan && xz -T0 -6 .gpu/vulkan.test
if [ -n "${VMAFX_GPU_BASELINE:-}" ]; then
  wt=$(mktemp -d); trap 'rm -rf "$tmp"; git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
  git -C "$ROOT" worktree add --detach "$wt" "$VMAFX_GPU_BASELINE" >/dev/null
  ( cd "$wt" && export CGO_ENABLED=0 &&
    go build -trimpath -ldflags='-s -w' -o "$ROOT/.gpu/base-vmafx-worker" ./worker/cmd/vmafx-worker &&
    go test -c -trimpath -ldflags='-s -w' -o "$ROOT/.gpu/base-vkkernel.test" ./vmaf/vkkernel )
  git -C "$ROOT" rev-parse --short "$VMAFX_GPU_BASELINE" > "$ROOT/.gpu/base-commit"
  xz -T0 -6 "$ROOT/.gpu/base-vmafx-worker" "$ROOT/.gpu/base-vkkernel.test"
fi
