#!/usr/bin/env python3
"""How cost grows with hosts: a k-ary fat tree (k^3/4 hosts, k^2*5/4
switches), 100 Gb/s links, 1 us delay, MTU 1024, RoCE v2 with PFC and
DCQCN, `kind: flows` with web-search sizes at a load, captures off; each
run a whole process. Prints per run: hosts, the memory estimate made before
the run (what `rdmasim validate` refuses by), the wall and CPU seconds and
peak RSS (from /usr/bin/time), events and frames delivered to hosts, and
the estimate over the peak.

    bench/scale.py [BINARY] [--k 8,16,32] [--time 2ms] [--load 0.3] [--np 1]
                   [--fabric roce_v2] [--cc dcqcn] [--set KEY=VALUE ...]

--np N runs the experiment split over N MPI ranks (mpirun, --partition
pods); the peak is then the largest rank's.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("binary", nargs="?", default="build/rdmasim")
ap.add_argument("--k", default="8,16")
ap.add_argument("--time", default="2ms")
ap.add_argument("--load", default="0.3")
ap.add_argument("--fabric", default="roce_v2")
ap.add_argument("--cc", default="dcqcn")
ap.add_argument("--np", type=int, default=1)
ap.add_argument("--set", action="append", default=[])
args = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="rdmasim-scale-")


def estimate_mib(path, extra):
    r = subprocess.run([args.binary, "validate", path, "--memory-limit", "1KiB", *extra], capture_output=True,
                       text=True)
    m = re.search(r"would need about ([\d.]+) (GiB|MiB|KiB)", r.stderr)
    return float(m.group(1)) * {"GiB": 1024, "MiB": 1, "KiB": 1 / 1024}[m.group(2)] if m else float("nan")


for k in (int(x) for x in args.k.split(",")):
    text = (f"name: fat_tree_k{k}\nfabric: {args.fabric}\nseed: 1\nstop: {args.time}\n"
            "link: {bandwidth: 100Gbps, delay: 1us, mtu: 1024}\nflow_control: pfc\n"
            f"congestion_control: {{algorithm: {args.cc}}}\n"
            f"topology: {{generate: {{kind: fat_tree, k: {k}}}}}\n"
            f"workloads:\n  - {{kind: flows, cdf: websearch, load: {args.load}, duration: {args.time}}}\n"
            "capture: {pcap: none}\n")
    path = os.path.join(tmp, f"k{k}.yaml")
    with open(path, "w") as f:
        f.write(text)
    extra = [a for s in args.set for a in ("--set", s)]
    est = estimate_mib(path, extra)
    out = os.path.join(tmp, f"out{k}")
    rss = os.path.join(tmp, "rss")
    cmd = [args.binary, "run", path, "--out", out, "--quiet", "--memory-limit", "1000GiB", *extra]
    if args.np > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(args.np), *cmd, "--partition", "pods"]
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", rss, *cmd], capture_output=True, text=True)
    if p.returncode not in (0, 4):
        raise SystemExit(p.stderr)
    wall, user, system, kib = open(rss).read().split()[-4:]
    peak = int(kib) / 1024
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    if args.np > 1 and "ranks" in res:
        peak = max(r["max_rss_kib"] for r in res["ranks"]) / 1024
    delivered = sum(port["rx_frames"] for port in res["ports"] if port["node"].startswith("h"))
    print(f"k={k} hosts={k ** 3 // 4} np={args.np} simulated={args.time} load={args.load} wall_s={float(wall):.1f} "
          f"cpu_s={float(user) + float(system):.1f} peak_rss_mib={peak:.0f} estimate_mib={est:.0f} "
          f"estimate_over_peak={est / peak:.2f} events={res['events']} frames_delivered={delivered} "
          f"load_average={os.getloadavg()[0]:.1f}", flush=True)
