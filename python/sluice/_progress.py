"""A progress bar for long work (dataset generation, packing, benchmarks): tqdm's where it is
installed and the stream is a terminal, else a dependency-free one."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "decode") as p: ... p.update(n)``.

    On a terminal it is a tqdm bar where tqdm is installed, else one redrawn line; elsewhere
    (logs, CI) it prints a line every 10%.
    """

    def __init__(self, total: int, desc: str, unit: str = "img", stream: TextIO | None = None,
                 enabled: bool = True):
        self.total = max(int(total), 0)
        self.desc = desc
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.done = 0
        self.start = time.perf_counter()
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_draw = 0.0
        self._last_decile = -1
        self._tqdm = _tqdm_bar(self) if enabled and self._tty else None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self._tqdm is not None:
            self._tqdm.update(n)
            return
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._tty:
            if now - self._last_draw >= 0.1 or self.done >= self.total:
                self._last_draw = now
                self._draw(now, end="\r")
        else:
            decile = (10 * self.done) // self.total if self.total else 10
            if decile != self._last_decile:
                self._last_decile = decile
                self._draw(now, end="\n")

    def _draw(self, now: float, end: str) -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        frac = self.done / self.total if self.total else 1.0
        width = 28
        filled = int(width * min(frac, 1.0))
        bar = "#" * filled + "-" * (width - filled)
        eta = (self.total - self.done) / rate if rate > 0 and self.total else 0.0
        self.stream.write(f"{self.desc} [{bar}] {self.done}/{self.total} {self.unit} "
                          f"{rate:,.0f} {self.unit}/s eta {eta:4.0f}s{end}")
        self.stream.flush()

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
        elif self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()


def _tqdm_bar(progress: Progress):
    """A tqdm bar for `progress`, or None where tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=progress.total, desc=progress.desc, unit=progress.unit, file=progress.stream,
                unit_scale=False, dynamic_ncols=True)
