#!/usr/bin/env bash
# install-deps.sh installs, when missing, the Debian packages that building, testing and the
# images need: make, git, gcc; ffmpeg (the worker decodes encoded inputs with it, make test
# requires it, the worker image carries it); the Vulkan loader and Mesa's drivers (lavapipe
# runs the compute shaders on the CPU, so make test checks them bit for bit, and the worker
# image carries them); glslangValidator, which make generate compiles the shaders with;
# chromium, for tests only: make test drives vmafx-api's web console in headless Chromium
# (gateway/internal/integration; no image carries it, and the test skips without it).
# It is the one list: .ci/run, make deps and the targets that need them call it. Not root:
# it names what is missing and fails.
set -euo pipefail
missing=()
for tool in make git gcc ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || missing+=("${tool/ffprobe/ffmpeg}")
done
command -v glslangValidator >/dev/null || missing+=(glslang-tools)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || [ -e /usr/share/vulkan/icd.d/lvp_icd.aarch64.json ] ||
  missing+=(mesa-vulkan-drivers)
ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1' || missing+=(libvulkan1)
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ]; then
  echo "missing Debian packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
