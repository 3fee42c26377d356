#!/usr/bin/env bash
# Fills .deb/ (git-ignored) with the Debian packages the GPU machine lacks, for the device tool
# to carry (carry [".deb"]): the build's libjpeg-turbo, libspng, libwebp and GoogleTest headers
# and libraries (unpacked there by scripts/device_env.sh), and in .deb/gdb gdb with its
# libraries (bench/gpu_probe.py prints the threads' stacks of a configuration that hangs).
# Run on the development machine (Debian 12, network to the Debian mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deb/gdb
(cd .deb && apt-get download libgtest-dev libjpeg62-turbo-dev libjpeg62-turbo libspng-dev libspng0 \
  libwebp-dev libwebp7 libwebpdemux2 libwebpmux3)
# gdb-minimal and what it needs, minus what every Debian system has.
deps=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances gdb-minimal | grep '^\w' | sort -u |
  grep -v -E '^(libc6|libgcc-s1|gcc-12-base|debconf|perl-base|dpkg|tar|libcrypt1|cdebconf|install-info|libdebian-installer4|libnewt0.52|libslang2|libtextwrap1)$')
(cd .deb/gdb && apt-get download $deps)
du -sh .deb
