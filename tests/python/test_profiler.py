"""The loader's work on the consumer's thread in a torch profiler trace: one "sluice.next" range per
call of next() (each batch, and the call that ends the epoch), none while the profiler is off.
(The stages on the loader's own threads are NVTX ranges: tests/nvtx/nvtx_test.cc.)"""
import pytest

import sluice
import sluice.transforms as T

torch = pytest.importorskip("torch")


def _loader(folder: str) -> sluice.Loader:
    return sluice.Loader(folder, [T.RandomResizedCrop(32), T.ToTensor()], batch_size=8, num_threads=2)


def test_each_next_is_a_range_in_the_trace(small_folder):
    loader = _loader(small_folder)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        batches = sum(1 for _ in loader)
    assert batches == len(loader)
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts.get("sluice.next") == batches + 1  # the last call raises StopIteration
    loader.close()


def test_nothing_is_recorded_without_the_profiler(small_folder, monkeypatch):
    calls = []
    monkeypatch.setattr(torch.autograd.profiler, "record_function", lambda name: calls.append(name))
    loader = _loader(small_folder)
    assert sum(1 for _ in loader) == len(loader)
    assert calls == []
    loader.close()
