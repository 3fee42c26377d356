"""Per-sample RandomChoice and RandomOrder on real JPEGs: one option (with the weights' odds) or
every item (in each drawn order) per sample, whose pixels are those of the chosen option or of
the items applied in the drawn order on their own; nesting with RandomApply; the placement rules;
and torchvision's containers through from_torchvision."""
from __future__ import annotations

import collections

import numpy as np
import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes
from sluice.transforms.compile import compile_specs

SIZE = [T.Resize((36, 44))]
BRIGHT = T.ColorJitter(brightness=(1.6, 1.6))
GRAY = T.RandomGrayscale(p=1.0)
SOLAR = T.RandomSolarize(120, p=1.0)
LOW = T.ColorJitter(contrast=(0.4, 0.4))


def run_sample(data, tf, seed=0, index=0):
    t = sluice._core.process_sample(data, compile_specs(tf, False, []), seed, 0, index, "uint8", "NHWC", False)
    return np.from_dlpack(t)


def jpeg(seed):
    return pil_bytes(Image.fromarray(photo(70, 50, seed=seed)), "JPEG", quality=90)


def names(tf, index, seed=1):
    """The colour steps drawn for sample `index`, in order."""
    return [n for n, _ in sluice._core.draw_color(compile_specs(tf, False, []), 70, 50, seed, 0, index)]


def test_choice_takes_one_option_with_the_weights_odds():
    tf = SIZE + [T.RandomChoice([BRIGHT, [GRAY, SOLAR]], p=[3, 1])]
    picks = collections.Counter(tuple(names(tf, i)) for i in range(400))
    assert set(picks) == {("brightness",), ("grayscale", "solarize")}, picks
    assert 260 <= picks[("brightness",)] <= 340, picks  # 3/4 of 400
    equal = collections.Counter(tuple(names(SIZE + [T.RandomChoice([BRIGHT, GRAY])], i)) for i in range(400))
    assert 160 <= equal[("brightness",)] <= 240, equal


@pytest.mark.parametrize("index", range(6))
def test_choice_pixels_are_the_chosen_option_alone(index):
    data = jpeg(index)
    tf = SIZE + [T.RandomChoice([BRIGHT, [GRAY, SOLAR], SOLAR])]
    got = run_sample(data, tf, index=index, seed=2)
    drawn = names(tf, index, seed=2)
    option = {("brightness",): [BRIGHT], ("grayscale", "solarize"): [GRAY, SOLAR], ("solarize",): [SOLAR]}[tuple(drawn)]
    np.testing.assert_array_equal(got, run_sample(data, SIZE + option))


def test_order_draws_every_order_and_applies_it():
    tf = SIZE + [T.RandomOrder([SOLAR, LOW, GRAY])]
    orders = collections.Counter(tuple(names(tf, i)) for i in range(300))
    assert len(orders) == 6 and min(orders.values()) >= 25, orders  # 3! orders, 50 each expected
    by_name = {"solarize": SOLAR, "contrast": LOW, "grayscale": GRAY}
    for index in range(6):
        data = jpeg(10 + index)
        order = names(tf, index)
        want = run_sample(data, SIZE + [by_name[n] for n in order])
        np.testing.assert_array_equal(run_sample(data, tf, seed=1, index=index), want, err_msg=str(order))


def test_nesting_with_random_apply():
    tf = SIZE + [T.RandomApply([T.RandomChoice([BRIGHT, T.RandomOrder([SOLAR, LOW])])], p=0.5),
                 T.RandomChoice([T.RandomApply([GRAY], p=0.5), T.Identity()])]
    seen = collections.Counter(tuple(names(tf, i)) for i in range(400))
    assert {(), ("brightness",), ("solarize", "contrast"), ("contrast", "solarize"), ("grayscale",),
            ("brightness", "grayscale")} <= set(seen), seen


def test_geometric_options_keep_the_size(small_folder):
    tf = [T.Resize((48, 48)), T.RandomChoice([T.RandomRotation(15), T.RandomAffine(0, translate=(0.1, 0.1)),
                                                 T.RandomHorizontalFlip(p=1.0)]), T.ToTensor()]
    a = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=4, seed=3, output="numpy", num_threads=1)]
    b = [x for x, _ in sluice.Loader(small_folder, tf, batch_size=5, seed=3, output="numpy", num_threads=2)]
    np.testing.assert_array_equal(np.concatenate(a), np.concatenate(b))
    assert np.concatenate(a).shape[1:] == (3, 48, 48)


@pytest.mark.parametrize("tf, words", [
    ([T.RandomOrder([T.RandomCrop(10), BRIGHT])], "RandomOrder of RandomCrop is not supported"),
    ([T.RandomChoice([T.RandomResizedCrop(10), BRIGHT])], "RandomChoice of transforms that change the output size"),
])
def test_placement_errors_name_the_container(small_folder, tf, words):
    with pytest.raises(NotImplementedError, match=words):
        sluice.Loader(small_folder, tf)


def test_argument_errors():
    with pytest.raises(ValueError, match="RandomChoice: item 0 \\(Normalize\\) is not supported inside RandomChoice"):
        T.RandomChoice([T.Normalize([0.5] * 3, [0.5] * 3), BRIGHT])
    with pytest.raises(ValueError, match="RandomOrder: it takes at most 8 transforms"):
        T.RandomOrder([BRIGHT] * 9)
    with pytest.raises(ValueError, match="RandomChoice: p must hold one weight per transform"):
        T.RandomChoice([BRIGHT, GRAY], p=[1.0])
    with pytest.raises(TypeError, match="RandomOrder: transforms must be a non-empty sequence"):
        T.RandomOrder([])


def test_batch_transforms_make_the_per_batch_choice():
    choice = T.RandomChoice([T.MixUp(num_classes=3), T.CutMix(num_classes=3)])
    assert isinstance(choice, T.BatchRandomChoice) and isinstance(choice, T.RandomChoice)
    assert not isinstance(T.RandomChoice([BRIGHT, GRAY]), T.BatchTransform)


def test_from_torchvision():
    v2 = pytest.importorskip("torchvision.transforms.v2")
    got = T.from_torchvision(v2.Compose([
        v2.RandomChoice([v2.ColorJitter(brightness=0.3), v2.Compose([v2.RandomGrayscale(1.0), v2.RandomInvert(1.0)])],
                        p=[0.7, 0.3]),
        v2.RandomOrder([v2.RandomSolarize(100), v2.RandomPosterize(4)]),
        v2.RandomChoice([v2.MixUp(num_classes=5), v2.CutMix(num_classes=5)])]))
    assert [type(t).__name__ for t in got] == ["RandomChoice", "RandomOrder", "BatchRandomChoice"]
    assert [type(t).__name__ for t in got[0].transforms[1]] == ["RandomGrayscale", "RandomInvert"]
    assert got[0].p == pytest.approx([0.7, 0.3])
