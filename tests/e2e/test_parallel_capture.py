#!/usr/bin/env python3
"""What a run records beside its results, split over MPI ranks (docs/parallel.md,
"Output"), is the single-process run's, byte for byte:

- capture.timeseries: each rank samples its own ports and its hosts' QPs
  (a `flows` workload's QPs on both ends' ranks), rank 0 writes
  timeseries/queues.csv and qps.csv as one process does (-np 2 and 4);
- capture.max_bytes is one budget for the whole run, as in one process:
  pcaps cut at the same frame (clean in tshark), time series at the same
  sample, results.json's `capture` and `timeseries` the same, and rank 0
  warns as one process does;
- a time series only watches: a run with one has the same results as
  without (events, end time, cost), where its sampler was once an event
  that kept the run going to the next sample time.

usage: test_parallel_capture.py PATH/TO/rdmasim SOURCE_DIR"""
import json
import os

from e2e import check, check_roce_v2_capture, finish, run, tmpdir, write_text
from mpi_e2e import mpirun, parallel_stats, require_mpi, same_output

base = tmpdir()

# Two leaves of two hosts: two-sided pairs (a rank each), flows whose ends
# span ranks, PFC on.
EXPERIMENT = """
name: capture
fabric: roce_v2
seed: 11
flow_control: pfc
link: {{bandwidth: 100Gbps, delay: 1us}}
topology:
  generate: {{kind: leaf_spine, spines: 2, leaves: 2, hosts_per_leaf: 2}}
workloads:
  - {{name: w, kind: rdma_write, from: h0, to: h2, size: 16KiB, count: 12, outstanding: 4}}
  - {{name: f, kind: flows, cdf: hadoop, load: 0.5, duration: 15us, op: rdma_write}}
capture: {{{capture}}}
"""


def experiment(name, capture):
    return write_text(os.path.join(base, name + ".yaml"), EXPERIMENT.format(capture=capture))


def results(out):
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


require_mpi(experiment("probe", "pcap: none"), os.path.join(base, "probe"))

cases = {
    # Nothing bounded: every sample of every port and QP.
    "series": "pcap: none, timeseries: {interval: 1us}",
    # 48 KiB: the pcaps end at a frame part way (every port captured, each
    # rank's own a part of them), the time series at a sample part way.
    "bounded": "pcap: all, max_bytes: 48KiB, timeseries: {interval: 100ns}",
}
for name, capture in cases.items():
    path = experiment(name, capture)
    single = os.path.join(base, name + "-1")
    _, _, err, r = run(path, single)
    if not r:
        continue
    if name == "bounded":
        check("full_at_ps" in r["capture"] and 0 < r["capture"]["full_at_ps"] < r["end_time_ps"],
              f"bounded: the captures end part way: {r['capture']}, end {r['end_time_ps']}")
        check("full_at_ps" in r["timeseries"] and 0 < r["timeseries"]["full_at_ps"] < r["end_time_ps"],
              f"bounded: the time series end part way: {r['timeseries']}")
        check("warning: captures end at" in err and "warning: time series end at" in err, f"bounded: warnings: {err}")
    else:
        check("full_at_ps" not in r["timeseries"], f"series: whole: {r['timeseries']}")
        with open(os.path.join(single, "timeseries", "qps.csv")) as f:
            hosts = {row.split(",")[2].split(":")[0] for row in f.read().splitlines()[1:]}
        check(len(hosts) == 4, f"series: QP rows of every host (both ends of the flows): {sorted(hosts)}")
    for n in (2, 4):
        out = os.path.join(base, f"{name}-{n}")
        p = mpirun(n, "run", path, "--out", out, "--partition", "spread")
        if not check(p.returncode == 0, f"{name} -np {n}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"):
            continue
        same_output(single, out, f"{name} -np {n}")
        per = parallel_stats(out)["per_rank"]
        check(sum(1 for x in per if x["hosts"] > 0) >= 2, f"{name} -np {n}: hosts on one rank only: {per}")
        if name == "bounded":
            check(err.count("warning:") == p.stderr.count("warning:") and "time series end at" in p.stderr,
                  f"bounded -np {n}: rank 0 warns as one process: {p.stderr}")
    if name == "bounded":
        # Cut at a frame's end: every file that holds frames whole and clean.
        pcaps = [os.path.join(single, "pcap", f) for f in os.listdir(os.path.join(single, "pcap"))]
        held = [f for f in pcaps if os.path.getsize(f) > 24]
        check(len(held) >= 3, f"bounded: frames in a few files at least: {held}")
        for f in held:
            check_roce_v2_capture(f, pfc=True)

# A time series only watches: the run's results are those of the same run without one.
plain = os.path.join(base, "plain")
_, _, _, r = run(experiment("plain", "pcap: none"), plain)
if r:
    with_series = results(os.path.join(base, "series-1"))
    del with_series["timeseries"]
    for k in r:
        check(r[k] == with_series.get(k), f"a time series changes results.json's {k}")

finish()
