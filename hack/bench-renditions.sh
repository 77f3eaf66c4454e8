#!/usr/bin/env bash
# bench-renditions.sh times decode plus score of one reference against several renditions
# both ways a worker can do it: one `vmafx-worker score` process per rendition, one after
# the other (each decoding the reference again, as one Pod per rendition on the same
# slot), against one process given every rendition (--distorted repeated: the reference
# decoded once). The inputs are encoded here with ffmpeg: a noisy testsrc2 reference in
# HEVC (CRF 12; REF=h264 for H.264 at CRF 12, cheaper to decode) and one H.264
# rendition per CRF. The two ways alternate within each round,
# each round starting with the other, so that load from other processes falls on both
# alike; it prints every run's wall clock and CPU seconds (user+system, ffmpeg children
# included), the medians, the load average before and after, and checks that each
# rendition's score is the same both ways.
#
#   hack/bench-renditions.sh [WIDTHxHEIGHT [FRAMES]]     default 1280x720, 90 frames
#   CRFS="20 24 28 32 36 40" ROUNDS=3 THREADS=2 REF=hevc hack/bench-renditions.sh
set -euo pipefail
cd "$(dirname "$0")/.."

size=${1:-1280x720}
frames=${2:-90}
crfs=${CRFS:-20 24 28 32 36 40}
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
case ${REF:-hevc} in
hevc) refcodec=(-c:v libx265 -preset ultrafast -crf 12 -x265-params log-level=error) ;;
h264) refcodec=(-c:v libx264 -preset veryfast -crf 12) ;;
*) echo "REF must be hevc or h264" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
worker=$tmp/vmafx-worker
go build -o "$worker" ./worker/cmd/vmafx-worker

ffmpeg -v error -f lavfi -i "testsrc2=size=$size:rate=30,noise=alls=10:allf=t" -frames:v "$frames" \
	-pix_fmt yuv420p "${refcodec[@]}" "$tmp/ref.mkv"
dists=()
for c in $crfs; do
	ffmpeg -v error -i "$tmp/ref.mkv" -c:v libx264 -preset veryfast -crf "$c" "$tmp/crf$c.mp4"
	dists+=("$tmp/crf$c.mp4")
done

# timed CMD... runs CMD with its stdout in $tmp/out and prints "wall cpu" seconds.
timed() {
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>/dev/null
	awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$tmp/time"
}

separate() {
	local wall=0 cpu=0 w c
	: >"$tmp/separate.scores"
	for d in "${dists[@]}"; do
		read -r w c < <(timed "$worker" score --reference "$tmp/ref.mkv" --distorted "$d" --threads "$threads" --termination-log "$tmp/term")
		grep -o '"score":[0-9.]*' "$tmp/out" | head -1 >>"$tmp/separate.scores"
		wall=$(awk "BEGIN {print $wall + $w}") cpu=$(awk "BEGIN {print $cpu + $c}")
	done
	echo "$wall $cpu"
}

shared() {
	local args=()
	for d in "${dists[@]}"; do args+=(--distorted "$d"); done
	timed "$worker" score --reference "$tmp/ref.mkv" "${args[@]}" --threads "$threads" --termination-log "$tmp/term"
	# The first "score" is the run's own (0 beside rows), the rest the rows'.
	grep -o '"score":[0-9.]*' "$tmp/out" | tail -n +2 >"$tmp/shared.scores"
}

echo "reference ${REF:-hevc}, size $size, $frames frames, renditions at CRF $crfs, $threads threads, $(nproc) CPUs"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-9s %9s %9s\n' round way wall_s cpu_s
sw=() sc=() hw=() hc=()
for r in $(seq "$rounds"); do
	order="separate shared"
	if [ $((r % 2)) -eq 0 ]; then order="shared separate"; fi
	for way in $order; do
		read -r w c < <($way)
		printf '%-6s %-9s %9s %9s\n' "$r" "$way" "$w" "$c"
		if [ "$way" = separate ]; then sw+=("$w") sc+=("$c"); else hw+=("$w") hc+=("$c"); fi
	done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-6s %-9s %9s %9s\n' median separate "$(median "${sw[@]}")" "$(median "${sc[@]}")"
printf '%-6s %-9s %9s %9s\n' median shared "$(median "${hw[@]}")" "$(median "${hc[@]}")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if diff <(sed 's/"score"://' "$tmp/separate.scores") <(sed 's/"score"://' "$tmp/shared.scores") >/dev/null; then
	echo "scores: the same both ways: $(tr '\n' ' ' <"$tmp/shared.scores")"
else
	echo "scores DIFFER: separate $(tr '\n' ' ' <"$tmp/separate.scores"), shared $(tr '\n' ' ' <"$tmp/shared.scores")"
	exit 1
fi
