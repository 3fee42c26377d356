"""Sample counts of streamed shards from the manifest ``sluice pack`` writes beside them."""
from __future__ import annotations

import os
import re
import urllib.error
import urllib.parse
import urllib.request

from .pack import MANIFEST, parse_manifest


def _base_name(url: str) -> str:
    """The shard's file name: the url's last path part; for a pipe: command, that of the last
    word that names a .tar file ("pipe:aws s3 cp s3://b/train-0001.tar -" -> train-0001.tar)."""
    if url.startswith("pipe:"):
        words = [w for w in re.split(r"[\s;|&<>'\"]+", url[5:]) if ".tar" in w]
        url = words[-1] if words else url
    path = urllib.parse.urlsplit(url).path if url.startswith(("http://", "https://")) else url
    return path.rstrip("/").rsplit("/", 1)[-1]


def _read(where: str, timeout: float) -> bytes:
    """The manifest's bytes (a local path or an http(s) url). OSError when it cannot be read."""
    if where.startswith(("http://", "https://")):
        with urllib.request.urlopen(where, timeout=timeout) as r:
            return r.read()
    with open(where, "rb") as f:
        return f.read()


def shard_counts(urls: list[str], manifest: str | os.PathLike | None, timeout: float) -> list[int]:
    """Samples per shard of `urls` (in their order) from `manifest`, or [] when they are to be
    counted by walking the shards: manifest None, or "auto" with no manifest found beside the
    first shard (in its folder, or its url's folder; none for pipe: urls) or one that does not
    list every shard. A manifest named explicitly must exist and list every shard (OSError,
    ValueError naming it)."""
    if manifest is None:
        return []
    auto = isinstance(manifest, str) and manifest == "auto"
    if auto:
        first = urls[0]
        if first.startswith("pipe:"):
            return []
        where = first.rsplit("/", 1)[0] + "/" + MANIFEST if "/" in first else MANIFEST
    else:
        where = os.fspath(manifest)
    try:
        m = parse_manifest(_read(where, timeout), where)
    except (OSError, urllib.error.URLError, ValueError):
        if auto:
            return []
        raise
    listed = {s["name"]: s["samples"] for s in m["shards"]}
    counts = []
    for url in urls:
        name = _base_name(url)
        if name not in listed:
            if auto:
                return []
            raise ValueError(f"{where}: lists no shard named {name!r} (from {url})")
        counts.append(listed[name])
    return counts
