"""An HTML report of a sweep: its parameters, a table of results and its figures.

``write_report(store, sweep)`` writes ``<store>/sweeps/<name>/report.html`` (one
self-contained file: figures are embedded as PNG) next to the figures as PNG and PDF.
``shoal sweep`` writes it at the end of every sweep; ``shoal report STORE`` again.
"""

from __future__ import annotations

import base64
import html
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from shoal import _core
from shoal._output import SHOAL_MARK, check_output_file, has_mark, replace_file
from shoal.store import Store

__all__ = ["write_report", "choose_axes"]

_TABLE_METRICS = (
    ("small_mean_fct_ns", "small mean FCT (µs)", 1e3),
    ("small_p99_fct_ns", "small p99 FCT (µs)", 1e3),
    ("all_mean_fct_ns", "mean FCT (µs)", 1e3),
    ("all_p99_slowdown", "p99 slowdown", 1.0),
    ("loss_rate", "loss (%)", 0.01),
    ("ecn_mark_rate", "ECN marked (%)", 0.01),
    ("unfinished", "unfinished", 1.0),
    ("pfc_pause_frames", "PAUSE frames", 1.0),
    ("pfc_paused_ns", "paused (µs)", 1e3),
    ("lossless_drops", "lossless drops", 1.0),
    ("wall_time_s", "wall (s)", 1.0),
)
#: Columns shown only when some run has them (runs with a lossless class).
_IF_ANY = {"pfc_pause_frames", "pfc_paused_ns", "lossless_drops"}

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em;
  border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
tr.failed td { background: #fde8e8; }
pre { background: #f7f7f7; padding: 0.7em; overflow-x: auto; font-size: 0.8em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
.note { color: #8a5a00; }
"""

# Marks <body data-images-ok="n/m"> once the images have decoded (checked in tests).
_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-images-ok', ok + '/' + imgs.length);
});
"""


def choose_axes(runs: pd.DataFrame) -> tuple[str | None, list[str]]:
    """The x column (a numeric axis, ``workload.load`` first) and the ``by`` columns
    (every other varying axis but the seed) for the report's figures."""
    axes = [c for c in runs.attrs.get("axes", []) if c != "seed" and not c.endswith("_label")]

    def varies(c: str) -> bool:
        return c in runs and runs[c].map(lambda v: json.dumps(v)).nunique() > 1

    def numeric(c: str) -> bool:
        return bool(c in runs and pd.api.types.is_numeric_dtype(runs[c]))

    varying = [c for c in axes if varies(c)]
    x: str | None = None
    if "workload.load" in varying:
        x = "workload.load"
    else:
        x = next((c for c in varying if numeric(c)), None)
    by = [c for c in varying if c != x]
    return x, by


def _img(path: Path) -> str:
    raw = path.read_bytes()
    data = base64.b64encode(raw).decode()
    width = int.from_bytes(raw[16:20], "big") // 3  # 300 dpi PNG -> 100 CSS px per inch
    return (
        f'<img alt="{html.escape(path.stem)}" width="{width}" src="data:image/png;base64,{data}">'
    )


def _cell(value: Any, scale: float) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if scale == 1.0 and float(value).is_integer():
            return f"{int(value)}"  # a count, whole
        return f"{value / scale:.4g}"
    return html.escape(str(value))


def _results_table(runs: pd.DataFrame, axes: Sequence[str]) -> str:
    metrics = [
        (c, h, s)
        for c, h, s in _TABLE_METRICS
        if c in runs and (c not in _IF_ANY or runs[c].notna().any())
    ]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in axes)
    head += "<th>status</th>" + "".join(f"<th>{html.escape(h)}</th>" for _, h, _ in metrics)
    head += "<th>key</th>"
    rows = []
    for _, row in runs.iterrows():
        status = str(row.get("status"))
        cells = "".join(f'<td class="text">{_cell(row.get(c), 1.0)}</td>' for c in axes)
        if status == "ok":
            cells += '<td class="text">ok</td>'
            cells += "".join(f"<td>{_cell(row.get(c), s)}</td>" for c, _, s in metrics)
        else:
            error = html.escape(str(row.get("error") or ""))
            cells += f'<td class="text">{html.escape(status)}</td>'
            cells += f'<td class="text" colspan="{len(metrics)}">{error}</td>'
        cells += f'<td class="text"><code>{html.escape(str(row.get("key")))}</code></td>'
        cls = ' class="failed"' if status != "ok" else ""
        rows.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _figures(store: Store, runs: pd.DataFrame, outdir: Path) -> list[tuple[str, Path | None, str]]:
    """Draw the report's figures; (title, png path or None, caption or reason)."""
    from shoal import plot

    x, by = choose_axes(runs)
    figures: list[tuple[str, Path | None, str]] = []
    ok = runs[runs["status"] == "ok"] if "status" in runs else runs

    def draw(title: str, name: str, make: Any, caption: str) -> None:
        try:
            fig = make()
        except plot.PlotError as exc:
            figures.append((title, None, str(exc)))
            return
        paths = plot.save(fig, outdir / name, formats=["png", "pdf"])
        figures.append((title, paths[0], caption))

    by_text = ", ".join(by) if by else "—"
    if x is not None:
        draw(
            "FCT vs " + x,
            "fct_vs_load",
            lambda: plot.fct_vs_load(ok, x=x, by=by),
            f"Mean and 99th-percentile FCT per size bucket, averaged over seeds; lines: {by_text}.",
        )
        draw(
            "Loss rate vs " + x,
            "loss_vs_load",
            lambda: plot.loss_vs_load(ok, x=x, by=by),
            f"Packet loss rate (dropped / sent packets); lines: {by_text}.",
        )
        if "pfc_paused_ns" in ok and ok["pfc_paused_ns"].notna().any():
            draw(
                "PFC paused time vs " + x,
                "pfc_vs_load",
                lambda: plot.pfc_vs_load(ok, x=x, by=by),
                "Time the paused port classes spent paused, summed over them (mean over "
                f"seeds); lines: {by_text}. PAUSE frames and lossless drops are in the table.",
            )
    # Flow-level figures at one x value (the largest), all seeds pooled.
    subset, at = ok, ""
    if x is not None and not ok.empty:
        top = ok[x].max()
        subset, at = ok[ok[x] == top], f" at {x} = {top}"
    if not subset.empty:
        flows = plot.sweep_flows(store, subset)
        flows.attrs["axes"] = [c for c in flows.attrs.get("axes", []) if c != x]
        draw(
            "FCT slowdown vs flow size" + at,
            "slowdown_vs_size",
            lambda: plot.slowdown_vs_size(flows, by=by),
            "Median and 99th-percentile slowdown per flow-size decile (seeds pooled).",
        )
        draw(
            "FCT CDF" + at,
            "fct_cdf",
            lambda: plot.fct_cdf(flows, by=by),
            "CDF of the FCT of finished flows (seeds pooled).",
        )
        samples = plot.sweep_samples(store, subset)
        if not samples.empty:
            samples.attrs["axes"] = [c for c in samples.attrs.get("axes", []) if c != x]
            draw(
                "Buffer occupancy CDF" + at,
                "buffer_cdf",
                lambda: plot.buffer_cdf(samples, by=by),
                "CDF of the shared-buffer occupancy of each pool, from queue samples.",
            )
    return figures


def write_report(
    store: str | os.PathLike[str] | Store,
    sweep: str | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the HTML report of a sweep recorded in ``store``; return its path.

    Default location: ``<store>/sweeps/<name>/report.html`` (figures beside it).
    """
    from shoal._sweep import sweep_table

    db = store if isinstance(store, Store) else Store(store)
    record = db.sweep_record(sweep)
    name = record["name"]
    runs = sweep_table(db, name)
    target = Path(out) if out is not None else db.sweeps_dir / name / "report.html"
    target = target.expanduser().absolute()
    check_output_file(target, _is_report, "report")
    outdir = target.parent
    outdir.mkdir(parents=True, exist_ok=True)
    axes = [c for c in runs.attrs.get("axes", []) if c in runs]

    counts = runs["status"].value_counts().to_dict() if "status" in runs else {}
    wall = (
        float(pd.to_numeric(runs["wall_time_s"], errors="coerce").sum())
        if "wall_time_s" in runs
        else 0.0
    )
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="en"><head><meta charset="utf-8">{_GENERATOR}',
        f"<title>Shoal sweep {html.escape(name)}</title>",
        f"<style>{_CSS}</style><script>{_SCRIPT}</script></head><body>",
        f"<h1>Sweep <code>{html.escape(name)}</code></h1>",
        f"<p>Shoal {html.escape(_core.__version__)} · store <code>{html.escape(str(db.root))}"
        f"</code> · {len(runs)} runs: "
        + ", ".join(f"{v} {html.escape(str(k))}" for k, v in counts.items())
        + f" · {wall:.1f} s of simulation · written {time.strftime('%Y-%m-%d %H:%M')}</p>",
    ]
    if counts.get("failed"):
        parts.append(
            f'<p class="note">{counts["failed"]} runs failed; their errors are in the table.</p>'
        )

    # Parameters.
    parts.append("<h2>Parameters</h2>")
    axes_rec = record.get("axes", {})
    rows = []
    for scheme, overrides in (axes_rec.get("schemes") or {}).items():
        text = ", ".join(f"{k} = {json.dumps(v)}" for k, v in overrides.items())
        rows.append(("scheme " + scheme, text))
    for key, values in (axes_rec.get("grid") or {}).items():
        rows.append((key, ", ".join(json.dumps(v) for v in values) + "  (grid)"))
    for key, values in (axes_rec.get("zip") or {}).items():
        rows.append((key, ", ".join(json.dumps(v) for v in values) + "  (zipped)"))
    if axes_rec.get("seeds") is not None:
        rows.append(("seeds", ", ".join(str(s) for s in axes_rec["seeds"])))
    for key, value in (axes_rec.get("set") or {}).items():
        rows.append((key, json.dumps(value) + "  (every run)"))
    parts.append(
        "<table><tbody>"
        + "".join(
            f'<tr><th class="text">{html.escape(k)}</th><td class="text">{html.escape(v)}</td></tr>'
            for k, v in rows
        )
        + "</tbody></table>"
    )
    if record.get("source"):
        parts.append(f"<p>Base scenario: <code>{html.escape(record['source'])}</code></p>")
    parts.append(
        "<details><summary>Base scenario (before sweep overrides)</summary><pre>"
        + html.escape(json.dumps(record.get("base", {}), indent=2))
        + "</pre></details>"
    )

    # Results.
    parts.append("<h2>Results</h2>")
    parts.append("<p>Seeds are listed separately; FCT in microseconds.</p>")
    parts.append(_results_table(runs, axes))

    # Figures.
    parts.append("<h2>Figures</h2>")
    for title, path, caption in _figures(db, runs, outdir):
        if path is None:
            parts.append(
                f'<p class="note">{html.escape(title)}: not drawn ({html.escape(caption)})</p>'
            )
            continue
        pdf = path.with_suffix(".pdf").name
        parts.append(
            f"<figure><figcaption><b>{html.escape(title)}</b></figcaption>{_img(path)}"
            f'<figcaption>{html.escape(caption)} <a href="{html.escape(pdf)}">PDF</a>'
            "</figcaption></figure>"
        )
    parts.append("</body></html>")
    html_text = "\n".join(parts)
    return replace_file(
        target, lambda tmp: tmp.write_text(html_text, encoding="utf-8"), _is_report, "report"
    )


#: The head tag by which a later report recognizes a file as an earlier one.
_GENERATOR = f'<meta name="generator" content="{SHOAL_MARK}">'


def _is_report(path: Path) -> bool:
    """Whether ``path`` is a report Shoal wrote (its head carries Shoal's generator tag)."""
    return has_mark(path, _GENERATOR.encode())
