#!/usr/bin/env python3
"""Peak memory of runs that vary one thing at a time, and what each costs:
the figures behind experiment/memory_estimate.cpp's constants.

    bench/memory.py [BINARY]        (default build/rdmasim)

Per host and per (host, node) routing entry: star topologies of H hosts
with one small workload, fitted as a + b*H + c*H^2. Per connection: an
all_to_all of 64 hosts (4032 connections) against one pair on the same
hosts. Message buffers: a WRITE of 64 MiB (16 slots of 4 MiB)."""
import os
import subprocess
import sys
import tempfile

BINARY = sys.argv[1] if len(sys.argv) > 1 else "build/rdmasim"
tmp = tempfile.mkdtemp(prefix="rdmasim-memory-")


def peak_kib(yaml, fabric):
    path = os.path.join(tmp, "exp.yaml")
    with open(path, "w") as f:
        f.write(yaml)
    p = subprocess.Popen([BINARY, "run", path, "--out", os.path.join(tmp, "out"), "--fabric", fabric,
                          "--memory-limit", "1000GiB"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{fabric}: {err}")
    return usage.ru_maxrss


def star(hosts, workload):
    return (f"topology: {{generate: {{kind: star, hosts: {hosts}}}}}\nworkloads: [{workload}]\n"
            "capture: {pcap: none}\n")


ONE = "{kind: rdma_write, from: h0, to: h1, size: 64, count: 1}"
for fabric in ("roce_v2", "roce_v1", "iwarp", "ib"):
    sizes = (250, 1000, 2000) if fabric != "ib" else (60, 120, 240)  # an IB switch has 254 ports
    if fabric == "ib":  # a leaf-spine keeps switches under 254 ports
        def topo(h):
            return (f"topology: {{generate: {{kind: leaf_spine, spines: 2, leaves: {h // 30}, hosts_per_leaf: 30}}}}\n"
                    f"workloads: [{ONE}]\ncapture: {{pcap: none}}\n")
    else:
        def topo(h):
            return star(h, ONE)
    rss = [peak_kib(topo(h), fabric) * 1024 for h in sizes]
    # Solve a + b h + c h^2 through the three points.
    (h1, h2, h3), (r1, r2, r3) = sizes, rss
    c = ((r3 - r1) / (h3 - h1) - (r2 - r1) / (h2 - h1)) / (h3 - h2)
    b = (r2 - r1) / (h2 - h1) - c * (h1 + h2)
    pairs = 64 * 63
    one = peak_kib(star(64, ONE), fabric) * 1024
    all_ = peak_kib(star(64, "{kind: all_to_all, size: 64, count: 1}"), fabric) * 1024
    base = peak_kib(star(2, ONE), fabric) * 1024
    buf = peak_kib(star(2, "{kind: rdma_write, from: h0, to: h1, size: 4MiB, count: 16, outstanding: 16}"), fabric) * 1024
    print(f"{fabric:8} per host {b / 1024:6.1f} KiB, per (host, node) {c:5.1f} B, "
          f"per connection {(all_ - one) / (pairs - 1) / 1024:5.1f} KiB, "
          f"64 MiB x 2 ends of buffers: {(buf - base) / 2**20:6.1f} MiB")
