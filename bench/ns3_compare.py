#!/usr/bin/env python3
"""The ns-3 comparison in one go: builds bench/ns3/leaf_spine.cc against
Debian's ns-3 (libns3-dev, `apt-get install libns3-dev`), runs it and
bench/leaf_spine.py on the same scenario, one after the other, and prints
both and their ratio: frames (rdmasim) and packets (ns-3) delivered to hosts
per wall second of the whole process, and per CPU second (user + system,
what a shared machine's load inflates least), with the load average.

    bench/ns3_compare.py [BINARY] [--time 2ms] [--repeat 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

from ns3_build import build

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("binary", nargs="?", default="build/rdmasim")
ap.add_argument("--time", default="2ms")
ap.add_argument("--repeat", type=int, default=3, help="rdmasim runs (the median is compared)")
ap.add_argument("--ns3-repeat", type=int, default=1, help="ns-3 runs (the median is compared)")
args = ap.parse_args()

exe = os.path.join(os.path.dirname(os.path.abspath(args.binary)), "ns3_leaf_spine")
version = build("leaf_spine.cc", exe, ["ns3-applications", "ns3-internet", "ns3-point-to-point"])


def timed(cmd):
    """Runs `cmd` under /usr/bin/time: (its stdout, user + system seconds)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S", *cmd], capture_output=True, text=True, check=True)
    user, system = p.stderr.split()[-2:]
    return p.stdout, float(user) + float(system)


def field(text, name):
    return float(re.search(rf"{name}=([\d.]+)", text).group(1))


load = os.getloadavg()
ns3 = []
for _ in range(args.ns3_repeat):
    out, cpu = timed([exe, f"--time={args.time}"])
    print(out.strip(), f"cpu_s={cpu:.2f}", flush=True)
    ns3.append((field(out, "wall_s"), cpu, field(out, "packets_delivered")))
rs = []
for _ in range(args.repeat):
    out = subprocess.run([sys.executable, os.path.join(here, "leaf_spine.py"), args.binary, "--time", args.time],
                         capture_output=True, text=True, check=True).stdout
    print(out.strip(), flush=True)
    rs.append((field(out, "wall_s"), field(out, "cpu_s"), field(out, "frames_delivered")))


def median(runs):
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    n = runs[0][2]
    return wall, cpu, n, n / wall, n / cpu


nw, nc, nn, nps, npc = median(ns3)
rw, rc, rn, rps, rpc = median(rs)
print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; after: "
      + " ".join(f"{x:.2f}" for x in os.getloadavg()))
print(f"ns-3 {version}: {nn:.0f} packets, {nw:.2f} s wall, {nc:.2f} s CPU: {nps:,.0f} per wall s, {npc:,.0f} per CPU s")
print(f"rdmasim: {rn:.0f} frames, {rw:.2f} s wall, {rc:.2f} s CPU: {rps:,.0f} per wall s, {rpc:,.0f} per CPU s")
print(f"ratio: {rps / nps:.1f}x per wall second, {rpc / npc:.1f}x per CPU second (target 20x)")
