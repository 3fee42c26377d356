"""Video frames decoded on the CPU (FFmpeg's libavcodec through sluice) against PyAV's decode of
the same files: the index (frame count, timestamps, key frames) and the 4:2:0 planes exactly, for
frames at the start, middle and end, after seeks and across groups of pictures, on videos with
B-frames, variable frame rate, a shifted start and odd sizes; RGB against the matrix equations
computed here in numpy; bad files with errors that name the file and the reason."""
from __future__ import annotations


import numpy as np
import pytest

import sluice
from sluice import _core

av = pytest.importorskip("av")
video_data = pytest.importorskip("sluice.video_data")

# name: make_video arguments
VIDEOS = {
    "h264_bframes.mp4": dict(width=96, height=64, frames=40, gop=10, bframes=2),
    "h264_vfr_start.mkv": dict(width=64, height=48, frames=30, gop=8, bframes=2, vfr=True, start_pts=5000),
    "hevc_bframes.mp4": dict(width=64, height=48, frames=30, gop=12, bframes=3, codec="hevc"),
    "mpeg4_odd.mp4": dict(width=63, height=47, frames=24, gop=8, bframes=1, codec="mpeg4"),
    "h264_intra_gop1.mp4": dict(width=32, height=32, frames=6, gop=1, bframes=0),
    "vp9.mkv": dict(width=64, height=48, frames=30, gop=10, codec="vp9"),
    "av1.mp4": dict(width=64, height=64, frames=30, gop=10, codec="av1"),
}


def write_videos(root, specs: dict) -> dict:
    """name -> path of each video of `specs` (name: make_video arguments), written in `root`."""
    out = {}
    for seed, (name, kw) in enumerate(specs.items()):
        out[name] = str(root / name)
        video_data.make_video(out[name], seed=seed, **kw)
    return out


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict:
    return write_videos(tmp_path_factory.mktemp("videos"), VIDEOS)


def pyav_frames(path: str) -> list:
    with av.open(path) as c:
        return list(c.decode(video=0))


def skip_unless_the_cpu_decodes(path: str) -> None:
    """Skips where this FFmpeg has no decoder for the video's codec (the GPU machine's small
    build has no AV1 decoder; Debian's has libdav1d)."""
    try:
        _core.read_video_frames(path, [0])
    except sluice.DecodeError as e:
        if "no decoder" not in str(e):
            raise
        pytest.skip(str(e))


def planes(frame) -> list[np.ndarray]:
    return [np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, :p.width] for p in frame.planes]


@pytest.mark.parametrize("name", list(VIDEOS))
def test_index_matches_pyav(videos, name):
    ref = pyav_frames(videos[name])
    index = _core.video_index(videos[name])
    assert index["num_frames"] == len(ref) == VIDEOS[name]["frames"]
    assert index["pts"] == [f.pts for f in ref]
    assert index["keyframes"] == [i for i, f in enumerate(ref) if f.key_frame]
    assert (index["width"], index["height"]) == (ref[0].width, ref[0].height)


@pytest.mark.parametrize("name", list(VIDEOS))
def test_frames_exact(videos, name):
    skip_unless_the_cpu_decodes(videos[name])
    path, ref = videos[name], pyav_frames(videos[name])
    n = len(ref)
    selections = [[0], [n // 2], [n - 1],                    # first, middle, last
                  [n // 2, n // 2 + 1, n // 2 + 3],          # after a seek into the middle
                  list(range(1, n, 7)),                       # sparse: groups skipped
                  [2, 2, 3],                                  # a repeated frame
                  list(range(n))]
    for sel in selections:
        sel = sorted(min(f, n - 1) for f in sel)
        y, u, v = _core.read_video_frames(path, sel, "yuv420p")
        for k, f in enumerate(sel):
            want = planes(ref[f])
            for got, exp, plane in zip((y[k], u[k], v[k]), want, "YUV"):
                np.testing.assert_array_equal(got, exp, err_msg=f"{name} frame {f} plane {plane} (of {sel})")


def rgb_reference(y: np.ndarray, u: np.ndarray, v: np.ndarray, kr: float, kb: float) -> np.ndarray:
    """BT.601 / BT.709 limited range, each chroma sample for its 2x2 pixels, in float64."""
    h, w = y.shape
    uu = np.repeat(np.repeat(u, 2, 0), 2, 1)[:h, :w].astype(np.float64)
    vv = np.repeat(np.repeat(v, 2, 0), 2, 1)[:h, :w].astype(np.float64)
    ey, pb, pr = (y - 16.0) / 219, (uu - 128) / 224, (vv - 128) / 224
    r = ey + 2 * (1 - kr) * pr
    b = ey + 2 * (1 - kb) * pb
    g = (ey - kr * r - kb * b) / (1 - kr - kb)
    return np.clip(np.floor(np.stack([r, g, b], -1) * 255 + 0.5), 0, 255).astype(np.uint8)


def test_rgb_matches_the_matrix_equations(videos):
    path = videos["h264_bframes.mp4"]
    sel = [0, 11, 39]
    rgb = _core.read_video_frames(path, sel)
    y, u, v = _core.read_video_frames(path, sel, "yuv420p")
    assert rgb.shape == (3, 64, 96, 3) and rgb.dtype == np.uint8
    for k in range(len(sel)):
        want = rgb_reference(y[k], u[k], v[k], 0.299, 0.114)  # untagged: BT.601, as FFmpeg assumes
        assert np.abs(rgb[k].astype(int) - want).max() <= 1
    # PyAV's own conversion (FFmpeg's swscale, rounded its own way) lands within a few levels.
    ref = pyav_frames(path)
    for k, f in enumerate(sel):
        assert np.abs(rgb[k].astype(int) - ref[f].to_ndarray(format="rgb24").astype(int)).max() <= 4


def test_frames_are_the_right_ones(videos):
    """The generator stamps each frame's number: the decoded frames read back as the ones asked."""
    path = videos["h264_vfr_start.mkv"]
    sel = [0, 3, 9, 17, 29]
    rgb = _core.read_video_frames(path, sel)
    assert [video_data.read_frame_number(rgb[k], 30) for k in range(len(sel))] == sel


def test_video_frames_from_a_pathlike(videos, tmp_path):
    import pathlib
    assert _core.video_index(pathlib.Path(videos["h264_bframes.mp4"]))["num_frames"] == 40


def test_frame_arguments(videos):
    path = videos["h264_bframes.mp4"]
    with pytest.raises(IndexError, match=r"frame 40 of a video of 40 frames"):
        _core.read_video_frames(path, [39, 40])
    with pytest.raises(ValueError, match="ascending"):
        _core.read_video_frames(path, [5, 4])
    with pytest.raises(ValueError, match="format must be"):
        _core.read_video_frames(path, [0], "rgba")
    assert _core.read_video_frames(path, []).shape == (0, 64, 96, 3)


# Bad files: each error names the file and the reason.

def write(path, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def test_truncated_without_moov(videos, tmp_path):
    data = open(videos["h264_bframes.mp4"], "rb").read()  # PyAV writes the moov atom last
    path = write(tmp_path / "cut.mp4", data[: len(data) // 2])
    with pytest.raises(sluice.DecodeError, match=r"cut\.mp4: .*moov"):
        _core.video_index(path)


def test_truncated_mid_stream(tmp_path):
    path = str(tmp_path / "fast.mp4")
    video_data.make_video(path, width=64, height=48, frames=40, gop=10, bframes=2, faststart=True)
    data = open(path, "rb").read()
    cut = write(tmp_path / "fast_cut.mp4", data[: len(data) * 6 // 10])
    # The moov atom, at the start, lists all 40 frames; the file holds half of them.
    with pytest.raises(sluice.DecodeError, match=r"fast_cut\.mp4: truncated: the container lists 40 frames, "
                                                 r"the file holds 2\d"):
        _core.video_index(cut)


@pytest.mark.parametrize("content, kind, reason", [
    (b"", sluice.DecodeError, "empty file"),
    (b"this is not a video\n" * 50, sluice.DecodeError, "not a video container"),
])
def test_not_a_video(tmp_path, content, kind, reason):
    path = write(tmp_path / "bad.mp4", content)
    with pytest.raises(kind, match=rf"bad\.mp4: {reason}"):
        _core.video_index(path)


def test_missing_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothere\.mp4: no such file"):
        _core.video_index(str(tmp_path / "nothere.mp4"))
    with pytest.raises(sluice.DecodeError, match="not a regular file"):
        _core.video_index(str(tmp_path))


def test_audio_only(tmp_path):
    path = str(tmp_path / "sound.mp4")
    with av.open(path, "w") as c:
        s = c.add_stream("aac", rate=16000)
        samples = (np.sin(np.arange(16000) / 10) * 8000).astype(np.int16)[None]
        for i in range(0, 16000, 1024):
            frame = av.AudioFrame.from_ndarray(samples[:, i:i + 1024], format="s16", layout="mono")
            frame.sample_rate = 16000
            for p in s.encode(frame):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    with pytest.raises(sluice.DecodeError, match=r"sound\.mp4: no video stream"):
        _core.video_index(path)


def test_unsupported_pixel_format(tmp_path):
    path = str(tmp_path / "full_chroma.mp4")
    video_data.make_video(path, width=32, height=32, frames=4, gop=4, bframes=0, pix_fmt="yuv444p")
    assert _core.video_index(path)["num_frames"] == 4
    with pytest.raises(sluice.DecodeError, match=r"full_chroma\.mp4: pixel format yuv444p"):
        _core.read_video_frames(path, [0])


# NVDEC (the GPU's video engines): the same frames as the CPU's decode, bit for bit (H.264 and
# HEVC decoding is exact by the standards; the RGB conversion is the same math on both sides).

needs_gpu = pytest.mark.skipif(getattr(_core, "cuda_device_count", lambda: 0)() == 0,
                               reason="needs a GPU and a sluice built with CUDA")


# The engines' smallest pictures: H.264 48x16, HEVC 144x144 (cuvidGetDecoderCaps).
NVDEC_VIDEOS = {
    "h264_bframes.mp4": dict(width=176, height=144, frames=40, gop=10, bframes=2),
    "h264_vfr_start.mkv": dict(width=160, height=96, frames=30, gop=8, bframes=2, vfr=True, start_pts=5000),
    "hevc_bframes.mp4": dict(width=192, height=160, frames=30, gop=12, bframes=3, codec="hevc"),
    "h264_intra_gop1.mp4": dict(width=64, height=48, frames=6, gop=1, bframes=0),
    "vp9.mkv": dict(width=192, height=160, frames=30, gop=10, codec="vp9"),
    "av1.mp4": dict(width=192, height=160, frames=30, gop=10, codec="av1"),
}


@pytest.fixture(scope="module")
def nvdec_videos(tmp_path_factory) -> dict:
    return write_videos(tmp_path_factory.mktemp("nvdec_videos"), NVDEC_VIDEOS)


@needs_gpu
@pytest.mark.parametrize("name", list(NVDEC_VIDEOS))
def test_nvdec_frames_equal_the_cpu_decode(nvdec_videos, name):
    """NVDEC's 4:2:0 planes equal PyAV's decode of the same frames; its RGB, the CPU path's
    (where this FFmpeg decodes the codec)."""
    path = nvdec_videos[name]
    ref = pyav_frames(path)
    n = _core.video_index(path)["num_frames"]
    try:
        _core.read_video_frames(path, [0], device="cuda")
    except sluice.DecodeError as e:  # a codec this GPU's engines lack (the driver's caps say so)
        if "NVDEC does not decode" not in str(e) and "NVDEC has no engine" not in str(e):
            raise
        pytest.skip(str(e))
    for sel in [[0], [n // 2, n // 2 + 1], [1, n // 2, n - 1], list(range(n))]:
        sel = sorted(set(min(f, n - 1) for f in sel))
        gpu = _core.read_video_frames(path, sel, "yuv420p", device="cuda")
        for k, f in enumerate(sel):
            for plane, got, want in zip("YUV", (p[k] for p in gpu), planes(ref[f])):
                np.testing.assert_array_equal(got, want, err_msg=f"{name} frame {f} (of {sel}) plane {plane}")
    skip_unless_the_cpu_decodes(path)
    sel = list(range(n))
    np.testing.assert_array_equal(_core.read_video_frames(path, sel, device="cuda"), _core.read_video_frames(path, sel),
                                  err_msg=f"{name} RGB")


@needs_gpu
def test_nvdec_refuses_what_it_cannot_decode(tmp_path):
    path = str(tmp_path / "full_chroma.mp4")
    video_data.make_video(path, width=64, height=64, frames=4, gop=4, bframes=0, pix_fmt="yuv444p")
    with pytest.raises(sluice.DecodeError, match=r"full_chroma\.mp4: .*(8-bit 4:2:0|does not decode)"):
        _core.read_video_frames(path, [0], device="cuda")
    path = str(tmp_path / "tiny.mp4")
    video_data.make_video(path, width=32, height=16, frames=4, gop=4, bframes=0)
    with pytest.raises(sluice.DecodeError, match=r"tiny\.mp4: this GPU's NVDEC decodes h264 from \d+x\d+ to "
                                                 r"\d+x\d+; this video is 32x16"):
        _core.read_video_frames(path, [0], device="cuda")
