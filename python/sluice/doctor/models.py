"""The model ``sluice doctor`` trains, and its training step.

``--model`` names torchvision's ``resnet18`` or ``resnet50`` (random weights), ``tiny`` (a small
CNN built in, for machines without torchvision: the default ``resnet18`` falls back to it and the
report says so), ``none`` (no model step: the loader alone) or ``@FILE.py:NAME``, a
``torch.nn.Module`` or a function or class that makes one without arguments. The step is what a
training loop does per batch: forward, loss, backward, ``SGD.step`` on the device.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._user_code import load_file_object

__all__ = ["MODEL_NAMES", "DEFAULT_MODEL", "ModelChoice", "resolve_model", "tiny_net", "ModelStep"]

MODEL_NAMES = ("resnet18", "resnet50", "tiny", "none")
DEFAULT_MODEL = "resnet18"


@dataclass
class ModelChoice:
    """The model to time (None: no model step), its name as reported, and why this one when it
    is not the one asked for."""
    module: Any
    name: str
    note: str = ""


def _torch():
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        raise RuntimeError("--model: the model step needs PyTorch, which is not installed; "
                           "--model none measures the loader alone") from None
    return torch


def tiny_net(num_classes: int) -> Any:
    """Three strided 3x3 convolutions (16, 32, 64 channels, batch norm, ReLU), global average
    pooling and a linear layer: about 0.04 GFLOPs a 224 x 224 image forward, a small real CNN
    for machines without torchvision."""
    nn = _torch().nn

    def block(cin: int, cout: int) -> list:
        return [nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(*block(3, 16), *block(16, 32), *block(32, 64), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, max(num_classes, 1)))


def _torchvision_model(name: str, num_classes: int) -> Any:
    import torchvision.models  # noqa: PLC0415

    return getattr(torchvision.models, name)(weights=None, num_classes=max(num_classes, 1))


def _torchvision_problem() -> str | None:
    """Why torchvision cannot be used here, or None when it can."""
    try:
        import torchvision.models  # noqa: F401, PLC0415
    except Exception as e:  # an ImportError, or a torchvision built for another torch (RuntimeError)
        return f"{type(e).__name__}: {e}".splitlines()[0]
    return None


def _as_module(obj: Any, what: str) -> Any:
    """``obj`` as a torch.nn.Module: itself, or what calling it without arguments makes."""
    nn = _torch().nn
    if not isinstance(obj, nn.Module) and callable(obj):
        try:
            obj = obj()
        except Exception as e:
            raise ValueError(f"{what}: calling it without arguments raised {type(e).__name__}: {e}") from None
    if not isinstance(obj, nn.Module):
        raise TypeError(f"{what}: expected a torch.nn.Module or a function or class that makes one, "
                        f"got {type(obj).__name__}")
    return obj


def resolve_model(spec: Any, num_classes: int) -> ModelChoice:
    """The model ``spec`` names (see the module's docstring); also a Module or factory passed
    from Python. ``spec`` None is the default: resnet18, or ``tiny`` where torchvision cannot be
    imported. Raises ValueError or RuntimeError naming the problem."""
    if spec is None:
        _torch()
        problem = _torchvision_problem()
        if problem is None:
            return ModelChoice(_torchvision_model(DEFAULT_MODEL, num_classes), DEFAULT_MODEL)
        return ModelChoice(tiny_net(num_classes), "tiny",
                           f"torchvision is not importable ({problem}): the built-in tiny CNN stands in "
                           f"for the default {DEFAULT_MODEL}")
    if not isinstance(spec, str):
        module = _as_module(spec, "model")
        return ModelChoice(module, type(module).__name__)
    if spec == "none":
        return ModelChoice(None, "none")
    if spec == "tiny":
        return ModelChoice(tiny_net(num_classes), "tiny")
    if spec in ("resnet18", "resnet50"):
        _torch()
        problem = _torchvision_problem()
        if problem is not None:
            raise RuntimeError(f"--model {spec} needs torchvision, which cannot be imported here ({problem}); "
                               "--model tiny is a small CNN built in")
        return ModelChoice(_torchvision_model(spec, num_classes), spec)
    if spec.startswith("@"):
        obj = load_file_object(spec, "--model", "@model.py:make_model")
        module = _as_module(obj, f"--model {spec!r}")
        return ModelChoice(module, spec[1:].rpartition(":")[2])
    raise ValueError(f"--model {spec!r}: expected one of {', '.join(MODEL_NAMES)} or @FILE.py:NAME")


class ModelStep:
    """One training step on ``device``: forward, loss, backward, SGD step (lr 0.01, momentum 0.9),
    then a wait for the GPU, so that a step's time is the device's busy time.

    The loss is cross-entropy on the labels (modulo the model's outputs, so that any model takes
    any dataset's labels; soft labels of the output's shape as they are, e.g. after MixUp), or the
    mean of the output where it is not ``N x classes``."""

    def __init__(self, module: Any, device: str):
        torch = _torch()
        self._torch = torch
        self.device = torch.device(device)
        self.model = module.to(self.device).train()
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9) if params else None
        self.cuda = self.device.type == "cuda"

    def _loss(self, out: Any, y: Any) -> Any:
        torch = self._torch
        if isinstance(out, (tuple, list)):
            out = out[0]
        if out.dim() == 2 and out.is_floating_point():
            if y.is_floating_point() and y.shape == out.shape:
                return torch.nn.functional.cross_entropy(out.float(), y.float())
            return torch.nn.functional.cross_entropy(out.float(), y.long() % out.shape[1])
        return out.float().mean()

    def __call__(self, x: Any, y: Any) -> None:
        torch = self._torch
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"the model step takes one tensor of images per batch, got {type(x).__name__}: "
                            "the transforms must end in a fixed size (a crop, or Resize((h, w)))")
        x = x.to(self.device, non_blocking=True)
        y = torch.as_tensor(y).to(self.device, non_blocking=True)
        if self.optimizer is not None:
            self.optimizer.zero_grad(set_to_none=True)
        loss = self._loss(self.model(x), y)
        if loss.requires_grad:
            loss.backward()
        if self.optimizer is not None:
            self.optimizer.step()
        if self.cuda:
            torch.cuda.synchronize(self.device)
