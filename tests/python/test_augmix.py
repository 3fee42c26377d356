"""AugMix on real JPEGs: the draws (op space, severity bins, chain depths, Dirichlet weights)
follow torchvision's AugMix, and the pixels are m0 * image + sum_i w_i * chain_i, truncated, with
each chain composed by test_autoaugment's oracle of torchvision's uint8 ops (warps within its
bounds: 99.9% of values identical), and, where installed, by torchvision's own AugMix op
functions with sluice's draws (bilinear warps within a level)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from test_autoaugment import GEOMETRIC, assert_close, jpeg, op_matrix, oracle_op, run

W, H = 83, 61
F32 = np.float32
PARTIAL = {"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Posterize", "Solarize", "AutoContrast",
           "Equalize"}
ALL = PARTIAL | {"Brightness", "Color", "Contrast", "Sharpness"}


def draw(aug, index, seed=2):
    return sluice._core.draw_augmix([aug._spec()], W, H, seed, 0, index)


def mix(img, d, chain):
    """torchvision's mix in float32: m0 * image, + w_i * chain_i in turn, then .to(uint8)."""
    out = F32(d["m0"]) * img.astype(F32)
    for w, ops in d["chains"]:
        out = out + F32(w) * chain(img, ops).astype(F32)
    return np.clip(out, 0, 255).astype(np.uint8)


def oracle_chain(bilinear, fill):
    def run_chain(img, ops):
        for name, m in ops:
            matrix = op_matrix(name, m, W, H) if name in GEOMETRIC else None
            img = oracle_op(img, name, m, matrix, bilinear, fill)
        return img
    return run_chain


def test_draws_follow_torchvisions_augmix():
    aug, partial = T.AugMix(severity=2), T.AugMix(all_ops=False, chain_depth=2, mixture_width=4, alpha=0.5)
    names, depths, m0 = collections.Counter(), collections.Counter(), []
    for i in range(300):
        d = draw(aug, i)
        m0.append(d["m0"])
        assert len(d["chains"]) == 3
        assert abs(d["m0"] + sum(w for w, _ in d["chains"]) - 1) < 1e-5  # the weights sum to 1
        for _, ops in d["chains"]:
            depths[len(ops)] += 1
            for name, m in ops:
                names[name] += 1
                if name in ("Rotate", "ShearX", "Brightness"):  # bins 0 and 1 of 10: 0 and 1/9 of the range
                    step = {"Rotate": 30 / 9, "ShearX": 0.3 / 9, "Brightness": 0.1}[name]
                    assert abs(m) == 0.0 or abs(abs(m) - step) < 1e-6, (name, m)
        p = draw(partial, i)
        assert {len(ops) for _, ops in p["chains"]} == {2} and len(p["chains"]) == 4
        assert {n for _, ops in p["chains"] for n, _ in ops} <= PARTIAL
    assert set(names) == ALL and min(names.values()) > 0.5 * max(names.values())
    assert set(depths) == {1, 2, 3}
    assert abs(np.mean(m0) - 0.5) < 0.05 and np.std(m0) > 0.2  # Beta(1, 1): uniform


@pytest.mark.parametrize("index", range(8))
def test_pixels_are_the_oracles_mix(index):
    aug = T.AugMix(interpolation=T.InterpolationMode.NEAREST, fill=(10, 20, 30))
    data = jpeg(W, H, seed=index)
    raw = run(data, [])
    d = draw(aug, index, seed=7)
    ours = run(data, [aug], seed=7, index=index)
    want = mix(raw, d, oracle_chain(False, (10, 20, 30)))
    flat = [n for _, ops in d["chains"] for n, _ in ops]
    if any(n in GEOMETRIC for n in flat):
        assert_close(ours, want, None, 0.999, str(d))
    else:
        np.testing.assert_array_equal(ours, want, err_msg=str(d))


def test_loader_and_errors(small_folder):
    tf = [T.Resize((40, 40)), T.AugMix(), T.ToTensor()]
    a = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=4, seed=1, output="numpy", num_threads=1)]
    b = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=5, seed=1, output="numpy", num_threads=2)]
    np.testing.assert_array_equal(np.concatenate(a), np.concatenate(b))
    for kwargs, words in [(dict(severity=11), "AugMix: severity must be between [1, 10]"),
                          (dict(mixture_width=5), "AugMix: mixture_width must be in [1, 4]"),
                          (dict(chain_depth=0), "AugMix: chain_depth must be -1"),
                          (dict(alpha=0.0), "AugMix: alpha must be > 0")]:
        with pytest.raises(ValueError) as e:
            T.AugMix(**kwargs)
        assert words in str(e.value)


@pytest.mark.parametrize("index", range(4))
def test_matches_torchvisions_ops_with_sluices_draws(index):
    v2 = pytest.importorskip("torchvision.transforms.v2")
    import torch

    aug = T.AugMix()
    tv = v2.AugMix()
    data = jpeg(W, H, seed=20 + index)
    raw = run(data, [])
    d = draw(aug, index, seed=9)

    def tv_chain(img, ops):
        x = torch.from_numpy(np.array(img)).permute(2, 0, 1)
        for name, m in ops:
            x = tv._apply_image_or_video_transform(x, name, m, interpolation=v2.InterpolationMode.BILINEAR,
                                                   fill={type(x): None})
        return x.permute(1, 2, 0).numpy()

    assert_close(run(data, [aug], seed=9, index=index), mix(raw, d, tv_chain), 1, 0.99, str(d))
