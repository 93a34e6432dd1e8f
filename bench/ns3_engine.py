#!/usr/bin/env python3
"""The engine against ns-3's schedulers in one go: builds bench/ns3/engine.cc
against Debian's ns-3 (libns3-dev) and runs it with each of ns-3's
schedulers and build/bench_engine on the same benchmark (K chains of events,
each rescheduling itself 1 to 100 ns later from the same random stream),
alternating the two engines round by round, and prints each one's median
events per wall second, and rdmasim's against ns-3's best.

    bench/ns3_engine.py [BENCH_ENGINE] [--pending 1000 1000000] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import subprocess

from ns3_build import build

SCHEDULERS = ["Map", "Heap", "Calendar", "PriorityQueue"]  # List is O(n) a schedule: left out
# Calendar's buckets degrade with a million pending (more than 4 minutes for
# 3.3 M events here): left out above this many.
CALENDAR_MAX_PENDING = 100_000

ap = argparse.ArgumentParser()
ap.add_argument("bench_engine", nargs="?", default="build/bench_engine")
ap.add_argument("--pending", type=int, nargs="+", default=[1000, 1000000])
ap.add_argument("--rounds", type=int, default=3, help="rounds of every engine, one run each (medians)")
ap.add_argument("--events", type=int, default=10_000_000, help="rdmasim's events a run (ns-3 runs a third)")
args = ap.parse_args()

exe = os.path.join(os.path.dirname(os.path.abspath(args.bench_engine)), "ns3_engine")
version = build("engine.cc", exe, ["ns3-core"])


def rate(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.findall(r"events_per_s=([\d.]+)", out)[-1])


print(f"ns-3 {version}; load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
for pending in args.pending:
    schedulers = [s for s in SCHEDULERS if s != "Calendar" or pending <= CALENDAR_MAX_PENDING]
    rates = {name: [] for name in ["rdmasim"] + schedulers}
    for _ in range(args.rounds):
        rates["rdmasim"].append(rate([args.bench_engine, "--events", str(args.events), "--pending", str(pending),
                                      "--repeat", "1"]))
        for s in schedulers:
            rates[s].append(rate([exe, f"--scheduler=ns3::{s}Scheduler", f"--events={args.events // 3}",
                                  f"--pending={pending}", "--repeat=1"]))
    med = {k: statistics.median(v) for k, v in rates.items()}
    best = max(schedulers, key=lambda s: med[s])
    for k in ["rdmasim"] + schedulers:
        print(f"pending={pending} {k}: {med[k] / 1e6:.2f} M events/s (" +
              ", ".join(f"{r / 1e6:.2f}" for r in rates[k]) + ")", flush=True)
    if len(schedulers) < len(SCHEDULERS):
        print(f"pending={pending} Calendar: left out above {CALENDAR_MAX_PENDING:,} pending", flush=True)
    print(f"pending={pending} ratio: {med['rdmasim'] / med[best]:.2f}x ns-3's best ({best}Scheduler)", flush=True)
print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
