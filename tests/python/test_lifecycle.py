"""A loader's life from several threads, a forked child, Ctrl-C and a system that cannot start
threads. The cases that used to crash or hang run in a child process with a time limit, so that a
regression fails its test instead of the test run."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import sluice
import sluice.transforms as T
from conftest import PYTHON_DIR, ROOT, SANITIZED, run_child
from sluice import datasets


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    """40 small JPEGs in 4 classes."""
    root = str(tmp_path_factory.mktemp("lifecycle"))
    datasets.make_dataset(root, num_images=40, num_classes=4, width=(48, 64), progress=False)
    return root


def digests(batches) -> list[str]:
    return sorted(hashlib.sha1(np.ascontiguousarray(x).tobytes()).hexdigest() for x in batches)


def make(folder: str, transforms=None, **kw) -> sluice.Loader:
    kw.setdefault("batch_size", 2)
    kw.setdefault("num_threads", 2)
    return sluice.Loader(folder, transforms or [T.CenterCrop(32)], dtype="uint8", output="numpy", **kw)


def test_threads_sharing_one_iterator_get_every_batch_once(folder):
    expected = digests(x for x, _ in make(folder))
    loader = make(folder)
    for _ in range(3):
        it = iter(loader)
        got, lock = [], threading.Lock()

        def drain():
            for x, _ in it:
                with lock:
                    got.append(x)
        threads = [threading.Thread(target=drain) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(got) == len(loader)
        loader.set_epoch(0)
        assert digests(got) == expected


def test_close_from_another_thread_mid_epoch(folder):
    r = run_child(f"""
        import threading, time, sluice, sluice.transforms as T
        def slow(x):
            time.sleep(0.002)
            return x
        for round in range(30):
            loader = sluice.Loader({folder!r}, [T.CenterCrop(32), T.Lambda(slow)], batch_size=2, num_threads=2,
                                   output="numpy")
            errors = []
            it = iter(loader)
            def drain():
                try:
                    for _ in it:
                        pass
                except RuntimeError as e:
                    errors.append(str(e))
            threads = [threading.Thread(target=drain) for _ in range(2)]
            for t in threads: t.start()
            time.sleep(0.001 * (round % 10))
            loader.close()
            for t in threads: t.join(10)
            assert not any(t.is_alive() for t in threads), "a thread still waits"
            assert all(e == "the loader is closed" for e in errors), errors
            try:
                iter(loader)
            except RuntimeError as e:
                assert str(e) == "the loader is closed"
            else:
                raise AssertionError("iterating a closed loader")
        print("ok")
    """, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_new_iteration_from_another_thread_invalidates_the_old(folder):
    loader = make(folder, num_threads=1)
    for _ in range(20):
        first = iter(loader)
        next(first)
        started, errors = [], []

        def drain():  # races with iter() below: the whole epoch, or invalidated
            try:
                for _ in first:
                    pass
            except RuntimeError as e:
                errors.append(str(e))
        t = threading.Thread(target=drain, daemon=True)
        t.start()
        started.append(list(iter(loader)))
        t.join(60)
        assert len(started[0]) == len(loader)  # the new iteration got a whole epoch
        assert all("invalidated" in e for e in errors), errors
        with pytest.raises((RuntimeError, StopIteration)):
            next(first)


def test_a_lambda_that_closes_its_loader(folder):
    r = run_child(f"""
        import sluice, sluice.transforms as T
        holder = {{}}
        def close_it(x):
            holder["loader"].close()
            return x
        loader = sluice.Loader({folder!r}, [T.CenterCrop(32), T.Lambda(close_it)], batch_size=4, output="numpy")
        holder["loader"] = loader
        try:
            for _ in loader:
                pass
        except RuntimeError as e:
            assert str(e) == "the loader is closed", e
            print("closed from its own Lambda")
        else:
            raise AssertionError("no error")
        loader.close()
    """, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "closed from its own Lambda" in r.stdout


def test_a_lambda_that_iterates_its_loader_is_refused(folder):
    holder = {}

    def iterate(x):
        iter(holder["loader"])
        return x
    loader = make(folder, [T.CenterCrop(32), T.Lambda(iterate)])
    holder["loader"] = loader
    with pytest.raises(ValueError, match="a Lambda of this loader cannot iterate or resume it"):
        next(iter(loader))
    loader.close()
    holder.clear()  # the cycle loader -> iterate -> holder -> loader, for the leak check at exit


def test_a_forked_child_gets_a_clear_error(folder):
    r = run_child(f"""
        import os, sluice, sluice.transforms as T
        loader = sluice.Loader({folder!r}, [T.CenterCrop(32)], batch_size=4, output="numpy")
        it = iter(loader)
        next(it)
        pid = os.fork()
        if pid == 0:
            try:
                next(it)
            except RuntimeError as e:
                ok = "forked child" in str(e)
                print(e, flush=True)
                os._exit(0 if ok else 3)
            os._exit(4)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert len(list(it)) == len(loader) - 1  # the parent goes on
    """, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "a forked child" in r.stdout and "cannot use it" in r.stdout


def test_ctrl_c_interrupts_a_long_batch_within_a_second(folder):
    # One thread, 0.5 s per sample, 16 samples a batch: 8 s for the first batch.
    r = run_child(f"""
        import os, signal, threading, time, sluice, sluice.transforms as T
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIGINT ignored
        def slow(x):
            time.sleep(0.5)
            return x
        loader = sluice.Loader({folder!r}, [T.CenterCrop(32), T.Lambda(slow)], batch_size=16, num_threads=1,
                               output="numpy")
        sent = []
        def interrupt():
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)
        threading.Timer(1.0, interrupt).start()
        try:
            next(iter(loader))
        except KeyboardInterrupt:
            print(f"interrupted after {{time.monotonic() - sent[0]:.2f}} s")
        t0 = time.monotonic()
        loader.close()
        print(f"closed in {{time.monotonic() - t0:.2f}} s")
    """, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = dict(line.split(" in ") if " in " in line else line.split(" after ") for line in r.stdout.splitlines())
    assert float(lines["interrupted"].split()[0]) < 1.0, r.stdout
    assert float(lines["closed"].split()[0]) < 1.5, r.stdout  # waits for the sample in progress


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer needs more address space than the limit leaves")
def test_threads_that_cannot_start_raise(folder):
    r = run_child(f"""
        import resource, sluice, sluice.transforms as T
        pages = int(open("/proc/self/statm").read().split()[0])
        limit = pages * resource.getpagesize() + (256 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            sluice.Loader({folder!r}, [T.CenterCrop(32)], num_threads=400, output="numpy")
        except MemoryError as e:
            print(e)
    """, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cannot start thread" in r.stdout and "of 400 (sluice-cpu)" in r.stdout, r.stdout


@pytest.mark.skipif(not os.path.exists("/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"),
                    reason="needs glibc's debug malloc")
@pytest.mark.skipif(SANITIZED, reason="another malloc cannot be preloaded beside AddressSanitizer's")
def test_create_drain_close_under_debug_malloc(folder):
    # glibc's checking allocator fills freed memory with 0xa5 (165): a thread that used a pool after
    # close() freed it hung in pthread_cond_signal within a few thousand rounds.
    r = run_child(f"""
        import time, sluice, sluice.transforms as T
        t0 = time.monotonic()
        rounds = 0
        while rounds < 150 or time.monotonic() - t0 < 20:  # 20 s, longer on a slow machine
            loader = sluice.Loader({folder!r}, [T.RandomResizedCrop(32)], batch_size=8, num_threads=2,
                                   output="numpy")
            for _ in loader:
                pass
            loader.close()
            rounds += 1
        print(rounds, "rounds")
    """, timeout=300, env={"LD_PRELOAD": "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0", "MALLOC_CHECK_": "3",
                           "MALLOC_PERTURB_": "165"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.split()[0]) >= 150, r.stdout


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer's quarantine holds freed memory by design")
def test_cpu_soak_is_flat(tmp_path):
    # 100 epochs in a fresh process: host RSS level within 16 MiB after warm-up (bench/soak.py).
    data = tmp_path / "soak"
    datasets.make_dataset(str(data), num_images=64, num_classes=2, width=(48, 64), progress=False)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "soak.py"), str(data), "--epochs", "100",
                        "--batch-size", "16"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "soak cpu: 100 epochs of 64 samples" in r.stdout and ": flat" in r.stdout, r.stdout
