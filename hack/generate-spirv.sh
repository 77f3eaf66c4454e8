#!/usr/bin/env bash
# generate-spirv.sh compiles every GLSL compute shader under vmaf/ (*.comp) to SPIR-V
# (*.spv beside it) with glslangValidator from Debian's glslang-tools (12.0.0 on
# bookworm), which the worker embeds. `make generate` runs it; `make verify` fails when a
# checked-in .spv differs from what its .comp compiles to.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v glslangValidator >/dev/null; then
  echo "glslangValidator not found: apt-get install glslang-tools" >&2
  exit 1
fi
# Remove outputs whose source is gone, so a deleted shader cannot linger embedded.
find vmaf -name '*.spv' -type f | while IFS= read -r spv; do
  [ -e "${spv%.spv}.comp" ] || rm -f "$spv"
done
find vmaf -name '*.comp' -type f | sort | while IFS= read -r src; do
  # Vulkan 1.1 SPIR-V (1.3) runs on every driver the worker targets; no debug info, so
  # the output depends only on the source and the compiler.
  if ! out=$(glslangValidator -V --target-env vulkan1.1 -o "${src%.comp}.spv" "$src" 2>&1); then
    echo "$out" >&2
    exit 1
  fi
done
