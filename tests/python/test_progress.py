"""The progress bar: tqdm's on a terminal where tqdm is installed, its own redrawn line where it is
not, and one line per tenth of the work in a log."""
from __future__ import annotations

import io
import sys

import pytest

from sluice._progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(stream, total=20):
    with Progress(total, "pack", unit="img", stream=stream) as bar:
        for _ in range(total):
            bar.update()
    return stream.getvalue()


def test_tqdm_on_a_terminal():
    pytest.importorskip("tqdm")
    out = run(Terminal())
    assert "pack: 100%|" in out and "20/20" in out, out


def test_own_bar_on_a_terminal_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    out = run(Terminal())
    assert "100%|" not in out
    assert out.strip("\r\n").split("\r")[-1].startswith("pack [" + "#" * 28 + "] 20/20 img"), out


def test_a_log_gets_one_line_per_tenth():
    lines = run(io.StringIO()).splitlines()  # the first update, then each tenth
    assert len(lines) == 11 and lines[-1].startswith("pack [" + "#" * 28 + "] 20/20 img"), lines
    assert lines[0].startswith("pack [" + "#" + "-" * 27 + "] 1/20"), lines
    assert lines[1].startswith("pack [" + "#" * 2 + "-" * 26 + "] 2/20"), lines


def test_disabled_writes_nothing():
    stream = Terminal()
    with Progress(5, "pack", stream=stream, enabled=False) as bar:
        bar.update(5)
    assert stream.getvalue() == ""
