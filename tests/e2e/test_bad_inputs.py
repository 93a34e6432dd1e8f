"""Inputs an adversarial pass found that crashed, hung or wrote half an
output (docs/reliability.md, "What was tried"): flow-size CDF files that
are directories, FIFOs, devices, or hold sizes past a message's 2 GiB;
a load so small the gap between flows passes the clock; `--prices` a FIFO
or a device; `rdmasim report` on folders whose JSON rdmasim did not write,
or with a directory as the page; `sweep` grids too large to make or varying a key
twice; cost amounts that overflow (and a report of the null costs they made). Each: exit 2 (the page: 3 when it cannot be written), a clear
message, and nothing left behind."""
import json
import os

import e2e
from e2e import check, rdmasim, write_text

d = e2e.tmpdir()
FLOWS = """name: flows
topology: {hosts: [a, b, c], switches: [s1], links: [[a, s1], [b, s1], [c, s1]]}
workloads: [{kind: flows, cdf: CDF, load: 0.3, duration: 20us}]
capture: {pcap: none}
"""
os.makedirs(os.path.join(d, "cdfdir"))
os.mkfifo(os.path.join(d, "fifo.cdf"))
write_text(os.path.join(d, "big.cdf"), "1 0\n4e9 100\n")
write_text(os.path.join(d, "huge.cdf"), "1 0\n1e300 100\n")   # hung: the mean gap overflowed the clock
write_text(os.path.join(d, "zero.cdf"), "0 0\n0 100\n")       # ran no flow at all, silently
write_text(os.path.join(d, "comments.cdf"), "# only a comment\n\n")
for cdf, words in (("cdfdir", "it is a directory"),             # internal error (exit 1)
                   ("fifo.cdf", "not a regular file"),           # blocked forever
                   ("/dev/zero", "not a regular file"),          # read forever
                   ("big.cdf", "line 2: size must be a number of bytes from 0 to 2147483648"),
                   ("huge.cdf", "line 2: size must be"),
                   ("zero.cdf", "every size is 0"),
                   ("comments.cdf", "at least two points, found 0")):
    exp = write_text(os.path.join(d, "flows.yaml"), FLOWS.replace("CDF", cdf))
    for cmd in ("validate", "run"):
        out = os.path.join(d, "out-" + os.path.basename(cdf))
        p = rdmasim(cmd, exp, *(("--out", out) if cmd == "run" else ()), timeout=30)
        check(p.returncode == 2 and f"{exp}:3:" in p.stderr and "workloads[0].cdf" in p.stderr and words in p.stderr,
              f"{cmd} cdf {cdf}: exit {p.returncode}, expected 2 at the cdf saying '{words}': {p.stderr.strip()}")
        check(not os.path.exists(out), f"cdf {cdf}: nothing written")

# load: 1e-300: a gap between flows past the clock's range (it hung): no flow.
exp = write_text(os.path.join(d, "flows.yaml"), FLOWS.replace("CDF", "hadoop").replace("0.3", "1e-300"))
p = rdmasim("run", exp, "--out", os.path.join(d, "tiny"), timeout=30)
check(p.returncode == 0, f"load 1e-300: exit {p.returncode}: {p.stderr}")

# --prices: a FIFO or a device blocked or was read forever.
exp = write_text(os.path.join(d, "two.yaml"), e2e.TWO_HOSTS)
for prices in (os.path.join(d, "fifo.cdf"), "/dev/zero"):
    p = rdmasim("validate", exp, "--prices", prices, timeout=30)
    check(p.returncode == 2 and f"{prices}:1:1: cannot read the file: it is not a regular file" in p.stderr,
          f"--prices {prices}: exit {p.returncode}: {p.stderr}")

# report: JSON rdmasim did not write is the folder's fault (exit 2, named), not a traceback.
for name, files in (("notjson", {"results.json": "not json"}), ("list", {"results.json": "[]"}),
                    ("badcompare", {"compare.json": '{"fabrics": 3}'}),
                    ("badresults", {"results.json": '{"workloads": 5, "fabric": "ib"}'})):
    folder = os.path.join(d, name)
    os.makedirs(folder)
    for f, text in files.items():
        write_text(os.path.join(folder, f), text)
    page = os.path.join(d, name + ".html")
    p = rdmasim("report", folder, "--out", page)
    check(p.returncode == 2 and "not" in p.stderr and "Traceback" not in p.stderr and folder in p.stderr,
          f"report of {name}: exit {p.returncode}, expected 2 naming the folder: {p.stderr.strip()[-400:]}")
    check(not os.path.exists(page) and not os.path.exists(page + ".tmp"), f"report of {name}: no page")

# report of a sweep's folder with no runs (--emit slurm, before its job ran)
# said it held no sweep.json; of a comparison where no fabric ran, no
# compare.json. Each says what it holds: exit 2, no page.
emitted = os.path.join(d, "emitted")
p = rdmasim("sweep", write_text(os.path.join(d, "emit.yaml"), e2e.TWO_HOSTS), "--vary", "seed=1,2",
            "--emit", "slurm", "--out", emitted)
check(p.returncode == 0, f"--emit slurm: {p.stderr}")
failed = os.path.join(d, "failed")
os.makedirs(failed)
write_text(os.path.join(failed, "compare.json"), '{"fabrics": [{"fabric": "ib", "status": "failed", "reason": "x"}]}')
for folder, says in ((emitted, "the sweep folder holds no runs"), (failed, "the comparison holds no fabric that ran")):
    p = rdmasim("report", folder)
    check(p.returncode == 2 and f"{folder}: {says}" in p.stderr and "Traceback" not in p.stderr,
          f"report of {folder}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    check(not os.path.exists(os.path.join(folder, "report.html")), f"report of {folder}: no page")

# report --out: a directory is refused (it wrote DIR/.tmp and died); a page
# in a missing folder cannot be written (exit 3), and leaves nothing.
run = os.path.join(d, "run")
exp = write_text(os.path.join(d, "two.yaml"), e2e.TWO_HOSTS)
p = rdmasim("run", exp, "--out", run)
check(p.returncode == 0, f"run: {p.stderr}")
target = os.path.join(d, "pages")
os.makedirs(target)
p = rdmasim("report", run, "--out", target + "/")
check(p.returncode == 2 and "is a directory" in p.stderr and os.listdir(target) == [],
      f"report --out DIR/: exit {p.returncode}: {p.stderr.strip()[-300:]}; left {os.listdir(target)}")
p = rdmasim("report", run, "--out", os.path.join(d, "missing", "r.html"))
check(p.returncode == 3 and "cannot write" in p.stderr and "Traceback" not in p.stderr,
      f"report --out in a missing folder: exit {p.returncode}: {p.stderr.strip()[-300:]}")

# cost: a price of 1e308 overflowed capex to inf, null in results.json,
# and the report then failed (TypeError). Amounts are bounded, at the
# place they were written (the file, --prices, --set); a results.json
# with null costs still makes a page.
prices = write_text(os.path.join(d, "prices.yaml"), "watts: {roce_nic_100g: 1e7}\n")
for args, where in ((["--set", "cost.prices.roce_nic_100g=1e308"], "<command line>:1:27: cost.prices.roce_nic_100g: "),
                    (["--set", "cost.years=1e-300"], "<command line>:1:12: cost.years: "),
                    (["--set", "cost.pue=1e308"], "<command line>:1:10: cost.pue: "),
                    (["--prices", prices], prices + ":1:24: watts.roce_nic_100g: ")):
    p = rdmasim("validate", exp, *args)
    check(p.returncode == 2 and p.stderr.startswith(where) and "expected a number" in p.stderr,
          f"cost {args}: exit {p.returncode}, expected 2 at {where}: {p.stderr}")
with open(os.path.join(run, "results.json")) as f:
    results = json.load(f)
c = results["cost"]
c["capex"] = c["total"] = c["bom"][0]["price"] = c["bom"][0]["unit_price"] = c["assumptions"]["years"] = None
for u in c["per_unit"]:
    u["network"] = u["total"] = None
nulls = os.path.join(d, "nullcost")
os.makedirs(nulls)
write_text(os.path.join(nulls, "results.json"), json.dumps(results))
p = rdmasim("report", nulls, "--out", os.path.join(d, "nullcost.html"))
check(p.returncode == 0 and "Capex - USD" in open(os.path.join(d, "nullcost.html")).read(),
      f"report of null costs: exit {p.returncode}: {p.stderr.strip()[-300:]}")

# sweep: a grid of 10^10 points (bad_alloc), or 2^64 (wrapped to none: exit 2 and no word).
args = sum([["--vary", f"k{i}=" + ",".join(str(v) for v in range(10))] for i in range(10)], [])
p = rdmasim("sweep", exp, *args, "--out", os.path.join(d, "sw"), timeout=60)
check(p.returncode == 2 and "more than a sweep runs (10000)" in p.stderr,
      f"sweep of 10^10 points: exit {p.returncode}: {p.stderr.strip()[-300:]}")
args = sum([["--vary", f"k{i}=" + ",".join(str(v) for v in range(256))] for i in range(8)], [])
p = rdmasim("sweep", exp, *args, "--out", os.path.join(d, "sw"), timeout=60)
check(p.returncode == 2 and "more than a sweep runs" in p.stderr, f"sweep of 2^64 points: exit {p.returncode}: {p.stderr}")
p = rdmasim("sweep", exp, "--vary", "seed=1,2", "--vary", "seed=3", "--out", os.path.join(d, "sw"))
check(p.returncode == 2 and "seed is varied twice" in p.stderr, f"sweep varying seed twice: {p.stderr}")
check(not os.path.exists(os.path.join(d, "sw")), "a refused sweep writes nothing")

e2e.finish()
