"""sluice.Videos: clips of videos as a Loader source, decoded by FFmpeg's libavcodec or NVDEC."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from . import _core
from ._options import _int_label, index_cache_arg

__all__ = ["Videos", "VIDEO_EXTENSIONS"]

VIDEO_EXTENSIONS = (".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".ts")


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return value


def _list_folder(root: str, extensions: Sequence[str]) -> tuple[list[tuple[str, int]], list[str]]:
    """(path, label) of the videos in class folders, as torchvision's ImageFolder lists images."""
    if not os.path.isdir(root):
        raise FileNotFoundError(f"{root}: no such directory")
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    if not classes:
        raise FileNotFoundError(f"{root}: no class folder (videos go in {root}/<class>/...)")
    exts = tuple(e.lower() for e in extensions)
    pairs = []
    for label, name in enumerate(classes):
        for dirpath, dirnames, files in sorted(os.walk(os.path.join(root, name), followlinks=True)):
            dirnames.sort()
            pairs += [(os.path.join(dirpath, f), label) for f in sorted(files) if f.lower().endswith(exts)]
    if not pairs:
        raise FileNotFoundError(f"{root}: no video file ({', '.join(exts)}) in its class folders")
    return pairs, classes


def _pairs(videos: Any, labels: Any) -> list[tuple[str, int]]:
    if isinstance(videos, (str, bytes, os.PathLike)) or not isinstance(videos, Sequence):
        raise TypeError(f"videos must be a folder, a list of paths or of (path, label) pairs, got {videos!r}")
    if labels is not None:
        if len(labels) != len(videos):
            raise ValueError(f"{len(videos)} videos but {len(labels)} labels")
        return [(os.fsdecode(p), _int_label(l, i)) for i, (p, l) in enumerate(zip(videos, labels))]
    out = []
    for i, item in enumerate(videos):
        if isinstance(item, (str, bytes, os.PathLike)):
            out.append((os.fsdecode(item), -1))
        elif isinstance(item, Sequence) and len(item) == 2:
            out.append((os.fsdecode(item[0]), _int_label(item[1], i)))
        else:
            raise TypeError(f"videos[{i}] must be a path or a (path, label) pair, got {item!r}")
    return out


class Videos:
    """Clips of videos: pass it to :class:`~sluice.Loader` as the source, and each batch is
    ``(clips, labels)`` with clips ``(N, F, C, H, W)`` (``layout="NCHW"``) or ``(N, F, H, W, C)``
    (``"NHWC"``): F = ``sequence_length`` frames ``stride`` frames apart, all of one video. The
    transforms apply to every frame of a clip alike: one crop, one flip, one colour draw per clip.
    Shuffling, sharding over ranks (every clip exactly once per epoch), ``last_batch``,
    ``on_error`` and ``state_dict`` work as with images.

        clips = sluice.Videos("data/videos", sequence_length=16, stride=2)   # class folders
        loader = sluice.Loader(clips, [T.Resize((360, 640)), T.Normalize(MEAN, STD)], batch_size=8)

    Args:
        videos: a folder of class folders (as torchvision's ImageFolder: a label per folder,
            sorted), a list of paths (label -1, or ``labels``), or of (path, label) pairs.
        sequence_length: frames per clip. stride: frames between a clip's frames.
        step: frames between the starts of consecutive clips of a video (every clip once per
            epoch, as DALI's ``readers.video``); default ``sequence_length * stride``: clips that
            do not overlap.
        clips_per_video: instead, this many clips per video each epoch, their starts drawn at
            random for that epoch (as torchcodec's random sampler).
        on_error: ``"raise"``: a video that cannot be read (missing, damaged, audio-only, a codec
            FFmpeg lacks) or is shorter than one clip raises here, naming it; ``"skip"``: it is
            left out and listed in :attr:`skipped`. A clip that fails while decoding follows the
            Loader's own ``on_error``.
        index_threads: videos indexed at once when this is made (each video's packets are read
            once to find its frames and key frames).
        index_cache: a folder where each video's index is kept between runs, keyed by the
            video's path, size and modification time (a video rewritten is indexed again).
            ``"default"``: ``$SLUICE_CACHE/index`` (``~/.cache/sluice/index``); ``None``: none.

    With ``device="cpu"`` frames are decoded by FFmpeg's libavcodec, one clip per thread, clips in
    parallel. With ``device="cuda"`` they are decoded by NVDEC, the GPU's video engines, and
    transformed on the GPU; lists with transforms that path lacks (colour, warps, erasing) are
    decoded on the CPU and the batches copied over (docs/video.md).
    """

    def __init__(self, videos: Any, labels: Sequence[int] | None = None, *, sequence_length: int = 16,
                 stride: int = 1, step: int | None = None, clips_per_video: int | None = None,
                 on_error: str = "raise", index_threads: int | None = None, index_cache: Any = "default",
                 extensions: Sequence[str] = VIDEO_EXTENSIONS):
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        self.sequence_length = _positive("sequence_length", sequence_length)
        self.stride = _positive("stride", stride)
        self.step = _positive("step", sequence_length * stride if step is None else step)
        self.clips_per_video = None if clips_per_video is None else _positive("clips_per_video", clips_per_video)
        if isinstance(videos, (str, bytes, os.PathLike)):
            pairs, self._classes = _list_folder(os.fsdecode(videos), extensions)
        else:
            pairs, self._classes = _pairs(videos, labels), []
        if not pairs:
            raise ValueError("no videos")
        threads = index_threads or min(8, os.cpu_count() or 1)
        self._source, skipped, self._frames = _core._videos(
            pairs, self._classes, self.sequence_length, self.stride, self.step, self.clips_per_video or 0,
            on_error == "skip", _positive("index_threads", threads), index_cache_arg(index_cache))
        self._videos = pairs
        self._skipped = [(os.fsdecode(p), r) for p, r in skipped]

    def __len__(self) -> int:
        """Clips per epoch."""
        return len(self._source)

    def __repr__(self) -> str:
        return (f"sluice.Videos({len(self._videos)} videos, {len(self)} clips of {self.sequence_length} frames, "
                f"stride {self.stride})")

    @property
    def videos(self) -> list[tuple[str, int]]:
        """(path, label) of every video, in order."""
        return list(self._videos)

    @property
    def classes(self) -> list[str]:
        """The class folders' names, in label order (empty for a list)."""
        return list(self._classes)

    @property
    def num_frames(self) -> list[int]:
        """Each video's frame count (0 for one left out)."""
        return list(self._frames)

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """(path, reason) of each video left out (``on_error="skip"``)."""
        return list(self._skipped)

    def clip(self, index: int, epoch: int = 0, seed: int = 0) -> tuple[str, list[int]]:
        """(path, frame indices) of clip ``index`` in ``epoch`` (random clips depend on the
        Loader's seed and the epoch)."""
        video, frames = _core._clip_frames(self._source, index, seed, epoch)
        return self._videos[video][0], frames
