#!/usr/bin/python3
"""Reads the curves of figure 11a and 11c of the HPCC paper (Li et al.,
"HPCC: High Precision Congestion Control", SIGCOMM 2019, page 11) out of
the paper's PDF: the 95th-percentile FCT slowdown of each 5 % bucket of
FB_Hadoop flows (sorted by size) for DCQCN, DCQCN+win, TIMELY, TIMELY+win,
DCTCP and HPCC, at 30 % load with 60-to-1 incasts (11a) and at 50 % load
(11c).

The figure is vector graphics (gnuplot), so nothing is read by eye: the
page is converted to SVG with poppler's pdftocairo (Debian's
poppler-utils, needed only for this), each curve is the polyline drawn in
its legend's colour and dash, and its points are mapped to values by the
plot's own tick marks: the y axis's three long ticks are 1, 10 and 100
(log scale), the x axis's ticks 0 to 10 carry the labels
0, 324, 400, ..., 10M, and the 20 points of a curve sit at every half
tick, point i being the flows from the (5 i)th to the (5 i + 5)th
percentile of size (the reference's analysis/fct_analysis.py, step 5).

    bench/validation/read_hpcc_figure11.py PAPER.pdf > bench/validation/hpcc_figure11.csv

The paper's PDF is not part of rdmasim; its authors publish it.
"""
import re
import subprocess
import sys
import tempfile

# gnuplot's colours and dashes in the figure's legend, as pdftocairo writes them.
CURVES = {
    ("58.039856%,0%,82.745361%", "0.6,6"): "dcqcn",
    ("0%,61.961365%,45.097351%", "7.5,12"): "timely",
    ("33.724976%,70.588684%,91.372681%", "1.5,6"): "dcqcn+win",
    ("90.196228%,62.353516%,0%", "12,6,3"): "timely+win",
    ("94.117737%,89.411926%,25.881958%", "13.5,6"): "dctcp",
    ("0%,44.7052%,69.804382%", ""): "hpcc",
}
PANELS = {"a": "hadoop 30% + incast", "c": "hadoop 50%"}
LABELS = ["0", "324", "400", "500", "600", "700", "1K", "7K", "46K", "120K", "10M"]


def polylines(svg):
    """(colour, dash, points in page coordinates) of every stroked path."""
    out = []
    for style, d, tr in re.findall(r'<path style="([^"]*)" d="([^"]*)"(?: transform="matrix\(([^)]*)\)")?', svg):
        colour = re.search(r"stroke:rgb\(([^)]*)\)", style)
        if not colour or "fill:none" not in style:
            continue
        dash = re.search(r"stroke-dasharray:([^;]*)", style)
        t = [float(v) for v in tr.split(",")] if tr else [1, 0, 0, 1, 0, 0]
        pts = [(t[0] * x + t[2] * y + t[4], t[1] * x + t[3] * y + t[5])
               for x, y in ((float(a), float(b)) for a, b in re.findall(r"[ML] ([-\d.]+) ([-\d.]+)", d))]
        out.append((colour.group(1), dash.group(1) if dash else "", pts))
    return out


def panel_axes(lines, left, ys):
    """The panel whose y axis is at x = `left` and whose curves span `ys`:
    (y of 1, y per decade, x of tick 0, x per tick)."""
    ticks = [p for c, _, p in lines if c.startswith("0%,0%,0%") and len(p) == 2
             and min(ys) - 50 < p[0][1] < max(ys) + 50]
    major = sorted(p[0][1] for p in ticks  # the long ticks on the y axis: 1, 10, 100
                   if abs(p[0][0] - left) < 0.05 and abs(p[1][1] - p[0][1]) < 0.01 and p[1][0] - p[0][0] > 2)
    xs = sorted(p[0][0] for p in ticks  # the x axis's ticks, vertical, from the axis up
                if abs(p[0][0] - p[1][0]) < 0.01 and left - 0.05 < p[0][0] < left + 100
                and abs(max(p[0][1], p[1][1]) - major[-1]) < 0.05)
    assert len(major) == 3 and len(xs) == len(LABELS), (major, xs)
    return major[-1], (major[-1] - major[0]) / 2, xs[0], (xs[-1] - xs[0]) / (len(xs) - 1)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftocairo", "-svg", "-f", "11", "-l", "11", sys.argv[1], f"{tmp}/p.svg"], check=True)
        with open(f"{tmp}/p.svg") as f:
            lines = polylines(f.read())
    curves = [(c, d, p) for c, d, p in lines if len(p) == 20]
    # The page's three rows of 20-point curves are figures 10, 11 and 12;
    # figure 11's is the second, its panel (a) the left one.
    tops = sorted(min(y for _, y in p) for _, _, p in curves)
    rows = [t for i, t in enumerate(tops) if i == 0 or t - tops[i - 1] > 40]
    row = [(c, d, p) for c, d, p in curves if rows[1] <= min(y for _, y in p) < rows[2]]
    lefts = sorted({round(p[0][0], 2) for _, _, p in row})
    print("panel,workload,algorithm,bucket,percentiles,from_size,p95_slowdown")
    for panel, left in zip("ac", lefts):
        ys = [y for _, _, p in row if round(p[0][0], 2) == left for _, y in p]
        y1, decade, x0, tick = panel_axes(lines, left, ys)
        for colour, dash, pts in row:
            if round(pts[0][0], 2) != left:
                continue
            name = next((n for (c, d), n in CURVES.items() if c == colour and dash.startswith(d)), None)
            assert name, (colour, dash)
            for x, y in pts:
                i = round((x - x0) / tick * 2)
                label = LABELS[i // 2] if i % 2 == 0 else ""
                print(f"{panel},{PANELS[panel]},{name},{i},{5 * i}-{5 * i + 5},{label},{10 ** ((y1 - y) / decade):.2f}")


if __name__ == "__main__":
    main()
