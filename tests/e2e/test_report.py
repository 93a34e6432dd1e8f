"""`rdmasim report` and `compare --report`: a self-contained HTML page whose
figures matplotlib drew as SVG; headless Chromium loads it without errors,
every figure is in its DOM, and its screenshot is not blank."""

import json
import os
import re
import subprocess

import e2e
from e2e import check, rdmasim, write_text

EXPERIMENT = """
name: report_test
topology: {hosts: [a, b, c], switches: [s], links: [[a, s], [b, s], [c, s]]}
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 16KiB, count: 20, outstanding: 2}
  - {name: ic, kind: incast, from: [a, b], to: c, size: 8KiB, count: 10}
  - {name: fl, kind: flows, hosts: [a, b, c], cdf: hadoop, load: 0.5, duration: 40us}
capture: {pcap: none, latency_samples: true, timeseries: {interval: 2us}}
"""
FIGURES = ["throughput", "latency-p50", "latency-p99", "fct-p99", "latency-cdf", "fct", "queues", "cpu", "cost"]



d = e2e.tmpdir()
exp = write_text(os.path.join(d, "exp.yaml"), EXPERIMENT)
cmp = os.path.join(d, "cmp")
p = rdmasim("compare", exp, "--fabrics", "ib,roce_v2,iwarp", "--out", cmp, "--report")
check(p.returncode == 0, f"compare --report: exit {p.returncode}: {p.stderr}")
page = os.path.join(cmp, "report.html")
with open(page) as f:
    text = f.read()
for fid in FIGURES:
    check(re.search(f'<figure id="{fid}"><svg', text) is not None, f"figure {fid} is an inline SVG")


def figure(fid):
    m = re.search(f'<figure id="{fid}">(.*?)</figure>', text, re.S)
    return m.group(1) if m else ""


# Each figure draws what its data holds: a line per workload with samples or
# flows, per fabric, and the queues' ports; not an empty frame.
lines = lambda fid: len(re.findall(r'<path[^>]*clip-path=', figure(fid)))
check(lines("latency-cdf") >= 2 * 3, f"latency CDF: a line per workload and fabric ({lines('latency-cdf')})")
check(lines("fct") >= 3, f"FCT slowdown: a line per fabric ({lines('fct')})")
check("&lt;= 10 KB" in figure("fct") or "<= 10 KB" in figure("fct"), "FCT buckets named by size")
# The latency figure says what each workload's latency is (half a round
# trip, post to completion, ...): results.json's latency_measure.
check("half RTT" in figure("latency-p50") or "post to CQE" in figure("latency-p50"), "latency: each workload's measure named")
check(lines("queues") >= 1 and "s:" in figure("queues"), "queues: the longest queues by node:port")
# The cost figure: a point per fabric, and the Pareto front (no other run
# as cheap and as fast) drawn when it has more than one point.
with open(os.path.join(cmp, "compare.json")) as f:
    pts = [(e["cost"]["total"], e["cost"]["delivered_gbps"]) for e in json.load(f)["fabrics"]]
front = [p for p in pts if not any(q[0] <= p[0] and q[1] >= p[1] and q != p for q in pts)]
check(len(re.findall(r'<g id="point-', figure("cost"))) == 3, "cost: a point per fabric")
check(("Pareto front" in figure("cost")) == (len(front) > 1), f"cost: the Pareto front {front} of {pts}")
check(not re.search(r'(src|href)="(https?:|//)', text), "self-contained: nothing loaded from elsewhere")
for fabric in ("ib", "roce_v2", "iwarp"):
    check(f"<td>{fabric}</td>" in text, f"the table has {fabric}")

# The same folders make the same page; a sweep folder works too.
again = os.path.join(d, "again.html")
p = rdmasim("report", cmp, "--out", again)
check(p.returncode == 0 and open(again).read() == text, "report is deterministic")
sweep = os.path.join(d, "sweep")
p = rdmasim("sweep", exp, "--vary", "workloads.0.size=4KiB,16KiB", "--out", sweep)
p = rdmasim("report", sweep, cmp, "--out", os.path.join(d, "both.html"))
check(p.returncode == 0 and "workloads.0.size=4KiB" in open(os.path.join(d, "both.html")).read(),
      f"report of a sweep and a comparison: {p.stderr}")
# A page written into a run's folder is rdmasim's: the next run replaces it.
solo = os.path.join(d, "solo")
p = rdmasim("run", exp, "--out", solo)
p = rdmasim("report", solo)
check(p.returncode == 0 and os.path.exists(os.path.join(solo, "report.html")), f"report of a run: {p.stderr}")
p = rdmasim("run", exp, "--out", solo)
check(p.returncode == 0, f"a run into a folder with its report: exit {p.returncode}: {p.stderr}")
p = rdmasim("report", os.path.join(d, "nothing"))
check(p.returncode == 2 and "no such directory" in p.stderr, f"a missing folder: exit {p.returncode}")
os.makedirs(os.path.join(d, "empty"))
p = rdmasim("report", os.path.join(d, "empty"))
check(p.returncode == 2 and "no results.json, compare.json or sweep.json" in p.stderr, p.stderr)

# Headless Chromium: no console errors, every figure in the DOM, a screenshot that is not blank.
chromium = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0"]
url = "file://" + os.path.abspath(page)
dom = subprocess.run(chromium + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
check(dom.returncode == 0, f"chromium --dump-dom: {dom.stderr[-500:]}")
check("Uncaught" not in dom.stderr and ":CONSOLE(" not in dom.stderr, f"console errors: {dom.stderr[-500:]}")
for fid in FIGURES:
    check(re.search(f'<figure id="{fid}"><svg', dom.stdout) is not None, f"chromium rendered figure {fid}")
shot = os.path.join(d, "shot.png")
s = subprocess.run(chromium + ["--window-size=1000,2600", f"--screenshot={shot}", url],
                   capture_output=True, text=True, timeout=120)
check(s.returncode == 0 and os.path.exists(shot), f"screenshot: {s.stderr[-500:]}")
# Debian's python3 has PIL with matplotlib: count the pixels that are not background.
stats = subprocess.run(["/usr/bin/python3", "-c", """
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
px = list(im.getdata())
print(sum(1 for p in px if p != (255, 255, 255)) / len(px), len(set(px)))
""", shot], capture_output=True, text=True, timeout=120)
ink, colours = (float(x) for x in stats.stdout.split())
check(ink > 0.02 and colours > 20, f"screenshot not blank: {ink:.3f} of pixels inked, {colours:.0f} colours")

e2e.finish()
