"""CUDA_DEVICE_MAX_CONNECTIONS: how many hardware work queues a CUDA context gets (8 by default).

With few queues, the work of unrelated streams shares one and waits behind whatever is ahead of it.
Under DDP with NCCL, an NCCL kernel waiting for another rank then holds back nvJPEG's work, whose
decode call blocks until that work is done, and the ranks can hang for good: 20-epoch jobs on two
H200s hung in 5 of 5 runs with the default (decode_route "auto" and "hardware", nvJPEG waiting in
cuEventSynchronize on both ranks) and in none of 6 with 32 (issue 21, docs/benchmarks.md).

Wide queues cost: each is a hardware channel, and a GPU has a fixed number of them. On an H200,
64 processes started 0.3 s apart got 4 contexts with 32 queues (20 "out of memory" errors from
cudaSetDevice, with 3.4 of 139 GiB in use), 9 with 16 and 34 with 8 (no errors printed). Narrow ones
cost too: one loader's streams (16-17 nvJPEG states among them) wait behind each other, and on
an H200 the engine route ran 7.2% slower with 8 than with 32, auto 6.0% slower with 8 than with 16
(docs/benchmarks.md). So sluice sets 32 in a process that a launcher started as one of several
(WORLD_SIZE > 1, as torchrun sets), where the hang can happen, and 16 in any other, where the user
has not set the variable and this process has no CUDA context yet. The variable counts only when a
context is made, so this runs as sluice is imported; a GPU loader under NCCL with fewer queues
warns once, saying what to do.
"""
import os
import sys
import warnings

WIDE = 32  # the most CUDA allows: a rank of several
SINGLE = 16  # a process on its own: faster than 8, more contexts per GPU than 32
_VAR = "CUDA_DEVICE_MAX_CONNECTIONS"
_too_late = False  # a CUDA context (torch's) existed before sluice could set the variable
_warned = False


def _one_of_several_ranks() -> bool:
    """Whether a launcher (torchrun, torch.distributed.launch) started this process as one of several."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        return False


def widen_before_cuda() -> None:
    """Sets the variable for this process's CUDA contexts where the user has not set it (at import)."""
    global _too_late
    if _VAR in os.environ:
        return
    torch = sys.modules.get("torch")
    _too_late = bool(torch is not None and torch.cuda.is_initialized())
    os.environ[_VAR] = str(WIDE if _one_of_several_ranks() else SINGLE)


def queues() -> int:
    """The hardware queues this process's CUDA contexts have (as far as the environment says)."""
    if _too_late:
        return 8
    try:
        return int(os.environ.get(_VAR, "8"))
    except ValueError:
        return 8


def warn_if_narrow_under_nccl(decode_route: str) -> None:
    """Warns (once) when a GPU loader that may call nvJPEG runs under NCCL with fewer than 32 queues."""
    global _warned
    if _warned or decode_route == "cpu" or queues() >= WIDE:
        return
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized() or "nccl" not in str(dist.get_backend()):
        return
    _warned = True
    if _too_late:
        why = "CUDA started before sluice was imported"
    else:
        why = f"{_VAR}={os.environ[_VAR]}" if _VAR in os.environ else f"{_VAR} is not set (CUDA's default)"
    warnings.warn(f"sluice: {why}: this process's CUDA work shares {queues()} hardware queues, and under NCCL "
                  f"nvJPEG's work can wait behind an NCCL kernel that waits for another rank, which can hang "
                  f"the job. Set {_VAR}={WIDE} before CUDA starts (or import sluice before torch uses the "
                  f"GPU in a process with WORLD_SIZE > 1, as torchrun starts), or use decode_route='cpu'.",
                  RuntimeWarning, stacklevel=3)
