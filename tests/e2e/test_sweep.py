"""`rdmasim sweep`: a row per run, each run byte-identical to the same
`rdmasim run`; means with confidence intervals over seeds; the Slurm array
script runs the same points; bad --vary values are located errors."""

import csv
import json
import os
import signal
import subprocess
import time

import e2e
from e2e import check, rdmasim, write_text

EXPERIMENT = """
name: sweep_test
fabric: roce_v2
link: {loss: 0.002}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 16KiB, count: 40, outstanding: 4}
capture: {pcap: none}
"""



def read(path):
    with open(path) as f:
        return f.read()


d = e2e.tmpdir()
exp = write_text(os.path.join(d, "exp.yaml"), EXPERIMENT)

out = os.path.join(d, "sweep")
p = rdmasim("sweep", exp, "--vary", "fabric=roce_v2,iwarp", "--vary", "seed=1,4", "-j", "2", "--out", out)
check(p.returncode == 0, f"sweep exit {p.returncode}: {p.stderr}")
with open(os.path.join(out, "sweep.csv")) as f:
    rows = list(csv.DictReader(f))
check([(r["fabric"], r["seed"]) for r in rows] == [("roce_v2", "1"), ("roce_v2", "4"), ("iwarp", "1"), ("iwarp", "4")],
      f"rows in grid order: {rows}")

# Each row is the run one would make by hand, byte for byte.
for r in rows:
    solo = os.path.join(d, f"solo-{r['fabric']}-{r['seed']}")
    q = rdmasim("run", exp, "--fabric", r["fabric"], "--seed", r["seed"], "--out", solo)
    check(q.returncode == 0, f"solo run {r['fabric']} {r['seed']}")
    mine = read(os.path.join(out, "runs", r["run"], "results.json"))
    check(mine == read(os.path.join(solo, "results.json")), f"{r['run']}: results.json equals the solo run's")
    res = json.loads(mine)
    w = res["workloads"][0]
    check(r["exit_code"] == "0", f"{r['run']}: exit 0")
    check(float(r["w.throughput_gbps"]) == w["throughput_gbps"], f"{r['run']}: throughput as in results.json")
    check(float(r["w.latency_ns.p99"]) == w["latency_ns"]["p99"], f"{r['run']}: p99 as in results.json")
    check(int(r["end_time_ps"]) == res["end_time_ps"], f"{r['run']}: end time as in results.json")
    check(float(r["cost.total"]) == res["cost"]["total"], f"{r['run']}: cost as in results.json")
    # Its log names the folder the run is in now, not the one the sweep staged it in.
    named = [line for line in read(os.path.join(out, "runs", r["run"] + ".log")).splitlines() if line.startswith("output: ")]
    check(len(named) == 1 and named[0].startswith(f"output: {os.path.join(out, 'runs', r['run'])} ("),
          f"{r['run']}.log names its folder: {named}")

# Over seeds: n, mean and a 95% interval (t = 12.706 for two samples).
with open(os.path.join(out, "sweep_summary.csv")) as f:
    summary = {r["fabric"]: r for r in csv.DictReader(f)}
for fabric in ("roce_v2", "iwarp"):
    xs = [float(r["w.throughput_gbps"]) for r in rows if r["fabric"] == fabric]
    s = summary[fabric]
    mean = sum(xs) / 2
    ci = 12.706 * (abs(xs[0] - xs[1]) / 2 ** 0.5) / 2 ** 0.5
    check(s["n"] == "2" and abs(float(s["w.throughput_gbps.mean"]) - mean) < 1e-9, f"{fabric}: mean")
    check(abs(float(s["w.throughput_gbps.ci95"]) - ci) < 1e-6, f"{fabric}: ci95 {s['w.throughput_gbps.ci95']} vs {ci}")
sweep = json.loads(read(os.path.join(out, "sweep.json")))
check(sweep["columns"][:4] == ["run", "exit_code", "fabric", "seed"] and len(sweep["rows"]) == 4, "sweep.json")
# With loss the seeds differ: no note that the seed changes nothing.
check(sweep["summary"]["seed_changes_nothing"] is False and "note" not in sweep["summary"], f"lossy: {sweep['summary']}")
check("seed changes nothing" not in p.stdout, f"lossy: the sweep says the seed changes nothing: {p.stdout}")

# Without loss nothing in it is random: the runs over seed are the same
# (every interval 0), and the sweep, sweep.json and the report say so.
lossless = os.path.join(d, "lossless")
p = rdmasim("sweep", exp, "--vary", "seed=1,2,3", "--set", "link.loss=0", "--out", lossless, "--report")
check(p.returncode == 0, f"lossless sweep: exit {p.returncode}: {p.stderr}")
check("note: seed changes nothing in this experiment" in p.stdout and "docs/yaml.md" in p.stdout,
      f"lossless: the sweep does not say the seed changes nothing: {p.stdout}")
quiet = json.loads(read(os.path.join(lossless, "sweep.json")))["summary"]
check(quiet["seed_changes_nothing"] is True and quiet["note"].startswith("seed changes nothing"), f"lossless: {quiet}")
check(all(v in (0, None) for c, v in zip(quiet["columns"], quiet["rows"][0]) if c.endswith(".ci95")),
      f"lossless: every interval is 0: {quiet['rows']}")
# --report wrote the page beside the tables, as compare --report does.
page = os.path.join(lossless, "report.html")
if "matplotlib" in p.stderr:
    print("no matplotlib: the report's note not checked")
else:
    check(os.path.exists(page) and 'id="seed-note-0"' in read(page) and "seed changes nothing" in read(page),
          f"lossless: sweep --report wrote no page saying the seed changes nothing: {p.stderr}")
p = rdmasim("sweep", exp, "--vary", "seed=1,2", "--emit", "slurm", "--report", "--out", os.path.join(d, "emit-report"))
check(p.returncode == 2 and "--emit" in p.stderr, f"--report with --emit (nothing to report): {p.returncode} {p.stderr}")

# Slurm: the script runs a point; --collect makes the table of what ran.
slurm_dir = os.path.join(d, "slurm")
p = rdmasim("sweep", exp, "--vary", "fabric=roce_v2,iwarp", "--vary", "seed=1,4", "--emit", "slurm",
            "--out", slurm_dir)
check(p.returncode == 0, f"--emit slurm: {p.stderr}")
script = os.path.join(slurm_dir, "sweep.slurm")
text = read(script)
check("#SBATCH --array=0-3" in text, "array of 4 tasks")
check(not os.path.exists(os.path.join(slurm_dir, "runs", "run-000")), "--emit runs nothing")
env = dict(os.environ, SLURM_ARRAY_TASK_ID="2")
q = subprocess.run(["bash", script], capture_output=True, text=True, timeout=600, env=env)
check(q.returncode == 0, f"task 2 ran: {q.stderr}")
p = rdmasim("sweep", exp, "--vary", "fabric=roce_v2,iwarp", "--vary", "seed=1,4", "--collect", "--out", slurm_dir)
with open(os.path.join(slurm_dir, "sweep.csv")) as f:
    collected = list(csv.DictReader(f))
check([r["exit_code"] for r in collected] == ["-1", "-1", "0", "-1"], f"collected: {collected}")
check(read(os.path.join(slurm_dir, "runs", "run-002", "results.json")) == read(os.path.join(out, "runs", "run-002", "results.json")),
      "the Slurm task's run equals the local sweep's")
check(p.returncode != 0 and "run-000: no results.json" in p.stderr, "--collect says which runs are missing")
# The tables --collect wrote are rdmasim's: collecting again (after more
# tasks ran) replaces them instead of refusing the folder.
env = dict(os.environ, SLURM_ARRAY_TASK_ID="0")
q = subprocess.run(["bash", script], capture_output=True, text=True, timeout=600, env=env)
check(q.returncode == 0, f"task 0 ran: {q.stderr}")
p = rdmasim("sweep", exp, "--vary", "fabric=roce_v2,iwarp", "--vary", "seed=1,4", "--collect", "--out", slurm_dir)
check("holds files" not in p.stderr and "run-001: no results.json" in p.stderr, f"collected again: {p.stderr}")
with open(os.path.join(slurm_dir, "sweep.csv")) as f:
    check([r["exit_code"] for r in csv.DictReader(f)] == ["0", "-1", "0", "-1"], "the second collect sees task 0")

# A task writes its log as a local sweep does, runs/<run>.log, and after
# --collect everything in the folder is rdmasim's: a new sweep may replace it.
check("on iwarp, seed 1" in read(os.path.join(slurm_dir, "runs", "run-002.log")), "the task's log is runs/run-002.log")
manifest = read(os.path.join(slurm_dir, ".rdmasim-manifest")).split("\n")
check("runs/run-002.log" in manifest and "runs/run-002/results.json" in manifest, f"manifest: {manifest}")
p = rdmasim("sweep", exp, "--vary", "seed=1,4", "--emit", "slurm", "--out", slurm_dir)
check(p.returncode == 0, f"a new sweep replaces a collected one: {p.stderr}")

# --collect writes into a sweep's folder only (its manifest lists
# sweep.json): it wrote its tables over a user's files in any folder, and
# exited 3 for one that is not there. Exit 2, naming the folder.
mine = os.path.join(d, "mine")
os.mkdir(mine)
write_text(os.path.join(mine, "sweep.csv"), "my table")
for folder, says in ((mine, "not a sweep folder of rdmasim's"), (os.path.join(d, "nowhere"), "no such folder")):
    p = rdmasim("sweep", exp, "--vary", "seed=1,4", "--collect", "--out", folder)
    check(p.returncode == 2 and f"{folder}: {says}" in p.stderr, f"--collect into {folder}: exit {p.returncode}: {p.stderr}")
check(sorted(os.listdir(mine)) == ["sweep.csv"] and read(os.path.join(mine, "sweep.csv")) == "my table",
      f"the user's folder is untouched: {os.listdir(mine)}")
check(not os.path.exists(os.path.join(d, "nowhere")), "no folder made")
# In a sweep's folder: a file of the user's where a table goes is not
# written over, and one beside the tables is not claimed as rdmasim's (the
# manifest took every name starting with "sweep": the next sweep deleted it).
p = rdmasim("sweep", exp, "--vary", "seed=1,4", "--emit", "slurm", "--out", slurm_dir)
check(p.returncode == 0, f"--emit slurm again: {p.stderr}")
write_text(os.path.join(slurm_dir, "sweep_summary.csv"), "my summary")
p = rdmasim("sweep", exp, "--vary", "seed=1,4", "--collect", "--out", slurm_dir)
check(p.returncode == 2 and "sweep_summary.csv: rdmasim did not write it" in p.stderr, f"a user's table: {p.stderr}")
check(read(os.path.join(slurm_dir, "sweep_summary.csv")) == "my summary" and
      not os.path.exists(os.path.join(slurm_dir, "sweep.csv")), "nothing written")
os.rename(os.path.join(slurm_dir, "sweep_summary.csv"), os.path.join(slurm_dir, "sweep_notes.txt"))
p = rdmasim("sweep", exp, "--vary", "seed=1,4", "--collect", "--out", slurm_dir)
check("sweep_notes.txt" not in read(os.path.join(slurm_dir, ".rdmasim-manifest")).split("\n"),
      f"a user's file is not listed as rdmasim's: {p.stderr}")
p = rdmasim("sweep", exp, "--vary", "seed=1,4", "--emit", "slurm", "--out", slurm_dir)
check(p.returncode == 2 and "sweep_notes.txt" in p.stderr and
      read(os.path.join(slurm_dir, "sweep_notes.txt")) == "my summary", f"the next sweep keeps it: {p.stderr}")

# SIGTERM to the sweep alone (as a batch system or `kill` sends it): the
# runs it started stop too, and nothing staged is left behind.
SLOW = EXPERIMENT.replace("count: 40,", "count: 400000,").replace("link: {loss: 0.002}", "")
slow = write_text(os.path.join(d, "slow.yaml"), SLOW)
stopped = os.path.join(d, "stopped")
p = subprocess.Popen([e2e.BINARY, "sweep", slow, "--vary", "seed=1,2,3", "-j", "2", "--out", stopped],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
check("3 runs" in p.stdout.readline(), "the sweep started")


def runs_of(parent):
    """pids of `rdmasim run` processes whose parent is `parent`"""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent:
            pids.append(int(pid))
    return pids


children = []
for _ in range(100):
    children = runs_of(p.pid)
    if len(children) == 2:
        break
    time.sleep(0.05)
check(len(children) == 2, f"two runs at a time: {children}")
time.sleep(0.5)
p.send_signal(signal.SIGTERM)
_, err = p.communicate(timeout=60)
check(p.returncode == 143, f"SIGTERM: exit {p.returncode}: {err}")
check("stopped the 2 process(es) it had started" in err and "was not written" in err, f"says what it stopped and kept: {err}")
alive = [c for c in children if os.path.exists(f"/proc/{c}")]
check(alive == [], f"no run outlives the sweep: {alive}")
check(not [e for e in os.listdir(d) if e.startswith("stopped")], f"nothing left: {os.listdir(d)}")

# Values with commas: a YAML map per value, split only at top-level commas.
maps = os.path.join(d, "maps")
p = rdmasim("sweep", exp, "--vary", "link={bandwidth: 10Gbps, delay: 1us},{bandwidth: 25Gbps, delay: 2us}",
            "--out", maps)
check(p.returncode == 0, f"--vary with maps: {p.stderr}")
with open(os.path.join(maps, "sweep.csv")) as f:
    rows = list(csv.DictReader(f))
check([r["link"] for r in rows] == ["{bandwidth: 10Gbps, delay: 1us}", "{bandwidth: 25Gbps, delay: 2us}"],
      f"two points, one a map: {[r.get('link') for r in rows]}")

# A `stop` without its unit: the sweep warns, as run and compare do.
p = rdmasim("sweep", exp, "--vary", "seed=1", "--set", "stop=500", "--out", os.path.join(d, "ps"))
check(p.returncode == 0 and "warning: <command line>:1:6: stop: 500 has no unit, so it is 500ps" in p.stderr,
      f"sweep warns about stop: {p.stderr}")

# What a storage team and a CC study sweep for: NVMe's IOPS, bandwidth,
# completion latency and CPU an I/O; flows' FCT slowdowns (the columns were
# left out: a sweep over nvme jobs had no figure of theirs).
FIGURES = """
name: sweep_figures
fabric: roce_v2
topology: {hosts: [a, b, c], switches: [s], links: [[a, s], [b, s], [c, s]]}
storage: {targets: [{host: b, namespaces: [{nsid: 1, size: 1GiB, ram: true}]}]}
workloads:
  - {name: io, kind: nvme, initiator: a, target: b, rw: randread, bs: 4k, iodepth: 4, runtime: 300us}
  - {name: fl, kind: flows, cdf: hadoop, load: 0.5, duration: 1ms, hosts: [a, c]}
capture: {pcap: none}
"""
fig = os.path.join(d, "figures")
p = rdmasim("sweep", write_text(os.path.join(d, "figures.yaml"), FIGURES), "--vary", "fabric=roce_v2,tcp",
            "--set", "workloads[1].op=send", "--out", fig)
check(p.returncode == 0, f"nvme and flows sweep: exit {p.returncode}: {p.stderr}")
with open(os.path.join(fig, "sweep.csv")) as f:
    rows = list(csv.DictReader(f))
for r in rows:
    res = json.loads(read(os.path.join(fig, "runs", r["run"], "results.json")))
    io, fl = res["workloads"]
    want = {"io.iops": io["iops"], "io.bw_bytes": io["bw_bytes"],
            "io.clat_ns.p50": io["clat_ns"]["percentile"]["50.000000"],
            "io.clat_ns.p99": io["clat_ns"]["percentile"]["99.000000"],
            "io.clat_ns.p999": io["clat_ns"]["percentile"]["99.900000"],
            "io.cpu.initiator.work_ps_per_io": io["cpu"]["initiator"]["work_ps_per_io"],
            "io.cpu.target.work_ps_per_io": io["cpu"]["target"]["work_ps_per_io"],
            "fl.fct.completed": fl["fct"]["completed"], "fl.fct.slowdown.p50": fl["fct"]["slowdown"]["p50"],
            "fl.fct.slowdown.p95": fl["fct"]["slowdown"]["p95"], "fl.fct.slowdown.p99": fl["fct"]["slowdown"]["p99"]}
    got = {k: r.get(k) for k in want}
    check(all(got[k] not in (None, "") and float(got[k]) == float(v) for k, v in want.items()) and io["iops"] > 0
          and fl["fct"]["completed"] > 0,
          f"{r['fabric']}: sweep.csv has nvme's and flows' figures as in results.json: {got} vs {want}")

# Bad values: located, exit 2, nothing written.
bad = os.path.join(d, "bad")
p = rdmasim("sweep", exp, "--vary", "link.bandwidth=25Gbps,fast", "--out", bad)
check(p.returncode == 2, f"bad --vary: exit {p.returncode}")
# The value is quoted with the option that gave it: --vary, not the --set each run gets.
check("<command line>:1:16: link.bandwidth: expected a rate" in p.stderr and "(--vary link.bandwidth=fast)" in p.stderr,
      p.stderr)
p = rdmasim("sweep", exp, "--vary", "seed=1,0x10", "--out", bad)
check(p.returncode == 2 and "seed: expected a whole number from 0, got '0x10' (--vary seed=0x10)" in p.stderr
      and "--set" not in p.stderr, f"a varied seed: {p.stderr}")
# --fabric or --seed beside a --vary of the same: the vary won without a word.
for option, vary in (("--fabric", "fabric=roce_v2,iwarp"), ("--seed", "seed=1,2")):
    key = vary.split("=")[0]
    p = rdmasim("sweep", exp, "--vary", vary, option, "iwarp" if key == "fabric" else "3", "--out", bad)
    check(p.returncode == 2 and f"{option} and --vary {key}=... both set the {key}; give one of them" in p.stderr,
          f"{option} with --vary {key}: exit {p.returncode}: {p.stderr}")
p = rdmasim("sweep", exp, "--vary", "seed", "--out", bad)
check(p.returncode == 2 and "expected KEY=V1,V2,..." in p.stderr, p.stderr)
check(not os.path.exists(bad), "nothing written")

e2e.finish()
