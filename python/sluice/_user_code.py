"""What the command line takes from the user as Python: an expression (``--transform
"[T.Resize(256), T.CenterCrop(224)]"``) or ``@FILE.py:NAME``, an object of the user's own file.
``sluice bench``, ``preview`` and ``doctor`` read ``--transform`` here, and ``doctor`` its
``--model``, so that every command takes them the same way and says the same about a mistake."""
from __future__ import annotations

import builtins
import hashlib
import importlib.util
import os
import sys
from typing import Any

import numpy as np

from . import transforms as T

__all__ = ["load_file_object", "load_transform", "transform_arg"]


def load_file_object(spec: str, option: str, example: str) -> Any:
    """The object NAME of FILE for ``spec`` = ``@FILE.py:NAME``: the file runs as a module (its
    folder is on ``sys.path`` while it runs, for its own imports). ``option`` (``--transform``) and
    ``example`` (``@aug.py:train_transform``) make the messages: ValueError or OSError, one line."""
    file, sep, name = spec[1:].rpartition(":")
    if not sep or not file or not name.isidentifier():
        raise ValueError(f"{option} {spec!r}: expected @FILE.py:NAME, e.g. {example}")
    if not os.path.isfile(file):
        raise OSError(f"{option} {spec!r}: {file}: no such file")
    path = os.path.abspath(file)
    modname = "_sluice_preview_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    mspec = importlib.util.spec_from_file_location(modname, path)
    if mspec is None or mspec.loader is None:
        raise ValueError(f"{option} {spec!r}: {file} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(mspec)
    sys.modules[modname] = module  # classes defined there stay resolvable (pickle, dataclasses)
    sys.path.insert(0, os.path.dirname(path))
    try:
        mspec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(modname, None)
        raise ValueError(f"{option} {spec!r}: running {file} raised {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(os.path.dirname(path))
    if not hasattr(module, name):
        raise ValueError(f"{option} {spec!r}: {file} defines no {name!r}")
    return getattr(module, name)


def _checked(obj: Any, what: str) -> list:
    if obj is None:
        raise TypeError(f"{what}: got None, not a sluice transform, a list of them or T.Compose")
    try:
        return T.flatten(obj)
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


def load_transform(spec: str) -> list:
    """The pipeline a ``--transform`` argument names, as a flat list of sluice transforms.

    ``spec`` is a Python expression evaluated with ``T`` (``sluice.transforms``), ``sluice`` and
    ``np`` in scope, or ``@FILE.py:NAME``: the object NAME of that file, run as a module (its
    folder is on ``sys.path`` while it runs, for its own imports). Raises ValueError, TypeError or
    OSError with one line naming the problem."""
    if spec.startswith("@"):
        obj = load_file_object(spec, "--transform", "@aug.py:train_transform")
        return _checked(obj, f"--transform {spec!r}")
    import sluice  # noqa: PLC0415

    scope = {"__builtins__": builtins, "T": T, "sluice": sluice, "np": np}
    try:
        obj = eval(compile(spec, "<--transform>", "eval"), scope)  # noqa: S307 - the user's own CLI input
    except SyntaxError as e:
        raise ValueError(f"--transform {spec!r}: not a Python expression ({e.msg})") from None
    except Exception as e:
        raise ValueError(f"--transform {spec!r}: {type(e).__name__}: {e}") from None
    return _checked(obj, f"--transform {spec!r}")


def transform_arg(spec: str | None, size: int = 224, flip: bool = True, normalize: bool = True) -> list:
    """The training pipeline of ``sluice bench`` and ``sluice doctor``: the ``--transform``
    argument's (:func:`load_transform`) when given, else ``RandomResizedCrop(size)``,
    ``RandomHorizontalFlip`` (unless ``flip`` is False) and ``Normalize`` with ImageNet's mean and
    standard deviation (unless ``normalize`` is False, for uint8 output)."""
    if spec is not None:
        return load_transform(spec)
    from . import IMAGENET_MEAN, IMAGENET_STD  # noqa: PLC0415  (the package imports this module's users)

    transform = [T.RandomResizedCrop(size)]
    if flip:
        transform.append(T.RandomHorizontalFlip())
    if normalize:
        transform.append(T.Normalize(IMAGENET_MEAN, IMAGENET_STD))
    return transform
