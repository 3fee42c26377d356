"""The loader's tuner (src/pipeline/load_tuner.h) with real files and a real consumer: a training
step slower than loading lets it give up threads it does not need; a fast one keeps them all;
given num_threads, io_threads and prefetch are left alone; stats() says what it chose and why. On
the GPU path, I/O threads and prefetch are tuned and the compute threads are not."""
import time

import pytest

import sluice
import sluice.transforms as T
from sluice import datasets


def _folder(tmp_path) -> str:
    root = str(tmp_path / "data")
    datasets.make_dataset(root, num_images=64, num_classes=2, width=(80, 120), progress=False)
    return root


def _run(loader: sluice.Loader, epochs: int, step_s: float) -> None:
    for _ in range(epochs):
        for _batch in loader:
            time.sleep(step_s)  # the training step


def test_a_slow_consumer_lets_the_tuner_give_up_threads(tmp_path):
    root = _folder(tmp_path)
    loader = sluice.Loader(root, [T.RandomResizedCrop(32), T.ToTensor()], batch_size=4, output="numpy")
    all_threads = loader.stats()["num_threads"]
    if all_threads < 2:
        pytest.skip("one CPU: no thread to give up")
    # Steps of 40 ms: the loader keeps up with one thread. Each try (a quarter fewer) takes two
    # windows, so 16 cores take longer to come down than 2: epochs until it settles, at most 60 s.
    deadline = time.time() + 60
    while not loader.stats()["tuning"]["settled"] and time.time() < deadline:
        _run(loader, 1, 0.04)
    stats = loader.stats()
    assert stats["tuning"]["settled"], stats["tuning"]
    assert stats["num_threads"] < all_threads, stats["tuning"]
    assert "keeps its pace" in stats["tuning"]["why"] or "fewer slowed it" in stats["tuning"]["why"]
    assert stats["prefetch"] == 2
    # It holds there: more steps change nothing.
    settled = stats["num_threads"]
    _run(loader, 4, 0.04)
    assert loader.stats()["num_threads"] == settled
    loader.close()


def test_a_fast_consumer_keeps_every_thread(tmp_path):
    root = _folder(tmp_path)
    loader = sluice.Loader(root, [T.RandomResizedCrop(96), T.ToTensor()], batch_size=4, output="numpy")
    all_threads = loader.stats()["num_threads"]
    deadline = time.time() + 20
    while not loader.stats()["tuning"]["settled"] and time.time() < deadline:
        _run(loader, 1, 0.0)
    stats = loader.stats()
    assert stats["tuning"]["settled"], stats["tuning"]
    assert stats["num_threads"] == all_threads
    assert stats["tuning"]["why"].startswith("loader-bound"), stats["tuning"]
    assert 2 <= stats["io_threads"] <= 8  # 2, or more where reading gained


def test_given_values_are_not_tuned(tmp_path):
    root = _folder(tmp_path)
    loader = sluice.Loader(root, [T.RandomResizedCrop(32), T.ToTensor()], batch_size=4, output="numpy",
                           num_threads=2, prefetch=3, io_threads=1)
    _run(loader, 4, 0.04)
    stats = loader.stats()
    assert (stats["num_threads"], stats["prefetch"], stats["io_threads"]) == (2, 3, 1)
    assert stats["tuning"] == {"settled": True,
                               "why": "nothing to tune: num_threads, io_threads and prefetch were given"}


def test_auto_is_the_default(tmp_path):
    root = _folder(tmp_path)
    tf = [T.RandomResizedCrop(32), T.ToTensor()]
    auto = sluice.Loader(root, tf, batch_size=4, num_threads="auto", io_threads="auto", prefetch="auto")
    unset = sluice.Loader(root, tf, batch_size=4)
    assert auto.options.num_threads == unset.options.num_threads
    assert auto.stats()["tuning"] == unset.stats()["tuning"] == {"settled": False, "why": "measuring"}
    with pytest.raises(TypeError, match="num_threads"):
        sluice.Loader(root, tf, batch_size=4, num_threads="fast")


needs_gpu = pytest.mark.skipif(getattr(sluice._core, "cuda_device_count", lambda: 0)() == 0, reason="needs a GPU")


@needs_gpu
def test_gpu_path_tunes_io_threads_and_prefetch_not_compute_threads(tmp_path):
    """On the GPU path a consumer that takes batches as fast as they come makes the loader the
    bottleneck: the tuner tries more I/O threads and a deeper prefetch and settles; the compute
    threads stay where they were resolved (the route scheduler splits the decoding)."""
    root = str(tmp_path / "gpu_data")  # batches of 64 larger images: loading outweighs the loop's own time
    datasets.make_dataset(root, num_images=256, num_classes=2, width=(300, 400), progress=False)
    loader = sluice.Loader(root, [T.RandomResizedCrop(224), T.ToTensor()], batch_size=64, device="cuda")
    threads = loader.options.num_threads
    deadline = time.monotonic() + 60  # windows of 0.5 s and 8 batches: warm-up, base, I/O, prefetch
    while not loader.stats()["tuning"]["settled"] and time.monotonic() < deadline:
        _run(loader, 1, 0.0)
    stats = loader.stats()
    assert stats["tuning"]["settled"] and stats["tuning"]["why"].startswith("loader-bound"), stats["tuning"]
    assert stats["num_threads"] == threads
    # Batches of 64 start at 4 I/O threads, prefetch 4; 8 I/O threads are tried at prefetch 2,
    # a deeper prefetch (+2) after that.
    assert (stats["io_threads"], stats["prefetch"]) in {(4, 4), (4, 6), (8, 2), (8, 4)}, stats["tuning"]
    given = sluice.Loader(root, [T.RandomResizedCrop(32), T.ToTensor()], batch_size=4, device="cuda",
                          io_threads=2, prefetch=3)
    assert given.stats()["tuning"] == {"settled": True, "why": "nothing to tune: io_threads and prefetch were given "
                                                               "(the GPU path's decoding split is its route scheduler's)"}
