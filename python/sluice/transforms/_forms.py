"""torchvision's argument forms, turned into the fields of the C++ descriptions.

These only convert: ``224`` into ``(224, 224)``, ``fill=0`` into ``(0, 0, 0)``, ``degrees=10``
into ``(-10, 10)``. A value of the wrong kind is a TypeError naming the transform and the argument;
whether a value is allowed (positive, in range, ordered) is checked once, in C++, when the
description is made (``sluice._core.transforms.make``).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence


def is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def interpolation(value: Any) -> Any:
    """sluice's or torchvision's InterpolationMode, or a string, as the name C++ parses."""
    name = getattr(value, "value", value)
    return name.lower() if isinstance(name, str) else name


def size(owner: str, value: Any, name: str = "size") -> tuple[int, int]:
    """torchvision's _setup_size: int -> (s, s); [s] -> (s, s); (h, w) -> (h, w)."""
    if is_int(value):
        return int(value), int(value)
    if isinstance(value, Sequence) and len(value) in (1, 2) and all(is_int(s) for s in value):
        return int(value[0]), int(value[-1])
    raise TypeError(f"{owner}: {name} must be an int or a sequence of one or two ints, got {value!r}")


def pair(owner: str, name: str, value: Any) -> tuple[float, float]:
    if not (isinstance(value, Sequence) and len(value) == 2 and all(is_number(v) for v in value)):
        raise TypeError(f"{owner}: {name} must be a sequence of two numbers, got {value!r}")
    return float(value[0]), float(value[1])


def fill(owner: str, value: Any) -> tuple[Any, Any, Any]:
    """A number, or one or three, as three pixel values (rounded to integers)."""
    if is_number(value):
        vals = [value] * 3
    elif isinstance(value, Sequence) and len(value) in (1, 3) and all(is_number(v) for v in value):
        vals = list(value) * (3 if len(value) == 1 else 1)
    else:
        raise TypeError(f"{owner}: fill must be a number or a sequence of 1 or 3 numbers, got {value!r}")
    return tuple(int(round(v)) if math.isfinite(v) else v for v in vals)  # type: ignore[return-value]


def padding(owner: str, value: Any, padding_mode: str) -> tuple[int, int, int, int]:
    """torchvision's padding argument as (left, top, right, bottom): an int for every side,
    (left/right, top/bottom), or (left, top, right, bottom)."""
    if is_int(value):
        pad = (int(value),) * 4
    elif isinstance(value, Sequence) and len(value) in (1, 2, 4) and all(is_int(p) for p in value):
        p = [int(v) for v in value]
        pad = (p[0],) * 4 if len(p) == 1 else ((p[0], p[1], p[0], p[1]) if len(p) == 2 else tuple(p))
    else:
        raise TypeError(f"{owner}: padding must be an int or a sequence of 1, 2 or 4 ints, got {value!r}")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError(f"{owner}: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric', got "
                         f"{padding_mode!r}")
    return pad  # type: ignore[return-value]


def symmetric_range(owner: str, name: str, value: Any, lengths: tuple[int, ...] = (2,)) -> tuple[float, ...]:
    """torchvision's _setup_number_or_seq: a number v >= 0 gives (-v, v); else a sequence of one
    of the allowed lengths."""
    if is_number(value):
        if value < 0:
            raise ValueError(f"{owner}: if {name} is a single number, it must be non-negative, got {value!r}")
        return -float(value), float(value)
    if isinstance(value, Sequence) and len(value) in lengths and all(is_number(v) for v in value):
        return tuple(float(v) for v in value)
    raise TypeError(f"{owner}: {name} must be a number or a sequence of "
                    f"{' or '.join(map(str, lengths))} numbers, got {value!r}")


def min_max(owner: str, name: str, value: Any) -> tuple[float, float]:
    """A number v gives (v, v) (fixed); a pair is (min, max) drawn uniformly per sample."""
    if is_number(value):
        return float(value), float(value)
    if isinstance(value, Sequence) and len(value) == 2 and all(is_number(v) for v in value):
        return float(value[0]), float(value[1])
    raise TypeError(f"{owner}: {name} must be a number or a (min, max) pair, got {value!r}")


def one_or_three(owner: str, name: str, value: Any) -> tuple[float, float, float]:
    """A number, or a sequence of one or three numbers (one per RGB channel), as three floats."""
    if is_number(value):
        value = [value]
    if not isinstance(value, Sequence) and hasattr(value, "tolist") and getattr(value, "ndim", None) in (0, 1):
        value = value.tolist()  # a NumPy array or a torch tensor, as torchvision takes them
        value = [value] if is_number(value) else value
    if not (isinstance(value, Sequence) and len(value) in (1, 3) and all(is_number(v) for v in value)):
        raise TypeError(f"{owner}: {name} must be a number or a sequence of 1 or 3 numbers (RGB), got {value!r}")
    return tuple(float(v) for v in value) * (3 if len(value) == 1 else 1)  # type: ignore[return-value]
