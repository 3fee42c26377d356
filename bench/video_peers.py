"""The peers' rows of bench/video_bench.py, and the sampler of the GPU's decoder load.

Each row function returns (batches iterable, start(epoch) or None, clips per epoch, extra() -> dict)
or raises RowSkipped with the reason it cannot run here. Every row loads the same clips (from
sluice.Videos' numbering: video, frame indices) and makes the same batches: frames resized to
out_size (bilinear, antialiased), normalized (ImageNet), float16 (N, F, C, H, W).
  pyav        torch DataLoader, item i = clip i: PyAV (one thread) seeks to the key frame before the
              clip and decodes forward (frame index = presentation order, from sluice's index)
  torchcodec  the same with torchcodec's VideoDecoder(path, seek_mode="exact").get_frames_at(frames),
              one FFmpeg thread; on "cuda" it decodes in the main process (CUDA in workers fails)
  dali        fn.readers.video(device="gpu") -> fn.resize -> fn.crop_mirror_normalize (FCHW)
"""
from __future__ import annotations

import subprocess
import threading

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # = sluice.IMAGENET_MEAN / _STD


class RowSkipped(Exception):
    """The row cannot run here: the reason."""


def pyav_items(videos) -> list:
    """Clip i as (path, frames, label, pts of every frame, key frame indices)."""
    import sluice
    index, labels = {p: sluice._core.video_index(p) for p, _ in videos.videos}, dict(videos.videos)
    return [(p, list(f), labels[p], index[p]["pts"], index[p]["keyframes"])
            for p, f in (videos.clip(i) for i in range(len(videos)))]


def decode_clip(path: str, frames: list, pts: list, keyframes: list):
    """(F, H, W, 3) uint8 RGB with PyAV: from the key frame at or before the first frame, forward."""
    import av
    import numpy as np
    where, wanted, got = {p: i for i, p in enumerate(pts)}, set(frames), {}
    key = max((k for k in keyframes if k <= frames[0]), default=0)
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_count = 1  # one thread per clip, as sluice; the workers decode in parallel
        container.seek(pts[key], backward=True, any_frame=False, stream=stream)
        for frame in container.decode(stream):
            i = where.get(frame.pts)
            if i in wanted:
                got[i] = frame.to_ndarray(format="rgb24")
            if i is not None and i >= frames[-1]:
                break
    if len(got) < len(wanted):
        raise RuntimeError(f"{path}: frames {sorted(wanted - set(got))} not decoded")
    return np.stack([got[f] for f in frames])


def finish(x, out_size):
    """uint8 (F, C, H, W) -> float16 (F, C, h, w): resized (bilinear, antialiased), normalized."""
    import torch
    import torch.nn.functional as F
    x = F.interpolate(x.float().div_(255), size=out_size, mode="bilinear", antialias=True, align_corners=False)
    mean = torch.tensor(MEAN, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=x.device).view(1, 3, 1, 1)
    return x.sub_(mean).div_(std).half()


class PyAVClips:
    """For torch's DataLoader: item i = (clip i, float16 (F, C, h, w), label)."""

    def __init__(self, items: list, out_size: tuple[int, int]):
        self.items, self.out_size = items, out_size

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int):
        import torch
        path, frames, label, pts, keyframes = self.items[i]
        return finish(torch.from_numpy(decode_clip(path, frames, pts, keyframes)).permute(0, 3, 1, 2),
                      self.out_size), label


class TorchcodecClips(PyAVClips):
    """The same items, decoded by torchcodec on `device`."""

    def __init__(self, items: list, out_size: tuple[int, int], device: str):
        super().__init__(items, out_size)
        self.device = device

    def __getitem__(self, i: int):
        from torchcodec.decoders import VideoDecoder
        path, frames, label = self.items[i][:3]
        decoder = VideoDecoder(path, device=self.device, num_ffmpeg_threads=1, seek_mode="exact")
        return finish(decoder.get_frames_at(frames).data, self.out_size), label


def dataloader_row(args, dataset, workers: int):
    import torch
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=workers,
                                         persistent_workers=workers > 0 and args.epochs > 1)
    return loader, None, len(dataset), lambda: {"workers": workers}


def pyav_row(args, videos, workers: int):
    try:
        import av  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        raise RowSkipped(f"needs PyAV and torch ({e})") from None
    return dataloader_row(args, PyAVClips(pyav_items(videos), args.out_size), workers)


def torchcodec_row(args, videos, workers: int, device: str):
    try:
        import torchcodec
        from torchcodec.decoders import VideoDecoder
    except Exception as e:  # noqa: BLE001 - ImportError, or its FFmpeg libraries missing (RuntimeError)
        raise RowSkipped(f"torchcodec cannot be imported ({type(e).__name__}: {str(e)[:300]})") from None
    items = pyav_items(videos)
    try:  # a CPU-only build refuses "cuda" here
        VideoDecoder(items[0][0], device=device, seek_mode="exact").get_frames_at(items[0][1][:1])
    except Exception as e:  # noqa: BLE001 - the reason goes in the table
        raise RowSkipped(f"torchcodec {torchcodec.__version__} does not decode on {device}: "
                         f"{type(e).__name__}: {str(e)[:200]}") from None
    loader, start, per_epoch, extra = dataloader_row(args, TorchcodecClips(items, args.out_size, device),
                                                     0 if device == "cuda" else workers)
    return loader, start, per_epoch, lambda: {**extra(), "torchcodec": torchcodec.__version__}


def dali_row(args, videos, threads: int):
    try:
        import nvidia.dali as dali
        from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    except ImportError as e:
        raise RowSkipped(f"DALI is not installed ({e}); pip install nvidia-dali-cuda130") from None
    fn, types = dali.fn, dali.types
    paths, labels = [p for p, _ in videos.videos], [max(0, y) for _, y in videos.videos]
    h, w = args.out_size

    @dali.pipeline_def(batch_size=args.batch_size, num_threads=threads, device_id=0, seed=0)
    def pipeline():
        clips, label = fn.readers.video(device="gpu", filenames=paths, labels=labels,
                                        sequence_length=args.sequence_length, stride=args.stride, step=args.step,
                                        random_shuffle=True, initial_fill=min(1024, len(videos)), name="Reader")
        clips = fn.resize(clips, resize_x=w, resize_y=h)
        clips = fn.crop_mirror_normalize(clips, dtype=types.FLOAT16, output_layout="FCHW",
                                         mean=[255 * m for m in MEAN], std=[255 * s for s in STD])
        return clips, label

    pipe = pipeline()
    pipe.build()
    epoch = pipe.epoch_size("Reader")
    it = DALIGenericIterator([pipe], ["clips", "labels"], reader_name="Reader", auto_reset=False,
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    extra = {"dali": dali.__version__, "dali_clips_per_epoch": epoch, "threads": threads}
    return it, lambda e: e and it.reset(), epoch, lambda: extra


class GpuLoad:
    """Samples GPU 0's decoder (NVDEC) and SM utilisation (percent) with nvidia-smi every 100 ms
    between start() and stop(); stop() gives their means and maxima, or {} without nvidia-smi."""

    def __init__(self):
        self.proc, self.lines, self.reader = None, [], None

    def start(self) -> None:
        try:
            self.proc = subprocess.Popen(["nvidia-smi", "-i", "0", "--query-gpu=utilization.decoder,utilization.gpu",
                                          "--format=csv,noheader,nounits", "-lms", "100"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self.reader.start()

    def stop(self) -> dict:
        if self.proc is None:
            return {}
        self.proc.terminate()
        self.proc.wait()
        self.reader.join(2)
        samples = []
        for line in self.lines:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                samples.append((int(parts[0]), int(parts[1])))
        if not samples:
            return {}
        dec, sm = [s[0] for s in samples], [s[1] for s in samples]
        return {"nvdec_util_mean": sum(dec) / len(dec), "nvdec_util_max": max(dec),
                "sm_util_mean": sum(sm) / len(sm), "gpu_load_samples": len(samples)}
