"""`rdmasim report` over what a user may hand it (docs/report.md): a folder
named twice is counted once, rows of several folders say whose they are,
a page a killed report left half-made is cleaned up by the next report or
run into its folder, and every bad input is refused with exit 2 naming the
file (its line and column where the JSON is broken), no traceback, no page
and no temporary file left, no file of the user's touched.

Before: `report run1 ./run1/` counted the run twice; two comparisons of
one fabric gave two rows `ib`; a SIGKILLed report left report.html.tmp-<pid>,
which made the next `run` into that folder refuse it; a compare.json put
in place of a results.json made a page of nothing, exit 0."""
import json
import os
import re
import signal
import subprocess
import time

import e2e
from e2e import TWO_HOSTS, check, rdmasim, write_text

d = e2e.tmpdir()
WORKLOAD = {"name": "w", "kind": "rdma_write", "start_ps": 0, "end_ps": 10**9, "bytes": 12_500_000, "ops": 1000,
            "throughput_gbps": 100.0, "latency_ns": {"p50": 1000, "p99": 2000, "p999": 3000},
            "data_verified": True}


def results(fabric="ib", gbps=100.0):
    return {"experiment": "same", "fabric": fabric, "seed": 1, "end_time_ps": 10**9,
            "workloads": [dict(WORKLOAD, throughput_gbps=gbps)]}


def folder(path, files):
    """A folder under d holding `files` ({relative path: JSON object, or text})."""
    path = os.path.join(d, path)
    for rel, content in files.items():
        os.makedirs(os.path.dirname(os.path.join(path, rel)), exist_ok=True)
        write_text(os.path.join(path, rel), content if isinstance(content, str) else json.dumps(content))
    os.makedirs(path, exist_ok=True)
    return path


def comparison(path, gbps):
    return folder(path, {"compare.json": {"experiment": "same", "fabrics": [{"fabric": "ib", "status": "ok"}]},
                         "ib/results.json": results("ib", gbps)})


def report(*args):
    p = rdmasim("report", *args)
    check("Traceback" not in p.stderr, f"report {args}: no traceback: {p.stderr}")
    return p


def table_rows(page):
    """The first cell of each row of the table of runs."""
    table = open(page).read().split("<table>", 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr><td>([^<]*)</td>", table)


# ---- one folder named twice: its runs once, a warning naming both --------
run1 = folder("run1", {"results.json": results()})
os.symlink("run1", os.path.join(d, "link1"))
page = os.path.join(d, "twice.html")
for second in (run1, os.path.join(d, ".", "run1") + "/", os.path.join(d, "link1")):
    p = report(run1, second, "--out", page)
    check(p.returncode == 0 and "(4 figures, 1 runs)" in p.stdout, f"{second}: counted once: {p.stdout}{p.stderr}")
    check(f"{second} is the folder {run1} again" in p.stderr, f"{second}: a warning names both: {p.stderr}")
    check(len(table_rows(page)) == 1, f"{second}: one row: {table_rows(page)}")

# ---- several folders: every row says whose it is ------------------------
a_cmp, b_cmp = comparison("a/cmp", 100.0), comparison("b/cmp", 50.0)
sweep = folder("sw", {"sweep.json": {"experiment": "same", "axes": [{"key": "fabric", "values": ["ib", "iwarp"]}],
                                     "rows": [["run-000", 0, "ib"], ["run-001", 0, "iwarp"]]},
                      "runs/run-000/results.json": results("ib"), "runs/run-001/results.json": results("iwarp")})
page = os.path.join(d, "mixed.html")
p = report(a_cmp, b_cmp, sweep, "--out", page)
rows = table_rows(page) if p.returncode == 0 else []
check(rows == [f"{a_cmp}: ib", f"{b_cmp}: ib", "sw: fabric=ib", "sw: fabric=iwarp"],
      f"rows name their folders, by path where two share a name: {rows} {p.stderr}")
text = open(page).read() if p.returncode == 0 else ""
check(f"{a_cmp}: ib" in text and f"{b_cmp}: ib" in text, "the bars name the folders too")
# One folder: its rows as they always were.
p = report(a_cmp, "--out", page)
check(p.returncode == 0 and table_rows(page) == ["ib"], f"one comparison: its fabric alone: {table_rows(page)}")
p = report(sweep, "--out", page)
check(p.returncode == 0 and table_rows(page) == ["fabric=ib", "fabric=iwarp"], f"one sweep: {table_rows(page)}")

# ---- a page a killed report left: removed by the next report into it -----
child = subprocess.Popen(["true"])
child.wait()
dead, alive = child.pid, os.getpid()
ours = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n<meta name="generator" content="rdmasim report">\n'
stale = folder("stale", {"results.json": results(), f"report.html.tmp-{dead}": "",
                         f"report.html.tmp-{dead}-1": ours + "<title>cut short",
                         f"report.html.tmp-{dead}-2": "the user's notes",
                         f"report.html.tmp-{alive}": "", f"notes.tmp-{dead}": ""})
p = report(stale)
left = sorted(os.listdir(stale))
check(p.returncode == 0 and left == sorted(["results.json", "report.html", f"report.html.tmp-{dead}-2",
                                            f"report.html.tmp-{alive}", f"notes.tmp-{dead}"]),
      f"a dead report's empty or half-made pages removed; a user's file, a live one's, another name kept: {left}")

# A report SIGKILLed while its page is drawn: the next run into the folder
# is not refused for the file it left, and removes it.
exp = write_text(os.path.join(d, "two.yaml"), TWO_HOSTS)
out = os.path.join(d, "killed")
p = rdmasim("run", exp, "--out", out)
check(p.returncode == 0, f"run: {p.stderr}")
killed = subprocess.Popen([e2e.BINARY, "report", out], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
deadline = time.time() + 60
while not any(".tmp-" in n for n in os.listdir(out)) and time.time() < deadline and killed.poll() is None:
    time.sleep(0.005)
killed.send_signal(signal.SIGKILL)
killed.wait()
said = killed.stdout.read()  # till the script it started ends too, closing the pipe
check("wrote" not in said, f"the page was never put in place, and nothing says it was: {said}")
temps = [n for n in os.listdir(out) if ".tmp-" in n]
check(temps == [f"report.html.tmp-{killed.pid}"], f"the killed report left its temporary page: {temps}")
p = rdmasim("run", exp, "--out", out)
check(p.returncode == 0 and not [n for n in os.listdir(out) if ".tmp-" in n],
      f"the next run into the folder: exit {p.returncode}, {sorted(os.listdir(out))}: {p.stderr}")

# ---- bad inputs: exit 2 naming the file, nothing written ----------------
good = results()
BAD = {  # folder: (its files, what the message starts with)
    "nothing": (None, "nothing: no such directory"),
    "empty": ({}, "empty: no results.json, compare.json or sweep.json"),
    "cut": ({"results.json": json.dumps(good)[:60]}, "cut/results.json:1:"),
    "list": ({"results.json": "[1, 2]"}, "list/results.json: not a file rdmasim wrote"),
    "binary": ({"results.json": "\xff\xfe{"}, "binary/results.json"),
    "shape": ({"results.json": {"fabric": "ib", "workloads": 5}}, "shape/results.json: not a run's results.json"),
    "swapped": ({"results.json": {"experiment": "x", "fabrics": []}}, "swapped/results.json: holds what a comparison"),
    "fields": ({"results.json": dict(good, workloads=[{"name": "w", "start_ps": "0", "end_ps": 1}])},
               "fields/results.json: not what rdmasim writes"),
    "cmp": ({"compare.json": {"fabrics": 3}}, "cmp/compare.json: not a comparison's compare.json"),
    "cmpentry": ({"compare.json": {"fabrics": [7]}}, "cmpentry/compare.json: not what rdmasim writes"),
    "cmpcut": ({"compare.json": '{"fabrics": ['}, "cmpcut/compare.json:1:"),
    "cmprun": ({"compare.json": {"fabrics": [{"fabric": "ib", "status": "ok"}]},
                "ib/results.json": {"experiment": "x", "rows": []}}, "cmprun/ib/results.json: holds what a sweep"),
    "sweeprun": ({"sweep.json": good}, "sweeprun/sweep.json: holds what a run's results.json"),
    "sweeprow": ({"sweep.json": {"axes": [], "rows": [[1]]}}, "sweeprow/sweep.json: not what rdmasim writes"),
    "sweepvalue": ({"sweep.json": {"axes": [{"key": "fabric", "values": ["ib"]}], "rows": [["r", 0, "iwarp"]]},
                    "runs/r/results.json": good}, "sweepvalue/sweep.json: not what rdmasim writes"),
    "deep": ({"results.json": "[" * 100000}, "deep/results.json"),
    "latency": ({"results.json": good, "latency.csv": "workload,latency_ns\nw,12\nw,abc\n"}, "latency/latency.csv:3:"),
    "queues": ({"results.json": good, "timeseries/queues.csv": "time_ps,node\n1,s\n"}, "queues/timeseries/queues.csv:2:"),
}
kept = os.path.join(d, "kept.html")  # a page of an earlier report: a failed one leaves it as it was
p = report(run1, "--out", kept)
before = open(kept).read() if p.returncode == 0 else "?"
for name, (files, said) in BAD.items():
    path = folder(name, files) if files is not None else os.path.join(d, name)
    for target in (os.path.join(d, "new.html"), kept):
        if os.path.exists(os.path.join(d, "new.html")):  # an earlier case failed: each on its own
            os.remove(os.path.join(d, "new.html"))
        write_text(kept, before)
        p = report(path, run1, "--out", target)
        check(p.returncode == 2 and os.path.join(d, said) in p.stderr,
              f"{name}: exit {p.returncode}, expected 2 and {said}: {p.stderr}")
        check(not os.path.exists(os.path.join(d, "new.html")) and open(kept).read() == before
              and not [n for n in os.listdir(d) if ".tmp-" in n], f"{name}: nothing written, the old page kept")
p = report(os.path.join(run1, "results.json"))
check(p.returncode == 2 and "results.json: not a directory; give the output folder" in p.stderr,
      f"a file for a folder: {p.stderr}")
p = report(run1, "--out", run1)
check(p.returncode == 2 and f"{run1}: is a directory" in p.stderr, f"--out a folder: {p.stderr}")
p = report()
check(p.returncode == 2 and "dirs is required" in p.stderr, f"no folder: exit {p.returncode}: {p.stderr}")
p = report(os.path.join(d, "a"))
check(p.returncode == 2 and f"the output folders in it are {a_cmp}" in p.stderr, f"a parent folder: {p.stderr}")
p = report(run1, "")
check(p.returncode == 2 and "an empty path; give the output folder" in p.stderr, f"'': exit {p.returncode}: {p.stderr}")
check(sorted(os.listdir(run1)) == ["results.json"], f"run1 holds what it held: {os.listdir(run1)}")

e2e.finish()
