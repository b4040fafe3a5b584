#!/usr/bin/python3
"""Draws attention time and extra memory against n (plain vs tiled) from `attnlab bench --json`, as SVG.

Standard library only.  /usr/bin/python3 bench/plot_attention.py REPORT.json OUT.svg
"""
import json
import math
import sys

W, H = 900, 380
PANEL_W, PANEL_H = 340, 260
COLORS = {"plain": "#d62728", "tiled": "#1f77b4"}


def log_axis(lo, hi):
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if a == b:
        b += 1
    return a, b


def panel(x0, y0, title, ylabel, xs, series, fmt_y):
    """series: list of (label, colour, dashed, ys). Log-log axes."""
    out = []
    ys_all = [y for _, _, _, ys in series for y in ys if y > 0]
    ya, yb = log_axis(min(ys_all), max(ys_all))
    xa, xb = math.log2(xs[0]), math.log2(xs[-1])

    def px(x):
        return x0 + (math.log2(x) - xa) / (xb - xa) * PANEL_W

    def py(y):
        return y0 + PANEL_H - (math.log10(y) - ya) / (yb - ya) * PANEL_H

    out.append(f'<rect x="{x0}" y="{y0}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#444"/>')
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{y0 - 12}" text-anchor="middle" font-weight="bold">{title}</text>')
    for e in range(ya, yb + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + PANEL_W}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{fmt_y(10 ** e)}</text>')
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{y0}" x2="{px(x):.1f}" y2="{y0 + PANEL_H}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{y0 + PANEL_H + 16}" text-anchor="middle" font-size="11">{x}</text>')
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{y0 + PANEL_H + 34}" text-anchor="middle" font-size="12">'
               f'sequence length n (log scale)</text>')
    out.append(f'<text x="{x0 - 58}" y="{y0 + PANEL_H / 2}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 {x0 - 58} {y0 + PANEL_H / 2})">{ylabel}</text>')
    for i, (label, colour, dashed, ys) in enumerate(series):
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys) if y > 0)
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for x, y in zip(xs, ys):
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>')
        ly = y0 + 14 + 16 * i
        out.append(f'<line x1="{x0 + 10}" y1="{ly - 4}" x2="{x0 + 34}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{x0 + 40}" y="{ly}" font-size="11">{label}</text>')
    return out


def fmt_ms(v):
    return f"{v:g} ms"


def fmt_bytes(v):
    for unit, s in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if v >= s:
            return f"{v / s:g} {unit}"
    return f"{v:g} B"


def main():
    report = json.load(open(sys.argv[1]))
    a = report["attention"]
    rows = a["rows"]
    xs = [r["n"] for r in rows]
    t = lambda path, key: [r[path][key] * 1e3 for r in rows]
    m = lambda path, key: [r[path][key] for r in rows]
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    svg += panel(90, 40, f"attention time (d_k = {a['d_k']}, {a['heads']} head)", "milliseconds (log scale)", xs, [
        ("plain forward", COLORS["plain"], False, t("plain", "forward_s")),
        ("tiled forward", COLORS["tiled"], False, t("tiled", "forward_s")),
        ("plain backward", COLORS["plain"], True, t("plain", "backward_s")),
        ("tiled backward", COLORS["tiled"], True, t("tiled", "backward_s")),
    ], fmt_ms)
    svg += panel(530, 40, "extra memory", "bytes (log scale)", xs, [
        ("plain forward (n×n weights)", COLORS["plain"], False, m("plain", "extra_bytes_forward")),
        ("tiled forward (tile + O(n))", COLORS["tiled"], False, m("tiled", "extra_bytes_forward")),
        ("plain backward", COLORS["plain"], True, m("plain", "extra_bytes_backward")),
        ("tiled backward", COLORS["tiled"], True, m("tiled", "extra_bytes_backward")),
    ], fmt_bytes)
    blas = report["blas"]
    svg.append(f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle" font-size="11" fill="#555">'
               f'{report["machine"]["cpu"]}, OpenBLAS {blas["kernel"]}, {blas["threads"]} threads; tiles '
               f'{a["block_q"]}×{a["block_k"]}; median of {report["config"]["repeats"]} runs</text>')
    svg.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
