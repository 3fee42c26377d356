"""sluice pack (issue 17): image folders and lists into WebDataset shards that the `webdataset`
library reads back byte for byte, with a manifest, re-encoding, and bad input named."""
from __future__ import annotations

import collections
import hashlib
import io
import json
import os

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from sluice import cli
from sluice import pack as packing
from conftest import photo, pil_bytes

wds = pytest.importorskip("webdataset")
from PIL import Image  # noqa: E402


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def read_back(dst: str) -> list[tuple[str, str, bytes, int]]:
    """(shard, key, image bytes, label) of every sample, as the webdataset library reads them."""
    out = []
    for shard in sorted(p for p in os.listdir(dst) if p.endswith(".tar")):
        for s in wds.WebDataset(os.path.join(dst, shard), shardshuffle=False):
            image = next(v for k, v in s.items() if k in ("jpg", "jpeg", "png", "webp"))
            out.append((shard, s["__key__"], image, int(s["cls"])))
    return out


def test_folder_packs_into_shards_the_webdataset_library_reads(small_folder, tmp_path):
    dst = str(tmp_path / "shards")
    s = packing.pack(small_folder, dst, shard_bytes=40 << 10, progress=False)
    files = sluice.Loader(small_folder, [T.CenterCrop(8)]).samples
    got = read_back(dst)
    assert s["samples"] == len(got) == len(files) == 15 and s["skipped"] == []
    assert s["shards"] >= 3, "40 KiB shards of 15 files of ~8 KiB: several"
    # Every file once, its bytes as they are, with its label; shuffled, keys in packed order.
    want = collections.Counter((md5(open(p, "rb").read()), y) for p, y in files)
    assert collections.Counter((md5(b), y) for _, _, b, y in got) == want
    assert [k for _, k, _, _ in got] == [f"{i:09d}" for i in range(15)]
    assert [y for _, _, _, y in got] != sorted(y for _, _, _, y in got), "not shuffled"
    manifest = packing.read_manifest(dst)
    assert manifest["samples"] == 15 and manifest["classes"] == sluice.Loader(small_folder, [T.CenterCrop(8)]).classes
    assert [m["name"] for m in manifest["shards"]] == sorted(p for p in os.listdir(dst) if p.endswith(".tar"))
    for m in manifest["shards"]:
        assert m["bytes"] == os.path.getsize(os.path.join(dst, m["name"]))
        assert m["samples"] == sum(1 for sh, *_ in got if sh == m["name"])
        assert m["bytes"] <= (40 << 10) or m["samples"] == 1
    assert not [p for p in os.listdir(dst) if p.endswith(".tmp")]
    # sluice reads them: the same images, labels and pixels as the folder, sample by sample.
    ds = sluice.WebDataset(os.path.join(dst, "shard-*.tar"))
    tf = [T.Resize((20, 24))]
    by_hash = {md5(open(p, "rb").read()): p for p, _ in files}
    packed_order = [(by_hash[md5(b)], y) for _, _, b, y in got]
    a = [(np.asarray(x), np.asarray(y)) for x, y in sluice.Loader(ds, tf, batch_size=5, output="numpy")]
    b = [(np.asarray(x), np.asarray(y)) for x, y in sluice.Loader(packed_order, tf, batch_size=5, output="numpy")]
    for (x, y), (fx, fy) in zip(a, b, strict=True):
        assert y.tolist() == fy.tolist()
        np.testing.assert_array_equal(x, fx)


def test_reencoding_shrinks_to_max_side_as_pillow_does(tmp_path):
    src = tmp_path / "list.txt"
    lines = []
    for i, (w, h) in enumerate([(300, 200), (90, 120), (640, 100)]):
        p = tmp_path / f"img {i}.png"  # a space in the name
        Image.fromarray(photo(w, h, seed=i)).save(p)
        lines.append(f"{p.name} {7 * i}")
    src.write_text("# a comment\n\n" + "\n".join(lines) + "\n")
    dst = str(tmp_path / "out")
    s = packing.pack(packing.read_list(str(src)), dst, max_side=128, quality=85, shuffle=False, progress=False)
    got = read_back(dst)
    assert s["samples"] == 3 and [y for *_, y in got] == [0, 7, 14]
    for (_, _, data, _), (w, h) in zip(got, [(300, 200), (90, 120), (640, 100)]):
        img = Image.open(io.BytesIO(data))
        assert img.format == "JPEG"
        expected = Image.fromarray(photo(w, h))
        expected.thumbnail((128, 128), Image.LANCZOS)
        assert img.size == expected.size and max(img.size) == min(128, max(w, h))


def test_bad_files_are_named_or_skipped(tmp_path):
    good = pil_bytes(Image.fromarray(photo(40, 30)), "JPEG")
    pairs = []
    for i, data in enumerate([good, b"not an image", good[: len(good) // 3], good]):
        p = tmp_path / f"{i}.jpg"
        p.write_bytes(data)
        pairs.append((str(p), i))
    with pytest.raises(ValueError, match=r"1\.jpg: cannot re-encode"):
        packing.pack(pairs, str(tmp_path / "a"), max_side=16, shuffle=False, progress=False)
    assert not [p for p in os.listdir(tmp_path / "a") if p.endswith((".tar", ".tmp", ".json"))]
    # A failure after whole shards were written removes them too.
    with pytest.raises(ValueError, match=r"1\.jpg: cannot re-encode"):
        packing.pack([pairs[3], pairs[0], pairs[1]], str(tmp_path / "a2"), shard_bytes=1, max_side=16, shuffle=False, progress=False)
    assert os.listdir(tmp_path / "a2") == []
    s = packing.pack(pairs, str(tmp_path / "b"), max_side=16, shuffle=False, on_error="skip", progress=False)
    assert s["samples"] == 2 and [os.path.basename(p) for p, _ in s["skipped"]] == ["1.jpg", "2.jpg"]
    assert [y for *_, y in read_back(str(tmp_path / "b"))] == [0, 3]
    with pytest.raises(FileExistsError, match="already holds shards"):
        packing.pack(pairs, str(tmp_path / "b"), progress=False)
    with pytest.raises(ValueError, match="line 2: expected 'PATH LABEL'"):
        (tmp_path / "l.txt").write_text("a.jpg 1\nb.jpg cat\n")
        packing.read_list(str(tmp_path / "l.txt"))
    with pytest.raises(ValueError, match="quality must be"):
        packing.pack(pairs, str(tmp_path / "c"), quality=101)


def test_what_webdataset_shardwriter_writes_sluice_reads(small_folder, tmp_path):
    files = sluice.Loader(small_folder, [T.CenterCrop(8)]).samples
    with wds.ShardWriter(str(tmp_path / "w-%02d.tar"), maxcount=4, verbose=0) as sink:
        for i, (p, y) in enumerate(files):
            sink.write({"__key__": f"k{i}", "jpg": open(p, "rb").read(), "cls": y})
    ds = sluice.WebDataset(str(tmp_path / "w-{00..03}.tar"))
    assert [y for _, y in ds.samples] == [y for _, y in files]


def test_cli_pack_prints_the_rate_and_the_manifest(small_folder, tmp_path, capsys):
    dst = str(tmp_path / "cli")
    assert cli.main(["pack", small_folder, dst, "--shard-size", "64KB", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("packed 15 images into ") and "images/s; manifest" in out
    assert json.load(open(os.path.join(dst, "manifest.json")))["samples"] == 15
    assert cli.main(["pack", small_folder, dst, "--quiet"]) == 2  # not an empty folder
    assert "already holds shards" in capsys.readouterr().err
    assert cli.main(["pack", str(tmp_path / "missing"), dst, "--quiet"]) == 2
