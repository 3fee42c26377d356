"""DALI rows for the GPU benchmarks: NVIDIA DALI doing the same work with NVIDIA's own pipeline
(issue 16), so that every speed claim is a ratio to DALI measured in the same run.

RandomResizedCrop row (bench/gpu_bench.py): readers.file (shuffled) -> decoders.image_random_crop
on device="mixed" (nvJPEG: the hardware engines take `hw_decoder_load` of the samples, the rest
the hybrid/CPU decoders; ROI decoding; torchvision's default area and aspect ranges) -> resize to
224x224 -> crop_mirror_normalize (random flip, ImageNet mean/std, float16, CHW). Batches reach
torch through DALIGenericIterator, on the GPU.

WebDataset row (bench/shard_bench.py): the same over local tar shards through readers.webdataset.

Seed-pipeline row (bench/augment_bench.py): readers.file -> decoders.image (mixed) -> resize (the
shorter side to 1.2 x size) -> rotate (uniform +-20 degrees, same size, black fill) -> crop (size
x size at a uniform position) -> color_twist (brightness, contrast, saturation uniform in
[0.5, 1.5], hue uniform in +-108 degrees: torchvision's hue 0.3 of a turn) ->
crop_mirror_normalize (random flip, mean = std = 127.5, float32, CHW) -> erase (n_holes squares
of length x length set to 0, anchored uniformly inside the image: the seed's Cutout also lets a
square hang over the edge).

DALI is optional: without it (`pip install nvidia-dali-cuda130`) each row raises RowSkipped with
the reason.
"""
from __future__ import annotations

BATCH, SIZE = 256, 224
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
THREADS = (16, 8)
HW_LOADS = (0.65, 0.9, 1.0)


class RowSkipped(Exception):
    """The row cannot run here (the reason is its message)."""


def import_dali():
    try:
        import nvidia.dali  # noqa: F401
        from nvidia.dali.plugin import pytorch  # noqa: F401
    except ImportError as e:
        raise RowSkipped(f"DALI is not installed ({e}); pip install nvidia-dali-cuda130") from None
    import nvidia.dali as dali
    return dali


def torch_row(dali, pipe):
    """A built pipeline's batches as torch tensors on the GPU, endlessly (epoch after epoch):
    (iterator of (images, labels), extra())."""
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    pipe.build()
    it = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader", auto_reset=True,
                             last_batch_policy=LastBatchPolicy.DROP)

    def batches():
        while True:
            for out in it:
                yield out[0]["images"], out[0]["labels"]

    return batches(), lambda: {"gpu_alloc_peak": None, "dali": dali.__version__}


def row_name(threads: int, hw_load: float) -> str:
    return f"DALI {threads} threads hw_decoder_load {hw_load:g}"


def rrc_steps(dali, jpegs, hw_load: float):
    """decoders.image_random_crop (mixed) -> resize -> crop_mirror_normalize, as NVIDIA's examples."""
    fn, types = dali.fn, dali.types
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB,
                                           hw_decoder_load=hw_load, random_area=[0.08, 1.0],
                                           random_aspect_ratio=[3 / 4, 4 / 3])
    images = fn.resize(images, resize_x=SIZE, resize_y=SIZE)
    return fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                    mean=[255 * m for m in MEAN], std=[255 * s for s in STD],
                                    mirror=fn.random.coin_flip(probability=0.5))


def rrc_row(data: str, threads: int, hw_load: float, device_id: int = 0):
    """(endless iterator of (images, labels) on the GPU, extra() -> dict) for gpu_bench.measure."""
    dali = import_dali()

    @dali.pipeline_def(batch_size=BATCH, num_threads=threads, device_id=device_id, seed=0)
    def pipeline():
        jpegs, labels = dali.fn.readers.file(file_root=data, random_shuffle=True, name="Reader")
        return rrc_steps(dali, jpegs, hw_load), labels.gpu()

    return torch_row(dali, pipeline())


def webdataset_rrc_row(shards: list, threads: int, hw_load: float, device_id: int = 0):
    """The RandomResizedCrop row over local WebDataset shards (bench/shard_bench.py):
    readers.webdataset (shuffled through its buffer; no index files, so DALI walks each shard
    when it starts) -> the same steps as rrc_row. The label member's text is padded to 8 bytes."""
    dali = import_dali()
    fn = dali.fn

    @dali.pipeline_def(batch_size=BATCH, num_threads=threads, device_id=device_id, seed=0)
    def pipeline():
        jpegs, cls = fn.readers.webdataset(paths=shards, ext=["jpg", "cls"], random_shuffle=True,
                                           initial_fill=1024, name="Reader")
        return rrc_steps(dali, jpegs, hw_load), fn.pad(cls, axes=[0], shape=[8]).gpu()

    return torch_row(dali, pipeline())


def seed_row(data: str, threads: int, hw_load: float, batch_size: int, size: int, n_holes: int, length: int,
             device_id: int = 0):
    """The seed pipeline in DALI: (endless iterator of (images, labels) on the GPU, extra())."""
    dali = import_dali()
    fn, types = dali.fn, dali.types

    def uniform(lo, hi, **kw):
        return fn.random.uniform(range=[lo, hi], **kw)

    @dali.pipeline_def(batch_size=batch_size, num_threads=threads, device_id=device_id, seed=0)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB, hw_decoder_load=hw_load)
        images = fn.resize(images, resize_shorter=int(size * 1.2))
        images = fn.rotate(images, angle=uniform(-20, 20), keep_size=True, fill_value=0)
        images = fn.crop(images, crop=(size, size), crop_pos_x=uniform(0, 1), crop_pos_y=uniform(0, 1))
        images = fn.color_twist(images, brightness=uniform(0.5, 1.5), contrast=uniform(0.5, 1.5),
                                saturation=uniform(0.5, 1.5), hue=uniform(-108, 108))
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=[127.5] * 3,
                                          std=[127.5] * 3, mirror=fn.random.coin_flip(probability=0.5))
        anchors = uniform(0, size - length, shape=[2 * n_holes])
        images = fn.erase(images, anchor=anchors, shape=[length, length] * n_holes, axis_names="HW",
                          fill_value=0)
        return images, labels.gpu()

    return torch_row(dali, pipeline())


def rrc_rows() -> dict:
    """Row name -> (data -> row), every thread count and engine share."""
    return {row_name(t, h): (lambda d, t=t, h=h: rrc_row(d, t, h)) for t in THREADS for h in HW_LOADS}


def sharded_epochs(it, cut: bool, convert):
    """epoch(e, limit) over a DALIGenericIterator made with reader_name and auto_reset (one pass
    is one epoch of this rank's shard) for bench/torchrun_jobs.py: convert(out) -> (batch, ids).
    With `cut` (epochs timed in part) an epoch stops after `limit` batches and the next one goes
    on from there; otherwise the rest of a pass cut short (the warm-up) is drained untimed, since
    DALI cannot restart an epoch it is in."""
    def epoch(e: int, limit: int | None = None):
        for n, out in enumerate(it):
            if limit is None or n < limit:
                yield convert(out[0])
            if cut and limit is not None and n + 1 >= limit:
                return
    return epoch
