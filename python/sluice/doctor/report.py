"""The text report of ``sluice doctor``: a short summary of a result dict. Every figure it prints
is a number of that dict (the JSON), as it is or as a percentage of a stored fraction."""
from __future__ import annotations

__all__ = ["format_report"]


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _num(value: float, digits: int) -> str:
    """``value`` to ``digits`` decimals, a value that rounds to zero as 0 (not -0)."""
    return f"{value if round(value, digits) else 0.0:.{digits}f}"


def _pct(frac: float | None, sign: bool = False) -> str:
    if frac is None:
        return "n/a"
    text = _num(100 * frac, 0)
    return f"+{text}%" if sign and not text.startswith("-") else f"{text}%"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """A Markdown table, the first column left-aligned, the others right-aligned (the last, a note,
    left-aligned)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        out = []
        for i, c in enumerate(cells):
            left = i == 0 or (i == len(cells) - 1 and len(cells) > 2)
            out.append(c.ljust(widths[i]) if left else c.rjust(widths[i]))
        return "| " + " | ".join(out) + " |"

    return [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in rows)]


def _head(r: dict) -> list[str]:
    s, m = r["settings"], r["model"]
    route = f" decode_route={s['decode_route']}" if s["decode_route"] else ""
    lines = [f"sluice doctor  {r['data']}",
             f"  {r['num_samples']:,} images, {r['num_classes']} classes; device={r['device']} "
             f"batch_size={r['batch_size']} output {r['output_width']}x{r['output_height']} float32; "
             f"{r['seconds_per_measurement']:g} s per measurement",
             f"  loader: threads={s['num_threads']} io_threads={s['io_threads']} prefetch={s['prefetch']}{route}",
             f"  transforms: {' '.join(r['transforms'])}",
             f"  model: {m['name']}" + (f" ({m['note']})" if m["note"] else ""), ""]
    v = r["verdict"]
    lines.append(f"verdict: {v['verdict'] or 'none'}: {v['reason']}")
    return lines + [""]


def _main_rows(r: dict) -> list[tuple[str, str, str]]:
    rows = []
    hs, tr = r["headspace"], r["training"]
    if hs is not None:
        rows.append(("model step alone (headspace)", _rate(hs["images_per_s"]),
                     f"synthetic batch on {r['device']}, {hs['ms_per_step']:.1f} ms a step"))
    lo = r["loader"]
    rows.append(("loader alone", _rate(lo["images_per_s"]), f"{lo['compute_ms_per_image']:.3f} ms/image of thread time"))
    if tr is not None:
        rows.append(("training: loader + model", _rate(tr["images_per_s"]),
                     f"device idle {_pct(tr['idle_share'])} of the time (waiting in next(loader))"))
        tuned = tr.get("tuning") or {}
        if tuned.get("why"):
            rows.append(("  the loader's tuner", "", f"{tr['num_threads']} threads, {tr['io_threads']} I/O, prefetch "
                                                     f"{tr['prefetch']}: {tuned['why']}"))
    st = r.get("stages")
    if st is None:
        return rows
    for key, label in (("read_cold", "read, cold"), ("read_warm", "read, warm")):
        x = st[key]
        detail = (f"{x['mib_per_s']:,.0f} MiB/s on {x['threads']} threads" if x["images_per_s"] is not None
                  else x["note"])
        rows.append((label, _rate(x["images_per_s"]), detail))
    for key, label in (("decode", f"decode, {st['decode']['decoder']}"), ("transform", "transform list"),
                       ("collate", "collate")):
        x = st[key]
        rows.append((label, _rate(x["images_per_s"]),
                     x.get("note") or f"{x['ms_per_image']:.3f} ms/image on {x['threads']} threads"))
    for route, x in (r.get("decode_routes") or {}).items():
        rows.append((f"loader alone, decode_route={route}", _rate(x["images_per_s"]), ""))
    cp = st["copy_to_gpu"]
    rows.append(("copy to GPU", _rate(cp["images_per_s"]),
                 cp.get("note") or f"{cp['gib_per_s']:.1f} GiB/s from pinned memory"))
    w = st["consumer_wait"]
    training = f", training {_pct(w['training_share'])}" if w["training_share"] is not None else ""
    rows.append(("consumer wait", "", f"loader alone {_pct(w['loader_alone_share'])} of the time{training}"))
    return rows


def _transform_lines(r: dict) -> list[str]:
    costs = r.get("transform_costs")
    if not costs:
        return []
    measured = [c for c in costs if "skipped" not in c]
    top = max(measured, key=lambda c: c["marginal_ms_per_image"]) if measured else None
    top = top if top is not None and top["marginal_ms_per_image"] > 0 and not top["within_noise"] else None
    rows = []
    for c in costs:
        name = f"{c['index']}. {c['name']}" + (" (most)" if c is top else "")
        if "skipped" in c:
            rows.append((name, "", "", "", f"skipped: {c['skipped']}"))
        else:
            noise = ("no cost measured" if c["marginal_ms_per_image"] <= 0 else
                     "within the noise" if c["within_noise"] else None)
            note = "; ".join(n for n in (c.get("note"), noise) if n)
            rows.append((name, _num(c["marginal_ms_per_image"], 3), _rate(c["images_per_s_without"]),
                         _pct(c["gain"], sign=True), note))
    b = r["transform_baseline"]
    return ([f"each transform's marginal cost (the loader alone without it; with the whole list "
             f"{_rate(b['images_per_s'])} images/s, two runs {_pct(b['noise'])} apart):"]
            + _table(("transform", "ms/image", "images/s without", "gain", "note"), rows) + [""])


def _tuning_lines(r: dict) -> list[str]:
    t = r.get("tuning")
    if not t:
        return []
    rows = []
    for key in ("threads", "prefetch"):
        name = "num_threads" if key == "threads" else "prefetch"
        for i, row in enumerate(t[key]):
            idle = _pct(row["idle_share"]) if "idle_share" in row else ""
            rows.append((f"{name}={row[name]}" + (" (now)" if i == 0 else ""), _rate(row["images_per_s"]), idle))
    return ([f"settings ({t['measured_with']}; the current ones twice, {_pct(t['noise'])} apart):"]
            + _table(("setting", "images/s", "idle"), rows) + [""])


def _advice_lines(r: dict) -> list[str]:
    lines = ["recommendations (each from a measurement of this run):"]
    for i, rec in enumerate(r["recommendations"], 1):
        lines.append(f"  {i}. {rec['change']}: {_pct(rec['gain'], sign=True)} ({rec['measured']})")
    if not r["recommendations"]:
        lines.append("  none")
    lines += [f"  note: {n}" for n in r["notes"]]
    st = r.get("stages")
    if st and st["read_cold"].get("note") and st["read_cold"]["images_per_s"] is not None:
        lines.append(f"  note: {st['read_cold']['note']}")
    return lines + [""]


def format_report(r: dict) -> str:
    """The report for a result of :func:`sluice.doctor.run_doctor`."""
    lines = _head(r)
    lines += _table(("measurement", "images/s", "detail"), _main_rows(r)) + [""]
    lines += _transform_lines(r) + _tuning_lines(r) + _advice_lines(r)
    ch = r.get("chart")
    if r.get("json"):
        lines.append(f"wrote {r['json']} (every figure)")
    if ch and ch.get("path"):
        lines.append(f"wrote {ch['path']} ({ch['width_px']}x{ch['height_px']} px)")
    elif ch:
        lines.append(f"no chart: {ch['skipped']}")
    lines.append(f"{r['measurements']} measurements in {r['elapsed_seconds']:.0f} s")
    return "\n".join(lines)
