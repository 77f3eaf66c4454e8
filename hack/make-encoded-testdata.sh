#!/usr/bin/env bash
# Regenerates media/testdata/encoded: small encoded pairs made with Debian's ffmpeg
# (bookworm, 5.1) from the kernel's reference clips (vmaf/testdata/clips), for the
# decode tests and the truth test (encoded path == raw path on ffmpeg's own decode).
# Deterministic encoders only run single-threaded; re-running may still change a few
# bytes with another ffmpeg build, which the tests do not depend on: they compare
# against ffmpeg's decode of the committed files, not against fixed scores.
#
#   hack/make-encoded-testdata.sh
set -euo pipefail
cd "$(dirname "$0")/.."
clips=vmaf/testdata/clips
out=media/testdata/encoded
mkdir -p "$out"

ff() { ffmpeg -hide_banner -loglevel error -nostdin -y -threads 1 "$@"; }
# p01: 176x144 yuv420p, 24 frames; p07: 320x240 yuv420p10le, 12 frames. 25 fps.
p01=(-f rawvideo -pix_fmt yuv420p -video_size 176x144 -framerate 25 -i "$clips/p01_ref.yuv")
p07=(-f rawvideo -pix_fmt yuv420p10le -video_size 320x240 -framerate 25 -i "$clips/p07_ref.yuv")
meta=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact)

# Lossless references.
ff "${p01[@]}" "${meta[@]}" -c:v ffv1 -level 3 -g 1 "$out/ref_ffv1.mkv"
ff "${p07[@]}" "${meta[@]}" -c:v ffv1 -level 3 -g 1 "$out/ref10_ffv1.mkv"
# H.264 in MP4, index first (streams) and index last (must be spooled), and in MPEG-TS.
x264=(-c:v libx264 -preset veryfast -crf 32 -g 12 -bf 2 -x264-params threads=1)
ff "${p01[@]}" "${meta[@]}" "${x264[@]}" -movflags +faststart "$out/dist_h264.mp4"
ff "${p01[@]}" "${meta[@]}" "${x264[@]}" "$out/dist_h264_moovend.mp4"
ff "${p01[@]}" "${meta[@]}" "${x264[@]}" -f mpegts "$out/dist_h264.ts"
# HEVC in Matroska.
ff "${p01[@]}" "${meta[@]}" -c:v libx265 -preset ultrafast -crf 34 -x265-params log-level=error:pools=none:frame-threads=1 "$out/dist_hevc.mkv"
# VP9 in WebM.
ff "${p01[@]}" "${meta[@]}" -c:v libvpx-vp9 -crf 40 -b:v 0 -deadline realtime -cpu-used 8 "$out/dist_vp9.webm"
# AV1 10-bit in WebM.
ff "${p07[@]}" "${meta[@]}" -c:v libaom-av1 -crf 40 -b:v 0 -cpu-used 8 -row-mt 0 "$out/dist10_av1.webm"
# A distorted video at a lower resolution (scaled back to 176x144 when scored).
ff "${p01[@]}" "${meta[@]}" -vf scale=128:96:flags=bicubic "${x264[@]}" -movflags +faststart "$out/dist_small_h264.mp4"
# Interlaced H.264 (flagged top field first), for the interlace note and --deinterlace.
ff "${p01[@]}" "${meta[@]}" -c:v libx264 -preset veryfast -crf 30 -flags +ildct+ilme -top 1 -x264-params threads=1 "$out/dist_interlaced_h264.mkv"
# Rotated: the same H.264 with a 90° display matrix in its track header (ffmpeg 5.1 cannot
# write one), which ffmpeg applies when decoding: frames come out 144x176.
ff "${p01[@]}" "${meta[@]}" -frames:v 12 "${x264[@]}" -movflags +faststart "$out/tmp.mp4"
# tkhd: 40 bytes of fields, then the matrix; the identity's a and d become b=1, c=-1.
LC_ALL=C perl -0777 -pe 's/(tkhd.{40})\x00\x01\x00\x00\x00{12}\x00\x01\x00\x00/$1\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00/s' \
  "$out/tmp.mp4" >"$out/dist_rotated_h264.mp4"
rm "$out/tmp.mp4"

# Bad inputs.
# A truncated MP4 (its index first, its media cut short).
head -c "$(( $(stat -c %s "$out/dist_h264.mp4") * 2 / 3 ))" "$out/dist_h264.mp4" >"$out/bad_truncated.mp4"
# Audio only.
ff -f lavfi -i "sine=frequency=440:duration=0.2:sample_rate=8000" "${meta[@]}" -c:a flac "$out/bad_audio_only.mka"
# A codec this ffmpeg cannot decode: the H.264 Matroska codec ID renamed (same length).
ff "${p01[@]}" "${meta[@]}" -frames:v 2 -c:v libx264 -preset veryfast -x264-params threads=1 "$out/tmp.mkv"
LC_ALL=C sed 's|V_MPEG4/ISO/AVC|V_MPEG4/ISO/XYZ|' "$out/tmp.mkv" >"$out/bad_unknown_codec.mkv"
rm "$out/tmp.mkv"
# Zero frames: the lossless reference cut before its first Cluster (EBML ID 1F43B675).
LC_ALL=C perl -0777 -ne 'print substr($_, 0, index($_, "\x1f\x43\xb6\x75"))' "$out/ref_ffv1.mkv" >"$out/bad_zero_frames.mkv"
ls -l "$out"
