"""sluice: keeps GPUs fed. Reads, decodes and augments images in C++ and hands batches to PyTorch.

    import sluice, sluice.transforms as T
    loader = sluice.Loader("data/train", [T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                          T.Normalize(MEAN, STD)], batch_size=256, shuffle=True)
    for images, labels in loader: ...
"""
from ._cuda_queues import widen_before_cuda
from ._nvidia_libs import point_core_at_wheel_nvjpeg

widen_before_cuda()  # before anything in this process makes a CUDA context, where it can
point_core_at_wheel_nvjpeg()

from . import _core  # noqa: E402  (after the nvJPEG path is set)
from ._core import DecodeError
from ._loader import Loader
from ._webdataset import WebDataset
from ._videos import Videos
from . import transforms

__version__ = "0.1.0"

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

__all__ = ["Loader", "WebDataset", "Videos", "DecodeError", "transforms", "IMAGENET_MEAN", "IMAGENET_STD", "__version__"]
