"""Synthetic videos (sluice.video_data, ``sluice make-videos``): frame counts and sizes, key frames
where asked, B-frame reordering, variable frame rate, start times, odd sizes, class folders, CLI."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import PYTHON_DIR

av = pytest.importorskip("av")

from sluice import video_data  # noqa: E402

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (PYTHON_DIR, os.environ.get("PYTHONPATH")) if p))
SMALL = dict(width=64, height=48, frames=30, gop=10)


def decode(path: str) -> list:
    with av.open(path) as c:
        return list(c.decode(video=0))


def demux_pts(path: str) -> list[int]:
    with av.open(path) as c:
        return [p.pts for p in c.demux(video=0) if p.size]


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict:
    return video_data.make_video(str(tmp_path_factory.mktemp("v") / "small.mp4"), **SMALL)


def test_frames_sizes_and_key_frames(small):
    frames = decode(small["path"])
    assert len(frames) == 30 and small["frames"] == 30
    assert {(f.width, f.height) for f in frames} == {(64, 48)}
    assert [i for i, f in enumerate(frames) if f.key_frame] == small["keyframes"] == [0, 10, 20]
    assert [f.pts for f in frames] == small["pts"]
    assert small["time_base"] == frames[0].time_base and small["bytes"] == os.path.getsize(small["path"])


def test_frames_move_are_textured_and_carry_their_number(small):
    pixels = [f.to_ndarray(format="rgb24") for f in decode(small["path"])]
    scene = [p[26:].astype(np.int16) for p in pixels]  # below the frame-number stamp
    diffs = [np.abs(b - a).mean() for a, b in zip(scene, scene[1:])]
    assert min(diffs) > 1.0, diffs
    assert min(s.std() for s in scene) > 15
    assert [video_data.read_frame_number(p, 30) for p in pixels] == list(range(30))


def test_b_frames_reorder_packets(tmp_path):
    with_b = video_data.make_video(str(tmp_path / "b.mp4"), bframes=2, **SMALL)
    without = video_data.make_video(str(tmp_path / "nob.mp4"), bframes=0, **SMALL)
    pts = demux_pts(with_b["path"])
    assert pts != sorted(pts)  # decode order differs from presentation order
    assert demux_pts(without["path"]) == sorted(demux_pts(without["path"]))
    assert [i for i, f in enumerate(decode(without["path"])) if f.key_frame] == [0, 10, 20]


def test_variable_frame_rate(tmp_path):
    info = video_data.make_video(str(tmp_path / "vfr.mkv"), vfr=True, fps=25, **SMALL)
    pts = [f.pts for f in decode(info["path"])]
    assert pts == info["pts"] and info["time_base"] == frames_time_base(info["path"])
    deltas = np.diff(pts)
    period = 1000 / 25  # Matroska: milliseconds
    assert len(set(deltas.tolist())) > 5
    assert deltas.min() < 0.8 * period and deltas.max() > 1.3 * period and deltas.min() >= 1


def frames_time_base(path: str):
    with av.open(path) as c:
        return c.streams.video[0].time_base


@pytest.mark.parametrize("name, start", [("s.mp4", 12345), ("s.mkv", 500)])
def test_start_pts(tmp_path, name, start):
    info = video_data.make_video(str(tmp_path / name), start_pts=start, **SMALL)
    frames = decode(info["path"])
    assert frames[0].pts == start == info["pts"][0] and len(frames) == 30
    assert [f.pts for f in frames] == info["pts"]


def test_hevc(tmp_path):
    info = video_data.make_video(str(tmp_path / "h.mp4"), codec="hevc", **SMALL)
    frames = decode(info["path"])
    assert len(frames) == 30 and (frames[0].width, frames[0].height) == (64, 48)
    assert [i for i, f in enumerate(frames) if f.key_frame] == [0, 10, 20]
    assert demux_pts(info["path"]) != sorted(demux_pts(info["path"]))


def test_odd_sizes(tmp_path):
    for codec, pix_fmt in (("mpeg4", "yuv420p"), ("h264", "yuv444p")):
        info = video_data.make_video(str(tmp_path / f"{codec}.mp4"), codec=codec, pix_fmt=pix_fmt,
                                     width=63, height=47, frames=12, gop=6)
        frames = decode(info["path"])
        assert len(frames) == 12 and (frames[0].width, frames[0].height) == (63, 47)
        assert [i for i, f in enumerate(frames) if f.key_frame] == [0, 6]
    for codec in ("h264", "hevc"):  # 4:2:0 needs even sizes: a clear error, not the encoder's
        with pytest.raises(ValueError, match="even width and height.*yuv444p"):
            video_data.make_video(str(tmp_path / "odd.mp4"), codec=codec, width=63, height=48)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="codec must be one of"):
        video_data.make_video(str(tmp_path / "x.mp4"), codec="theora")
    with pytest.raises(ValueError, match=r"\.mp4 or \.mkv"):
        video_data.make_video(str(tmp_path / "x.avi"))
    with pytest.raises(ValueError, match="mpeg4 encodes yuv420p only"):
        video_data.make_video(str(tmp_path / "x.mp4"), codec="mpeg4", pix_fmt="yuv444p")
    with pytest.raises(ValueError, match="speed must be one of ultrafast"):
        video_data.make_video(str(tmp_path / "x.mp4"), speed="warp")


@pytest.mark.parametrize("codec, name", [("vp9", "v.mkv"), ("av1", "a.mp4")])
def test_vp9_and_av1(tmp_path, codec, name):
    """Key frames every `gop`, every frame there, in order, with its number."""
    info = video_data.make_video(str(tmp_path / name), width=64, height=64, frames=25, gop=10, codec=codec)
    frames = decode(info["path"])
    assert frames[0].format.name == "yuv420p" and (frames[0].width, frames[0].height) == (64, 64)
    assert [video_data.read_frame_number(f.to_ndarray(format="rgb24"), 25) for f in frames] == list(range(25))
    assert [i for i, f in enumerate(frames) if f.key_frame] == [0, 10, 20] == info["keyframes"]
    with av.open(info["path"]) as c:
        assert c.streams.video[0].codec_context.name in ({"vp9"} if codec == "vp9" else {"av1", "libdav1d", "libaom-av1"})


def test_encoder_speed(tmp_path):
    """A faster preset writes the same frames (its own compression) in a larger file, with the
    same key frames and B-frames."""
    kw = dict(width=128, height=96, frames=24, gop=8, bframes=2, seed=1)
    fast = video_data.make_video(str(tmp_path / "fast.mp4"), speed="ultrafast", **kw)
    slow = video_data.make_video(str(tmp_path / "slow.mp4"), speed="medium", **kw)
    assert fast["bytes"] > slow["bytes"]
    for info in (fast, slow):
        frames = list(decode(info["path"]))
        assert [video_data.read_frame_number(f.to_ndarray(format="rgb24"), 24) for f in frames] == list(range(24))
        assert [i for i, f in enumerate(frames) if f.key_frame] == [0, 8, 16]


def test_deterministic_from_the_seed(tmp_path):
    def pixels(name, seed):
        info = video_data.make_video(str(tmp_path / name), width=64, height=48, frames=4, seed=seed)
        return np.stack([f.to_ndarray(format="rgb24") for f in decode(info["path"])])

    a, b, c = pixels("a.mp4", 3), pixels("b.mp4", 3), pixels("c.mp4", 4)
    assert np.array_equal(a, b) and np.abs(a.astype(int) - c).mean() > 10


def test_make_videos_writes_class_folders(tmp_path):
    paths = video_data.make_videos(str(tmp_path), count=5, classes=2, width=64, height=48, frames=6,
                                   gop=3, workers=1, progress=False)
    assert paths == sorted(paths) and len(paths) == 5
    assert sorted(os.listdir(tmp_path)) == ["class_000", "class_001"]
    assert len(os.listdir(tmp_path / "class_000")) == 3 and len(os.listdir(tmp_path / "class_001")) == 2
    assert all(len(decode(p)) == 6 for p in paths)
    assert paths[0].endswith(os.path.join("class_000", "video_00000.mp4"))


def run_cli(*args, env=ENV):
    return subprocess.run([sys.executable, "-m", "sluice", "make-videos", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_cli(tmp_path):
    r = run_cli(str(tmp_path / "out"), "--count", "2", "--frames", "8", "--size", "64x48", "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("wrote 2 videos (16 frames of 64x48 h264") and "MiB in" in r.stdout
    files = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "out") for f in fs]
    assert len(files) == 2 and all(len(decode(f)) == 8 for f in files)


def test_cli_errors(tmp_path):
    r = run_cli(str(tmp_path), "--size", "64by48")
    assert r.returncode != 0 and "64by48" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(str(tmp_path), "--size", "63x47", "--count", "1")
    assert r.returncode == 2 and "even width and height" in r.stderr and "Traceback" not in r.stderr
    fake = tmp_path / "no_av"  # PyAV missing: an import that fails
    (fake / "av").mkdir(parents=True)
    (fake / "av" / "__init__.py").write_text("raise ImportError('No module named av')\n")
    r = run_cli(str(tmp_path), env=dict(ENV, PYTHONPATH=f"{fake}{os.pathsep}{PYTHON_DIR}"))
    assert r.returncode == 2 and "needs PyAV (pip install av)" in r.stderr and "Traceback" not in r.stderr


def test_importing_sluice_does_not_import_pyav():
    code = "import sys, sluice, sluice.cli, sluice.video_data; sluice.cli.build_parser(); print('av' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
