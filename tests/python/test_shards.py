"""Tar shards (issue 17): sluice's tar reader against Python's tarfile on archives tarfile writes
in its three formats, and damaged archives as errors that name the shard and the byte."""
from __future__ import annotations

import io
import os
import tarfile

import pytest

import sluice
from sluice import _core

FORMATS = {"gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT, "ustar": tarfile.USTAR_FORMAT}


def write_tar(path, members, fmt=tarfile.PAX_FORMAT):
    """members: (name, bytes) for files, (name, None) for a directory, (name, "->target") for a link."""
    with tarfile.open(path, "w", format=fmt) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data[2:]
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def expected(path):
    with tarfile.open(path) as tar:
        return [(m.name, m.offset_data, m.size) for m in tar.getmembers() if m.isfile()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_members_match_tarfile(tmp_path, fmt):
    deep = "d" * 60 + "/" + "e" * 60  # 121 characters: the ustar prefix field, or a long name
    members = [("000.jpg", os.urandom(1000)), ("000.cls", b"3"), ("sub", None),
               (f"sub/{'n' * 90}.jpg", os.urandom(5)), (f"{deep}/001.jpg", b"\xff\xd8" * 300),
               ("empty.txt", b""), ("link.jpg", "->000.jpg"), ("002.json", b'{"label": 7}')]
    if fmt != "ustar":  # ustar holds neither names over 255 bytes nor non-ASCII ones
        members += [("x" * 300 + ".jpg", b"long"), ("caf\u00e9/\u00e9t\u00e9.png", b"\x89PNG")]
    path = tmp_path / f"{fmt}.tar"
    write_tar(path, members, FORMATS[fmt])
    got = _core._tar_members(str(path))
    assert got == expected(path)
    raw = path.read_bytes()
    with tarfile.open(path) as tar:
        for name, offset, size in got:
            assert raw[offset:offset + size] == tar.extractfile(name).read(), name


def test_damaged_archives_name_the_shard_and_the_byte(tmp_path):
    path = tmp_path / "shard.tar"
    write_tar(path, [("a.jpg", b"x" * 1000), ("b.jpg", b"y" * 10)], tarfile.USTAR_FORMAT)
    raw = path.read_bytes()
    cases = {
        "cut.tar": (raw[:700], "truncated at byte 700 (member 'a.jpg' needs 812 more bytes)"),
        "flipped.tar": (raw[:1536 + 3] + bytes([raw[1536 + 3] ^ 0x20]) + raw[1536 + 4:],
                        "corrupt header at byte 1536 (checksum mismatch)"),
        "notatar.tar": (b"\xff\xd8\xff" + b"\0" * 2000, "not a tar archive (no valid header at byte 0)"),
        "empty.tar": (b"", "empty, not a tar archive"),
    }
    for name, (data, message) in cases.items():
        bad = tmp_path / name
        bad.write_bytes(data)
        with pytest.raises(sluice.DecodeError) as e:
            _core._tar_members(str(bad))
        assert str(bad) in str(e.value) and message in str(e.value), str(e.value)
    with pytest.raises(FileNotFoundError, match="missing.tar"):
        _core._tar_members(str(tmp_path / "missing.tar"))
    os.mkfifo(tmp_path / "fifo.tar")
    with pytest.raises(Exception, match="not a regular file"):
        _core._tar_members(str(tmp_path / "fifo.tar"))
