"""CUDA_DEVICE_MAX_CONNECTIONS (sluice/_cuda_queues.py): set as sluice is imported, to 32 in a rank
of a multi-process job (WORLD_SIZE > 1) and to 16 in any other process, unless the user set it or
CUDA had started, and a warning for GPU loaders under NCCL with fewer than 32 queues. The hang it
prevents needs several GPUs and NCCL: bench/scaling_bench.py's 20-epoch jobs show it
(docs/benchmarks.md); here, what sluice does to the environment and when it warns."""
import os
import subprocess
import sys
import warnings

import pytest

from sluice import _cuda_queues

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def imported_value(env_value, before="", world_size="2"):
    """CUDA_DEVICE_MAX_CONNECTIONS after `before; import sluice` in a fresh interpreter started with
    WORLD_SIZE=world_size (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_DEVICE_MAX_CONNECTIONS", "WORLD_SIZE")}
    if world_size is not None:
        env["WORLD_SIZE"] = world_size
    if env_value is not None:
        env["CUDA_DEVICE_MAX_CONNECTIONS"] = env_value
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    code = f"{before}\nimport os, sluice\nprint(os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS'), sluice._cuda_queues.queues())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_sets_32_queues_in_a_rank_of_several_where_the_user_did_not():
    assert imported_value(None) == ["32", "32"]
    assert imported_value(None, world_size="4") == ["32", "32"]


def test_a_single_process_gets_16_queues():
    """Each queue is a hardware channel: with 32 per context only a few processes get a GPU at once,
    with CUDA's 8 one loader's streams wait behind each other."""
    assert imported_value(None, world_size=None) == ["16", "16"]
    assert imported_value(None, world_size="1") == ["16", "16"]
    assert imported_value(None, world_size="two") == ["16", "16"]


def test_a_value_the_user_set_is_kept():
    assert imported_value("4") == ["4", "4"]
    assert imported_value("1", before="import torch") == ["1", "1"]


def test_a_cuda_context_made_before_the_import_is_not_widened(monkeypatch):
    """torch.cuda already initialized: setting the variable now would change nothing, so the
    queues count as the default 8 (torch is asked, as on a GPU machine)."""
    import torch
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(_cuda_queues, "_too_late", False)
    _cuda_queues.widen_before_cuda()
    assert _cuda_queues.queues() == 8
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS")
    _cuda_queues.widen_before_cuda()
    assert os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] == "32" and _cuda_queues.queues() == 32
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS")
    monkeypatch.setenv("WORLD_SIZE", "1")
    _cuda_queues.widen_before_cuda()
    assert _cuda_queues.queues() == 8


@pytest.fixture
def gloo_group():
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    dist.init_process_group("gloo", rank=0, world_size=1)
    yield dist
    dist.destroy_process_group()


def warnings_for(route):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _cuda_queues.warn_if_narrow_under_nccl(route)
    return [str(w.message) for w in caught]


def test_warns_once_under_nccl_with_narrow_queues(monkeypatch, gloo_group):
    monkeypatch.setattr(_cuda_queues, "_warned", False)
    monkeypatch.setattr(_cuda_queues, "_too_late", False)
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8")
    assert warnings_for("auto") == []  # gloo: no NCCL kernels to wait behind
    # The backend as NCCL reports it (NCCL itself needs GPUs; the check reads only the name).
    monkeypatch.setattr(gloo_group, "get_backend", lambda *a: "nccl")
    assert warnings_for("cpu") == []  # no nvJPEG
    first = warnings_for("hardware")
    assert len(first) == 1 and "CUDA_DEVICE_MAX_CONNECTIONS=8" in first[0] and "=32" in first[0]
    assert warnings_for("auto") == []  # once
    monkeypatch.setattr(_cuda_queues, "_warned", False)
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32")
    assert warnings_for("auto") == []


def test_the_warning_says_when_the_variable_is_unset(monkeypatch, gloo_group):
    """The variable unset (a user removed it after the import): CUDA's 8 queues, warned. A process
    that no launcher started as a rank (mp.spawn) gets 16 at import, and is warned too."""
    monkeypatch.setattr(_cuda_queues, "_warned", False)
    monkeypatch.setattr(_cuda_queues, "_too_late", False)
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    monkeypatch.setattr(gloo_group, "get_backend", lambda *a: "nccl")
    got = warnings_for("auto")
    assert len(got) == 1 and "CUDA_DEVICE_MAX_CONNECTIONS is not set" in got[0] and "8 hardware queues" in got[0]
    monkeypatch.setattr(_cuda_queues, "_warned", False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    _cuda_queues.widen_before_cuda()
    got = warnings_for("auto")
    assert len(got) == 1 and "CUDA_DEVICE_MAX_CONNECTIONS=16" in got[0] and "16 hardware queues" in got[0]


def test_no_warning_without_a_process_group(monkeypatch):
    monkeypatch.setattr(_cuda_queues, "_warned", False)
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2")
    assert warnings_for("auto") == []
