"""sluice.WebDataset read as streams (issue 17): shards served by a real HTTP server on loopback
(tests/python/shard_server.py, with faults), through `pipe:` commands, and through the disk
cache. References: the same shards read in indexed mode (pixels per sample), the `webdataset`
library (what the shards hold), the files' own bytes, hand-counted sample sets."""
from __future__ import annotations

import collections
import glob
import json
import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from conftest import SANITIZED, photo, pil_bytes
from shard_server import ShardServer

wds = pytest.importorskip("webdataset")
from PIL import Image  # noqa: E402

PIPE = [T.RandomResizedCrop(24), T.RandomHorizontalFlip()]
N = 37           # samples, over 6 shards of at most 7
SHARDS = 6
KW = dict(output="numpy", num_threads=2)
FAST = dict(retries=3, timeout=5.0, index_cache=None)  # each test walks the shards it names


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """N JPEGs labelled with their index, in shards written by webdataset.ShardWriter."""
    root = tmp_path_factory.mktemp("stream")
    with wds.ShardWriter(str(root / "shard-%04d.tar"), maxcount=7, verbose=0) as sink:
        for i in range(N):
            data = pil_bytes(Image.fromarray(photo(36 + 5 * i, 30 + 2 * i, seed=i)), "JPEG", quality=90)
            sink.write({"__key__": f"k{i:03d}", "jpg": data, "cls": i})
    assert len(glob.glob(str(root / "shard-*.tar"))) == SHARDS
    return str(root)


@pytest.fixture(scope="module")
def server(folder):
    s = ShardServer(folder)
    yield s
    s.close()


def pattern(server, fault="ok"):
    return server.url(fault, "shard-{0000..0005}.tar")


def write_manifest(folder, shards) -> str:
    """A manifest as `sluice pack` writes it, for [(shard name, samples)]; returns its path."""
    path = os.path.join(folder, "manifest.json")
    with open(path, "w") as f:
        json.dump({"format": "sluice-shards/1", "samples": sum(n for _, n in shards), "classes": [],
                   "shards": [{"name": name, "samples": n, "bytes": 0} for name, n in shards]}, f)
    return path


def run_epoch(loader, e=0):
    loader.set_epoch(e)
    return [(np.asarray(b[0]), np.asarray(b[1])) + ((np.asarray(b[2]),) if len(b) == 3 else ()) for b in loader]


def by_label(batches):
    out = {}
    for x, y in batches:
        for img, label in zip(x, y.tolist()):
            assert label not in out
            out[label] = img
    return out


# --- the bytes of one stream -------------------------------------------------------------------

@pytest.mark.parametrize("fault", ["ok", "norange", "drop3000", "fail2"])
def test_a_stream_gives_the_files_bytes_whatever_the_faults(folder, server, fault):
    name = "shard-0002.tar"
    with open(os.path.join(folder, name), "rb") as f:
        want = f.read()
    url = server.url(fault, name)
    got = sluice._core._shard_stream_bytes(url, retries=3, backoff=0.01)
    assert got == want
    if fault == "drop3000":  # resumed from the byte reached, each time with progress
        assert server.requests[f"/{fault}/{name}"] >= len(want) // 3000


def test_stream_errors_name_the_url_and_the_byte(folder, server):
    size = os.path.getsize(os.path.join(folder, "shard-0001.tar"))
    assert size > 5000
    read = sluice._core._shard_stream_bytes
    with pytest.raises(OSError, match=r"/cut5000/shard-0001\.tar: the transfer broke off at byte 5000 after 4 attempt\(s\)"):
        read(server.url("cut5000", "shard-0001.tar"), retries=3, backoff=0.01)
    with pytest.raises(FileNotFoundError, match=r"/status404/shard-0001\.tar: HTTP 404"):
        read(server.url("status404", "shard-0001.tar"))
    with pytest.raises(OSError, match=r"/status403/shard-0001\.tar: HTTP 403$"):
        read(server.url("status403", "shard-0001.tar"))
    assert server.requests["/status403/shard-0001.tar"] == 1, "a 4xx is not retried"
    with pytest.raises(OSError, match=r"/status503/shard-0001\.tar: HTTP 503 at byte 0 after 3 attempt\(s\)"):
        read(server.url("status503", "shard-0001.tar"), retries=2, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(OSError, match=r"/stall/shard-0001\.tar: the transfer failed at byte 0 after 2 attempt\(s\) \(no data for \d+\.\d s\)"):
        read(server.url("stall", "shard-0001.tar"), retries=1, timeout=0.3, backoff=0.01)
    assert time.monotonic() - t0 < 5
    with pytest.raises(OSError, match=r"pipe:exit 4: the command exited with status 4"):
        read("pipe:exit 4")


@pytest.fixture(scope="module")
def tls_server(folder, tmp_path_factory):
    """The shards over https, with a certificate made here for 127.0.0.1; (server, its file)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = str(d / "cert.pem"), str(d / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    s = ShardServer(folder, tls=(cert, key))
    yield s, cert
    s.close()


def test_https_checks_the_certificate(folder, tls_server, monkeypatch):
    server, cert = tls_server
    url = server.url("ok", "shard-0003.tar")
    assert url.startswith("https://")
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(OSError, match=r"https://127\.0\.0\.1:\d+/ok/shard-0003\.tar: the transfer failed at byte 0 "
                                      r"after 1 attempt\(s\) \(curl: .*certificate"):
        sluice._core._shard_stream_bytes(url, retries=0)
    monkeypatch.setenv("CURL_CA_BUNDLE", cert)  # as the curl tool takes it
    with open(os.path.join(folder, "shard-0003.tar"), "rb") as f:
        assert sluice._core._shard_stream_bytes(url) == f.read()
    ds = sluice.WebDataset(server.url("ok", "shard-{0000..0005}.tar"), **FAST)
    labels = [y for _, ys in run_epoch(sluice.Loader(ds, PIPE, batch_size=8, shuffle=True, **KW)) for y in ys.tolist()]
    assert sorted(labels) == list(range(N))


# --- loaders over streams ----------------------------------------------------------------------

@pytest.mark.skipif(SANITIZED, reason="the webdataset library's curl child would inherit the ASan preload")
def test_samples_are_what_the_webdataset_library_reads_from_the_server(server):
    ds = sluice.WebDataset(pattern(server), **FAST)
    assert ds.mode == "stream" and len(ds) == N and ds.walked_shards == SHARDS
    reference = [(f"{s['__url__']}:{s['__key__']}.jpg", int(s["cls"]))
                 for s in wds.WebDataset(pattern(server), shardshuffle=False)]
    assert ds.samples == reference


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_each_sample_equals_the_indexed_read(folder, server, dtype):
    """Streamed and indexed loaders give every sample the same pixels (the random crop is keyed
    by the sample's index, which both share); only the order differs."""
    kw = dict(KW, batch_size=4, shuffle=True, seed=5, dtype=dtype)
    streamed = run_epoch(sluice.Loader(sluice.WebDataset(pattern(server), **FAST), PIPE, **kw), 1)
    indexed = run_epoch(sluice.Loader(sluice.WebDataset(os.path.join(folder, "shard-*.tar")), PIPE, **kw), 1)
    a, b = by_label(streamed), by_label(indexed)
    assert sorted(a) == sorted(b) == list(range(N))
    for label in a:
        np.testing.assert_array_equal(a[label], b[label])
    assert [y.tolist() for _, y in streamed] != [y.tolist() for _, y in indexed], "a stream's own order"


def test_the_sample_buffers_are_reused_epoch_after_epoch(server):
    """The buffers a stream keeps samples in go back to the loader's stream pool once read and
    are taken again. Without reuse, the pool would hold every byte streamed over the eight epochs;
    with it, its memory stays within a few times the most bytes held at once (buffers are rounded
    up to size classes, and the next epoch's streams start ahead, by more or less as threads are
    scheduled, so the peak moves a little from run to run)."""
    loader = sluice.Loader(sluice.WebDataset(pattern(server), **FAST), PIPE, batch_size=4, shuffle=True, **KW)
    memory = []
    for e in range(8):
        assert sum(len(y) for _, y in run_epoch(loader, e)) == N
        memory.append(loader.stats()["stream"]["buffer_bytes"])
    stats = loader.stats()["stream"]
    held, streamed = stats["held_peak"], stats["bytes"]
    assert 0 < held and 0 < memory[0], (held, memory)
    assert max(memory) <= 4 * held + 8 * 65536, (memory, held)
    assert max(memory) < streamed / 3, (memory, streamed)  # under three of the eight epochs' bytes


@pytest.mark.parametrize("last_batch", ["partial", "pad", "drop"])
@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_every_sample_exactly_once_over_ranks(server, last_batch, world_size):
    ds = sluice.WebDataset(pattern(server), shuffle_buffer=5, lanes=2, **FAST)
    bs = 3
    for e in (0, 1):
        seen, lengths, streams = collections.Counter(), set(), 0
        for rank in range(world_size):
            loader = sluice.Loader(ds, PIPE, batch_size=bs, shuffle=True, seed=2, last_batch=last_batch,
                                   rank=rank, world_size=world_size, **KW)
            batches = run_epoch(loader, e)
            assert len(batches) == len(loader)
            lengths.add(len(loader))
            for b in batches:
                labels = b[1] if len(b) == 2 else b[1][b[2]]
                seen.update(labels.tolist())
            streams += loader.stats()["stream"]["shards"]
        assert len(lengths) == 1, "ranks yield different batch counts"
        assert max(seen.values()) == 1
        if last_batch == "drop":
            assert N - len(seen) < world_size * bs
        else:
            assert sorted(seen) == list(range(N))
        # Each rank streams only a run of shards, not every shard: the runs' boundaries and each
        # run's lane boundaries split a shard at most once each; padding reads a few again; and
        # the next epoch's first streams (a lane each, and a split) start as this one ends.
        bound = (SHARDS + (world_size - 1) + world_size * (2 - 1) + (world_size * (bs - 1) if last_batch == "pad" else 0)
                 + world_size * 3)
        assert streams <= bound, (streams, bound)


@pytest.mark.parametrize("prefetch", [1, 3])
def test_one_loader_over_many_epochs_reads_ahead_each_epochs_own_samples(server, prefetch):
    # One loader, epoch after epoch: the batches it reads ahead into the next epoch (from the
    # plan the streams were told) hold that epoch's samples, in its order, as a fresh loader
    # started at that epoch reads them, every sample once, with the last batch short.
    ds = sluice.WebDataset(pattern(server), shuffle_buffer=6, lanes=2, **FAST)
    kw = dict(KW, batch_size=4, shuffle=True, seed=5, prefetch=prefetch)
    loader = sluice.Loader(ds, PIPE, **kw)
    for e in range(4):
        got = [y.tolist() for _, y in run_epoch(loader, e)]
        assert sorted(y for ys in got for y in ys) == list(range(N)), e
        assert [y.tolist() for _, y in run_epoch(sluice.Loader(ds, PIPE, **kw), e)] == got, e
    # A jump to another epoch than the one read ahead drops what was read ahead.
    jumped = [y.tolist() for _, y in run_epoch(loader, 9)]
    assert jumped == [y.tolist() for _, y in run_epoch(sluice.Loader(ds, PIPE, **kw), 9)]


def test_the_order_is_reproducible_and_new_each_epoch(server):
    def labels(ds, epoch, **kw):
        loader = sluice.Loader(ds, PIPE, batch_size=5, shuffle=True, seed=9, **dict(KW, **kw))
        return [y.tolist() for _, y in run_epoch(loader, epoch)]

    ds = sluice.WebDataset(pattern(server), shuffle_buffer=8, **FAST)
    first = labels(ds, 0)
    assert labels(ds, 0, num_threads=1, io_threads=1) == first
    assert labels(ds, 1) != first
    unshuffled = sluice.Loader(ds, PIPE, batch_size=5, shuffle=False, **KW)
    lanes = sluice.WebDataset(pattern(server), lanes=1, **FAST)
    plain = sluice.Loader(lanes, PIPE, batch_size=5, shuffle=False, **KW)
    assert [y for _, ys in run_epoch(plain) for y in ys.tolist()] == list(range(N)), "one lane, no shuffle: the stream"
    assert sorted(y for _, ys in run_epoch(unshuffled) for y in ys.tolist()) == list(range(N))


@pytest.mark.parametrize("world_after", [2, 3])
def test_resume_mid_epoch_at_the_same_or_another_world_size(server, world_after):
    ds = sluice.WebDataset(pattern(server), shuffle_buffer=6, **FAST)
    kw = dict(KW, batch_size=2, shuffle=True, seed=4)
    before = collections.Counter()
    states = []
    for rank in range(2):
        loader = sluice.Loader(ds, PIPE, rank=rank, world_size=2, **kw)
        loader.set_epoch(3)
        it = iter(loader)
        for _ in range(3):
            before.update(np.asarray(next(it)[1]).tolist())
        states.append(loader.state_dict())
        loader.close()
    after = collections.Counter()
    for rank in range(world_after):
        loader = sluice.Loader(ds, PIPE, rank=rank, world_size=world_after, **kw)
        loader.load_state_dict(states[0])
        for _, y in loader:
            after.update(np.asarray(y).tolist())
    assert sum(before.values()) == 12
    assert not set(before) & set(after)
    assert sorted(before + after) == list(range(N)) and max((before + after).values()) == 1
    if world_after == 2:  # the same schedule: rank 0's rest is exactly what it would have read
        whole = sluice.Loader(ds, PIPE, rank=0, world_size=2, **kw)
        labels = [y for _, ys in run_epoch(whole, 3) for y in ys.tolist()]
        resumed = sluice.Loader(ds, PIPE, rank=0, world_size=2, **kw)
        resumed.load_state_dict(states[0])
        assert [y for _, ys in resumed for y in np.asarray(ys).tolist()] == labels[6:]


# --- counts from a manifest --------------------------------------------------------------------

@pytest.fixture(scope="module")
def packed(tmp_path_factory, folder):
    """The same images packed by `sluice pack` (shards and manifest.json), served."""
    files = tmp_path_factory.mktemp("files")
    pairs = []
    for s in wds.WebDataset(os.path.join(folder, "shard-{0000..0005}.tar"), shardshuffle=False):
        path = files / f"{int(s['cls']):03d}.jpg"
        path.write_bytes(s["jpg"])
        pairs.append((str(path), int(s["cls"])))
    dst = tmp_path_factory.mktemp("packed")
    sluice.pack.pack(pairs, str(dst), shard_bytes=60 << 10, progress=False)
    server = ShardServer(str(dst))
    yield str(dst), server
    server.close()


def test_counts_come_from_the_manifest(packed):
    dst, server = packed
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(dst, "shard-*.tar")))
    urls = [server.url("ok", n) for n in names]
    ds = sluice.WebDataset(urls, **FAST)
    assert ds.walked_shards == 0 and len(ds) == N
    assert server.requests[f"/ok/{names[0]}"] == 0, "nothing read before the loader runs"
    assert ds.samples[1] == (urls[0] + "#1", -1)
    labels = [y for _, ys in run_epoch(sluice.Loader(ds, PIPE, batch_size=8, **KW)) for y in ys.tolist()]
    assert sorted(labels) == list(range(N))
    walked = sluice.WebDataset(urls, manifest=None, **FAST)
    assert walked.walked_shards == len(names) and len(walked) == N
    with pytest.raises(ValueError, match=r"manifest\.json: lists no shard named 'other\.tar'"):
        sluice.WebDataset(urls + [server.url("ok", "other.tar")], manifest=os.path.join(dst, "manifest.json"))
    with pytest.raises(FileNotFoundError):
        sluice.WebDataset(urls, manifest=os.path.join(dst, "nothing.json"))


def test_a_manifest_that_promises_more_fails_the_missing_samples(packed, tmp_path):
    dst, _ = packed
    m = json.load(open(os.path.join(dst, "manifest.json")))
    first = m["shards"][0]
    m["shards"][0]["samples"] += 2
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    shutil.copy(os.path.join(dst, first["name"]), tmp_path / first["name"])
    ds = sluice.WebDataset(str(tmp_path / first["name"]), mode="stream", index_cache=None)
    loader = sluice.Loader(ds, [T.CenterCrop(8)], batch_size=4, on_error="skip", **KW)
    got = [y for _, ys in loader for y in ys.tolist()]
    assert len(got) == first["samples"] - 2
    reasons = [s["reason"] for s in loader.stats()["skipped"]]
    assert len(reasons) == 2 and all(f"the shard ends after {first['samples'] - 2} samples" in r for r in reasons)


# --- pipe: and failing shards ------------------------------------------------------------------

def test_pipe_commands_read_the_shards(folder):
    ds = sluice.WebDataset(f"pipe:cat {folder}/shard-{{0000..0005}}.tar", **FAST)
    assert ds.mode == "stream" and len(ds) == N
    labels = [y for _, ys in run_epoch(sluice.Loader(ds, PIPE, batch_size=8, shuffle=True, **KW)) for y in ys.tolist()]
    assert sorted(labels) == list(range(N))


@pytest.mark.parametrize("bad", ["status404", "status500", "cut2000", "pipe"])
def test_a_shard_that_fails_is_skipped_and_reported_or_raises(folder, server, bad, tmp_path):
    good = [server.url("ok", f"shard-{i:04d}.tar") for i in (0, 1, 3, 4, 5)]
    bad_url = (f"pipe:head -c 600 {folder}/shard-0002.tar; exit 2" if bad == "pipe"
               else server.url(bad, "shard-0002.tar"))
    urls = good[:2] + [bad_url] + good[2:]
    manifest = write_manifest(tmp_path, [(f"shard-{i:04d}.tar", 7 if i < 5 else 2) for i in range(SHARDS)])
    ds = sluice.WebDataset(urls, manifest=manifest, retries=1, timeout=5.0, index_cache=None)
    batches = set()
    seen = collections.Counter()
    skipped = []
    for rank in range(2):
        loader = sluice.Loader(ds, [T.CenterCrop(8)], batch_size=4, on_error="skip", shuffle=True, rank=rank,
                               world_size=2, **KW)
        got = run_epoch(loader)
        batches.add(len(got))
        for _, y in got:
            seen.update(y.tolist())
        skipped += loader.stats()["skipped"]
    assert len(batches) == 1, "every rank yields the same number of batches: a DDP job does not wait"
    assert sorted(seen) == [i for i in range(N) if not 14 <= i < 21]
    assert len(skipped) == 7
    where = "exited with status 2 after 600 bytes" if bad == "pipe" else f"/{bad}/shard-0002.tar"
    assert all(where in s["reason"] for s in skipped), skipped[0]
    if bad == "cut2000":
        assert any("at byte 2000" in s["reason"] for s in skipped)
    raising = sluice.Loader(ds, [T.CenterCrop(8)], batch_size=4, **KW)
    with pytest.raises((OSError, sluice.DecodeError), match=where.replace(".", r"\.")):
        list(raising)


def test_close_does_not_wait_for_a_stalled_server(server, tmp_path):
    manifest = write_manifest(tmp_path, [("shard-0000.tar", 7)])  # nothing is read before the loader runs
    ds = sluice.WebDataset(server.url("stall", "shard-0000.tar"), manifest=manifest, timeout=30.0)
    loader = sluice.Loader(ds, [T.CenterCrop(8)], batch_size=4, **KW)
    it = iter(loader)
    threading.Timer(0.5, loader.close).start()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="closed"):
        next(it)
    assert time.monotonic() - t0 < 5  # the server stalls for 10 s: a close that waits it out fails


# --- the disk cache ----------------------------------------------------------------------------

def test_the_disk_cache_serves_later_epochs_and_keeps_whole_copies(folder, server, tmp_path):
    cache = tmp_path / "cache"
    ds = sluice.WebDataset(pattern(server), cache_dir=str(cache), manifest=None, index_cache=None)
    # The walk that counted the samples filled the cache.
    copies = sorted(glob.glob(str(cache / "*")))
    assert len(copies) == SHARDS
    for c in copies:
        name = c.rsplit("-", 2)[-2] + "-" + c.rsplit("-", 1)[-1]
        with open(c, "rb") as a, open(os.path.join(folder, name), "rb") as b:
            assert a.read() == b.read()
    before = sum(v for k, v in server.requests.items() if k.startswith("/ok/shard"))
    loader = sluice.Loader(ds, PIPE, batch_size=8, shuffle=True, **KW)
    for e in (0, 1):
        assert sorted(y for _, ys in run_epoch(loader, e) for y in ys.tolist()) == list(range(N))
    stats = loader.stats()
    assert stats["stream"]["shards_from_disk_cache"] == stats["stream"]["shards"] >= 2 * SHARDS  # + the next epoch's first
    loader.reset_stats()  # counted from here: at most the next epoch's first streams
    assert loader.stats().get("stream", {"shards": 0})["shards"] < SHARDS
    assert stats["disk_cache"]["hits"] >= 2 * SHARDS
    assert sum(v for k, v in server.requests.items() if k.startswith("/ok/shard")) == before, "no network"


def test_the_disk_cache_budget_evicts_and_failed_streams_leave_nothing(folder, server, tmp_path):
    sizes = sorted(os.path.getsize(p) for p in glob.glob(os.path.join(folder, "shard-*.tar")))
    budget = sizes[-1] + sizes[-2]  # room for about two shards
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / ("0" * 16 + "-shard-0000.tar.part-999999999-1")).write_bytes(b"half a shard")  # a dead job's
    ds = sluice.WebDataset(pattern(server), cache_dir=str(cache), cache_size=budget, index_cache=None)
    assert not list(cache.glob("*.part-*")), "leftovers of ended processes are removed"
    loader = sluice.Loader(ds, PIPE, batch_size=8, shuffle=True, **KW)
    for e in (0, 1):
        assert sorted(y for _, ys in run_epoch(loader, e) for y in ys.tolist()) == list(range(N))
    disk = loader.stats()["disk_cache"]
    assert disk["evictions"] > 0 and disk["bytes"] <= budget and disk["budget"] == budget
    loader.close()  # the next epoch's streams stop: what they were writing is removed
    assert not list(cache.glob("*.part-*"))
    assert sum(p.stat().st_size for p in cache.iterdir()) <= budget
    cut_cache = tmp_path / "cut"
    with pytest.raises(OSError, match="broke off at byte 3000"):
        sluice.WebDataset(server.url("cut3000", "shard-0000.tar"), cache_dir=str(cut_cache), retries=1,
                          index_cache=None)
    assert list(cut_cache.iterdir()) == [], "a copy is kept only once its stream ended cleanly"
    with pytest.raises(ValueError, match="cache_dir keeps copies of streamed shards"):
        sluice.WebDataset(os.path.join(folder, "shard-0000.tar"), cache_dir=str(cache))
    with pytest.raises(ValueError, match="cache='memory' keeps files and indexed shards"):
        sluice.Loader(ds, PIPE, batch_size=8, cache="memory")


def test_bad_arguments(server):
    for kw, match in ((dict(mode="fast"), "mode must be"), (dict(shuffle_buffer=0), "shuffle_buffer must be"),
                      (dict(lanes=0), "lanes must be"), (dict(retries=-1), "retries must be"),
                      (dict(timeout=0), "timeout must be"), (dict(cache_size=5), "cache_size is given but cache_dir")):
        with pytest.raises(ValueError, match=match):
            sluice.WebDataset(pattern(server), **{**FAST, **kw})
