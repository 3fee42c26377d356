"""A loader's place in an epoch as a plain, checkpointable dict: the format of
``Loader.state_dict`` and ``Loader.load_state_dict``. The C++ core checks what the state says
(``_core.Loader.load_state``); this module packs and unpacks it."""
from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np

# /2: resumed_from is a base64 str, so that a state holds only ints, strings and bools and loads
# with torch.load(weights_only=True) (the default from torch 2.6); /1 (bytes) still loads.
FORMAT = "sluice.Loader/2"
FORMATS = ("sluice.Loader/1", FORMAT)
# The keys of a state dict besides "format".
KEYS = ("epoch", "batches", "epoch_batches", "num_samples", "dataset_digest", "shuffle", "seed", "batch_size",
        "world_size", "last_batch", "next_epoch", "resumed_from")


def to_dict(core: dict, next_epoch: int) -> dict:
    """The state dict of a core state (``_core.Loader.state()``; its one flag per position of a
    resumed epoch packed into bits) and the epoch the next iteration starts."""
    core = dict(core)
    flags = np.frombuffer(core.pop("resumed_from"), dtype=np.uint8)
    packed = base64.b64encode(np.packbits(flags).tobytes()).decode("ascii") if flags.size else ""
    return {"format": FORMAT, **core, "next_epoch": next_epoch, "resumed_from": packed}


def from_dict(state: Any) -> dict:
    """The core state of a state dict (what ``_core.Loader.load_state`` takes, with
    ``next_epoch``). Raises TypeError or ValueError for what is not one."""
    if not isinstance(state, dict):
        raise TypeError(f"load_state_dict: state must be a dict from Loader.state_dict(), got "
                        f"{type(state).__name__}")
    if state.get("format") not in FORMATS:
        raise ValueError(f"load_state_dict: not a sluice.Loader state (format {state.get('format')!r}, "
                         f"expected {FORMAT!r})")
    missing = [k for k in KEYS if k not in state]
    if missing:
        raise ValueError(f"load_state_dict: the state is missing {', '.join(map(repr, missing))}")
    core = {k: state[k] for k in KEYS}
    core["resumed_from"] = b""
    packed = state["resumed_from"]
    if isinstance(packed, str):
        try:
            packed = base64.b64decode(packed, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("load_state_dict: malformed state: resumed_from is not base64") from None
    if packed:
        if not isinstance(packed, (bytes, bytearray)):
            raise ValueError(f"load_state_dict: malformed state: resumed_from is a {type(packed).__name__}")
        bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8))
        n = state["num_samples"]
        if bits.size < n or bits[n:].any():
            raise ValueError(f"load_state_dict: malformed state: resumed_from does not hold {n} flags")
        core["resumed_from"] = bits[:n].tobytes()
    return core
