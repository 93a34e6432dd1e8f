"""docs/validation.md's figure 11 comparison, made small: `validate.py
figure11` on a one-pod tree for 60 us runs FB_Hadoop at 30 % with incasts
and at 50 % for the four algorithms, and writes the side-by-side tables
and figure where it is told (not into docs/). Each of rdmasim's values is
what the reference's analysis computes from flows.csv (the flows workload's
flows by size in 20 groups of 5 %, each group's sorted slowdowns at
int(n * 0.95)), each of the paper's is hpcc_figure11.csv's, and the
incasts are there (every other host to one, 2 % of the capacity)."""
import csv
import os
import re
import subprocess

from e2e import BINARY, SOURCE, check, finish, tmpdir

python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"  # Debian's matplotlib
work = tmpdir()
script = os.path.join(SOURCE, "bench", "validation", "validate.py")
p = subprocess.run([python, script, "figure11", "--binary", BINARY, "--pods", "1", "--hosts-per-tor", "4",
                    "--duration", "60us", "--work", work, "--figures", work], capture_output=True, text=True,
                   timeout=600)
if not check(p.returncode == 0, f"validate.py figure11: exit {p.returncode}\n{p.stderr[-2000:]}"):
    finish()
check(os.path.exists(os.path.join(work, "validation_hpcc_figure11.svg")), "the figure is written where --figures says")

paper = {}
with open(os.path.join(SOURCE, "bench", "validation", "hpcc_figure11.csv")) as f:
    for r in csv.DictReader(f):
        paper[(r["panel"], r["algorithm"], int(r["bucket"]))] = float(r["p95_slowdown"])
check(len(paper) == 2 * 6 * 20, f"the paper's curves: 2 panels, 6 algorithms, 20 points ({len(paper)})")

with open(os.path.join(work, "hpcc", "figure11.md")) as f:
    text = f.read()
tables = text.split("Figure 11")[1:]
check(len(tables) == 2, f"two tables: {text[:300]}")


def ours(run):
    """The reference's groups of `run`'s flows.csv: each group's p95 slowdown."""
    with open(os.path.join(work, "hpcc", run, "flows.csv")) as f:
        done = sorted((int(r["size_bytes"]), max(1.0, float(r["slowdown"])))
                      for r in csv.DictReader(f) if r["workload"] == "flows" and r["slowdown"])
    n, out = len(done), []
    for i in range(20):
        part = sorted(x for _, x in done[i * 5 * n // 100:(i + 1) * 5 * n // 100])
        out.append(part[int(len(part) * 0.95)] if part else None)
    return out


for panel, table, run in (("a", tables[0], "hadoop_30_incast"), ("c", tables[1], "hadoop_50")):
    rows = [l for l in table.splitlines() if re.match(r"\| \d+–\d+ \|", l)]
    check(len(rows) == 20, f"11{panel}: 20 groups of 5 % ({len(rows)})")
    header = next(l for l in table.splitlines() if l.startswith("| flows"))
    algos = [c.strip() for c in header.strip("|").split("|")][2:]
    check(algos == ["dcqcn", "timely", "dctcp", "hpcc"], f"11{panel}: the four algorithms {algos}")
    for a_i, algo in enumerate(algos):
        mine = ours(f"{algo}_{run}")
        for g, row in enumerate(rows):
            cell = [c.strip() for c in row.strip("|").split("|")][2 + a_i]
            got, theirs = cell.split(" / ")
            want = "–" if mine[g] is None else f"{mine[g]:.2f}"
            check(got == want, f"11{panel} {algo} group {g}: {got}, flows.csv gives {want}")
            check(theirs == f"{paper[(panel, algo, g)]:.2f}", f"11{panel} {algo} group {g}: the paper's {theirs}")

# The incasts: 15 senders (every other host of 16) to one, 500 KB each, one
# every 15 x 500 KB x 8 / (2 % x 16 x 100 Gb/s) = 1.875 ms: one in 60 us, at 0.
with open(os.path.join(work, "hpcc", "dcqcn_hadoop_30_incast.yaml")) as f:
    incasts = [l for l in f if "kind: incast" in l]
check(len(incasts) == 1, f"one incast in 60 us: {len(incasts)}")
for l in incasts:
    senders = re.search(r"from: \[([^\]]*)\]", l).group(1).split(", ")
    to = re.search(r"to: (h\d+)", l).group(1)
    check(len(set(senders)) == 15 and to not in senders and "size: 500000" in l and "start: 0.000us" in l,
          f"an incast of 15 to 1 at 0: {l}")
with open(os.path.join(work, "hpcc", "dcqcn_hadoop_50.yaml")) as f:
    check("kind: incast" not in f.read(), "no incast at 50 % (figure 11c)")

# At full size (320 hosts, 3 ms): one every 60 x 500 KB x 8 / (2 % x 320 x
# 100 Gb/s) = 375 us, 8 of them, each of 60 distinct senders to another host.
p = subprocess.run([python, "-c", "import sys; sys.argv = ['v']; import validate; "
                    "print(validate.incast_workloads(320, 3000.0, 1))"],
                   cwd=os.path.dirname(script), capture_output=True, text=True, timeout=120)
lines = [l for l in p.stdout.splitlines() if "kind: incast" in l]
check(p.returncode == 0 and len(lines) == 8, f"8 incasts in 3 ms on 320 hosts: {p.stderr[-500:]}{len(lines)}")
for i, l in enumerate(lines):
    senders = re.search(r"from: \[([^\]]*)\]", l).group(1).split(", ")
    to = re.search(r"to: (h\d+)", l).group(1)
    check(len(set(senders)) == 60 and to not in senders and f"start: {375 * i:.3f}us" in l,
          f"incast {i}: 60 senders to another host at {375 * i} us: {l[:120]}")
finish()
