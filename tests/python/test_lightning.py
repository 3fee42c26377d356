"""A sluice.Loader as a Lightning train dataloader: fit, stop, resume from the checkpoint (issue 18).

Lightning (2.x) keeps the train loader's ``state_dict()`` in the checkpoint's fit-loop state and
gives it back to ``load_state_dict()`` when ``Trainer.fit(ckpt_path=...)`` resumes; it reads the
checkpoint with ``torch.load``'s default, ``weights_only=True`` from torch 2.6. Before its first
epoch it calls ``iter()`` on the loader once to check that it is iterable, and drops the iterator.

Every sample is labelled with its own index, so a batch's labels say which samples it holds. A
tiny model is fitted for two epochs uninterrupted: the reference, one record per training step
(Lightning's epoch and batch index, sluice's epoch, the labels, a digest of the pixels). A second
fit with the same seed is killed one step after a ModelCheckpoint saved mid-run; a third Trainer
resumes from that checkpoint. The test shows that
  * the checkpoint holds the loader's state and loads with ``weights_only=True``;
  * the steps before the checkpoint and those after the resume are exactly the reference's,
    batch for batch (samples and pixels): none repeated, none lost;
  * each batch comes under the reference's Lightning epoch and batch index, and sluice's epoch of
    every batch is Lightning's ``current_epoch`` (the probe ``iter()`` uses up no epoch);
  * the resumed model ends with the reference's weights.
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

import pytest

import sluice
import sluice.transforms as T
from sluice import datasets

torch = pytest.importorskip("torch")
L = pytest.importorskip("lightning")
from lightning.pytorch.callbacks import Callback, ModelCheckpoint  # noqa: E402

SIZE, BATCH, EPOCHS = 12, 4, 2


class Step(NamedTuple):
    epoch: int  # Lightning's current_epoch
    batch_idx: int
    sluice_epoch: int
    labels: tuple
    pixels: str  # digest of the batch's images


class Preempted(Exception):
    pass


@pytest.fixture(scope="module")
def numbered(tmp_path_factory) -> list[tuple[str, int]]:
    """30 small JPEGs, each labelled with its own index."""
    root = str(tmp_path_factory.mktemp("lightning_folder"))
    datasets.make_dataset(root, num_images=30, num_classes=3, width=(24, 40), progress=False)
    files = [p for p, _ in sluice.Loader(root, [T.CenterCrop(8)]).samples]
    return [(p, i) for i, p in enumerate(files)]


def make_loader(samples) -> sluice.Loader:
    return sluice.Loader(samples, [T.RandomResizedCrop(SIZE), T.RandomHorizontalFlip()], batch_size=BATCH,
                         shuffle=True, seed=5, num_threads=2)


class Tiny(L.LightningModule):
    """A linear classifier over the flattened images; records every training step in ``steps``."""

    def __init__(self, loader: sluice.Loader):
        super().__init__()
        self.net = torch.nn.Linear(3 * SIZE * SIZE, loader.num_samples)
        self.loader = loader
        self.steps: list[Step] = []

    def training_step(self, batch, batch_idx):
        images, labels = batch
        digest = hashlib.blake2b(images.numpy().tobytes(), digest_size=8).hexdigest()
        self.steps.append(Step(self.current_epoch, batch_idx, self.loader.state_dict()["epoch"],
                               tuple(labels.tolist()), digest))
        return torch.nn.functional.cross_entropy(self.net(images.flatten(1)), labels)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Preempt(Callback):
    """Kills the fit as step ``at`` + 1 starts (its batch already taken from the loader)."""

    def __init__(self, at: int):
        self.at = at

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if trainer.global_step == self.at:
            raise Preempted


def new_model(samples) -> Tiny:
    """The same initial weights and loader every time."""
    L.seed_everything(0, verbose=False)
    return Tiny(make_loader(samples))


def fit(model: Tiny, tmp_path, callbacks=(), ckpt_path=None) -> Tiny:
    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=EPOCHS, logger=False, enable_progress_bar=False,
                        enable_model_summary=False, enable_checkpointing=any(
                            isinstance(c, ModelCheckpoint) for c in callbacks),
                        callbacks=list(callbacks), default_root_dir=tmp_path)
    trainer.fit(model, train_dataloaders=model.loader, ckpt_path=ckpt_path)
    return model


@pytest.fixture(scope="module")
def reference(numbered, tmp_path_factory) -> Tiny:
    return fit(new_model(numbered), tmp_path_factory.mktemp("reference"))


def test_uninterrupted_fit_epochs_are_sluice_epochs(reference):
    steps = reference.steps
    per_epoch = len(reference.loader)
    assert len(steps) == EPOCHS * per_epoch
    assert [(s.epoch, s.batch_idx) for s in steps] == [(e, b) for e in range(EPOCHS) for b in range(per_epoch)]
    assert all(s.sluice_epoch == s.epoch for s in steps)
    # Each epoch is every sample once, in another order.
    for e in range(EPOCHS):
        labels = [x for s in steps[e * per_epoch:(e + 1) * per_epoch] for x in s.labels]
        assert sorted(labels) == list(range(reference.loader.num_samples))
    assert steps[0].labels != steps[per_epoch].labels


@pytest.mark.filterwarnings("ignore:Be aware that when using `ckpt_path`")
@pytest.mark.parametrize("where", ["mid epoch 0", "end of epoch 0", "mid epoch 1"])
def test_resume_from_a_checkpoint_gives_exactly_the_steps_left(numbered, reference, tmp_path, where):
    per_epoch = len(reference.loader)
    at = {"mid epoch 0": 3, "end of epoch 0": per_epoch, "mid epoch 1": per_epoch + 3}[where]
    saver = ModelCheckpoint(dirpath=tmp_path, filename="{step}", every_n_train_steps=at, save_top_k=-1)
    interrupted = new_model(numbered)
    with pytest.raises(Preempted):
        fit(interrupted, tmp_path, callbacks=[saver, Preempt(at)])
    assert interrupted.steps == reference.steps[:at]
    ckpt = tmp_path / f"step={at}.ckpt"
    assert sorted(p.name for p in tmp_path.glob("*.ckpt")) == [ckpt.name]

    resumed = fit(new_model(numbered), tmp_path, ckpt_path=ckpt)  # torch.load's default: weights_only
    assert resumed.steps == reference.steps[at:]
    assert all(s.sluice_epoch == s.epoch for s in resumed.steps)
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], value, rtol=0, atol=0, msg=name)

    # Where Lightning keeps the loader's state: its place after step `at`.
    states = torch.load(ckpt, weights_only=True)["loops"]["fit_loop"]["state_dict"]["combined_loader"]
    last = reference.steps[at - 1]
    assert len(states) == 1 and states[0]["format"] == "sluice.Loader/2"
    assert (states[0]["epoch"], states[0]["batches"]) == (last.epoch, last.batch_idx + 1)
