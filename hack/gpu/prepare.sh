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
# Unless VMAFX_GPU_DECODE=0 it also carries what extra.sh's step 4 (GPU decode) needs, which
# the GPU machine lacks: a small ffmpeg and ffprobe with NVIDIA's decoders
# (hack/gpu/build-ffmpeg.sh, about 3 minutes the first time, then cached) and an H.264 and
# an HEVC encode of the kit's 1080p distorted clip at 6 Mbit/s (.gpu/e4_*.mp4, made here by
# Debian's ffmpeg with libx264 and libx265 from the kit's gen.py clip), about 20 MB in all.
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
if [ "${VMAFX_GPU_DECODE:-1}" != 0 ]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/vmafx/gpu-decode
  if [ ! -x "$cache/ffmpeg/ffmpeg" ]; then
    command -v nasm >/dev/null && [ -f /usr/include/ffnvcodec/dynlink_cuda.h ] || apt-get install -y -qq nasm libffmpeg-nvenc-dev >/dev/null
    bash "$ROOT/hack/gpu/build-ffmpeg.sh" "$cache/ffmpeg"
  fi
  if [ ! -f "$cache/e4_libx265.mp4" ]; then
    command -v ffmpeg >/dev/null || apt-get install -y -qq ffmpeg >/dev/null
    /usr/bin/python3 -c 'import numpy' 2>/dev/null || apt-get install -y -qq python3-numpy >/dev/null
    ( cd "$tmp" && /usr/bin/python3 "$tmp/gen.py" 1920 1080 240 "$tmp/c1080" )
    for c in libx264 libx265; do
      quiet=(); [ $c = libx265 ] && quiet=(-x265-params log-level=error)
      ffmpeg -v error -y -f rawvideo -pix_fmt yuv420p -s 1920x1080 -r 24 -i "$tmp/c1080_dist.yuv" \
        -c:v $c -preset veryfast -b:v 6M -maxrate 6M -bufsize 12M "${quiet[@]}" "$cache/e4_$c.mp4"
    done
    rm -f "$tmp"/c1080_*.yuv
  fi
  mkdir -p "$ROOT/.gpu/ffmpeg"
  xz -T0 -6 -c "$cache/ffmpeg/ffmpeg" > "$ROOT/.gpu/ffmpeg/ffmpeg.xz"
  xz -T0 -6 -c "$cache/ffmpeg/ffprobe" > "$ROOT/.gpu/ffmpeg/ffprobe.xz"
  cp "$cache"/e4_libx264.mp4 "$cache"/e4_libx265.mp4 "$ROOT/.gpu/"
  du -sh "$ROOT/.gpu"
fi
if [ -n "${VMAFX_GPU_BASELINE:-}" ]; then
  wt=$(mktemp -d); trap 'rm -rf "$tmp"; git -C "$ROOT" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
  git -C "$ROOT" worktree add --detach "$wt" "$VMAFX_GPU_BASELINE" >/dev/null
  ( cd "$wt" && export CGO_ENABLED=0 &&
    go build -trimpath -ldflags='-s -w' -o "$ROOT/.gpu/base-vmafx-worker" ./worker/cmd/vmafx-worker &&
    go test -c -trimpath -ldflags='-s -w' -o "$ROOT/.gpu/base-vkkernel.test" ./vmaf/vkkernel )
  git -C "$ROOT" rev-parse --short "$VMAFX_GPU_BASELINE" > "$ROOT/.gpu/base-commit"
  xz -T0 -6 "$ROOT/.gpu/base-vmafx-worker" "$ROOT/.gpu/base-vkkernel.test"
fi
