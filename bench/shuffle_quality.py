"""How well a streamed epoch is shuffled (issue 17), against a full shuffle (the indexed mode's
and an image folder's order), and what it costs in memory.

A streamed epoch (io/stream_order.h) takes the shards in an order drawn for the epoch, gives each
rank a run of them read `lanes` at a time, and permutes blocks of `window` samples. How mixed
that is depends on how the shards were written:
  packed        samples shuffled before they were packed (what `sluice pack` does): any shard
                holds any class;
  class-sorted  shards written from a class-sorted walk (an ImageFolder tree packed in order):
                each shard holds one class or two.

Figures, for rank 0 of `world` ranks over one epoch (the others alike):
  classes per batch  distinct classes in a batch of --batch samples (a full shuffle's expectation
                     is C * (1 - (1 - 1/C)^batch));
  same-class gap     mean distance between consecutive samples of one class in the rank's order
                     (about C for a full shuffle; small when a class arrives in a clump);
  max run            the longest run of consecutive samples of one class.
Memory: a rank holds up to window + (prefetch + 2) * batch encoded samples (the lookahead) while
it streams; at the mean sample size given that is the figure printed.

    python bench/shuffle_quality.py [--classes 1000] [--per-class 1300] [--shard-samples 1000]
                                    [--batch 256] [--world 8] [--sample-kib 110]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

from sluice import _core  # noqa: E402


def figures(order: np.ndarray, label: np.ndarray, batch: int, world: int) -> dict:
    mine = label[order[0::world]]  # rank 0's samples, in order
    per_batch = [len(np.unique(mine[i:i + batch])) for i in range(0, len(mine) - batch + 1, batch)]
    gaps, runs, run = [], [], 1
    last = {}
    for pos, c in enumerate(mine.tolist()):
        if c in last:
            gaps.append(pos - last[c])
        last[c] = pos
    for a, b in zip(mine[:-1], mine[1:]):
        run = run + 1 if a == b else 1
        runs.append(run)
    return {"classes_per_batch": float(np.mean(per_batch)), "same_class_gap": float(np.mean(gaps)),
            "max_run": int(max(runs or [1]))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--per-class", type=int, default=1300)
    ap.add_argument("--shard-samples", type=int, default=1000, help="samples per shard")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--world", type=int, default=8)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--sample-kib", type=float, default=110.0, help="mean encoded sample size, for the memory figure")
    args = ap.parse_args()
    c, n = args.classes, args.classes * args.per_class
    sizes = [args.shard_samples] * (n // args.shard_samples) + ([n % args.shard_samples] if n % args.shard_samples else [])
    sorted_labels = np.repeat(np.arange(c), args.per_class)
    layouts = {"packed": np.random.default_rng(0).permutation(sorted_labels), "class-sorted": sorted_labels}
    expected = c * (1 - (1 - 1 / c) ** args.batch)
    print(f"{n:,} samples, {c} classes, {len(sizes)} shards of {args.shard_samples}, batch {args.batch}, "
          f"world {args.world} (rank 0 shown); a full shuffle's expectation: {expected:.1f} classes per batch, "
          f"same-class gap about {c}\n")
    print("| layout | order | classes per batch | same-class gap | max run | held per rank |")
    print("|---|---|---:|---:|---:|---:|")
    full = np.random.default_rng(1).permutation(n)
    configs = [("full shuffle (indexed)", None), ("stream, lanes 4, window 1000", (4, 1000)),
               ("stream, lanes 1, window 1000", (1, 1000)), ("stream, lanes 16, window 1000", (16, 1000)),
               ("stream, lanes 4, window 10000", (4, 10000))]
    for layout, label in layouts.items():
        for name, cfg in configs:
            if cfg is None:
                order, held = full, "-"
            else:
                order = np.asarray(_core._stream_order(sizes, cfg[0], cfg[1], True, 0, 0, args.world))
                samples = cfg[1] + (args.prefetch + 2) * args.batch
                held = f"{samples:,} samples, {samples * args.sample_kib / 1024:,.0f} MiB"
            f = figures(order, label, args.batch, args.world)
            print(f"| {layout} | {name} | {f['classes_per_batch']:.1f} | {f['same_class_gap']:.0f} | "
                  f"{f['max_run']} | {held} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
