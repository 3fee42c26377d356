"""A torch.profiler range around the loader's work on the consumer's thread ("sluice.next":
waiting for a batch, then making tensors of it and running the batch transforms), so that a torch
profiler trace shows it beside the model's ops. The loader's own threads mark their stages with
NVTX ranges (Nsight Systems). Nothing is recorded, and nothing imported, when torch is not loaded
or its profiler is off."""
from __future__ import annotations

import contextlib
import sys
from typing import Any


def record(name: str) -> Any:
    """A context manager: torch's record_function(name) while torch's profiler runs, else a no-op."""
    torch = sys.modules.get("torch")
    profiler = getattr(getattr(torch, "autograd", None), "profiler", None)
    if profiler is None or not getattr(profiler, "_is_profiler_enabled", False):
        return contextlib.nullcontext()
    return profiler.record_function(name)
