"""The alternative loader settings ``sluice doctor`` measures, so that a recommendation to change
one has a measurement behind it: fewer and more compute threads, and another prefetch depth
(2 against 4).

The current settings are timed twice, and a promising alternative twice, so that one lucky run
does not make a recommendation (sluice.doctor.advice quotes the worse run of the alternative
against the better run of the current settings). Each alternative is timed as the baseline it is
compared with: the loader feeding the model (what training would see: on the CPU, loader threads
and the model share the cores) when there is a model, else the loader alone.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from .advice import MIN_GAIN
from .measure import Setup, open_loader, time_loader
from .stages import repeat_baseline

__all__ = ["CONFIRM_RUNS", "thread_choices", "prefetch_choice", "promising", "measure_alternatives"]

CONFIRM_RUNS = 2  # second runs of a promising alternative: one per kind (threads, prefetch)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def thread_choices(threads: int, cpus: int | None = None) -> list[int]:
    """Half and twice ``threads`` (at most twice the CPUs this process may use), without
    ``threads`` itself: on 2 CPUs and 2 threads, [1, 4]."""
    cpus = cpus or _cpus()
    fewer, more = max(threads // 2, 1), min(threads * 2, 2 * cpus)
    return sorted({fewer, more} - {threads})


def prefetch_choice(prefetch: int) -> int:
    """The prefetch depth to compare with ``prefetch``: 4 against 2 (or anything below 4), else 2."""
    return 4 if prefetch < 4 else 2


def _row(run: dict, **setting: Any) -> dict:
    row = dict({"images_per_s": run["images_per_s"], "runs": [run["images_per_s"]]}, **setting)
    if "idle_share" in run:
        row["idle_share"] = run["idle_share"]
    return row


def promising(row: dict, base_runs: list[float]) -> bool:
    """An alternative worth a second run: better by MIN_GAIN than the best run of the current
    settings."""
    return row["images_per_s"] >= (1 + MIN_GAIN) * max(base_runs)


def measure_alternatives(setup: Setup, baseline: dict, step: Callable[[Any, Any], None] | None,
                         tick: Callable[[], None]) -> dict:
    """The alternatives to ``baseline`` (a run of ``setup``: the loader + model run with ``step``,
    else the loader alone): ``threads`` and ``prefetch`` rows, each with its images/s (and idle
    share with a model) and its ``runs``, the current settings first. Those are timed twice (before
    and after the alternatives: how far apart is the ``noise``); the best alternative of each kind
    that looks better by MIN_GAIN than both is timed a second time, so that a recommendation rests
    on two runs of each (CONFIRM_RUNS more measurements at most; the bar ticks for them anyway)."""
    def run(**change: int) -> dict:
        result = time_loader(open_loader(setup.but(**change)), setup.seconds, step, cuda=setup.cuda)
        tick()
        return result

    threads, prefetch = baseline["num_threads"], baseline["prefetch"]
    alternatives = {"threads": [{"num_threads": n, "prefetch": prefetch} for n in thread_choices(threads)],
                    "prefetch": [{"num_threads": threads, "prefetch": prefetch_choice(prefetch)}]}
    rows = {key: [_row(run(**change), **change) for change in changes] for key, changes in alternatives.items()}
    again = run(num_threads=threads, prefetch=prefetch)
    base = repeat_baseline(baseline, again)
    now = dict(_row(baseline, num_threads=threads, prefetch=prefetch), images_per_s=base["images_per_s"],
               runs=base["runs"])
    if "idle_share" in baseline:
        now["idle_share"] = (baseline["idle_share"] + again["idle_share"]) / 2
    for key in ("threads", "prefetch"):
        best = max(rows[key], key=lambda r: r["images_per_s"])
        if promising(best, base["runs"]):
            second = run(num_threads=best["num_threads"], prefetch=best["prefetch"])["images_per_s"]
            best["runs"].append(second)
            best["images_per_s"] = sum(best["runs"]) / len(best["runs"])
        else:
            tick()
    return {"measured_with": "loader + model" if step is not None else "loader alone",
            "baseline_runs": base["runs"], "noise": base["noise"],
            "threads": [now] + rows["threads"], "prefetch": [now] + rows["prefetch"]}
