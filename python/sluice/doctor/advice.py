"""The verdict and the recommendations of ``sluice doctor``, from the measured figures only.

The verdict compares three rates: the model alone on a synthetic batch (the headspace H), the
loader alone (L) and training, the loader feeding the model (C):

- *loader-bound*: L < 0.9 H, the loader alone is more than 10% slower than the model can take;
- *model-bound*: L > 1.1 H and C >= 0.9 H, the loader has headroom and training runs within 10%
  of the headspace;
- *balanced*: L within 10% of H; or each alone is fast enough but training runs more than 10%
  below the headspace (on the CPU they share the cores).

A recommendation needs a measurement: an alternative setting timed in the same run (threads,
prefetch depth) or the loader without a transform, timed twice, whose worse run beats the better
of two runs of the current settings by MIN_GAIN (a machine busy with other work moves every rate:
one lucky run must not make a recommendation); the fastest decode route against ``auto``; or the
cold read rate against the loader's. Loader-side changes (a transform, the decode route,
packing) are advised only where the loader limits training (not when model-bound).
"""
from __future__ import annotations

from typing import Any

__all__ = ["BALANCE", "MIN_GAIN", "verdict", "recommendations"]

BALANCE = 0.10   # rates within 10% of each other are balanced
MIN_GAIN = 0.10  # smaller differences are within the run-to-run noise of a few-second measurement


def verdict(headspace: dict | None, loader: dict, training: dict | None) -> dict:
    """``verdict`` (None without a model), the ratios it rests on and one sentence of reason."""
    rate = loader["images_per_s"]
    if headspace is None or training is None:
        return {"verdict": None, "loader_over_headspace": None, "training_over_headspace": None,
                "reason": f"no model step (--model none): the loader alone gives {rate:,.0f} images/s"}
    h, c, idle = headspace["images_per_s"], training["images_per_s"], training["idle_share"]
    ratio, share = rate / h, c / h
    both = (f"training ran at {c:,.0f} images/s ({100 * share:.0f}% of the headspace), the device waiting "
            f"for data {100 * idle:.0f}% of the time")
    if ratio < 1 - BALANCE:
        name = "loader-bound"
        reason = (f"the loader alone gives {rate:,.0f} images/s, {100 * ratio:.0f}% of the {h:,.0f} the "
                  f"model can take; {both}")
    elif ratio > 1 + BALANCE and share >= 1 - BALANCE:
        name = "model-bound"
        reason = (f"the loader alone gives {rate:,.0f} images/s, {ratio:.1f}x the {h:,.0f} the model can "
                  f"take; {both}")
    elif ratio > 1 + BALANCE:
        name = "balanced"
        reason = (f"each alone is fast enough (the loader {rate:,.0f} images/s, the model {h:,.0f}), but "
                  f"together they share the machine: {both}")
    else:
        name = "balanced"
        reason = (f"the loader alone ({rate:,.0f} images/s) and the model alone ({h:,.0f}) are within "
                  f"{100 * BALANCE:.0f}% of each other; {both}")
    return {"verdict": name, "loader_over_headspace": ratio, "training_over_headspace": share, "reason": reason}


def _runs(rate_runs: list[float]) -> str:
    return " and ".join(f"{v:,.0f}" for v in rate_runs)


def _setting(rows: list[dict], key: str, measured_with: str) -> dict | None:
    """The best alternative row against the first (the current settings), when its worse run
    beats their better run by MIN_GAIN (so it needs two runs: one is not enough)."""
    base, best = rows[0], max(rows, key=lambda r: r["images_per_s"])
    gain = min(best["runs"]) / max(base["runs"]) - 1
    if best is base or len(best["runs"]) < 2 or gain < MIN_GAIN:
        return None
    return {"change": f"{key}={best[key]}", "gain": gain,
            "measured": (f"{measured_with}: {_runs(best['runs'])} images/s in two runs with {key}={best[key]}, "
                         f"against {_runs(base['runs'])} with {key}={base[key]}; the gain is the worse against "
                         "the better")}


def _routes(result: dict) -> dict | None:
    routes = result.get("decode_routes")
    if not routes:
        return None
    auto = result["loader"]["images_per_s"]
    route, best = max(routes.items(), key=lambda kv: kv[1]["images_per_s"])
    gain = best["images_per_s"] / auto - 1
    if gain < MIN_GAIN:
        return None
    return {"change": f"decode_route={route!r}", "gain": gain,
            "measured": f"loader alone: {best['images_per_s']:,.0f} images/s against {auto:,.0f} with 'auto'"}


def _transform(result: dict) -> dict | None:
    """Drop (or cheapen, or move) the costliest transform, when the list without it ran faster
    by MIN_GAIN in both of its runs than the whole list in either of its two."""
    costs = [c for c in result.get("transform_costs") or [] if "skipped" not in c]
    if not costs:
        return None
    base = result["transform_baseline"]
    top = max(costs, key=lambda c: c["marginal_ms_per_image"])
    gain = min(top["runs_without"]) / max(base["runs"]) - 1
    if len(top["runs_without"]) < 2 or gain < MIN_GAIN:
        return None
    return {"change": f"drop {top['name']} (item {top['index']}), or make it cheaper or move it to the GPU",
            "gain": gain,
            "measured": (f"loader alone without it: {_runs(top['runs_without'])} images/s in two runs, against "
                         f"{_runs(base['runs'])} with it; it costs {top['marginal_ms_per_image']:.3f} ms of thread "
                         "time per image, the most of the list")}


def _pack(result: dict) -> tuple[dict | None, str | None]:
    """Shards when cold reads are slower than the loader and the files outgrow the page cache;
    a note instead when they fit in it (only the first epoch reads cold)."""
    if "stages" not in result:
        return None, None
    cold = result["stages"]["read_cold"].get("images_per_s")
    rate = result["loader"]["images_per_s"]
    if cold is None or cold >= rate:
        return None, None
    files, memory = result["dataset_mib_estimate"], result["memory_gib"]
    measured = (f"cold reads give {cold:,.0f} images/s, the loader {rate:,.0f} from the page cache: reading "
                f"from storage would hold it to {100 * cold / rate:.0f}% of that")
    if memory and files < memory * 1024 / 2:
        return None, (f"{measured}; but the files ({files:,.0f} MiB) fit in the page cache "
                      f"({memory:,.1f} GiB of memory): only the first epoch reads cold")
    return {"change": "pack into shards: sluice pack DATA SHARDS/, then sluice.WebDataset('SHARDS/shard-*.tar')",
            "gain": rate / cold - 1, "measured": measured}, None


def recommendations(result: dict) -> tuple[list[dict], list[str]]:
    """(recommendations, notes) for a doctor result: each recommendation ``change``, ``gain``
    (the measured fraction) and ``measured`` (the figures behind it), best gain first."""
    recs: list[Any] = []
    notes: list[str] = []
    tuning = result.get("tuning")
    if tuning:
        recs.append(_setting(tuning["threads"], "num_threads", tuning["measured_with"]))
        recs.append(_setting(tuning["prefetch"], "prefetch", tuning["measured_with"]))
    if result["verdict"]["verdict"] != "model-bound":
        recs += [_routes(result), _transform(result)]
        rec, note = _pack(result)
        recs.append(rec)
        if note:
            notes.append(note)
    elif result.get("transform_costs") is not None:
        notes.append("model-bound: a faster loader would not speed training, so no loader change is advised")
    recs = sorted((r for r in recs if r is not None), key=lambda r: -r["gain"])
    if not recs:
        notes.append(f"no alternative measured here gained {100 * MIN_GAIN:.0f}% or more in two runs against "
                     "two of the current settings")
    return recs, notes
