#!/usr/bin/env python3
"""Simulated NVMe-oF I/O per wall-clock second (docs/performance.md): N
initiators (1 to 64) each run a 4 KiB random-read job at QD 32 against one
SPDK-style target (8 polling cores, the default SSD) on one switch, RoCE v2,
no capture, 20 ms of simulated I/O after 0.5 ms of ramp. --fabric=tcp runs
it as NVMe/TCP (any fabric name works). Besides wall time it reports the
CPU time the run took (user + system), which a shared machine does not
inflate.

    python3 bench/nvme_randread.py build/rdmasim [--fabric=F] [N ...]
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def experiment(n, fabric="roce_v2"):
    hosts = [f"i{k}" for k in range(n)]
    links = ", ".join(f"[{h}, s]" for h in hosts + ["t"])
    jobs = "\n".join(
        f"  - {{name: j{k}, kind: nvme, initiator: i{k}, target: t, rw: randread, bs: 4KiB, iodepth: 32,"
        f" runtime: 20ms, ramp_time: 500us}}" for k in range(n))
    return f"""name: nvme_bench_{n}
fabric: {fabric}
link: {{bandwidth: 100Gbps, delay: 1us}}
host: {{cores: 8}}
topology: {{hosts: [{", ".join(hosts)}, t], switches: [s], links: [{links}]}}
storage:
  targets:
    - {{host: t, namespaces: [{{nsid: 1, size: 64GiB}}], cpu: poll, cores: 8}}
workloads:
{jobs}
capture: {{pcap: none}}
"""


def main():
    binary = sys.argv[1]
    fabric = next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--fabric=")), "roce_v2")
    counts = [int(a) for a in sys.argv[2:] if not a.startswith("--")] or [1, 4, 16, 64]
    d = tempfile.mkdtemp(prefix="nvme-bench-")
    print("| initiators | I/Os | simulated IOPS (all jobs) | wall s | simulated I/Os per wall second | cpu s "
          "| simulated I/Os per cpu second |")
    print("|---|---|---|---|---|---|---|")
    for n in counts:
        path = os.path.join(d, f"n{n}.yaml")
        with open(path, "w") as f:
            f.write(experiment(n, fabric))
        out = os.path.join(d, f"out{n}")
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run([binary, "run", path, "--out", out], check=True, capture_output=True)
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        ios = sum(w["ops"] for w in res["workloads"])
        span = max(w["runtime_ps"] for w in res["workloads"])  # the longest job's counted window
        iops = ios / (span * 1e-12) if span else 0
        print(f"| {n} | {ios:,} | {iops:,.0f} | {wall:.2f} | {ios / wall:,.0f} | {cpu:.2f} | {ios / cpu:,.0f} |")


if __name__ == "__main__":
    main()
