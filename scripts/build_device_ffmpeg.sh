#!/usr/bin/env bash
# Builds, into .ffmpeg/ (git-ignored), a small FFmpeg for the GPU machine, which has none and cannot
# download: libavformat, libavcodec and libavutil of the same version as this machine's headers
# (Debian's libavformat-dev, which sluice is built against: the same sonames and structures),
# from Debian's source tarball (checked against the Debian source package's SHA-256), with the
# common containers, the H.264/HEVC/MPEG-4/VP8/VP9/AV1 parsers, the software decoders of H.264,
# HEVC, MPEG-4, VP8, VP9 and Motion JPEG (a codec NVDEC lacks, for the tests of the fallback),
# and the bitstream filters NVDEC needs; no external library. It also has the
# libraries torchcodec links to (libavdevice without devices, libavfilter with the few filters
# it uses, libswscale, libswresample), for bench/video_bench.py's torchcodec row. Carry it with
# carry [".ffmpeg"]; scripts/device_env.sh puts .ffmpeg/lib on the loader's path. About 3 minutes
# on 2 cores. Run on the development machine (Debian 12, network to the Debian mirror); it
# installs nasm (FFmpeg's assembly, without which its decoders are several times slower).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nasm >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq nasm >/dev/null
fi
version=$(dpkg-query -W -f='${Version}' libavformat-dev)  # 7:5.1.9-0+deb12u1
upstream=${version#*:}
upstream=${upstream%%-*}
pool=http://deb.debian.org/debian-security/pool/updates/main/f/ffmpeg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dsc=ffmpeg_${version#*:}.dsc
curl -sfL -o "$work/$dsc" "$pool/$dsc" || { pool=http://deb.debian.org/debian/pool/main/f/ffmpeg; curl -sfL -o "$work/$dsc" "$pool/$dsc"; }
tarball=ffmpeg_${upstream}.orig.tar.xz
curl -sfL -o "$work/$tarball" "$pool/$tarball"
want=$(awk -v f="$tarball" '/^Checksums-Sha256:/{s=1; next} /^[^ ]/{s=0} s && $3 == f {print $1}' "$work/$dsc")
echo "$want  $work/$tarball" | sha256sum -c --quiet
tar -xJf "$work/$tarball" -C "$work"
cd "$work/ffmpeg-$upstream"
./configure --prefix="$OLDPWD/.ffmpeg" --enable-shared --disable-static --disable-programs --disable-doc \
  --disable-everything --disable-autodetect --disable-postproc --disable-network \
  --enable-filter=buffer,buffersink,abuffer,abuffersink,scale,format,aformat,aresample,null,anull \
  --enable-protocol=file --enable-demuxer=mov,matroska,avi,mpegts,h264,hevc,m4v,ivf \
  --enable-parser=h264,hevc,mpeg4video,vp8,vp9,av1 --enable-decoder=h264,hevc,mpeg4,vp8,vp9,mjpeg \
  --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,av1_frame_split,extract_extradata \
  >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; exit 1; }
make -j "$(nproc)" >"$work/make.log" 2>&1 || { grep -E "error" "$work/make.log" | head -20; exit 1; }
make install >/dev/null 2>&1
cd "$OLDPWD"
rm -rf .ffmpeg/include .ffmpeg/share .ffmpeg/lib/pkgconfig
du -sh .ffmpeg/lib
