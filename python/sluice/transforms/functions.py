"""User functions on each sample (Lambda), run on the loader's CPU threads."""
from __future__ import annotations

import contextlib
import random
import threading
import weakref
from typing import Any, Iterator

from .. import _core
from .base import Transform


_running = threading.local()  # .holders: the list of the loader whose user function this thread runs


def running_for(holders: list) -> bool:
    """Whether the calling thread is running one of the user functions kept in ``holders`` (a
    Loader's list): a function that calls its own loader."""
    return getattr(_running, "holders", None) is holders


_generators = threading.Lock()  # one user function at a time owns the global generators


@contextlib.contextmanager
def _seeded_generators(seed: int) -> Iterator[None]:
    """NumPy's and Python's global generators seeded from `seed` for the duration, then put back
    as they were. User functions hold them one at a time (a function that releases the GIL, as
    NumPy does, must not see another's draws); the caller's own state is restored after."""
    import numpy as np
    with _generators:
        np_state, py_state = np.random.get_state(), random.getstate()
        np.random.seed([seed & 0xFFFFFFFF, seed >> 32])
        random.seed(seed)
        try:
            yield
        finally:
            np.random.set_state(np_state)
            random.setstate(py_state)


class _Holder:
    __slots__ = ("fn", "__weakref__")

    def __init__(self, fn):
        self.fn = fn


def _returned(name: str, out: Any, arg: Any, shape: tuple, dtype: str, as_torch: bool) -> tuple[Any, str | None]:
    """What the function returned as an array to copy back (None: it changed its argument in
    place), or the error naming the function."""
    import numpy as np
    if as_torch:
        import torch
        if not isinstance(out, torch.Tensor):
            return None, f"{name}: returned {type(out).__name__}, expected torch.Tensor"
        if out.device.type != "cpu":
            return None, f"{name}: returned a tensor on {out.device}, expected one on the CPU"
        got_dtype = str(out.dtype).replace("torch.", "")
        arr = out.detach().numpy() if out is not arg else None
    else:
        if not isinstance(out, np.ndarray):
            return None, f"{name}: returned {type(out).__name__}, expected numpy.ndarray"
        got_dtype = str(out.dtype)
        arr = out if out is not arg else None
    if tuple(out.shape) != tuple(shape) or got_dtype != dtype:
        return None, (f"{name}: returned shape {tuple(out.shape)} and dtype {got_dtype}, expected "
                      f"shape {tuple(shape)} and dtype {dtype}")
    return arr, None


class Lambda(Transform):
    """Run ``lambd`` on each sample, on the loader's CPU threads (the GIL is held only while it
    runs), as torchvision's ``Lambda``. It gets the sample as the transforms before it leave it:
    an ``H x W x 3`` uint8 NumPy array before ``ToTensor``/``Normalize``; after them, the
    finished sample as a torch tensor (``3 x H x W`` float with the default ``dtype`` and
    ``layout``; a NumPy array with ``output="numpy"``). It returns the same kind, shape and dtype
    (or changes its argument in place). The argument is valid during the call only.

    NumPy's and Python's global generators (``np.random``, ``random``) are seeded for each call
    from ``(seed, epoch, sample index, position in the list)``, so a function that draws from
    them gives the same batches run after run, whatever the thread count; they are put back
    as they were after the call. Such functions therefore take turns (one runs at a time), and
    draws the training loop makes from those generators *while* one runs may repeat.
    ``torch``'s generator is not seeded. ``seed_globals=False`` (a sluice extension) leaves the
    generators alone and lets calls overlap where the function releases the GIL.

    User functions come after every geometric and colour transform; with ``device="cuda"`` the
    loader runs the list on the CPU and copies the batches to the GPU."""

    random = False

    def __init__(self, lambd, *, seed_globals: bool = True):
        if not callable(lambd):
            raise TypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        if not isinstance(seed_globals, bool):
            raise TypeError(f"Lambda: seed_globals must be a bool, got {seed_globals!r}")
        self.lambd = lambd
        self.seed_globals = seed_globals

    def _name(self) -> str:
        fn = self.lambd
        name = getattr(fn, "__name__", None) or type(fn).__name__
        return f"Lambda({name})"

    def _fields(self):  # pragma: no cover - the loader calls _spec_at
        raise TypeError("Lambda needs its place in the list: use compile_specs")

    def _spec_at(self, finished: bool, as_torch: bool, holders: list):
        name = self._name()
        # The C++ loader holds the runner; the runner reaches the function only through a weak
        # reference to a holder the Python Loader keeps. A strong one would make a cycle through
        # C++ (loader -> runner -> fn -> its module's globals -> loader) that no GC can break.
        holder = _Holder(self.lambd)
        holders.append(holder)
        ref = weakref.ref(holder)
        seeded = _seeded_generators if self.seed_globals else (lambda _seed: contextlib.nullcontext())

        def runner(buffer, shape, dtype, seed):
            import numpy as np
            held = ref()
            if held is None:
                return f"{name}: the loader is gone"
            _running.holders = holders
            try:
                view = np.frombuffer(buffer, dtype=dtype).reshape(shape)
                if as_torch:
                    import torch
                    arg = torch.from_numpy(view)
                else:
                    arg = view
                with seeded(seed):
                    out = held.fn(arg)
                arr, error = _returned(name, out, arg, shape, dtype, as_torch)
                if error is None and arr is not None:
                    np.copyto(view, arr)
                return error
            except Exception as e:  # the sample fails, naming the function; the loader adds the file
                return f"{name} raised {type(e).__name__}: {e}"
            finally:
                _running.holders = None

        return _core.transforms.make_lambda(runner, finished, name)
