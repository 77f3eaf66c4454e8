#!/usr/bin/env bash
# Builds a small ffmpeg and ffprobe for the GPU machine, which has none and reaches no
# package server (issue 27's GPU decode: decode and score an H.264 and an HEVC encode
# there, NVDEC against software), into DIR (default .gpu/ffmpeg): Debian bookworm's
# ffmpeg 5.1.9 source, the version of the worker image's Debian package, pinned by the
# SHA256 its .dsc gives, configured with only what the worker's decoders ask of ffmpeg
# and ffprobe (media/decode: the mov, Matroska, H.264, HEVC, raw and Y4M demuxers, the
# H.264 and HEVC decoders, the scale and bwdif filters, the Y4M muxer, the file and pipe
# protocols) and NVIDIA's decoders: the NVDEC hwaccels (-hwaccel cuda) and cuvid, built
# against the ffnvcodec headers (Debian's libffmpeg-nvenc-dev), which load the driver's
# libcuda and libnvcuvid at run time, where the machine has them. Nothing else is linked
# but the C library. About 3 minutes on 2 cores; needs gcc, make, nasm,
# libffmpeg-nvenc-dev and curl (Debian's mirror).
set -euo pipefail
ROOT=$(git rev-parse --show-toplevel)
DIR=$(realpath -m "${1:-$ROOT/.gpu/ffmpeg}")
VERSION=5.1.9
SHA256=d9b593bb2ba93d4b50f74177e0cdcd41747e708596367deed0c30348a71dd176
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
for tool in gcc make nasm curl; do
  command -v $tool >/dev/null || { echo "build-ffmpeg: needs $tool (apt-get install gcc make nasm curl libffmpeg-nvenc-dev)" >&2; exit 1; }
done
[ -f /usr/include/ffnvcodec/dynlink_cuda.h ] || { echo "build-ffmpeg: needs the ffnvcodec headers (apt-get install libffmpeg-nvenc-dev)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball=ffmpeg_$VERSION.orig.tar.xz
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vmafx/$tarball
if [ ! -f "$cache" ] || ! echo "$SHA256  $cache" | sha256sum -c --status; then
  mkdir -p "$(dirname "$cache")"
  curl -fsSL -o "$cache.part" "$MIRROR/pool/main/f/ffmpeg/$tarball"
  echo "$SHA256  $cache.part" | sha256sum -c --status || { echo "build-ffmpeg: $tarball does not have the pinned SHA256" >&2; rm -f "$cache.part"; exit 1; }
  mv "$cache.part" "$cache"
fi
tar -C "$work" -xf "$cache"
cd "$work/ffmpeg-$VERSION"
./configure --disable-autodetect --disable-everything --disable-doc --disable-network --disable-debug --disable-ffplay \
  --enable-ffnvcodec --enable-nvdec --enable-cuvid --enable-hwaccel=h264_nvdec,hevc_nvdec \
  --enable-protocol=file,pipe --enable-demuxer=mov,matroska,h264,hevc,rawvideo,yuv4mpegpipe \
  --enable-decoder=h264,hevc,rawvideo,wrapped_avframe,h264_cuvid,hevc_cuvid --enable-parser=h264,hevc \
  --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,null \
  --enable-filter=scale,format,bwdif,null,hwdownload,fps,setpts,trim,copy \
  --enable-muxer=yuv4mpegpipe,rawvideo,null --enable-encoder=wrapped_avframe,rawvideo > configure.log
make -j"$(nproc)" ffmpeg ffprobe > make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
strip ffmpeg ffprobe
mkdir -p "$DIR"
cp ffmpeg ffprobe "$DIR/"
"$DIR/ffmpeg" -hide_banner -hwaccels | tr '\n' ' '; echo
echo "build-ffmpeg: $DIR/ffmpeg and ffprobe ($(du -sh "$DIR" | cut -f1)), ffmpeg $VERSION"
