"""Multi-GPU scaling benchmark, video clips (issue 21): epochs on 1, 2 and 4 GPUs under torchrun,
sluice against DALI's readers.video and the CPU loaders.

The seed users' experiment: 173 videos of 300 frames at 1080p (bench/video_bench.py --make 173
writes them), clips of --sequence-length frames --stride apart (step: sequence length x stride,
clips that do not overlap, as DALI's readers.video takes with that step), every frame resized to
--out-size (bilinear, antialiased) and normalized (ImageNet) to float16 (N, F, C, H, W) on the
rank's GPU, batch 8 per GPU, a new order every epoch, each rank its own shard of the clips.
  sluice-cuda  sluice.Loader(sluice.Videos(DATA, ...), [Resize, Normalize], device="cuda:LOCAL_RANK",
               num_threads=--threads): NVDEC decodes, the GPU transforms. Ids: loader.last_indices.
  sluice-cpu   the same with device="cpu" (libavcodec, --threads clips at once), each batch copied
               to the GPU.
  dali         fn.readers.video(device="gpu", shard_id=rank, num_shards=world, random_shuffle,
               labels = the video's number, enable_frame_num) -> fn.resize ->
               fn.crop_mirror_normalize(float16, FCHW), --threads threads. Ids: from (video, first
               frame), numbered video by video.
  torchcodec   torch DataLoader (--workers workers per rank, DistributedSampler): torchcodec's
               VideoDecoder(seek_mode="exact").get_frames_at on the CPU (bench/video_peers.py),
               resized and normalized in the workers, copied to the GPU.
Method: bench/torchrun_jobs.py. --max-batches cuts each timed epoch at that many batches per
rank (s/epoch extrapolated from the rate, not checked for exactly once): for the slow rows, run
them in an invocation of their own.

    python bench/video_scaling.py DATA [--gpus 1,2,4] [--systems sluice-cuda,dali,sluice-cpu]
        [--sequence-length 16] [--stride 2] [--batch-size 8] [--out-size 360x640] [--threads N]
        [--workers 8] [--epochs 1] [--max-batches M] [--json out.json] [--logs DIR] [--timeout 600]
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import torch  # noqa: E402
from torchrun_jobs import Rank, System, run_worker  # noqa: E402
from torchrun_launch import common_args, machine_info, parse_common, run_and_report, warmup_text  # noqa: E402
from video_bench import size_arg  # noqa: E402
from video_peers import MEAN, STD, TorchcodecClips, pyav_items  # noqa: E402

SEED = 0


def open_videos(args):
    import sluice
    return sluice.Videos(args.data, sequence_length=args.sequence_length, stride=args.stride)


def sluice_system(args, rank: Rank, device: str) -> System:
    import sluice
    import sluice.transforms as T
    loader = sluice.Loader(open_videos(args), [T.Resize(tuple(args.out_size)), T.Normalize(MEAN, STD)],
                           batch_size=args.batch_size, shuffle=True, seed=SEED, dtype="float16",
                           num_threads=args.threads, device=device)

    def epoch(e: int, limit: int | None = None):
        loader.set_epoch(e)
        for clips, _ in itertools.islice(loader, limit):
            yield clips.to(rank.device, non_blocking=True), loader.last_indices

    def extra() -> dict:
        st = loader.stats()
        return {"frames_decoded_per_clip": st.get("video_frames_decoded", 0) / max(1, st["samples"])}

    where = "NVDEC" if device != "cpu" else "CPU"
    return System(f"sluice {where} ({args.threads} threads/rank)", loader.num_samples, len(loader), epoch,
                  extra=extra)


def dali_system(args, rank: Rank) -> System:
    from dali_rows import import_dali, sharded_epochs
    dali = import_dali()
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    fn, types = dali.fn, dali.types
    videos = open_videos(args)
    paths = [p for p, _ in videos.videos]
    step = args.sequence_length * args.stride
    h, w = args.out_size

    @dali.pipeline_def(batch_size=args.batch_size, num_threads=args.threads, device_id=rank.device.index, seed=SEED)
    def pipeline():  # DALI 2.4 has no readers.video on the CPU
        clips, video, first = fn.readers.video(
            device="gpu", filenames=paths, labels=list(range(len(paths))), sequence_length=args.sequence_length,
            stride=args.stride, step=step, random_shuffle=True, initial_fill=min(1024, len(videos)),
            enable_frame_num=True, shard_id=rank.rank, num_shards=rank.world, name="Reader")
        clips = fn.resize(clips, resize_x=w, resize_y=h)
        clips = fn.crop_mirror_normalize(clips, dtype=types.FLOAT16, output_layout="FCHW",
                                         mean=[255 * m for m in MEAN], std=[255 * s for s in STD])
        return clips, video, first

    pipe = pipeline()
    pipe.build()
    it = DALIGenericIterator([pipe], ["clips", "video", "first"], reader_name="Reader", auto_reset=True,
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    # Clip ids: the clips of video v numbered after those of videos 0..v-1, in order of their start.
    offsets = list(itertools.accumulate((len(range(0, n - (args.sequence_length - 1) * args.stride, step))
                                         for n in videos.num_frames), initial=0))

    def ids(out) -> list:
        return [offsets[int(v)] + int(f) // step for v, f in zip(out["video"].reshape(-1), out["first"].reshape(-1))]

    epoch = sharded_epochs(it, bool(args.max_batches) and args.max_batches < len(it),
                           lambda out: (out["clips"], ids(out)))

    name = f"DALI {dali.__version__} readers.video ({args.threads} threads/rank)"
    return System(name, len(videos), len(it), epoch, extra=lambda: {"dali_epoch_size": pipe.epoch_size("Reader")})


class IndexedClips(TorchcodecClips):
    """(clip, i): the index stands for the label, for the exactly-once check."""

    def __getitem__(self, i: int):
        return super().__getitem__(i)[0], i


def torchcodec_system(args, rank: Rank) -> System:
    items = pyav_items(open_videos(args))
    dataset = IndexedClips(items, tuple(args.out_size), "cpu")
    sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True, seed=SEED)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler,
                                         num_workers=args.workers, pin_memory=rank.cuda,
                                         persistent_workers=args.workers > 0)

    def epoch(e: int, limit: int | None = None):
        sampler.set_epoch(e)
        for clips, ids in itertools.islice(loader, limit):
            yield clips.to(rank.device, non_blocking=True), ids

    return System(f"torchcodec DataLoader ({args.workers} workers/rank)", len(dataset), len(loader), epoch,
                  pads=True)


SYSTEMS = {"sluice-cuda": lambda a, r: sluice_system(a, r, str(r.device)),
           "sluice-cpu": lambda a, r: sluice_system(a, r, "cpu"),
           "dali": dali_system, "torchcodec": torchcodec_system}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="class folders of videos (bench/video_bench.py DATA --make 173 --make-only)")
    common_args(ap, SYSTEMS, batch_size=8, warmup=2)
    ap.add_argument("--sequence-length", type=int, default=16)
    ap.add_argument("--stride", type=int, default=2)
    ap.add_argument("--out-size", type=size_arg, default=(360, 640), help="HxW of each frame, e.g. 360x640")
    ap.add_argument("--workers", type=int, default=8, help="DataLoader workers per GPU (torchcodec)")
    args = ap.parse_args()
    gpu_counts, systems = parse_common(ap, args, SYSTEMS)
    if args.system:  # a rank under torchrun
        return run_worker(args, SYSTEMS[args.system])

    meta, videos = machine_info(args.device), open_videos(args)  # indexed here once: the ranks find the cache
    data_line = (f"{args.data}: {len(videos.videos)} videos, {sum(videos.num_frames):,} frames, "
                 f"{len(videos):,} clips an epoch")
    settings = (f"clips of {args.sequence_length} frames {args.stride} apart, batch {args.batch_size}/GPU, "
                f"{args.out_size[0]}x{args.out_size[1]} float16, {args.threads} threads/GPU, torchcodec "
                f"{args.workers} workers/GPU, " + warmup_text(args)
                + (f" (at most {args.max_batches} batches/rank)" if args.max_batches else ""))
    run_and_report(os.path.abspath(__file__), systems, gpu_counts, args, meta, data_line, settings, "clips",
                   {"data": data_line}, ours="sluice-cuda")
    return 0


if __name__ == "__main__":
    sys.exit(main())
