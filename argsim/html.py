"""Self-contained HTML: a page with inline CSS, tables, and bar charts drawn as inline SVG (no script, no asset)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1100px;
color:#1f2328;padding:0 1rem;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
p.meta{color:#59636e;font-size:.9rem;margin-top:0}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.35rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
td .ci{color:#59636e;font-size:.8rem}td .ref{color:#9a6700;font-size:.8rem}
tr.compare td{background:#fbfbf4}.sig{font-weight:700;color:#1a7f37}
figure{margin:1.2rem 0;display:inline-block;vertical-align:top}figure h3{margin:0 0 .3rem;font-size:1rem}
td:first-child{max-width:16rem;overflow-wrap:anywhere}
figcaption{font-size:.85rem;color:#59636e;max-width:720px}
svg text{font-family:inherit;font-size:12px;fill:#1f2328}
svg .axis{stroke:#8c959f}svg .bar{fill:#4c78a8}svg .whisker{stroke:#1f2328;stroke-width:1.5}
svg .ref{stroke-width:1.5;stroke-dasharray:5 3}svg .ref.paper{stroke:#e45756}svg .ref.mteb{stroke:#54a24b}
svg text.reflabel{font-size:11px}
"""

BAR_H, GAP, LEFT, PLOT_W, RIGHT, TOP, REF_ROW = 22, 8, 230, 440, 70, 26, 16


def page(title: str, body: str, meta: str = "") -> str:
    """A whole HTML document: `body` (HTML) under a heading, with the inline style sheet."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>"
            + (f"<p class=\"meta\">{escape(meta)}</p>" if meta else "") + body + "</body></html>\n")


def table(header: Sequence[str], rows: Sequence[Sequence[str]], row_classes: Sequence[str] | None = None) -> str:
    """An HTML table; the cells are HTML already (escape text with `html.escape`)."""
    head = "".join(f"<th>{h}</th>" for h in header)
    classes = [f' class="{c}"' if c else "" for c in (row_classes or [""] * len(rows))]
    body = "".join(f"<tr{classes[i]}>"
                   + "".join(f"<td class=\"num\">{c}</td>" if j else f"<td>{c}</td>" for j, c in enumerate(r))
                   + "</tr>" for i, r in enumerate(rows))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def bar_chart(key: str, bars: Sequence[tuple[str, float, float, float]],
              references: Sequence[tuple[str, float, str]] = ()) -> str:
    """A horizontal bar chart as inline SVG: one bar per (label, value, low, high) with its interval as a whisker,
    and each reference (label, value, kind 'paper' | 'mteb') as a dashed vertical line labelled under the plot.

    Example:
        >>> svg = bar_chart("kpa", [("minilm", 0.6, 0.55, 0.65)], [("MTS", 0.84, "paper")])
        >>> svg.startswith("<svg") and 'data-value="0.6"' in svg
        True
    """
    values = [v for _, v, lo, hi in bars for v in (v, lo, hi) if v == v] + [v for _, v, _ in references]
    lo, hi = min([0.0, *values]), max([1e-9, *values])
    hi = hi if lo < 0 else (1.0 if hi <= 1.0 and hi > 0.5 else hi * 1.08)
    plot_h = len(bars) * (BAR_H + GAP) + GAP

    def x(v: float) -> float:
        return round(LEFT + (v - lo) / (hi - lo) * PLOT_W, 2)

    height = TOP + plot_h + 24 + len(references) * REF_ROW + 8
    out = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-task=\"{escape(key)}\" "
           f"width=\"{LEFT + PLOT_W + RIGHT}\" height=\"{height}\" role=\"img\" aria-label=\"{escape(key)}\">"]
    axis_y = TOP + plot_h
    span = hi - lo
    step = next(s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0) if span / s <= 8) \
        if span > 0 else 1.0
    first = step * int(lo / step)
    for t in [round(first + i * step, 6) for i in range(int(span / step) + 2) if lo <= first + i * step <= hi + 1e-9]:
        out.append(f"<line class=\"axis\" x1=\"{x(t)}\" x2=\"{x(t)}\" y1=\"{axis_y}\" y2=\"{axis_y + 4}\"/>"
                   f"<text x=\"{x(t)}\" y=\"{axis_y + 16}\" text-anchor=\"middle\">{t:g}</text>")
    out.append(f"<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT + PLOT_W}\" y1=\"{axis_y}\" y2=\"{axis_y}\"/>"
               f"<line class=\"axis\" x1=\"{x(0)}\" x2=\"{x(0)}\" y1=\"{TOP}\" y2=\"{axis_y}\"/>")
    for i, (label, value, low, high) in enumerate(bars):
        y = TOP + GAP + i * (BAR_H + GAP)
        x0, x1 = sorted((x(0), x(value)))
        out.append(f"<text x=\"{LEFT - 8}\" y=\"{y + BAR_H / 2 + 4}\" text-anchor=\"end\">{escape(label[:34])}</text>"
                   f"<rect class=\"bar\" data-model=\"{escape(label)}\" data-value=\"{value:.4g}\" x=\"{x0}\" "
                   f"y=\"{y}\" width=\"{max(x1 - x0, 1)}\" height=\"{BAR_H}\"><title>{escape(label)}: "
                   f"{value:.4f} [{low:.4f}, {high:.4f}]</title></rect>")
        if low == low and high == high:
            mid = y + BAR_H / 2
            out.append(f"<line class=\"whisker\" x1=\"{x(low)}\" x2=\"{x(high)}\" y1=\"{mid}\" y2=\"{mid}\"/>"
                       + "".join(f"<line class=\"whisker\" x1=\"{x(e)}\" x2=\"{x(e)}\" y1=\"{mid - 6}\" "
                                 f"y2=\"{mid + 6}\"/>" for e in (low, high)))
        out.append(f"<text x=\"{x(max(value, high if high == high else value)) + 6}\" y=\"{y + BAR_H / 2 + 4}\">"
                   f"{value:.3f}</text>")
    for j, (label, value, kind) in enumerate(references):
        ry = axis_y + 24 + j * REF_ROW + 10
        anchor, dx = ("end", -4) if x(value) > LEFT + PLOT_W * 0.6 else ("start", 4)
        out.append(f"<line class=\"ref {kind}\" data-label=\"{escape(label)}\" data-value=\"{value:.4g}\" "
                   f"x1=\"{x(value)}\" x2=\"{x(value)}\" y1=\"{TOP}\" y2=\"{ry}\"/>"
                   f"<text class=\"reflabel\" x=\"{x(value) + dx}\" y=\"{ry}\" text-anchor=\"{anchor}\">"
                   f"{escape(label)} {value:.3f}</text>")
    out.append("</svg>")
    return "".join(out)
