"""The PNG chart of ``sluice doctor``, drawn with matplotlib (the ``doctor`` extra): on top every
stage, the loader and training as horizontal bars on one images/s scale, the model's headspace
as a vertical line; below, the timeline of the training run, step by step: the device idle
(waiting in ``next(loader)``) and busy (the model step).

matplotlib's object API and its Agg canvas draw it, without pyplot, so that the caller's backend
and figures are left alone. Where matplotlib is missing, no chart is drawn and the result says so.
"""
from __future__ import annotations

import math
import os
from typing import Any

__all__ = ["WIDTH_PX", "HEIGHT_PX", "draw", "bars"]

WIDTH_PX, HEIGHT_PX, DPI = 1200, 800, 100
IDLE, BUSY, BAR, WHOLE, HEADSPACE = "#d62728", "#2ca02c", "#4c72b0", "#8172b2", "#ff7f0e"


def bars(r: dict) -> list[tuple[str, float]]:
    """(label, images/s) of every measured rate the top panel shows, in the report's order."""
    out = [("loader alone", r["loader"]["images_per_s"])]
    if r["training"] is not None:
        out.append(("training: loader + model", r["training"]["images_per_s"]))
    st = r.get("stages") or {}
    for key, label in (("read_cold", "read, cold"), ("read_warm", "read, warm"), ("decode", "decode"),
                       ("transform", "transform list"), ("collate", "collate"), ("copy_to_gpu", "copy to GPU")):
        if key in st:
            out.append((label, st[key]["images_per_s"]))
    for route, x in (r.get("decode_routes") or {}).items():
        out.append((f"loader, decode_route={route}", x["images_per_s"]))
    return [(label, v) for label, v in out if v]


def _stages_panel(ax: Any, r: dict) -> None:
    items = bars(r)
    labels, values = [b[0] for b in items], [b[1] for b in items]
    ys = list(range(len(items)))[::-1]
    ax.barh(ys, values, color=[WHOLE if label.startswith(("loader", "training")) else BAR for label in labels])
    ax.set_yticks(ys, labels)
    for y, v in zip(ys, values):
        ax.text(v, y, f" {v:,.0f}", va="center", fontsize=8)
    hs = r["headspace"]
    top = max(values + ([hs["images_per_s"]] if hs else []))
    low = min(values + ([hs["images_per_s"]] if hs else []))
    if top / max(low, 1e-9) > 50:  # reads from the page cache can be 100x the model: one log scale
        ax.set_xscale("log")
        ax.set_xlim(10 ** (math.floor(math.log10(low)) - 1), top * 3)  # a decade below the least: bars show
    else:
        ax.set_xlim(0, top * 1.15)  # room for the values at the bars' ends
    if hs:
        ax.axvline(hs["images_per_s"], color=HEADSPACE, linewidth=2,
                   label=f"model headspace {hs['images_per_s']:,.0f} images/s")
        ax.legend(loc="best", fontsize=8)
    ax.set_xlabel("images/s (stages: as the loader's threads would run each alone)")
    v = r["verdict"]["verdict"]
    ax.set_title(f"sluice doctor: {v or 'no model'} ({r['device']}, batch {r['batch_size']}, model {r['model']['name']})")


def _timeline_panel(ax: Any, r: dict) -> None:
    tr = r["training"]
    if tr is None:
        ax.text(0.5, 0.5, "no model step (--model none): no device timeline", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    steps = tr["timeline"]
    ax.broken_barh([(s, w) for s, w, _ in steps], (0.55, 0.4), color=IDLE, label="idle: waiting for the batch")
    ax.broken_barh([(s + w, c) for s, w, c in steps], (0.05, 0.4), facecolor=BUSY, edgecolor="white",
                   linewidth=0.5, label="busy: model step")
    ax.set_yticks([0.25, 0.75], ["busy", "idle"])
    ax.set_xlim(0, max(s + w + c for s, w, c in steps))
    ax.set_xlabel(f"seconds into the training run ({len(steps)} steps; idle {100 * tr['idle_share']:.0f}% of the time)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title("device timeline while training (loader + model)")


def draw(r: dict, path: Any) -> dict:
    """Writes the chart of result ``r`` to ``path``: ``{"path", "width_px", "height_px"}``, or
    ``{"path": None, "skipped": why}`` where matplotlib cannot be imported."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as e:
        return {"path": None, "skipped": f"matplotlib is not installed ({e}); pip install matplotlib "
                                         "(or the sluice-loader[doctor] extra) for the PNG chart"}
    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": [2.2, 1]})
    _stages_panel(top, r)
    _timeline_panel(bottom, r)
    fig.subplots_adjust(left=0.2, right=0.96, top=0.94, bottom=0.08, hspace=0.35)
    fig.savefig(os.fspath(path), dpi=DPI, format="png")
    return {"path": os.fspath(path), "width_px": WIDTH_PX, "height_px": HEIGHT_PX}
