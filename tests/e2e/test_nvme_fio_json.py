"""fio.json as scripts written for fio read it (docs/storage.md): `rw: rw`
is fio's other name for readwrite; every job has fio's read, write, trim
and sync objects, usr_cpu, sys_cpu, ctx, majf, minf and the latency_ns,
latency_us and latency_ms buckets; the document has fio's timestamp_ms,
fixed so the same seed writes the same bytes. fio's trim patterns and
unknown patterns are refused with a located error naming the accepted ones."""

import json
import os

import e2e
from e2e import check, run
from nvme_e2e import BASE

d = e2e.tmpdir()

JOB = """
capture: {pcap: none}
workloads:
  - {name: mix, kind: nvme, initiator: h, target: t, nsid: 2, rw: RW, rwmixread: 50, bs: 4KiB, iodepth: 4,
     numjobs: 2, size: 256KiB EXTRA}
"""


def fio_json(out):
    with open(os.path.join(out, "fio.json"), "rb") as f:
        raw = f.read()
    return raw, json.loads(raw)


# ---- rw: rw runs as readwrite: sequential reads and writes, both counted
out = os.path.join(d, "rw")
_, _, _, res = run("name: rw\nseed: 7\nfabric: roce_v2" + BASE + JOB.replace("RW", "rw").replace("EXTRA", ""), out)
if res:
    w = res["workloads"][0]
    check(w["rw"] == "readwrite" and w["read"]["total_ios"] > 0 and w["write"]["total_ios"] > 0,
          f"rw: rw is readwrite, reads and writes both done: {w['rw']}")

# ---- every job has fio's keys (randrw, the two jobs as one)
MIX = "name: mix\nseed: 7\nfabric: roce_v2" + BASE + JOB.replace("RW", "randrw")
GROUPED = MIX.replace("EXTRA", ", group_reporting: true")
out = os.path.join(d, "mix")
_, _, _, res = run(GROUPED, out)
if res:
    w = res["workloads"][0]
    raw, fio = fio_json(out)
    job = fio["jobs"][0]
    FIO_KEYS = {"read", "write", "trim", "sync", "usr_cpu", "sys_cpu", "ctx", "majf", "minf", "latency_ns",
                "latency_us", "latency_ms"}
    check("timestamp_ms" in fio and FIO_KEYS <= set(job),
          f"fio.json: fio's keys (missing: {sorted(FIO_KEYS - set(job))}, timestamp_ms: {'timestamp_ms' in fio})")
if res and "timestamp_ms" in fio and FIO_KEYS <= set(job):
    check(fio["timestamp_ms"] == 0 and fio["timestamp"] == 0 and fio["fio version"].startswith("fio-"),
          "fio.json: fio's timestamp_ms, fixed (no wall clock)")
    directions = ("read", "write", "trim")
    layout = set(job["read"])
    check(all(set(job[k]) == layout for k in directions), "fio.json: trim has read's and write's layout")
    check(all(job[k].get("short_ios") == 0 and job[k].get("drop_ios") == 0 for k in directions),
          "fio.json: short_ios and drop_ios in every direction, 0 (no short or dropped I/O)")
    check(job["trim"]["total_ios"] == 0 and job["trim"]["io_bytes"] == 0 and job["trim"]["lat_ns"]["N"] == 0,
          f"fio.json: no trims: {job['trim']}")
    check(job["sync"] == {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}},
          f"fio.json: sync in fio 3's layout, no fsyncs: {job['sync']}")
    cpu = w["cpu"]
    busy = cpu["initiator"]["work_ps"] + cpu["initiator"]["poll_ps"]
    check(job["usr_cpu"] == 0 and abs(job["sys_cpu"] - 100 * busy / (2 * cpu["window_ps"])) < 1e-9
          and 0 < job["sys_cpu"] <= 100, f"fio.json: sys_cpu: the initiator's busy share of 2 jobs' time: {job['sys_cpu']}")
    check(job["ctx"] == 0 and job["majf"] == 0 and job["minf"] == 0, "fio.json: ctx, majf, minf (not modelled)")
    keys = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
    check(list(job["latency_ns"]) == sorted(keys) and list(job["latency_us"]) == sorted(keys)
          and set(job["latency_ms"]) == set(keys) | {"2000", ">=2000"}, "fio.json: fio's latency buckets")
    total = sum(sum(job[k].values()) for k in ("latency_ns", "latency_us", "latency_ms"))
    check(abs(total - 100) < 1e-6, f"fio.json: the buckets hold every I/O: {total}")
    # Each I/O's completion latency (clat) in its bucket: the slowest one's bucket is not empty.
    slowest_us = max(job[k]["clat_ns"]["max"] for k in ("read", "write")) // 1000
    bound = next(int(k) for k in keys if slowest_us < int(k))
    check(slowest_us < 1 or job["latency_us"][str(bound)] > 0, f"fio.json: {slowest_us} us in bucket {bound}")
    # bw_agg is fio.json's alone: it is of the group, fio.json's jobs together.
    check(len(fio["jobs"]) == 1 and job["latency_us"] == w["latency_us"]
          and {k: v for k, v in job["read"].items() if k != "bw_agg"} == w["read"],
          "group_reporting: one job, results.json's numbers")
    # The same seed writes the same bytes.
    again = os.path.join(d, "mix_again")
    run(GROUPED, again)
    check(fio_json(again)[0] == raw, "fio.json: byte-identical for the same seed")

# ---- numjobs without group_reporting: an entry per job, as fio writes them, each with its own I/O
out = os.path.join(d, "clones")
_, _, _, res = run(MIX.replace("EXTRA", ""), out)
if res:
    w = res["workloads"][0]
    jobs = fio_json(out)[1]["jobs"]
    check(len(jobs) == 2 and all(j["jobname"] == "mix" for j in jobs), f"numjobs 2: two jobs named mix: {len(jobs)}")
    if len(jobs) == 2:
        # size is per job: each did 256 KiB of 4 KiB I/Os, reads and writes mixed its own way
        check(all(j["read"]["total_ios"] + j["write"]["total_ios"] == 64 for j in jobs),
              "numjobs 2: each job's own 64 I/Os")
        for k in ("read", "write"):
            check(sum(j[k]["total_ios"] for j in jobs) == w[k]["total_ios"]
                  and sum(j[k]["io_bytes"] for j in jobs) == w[k]["io_bytes"]
                  and min(j[k]["clat_ns"]["min"] for j in jobs) == w[k]["clat_ns"]["min"],
                  f"numjobs 2: the jobs' {k}s add up to the workload's")
        check(jobs[0]["read"] != jobs[1]["read"], "numjobs 2: each job has its own numbers")
        check(all(abs(sum(sum(j[u].values()) for u in ("latency_ns", "latency_us", "latency_ms")) - 100) < 1e-6
                  for j in jobs), "numjobs 2: each job's latency buckets hold its I/Os")

# ---- refused: fio's trims (not modelled), an unknown pattern; both name what is accepted
ACCEPTED = "read, write, randread, randwrite, randrw, readwrite, rw"
for name, value, message in (("trim", "randtrim", "trims are not modelled"), ("unknown", "rndread", "unknown")):
    out = os.path.join(d, "bad_" + name)
    _, _, err, _ = run(f"name: bad_{name}\nfabric: roce_v2" + BASE + "workloads:\n  - {kind: nvme, initiator: h, "
                       f"target: t, rw: {value}}}\n", out, expect=2)
    check(message in err and ACCEPTED in err and ".yaml:" in err, f"rw: {value}: located, accepted names: {err.strip()}")

e2e.finish()
