"""The cost figure of `rdmasim report` keeps its words apart: the Pareto
front's legend covers no point and no point's label, and every label is
inside the axes (none cut at the frame). The points are docs/cost.md's
leaf-spine comparison, whose legend once covered iwarp's label."""

import json
import os
import re

import e2e
from e2e import check, rdmasim, write_text

# fabric: (total cost USD, delivered Gb/s), as docs/cost_leaf_spine.svg shows them.
POINTS = {"ib": (109199, 698.0), "roce_v1": (132820, 395.0), "roce_v2": (138142, 710.0), "iwarp": (81618, 687.0)}

d = e2e.tmpdir()
cmp = os.path.join(d, "cmp")
for fabric, (total, gbps) in POINTS.items():
    # 1 ms of workload moving gbps: bytes = gbps * 1e9 / 8 * 1e-3.
    results = {"experiment": "layout", "fabric": fabric, "seed": 1, "end_time_ps": 10**9,
               "workloads": [{"name": "w", "kind": "rdma_write", "start_ps": 0, "end_ps": 10**9,
                              "bytes": int(gbps * 1e9 / 8 / 1e3), "ops": 1000, "throughput_gbps": gbps,
                              "latency_ns": {"p50": 1000, "p99": 2000, "p999": 3000}, "data_verified": True}],
               "cost": {"currency": "USD", "total": total, "capex": total, "per_gbps": total / gbps}}
    os.makedirs(os.path.join(cmp, fabric))
    write_text(os.path.join(cmp, fabric, "results.json"), json.dumps(results))
write_text(os.path.join(cmp, "compare.json"),
           json.dumps({"experiment": "layout", "seed": 1,
                       "fabrics": [{"fabric": f, "status": "ok"} for f in POINTS]}))
page = os.path.join(d, "report.html")
p = rdmasim("report", cmp, "--out", page)
if not check(p.returncode == 0, f"report: exit {p.returncode}: {p.stderr}"):
    e2e.finish()
with open(page) as f:
    fig = re.search(r'<figure id="cost">(.*?)</figure>', f.read(), re.S).group(1)


def box(path_d):
    xs = [float(v) for v in re.findall(r"[-\d.]+", path_d)]
    return min(xs[0::2]), min(xs[1::2]), max(xs[0::2]), max(xs[1::2])


def text_box(x, y, size, words):
    # DejaVu Sans: no glyph is wider than 0.7 em; the box runs from the baseline up one em.
    return x, y - size, x + 0.7 * size * len(words), y + 0.25 * size


def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


axes = box(re.search(r'<g id="patch_2">\s*<path d="([^"]*)"', fig).group(1))
legend_svg = re.search(r'<g id="legend_1">(.*?)\n   </g>', fig, re.S)
check(legend_svg is not None, "the cost figure has the Pareto front's legend")
legend = box(re.search(r'<path d="([^"]*)"', legend_svg.group(1)).group(1))
labels = {}
for m in re.finditer(r'<text style="font: ([\d.]+)px[^"]*text-anchor: start" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]+)</text>',
                     fig.replace(legend_svg.group(0), "")):
    labels[m.group(4)] = text_box(float(m.group(2)), float(m.group(3)), float(m.group(1)), m.group(4))
check(sorted(labels) == sorted(POINTS), f"a label per fabric: {sorted(labels)}")
points = [(float(x) - 3, float(y) - 3, float(x) + 3, float(y) + 3)
          for x, y in re.findall(r'<use xlink:href="#m[0-9a-f]+" x="([\d.]+)" y="([\d.]+)" style="fill: #', fig)]
check(len(points) == len(POINTS), f"a point per fabric: {len(points)}")
for name, b in labels.items():
    check(not overlap(legend, b), f"the legend {legend} covers no label: {name} {b}")
    check(axes[0] <= b[0] and b[2] <= axes[2] and axes[1] <= b[1] and b[3] <= axes[3],
          f"{name}'s label {b} is inside the axes {axes}")
for b in points:
    check(not overlap(legend, b), f"the legend {legend} covers no point: {b}")

e2e.finish()
