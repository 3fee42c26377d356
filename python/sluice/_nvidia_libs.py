"""Points the C++ core at the nvJPEG of an installed ``nvidia-nvjpeg`` wheel (``sluice-loader[cuda]``).

A wheel's library folder is on no library search path, so ``dlopen("libnvjpeg.so.13")`` would not
find it: before the core first loads nvJPEG, ``SLUICE_NVJPEG_LIBRARY`` is set to the wheel's file
(``nvidia/cu13/lib/libnvjpeg.so.13``). A value the user set is kept; without the wheel nothing is
set and the core looks on the system's library path (a CUDA toolkit's nvJPEG).
"""
import os


def wheel_nvjpeg():
    """The path of the nvidia-nvjpeg wheel's libnvjpeg.so.13, or None where it is not installed."""
    try:
        import nvidia  # the namespace package the NVIDIA wheels install into
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        path = os.path.join(root, "cu13", "lib", "libnvjpeg.so.13")
        if os.path.isfile(path):
            return path
    return None


def point_core_at_wheel_nvjpeg():
    if os.environ.get("SLUICE_NVJPEG_LIBRARY"):
        return
    path = wheel_nvjpeg()
    if path is not None:
        os.environ["SLUICE_NVJPEG_LIBRARY"] = path
