"""Stress: several threads, close races and bad files at once, for a while. In the normal suite
each test runs a few seconds; `make asan` runs them longer (SLUICE_STRESS_SECONDS) against a module
built with AddressSanitizer + UndefinedBehaviorSanitizer, where a race on freed memory is a report
rather than luck."""
from __future__ import annotations

import gc
import os
import random
import threading
import time
from collections import Counter

import pytest
from PIL import Image

import sluice
import sluice.transforms as T
from conftest import photo, pil_bytes

SECONDS = float(os.environ.get("SLUICE_STRESS_SECONDS", "3"))
PIPE = [T.RandomResizedCrop(24), T.RandomHorizontalFlip()]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Two classes of 12 good JPEGs/PNGs/WebPs, and one bad file of each kind among them."""
    root = tmp_path_factory.mktemp("stress")
    good, bad = [], {}
    for c in ("a", "b"):
        (root / c).mkdir()
        for i in range(12):
            fmt, ext = [("JPEG", "jpg"), ("PNG", "png"), ("WEBP", "webp")][i % 3]
            p = root / c / f"{i}.{ext}"
            p.write_bytes(pil_bytes(Image.fromarray(photo(40 + i, 32, seed=i)), fmt))
            good.append(str(p))
    ok = pil_bytes(Image.fromarray(photo(64, 48)), "JPEG", quality=90)
    bad_bytes = {
        "truncated.jpg": ok[: len(ok) // 2],
        "corrupt.jpg": ok[:200] + bytes(range(256)) * 4,  # a header, then bytes no JPEG has
        "empty.jpg": b"",
        "text.jpg": b"this is not an image\n" * 10,
        "truncated.png": pil_bytes(Image.fromarray(photo(30, 20)), "PNG")[:60],
        "gif.jpg": pil_bytes(Image.fromarray(photo(8, 8)), "GIF"),
    }
    for name, data in bad_bytes.items():
        p = root / "a" / name
        p.write_bytes(data)
        bad[str(p)] = name
    fifo = root / "b" / "pipe.jpg"
    os.mkfifo(fifo)
    bad[str(fifo)] = "pipe.jpg"
    return str(root), good, bad


def loader_for(root: str, **kw) -> sluice.Loader:
    kw.setdefault("batch_size", 4)
    kw.setdefault("num_threads", 3)
    return sluice.Loader(root, PIPE, on_error="skip", dtype="uint8", output="numpy", **kw)


def join_all(threads, timeout: float = 30) -> None:
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread still waits"


def test_threads_share_epochs_over_bad_files(mixed):
    """4 threads drain each epoch's iterator together; every good file comes once an epoch, every
    bad one is skipped with its path, for as long as SECONDS allows."""
    root, good, bad = mixed
    loader = loader_for(root, shuffle=True)
    deadline, epochs = time.monotonic() + SECONDS, 0
    while epochs < 2 or time.monotonic() < deadline:
        before = loader.stats()["skipped_count"]
        it = iter(loader)
        labels, lock = Counter(), threading.Lock()

        def drain():
            for _, y in it:
                with lock:
                    labels.update(int(v) for v in y)
        threads = [threading.Thread(target=drain) for _ in range(4)]
        for t in threads:
            t.start()
        join_all(threads)
        assert labels == Counter({0: 12, 1: 12}), labels
        stats = loader.stats()
        assert stats["skipped_count"] - before == len(bad)
        if before + len(bad) <= 1000:  # stats() lists the first 1000 skips
            assert sorted(s["path"] for s in stats["skipped"][before:]) == sorted(bad)
        epochs += 1
    loader.close()


def test_close_iterate_and_drop_from_threads_at_random_moments(mixed):
    """Rounds of: two threads iterating while the main thread closes the loader, starts a new
    iteration, saves and restores its state, or drops it unclosed for the garbage collector.
    Only "the loader is closed", or after a new iteration or a restored state "this iterator was
    invalidated", may be raised; no thread may be left waiting."""
    root, _, _ = mixed
    rng = random.Random(15)
    deadline, rounds = time.monotonic() + SECONDS, 0
    while rounds < 20 or time.monotonic() < deadline:
        loader = loader_for(root, num_threads=rng.choice([1, 2, 4]), prefetch=rng.choice([1, 2, 3]))
        errors: list[str] = []

        def drain(it):
            try:
                for _ in it:
                    time.sleep(0.0005)
            except RuntimeError as e:
                errors.append(str(e))
        it = iter(loader)
        threads = [threading.Thread(target=drain, args=(it,)) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(rng.random() * 0.01)
        action = rng.choice(["close", "iter", "state", "drop"])
        if action == "close":
            loader.close()
        elif action == "iter":
            next(iter(loader), None)
        elif action == "state":
            state = loader.state_dict()
            loader.load_state_dict(state)
        join_all(threads)
        allowed = ["the loader is closed"] + (["this iterator was invalidated"] if action in ("iter", "state") else [])
        assert all(any(e.startswith(a) for a in allowed) for e in errors), (action, errors)
        if action == "drop":
            del loader, threads
            gc.collect()
        else:
            loader.close()
        rounds += 1


def test_each_bad_file_raises_naming_it(mixed):
    _, good, bad = mixed
    for path, name in sorted(bad.items()):
        loader = sluice.Loader([(good[0], 0), (path, 1)], PIPE, batch_size=2, output="numpy")
        with pytest.raises(sluice.DecodeError, match=name.replace(".", r"\.")):
            for _ in loader:
                pass
        loader.close()
