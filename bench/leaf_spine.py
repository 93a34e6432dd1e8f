#!/usr/bin/env python3
"""The 128-host leaf-spine of the ns-3 comparison (bench/ns3/): 4 spines x
8 leaves x 16 hosts, 25 Gb/s host links and 100 Gb/s between switches
(--host-link), 1 us delay, MTU 1024, RoCE v2 with PFC, 128 RC WRITE flows
(host i writes to host i + 64, modulo 128: every flow crosses the spines)
of 100 messages of 1 MiB, 2 ms simulated, captures off, the payload
computed from the pattern (the default for RC WRITEs; --payload memory
stores it in host memory instead, byte-identical frames and results).
Prints the wall seconds end to end (the process: loading, set-up, run,
output), the CPU seconds it used (user + system: what a shared machine's
load does not inflate), peak RSS (from /usr/bin/time where there is one:
a child of Python starts with Python's resident set), events, frames
delivered to hosts, and frames delivered per wall second and per CPU
second.

    bench/leaf_spine.py [BINARY] [--time 2ms] [--size 1MiB] [--count 100] [--host-link 25Gbps]
                        [--payload pattern|memory] [--repeat N]
"""
import argparse
import json
import os
import resource
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("binary", nargs="?", default="build/rdmasim")
ap.add_argument("--time", default="2ms")
ap.add_argument("--size", default="1MiB")
ap.add_argument("--count", default="100")
ap.add_argument("--host-link", default="25Gbps")
ap.add_argument("--payload", default="pattern", choices=("pattern", "memory"))
ap.add_argument("--repeat", type=int, default=1, help="runs; the median run's figures are printed last")
args = ap.parse_args()

HOSTS = 128
lines = [
    "name: leaf_spine_128",
    "fabric: roce_v2",
    "seed: 1",
    f"stop: {args.time}",
    "link: {bandwidth: 100Gbps, delay: 1us, mtu: 1024}",
    "flow_control: pfc",
    "topology: {generate: {kind: leaf_spine, spines: 4, leaves: 8, hosts_per_leaf: 16, "
    f"host_link: {{bandwidth: {args.host_link}}}}}}}",
    "capture: {pcap: none}",
    "workloads:",
]
# pattern is an RC WRITE's default: left unsaid, so that builds from before
# it was (which stored the bytes) run the same experiment.
payload = ", payload: memory" if args.payload == "memory" else ""
for i in range(HOSTS):
    lines.append(f"  - {{kind: rdma_write, from: h{i}, to: h{(i + HOSTS // 2) % HOSTS}, "
                 f"size: {args.size}, count: {args.count}{payload}}}")
tmp = tempfile.mkdtemp(prefix="rdmasim-leaf-spine-")
path = os.path.join(tmp, "leaf_spine.yaml")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
out = os.path.join(tmp, "out")
timed = os.path.exists("/usr/bin/time")
rss_file = os.path.join(tmp, "rss")
runs = []
for _ in range(args.repeat):
    cmd = [args.binary, "run", path, "--out", out, "--quiet"]
    if timed:
        cmd = ["/usr/bin/time", "-q", "-f", "%M %U %S", "-o", rss_file] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 4):
        raise SystemExit(p.stderr)
    if timed:
        with open(rss_file) as f:
            kib, user, system = f.read().split()[-3:]
        rss_mib, cpu = int(kib) / 1024, float(user) + float(system)
    else:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss_mib = usage.ru_maxrss / 1024
        cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    delivered = sum(port["rx_frames"] for port in res["ports"] if port["node"].startswith("h"))
    ops = sum(w["ops"] for w in res["workloads"])
    line = (f"hosts={HOSTS} simulated={args.time} wall_s={wall:.2f} cpu_s={cpu:.2f} peak_rss_mib={rss_mib:.0f} "
            f"events={res['events']} events_per_s={res['events'] / wall:.0f} frames_delivered={delivered} "
            f"frames_per_s={delivered / wall:.0f} frames_per_cpu_s={delivered / cpu:.0f} messages_completed={ops}")
    runs.append((wall, line))
    if args.repeat > 1:
        print(line, flush=True)
print(sorted(runs)[len(runs) // 2][1])
