# Sourced on the GPU machine: unpacks the Debian packages carried in .deb/ (made by
# scripts/fetch_device_debs.sh: libjpeg-turbo, libspng, libwebp, GoogleTest headers and libraries,
# which that machine lacks) into .deb/root, installs the Python wheels carried in .whl/ (pytest and
# its plugins) into /tmp/site, and points the compiler, linker, loader and Python at them. Once per
# machine: a second call (or a second script at the same time) finds them done.
SLUICE_DEB_ROOT=$PWD/.deb/root
if [ ! -f "$SLUICE_DEB_ROOT/.done" ]; then
  mkdir -p "$SLUICE_DEB_ROOT"
  for f in .deb/*.deb; do dpkg -x "$f" "$SLUICE_DEB_ROOT"; done
  touch "$SLUICE_DEB_ROOT/.done"
fi
if [ -d .whl ] && [ ! -f /tmp/site/.done ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl &&
    touch /tmp/site/.done
fi
# libcurl is loaded at run time (http:// shards): the carried one only where the machine has none.
if ! ldconfig -p | grep -qE 'libcurl(-gnutls)?\.so\.4' && [ -d .deb/curl ]; then
  [ -f .deb/curlroot/.done ] || { mkdir -p .deb/curlroot && for f in .deb/curl/*.deb; do dpkg -x "$f" .deb/curlroot; done &&
    touch .deb/curlroot/.done; }
  export LD_LIBRARY_PATH=$PWD/.deb/curlroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "device_env: no libcurl on this machine: the carried one is used"
fi
if [ -d .deb/nginx ] && [ ! -f .deb/nginxroot/.done ]; then
  mkdir -p .deb/nginxroot && for f in .deb/nginx/*.deb; do dpkg -x "$f" .deb/nginxroot; done && touch .deb/nginxroot/.done
fi
# FFmpeg (video), which that machine lacks: the small build of scripts/build_device_ffmpeg.sh.
if [ -d .ffmpeg/lib ]; then export LD_LIBRARY_PATH=$PWD/.ffmpeg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
export CPATH=$SLUICE_DEB_ROOT/usr/include:$SLUICE_DEB_ROOT/usr/include/x86_64-linux-gnu
export LIBRARY_PATH=$SLUICE_DEB_ROOT/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$SLUICE_DEB_ROOT/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CMAKE_PREFIX_PATH=$SLUICE_DEB_ROOT/usr
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}:/tmp/site
export PYTHONUNBUFFERED=1
