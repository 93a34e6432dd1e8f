"""fio.json's per-direction bandwidth and IOPS samples and the job's queue
depths, as fio's stat.c writes them (docs/storage.md): bw_min ... bw_samples
and iops_min ... iops_samples from a sample at the end of each
bw_avg_time / iops_avg_time of the job's simulated time after ramp_time
(none for the last partial interval: a job shorter than the interval has
none, as fio's), recomputed here from nvme.csv's completions; bw_agg of the
group; iodepth_level from the I/Os outstanding at each submission (all at
1 with iodepth 1, mostly at 32 with iodepth 32), iodepth_submit and
iodepth_complete; fio's latency_* keys; the workload's entry in
results.json sums its jobs' samples as fio's group_reporting does. Every
capture is checked with tshark; bad intervals are located errors."""

import csv
import json
import os

import e2e
from e2e import check, check_captures, run, workload
from nvme_e2e import BASE

d = e2e.tmpdir()

RATE_KEYS = ("bw_min", "bw_max", "bw_mean", "bw_dev", "bw_samples", "bw_agg",
             "iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples")
DEPTH_KEYS = {"iodepth_level": ["1", "2", "4", "8", "16", "32", ">=64"],
              "iodepth_submit": ["0", "4", "8", "16", "32", "64", ">=64"],
              "iodepth_complete": ["0", "4", "8", "16", "32", "64", ">=64"]}
MS = 10**9  # ps


def load(out):
    with open(os.path.join(out, "fio.json")) as f:
        return json.load(f)


def completions(out, name, ramp_ps):
    """({(job, op): [complete_ps, ...]} of the I/Os nvme.csv lists that
    succeeded, the end of the ramp: the jobs' first submission + ramp_ps)."""
    done, first = {}, None
    with open(os.path.join(out, "nvme.csv")) as f:
        for row in csv.DictReader(f):
            if row["workload"] == name:
                first = min(first or int(row["submit_ps"]), int(row["submit_ps"]))
            if row["workload"] == name and row["status"] == "0":
                done.setdefault((int(row["job"]), row["op"]), []).append(int(row["complete_ps"]))
    return done, first + ramp_ps


def samples(done, start, until, interval_ms, per_io, divisor):
    """fio's __add_samples at each interval's end up to `until`: (units x 1000 / ms) / divisor."""
    out = []
    end = start + interval_ms * MS
    while end <= until:
        # (end - interval, end]; the first interval from start itself
        lo = end - interval_ms * MS if end - interval_ms * MS > start else start - 1
        n = sum(1 for t in done if lo < t <= end)
        if n:
            out.append(n * per_io * 1000 // interval_ms // divisor)
        end += interval_ms * MS
    return out


def check_rates(what, direction, done, start, until, bs, bw_ms, iops_ms):
    bw = samples(done, start, until, bw_ms, bs, 1024)
    iops = samples(done, start, until, iops_ms, 1, 1)
    for name, got, want in (("bw", (direction["bw_min"], direction["bw_max"], direction["bw_samples"]),
                             (min(bw, default=0), max(bw, default=0), len(bw))),
                            ("iops", (direction["iops_min"], direction["iops_max"], direction["iops_samples"]),
                             (min(iops, default=0), max(iops, default=0), len(iops)))):
        check(got == want, f"{what}: {name} min, max, samples {got}, from nvme.csv {want}")
    mean = sum(bw) / len(bw) if bw else 0.0
    check(abs(direction["bw_mean"] - mean) < 1e-6 * max(1.0, mean), f"{what}: bw_mean {direction['bw_mean']} vs {mean}")
    mean = sum(iops) / len(iops) if iops else 0.0
    check(abs(direction["iops_mean"] - mean) < 1e-6 * max(1.0, mean),
          f"{what}: iops_mean {direction['iops_mean']} vs {mean}")
    return bw, iops


def depth_bucket(n):
    """io_u_mark_depth's bucket of a depth."""
    return next((i for i, top in enumerate((1, 3, 7, 15, 31, 63)) if n <= top), 6)


def batch_bucket(n):
    """__io_u_mark_map's bucket of a batch."""
    return next((i for i, top in enumerate((0, 4, 8, 16, 32, 64)) if n <= top), 6)


def percents(counts):
    total = sum(counts)
    return [max(100.0 * c / total, 0.1) if c else 0.0 for c in counts]


def depths_from_csv(out, name, job, start):
    """iodepth_level and iodepth_complete of one job recomputed from nvme.csv:
    each I/O submitted from `start` at the depth of the job's I/Os then
    submitted and not yet completed (a completion at the same time is
    reaped before), itself included; each reap from `start` by the I/Os
    completed at its time."""
    with open(os.path.join(out, "nvme.csv")) as f:
        ios = [(int(r["submit_ps"]), int(r["complete_ps"])) for r in csv.DictReader(f)
               if r["workload"] == name and int(r["job"]) == job]
    level = [0] * 7
    for submit, _ in ios:
        if submit >= start:
            level[depth_bucket(1 + sum(1 for s, c in ios if s < submit < c))] += 1
    reaps = {}
    for _, c in ios:
        if c >= start:
            reaps[c] = reaps.get(c, 0) + 1
    complete = [0] * 7
    for n in reaps.values():
        complete[batch_bucket(n)] += 1
    return percents(level), percents(complete)


def check_depths(what, job, out, name, k, start):
    level, complete = depths_from_csv(out, name, k, start)
    got_level = [job["iodepth_level"][b] for b in DEPTH_KEYS["iodepth_level"]]
    got_complete = [job["iodepth_complete"][b] for b in DEPTH_KEYS["iodepth_complete"]]
    check(all(abs(a - b) < 1e-9 for a, b in zip(got_level, level)),
          f"{what}: iodepth_level {got_level}, from nvme.csv {level}")
    check(all(abs(a - b) < 1e-9 for a, b in zip(got_complete, complete)),
          f"{what}: iodepth_complete {got_complete}, from nvme.csv {complete}")


def check_depth_keys(what, job):
    for key, buckets in DEPTH_KEYS.items():
        check(key in job and list(job[key]) == sorted(buckets), f"{what}: {key} has fio's buckets: {job.get(key)}")
    for key in ("iodepth_level", "iodepth_submit", "iodepth_complete"):
        if key in job:
            total = sum(job[key].values())
            check(abs(total - 100) < 0.5, f"{what}: {key} sums to 100: {total}")


JOB = """
capture: {pcap: hosts, timeseries: {interval: 1ms}}
workloads:
  - {name: qd, kind: nvme, initiator: h, target: t, nsid: 1, rw: RW, bs: 4KiB, iodepth: QD, numjobs: JOBS,
     runtime: 40ms, ramp_time: 5ms, bw_avg_time: 10ms, iops_avg_time: 5ms}
"""


def experiment(name, fabric, rw, qd, jobs):
    return (f"name: {name}\nseed: 3\nfabric: {fabric}" + BASE +
            JOB.replace("RW", rw).replace("QD", str(qd)).replace("JOBS", str(jobs)))


# ---- iodepth 1 on roce_v2: every I/O at depth 1; samples as recomputed from nvme.csv
out = os.path.join(d, "qd1")
_, _, _, res = run(experiment("qd1", "roce_v2", "randread", 1, 1), out)
if res:
    w = workload(res, "qd")
    job = load(out)["jobs"][0]
    check(all(k in job["read"] and k in job["write"] and k in job["trim"] for k in RATE_KEYS),
          f"qd1: every direction has {RATE_KEYS}: {sorted(job['read'])}")
    check_depth_keys("qd1", job)
    if all(k in job["read"] for k in RATE_KEYS) and "iodepth_level" in job:
        done, start = completions(out, "qd", 5 * MS)
        reads = done.get((0, "read"), [])
        until = max(reads)
        bw, iops = check_rates("qd1 read", job["read"], reads, start, until, 4096, 10, 5)
        # 40 ms after a 5 ms ramp: 4 bandwidth samples of 10 ms, 8 IOPS samples of 5 ms
        check(len(bw) == 4 and len(iops) == 8, f"qd1: 4 bw and 8 iops samples: {len(bw)}, {len(iops)}")
        # A steady job's samples agree with its overall rate.
        check(abs(job["read"]["bw_mean"] - job["read"]["bw"]) < 0.05 * job["read"]["bw"],
              f"qd1: bw_mean {job['read']['bw_mean']} near bw {job['read']['bw']}")
        check(abs(job["read"]["iops_mean"] - job["read"]["iops"]) < 0.05 * job["read"]["iops"],
              f"qd1: iops_mean {job['read']['iops_mean']} near iops {job['read']['iops']}")
        check(job["read"]["bw_min"] <= job["read"]["bw_mean"] <= job["read"]["bw_max"]
              and job["read"]["bw_dev"] >= 0, "qd1: bw_min <= bw_mean <= bw_max")
        # One job alone: bw_agg is its mean (as an int) of its own aggregate, at most 100.
        agg = job["read"]["io_bytes"] * 1000 // job["read"]["runtime"]
        want = min(100.0, int(job["read"]["bw_mean"]) * 100.0 / (agg / 1024.0))
        check(abs(job["read"]["bw_agg"] - want) < 1e-9 and 90 < job["read"]["bw_agg"] <= 100,
              f"qd1: bw_agg {job['read']['bw_agg']}, expected {want}")
        check(job["write"]["bw_samples"] == 0 and job["write"]["bw_agg"] == 0 and job["trim"]["iops_samples"] == 0,
              "qd1: no writes, no trims: no samples")
        check(job["iodepth_level"]["1"] == 100.0, f"qd1: every I/O submitted at depth 1: {job['iodepth_level']}")
        check_depths("qd1", job, out, "qd", 0, start)
        check(job["iodepth_submit"]["4"] == 100.0 and job["iodepth_complete"]["4"] == 100.0,
              f"qd1: one I/O a submit and a reap: {job['iodepth_submit']}, {job['iodepth_complete']}")
        check((job.get("latency_depth"), job.get("latency_target"), job.get("latency_percentile"),
               job.get("latency_window")) == (1, 0, 100.0, 0), "qd1: fio's latency_* without a latency target")
        # results.json carries the same samples (bw_agg is fio.json's: it depends on the group).
        check(all(w["read"][k] == job["read"][k] for k in RATE_KEYS if k != "bw_agg")
              and w["iodepth_level"] == job["iodepth_level"], "qd1: results.json has the same figures")
    check(len(check_captures(out, "roce_v2")) == 2, "qd1: both captures clean")

# ---- iodepth 32 on roce_v2 without a ramp: the ramp-up from 1 to 31, then (one completion a reap) all at 32
out = os.path.join(d, "qd32_rdma")
text = experiment("qd32_rdma", "roce_v2", "randread", 32, 1).replace(", ramp_time: 5ms", "")
_, _, _, res = run(text.replace("runtime: 40ms", "runtime: 20ms"), out)
if res:
    job = load(out)["jobs"][0]
    check_depth_keys("qd32 rdma", job)
    if "iodepth_level" in job:
        level = job["iodepth_level"]
        check(level["32"] > 90 and all(level[b] > 0 for b in ("1", "2", "4", "8", "16")) and level[">=64"] == 0,
              f"qd32 rdma: the ramp-up in 1 ... 16, then mostly at 32: {level}")
        _, start = completions(out, "qd", 0)
        check_depths("qd32 rdma", job, out, "qd", 0, start)
    check(len(check_captures(out, "roce_v2")) == 2, "qd32 rdma: both captures clean")

# ---- iodepth 32, two jobs, randrw on NVMe/TCP: mostly at 32; each job its own samples; the entry sums them
out = os.path.join(d, "qd32")
_, _, _, res = run(experiment("qd32", "tcp", "randrw", 32, 2), out)
if res:
    w = workload(res, "qd")
    jobs = load(out)["jobs"]
    check(len(jobs) == 2, f"qd32: two jobs: {len(jobs)}")
    done, start = completions(out, "qd", 5 * MS)
    for k, job in enumerate(jobs):
        what = f"qd32 job {k}"
        check_depth_keys(what, job)
        if "iodepth_level" not in job or "bw_samples" not in job["read"]:
            continue
        level = job["iodepth_level"]
        # After the 5 ms ramp each I/O is submitted when a reap has freed
        # room: at 32 less what that reap returned together, plus one.
        check(level["32"] > 0 and level[">=64"] == 0 and level["1"] == 0 and level["2"] == 0,
              f"{what}: submitted near 32, the ramp-up (in ramp_time) not counted: {level}")
        check_depths(what, job, out, "qd", k, start)
        check(job["latency_depth"] == 32, f"{what}: latency_depth is iodepth")
        until = max(max(done.get((k, "read"), [0])), max(done.get((k, "write"), [0])))
        for op in ("read", "write"):
            check_rates(f"{what} {op}", job[op], done.get((k, op), []), start, until, 4096, 10, 5)
            check(job[op]["bw_samples"] >= 3, f"{what} {op}: samples: {job[op]['bw_samples']}")
    if all("bw_samples" in j["read"] for j in jobs):
        for op in ("read", "write"):
            check(w[op]["bw_samples"] == sum(j[op]["bw_samples"] for j in jobs)
                  and w[op]["bw_min"] == sum(j[op]["bw_min"] for j in jobs)
                  and abs(w[op]["bw_mean"] - sum(j[op]["bw_mean"] for j in jobs)) < 1e-6 * w[op]["bw_mean"],
                  f"qd32 {op}: results.json sums the jobs' samples as group_reporting")
            # Two jobs in the group: each one's share of the aggregate.
            agg = sum(j[op]["io_bytes"] for j in jobs) * 1000 // max(j[op]["runtime"] for j in jobs)
            for j in jobs:
                check(abs(j[op]["bw_agg"] - int(j[op]["bw_mean"]) * 100.0 / (agg / 1024.0)) < 1e-9
                      and 30 < j[op]["bw_agg"] < 70, f"qd32 {op}: bw_agg {j[op]['bw_agg']}: half the group's")
    check(len(check_captures(out, "tcp")) == 2, "qd32: both captures clean")

# ---- fio's default 500 ms: a 1.1 s job has two samples of each; a 20 ms job none, every figure 0 (what fio writes)
for name, runtime, count in (("default", "1100ms", 2), ("short", "20ms", 0)):
    out = os.path.join(d, name)
    text = experiment(name, "roce_v2", "randread", 1, 1).replace(", bw_avg_time: 10ms, iops_avg_time: 5ms", "")
    _, _, _, res = run(text.replace("runtime: 40ms", f"runtime: {runtime}"), out)
    if not res:
        continue
    job = load(out)["jobs"][0]
    check_depth_keys(name, job)
    present = all(k in job[op] for op in ("read", "write", "trim") for k in RATE_KEYS)
    check(present, f"{name}: every direction has {RATE_KEYS}: {sorted(job['read'])}")
    if present:
        rates = {k: job["read"][k] for k in RATE_KEYS}
        check(job["read"]["bw_samples"] == count and job["read"]["iops_samples"] == count,
              f"{name}: {count} samples of 500 ms in {runtime} after the ramp: {rates}")
        if count == 0:
            check(job["read"]["total_ios"] > 100 and all(v == 0 for v in rates.values()),
                  f"{name}: {job['read']['total_ios']} I/Os, no sample: every figure 0: {rates}")
        else:
            done, start = completions(out, "qd", 5 * MS)
            reads = done[(0, "read")]
            check_rates(name, job["read"], reads, start, max(reads), 4096, 500, 500)
    check(len(check_captures(out, "roce_v2")) == 2, f"{name}: both captures clean")

# ---- bad intervals: located, exit 2
for value, why in (("1500us", "whole milliseconds"), ("0", "whole milliseconds"), ("fast", "")):
    out = os.path.join(d, "bad")
    _, _, err, _ = run(f"name: bad\nfabric: roce_v2" + BASE + "workloads:\n  - {kind: nvme, initiator: h, "
                       f"target: t, bw_avg_time: {value}}}\n", out, expect=2)
    check(".yaml:" in err and "bw_avg_time" in err and why in err, f"bw_avg_time: {value}: located: {err.strip()}")

e2e.finish()
