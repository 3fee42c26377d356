# Sourced on the GPU machine: unpacks the Debian packages carried in .deb/ (made by
# scripts/fetch_device_debs.sh: libjpeg-turbo,
# libspng, libwebp, GoogleTest headers and libraries, which that machine lacks) into .deb/root
# and points the compiler, linker, loader and Python at them.
SLUICE_DEB_ROOT=$PWD/.deb/root
mkdir -p "$SLUICE_DEB_ROOT"
for f in .deb/*.deb; do dpkg -x "$f" "$SLUICE_DEB_ROOT"; done
export CPATH=$SLUICE_DEB_ROOT/usr/include:$SLUICE_DEB_ROOT/usr/include/x86_64-linux-gnu
export LIBRARY_PATH=$SLUICE_DEB_ROOT/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$SLUICE_DEB_ROOT/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CMAKE_PREFIX_PATH=$SLUICE_DEB_ROOT/usr
export PYTHONPATH=$PWD/python
export PYTHONUNBUFFERED=1
