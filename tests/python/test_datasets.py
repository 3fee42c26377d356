"""The synthetic dataset generator: deterministic, photo-like statistics, and the presets'
sizes match the benchmarks' two datasets (docs/benchmarks.md)."""
from __future__ import annotations

import numpy as np
import pytest

from sluice import datasets


def test_deterministic_and_distinct():
    spec = datasets.DatasetSpec(width=(100, 140))
    assert datasets.make_image(spec, 3) == datasets.make_image(spec, 3)
    assert datasets.make_image(spec, 3) != datasets.make_image(spec, 4)


def test_images_have_photo_statistics():
    img = datasets.synthesize(np.random.default_rng(0), 320, 240).astype(np.float64)
    assert img.shape == (240, 320, 3)
    gray = img.mean(axis=2)
    assert img.std() > 25                   # not flat colour
    grad = np.abs(np.diff(gray, axis=1))
    assert np.percentile(grad, 99.5) > 20   # edges exist
    assert np.median(grad) < 10             # but most of the image is smooth-ish
    # 1/f-like spectrum: more energy at low than at high spatial frequencies.
    spec = np.abs(np.fft.rfft2(gray - gray.mean()))
    assert spec[1:8, 1:8].mean() > 10 * spec[60:, 60:].mean()


@pytest.mark.parametrize("preset,kib,mpix,sub", [("imagenet", (120, 175), (0.17, 0.23), "444"),
                                                  ("small", (22, 42), (0.13, 0.18), "420"),
                                                  ("voc", (45, 80), (0.15, 0.19), "420")])
def test_presets_match_reference_datasets(tmp_path, preset, kib, mpix, sub):
    s = datasets.make_dataset(str(tmp_path), datasets.PRESETS[preset], num_images=24, progress=False)
    assert kib[0] < s["mean_kib"] < kib[1], s
    assert mpix[0] < s["mean_mpix"] < mpix[1], s
    assert s["subsampling"] == sub


def test_bad_specs(tmp_path):
    with pytest.raises(ValueError, match="subsampling"):
        datasets.make_dataset(str(tmp_path), subsampling="411", progress=False)
    with pytest.raises(ValueError, match="width"):
        datasets.make_dataset(str(tmp_path), width=(300, 200), progress=False)
    with pytest.raises(ValueError, match="canvases"):
        datasets.make_dataset(str(tmp_path), canvases=-1, progress=False)
    with pytest.raises(ValueError, match="preset"):
        datasets.sample_dataset("huge")


@pytest.mark.parametrize("preset,kib", [("imagenet", (120, 175)), ("small", (22, 42))])
def test_images_cut_from_canvases_match_synthesized_ones(tmp_path, preset, kib):
    """The fast mode (the sample data of `make run`): the same files, sizes and JPEG settings as
    synthesized images, about the same compressed size, deterministic, and decodable."""
    from PIL import Image
    spec = datasets.PRESETS[preset]
    a = datasets.make_dataset(str(tmp_path / "a"), spec, num_images=24, canvases=3, progress=False)
    b = datasets.make_dataset(str(tmp_path / "b"), spec, num_images=24, canvases=3, progress=False)
    full = datasets.make_dataset(str(tmp_path / "full"), spec, num_images=24, progress=False)
    assert kib[0] < a["mean_kib"] < kib[1], a
    assert a["mean_mpix"] == full["mean_mpix"] and a["bytes"] == b["bytes"]
    for i in (0, 5, 23):
        name = f"class_{i % spec.num_classes:03d}/img_{i:06d}.jpg"
        fast, slow = Image.open(tmp_path / "a" / name), Image.open(tmp_path / "full" / name)
        assert fast.size == slow.size and fast.mode == "RGB"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert np.asarray(fast).std() > 20  # a scene, not a flat tint
