"""sluice.Videos through the Loader (CPU path) on real videos: every clip's frames are the
decoder's (checked against _core.read_video_frames, itself checked against PyAV in
test_video_decode.py), every clip exactly once per epoch over ranks, one draw per clip for the
random transforms, random clips per video per epoch, exact resume, bad and short videos with
on_error, and a file damaged after indexing."""
from __future__ import annotations

import hashlib
import os
import shutil

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from sluice import _core

pytest.importorskip("av")
video_data = pytest.importorskip("sluice.video_data")

W, H = 64, 48


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    """2 classes x 2 videos of 40, 30, 40, 30 frames (key frames every 10, B-frames)."""
    root = tmp_path_factory.mktemp("videos")
    for i, frames in enumerate([40, 30, 40, 30]):
        os.makedirs(root / f"c{i % 2}", exist_ok=True)
        video_data.make_video(str(root / f"c{i % 2}" / f"v{i}.mp4"), width=W, height=H, frames=frames, gop=10,
                              bframes=2, seed=i)
    return str(root)


def numpy_clips(loader, epochs=(0,)):
    """[(dataset index, clip array (F, H, W, 3) uint8)] of every batch of the given epochs."""
    out = []
    for e in epochs:
        loader.set_epoch(e)
        for x, _y in loader:
            out += list(zip(loader.last_indices.tolist(), np.asarray(x)))
    return out


def reference(videos, index, epoch=0, seed=0) -> np.ndarray:
    path, frames = videos.clip(index, epoch, seed)
    return _core.read_video_frames(path, frames)


def test_clips_layout_and_frames(folder):
    v = sluice.Videos(folder, sequence_length=4, stride=3)  # span 10, step 12
    assert v.num_frames == [40, 40, 30, 30]  # class folders c0 (v0, v2) then c1 (v1, v3)
    assert v.classes == ["c0", "c1"]
    # Starts 0, 12, 24 (36 + 9 > 39) for 40 frames; 0, 12 for 30: 3 + 3 + 2 + 2.
    assert len(v) == 10
    assert v.clip(1) == (os.path.join(folder, "c0", "v0.mp4"), [12, 15, 18, 21])
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=3, dtype="uint8", layout="NHWC", output="numpy")
    got = numpy_clips(loader)
    assert sorted(i for i, _ in got) == list(range(10))
    for i, clip in got:
        assert clip.shape == (4, H, W, 3)
        np.testing.assert_array_equal(clip, reference(v, i), err_msg=f"clip {i}")
        path, frames = v.clip(i)
        assert [video_data.read_frame_number(f, 40) for f in clip] == frames


def test_overlapping_clips_of_a_batch_decoded_once(folder):
    """Clips of one video in a batch share one pass of the decoder: each clip's frames are still
    the decoder's, and the pictures decoded (stats) fall well below those of clips decoded one by
    one, yet never below the distinct frames the clips hold."""
    v = sluice.Videos(folder, sequence_length=4, stride=2, step=2)  # span 7: neighbours overlap
    kw = dict(dtype="uint8", layout="NHWC", output="numpy", num_threads=1, prefetch=1)
    together = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=6, **kw)
    alone = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=1, **kw)
    got = dict(numpy_clips(together))
    assert sorted(got) == list(range(len(v)))
    for i, clip in got.items():
        np.testing.assert_array_equal(clip, reference(v, i), err_msg=f"clip {i}")
    assert {i: c.tobytes() for i, c in numpy_clips(alone)} == {i: c.tobytes() for i, c in got.items()}
    distinct = len({(v.clip(i)[0], f) for i in range(len(v)) for f in v.clip(i)[1]})
    joint, each = together.stats()["video_frames_decoded"], alone.stats()["video_frames_decoded"]
    assert distinct <= joint and 2 * joint < each, (distinct, joint, each)


def test_labels_and_layouts(folder):
    v = sluice.Videos(folder, sequence_length=2, stride=1, step=20)
    loader = sluice.Loader(v, [T.Resize((24, 32))], batch_size=4, dtype="float32")
    x, y = next(iter(loader))
    assert tuple(x.shape) == (4, 2, 3, 24, 32)  # (N, F, C, H, W)
    labels = {os.path.basename(p): lab for p, lab in v.videos}
    assert labels == {"v0.mp4": 0, "v2.mp4": 0, "v1.mp4": 1, "v3.mp4": 1}
    for idx, lab in zip(loader.last_indices.tolist(), y.tolist()):
        assert lab == labels[os.path.basename(v.clip(idx)[0])]


@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
@pytest.mark.parametrize("per_video", [None, 3])
def test_every_clip_once_over_ranks(folder, world_size, per_video):
    """Every clip of an epoch exactly once over the ranks, with its own frames, for both policies
    (random clips: the starts drawn for that epoch)."""
    v = sluice.Videos(folder, sequence_length=3, stride=2, step=5, clips_per_video=per_video)
    for epoch in (0, 1):
        want = {i: hashlib.sha1(reference(v, i, epoch, seed=5).tobytes()).hexdigest() for i in range(len(v))}
        seen = []
        for rank in range(world_size):
            loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=4, shuffle=True, seed=5, dtype="uint8",
                                   layout="NHWC", output="numpy", rank=rank, world_size=world_size)
            got = numpy_clips(loader, [epoch])
            for i, clip in got:
                assert hashlib.sha1(clip.tobytes()).hexdigest() == want[i], f"clip {i}, rank {rank}"
            seen += [i for i, _ in got]
        assert sorted(seen) == list(range(len(v))), f"epoch {epoch}: not every clip exactly once"


def test_one_draw_per_clip(folder):
    """A flip and a brightness factor drawn per clip: each clip's frames are all flipped or none,
    scaled by one factor; different clips differ."""
    v = sluice.Videos(folder, sequence_length=5, stride=1, step=5)
    loader = sluice.Loader(v, [T.CenterCrop((H, W)), T.RandomHorizontalFlip(), T.ColorJitter(brightness=0.5)],
                           batch_size=8, shuffle=True, dtype="uint8", layout="NHWC", output="numpy")
    flips, factors = [], []
    for i, clip in numpy_clips(loader):
        ref = reference(v, i).astype(np.float64)
        # The flip: the orientation the frame correlates with best (whatever the factor).
        orient = [np.corrcoef(clip[k].ravel(), ref[k, :, ::-1].ravel())[0, 1] >
                  np.corrcoef(clip[k].ravel(), ref[k].ravel())[0, 1] for k in range(5)]
        assert len(set(orient)) == 1, f"clip {i}: frames flipped differently {orient}"
        src = ref[:, :, ::-1] if orient[0] else ref
        mask = (src > 20) & (src < 150)  # unsaturated either way for factors in [0.5, 1.5]
        f = [float(np.median(clip[k][mask[k]] / src[k][mask[k]])) for k in range(5)]
        assert max(f) - min(f) < 0.02, f"clip {i}: brightness factors {f}"
        flips.append(orient[0])
        factors.append(f[0])
    assert 0 < sum(flips) < len(flips)
    assert max(factors) - min(factors) > 0.1


def test_random_clips_per_video(folder):
    v = sluice.Videos(folder, sequence_length=4, stride=2, clips_per_video=3)
    assert len(v) == 12
    starts = {e: [v.clip(i, e, seed=1)[1][0] for i in range(12)] for e in (0, 1)}
    assert starts[0] != starts[1]
    for i in range(12):
        path, frames = v.clip(i, 0, seed=1)
        assert frames == list(range(frames[0], frames[0] + 8, 2))
        assert 0 <= frames[0] <= v.num_frames[v.videos.index(next(p for p in v.videos if p[0] == path))] - 7
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=5, seed=1, dtype="uint8", layout="NHWC",
                           output="numpy")
    for epoch in (0, 1):
        for i, clip in numpy_clips(loader, [epoch]):
            np.testing.assert_array_equal(clip, reference(v, i, epoch, seed=1))


def test_resume_mid_epoch(folder):
    v = sluice.Videos(folder, sequence_length=3, stride=1, step=4)
    kw = dict(batch_size=3, shuffle=True, seed=2, dtype="uint8", layout="NHWC", output="numpy")
    full = sluice.Loader(v, [T.CenterCrop((H, W))], **kw)
    order = [full.last_indices.tolist() for _ in full]
    part = sluice.Loader(v, [T.CenterCrop((H, W))], **kw)
    it = iter(part)
    next(it), next(it)
    state = part.state_dict()
    resumed = sluice.Loader(v, [T.CenterCrop((H, W))], **kw)
    resumed.load_state_dict(state)
    assert [resumed.last_indices.tolist() for _ in resumed] == order[2:]


def test_clips_need_one_output_size(folder):
    v = sluice.Videos(folder, sequence_length=2)
    with pytest.raises(ValueError, match="video clips need transforms that give every frame one size"):
        sluice.Loader(v, [T.Resize(32)], batch_size=2)


def test_arguments(folder, tmp_path):
    for kw, msg in [(dict(sequence_length=0), "sequence_length must be an int >= 1"),
                    (dict(stride=1.5), "stride must be an int >= 1"),
                    (dict(on_error="ignore"), "on_error must be")]:
        with pytest.raises(ValueError, match=msg):
            sluice.Videos(folder, **kw)
    with pytest.raises(FileNotFoundError, match="no class folder"):
        sluice.Videos(str(tmp_path))
    with pytest.raises(ValueError, match="2 videos but 1 labels"):
        sluice.Videos(["a.mp4", "b.mp4"], labels=[0])


@pytest.fixture()
def with_bad(folder, tmp_path) -> str:
    """The folder plus a truncated file, a text file and a video shorter than one clip."""
    root = tmp_path / "mixed"
    shutil.copytree(folder, root)
    data = open(os.path.join(folder, "c0", "v0.mp4"), "rb").read()
    (root / "c0" / "cut.mp4").write_bytes(data[: len(data) // 3])
    (root / "c1" / "notes.mp4").write_bytes(b"not a video\n" * 40)
    video_data.make_video(str(root / "c1" / "short.mp4"), width=W, height=H, frames=5, gop=5, bframes=0)
    return str(root)


def test_bad_videos_raise_naming_the_file(with_bad):
    with pytest.raises(sluice.DecodeError, match=r"cut\.mp4: .*moov"):
        sluice.Videos(with_bad, sequence_length=4)


def test_short_video_raises(folder, tmp_path):
    path = str(tmp_path / "short.mp4")
    video_data.make_video(path, width=W, height=H, frames=5, gop=5, bframes=0)
    with pytest.raises(ValueError, match=r"short\.mp4: 5 frames, shorter than one clip \(7 frames: "
                                         r"sequence_length 4, stride 2\)"):
        sluice.Videos([path], sequence_length=4, stride=2)


def test_bad_videos_skipped_and_listed(with_bad):
    v = sluice.Videos(with_bad, sequence_length=6, step=10, on_error="skip")
    reasons = {os.path.basename(p): r for p, r in v.skipped}
    assert set(reasons) == {"cut.mp4", "notes.mp4", "short.mp4"}
    assert "moov" in reasons["cut.mp4"] and "not a video container" in reasons["notes.mp4"]
    assert reasons["short.mp4"].startswith("5 frames, shorter than one clip")
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=4, dtype="uint8", layout="NHWC", output="numpy")
    assert sorted(i for i, _ in numpy_clips(loader)) == list(range(len(v))) and len(v) == 4 + 3 + 4 + 3


def test_file_damaged_after_indexing(folder, tmp_path):
    """Indexed whole, then cut short on disk: the clips past the cut fail when decoded, naming the
    file; with on_error="skip" they are left out and reported."""
    path = str(tmp_path / "later_cut.mp4")
    video_data.make_video(path, width=W, height=H, frames=40, gop=10, bframes=2, faststart=True)
    v = sluice.Videos([(path, 3)], sequence_length=4, step=10)
    assert len(v) == 4
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=4, dtype="uint8", output="numpy")
    # Where the cut splits a packet the decoder reports damaged data; past it, missing frames.
    with pytest.raises(sluice.DecodeError, match=r"later_cut\.mp4: clip of frames \d+-\d+: "
                                                 r"(damaged data|.*truncated)"):
        next(iter(loader))
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=4, dtype="uint8", output="numpy",
                           on_error="skip")
    x, y = next(iter(loader))
    st = loader.stats()
    assert 1 <= st["skipped_count"] <= 3 and x.shape[0] == 4 - st["skipped_count"]
    assert all(s["path"] == path and s["reason"].startswith("clip of frames") for s in st["skipped"])


@pytest.mark.skipif(getattr(_core, "cuda_device_count", lambda: 0)() == 0, reason="needs a GPU")
@pytest.mark.parametrize("colour, overlapping", [(False, False), (True, False), (False, True)])
def test_cuda_loader_gives_the_cpu_batches_on_the_gpu(folder, colour, overlapping):
    """On the GPU: decoded on NVDEC and transformed by the image kernels (a resize, crop and
    flip, reading NV12), or, for a list the GPU clip path lacks (colour), decoded on the CPU and
    copied over: either way the CPU path's values exactly; also where the clips of a batch overlap
    and share one pass of the decoder."""
    torch = pytest.importorskip("torch")
    v = sluice.Videos(folder, sequence_length=4, step=2 if overlapping else 9)
    kw = dict(batch_size=6 if overlapping else 3, shuffle=not overlapping, seed=4, dtype="float16")
    tf = [T.RandomResizedCrop((32, 32)), T.RandomHorizontalFlip(), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    if colour:
        tf.insert(2, T.ColorJitter(brightness=0.4))
    gpu = sluice.Loader(v, tf, device="cuda", **kw)
    assert gpu._upload == colour  # the clip path (NVDEC) unless the list needs the CPU
    n = 0
    for (xc, yc), (xg, yg) in zip(sluice.Loader(v, tf, **kw), gpu):
        assert xg.device.type == "cuda" and tuple(xg.shape) == (len(yc), 4, 3, 32, 32)
        assert torch.equal(xg.cpu(), xc) and torch.equal(yg.cpu(), yc)
        n += len(yc)
    assert n == len(v) and gpu.stats()["samples"] == n


def test_codec_without_a_decoder(folder, tmp_path):
    """A Matroska file whose track names a codec no decoder knows (the H.264 track's CodecID
    overwritten) is indexed from its packets; its clips fail when decoded, naming the file and
    the reason, or are skipped and reported."""
    path = str(tmp_path / "unknown.mkv")
    video_data.make_video(path, width=W, height=H, frames=12, gop=4, bframes=0)
    data = open(path, "rb").read()
    assert data.count(b"V_MPEG4/ISO/AVC") == 1
    open(path, "wb").write(data.replace(b"V_MPEG4/ISO/AVC", b"V_SLUICE/NO/SUC"))
    v = sluice.Videos([(path, 1), (os.path.join(folder, "c0", "v0.mp4"), 0)], sequence_length=4, step=4)
    assert v.num_frames == [12, 40] and len(v) == 3 + 10
    kw = dict(batch_size=4, dtype="uint8", output="numpy")
    with pytest.raises(sluice.DecodeError, match=r"unknown\.mkv: clip of frames 0-3: codec none: this FFmpeg has "
                                                 r"no decoder for it"):
        next(iter(sluice.Loader(v, [T.CenterCrop((H, W))], **kw)))
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], on_error="skip", **kw)
    assert sum(len(y) for _x, y in loader) == 10
    st = loader.stats()
    assert st["skipped_count"] == 3 and {s["path"] for s in st["skipped"]} == {path}
    assert all("no decoder" in s["reason"] for s in st["skipped"])


def write_mjpeg(path: str, frames: int = 12) -> str:
    """Motion JPEG in Matroska (full-range 4:2:0, every frame a key frame): a codec NVDEC has no
    engine for."""
    import av
    rng = np.random.default_rng(3)
    with av.open(path, "w") as c:
        s = c.add_stream("mjpeg", rate=24)
        s.width, s.height, s.pix_fmt = W, H, "yuvj420p"
        for _ in range(frames):
            picture = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
            for p in s.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    return path


def test_mjpeg_clips_on_the_cpu(tmp_path):
    v = sluice.Videos([(write_mjpeg(str(tmp_path / "motion.mkv")), 0)], sequence_length=3, step=3)
    loader = sluice.Loader(v, [T.CenterCrop((H, W))], batch_size=2, dtype="uint8", layout="NHWC", output="numpy")
    got = numpy_clips(loader)
    assert sorted(i for i, _ in got) == list(range(4))
    for i, clip in got:
        np.testing.assert_array_equal(clip, reference(v, i), err_msg=f"clip {i}")


@pytest.mark.skipif(getattr(_core, "cuda_device_count", lambda: 0)() == 0, reason="needs a GPU")
def test_cuda_loader_decodes_what_nvdec_lacks_on_the_cpu(tmp_path):
    """A video of a codec NVDEC has no engine for is decoded on the CPU and its pictures copied to
    the GPU for the same kernels: the CPU path's batches exactly."""
    torch = pytest.importorskip("torch")
    path = write_mjpeg(str(tmp_path / "motion.mkv"))
    with pytest.raises(sluice.DecodeError, match=r"motion\.mkv: NVDEC has no engine for mjpeg"):
        _core.read_video_frames(path, [0], device="cuda")
    v = sluice.Videos([(path, 0)], sequence_length=3, step=3)
    tf = [T.RandomResizedCrop((32, 32)), T.RandomHorizontalFlip(), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    kw = dict(batch_size=2, shuffle=True, seed=1, dtype="float16")
    gpu = sluice.Loader(v, tf, device="cuda", **kw)
    assert not gpu._upload  # the clip path, not the CPU loader's batches copied over
    for (xc, yc), (xg, yg) in zip(sluice.Loader(v, tf, **kw), gpu):
        assert torch.equal(xg.cpu(), xc) and torch.equal(yg.cpu(), yc)
    assert gpu.stats()["samples"] == len(v) == 4


def test_index_cache(folder, tmp_path):
    """A video indexed once is taken from the cache while its size and modification time stand:
    a copy whose packets are then overwritten (same size, same time) still gives its clips from
    the cache, and fails to index without it; rewritten with a new time it is indexed again."""
    src = os.path.join(folder, "c0", "v0.mp4")
    path = str(tmp_path / "v.mp4")
    shutil.copy(src, path)
    cache = str(tmp_path / "cache")
    assert len(sluice.Videos([path], sequence_length=4, index_cache=cache)) == 10
    assert len(os.listdir(cache)) == 1
    st = os.stat(path)
    with open(path, "r+b") as f:  # the same size and time, but no longer a video
        f.write(b"\0" * st.st_size)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert sluice.Videos([path], sequence_length=4, index_cache=cache).num_frames == [40]
    with pytest.raises(sluice.DecodeError, match=r"v\.mp4: "):
        sluice.Videos([path], sequence_length=4, index_cache=None)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(sluice.DecodeError, match=r"v\.mp4: "):
        sluice.Videos([path], sequence_length=4, index_cache=cache)
    with pytest.raises(TypeError, match="index_cache must be a folder"):
        sluice.Videos([path], index_cache=3)
