"""from_torchvision on real torchvision objects (v1 and v2, where torchvision is installed): the
converted list gives exactly the batches of the same list written with sluice's transforms, a
Loader takes a torchvision Compose itself, and what has no sluice equivalent is named with its
index and class. Without torchvision, the pass-through of sluice transforms and functions."""
from __future__ import annotations

import pytest

import sluice
import sluice.transforms as T


def batches(folder, tf, **kw):
    loader = sluice.Loader(folder, tf, batch_size=5, seed=7, shuffle=True, **kw)
    out = [x for x, _ in loader]
    loader.close()
    return out


def same(a, b):
    return len(a) == len(b) and all((x == y).all() for x, y in zip(a, b))


def test_sluice_transforms_and_functions_pass_through():
    def fn(x):
        return x

    tf = [T.Resize(8), fn, [T.CenterCrop(4)]]
    out = T.from_torchvision(tf)
    assert out[0] is tf[0] and isinstance(out[1], T.Lambda) and out[1].lambd is fn and out[2] is tf[2][0]
    with pytest.raises(TypeError, match=r"from_torchvision: item 0 \(int\): 3 is not a transform"):
        T.from_torchvision([3])


def test_the_seed_pipeline_v1_and_v2(small_folder):
    tv = pytest.importorskip("torchvision.transforms")
    v2 = pytest.importorskip("torchvision.transforms.v2")
    ours = [T.Resize(int(64 * 1.2)), T.RandomRotation(20), T.RandomCrop(64), T.RandomHorizontalFlip(),
            T.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), T.ToTensor(),
            T.Normalize([0.5] * 3, [0.5] * 3)]
    want = batches(small_folder, ours)
    for m, to_tensor in ((tv, tv.ToTensor()), (v2, v2.Compose([v2.ToImage(), v2.ToDtype(__import__("torch").float32,
                                                                                                  scale=True)]))):
        theirs = m.Compose([m.Resize(int(64 * 1.2)), m.RandomRotation(20), m.RandomCrop(64), m.RandomHorizontalFlip(),
                            m.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.3), to_tensor,
                            m.Normalize([0.5] * 3, [0.5] * 3)])
        assert same(batches(small_folder, T.from_torchvision(theirs)), want)
        assert same(batches(small_folder, theirs), want)  # the Loader converts it itself


def test_simclr_with_random_apply_and_the_new_colour_ops(small_folder):
    v2 = pytest.importorskip("torchvision.transforms.v2")
    # SimCLR's list, then each new colour op (a list takes at most 8 colour adjustments).
    theirs = v2.Compose([v2.RandomResizedCrop(32, antialias=True), v2.RandomHorizontalFlip(),
                         v2.RandomApply([v2.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), v2.RandomGrayscale(p=0.2),
                         v2.RandomApply([v2.GaussianBlur(3)], p=0.5), v2.RandomPosterize(4), v2.RandomEqualize(),
                         v2.RandomAdjustSharpness(2.0)])
    ours = [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2), T.RandomApply([T.GaussianBlur(3)], p=0.5), T.RandomPosterize(4), T.RandomEqualize(),
            T.RandomAdjustSharpness(2.0)]
    more = v2.Compose([v2.Resize((32, 32)), v2.RandomAutocontrast(), v2.RandomInvert(p=0.1), v2.RandomSolarize(128),
                       v2.Grayscale(num_output_channels=3)])
    more_ours = [T.Resize((32, 32)), T.RandomAutocontrast(), T.RandomInvert(p=0.1), T.RandomSolarize(128),
                 T.Grayscale(num_output_channels=3)]
    assert same(batches(small_folder, more, dtype="uint8"), batches(small_folder, more_ours, dtype="uint8"))
    assert same(batches(small_folder, theirs, dtype="uint8"), batches(small_folder, ours, dtype="uint8"))
    converted = T.from_torchvision(theirs)
    assert [type(t).__name__ for t in converted] == [type(t).__name__ for t in ours]


@pytest.mark.parametrize("make, exc, words", [
    (lambda v2: [v2.Resize(32), v2.RandomIoUCrop()], ValueError,
     r"item 1 \(RandomIoUCrop\): torchvision's RandomIoUCrop has no sluice equivalent yet"),
    (lambda v2: [v2.ToDtype(__import__("torch").float16, scale=False)], ValueError, r"item 0 \(ToDtype\): to torch.float16"),
])
def test_what_cannot_be_converted_is_named(make, exc, words):
    v2 = pytest.importorskip("torchvision.transforms.v2")
    with pytest.raises(exc, match=words):
        T.from_torchvision(make(v2))
