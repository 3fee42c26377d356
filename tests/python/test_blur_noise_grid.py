"""GaussianBlur, GaussianNoise and GridMask: against independent NumPy oracles (always) and
torchvision's gaussian_blur (where installed), their placement rules and argument errors, and a
seed-like list using all of them on the CPU loader.

Bounds and why:
  * GaussianBlur against the oracle (torchvision's float32 1-D kernels from linspace and
    softmax, their float32 outer product, reflect padding, the convolution summed in float64,
    rounded half to even): every value within 1 level, at least 99.9% identical. sluice convolves
    separably in double with its own float32 kernel (a few ulps from NumPy's exp and sum), so a
    sum within ~1e-5 of a half may round the other way.
    Against torchvision: within 1 level, at least 99.5% identical (its oneDNN convolution sums
    in float32 in its own order).
  * GaussianNoise: statistics on a flat grey image of 3 x 96 x 128 = 36864 values: the mean of
    the noise within 0.003 of `mean` (8 standard errors of 0.1 / sqrt(36864)), its standard
    deviation within 3% of `sigma` (the estimate's relative sd is 0.4%), the share within one
    sigma 0.6827 +- 0.015, per-channel correlations below 0.05. Relations between runs that
    share the noise (clip against no clip, before against after Normalize): within 1e-6 (the
    float32 operations of the formulas, one rounding each; the noise is recovered by a float32
    subtraction).
  * GridMask: against a NumPy float32 oracle of DALI's CPU rule (factors cos(a) / tile,
    sin(a) / tile, shift / tile; products and sums rounded one by one): exact for angle 0 with
    integer shifts, and against a closed integer form where the tile is a power of two; with
    a rotation at most 0.5% of pixels differ (cos / sin may differ in the last ulp, which moves
    pixels that lie on a square's edge).
"""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from test_autoaugment import assert_close, identical, linspace_f32  # shared comparison helpers

core = sluice._core
F32 = np.float32
TV_SKIP = "torchvision not installed: the torchvision half is skipped (the GPU machine's script runs it)"


def jpeg(width, height, seed=0):
    return pil_bytes(Image.fromarray(photo(width, height, seed)), "JPEG", quality=90)


def png(img):
    return pil_bytes(Image.fromarray(np.ascontiguousarray(img)), "PNG")


def flat(width, height, value):
    return png(np.full((height, width, 3), value, np.uint8))


def specs_of(transforms):
    return T.compile_specs(transforms, False, [])


def run(data, transforms, dtype="uint8", layout="NHWC", **key):
    t = core.process_sample(data, specs_of(transforms), key.get("seed", 0), key.get("epoch", 0),
                            key.get("index", 0), dtype, layout, False)
    return np.from_dlpack(t)


def program_of(transforms, width, height, **key):
    return core.draw_color(specs_of(transforms), width, height, key.get("seed", 0), key.get("epoch", 0),
                           key.get("index", 0))


# --- GaussianBlur ------------------------------------------------------------------------------

def kernel1d(k, sigma):
    """torchvision's _get_gaussian_kernel1d in float32: softmax(-(linspace / sigma)^2)."""
    lim = (k - 1) / (2.0 * math.sqrt(2.0))
    x = linspace_f32(-lim, lim, k)
    v = -((x / F32(sigma)) ** 2)
    e = np.exp(v - v.max())
    return (e / e.sum(dtype=F32)).astype(F32)


def oracle_blur(img, kx, ky, sigma):
    k2 = kernel1d(ky, sigma)[:, None] * kernel1d(kx, sigma)[None, :]  # float32 outer product
    h, w = img.shape[:2]
    padded = np.pad(img.astype(np.float64), ((ky // 2, ky // 2), (kx // 2, kx // 2), (0, 0)), mode="reflect")
    acc = np.zeros((h, w, 3))
    for i in range(ky):
        for j in range(kx):
            acc += np.float64(k2[i, j]) * padded[i:i + h, j:j + w]
    return np.clip(np.rint(acc), 0, 255).astype(np.uint8)


def blur_steps(program):
    return [s for s in program if s[0] == "gaussian_blur"]


BLURS = [T.GaussianBlur(5), T.GaussianBlur((9, 3), sigma=1.5), T.GaussianBlur((3, 11), sigma=(2.0, 4.0)),
         T.GaussianBlur(15, sigma=(5.0, 8.0)), T.GaussianBlur(3, sigma=0.3)]


@pytest.mark.parametrize("case", range(len(BLURS)))
def test_blur_matches_the_oracle(case):
    t = BLURS[case]
    data = jpeg(97, 71, seed=case)
    raw = run(data, [])
    for index in range(3):
        (step,) = blur_steps(program_of([t], 97, 71, seed=2, index=index))
        _, sigma, (kx, ky) = step
        assert (kx, ky) == t.kernel_size
        assert float(F32(t.sigma[0])) <= sigma <= float(F32(t.sigma[1])) and sigma == float(F32(sigma))
        ours = run(data, [t], seed=2, index=index)
        assert_close(ours, oracle_blur(raw, kx, ky, sigma), 1, 0.999, f"{t!r} sigma={sigma}")
        if sigma > 1.0:
            assert identical(ours, raw) < 0.5  # it blurred


def test_blur_of_size_one_is_the_identity():
    data = jpeg(50, 40)
    np.testing.assert_array_equal(run(data, [T.GaussianBlur(1, sigma=3.0)]), run(data, []))


def test_blur_runs_in_order_with_the_colour_steps_and_after_the_geometry():
    tf = [T.Resize((44, 60)), T.ColorJitter(brightness=(1.4, 1.4)), T.GaussianBlur(5, sigma=1.2),
          T.RandomGrayscale(p=1.0)]
    data = jpeg(120, 90, seed=5)
    program = program_of(tf, 120, 90)
    assert [s[0] for s in program] == ["brightness", "gaussian_blur", "grayscale"]
    resized = run(data, tf[:1])
    x = np.clip(resized.astype(F32) * F32(1.4), 0, 255).astype(np.uint8)
    x = oracle_blur(x, 5, 5, program[1][1])
    r, g, b = (x[..., c].astype(F32) for c in range(3))
    luma = (r * F32(0.2989) + g * F32(0.587)) + b * F32(0.114)
    want = np.repeat(np.clip(luma, 0, 255).astype(np.uint8)[..., None], 3, axis=2)
    assert_close(run(data, tf), want, 1, 0.999, "brightness, blur, grayscale")


def test_blur_sigma_is_drawn_per_sample():
    t = T.GaussianBlur(7, sigma=(0.5, 3.0))
    sigmas = [blur_steps(program_of([t], 64, 64, seed=3, index=i))[0][1] for i in range(400)]
    assert all(0.5 <= s <= 3.0 for s in sigmas)
    assert len(set(sigmas)) > 390
    assert abs(np.mean(sigmas) - 1.75) < 0.15 and np.std(sigmas) == pytest.approx(2.5 / math.sqrt(12), rel=0.15)
    assert sigmas == [blur_steps(program_of([t], 64, 64, seed=3, index=i))[0][1] for i in range(400)]
    assert sigmas != [blur_steps(program_of([t], 64, 64, seed=4, index=i))[0][1] for i in range(400)]
    fixed = T.GaussianBlur(3, sigma=0.7)
    assert {blur_steps(program_of([fixed], 64, 64, index=i))[0][1] for i in range(20)} == {float(F32(0.7))}


def test_blur_matches_torchvision():
    F = pytest.importorskip("torchvision.transforms.v2.functional", reason=TV_SKIP)
    import torch

    for case, t in enumerate(BLURS):
        data = jpeg(97, 71, seed=case)
        raw = run(data, [])
        for index in range(2):
            ((_, sigma, (kx, ky)),) = blur_steps(program_of([t], 97, 71, seed=2, index=index))
            x = torch.from_numpy(np.array(raw)).permute(2, 0, 1)
            theirs = F.gaussian_blur(x, kernel_size=[kx, ky], sigma=[sigma, sigma]).permute(1, 2, 0).numpy()
            assert_close(run(data, [t], seed=2, index=index), theirs, 1, 0.995, f"{t!r} sigma={sigma}")


# --- GaussianNoise -----------------------------------------------------------------------------

GREY = 128
W, H = 128, 96


def noisy(transforms, **key):
    return run(flat(W, H, GREY), [T.Resize((H, W))] + transforms, "float32", "NCHW", **key)


def test_noise_has_the_requested_mean_and_sigma():
    out = noisy([T.ToTensor(), T.GaussianNoise(mean=0.05, sigma=0.1, clip=False)], seed=3, index=2)
    assert out.shape == (3, H, W) and out.dtype == np.float32
    n = (out - F32(GREY / 255)).astype(np.float64)
    assert abs(n.mean() - 0.05) < 0.003
    assert n.std() == pytest.approx(0.1, rel=0.03)
    z = (n - 0.05) / 0.1
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.015
    assert abs(np.mean(np.abs(z) < 2) - 0.9545) < 0.01
    for c in range(3):  # each channel is normal, and the channels are independent
        assert abs(n[c].mean() - 0.05) < 0.005 and n[c].std() == pytest.approx(0.1, rel=0.05)
    for a, b in ((0, 1), (1, 2), (0, 2)):
        assert abs(np.corrcoef(n[a].ravel(), n[b].ravel())[0, 1]) < 0.05
    # Neighbouring pixels are independent too.
    assert abs(np.corrcoef(n[0, :, 1:].ravel(), n[0, :, :-1].ravel())[0, 1]) < 0.05


def test_noise_is_deterministic_per_sample_and_varies_across_samples():
    tf = [T.ToTensor(), T.GaussianNoise(sigma=0.2)]
    a = noisy(tf, seed=1, epoch=0, index=4)
    np.testing.assert_array_equal(a, noisy(tf, seed=1, epoch=0, index=4))
    for other in (dict(seed=1, epoch=0, index=5), dict(seed=2, epoch=0, index=4), dict(seed=1, epoch=1, index=4)):
        b = noisy(tf, **other)
        assert identical(a, b) < 0.05, other


def test_clip_clamps_to_the_unit_range():
    raw = noisy([T.ToTensor(), T.GaussianNoise(sigma=0.5, clip=False)], index=1)
    clipped = noisy([T.ToTensor(), T.GaussianNoise(sigma=0.5, clip=True)], index=1)
    assert raw.min() < -0.2 and raw.max() > 1.2
    assert clipped.min() == 0.0 and clipped.max() == 1.0
    np.testing.assert_array_equal(clipped, np.clip(raw, 0, 1))  # the same normals


def test_noise_before_normalize_is_normalized():
    mean, std = F32([0.485, 0.456, 0.406]), F32([0.229, 0.224, 0.225])
    norm = T.Normalize(mean.tolist(), std.tolist())
    plain = noisy([T.ToTensor(), T.GaussianNoise(sigma=0.3)], seed=6, index=3)
    normalized = noisy([T.ToTensor(), T.GaussianNoise(sigma=0.3), norm], seed=6, index=3)
    assert plain.min() == 0.0 and plain.max() == 1.0  # clipped before normalizing
    want = (plain - mean[:, None, None]) / std[:, None, None]
    np.testing.assert_allclose(normalized, want, rtol=0, atol=1e-6)


def test_noise_after_normalize_is_added_to_the_normalized_values_and_clipped_to_the_unit_range():
    mean, std = F32([0.5, 0.4, 0.6]), F32([0.1, 0.2, 0.25])
    norm = T.Normalize(mean.tolist(), std.tolist())
    x = F32(GREY) / F32(255)
    # The noise of position 2 in the compiled list, recovered from an unclipped run in which a
    # no-op flip holds position 1 (ToTensor compiles to nothing): x + noise.
    first = noisy([T.RandomHorizontalFlip(p=0.0), T.ToTensor(), T.GaussianNoise(sigma=0.4, clip=False)],
                  seed=8, index=1)
    n = first - x
    base = noisy([T.ToTensor(), norm], seed=8, index=1)
    np.testing.assert_allclose(base, np.broadcast_to(((x - mean) / std)[:, None, None], base.shape), atol=1e-6)
    ours = noisy([T.ToTensor(), norm, T.GaussianNoise(sigma=0.4)], seed=8, index=1)
    assert ours.min() == 0.0 and ours.max() == 1.0  # clipped to [0, 1] even after Normalize, as torchvision
    np.testing.assert_allclose(ours, np.clip(base + n, 0, 1), rtol=0, atol=1e-6)
    unclipped = noisy([T.ToTensor(), norm, T.GaussianNoise(sigma=0.4, clip=False)], seed=8, index=1)
    np.testing.assert_allclose(unclipped, base + n, rtol=0, atol=1e-6)


def test_noise_in_float16_is_the_float32_value_rounded():
    tf = [T.ToTensor(), T.GaussianNoise(sigma=0.2), T.Normalize([0.5] * 3, [0.25] * 3)]
    a = noisy(tf, index=7)
    b = run(flat(W, H, GREY), [T.Resize((H, W))] + tf, "float16", "NCHW", index=7)
    assert b.dtype == np.float16
    np.testing.assert_array_equal(b, a.astype(np.float16))


def test_noise_needs_a_float_output(small_folder):
    # The Python Loader refuses ToTensor with uint8 first ...
    with pytest.raises(ValueError, match="uint8.*ToTensor"):
        sluice.Loader(small_folder, [T.Resize((32, 32)), T.ToTensor(), T.GaussianNoise()], dtype="uint8")
    # ... and the C++ loader names GaussianNoise for specs without ToTensor's place marker.
    specs = [T.Resize((32, 32))._spec(), T.GaussianNoise()._spec()]
    with pytest.raises(ValueError, match="GaussianNoise needs a float output"):
        options = core.LoaderOptions()
        options.batch_size, options.dtype = 2, "uint8"
        core.Loader.create(small_folder, specs, options)


def test_process_sample_refuses_noise_into_uint8():
    # Run in a child process: writing float noise into a uint8 buffer could corrupt the heap.
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {sluice.__path__[0] + '/..'!r})
        import io
        import numpy as np
        from PIL import Image
        import sluice, sluice.transforms as T
        buf = io.BytesIO()
        Image.fromarray(np.full((40, 50, 3), 128, np.uint8)).save(buf, format="PNG")
        specs = T.compile_specs([T.ToTensor(), T.GaussianNoise()], False, [])
        try:
            sluice._core.process_sample(buf.getvalue(), specs, 0, 0, 0, "uint8", "NHWC", False)
            print("NO ERROR")
        except Exception as e:
            print("RAISED", type(e).__name__, e)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "RAISED" in r.stdout, f"exit {r.returncode}: {out.strip()[-300:]}"
    assert "GaussianNoise" in r.stdout and "float" in r.stdout, out


# --- GridMask ----------------------------------------------------------------------------------

def oracle_grid(width, height, tile, ratio, angle=0.0, shift_x=0.0, shift_y=0.0):
    """DALI's GridMaskCpu in float32: True where the pixel is black."""
    a = F32(angle)
    ft = F32(tile)
    ca, sa = F32(math.cos(float(a))) / ft, F32(math.sin(float(a))) / ft
    sx, sy = F32(shift_x) / ft, F32(shift_y) / ft
    y = np.arange(height, dtype=F32)[:, None]
    x = np.arange(width, dtype=F32)[None, :]
    fxy = -sx + y * -sa
    fyy = -sy + y * ca
    fx = fxy + x * ca
    fy = fyy + x * sa
    r = F32(ratio)
    keep = ((fx - np.floor(fx)) >= r) | ((fy - np.floor(fy)) >= r)
    return ~keep


def closed_grid(width, height, tile, ratio, shift_x=0, shift_y=0):
    """Angle 0, integer shifts: black iff (x - sx) mod tile and (y - sy) mod tile < ratio * tile."""
    x = (np.arange(width)[None, :] - shift_x) % tile
    y = (np.arange(height)[:, None] - shift_y) % tile
    return (x < ratio * tile) & (y < ratio * tile)


def black_of(out):
    return (out == 0).all(axis=-1)


GRID_IMG = photo(97, 75, seed=21)


@pytest.mark.parametrize("tile,ratio,sx,sy", [(100, 0.5, 0, 0), (16, 0.5, 3, -5), (32, 0.25, -40, 7),
                                              (24, 0.5, 0, 0), (37, 0.3, 5, 11), (10, 0.75, 2, 0),
                                              (13, 0.0, 0, 0), (13, 1.0, 0, 0)])
def test_axis_aligned_grid_is_exact(tile, ratio, sx, sy):
    data = png(GRID_IMG)
    ours = run(data, [T.GridMask(tile=tile, ratio=ratio, shift_x=sx, shift_y=sy)])
    black = oracle_grid(97, 75, tile, ratio, 0.0, sx, sy)
    np.testing.assert_array_equal(ours, np.where(black[..., None], 0, GRID_IMG).astype(np.uint8))
    if tile & (tile - 1) == 0 or tile == 100 or ratio in (0.0, 1.0):
        np.testing.assert_array_equal(black, closed_grid(97, 75, tile, ratio, sx, sy))
    if 0 < ratio < 1:
        assert 0 < black.mean() < 1


def test_the_default_grid_blacks_the_top_left_half_squares():
    # DALI's docs example: tile 100, ratio 0.5, no rotation: x, y in [0, 50) (+ 100 k) are black.
    data = flat(230, 160, 200)
    black = black_of(run(data, [T.GridMask()]))
    want = np.zeros((160, 230), bool)
    for y0 in (0, 100):
        for x0 in (0, 100, 200):
            want[y0:y0 + 50, x0:x0 + 50] = True
    np.testing.assert_array_equal(black, want)


@pytest.mark.parametrize("tile,ratio,angle,sx,sy", [(20, 0.5, 0.3, 0.0, 0.0), (31, 0.4, 1.0, 2.5, -7.25),
                                                    (17, 0.6, -0.7, 10.0, 3.3), (40, 0.5, math.pi / 4, 0, 0)])
def test_rotated_grid_matches_the_oracle(tile, ratio, angle, sx, sy):
    data = flat(120, 90, 200)
    black = black_of(run(data, [T.GridMask(tile=tile, ratio=ratio, angle=angle, shift_x=sx, shift_y=sy)]))
    want = oracle_grid(120, 90, tile, ratio, angle, sx, sy)
    assert np.mean(black != want) <= 0.005, f"{np.sum(black != want)} pixels differ"
    assert abs(black.mean() - ratio ** 2) < 0.1


def test_grid_before_and_after_normalize():
    mean, std = F32([0.5, 0.4, 0.3]), F32([0.2, 0.25, 0.5])
    norm = T.Normalize(mean.tolist(), std.tolist())
    grid = T.GridMask(tile=21, ratio=0.45, angle=0.2, shift_x=3)
    data = png(GRID_IMG)
    plain = run(data, [T.ToTensor(), norm], "float32", "NCHW")
    black = black_of(run(flat(97, 75, 200), [grid]))  # the grid does not depend on the pixels
    assert 0.1 < black.mean() < 0.35
    np.testing.assert_array_equal(run(data, [grid]), np.where(black[..., None], 0, GRID_IMG).astype(np.uint8))
    before = run(data, [grid, T.ToTensor(), norm], "float32", "NCHW")
    after = run(data, [T.ToTensor(), norm, grid], "float32", "NCHW")
    for out, value in ((before, (F32(0) - mean) / std), (after, np.zeros(3, F32))):
        want = np.where(black[None], value[:, None, None], plain)
        np.testing.assert_array_equal(out, want)


def test_grid_tile_is_drawn_per_sample_from_the_range():
    data = flat(64, 48, 200)
    grid = T.GridMask(tile=(10, 20), ratio=0.5)
    masks = {t: oracle_grid(64, 48, t, 0.5) for t in range(10, 21)}
    assert len({m.tobytes() for m in masks.values()}) == 11  # each tile's grid is distinct
    tiles = []
    for index in range(150):
        black = black_of(run(data, [grid], seed=5, index=index))
        hits = [t for t, m in masks.items() if np.array_equal(m, black)]
        assert len(hits) == 1, f"sample {index}: no tile in [10, 20] gives this grid"
        tiles.append(hits[0])
    assert set(tiles) == set(range(10, 21))  # both ends included (each missed with p < 1e-5)


def test_random_angles_and_shifts_vary_per_sample():
    data = flat(80, 60, 200)
    grid = T.GridMask(tile=24, ratio=0.5, angle=(0.0, math.pi / 2), shift_x=(0, 24), shift_y=(0, 24))
    masks = [black_of(run(data, [grid], index=i)) for i in range(20)]
    assert len({m.tobytes() for m in masks}) == 20
    assert all(0.1 < m.mean() < 0.45 for m in masks)
    np.testing.assert_array_equal(masks[3], black_of(run(data, [grid], index=3)))


# --- arguments and placement -------------------------------------------------------------------

@pytest.mark.parametrize("make, exc, words", [
    (lambda: T.GaussianBlur(4), ValueError, "GaussianBlur: kernel_size values should be odd and positive"),
    (lambda: T.GaussianBlur((3, 0)), ValueError, "GaussianBlur: kernel_size values should be odd and positive"),
    (lambda: T.GaussianBlur(65), ValueError, "GaussianBlur: kernel_size values of at most 63"),
    (lambda: T.GaussianBlur(2.5), TypeError, "GaussianBlur: kernel_size must be an int"),
    (lambda: T.GaussianBlur(3, sigma=-1), ValueError, "GaussianBlur: if sigma is a single number, it must be positive"),
    (lambda: T.GaussianBlur(3, sigma=(2, 1)), ValueError,
     "GaussianBlur: sigma values should be positive and of the form (min, max)"),
    (lambda: T.GaussianBlur(3, sigma=(0, 1)), ValueError, "GaussianBlur: sigma values should be positive"),
    (lambda: T.GaussianBlur(3, sigma="wide"), TypeError, "GaussianBlur: sigma must be a number"),
    (lambda: T.GridMask(ratio=1.5), ValueError, "GridMask: ratio must be a number in [0, 1]"),
    (lambda: T.GridMask(tile=0), ValueError, "GridMask: tile must be positive"),
    (lambda: T.GridMask(tile=(20, 10)), ValueError, "GridMask: tile must be positive, with min <= max"),
    (lambda: T.GridMask(tile=2.5), TypeError, "GridMask: tile must be an int"),
    (lambda: T.GridMask(angle=(1.0, 0.0)), ValueError, "GridMask: angle must be finite with min <= max"),
    (lambda: T.GridMask(shift_x=float("nan")), ValueError, "GridMask: shift_x must be finite"),
    (lambda: T.GaussianNoise(sigma=-0.1), ValueError, "GaussianNoise: sigma shouldn't be negative"),
    (lambda: T.GaussianNoise(mean=float("inf")), ValueError, "GaussianNoise: mean must be a finite number"),
])
def test_bad_arguments_name_the_transform_and_the_argument(make, exc, words):
    with pytest.raises(exc) as e:
        make()
    assert words in str(e.value)


def test_placement_rules(small_folder):
    norm = T.Normalize([0.5] * 3, [0.5] * 3)
    refused = [
        ([T.Resize((32, 32)), T.ToTensor(), T.Cutout(1, 8), T.GaussianNoise()], NotImplementedError,
         "GaussianNoise after Cutout is not supported"),
        ([T.Resize((32, 32)), T.GaussianNoise(), T.ToTensor()], ValueError,
         "GaussianNoise before ToTensor is not supported"),
        ([T.Resize((32, 32)), T.ToTensor(), T.GaussianNoise(), T.ColorJitter(0.3)], NotImplementedError,
         "ColorJitter after GaussianNoise is not supported"),
        ([T.Resize((32, 32)), T.ToTensor(), T.GaussianNoise(), T.GaussianNoise()], NotImplementedError,
         "GaussianNoise appears twice"),
        ([T.Resize((32, 32)), T.GridMask(), T.GridMask()], NotImplementedError, "GridMask appears twice"),
        ([T.Resize((32, 32)), T.GridMask(), T.RandomCrop(16)], NotImplementedError,
         "RandomCrop after GridMask is not supported"),
        ([T.Resize((32, 32)), norm, T.GaussianBlur(3)], NotImplementedError,
         "GaussianBlur after Normalize is not supported"),
        ([T.Resize((32, 32)), T.GaussianBlur(3), T.RandomCrop(16)], NotImplementedError,
         "RandomCrop after GaussianBlur is not supported"),
        ([T.Resize((32, 32)), T.RandAugment(), T.RandomHorizontalFlip()], NotImplementedError,
         "RandomHorizontalFlip after RandAugment is not supported"),
    ]
    for tf, exc, words in refused:
        with pytest.raises(exc) as e:
            sluice.Loader(small_folder, tf)
        assert words in str(e.value), [type(t).__name__ for t in tf]
    # Allowed: erasing and Normalize after the noise; a flip after the blur.
    sluice.Loader(small_folder, [T.Resize((32, 32)), T.ToTensor(), T.GaussianNoise(), norm, T.GridMask(), T.Cutout()])
    sluice.Loader(small_folder, [T.Resize((32, 32)), T.GaussianBlur(3), T.RandomHorizontalFlip()])


# --- all of them on the CPU loader ---------------------------------------------------------------

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SEED_LIKE = [T.RandomResizedCrop(64), T.RandomHorizontalFlip(), T.RandAugment(), T.ColorJitter(0.4, 0.4, 0.4),
             T.GaussianBlur(5), T.ToTensor(), T.GaussianNoise(), T.Normalize(MEAN, STD),
             T.GridMask(tile=(16, 32), ratio=0.4), T.Cutout(1, 8)]


def epoch(folder, seed):
    loader = sluice.Loader(folder, SEED_LIKE, batch_size=4, shuffle=True, seed=seed, output="numpy",
                           dct_scaling=False)
    xs, ys, idx = [], [], []
    for x, y in loader:
        xs.append(np.array(x))
        ys.append(np.array(y))
        idx.append(np.array(loader.last_indices))
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(idx), loader


def test_seed_like_list_runs_on_the_cpu_loader_and_repeats(small_folder):
    x, y, idx, loader = epoch(small_folder, 11)
    assert x.shape == (15, 3, 64, 64) and x.dtype == np.float32 and np.isfinite(x).all()
    x2, y2, idx2, _ = epoch(small_folder, 11)
    np.testing.assert_array_equal(idx, idx2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(x, x2)
    x3, _, idx3, _ = epoch(small_folder, 12)
    order = np.argsort(idx)
    assert identical(x[order], x3[np.argsort(idx3)]) < 0.1
    # The grid (0.4^2 = 16% of each image) and the hole (at most 64 pixels) are 0 after
    # Normalize; the noise makes other exact zeros unlikely.
    zero = (x == 0).all(axis=1).mean(axis=(1, 2))
    assert ((zero > 0.06) & (zero < 0.35)).all(), zero
    # The noise makes neighbouring values differ (no flat runs outside the erased parts).
    assert np.mean(x[:, :, :, 1:] == x[:, :, :, :-1]) < 0.4
    # Each image is what process_sample makes of its file.
    for k in (0, 7):
        path = loader.samples[int(idx[k])][0]
        with open(path, "rb") as f:
            data = f.read()
        one = run(data, SEED_LIKE, "float32", "NCHW", seed=11, index=int(idx[k]))
        np.testing.assert_array_equal(x[k], one, err_msg=path)
