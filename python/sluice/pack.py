"""sluice.pack: an image folder or a (path, label) list into WebDataset tar shards.

    summary = sluice.pack.pack("data/train", "shards/train", shard_bytes=256 << 20, max_side=512, quality=90)
    ds = sluice.WebDataset("shards/train/shard-*.tar")

Each sample is ``{key}.{ext}`` (the image) and ``{key}.cls`` (its label as decimal text), the key
its position in the packed order (``000000042``), in ustar/pax tar files that the ``webdataset``
library reads. Shards are filled in order up to ``shard_bytes`` (a sample is never split; one
larger than that gets a shard of its own). The samples are shuffled first (``seed``) unless
``shuffle=False``: a class-sorted folder packed in order would give shards of one class each,
which streaming reads cannot shuffle back. ``manifest.json`` beside the shards lists each
shard's name, sample count and size, and the class names. Every shard and the manifest are
written under a temporary name and renamed when whole, so a stopped run leaves no shard that
looks complete.

With ``max_side`` or ``quality``, images are decoded (Pillow), shrunk so that their longer side
is at most ``max_side`` (Lanczos; never enlarged), and written as JPEG at ``quality`` (default
90); otherwise the files' bytes are copied as they are. Work runs on ``workers`` threads.
"""
from __future__ import annotations

import io
import json
import os
import random
import tarfile
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

from ._progress import Progress

__all__ = ["pack", "MANIFEST", "read_manifest", "parse_manifest"]

MANIFEST = "manifest.json"
_FORMAT = "sluice-shards/1"


def _samples(src: Any) -> tuple[list[tuple[str, int]], list[str]]:
    """(path, label) pairs and class names of an ImageFolder root or a pair list."""
    from ._loader import Loader
    from .transforms import CenterCrop

    loader = Loader(src, [CenterCrop(8)], num_threads=1)  # lists and checks the source
    try:
        return list(loader.samples), list(loader.classes)
    finally:
        loader.close()


def _extension(path: str) -> str:
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    return ext if ext and "." not in ext else "jpg"


def _encoded(path: str, max_side: int | None, quality: int | None) -> tuple[bytes, str]:
    """The bytes to store for `path` and their extension. OSError / ValueError name the file."""
    if max_side is None and quality is None:
        with open(path, "rb") as f:
            return f.read(), _extension(path)
    from PIL import Image

    try:
        with Image.open(path) as img:
            if max_side is not None and max(img.size) > max_side:
                if img.format == "JPEG":
                    img.draft("RGB", (max_side, max_side))  # decode at 1/2, 1/4, 1/8 when that suffices
                img.thumbnail((max_side, max_side), Image.LANCZOS)
            rgb = img.convert("RGB")
            out = io.BytesIO()
            rgb.save(out, format="JPEG", quality=quality or 90)
            return out.getvalue(), "jpg"
    except (OSError, ValueError, Image.DecompressionBombError) as e:
        raise ValueError(f"{path}: cannot re-encode: {e}") from None


class _ShardWriter:
    """Shards named prefix-NNNNNN.tar in `dst`, each written as .tmp and renamed when closed."""

    def __init__(self, dst: str, prefix: str, shard_bytes: int):
        self.dst, self.prefix, self.limit = dst, prefix, shard_bytes
        self.shards: list[dict] = []
        self._tar: tarfile.TarFile | None = None
        self._tmp = self._name = ""

    def add(self, key: str, ext: str, data: bytes, label: int) -> None:
        # The shard's size if this sample joins it: two members (headers up to 3 blocks each with
        # pax records, data padded to a block), the end blocks, and tarfile's padding of the
        # whole to its 10 KiB record.
        grown = self._tar.fileobj.tell() if self._tar is not None else 0
        grown += 2 * 3 * 512 + (len(data) + 511) // 512 * 512 + 512 + 1024
        grown = -(-grown // tarfile.RECORDSIZE) * tarfile.RECORDSIZE
        if self._tar is not None and self.shards[-1]["samples"] > 0 and grown > self.limit:
            self._close()
        if self._tar is None:
            self._open()
        for name, payload in ((f"{key}.{ext}", data), (f"{key}.cls", str(label).encode())):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(payload), 0, 0o644
            self._tar.addfile(info, io.BytesIO(payload))
        self.shards[-1]["samples"] += 1
        self.shards[-1]["bytes"] = self._tar.fileobj.tell()

    def _open(self) -> None:
        self._name = f"{self.prefix}-{len(self.shards):06d}.tar"
        self._tmp = os.path.join(self.dst, self._name + ".tmp")
        self._tar = tarfile.open(self._tmp, "w", format=tarfile.PAX_FORMAT)
        self.shards.append({"name": self._name, "samples": 0, "bytes": 0})

    def _close(self) -> None:
        self._tar.close()
        self.shards[-1]["bytes"] = os.path.getsize(self._tmp)
        os.replace(self._tmp, os.path.join(self.dst, self._name))
        self._tar = None

    def close(self) -> None:
        if self._tar is not None:
            self._close()

    def abandon(self) -> None:
        """Removes what this run wrote: a stopped pack leaves no shards (a rerun starts clean)."""
        if self._tar is not None:
            self._tar.close()
            os.unlink(self._tmp)
            self._tar = None
        for shard in self.shards:
            path = os.path.join(self.dst, shard["name"])
            if os.path.exists(path):
                os.unlink(path)


def pack(src: Any, dst: str, *, shard_bytes: int = 256 << 20, max_side: int | None = None,
         quality: int | None = None, shuffle: bool = True, seed: int = 0, prefix: str = "shard",
         on_error: str = "raise", workers: int | None = None, progress: bool = True) -> dict:
    """Packs `src` (an ImageFolder root or a sequence of (path, label) pairs) into shards in the
    folder `dst` (made if missing; it must hold no shards yet). Returns a summary: samples,
    shards, bytes, seconds, images_per_s, skipped ([(path, reason)]), manifest (its path).

    on_error: "raise" stops at the first file that cannot be read (or re-encoded) with an error
    naming it, removing the shards this run wrote; "skip" leaves it out and lists it in the summary.
    """
    if not isinstance(shard_bytes, int) or isinstance(shard_bytes, bool) or shard_bytes < 1:
        raise ValueError(f"shard_bytes must be an int >= 1, got {shard_bytes!r}")
    if max_side is not None and (not isinstance(max_side, int) or max_side < 1):
        raise ValueError(f"max_side must be an int >= 1, got {max_side!r}")
    if quality is not None and (not isinstance(quality, int) or not 1 <= quality <= 100):
        raise ValueError(f"quality must be an int in [1, 100], got {quality!r}")
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if "/" in prefix or not prefix:
        raise ValueError(f"prefix must be a file name prefix, got {prefix!r}")
    samples, classes = _samples(src)
    os.makedirs(dst, exist_ok=True)
    old = [n for n in os.listdir(dst) if n.endswith(".tar") or n == MANIFEST]
    if old:
        raise FileExistsError(f"{dst} already holds shards ({sorted(old)[0]}, ...): pack into an empty folder")
    order = list(range(len(samples)))
    if shuffle:
        random.Random(seed).shuffle(order)
    writer = _ShardWriter(dst, prefix, shard_bytes)
    skipped: list[tuple[str, str]] = []
    t0 = time.perf_counter()

    def attempt(i: int):
        try:
            return _encoded(samples[i][0], max_side, quality)
        except (OSError, ValueError) as e:
            if on_error == "raise":
                raise
            return e

    n = 0
    threads = workers or len(os.sched_getaffinity(0))
    with ThreadPoolExecutor(max_workers=threads) as pool, Progress(len(order), "pack", enabled=progress) as bar:
        try:
            for i, got in zip(order, _ordered_map(pool, attempt, order, 8 * threads)):
                bar.update()
                if isinstance(got, Exception):
                    skipped.append((samples[i][0], str(got)))
                    continue
                data, ext = got
                writer.add(f"{n:09d}", ext, data, samples[i][1])
                n += 1
        except BaseException:
            writer.abandon()
            raise
    writer.close()
    if n == 0:
        raise ValueError(f"nothing packed: every one of the {len(samples)} files failed (first: {skipped[0][1]})")
    seconds = time.perf_counter() - t0
    manifest = {"format": _FORMAT, "samples": n, "classes": classes, "shards": writer.shards}
    path = os.path.join(dst, MANIFEST)
    with open(path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(path + ".tmp", path)
    return {"samples": n, "shards": len(writer.shards), "bytes": sum(s["bytes"] for s in writer.shards),
            "seconds": seconds, "images_per_s": len(order) / seconds if seconds > 0 else 0.0,
            "skipped": skipped, "manifest": path}


def _ordered_map(pool: ThreadPoolExecutor, fn: Callable, items: list, ahead: int) -> Iterator:
    """fn over items on the pool, results in order, at most `ahead` in flight (memory stays
    bounded when the writer is slower than the readers)."""
    pending: deque = deque()
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    for f in pending:
        yield f.result()


def read_list(path: str) -> list[tuple[str, int]]:
    """A list file: one sample per line, "PATH LABEL" (the label last, after a space or a tab;
    PATH relative to the list's folder unless absolute); blank lines and lines starting with #
    are passed over. ValueError naming the line for anything else."""
    base = os.path.dirname(os.path.abspath(path))
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            name, _, label = text.rpartition(" ") if "\t" not in text else text.rpartition("\t")
            try:
                value = int(label)
            except ValueError:
                raise ValueError(f"{path}, line {n}: expected 'PATH LABEL' with an integer label, got {text!r}") from None
            if not name.strip():
                raise ValueError(f"{path}, line {n}: no path before the label")
            out.append((os.path.join(base, name.strip()), value))
    if not out:
        raise ValueError(f"{path}: no samples listed")
    return out


def read_manifest(dst: str) -> dict:
    """The manifest `pack` wrote in `dst`. ValueError when it is not one."""
    path = os.path.join(dst, MANIFEST)
    with open(path, "rb") as f:
        return parse_manifest(f.read(), path)


def parse_manifest(data: bytes, where: str) -> dict:
    """A manifest's contents (`where` names it in errors). ValueError when it is not one."""
    try:
        m = json.loads(data)
    except ValueError as e:
        raise ValueError(f"{where}: not a sluice shard manifest ({e})") from None
    if not isinstance(m, dict) or m.get("format") != _FORMAT:
        raise ValueError(f"{where}: not a sluice shard manifest (format {m.get('format') if isinstance(m, dict) else None!r})")
    shards = m.get("shards")
    if not isinstance(shards, list) or not all(
            isinstance(s, dict) and isinstance(s.get("name"), str) and isinstance(s.get("samples"), int) for s in shards):
        raise ValueError(f"{where}: its 'shards' must be a list of {{name, samples, bytes}}")
    return m

