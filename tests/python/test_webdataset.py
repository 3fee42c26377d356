"""sluice.WebDataset (issue 17): tar shards as a Loader source, against the `webdataset` library
(which writes the shards and reads them back as the reference) and against the same images as
files (a loader over the files is the pixel reference: same seed, same samples, same output)."""
from __future__ import annotations

import collections
import io
import os
import tarfile

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes

wds = pytest.importorskip("webdataset")
from PIL import Image  # noqa: E402

PIPE = [T.RandomResizedCrop(24), T.RandomHorizontalFlip()]
N = 23  # samples, over 5 shards of at most 5


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """N JPEGs of varied sizes, as files and as shards written by webdataset.ShardWriter; each
    labelled with its own index. Returns (shard pattern, shard paths, [(file, label)], keys)."""
    root = tmp_path_factory.mktemp("wds")
    (root / "files").mkdir()
    pairs, keys = [], []
    with wds.ShardWriter(str(root / "shard-%04d.tar"), maxcount=5, verbose=0) as sink:
        for i in range(N):
            data = pil_bytes(Image.fromarray(photo(40 + 7 * i, 30 + 3 * i, seed=i)), "JPEG", quality=90)
            path = root / "files" / f"{i:03d}.jpg"
            path.write_bytes(data)
            pairs.append((str(path), i))
            keys.append(f"dir/s{i:03d}")
            sink.write({"__key__": keys[-1], "jpg": data, "cls": i, "json": {"y": 100 + i}})
    shards = sorted(str(p) for p in root.glob("shard-*.tar"))
    assert len(shards) == 5
    return str(root / "shard-{0000..0004}.tar"), shards, pairs, keys


def epoch(loader, e=0):
    loader.set_epoch(e)
    return [(np.asarray(b[0]), np.asarray(b[1])) + ((np.asarray(b[2]),) if len(b) == 3 else ()) for b in loader]


def test_samples_are_what_the_webdataset_library_reads(written):
    pattern, shards, _, keys = written
    ds = sluice.WebDataset(pattern)
    assert ds.shards == shards and len(ds) == N and ds.bad_count == 0
    reference = []  # (shard, key, label) as webdataset iterates them
    for s in shards:
        for sample in wds.WebDataset(s, shardshuffle=False):
            reference.append((s, sample["__key__"], int(sample["cls"])))
    assert [k for _, k, _ in reference] == keys
    assert ds.samples == [(f"{s}:{k}.jpg", y) for s, k, y in reference]
    assert "5 shards, 23 samples" in repr(ds)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_pixels_and_labels_equal_the_same_images_as_files(written, dtype):
    pattern, _, pairs, _ = written
    kw = dict(batch_size=4, shuffle=True, seed=7, dtype=dtype, output="numpy", num_threads=2)
    shards = epoch(sluice.Loader(sluice.WebDataset(pattern), PIPE, **kw), 1)
    files = epoch(sluice.Loader(pairs, PIPE, **kw), 1)
    assert len(shards) == len(files) == 6
    for (x, y), (fx, fy) in zip(shards, files, strict=True):
        assert y.tolist() == fy.tolist()
        np.testing.assert_array_equal(x, fx)


def test_patterns_globs_and_lists_name_the_same_shards(written):
    pattern, shards, _, _ = written
    folder = os.path.dirname(shards[0])
    assert sluice.WebDataset(os.path.join(folder, "shard-*.tar")).shards == shards
    assert sluice.WebDataset(shards[::-1]).shards == shards[::-1]
    assert sluice.WebDataset([pattern.replace("{0000..0004}", "{0000..0001}"), shards[4]]).shards == \
        shards[:2] + [shards[4]]


@pytest.mark.parametrize("last_batch", ["partial", "pad", "drop"])
@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_every_sample_exactly_once_over_ranks(written, last_batch, world_size):
    ds = sluice.WebDataset(written[0])
    bs = 3
    for e in (0, 1):
        seen, lengths = collections.Counter(), set()
        for rank in range(world_size):
            loader = sluice.Loader(ds, PIPE, batch_size=bs, shuffle=True, seed=2, last_batch=last_batch,
                                   rank=rank, world_size=world_size, output="numpy", num_threads=2)
            batches = epoch(loader, e)
            assert len(batches) == len(loader)
            lengths.add(len(loader))
            for b in batches:
                labels = b[1] if len(b) == 2 else b[1][b[2]]
                seen.update(labels.tolist())
        assert len(lengths) == 1, "ranks yield different batch counts"
        assert max(seen.values()) == 1
        if last_batch == "drop":
            assert N - len(seen) < world_size * bs
        else:
            assert sorted(seen) == list(range(N))


def test_resume_mid_epoch_yields_exactly_the_rest(written):
    ds = sluice.WebDataset(written[0])
    kw = dict(batch_size=4, shuffle=True, seed=11, output="numpy", num_threads=2)
    whole = epoch(sluice.Loader(ds, PIPE, **kw), 3)
    first = sluice.Loader(ds, PIPE, **kw)
    first.set_epoch(3)
    it = iter(first)
    next(it), next(it)
    state = first.state_dict()
    second = sluice.Loader(sluice.WebDataset(written[0]), PIPE, **kw)
    second.load_state_dict(state)
    rest = [(np.asarray(x), np.asarray(y)) for x, y in second]
    assert len(rest) == len(whole) - 2
    for (x, y), (wx, wy) in zip(rest, whole[2:], strict=True):
        assert y.tolist() == wy.tolist()
        np.testing.assert_array_equal(x, wx)
    fewer = sluice.Loader(sluice.WebDataset(written[1][:4]), PIPE, **kw)
    with pytest.raises(ValueError, match="a dataset of 23 samples; this loader's has 20"):
        fewer.load_state_dict(state)
    relabelled = sluice.Loader(sluice.WebDataset(written[0], label_key="json", label_field="y"), PIPE, **kw)
    with pytest.raises(ValueError, match="dataset"):
        relabelled.load_state_dict(state)


def test_labels_from_json_and_txt(written, tmp_path):
    pattern = written[0]
    ds = sluice.WebDataset(pattern, label_key="json", label_field="y")
    assert [y for _, y in ds.samples] == [100 + i for i in range(N)]
    with pytest.raises(ValueError, match="label_field must name the field"):
        sluice.WebDataset(pattern, label_key="json")
    unlabelled = sluice.WebDataset(pattern, label_key=None)
    assert {y for _, y in unlabelled.samples} == {-1} and unlabelled.bad_count == 0
    shard = tmp_path / "txt.tar"
    write_tar(shard, [("a.png", pil_bytes(Image.fromarray(photo(20, 20)), "PNG")), ("a.txt", b" 42\n")])
    assert sluice.WebDataset(str(shard), label_key="cls;txt").samples == [(f"{shard}:a.png", 42)]


def write_tar(path, members):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.fixture(scope="module")
def bad_shards(tmp_path_factory):
    """Two shards: one with a good sample between every kind of bad one, one cut short."""
    root = tmp_path_factory.mktemp("bad_wds")
    jpg = pil_bytes(Image.fromarray(photo(32, 24)), "JPEG")
    a, b = str(root / "a.tar"), str(root / "b.tar")
    write_tar(a, [
        ("good0.jpg", jpg), ("good0.cls", b"0"),
        ("nolabel.jpg", jpg),
        ("noimage.cls", b"1"),
        ("badlabel.jpg", jpg), ("badlabel.cls", b"cat"),
        ("notjpeg.jpg", b"this is text, not a JPEG"), ("notjpeg.cls", b"2"),
        ("good1.jpg", jpg), ("good1.cls", b"3"),
        ("good0.jpg", jpg), ("good0.cls", b"4"),  # the first key again
    ])
    write_tar(b, [("good2.jpg", jpg), ("good2.cls", b"5"), ("big.jpg", jpg * 4), ("big.cls", b"6")])
    with tarfile.open(b) as tar:
        cut = tar.getmember("big.jpg").offset_data + 100  # inside big.jpg's data
    data = open(b, "rb").read()
    with open(b, "wb") as f:
        f.write(data[:cut])
    return a, b


BAD = {  # name -> the reason stats() gives
    "a.tar:nolabel.jpg": "no label member (looked for .cls)",
    "a.tar:noimage.*": "no image member (looked for .jpg, .jpeg, .png, .webp; found .cls)",
    "a.tar:badlabel.jpg": "badlabel.cls: the label is not an integer: 'cat'",
    "a.tar:notjpeg.jpg": "not a recognized image format: the file starts with 74 68 69 73",
    "a.tar:good0.jpg": "a duplicate key: an earlier sample of this shard has it",
    "b.tar": "truncated at byte",
}


def test_bad_samples_are_skipped_and_reported(bad_shards):
    ds = sluice.WebDataset(list(bad_shards))
    assert len(ds) == 9 and ds.bad_count == 5  # the undecodable one fails only when decoded
    loader = sluice.Loader(ds, [T.CenterCrop(16)], batch_size=4, on_error="skip", output="numpy", num_threads=2)
    labels = sorted(y for _, ys in loader for y in np.asarray(ys).tolist())
    assert labels == [0, 3, 5]
    skipped = loader.stats()["skipped"]
    got = {os.path.basename(s["path"]): s["reason"] for s in skipped}
    assert set(got) == set(BAD), got
    for name, reason in BAD.items():
        assert reason in got[name], (name, got[name])


def test_bad_samples_raise_naming_themselves(bad_shards):
    a, b = bad_shards
    loader = sluice.Loader(sluice.WebDataset(a), [T.CenterCrop(16)], batch_size=1, output="numpy", num_threads=1)
    with pytest.raises(sluice.DecodeError, match=r"a\.tar:nolabel\.jpg: no label member \(looked for \.cls\)"):
        list(loader)  # good0, then nolabel
    loader = sluice.Loader(sluice.WebDataset(b), [T.CenterCrop(16)], batch_size=1, output="numpy", num_threads=1)
    with pytest.raises(sluice.DecodeError, match=r"b\.tar: truncated at byte \d+ \(member 'big\.jpg'"):
        list(loader)  # good2, then the damage


def test_shard_errors_name_the_shard(written, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.tar"):
        sluice.WebDataset(str(tmp_path / "missing.tar"))
    with pytest.raises(FileNotFoundError, match=r"no file matches .*\*\.tar"):
        sluice.WebDataset(str(tmp_path / "*.tar"))
    with pytest.raises(ValueError, match="no shards given"):
        sluice.WebDataset([])
    with pytest.raises(ValueError, match="unmatched"):
        sluice.WebDataset("a-{0..3.tar")
    with pytest.raises(ValueError, match="image_key has an empty extension"):
        sluice.WebDataset(written[0], image_key="jpg;")
    with pytest.raises(TypeError, match="urls must be"):
        sluice.WebDataset(3)
    with pytest.raises(TypeError, match="label_key must be a str"):
        sluice.WebDataset(written[0], label_key=1)
    with pytest.raises(OSError, match=r"http://127\.0\.0\.1:1/a\.tar: the transfer failed at byte 0 after 1 attempt"):
        sluice.WebDataset("http://127.0.0.1:1/a.tar", retries=0, index_cache=None)  # nothing listens there
    with pytest.raises(ValueError, match=r"http://127\.0\.0\.1:1/a\.tar: .* use mode='stream'"):
        sluice.WebDataset("http://127.0.0.1:1/a.tar", mode="indexed")
    notar = tmp_path / "notar.tar"
    notar.write_bytes(b"x" * 2048)
    ds = sluice.WebDataset(str(notar))  # one entry: the damage, raised when read
    with pytest.raises(sluice.DecodeError, match=r"notar\.tar: not a tar archive"):
        list(sluice.Loader(ds, [T.CenterCrop(8)], batch_size=1, output="numpy"))


def test_a_shard_rewritten_after_indexing_is_an_error(written, tmp_path):
    shard = tmp_path / "s.tar"
    shard.write_bytes(open(written[1][0], "rb").read())
    ds = sluice.WebDataset(str(shard))
    with open(shard, "ab") as f:
        f.write(b"\0" * 512)
    with pytest.raises(sluice.DecodeError, match="changed since it was indexed"):
        list(sluice.Loader(ds, [T.CenterCrop(8)], batch_size=2, output="numpy"))


def gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and getattr(sluice._core, "cuda_device_count", lambda: 0)() > 0


@pytest.mark.skipif(not gpu_available(), reason="needs torch with CUDA and a sluice built with CUDA")
@pytest.mark.parametrize("route", ["hardware", "cpu", "auto"])
def test_gpu_path_reads_shards_as_it_reads_files(written, route):
    pattern, _, pairs, _ = written
    kw = dict(batch_size=4, shuffle=True, seed=5, dtype="float32", device="cuda", decode_route=route)
    tf = [T.RandomResizedCrop(24), T.RandomHorizontalFlip(), T.Normalize(sluice.IMAGENET_MEAN, sluice.IMAGENET_STD)]
    shards = [(x.cpu().numpy(), y.cpu().numpy()) for x, y in sluice.Loader(sluice.WebDataset(pattern), tf, **kw)]
    files = [(x.cpu().numpy(), y.cpu().numpy()) for x, y in sluice.Loader(pairs, tf, **kw)]
    assert len(shards) == len(files) == 6
    for (x, y), (fx, fy) in zip(shards, files, strict=True):
        assert y.tolist() == fy.tolist()
        if route == "auto":  # which decoder a sample gets depends on timing
            assert np.abs(x - fx).mean() < 0.05
        else:
            np.testing.assert_array_equal(x, fx)


def test_the_index_is_walked_once_and_rebuilt_when_a_shard_changes(written, tmp_path):
    cache = tmp_path / "index"
    shards = [str(tmp_path / f"{i}.tar") for i in range(3)]
    for s, src in zip(shards, written[1]):
        open(s, "wb").write(open(src, "rb").read())
    first = sluice.WebDataset(shards, index_cache=str(cache))
    assert first.cached_shards == 0 and len(os.listdir(cache)) == 3
    again = sluice.WebDataset(shards, index_cache=cache)
    assert again.cached_shards == 3 and again.samples == first.samples
    kw = dict(batch_size=4, shuffle=True, seed=1, output="numpy")
    for (x, y), (fx, fy) in zip(sluice.Loader(again, PIPE, **kw), sluice.Loader(first, PIPE, **kw), strict=True):
        assert np.asarray(y).tolist() == np.asarray(fy).tolist()
        np.testing.assert_array_equal(np.asarray(x), np.asarray(fx))
    # A shard rewritten (another content, so another size) is walked again; the others are not.
    open(shards[1], "wb").write(open(written[1][4], "rb").read())
    changed = sluice.WebDataset(shards, index_cache=cache)
    assert changed.cached_shards == 2
    assert [n for n, _ in changed.samples if n.startswith(shards[1])] == \
        [n.replace(written[1][4], shards[1]) for n, _ in sluice.WebDataset(written[1][4], index_cache=None).samples]
    # Other keys asked for: their own entries.
    assert sluice.WebDataset(shards, label_key="json", label_field="y", index_cache=cache).cached_shards == 0
    # A damaged entry is a miss, walked again, never a wrong index.
    for name in os.listdir(cache):
        with open(cache / name, "r+b") as f:
            f.seek(20)
            f.write(b"\xff\xff")
    damaged = sluice.WebDataset(shards, index_cache=cache)
    assert damaged.samples == changed.samples
    assert sluice.WebDataset(shards, index_cache=None).cached_shards == 0
    with pytest.raises(TypeError, match="index_cache must be"):
        sluice.WebDataset(shards, index_cache=3)
