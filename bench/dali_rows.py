"""DALI rows for the GPU benchmarks: NVIDIA DALI doing the same work with NVIDIA's own pipeline
(issue 16), so that every speed claim is a ratio to DALI measured in the same run.

RandomResizedCrop row (bench/gpu_bench.py): readers.file (shuffled) -> decoders.image_random_crop
on device="mixed" (nvJPEG: the hardware engines take `hw_decoder_load` of the samples, the rest
the hybrid/CPU decoders; ROI decoding; torchvision's default area and aspect ranges) -> resize to
224x224 -> crop_mirror_normalize (random flip, ImageNet mean/std, float16, CHW). Batches reach
torch through DALIGenericIterator, on the GPU.

DALI is optional: without it (`pip install nvidia-dali-cuda130`; the GPU machine gets it through
../shared/tools/peer_wheels.sh) each row raises RowSkipped with the reason.
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


def row_name(threads: int, hw_load: float) -> str:
    return f"DALI {threads} threads hw_decoder_load {hw_load:g}"


def rrc_row(data: str, threads: int, hw_load: float, device_id: int = 0):
    """(endless iterator of (images, labels) on the GPU, extra() -> dict) for gpu_bench.measure."""
    dali = import_dali()
    fn, types = dali.fn, dali.types
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    @dali.pipeline_def(batch_size=BATCH, num_threads=threads, device_id=device_id, seed=0)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB,
                                               hw_decoder_load=hw_load, random_area=[0.08, 1.0],
                                               random_aspect_ratio=[3 / 4, 4 / 3])
        images = fn.resize(images, resize_x=SIZE, resize_y=SIZE)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=[255 * m for m in MEAN], std=[255 * s for s in STD],
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels.gpu()

    pipe = pipeline()
    pipe.build()
    it = DALIGenericIterator([pipe], ["images", "labels"], reader_name="Reader", auto_reset=True,
                             last_batch_policy=LastBatchPolicy.DROP)

    def batches():
        while True:
            for out in it:
                yield out[0]["images"], out[0]["labels"]

    return batches(), lambda: {"gpu_alloc_peak": None, "dali": dali.__version__}


def rrc_rows() -> dict:
    """Row name -> (data -> row), every thread count and engine share."""
    return {row_name(t, h): (lambda d, t=t, h=h: rrc_row(d, t, h)) for t in THREADS for h in HW_LOADS}
