"""`rdmasim report` of sweeps and of several folders, read as a browser
draws it: headless Chromium runs a script on the page that measures every
SVG text box and legend, and the test checks that no two texts intersect,
that no legend lies over a plot, that a sweep over a size plots each metric
as one line per fabric against the size on a log axis (a point per size,
error bars where the seeds differ), that unordered configurations get a bar
each, named on the axis, and that the figures are those the configurations
call for. The DPDK stack is named as such, and workloads with no data to
check say n/a and why."""

import json
import os

import e2e
from e2e import check, rdmasim, write_text
from report_probe import check_readable, probe

EXPERIMENT = """
name: report_sweep
fabric: roce_v2
link: {bandwidth: 25Gbps, loss: 0.002}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads:
  - {name: bulk, kind: rdma_write, from: a, to: b, size: 4KiB, count: 30, outstanding: 4}
  - {name: ping, kind: send, from: b, to: a, size: 1KiB, count: 10}
capture: {pcap: none}
"""
SIZES = ["1KiB", "4KiB", "16KiB", "64KiB"]
FABRICS = ["roce_v2", "iwarp"]

def results(folder):
    with open(os.path.join(folder, "results.json")) as f:
        return json.load(f)


d = e2e.tmpdir()
exp = write_text(os.path.join(d, "exp.yaml"), EXPERIMENT)

# ---- a sweep over a size, two fabrics, two seeds: lines ---------------------
sweep = os.path.join(d, "sweep")
p = rdmasim("sweep", exp, "--vary", "workloads.0.size=" + ",".join(SIZES), "--vary", "fabric=" + ",".join(FABRICS),
            "--vary", "seed=1,2", "-j", "2", "--out", sweep)
check(p.returncode == 0, f"sweep: exit {p.returncode}: {p.stderr}")
with open(os.path.join(sweep, "sweep.json")) as f:
    rows = json.load(f)["rows"]
runs = {(r[2], r[3], r[4]): results(os.path.join(sweep, "runs", r[0])) for r in rows}
page = os.path.join(d, "sweep.html")
p = rdmasim("report", sweep, "--out", page)
check(p.returncode == 0, f"report of the sweep: exit {p.returncode}: {p.stderr}")
figs = probe(page)
check_readable(figs, "sweep")

# The figures the sweep calls for: a metric each, the drops only if some run dropped.
expected = ["sweep-throughput", "sweep-latency-p50", "sweep-latency-p99", "sweep-cpu", "sweep-cost-per-gb",
            "sweep-cost-per-mop"]
if any(r["drops"]["total"] for r in runs.values()):
    expected.insert(3, "sweep-drops")
check(sorted(figs) == sorted(expected), f"the sweep's figures: {sorted(figs)}, expected {sorted(expected)}")
for fid in ("sweep-throughput", "sweep-latency-p50", "sweep-latency-p99"):
    f = figs.get(fid, {"series": [], "texts": [], "legends": 0, "errorbars": 0, "bars": 0})
    # A panel per workload (bulk, ping), a line per fabric in each, a point per size.
    check(f["series"] == [len(SIZES)] * (len(FABRICS) * 2), f"{fid}: a line per fabric and workload, a point "
          f"per size: {f['series']}")
    check(f["legends"] == 1 and all(x in f["texts"] for x in FABRICS + ["fabric"]), f"{fid}: one legend naming the fabrics")
    check("workloads.0.size (log scale)" in f["texts"], f"{fid}: the size on a log axis")
    check(all(s in f["texts"] for s in SIZES), f"{fid}: each size named on the axis")
    check(f["bars"] == 0, f"{fid}: no bars for an ordered key")
# Error bars where the two seeds differ (the link loses frames), none where they agree.
differ = sum(1 for fab in FABRICS for s in SIZES for wl in ("bulk", "ping")
             if len({next(w["throughput_gbps"] for w in runs[(s, fab, seed)]["workloads"] if w["name"] == wl)
                     for seed in ("1", "2")}) > 1)
lines_with_spread = sum(1 for fab in FABRICS for wl in ("bulk", "ping")
                        if any(len({next(w["throughput_gbps"] for w in runs[(s, fab, seed)]["workloads"]
                                          if w["name"] == wl) for seed in ("1", "2")}) > 1 for s in SIZES))
check(differ > 0, "the seeds differ somewhere (the test needs it)")
check(figs.get("sweep-throughput", {}).get("errorbars") == lines_with_spread,
      f"throughput: error bars on the {lines_with_spread} lines whose seeds differ")

# ---- a sweep over names only, a comparison and a run, on one page: bars -----
names = os.path.join(d, "names")
p = rdmasim("sweep", exp, "--vary", "fabric=" + ",".join(FABRICS), "--vary", "seed=1,2", "--out", names)
check(p.returncode == 0, f"sweep over fabrics: {p.stderr}")
cmp = os.path.join(d, "cmp")
p = rdmasim("compare", exp, "--fabrics", "ib,roce_v2,iwarp", "--out", cmp)
check(p.returncode == 0, f"compare: {p.stderr}")
solo = os.path.join(d, "solo")
p = rdmasim("run", exp, "--out", solo)
check(p.returncode == 0, f"run: {p.stderr}")
page = os.path.join(d, "mixed.html")
p = rdmasim("report", names, cmp, solo, sweep, "--out", page)
check(p.returncode == 0, f"report of four folders: {p.stderr}")
figs = probe(page)
check_readable(figs, "mixed")
configs = len(FABRICS) + 3 + 1  # names: a bar per fabric (seeds averaged); cmp: 3; solo: 1
for fid in ("throughput", "latency-p50", "cpu"):
    f = figs.get(fid, {"bars": 0, "series": [], "texts": []})
    panels = 2 if fid != "cpu" else 1
    check(f["bars"] == configs * panels, f"{fid}: a bar per configuration and workload: {f['bars']}")
    check(f["series"] == [] and f["legends"] == 0, f"{fid}: bars named on the axis, no legend")
    for label in ("names: fabric=iwarp", "cmp: ib", "solo: roce_v2"):
        check(any(label in t for t in f["texts"]), f"{fid}: names {label}")
check(any(k.startswith("sweep-") for k in figs), "the ordered sweep keeps its lines on the same page")
check(not any(k in figs for k in ("latency-cdf", "fct", "queues", "cost")),
      "per-run figures are left out beyond 8 runs")
text = open(page).read()
check("at most 8 runs" in text, "the page says why per-run figures are left out")
check("<th>part</th>" in text and "eth_switch_" in text and "Opex = " in text, "the cost model's BOM and opex")

# ---- what a row says: the DPDK stack, n/a for what carries no checked data --
KERNEL = """
name: stacks
fabric: tcp
link: {bandwidth: 10Gbps, mtu: 1500}
host: {cores: 2}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads:
  - {name: flood, kind: udp, from: a, to: b, size: 64, rate: 2Gbps, duration: 200us}
capture: {pcap: none}
"""
kexp = write_text(os.path.join(d, "kernel.yaml"), KERNEL)
kcmp = os.path.join(d, "kcmp")
p = rdmasim("compare", kexp, "--fabrics", "tcp,dpdk", "--out", kcmp)
check(p.returncode == 0, f"compare tcp,dpdk: {p.stderr}")
p = rdmasim("report", kcmp, "--out", os.path.join(d, "k.html"))
text = open(os.path.join(d, "k.html")).read()
check("<td>tcp (DPDK stack)</td>" in text and "<td>tcp (kernel stack)</td>" in text,
      "the fabric column names the host stack")
check("<td>NO</td>" not in text and "<td>n/a</td>" in text and "n/a: no workload here carries data to check" in text,
      "UDP rows: n/a, and why")

e2e.finish()
