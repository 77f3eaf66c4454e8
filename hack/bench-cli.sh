#!/usr/bin/env bash
# bench-cli.sh times `vmafx-worker score` as a user runs it: a whole process scoring a raw
# clip pair from files on disk (generated here with ffmpeg's testsrc2, the distorted one
# blurred and noisy). Every kernel path and thread count runs once per round, interleaved,
# so that load from other processes falls on all of them alike; it prints the median fps of
# the rounds, the ratio against the generic path, the worker's peak RSS and the load average
# before and after.
#
#   hack/bench-cli.sh [WIDTHxHEIGHT [FRAMES]]        default 1280x720, 60 frames
#   PATHS="generic avx2 avx512" THREADS="1 2" ROUNDS=3 hack/bench-cli.sh 1920x1080 30
#   MODEL=vmaf_v1.0.16_3d0h PATHS="avx2" LIBVMAF=/path/to/vmaf hack/bench-cli.sh
#
# MODEL is the model scored (default vmaf_v0.6.1). LIBVMAF names a libvmaf 3.2.0 `vmaf`
# tool (built from source: meson setup build && ninja -C build); it then runs in the same
# rounds as two more paths: libvmaf-avx2 (--cpumask 48, AVX-512 off) and libvmaf (its
# default, AVX-512 where the processor has it), and the table adds "vs libvmaf-avx2".
#
# A path the processor lacks is reported as unsupported (the worker refuses it).
set -euo pipefail
cd "$(dirname "$0")/.."

size=${1:-1280x720}
frames=${2:-60}
paths=${PATHS:-generic avx2 avx512}
model=${MODEL:-vmaf_v0.6.1}
if [ -n "${LIBVMAF:-}" ]; then paths="$paths libvmaf-avx2 libvmaf"; fi
threads=${THREADS:-1 2}
rounds=${ROUNDS:-3}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/vmafx-worker" ./worker/cmd/vmafx-worker
ffmpeg -v error -f lavfi -i "testsrc2=size=$size:rate=30" -frames:v "$frames" -pix_fmt yuv420p -f rawvideo "$tmp/ref.yuv"
ffmpeg -v error -f rawvideo -pix_fmt yuv420p -s "$size" -i "$tmp/ref.yuv" \
  -vf "gblur=sigma=1.2,noise=alls=8:allf=t" -pix_fmt yuv420p -f rawvideo "$tmp/dist.yuv"
w=${size%x*}
h=${size#*x}

# run PATH THREADS: prints "seconds peak-RSS-KiB", or "unsupported".
run() {
  local start end cmd
  case $1 in
    libvmaf-avx2) cmd=("$LIBVMAF" --cpumask 48) ;;
    libvmaf) cmd=("$LIBVMAF") ;;
  esac
  start=$(date +%s.%N)
  if [ -n "${cmd[*]:-}" ]; then
    if ! /usr/bin/time -f %M -o "$tmp/rss" "${cmd[@]}" -r "$tmp/ref.yuv" -d "$tmp/dist.yuv" -w "$w" -h "$h" -p 420 -b 8 \
        -m "version=$model" --threads "$2" -q -o "$tmp/libvmaf.json" --json >"$tmp/out" 2>"$tmp/err"; then
      echo unsupported
      return
    fi
  elif ! VMAFX_CPU=$1 /usr/bin/time -f %M -o "$tmp/rss" "$tmp/vmafx-worker" score \
      --width "$w" --height "$h" --threads "$2" --model "$model" --termination-log "$tmp/term" \
      "$tmp/ref.yuv" "$tmp/dist.yuv" >"$tmp/out" 2>"$tmp/err"; then
    echo unsupported
    return
  fi
  end=$(date +%s.%N)
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}') $(tail -n1 "$tmp/rss")"
}

echo "load average before: $(cat /proc/loadavg)"
declare -A fps rss
for r in $(seq "$rounds"); do
  for t in $threads; do
    for p in $paths; do
      read -r secs kib < <(run "$p" "$t")
      if [ "$secs" = unsupported ]; then fps[$p/$t]=unsupported; continue; fi
      fps[$p/$t]+="$(awk -v f="$frames" -v s="$secs" 'BEGIN {print f / s}') "
      rss[$p/$t]=$(( ${rss[$p/$t]:-0} > kib ? ${rss[$p/$t]:-0} : kib ))
    done
  done
done
echo "load average after:  $(cat /proc/loadavg)"

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '%-13s %-7s %10s %10s %16s %14s\n' path threads "fps" "vs generic" "vs libvmaf-avx2" "peak RSS MiB"
for t in $threads; do
  base="" lib=""
  [ -n "${LIBVMAF:-}" ] && [ "${fps[libvmaf-avx2/$t]}" != unsupported ] && lib=$(echo "${fps[libvmaf-avx2/$t]}" | median)
  for p in $paths; do
    if [ "${fps[$p/$t]}" = unsupported ]; then printf '%-13s %-7s %10s\n' "$p" "$t" unsupported; continue; fi
    m=$(echo "${fps[$p/$t]}" | median)
    [ "$p" = generic ] && base=$m
    ratio=- libratio=-
    [ -n "$base" ] && ratio=$(awk -v m="$m" -v b="$base" 'BEGIN {printf "%.2f", m / b}')
    [ -n "$lib" ] && libratio=$(awk -v m="$m" -v b="$lib" 'BEGIN {printf "%.2f", m / b}')
    printf '%-13s %-7s %10.2f %10s %16s %14d\n' "$p" "$t" "$m" "$ratio" "$libratio" $(( ${rss[$p/$t]} / 1024 ))
  done
done
echo "$size, $frames frames, model $model, median of $rounds rounds"
for k in "${!fps[@]}"; do echo "  $k: ${fps[$k]}"; done | sort
