#!/usr/bin/env bash
# Fills .deb/ (git-ignored) with the Debian packages the GPU machine lacks, for the device tool
# to carry (carry [".deb", ".whl"]): the build's libjpeg-turbo, libspng, libwebp, GoogleTest,
# libcurl and FFmpeg headers and libraries (unpacked there by scripts/device_env.sh); in .deb/curl libcurl
# itself with what it needs (used there only when the machine has no libcurl.so.4); in .deb/nginx
# nginx (bench/shard_bench.py serves the shards with it); in .deb/gdb gdb with its libraries
# (bench/gpu_probe.py prints the threads' stacks of a configuration that hangs). Also fills .whl/
# with the Python wheels the benchmarks need there: webdataset and braceexpand, matplotlib, PyAV,
# torchcodec (for that machine's torch 2.11; it runs on the FFmpeg of build_device_ffmpeg.sh).
# .deb and .whl together pass the device tool's 64 MiB: carry .whl alone in a first call (the
# wheels are installed into /tmp/site, which a warm machine keeps), then .deb (and .ffmpeg).
# Run on the development machine (Debian 12, network to the Debian mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deb/gdb .deb/curl .deb/nginx .whl
(cd .deb && apt-get download libgtest-dev libjpeg62-turbo-dev libjpeg62-turbo libspng-dev libspng0 \
  libwebp-dev libwebp7 libwebpdemux2 libwebpmux3 libcurl4-openssl-dev libavformat-dev libavcodec-dev libavutil-dev libffmpeg-nvenc-dev)
(cd .deb/curl && apt-get download libcurl4 libnghttp2-14 libidn2-0 libunistring2 librtmp1 libgnutls30 libhogweed6 \
  libnettle8 libgmp10 libp11-kit0 libffi8 libtasn1-6 libssh2-1 libpsl5 libgssapi-krb5-2 libkrb5-3 libk5crypto3 \
  libkrb5support0 libkeyutils1 libcom-err2 libldap-2.5-0 libsasl2-2 libsasl2-modules-db libdb5.3 libbrotli1 \
  libzstd1 libssl3)
(cd .deb/nginx && apt-get download nginx)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 -d .whl webdataset==1.0.2 braceexpand==0.1.7
# PyAV (36 MB: the video tests write their videos with it and compare with its decode)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 -d .whl av==18.1.0
# torchcodec (bench/video_bench.py's peer; 0.11 is the release for torch 2.11)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 -d .whl torchcodec==0.11.1
# matplotlib (sluice doctor's chart) and what it imports that the machine lacks
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl matplotlib contourpy cycler \
  fonttools kiwisolver pyparsing python-dateutil six
# gdb-minimal and what it needs, minus what every Debian system has.
deps=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances gdb-minimal | grep '^\w' | sort -u |
  grep -v -E '^(libc6|libgcc-s1|gcc-12-base|debconf|perl-base|dpkg|tar|libcrypt1|cdebconf|install-info|libdebian-installer4|libnewt0.52|libslang2|libtextwrap1)$')
(cd .deb/gdb && apt-get download $deps)
du -sh .deb
