"""sluice.Loader end to end on real files: labels, batching, epochs, determinism, outputs."""
from __future__ import annotations

import gc
import os
import pathlib

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from test_decode import run_sample

torch = pytest.importorskip("torch")

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
PIPE = [T.RandomResizedCrop(48), T.RandomHorizontalFlip(), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]


def torchvision_image_folder(root):
    """torchvision.datasets.ImageFolder's find_classes + make_dataset, written out."""
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    samples = []
    for idx, c in enumerate(classes):
        for dirpath, _, files in sorted(os.walk(os.path.join(root, c), followlinks=True)):
            for f in sorted(files):
                if f.lower().endswith(IMG_EXTENSIONS):
                    samples.append((os.path.join(dirpath, f), idx))
    return classes, samples


def epoch_indices(loader, epoch):
    """Dataset indices per batch (through the core, which reports them)."""
    loader._core.start_epoch(epoch)
    out = []
    while (item := loader._core.next()) is not None:
        out.append(list(item[2]))
    return out


def test_labels_match_torchvision_image_folder(tmp_path, small_folder):
    # Add nesting, upper-case extensions, a non-image file and a symlinked directory.
    root = tmp_path / "tree"
    for c in ("b_class", "a_class", "C_upper"):
        (root / c / "sub" / "deeper").mkdir(parents=True)
    first = sorted(os.listdir(os.path.join(small_folder, "class_000")))[0]
    data = open(os.path.join(small_folder, "class_000", first), "rb").read()
    for rel in ["a_class/z.jpg", "a_class/sub/a.JPG", "a_class/sub/deeper/m.jpeg", "b_class/x.JPEG",
                "b_class/sub/y.jpg", "C_upper/q.jpg", "C_upper/readme.txt"]:
        (root / rel).write_bytes(data if rel.endswith(("g", "G")) else b"text")
    os.symlink(root / "a_class" / "sub", root / "b_class" / "linked")
    loader = sluice.Loader(str(root), [T.CenterCrop(8)], batch_size=4)
    classes, samples = torchvision_image_folder(str(root))
    assert loader.classes == classes == ["C_upper", "a_class", "b_class"]
    assert loader.samples == samples
    tv = pytest.importorskip("torchvision.datasets", reason="torchvision not installed; the "
                             "written-out reference above was checked")
    assert loader.samples == tv.ImageFolder(str(root)).samples


def test_len_and_last_batch(small_folder):
    assert len(sluice.Loader(small_folder, PIPE, batch_size=4)) == 4   # 15 samples
    assert len(sluice.Loader(small_folder, PIPE, batch_size=4, last_batch="drop")) == 3
    sizes = [x.shape[0] for x, _ in sluice.Loader(small_folder, PIPE, batch_size=4)]
    assert sizes == [4, 4, 4, 3]
    sizes = [x.shape[0] for x, _ in sluice.Loader(small_folder, PIPE, batch_size=4, last_batch="drop")]
    assert sizes == [4, 4, 4]


def test_every_sample_once_per_epoch_and_shuffle_changes(small_folder):
    loader = sluice.Loader(small_folder, PIPE, batch_size=4, shuffle=True, seed=3)
    orders = []
    for epoch in range(3):
        flat = [i for b in epoch_indices(loader, epoch) for i in b]
        assert sorted(flat) == list(range(15))
        orders.append(flat)
    assert orders[0] != orders[1] != orders[2]
    assert epoch_indices(loader, 1) == epoch_indices(loader, 1)  # same epoch, same order
    plain = sluice.Loader(small_folder, PIPE, batch_size=4)
    assert [i for b in epoch_indices(plain, 5) for i in b] == list(range(15))


def test_labels_follow_samples(small_folder):
    loader = sluice.Loader(small_folder, PIPE, batch_size=5, shuffle=True)
    loader._core.start_epoch(0)
    item = loader._core.next()
    labels = torch.from_dlpack(item[1])
    assert labels.dtype == torch.int64
    assert labels.tolist() == [loader.samples[i][1] for i in item[2]]


def test_set_epoch_reproduces_and_auto_epochs_advance(small_folder):
    loader = sluice.Loader(small_folder, PIPE, batch_size=8, shuffle=True, seed=7)
    loader.set_epoch(4)
    a = [x.clone() for x, _ in loader]
    loader.set_epoch(4)
    b = [x.clone() for x, _ in loader]
    assert all(torch.equal(p, q) for p, q in zip(a, b))
    c = [x.clone() for x, _ in loader]  # no set_epoch: epoch 5
    assert not torch.equal(a[0], c[0])


def collect(loader, epoch):
    """{dataset index: image} for one epoch."""
    loader._core.start_epoch(epoch)
    out = {}
    while (item := loader._core.next()) is not None:
        images = np.from_dlpack(item[0])
        for i, idx in enumerate(item[2]):
            out[idx] = images[i].copy()
    return out


def test_pixels_independent_of_threads_and_batch_size(small_folder):
    ref = collect(sluice.Loader(small_folder, PIPE, batch_size=4, num_threads=1, seed=11), 2)
    for kw in [dict(batch_size=4, num_threads=2), dict(batch_size=7, num_threads=3),
               dict(batch_size=1, num_threads=2, prefetch=5), dict(batch_size=15, io_threads=1)]:
        got = collect(sluice.Loader(small_folder, PIPE, seed=11, shuffle=True, **kw), 2)
        assert got.keys() == ref.keys()
        for k in ref:
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"sample {k} with {kw}")


def test_dct_scaling_is_on_for_training_lists_and_off_for_evaluation_ones(tmp_path):
    from PIL import Image
    from conftest import photo
    for i in range(3):
        Image.fromarray(photo(480, 360, seed=i)).save(tmp_path / f"{i}.jpg", quality=90)
    files = [(str(tmp_path / f"{i}.jpg"), 0) for i in range(3)]
    evaluation = [T.Resize(64), T.CenterCrop(56), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)]
    training = [T.RandomResizedCrop(56, scale=(0.9, 1.0)), T.Normalize([0.5] * 3, [0.5] * 3)]
    assert not sluice.Loader(files, evaluation).options.dct_scaling
    assert sluice.Loader(files, training).options.dct_scaling
    assert sluice.Loader(files, evaluation, dct_scaling=True).options.dct_scaling
    assert not sluice.Loader(files, training, dct_scaling=False).options.dct_scaling
    # The evaluation list by default is the full decode's pixels (a 1/4 scale decode is not).
    got = next(iter(sluice.Loader(files, evaluation[:2], batch_size=3, dtype="uint8", layout="NHWC", output="numpy")))[0]
    full = [run_sample(open(p, "rb").read(), evaluation[:2], dct_scaling=False) for p, _ in files]
    scaled = [run_sample(open(p, "rb").read(), evaluation[:2], dct_scaling=True) for p, _ in files]
    np.testing.assert_array_equal(got, np.stack(full))
    assert not np.array_equal(got, np.stack(scaled))


def test_loader_output_is_the_per_sample_path(small_folder):
    loader = sluice.Loader(small_folder, [T.RandomResizedCrop(40), T.RandomHorizontalFlip()],
                           batch_size=6, dtype="uint8", layout="NHWC", seed=9)
    got = collect(loader, 1)
    for idx, (path, _) in enumerate(loader.samples):
        data = open(path, "rb").read()
        one = run_sample(data, loader.transforms, seed=9, epoch=1, index=idx, dct_scaling=True)
        np.testing.assert_array_equal(got[idx], one)


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", torch.float16])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_dtypes_and_layouts(small_folder, dtype, layout):
    tf = [T.RandomResizedCrop((30, 20))] + ([] if dtype == "uint8" else [T.Normalize([0.5] * 3, [0.25] * 3)])
    x, y = next(iter(sluice.Loader(small_folder, tf, batch_size=4, dtype=dtype, layout=layout)))
    assert x.shape == ((4, 3, 30, 20) if layout == "NCHW" else (4, 30, 20, 3))
    assert x.dtype == {"uint8": torch.uint8, "float16": torch.float16, "float32": torch.float32,
                       torch.float16: torch.float16}[dtype]
    assert x.is_contiguous() and y.shape == (4,)
    if dtype != "uint8":
        assert -2.0 - 1e-3 <= float(x.min()) and float(x.max()) <= 2.0 + 1e-3


@pytest.mark.parametrize("output", ["torch", "numpy"])
def test_variable_size_batches_are_lists(small_folder, output):
    # Resize(int) alone keeps each image's aspect ratio: no fixed size, so each batch is a list
    # with one image per sample, each equal to PIL's resize to torchvision's size.
    from PIL import Image

    loader = sluice.Loader(small_folder, [T.Resize(40)], batch_size=4, dtype="uint8",
                           layout="NHWC", output=output, dct_scaling=False)
    assert loader.output_size is None
    n = 0
    for batch_index, (images, labels) in enumerate(loader):
        assert isinstance(images, list) and len(images) == len(labels)
        for i, img in enumerate(images):
            path = loader.samples[batch_index * 4 + i][0]
            with Image.open(path) as im:
                w, h = im.size
                size = (40, int(40 * h / w)) if w <= h else (int(40 * w / h), 40)
                ref = np.asarray(im.convert("RGB").resize(size, Image.Resampling.BILINEAR))
            got = np.asarray(img)
            assert got.shape == (size[1], size[0], 3)
            np.testing.assert_array_equal(got, ref)
            n += 1
    assert n == 15
    no_geometry = sluice.Loader(small_folder, [], batch_size=15, output=output)
    images, _ = next(iter(no_geometry))
    assert [tuple(x.shape[1:]) for x in images] == [
        np.asarray(Image.open(p)).shape[:2] for p, _ in no_geometry.samples]


@pytest.mark.parametrize("output", ["torch", "numpy"])
def test_a_batch_of_one_shape_is_stacked_as_collate_stacks_it(small_folder, output):
    """Variable-size transforms: a batch whose samples share a shape (batch size 1 included) is
    one array, as DataLoader's default collate gives it; mixed shapes stay a list."""
    listed = sluice.Loader(small_folder, [T.Resize(40)], batch_size=4, dtype="uint8", layout="NHWC", output=output)
    ones = sluice.Loader(small_folder, [T.Resize(40)], batch_size=1, dtype="uint8", layout="NHWC", output=output)
    per_sample = [img for images, _ in listed for img in images]
    for k, (images, labels) in enumerate(ones):
        assert not isinstance(images, list) and tuple(images.shape) == (1, *per_sample[k].shape)
        np.testing.assert_array_equal(np.asarray(images[0]), np.asarray(per_sample[k]))
    path = listed.samples[0][0]
    twice = sluice.Loader([(path, 0), (path, 1), (listed.samples[1][0], 2)], [T.Resize(40)], batch_size=2,
                          dtype="uint8", layout="NHWC", output=output)
    first, second = list(twice)
    assert tuple(first[0].shape) == (2, *per_sample[0].shape)  # one file twice: one shape
    assert len(second[0]) == 1 and not isinstance(second[0], list)


def test_dataloader_attributes_and_integer_like_labels(small_folder):
    files = [p for p, _ in sluice.Loader(small_folder, PIPE).samples[:4]]
    pairs = [(files[0], np.int64(3)), (files[1].encode(), np.int32(1)), (files[2], torch.tensor(2)),
             (pathlib.Path(files[3]), 0)]
    loader = sluice.Loader(pairs, PIPE, batch_size=2, last_batch="drop")
    assert loader.dataset is pairs and loader.batch_size == 2 and loader.drop_last
    assert not sluice.Loader(small_folder, PIPE).drop_last
    for root in (small_folder.encode(), pathlib.Path(small_folder)):  # a root as bytes or a path
        assert sluice.Loader(root, PIPE).samples == sluice.Loader(small_folder, PIPE).samples
    assert torch.cat([y for _, y in loader]).tolist() == [3, 1, 2, 0]
    for bad in (True, 1.0, "1", np.bool_(True)):
        with pytest.raises(TypeError, match=r"source\[0\]: label must be an integer"):
            sluice.Loader([(files[0], bad)], PIPE)


def test_numpy_output(small_folder):
    x, y = next(iter(sluice.Loader(small_folder, PIPE, batch_size=4, output="numpy")))
    assert isinstance(x, np.ndarray) and x.dtype == np.float32 and x.shape == (4, 3, 48, 48)
    assert isinstance(y, np.ndarray) and y.dtype == np.int64
    # Writable (DLPack 1.0's versioned form, which NumPy 2.1 asks for), as JAX and in-place code need.
    assert x.flags.writeable and y.flags.writeable
    x[0] = 0.5
    assert (x[0] == 0.5).all() and not (x[1] == 0.5).all()


def test_dlpack_forms():
    # The versioned form to consumers that ask for DLPack 1.0, the unversioned one otherwise.
    from conftest import photo, pil_bytes
    from PIL import Image
    raw = pil_bytes(Image.fromarray(photo(32, 24, 1)), "JPEG", quality=90)
    t = sluice._core.process_sample(raw, [T.Resize((8, 8))._spec()], 0, 0, 0, "uint8", "NHWC", False)
    assert '"dltensor_versioned"' in repr(t.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(t.__dlpack__())
    assert '"dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))
    a = np.from_dlpack(t)
    assert a.shape == (8, 8, 3) and a.flags.writeable


def test_batches_outlive_the_loader(small_folder):
    loader = sluice.Loader(small_folder, PIPE, batch_size=8)
    batches = [x for x, _ in loader]
    copies = [b.clone() for b in batches]
    del loader
    gc.collect()
    assert all(torch.equal(a, b) for a, b in zip(batches, copies))


def test_new_iteration_invalidates_old_iterator(small_folder):
    loader = sluice.Loader(small_folder, PIPE, batch_size=4)
    it = iter(loader)
    next(it)
    it2 = iter(loader)
    with pytest.raises(RuntimeError, match="invalidated"):
        next(it)
    assert sum(x.shape[0] for x, _ in it2) == 15


def test_stats_report_stages(small_folder):
    loader = sluice.Loader(small_folder, PIPE, batch_size=4, num_threads=2)
    for _ in loader:
        pass
    st = loader.stats()
    assert st["samples"] == 15 and st["batches"] == 4 and st["skipped_count"] == 0
    assert set(st["stage_seconds"]) == {"read", "decode", "transform", "collate"}
    assert all(v > 0 for v in st["stage_seconds"].values())
    # Every file once, and the next epoch's first batches, read ahead as this one ended.
    sizes = sorted(os.path.getsize(p) for p, _ in loader.samples)
    assert st["num_threads"] == 2 and sum(sizes) <= st["bytes_read"] <= sum(sizes) + sum(sizes[-2 * 4:])
    # The batches handed out are gone: their buffers are idle in the pool, kept for the next epoch.
    gc.collect()
    assert loader.stats()["host_memory_cached"] >= 4 * 3 * 32 * 32 * 4
    loader.reset_stats()
    assert loader.stats()["samples"] == 0


def test_file_list_source(small_folder):
    pairs = [(p, 100 + i) for i, (p, _) in enumerate(sluice.Loader(small_folder, PIPE).samples[:6])]
    loader = sluice.Loader(pairs, PIPE, batch_size=4)
    labels = torch.cat([y for _, y in loader]).tolist()
    assert labels == [100 + i for i in range(6)]


def test_torch_training_step_consumes_batches(small_folder):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = sluice.Loader(small_folder, PIPE, batch_size=5, shuffle=True)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert torch.isfinite(loss)


def test_options_are_the_cpp_struct(small_folder):
    # The Loader's defaults are the C++ LoaderOptions' defaults; the automatic values are
    # resolved in C++ and shown in loader.options.
    import inspect
    defaults = sluice._core.LoaderOptions()
    signature = inspect.signature(sluice.Loader).parameters
    for name in ("batch_size", "shuffle", "seed", "last_batch", "dtype", "layout", "on_error", "decode_route"):
        assert signature[name].default == getattr(defaults, name), name
    assert (defaults.num_threads, defaults.io_threads, defaults.prefetch) == (None, None, None)
    loader = sluice.Loader(small_folder, [T.CenterCrop(8)], batch_size=2, num_threads=1, output="numpy")
    opts = loader.options
    assert (opts.num_threads, opts.io_threads, opts.prefetch, opts.device) == (1, 2, 2, "cpu")
    assert loader.stats()["num_threads"] == 1 and loader.stats()["io_threads"] == 2
    opts.batch_size = 7  # a copy: the loader keeps its own
    assert loader.options.batch_size == 2
    with pytest.raises(TypeError, match="prefetch must be an int, got str: '2'"):
        defaults.prefetch = "2"
    with pytest.raises(ValueError, match="layout must be one of 'NCHW', 'NHWC', got 'CHW'"):
        defaults.layout = "CHW"
