#!/usr/bin/env python3
"""Inputs that used to validate and then fail, hang or be misread
(docs/reliability.md, "What was tried"): --seed read as `seed:` is, odd
things given as the experiment file, a count no memory could hold per
message, a star of 65,536 hosts and the most hosts and ports a topology has,
captures on more ports than the process may open files."""
import os
import resource
import subprocess

import e2e

TWO = e2e.TWO_HOSTS

rdmasim = e2e.rdmasim
tmp = e2e.tmpdir()
two = e2e.write_text(os.path.join(tmp, "two.yaml"), TWO)

# --seed: the same parser as `seed:` in the file, so 010 is ten (not octal
# eight) and what the file refuses, the flag refuses.
res = e2e.run(two, os.path.join(tmp, "s010"), "--seed", "010")[3]
e2e.check(res and res["seed"] == 10, f"--seed 010 is 10: {res and res['seed']}")
res = e2e.run(two, os.path.join(tmp, "smax"), "--seed", "18446744073709551615")[3]
e2e.check(res and res["seed"] == 2**64 - 1, "--seed takes the largest 64-bit seed")
for bad in ("0x10", "99999999999999999999", "-1", "1e3", "many"):
    r = rdmasim("validate", two, "--seed", bad)
    e2e.check(r.returncode == 2 and "seed" in r.stderr and bad in r.stderr,
              f"--seed {bad}: exit {r.returncode}, expected 2 naming it: {r.stderr}")

# Not an experiment file: say what it is, with the path.
fifo = os.path.join(tmp, "fifo.yaml")
os.mkfifo(fifo)
for path, what in ((tmp, "is a directory"), (fifo, "is a FIFO"), ("/dev/zero", "is a character device"),
                   (os.path.join(tmp, "missing.yaml"), "no such file")):
    for cmd in ("validate", "run"):
        r = rdmasim(cmd, path)
        e2e.check(r.returncode == 2 and r.stderr.startswith(path + ": " + what),
                  f"{cmd} {path}: exit {r.returncode}, expected 2 and '{what}': {r.stderr}")

# A count far beyond what could ever run: nothing is allocated per message
# up front, so a short `stop` ends it (it used to die with bad_alloc).
for count in ("1000000000000", "18446744073709551615"):
    code, _, err, res = e2e.run(two, os.path.join(tmp, "huge" + count[:3]), "--set", f"workloads.0.count={count}",
                                "--set", "stop=50us")
    e2e.check(res and res["workloads"][0]["ops"] > 0 and not res["workloads"][0]["finished"],
              f"count {count}: runs until stop: {err}")

# outstanding: what a send queue holds (max_qp_wr 16384, one kept free), at
# validate time with the key's place, where ibv_create_qp used to fail in run.
r = rdmasim("validate", two, "--set", "workloads.0.outstanding=16384")
e2e.check(r.returncode == 2 and "workloads.0.outstanding" in r.stderr and "16383" in r.stderr,
          f"outstanding 16384: exit {r.returncode}: {r.stderr}")
res = e2e.run(two, os.path.join(tmp, "deep"), "--set", "workloads.0.outstanding=16383",
              "--set", "workloads.0.size=64", "--set", "workloads.0.count=20000")[3]
e2e.check(res and res["workloads"][0]["completions"] == {"IBV_WC_SUCCESS": 20000}, "outstanding 16383 runs")

# Captures on 2,000 hosts under ulimit -n 1024: each capture held its file
# open, and the run failed at set-up (exit 3, "Too many open files"); a
# capture now opens its file only to write its 64 KiB buffer out.
def nofile(n):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


caps = e2e.write_text(os.path.join(tmp, "caps.yaml"), """\
topology: {generate: {kind: star, hosts: 2000}}
workloads: [{kind: rdma_write, from: h0, to: h1, size: 4KiB, count: 20}]
capture: {pcap: hosts}
""")
out = os.path.join(tmp, "caps")
r = rdmasim("run", caps, "--out", out, "-q", preexec_fn=nofile(1024))
pcaps = os.listdir(os.path.join(out, "pcap")) if os.path.isdir(os.path.join(out, "pcap")) else []
e2e.check(r.returncode == 0 and len(pcaps) == 2000, f"2,000 captures under ulimit -n 1024: exit {r.returncode}: {r.stderr}")
if r.returncode == 0:
    frames = e2e.read_pcap(os.path.join(out, "pcap", "h1-0.pcap"))[1]
    e2e.check(len(frames) >= 40, f"h1's capture holds the WRITEs and ACKs: {len(frames)} frames")

# A star of 65,536 hosts: its switch's ports are 0..65535, and a 16-bit loop
# counter over them wrapped, so that the set-up never ended. `stop: 1ns`:
# the set-up is what is tested (about 5 s).
star = e2e.write_text(os.path.join(tmp, "star.yaml"), """\
name: star
topology: {generate: {kind: star, hosts: 65536}}
workloads: [{kind: rdma_write, from: h0, to: h65535, size: 4KiB, count: 1}]
capture: {pcap: none}
stop: 1ns
""")
try:
    r = rdmasim("run", star, "--out", os.path.join(tmp, "star"), "-q", timeout=120)
    e2e.check(r.returncode == 0, f"a star of 65,536 hosts runs: exit {r.returncode}: {r.stderr}")
except subprocess.TimeoutExpired:
    e2e.check(False, "a star of 65,536 hosts: set-up did not end in 120 s")
# ib: a switch has at most 254 ports, a subnet 49151 unicast LIDs.
r = rdmasim("validate", star, "--fabric", "ib")
e2e.check(r.returncode == 2 and "at most 254" in r.stderr, f"ib star of 65,536: exit {r.returncode}: {r.stderr}")
r = rdmasim("validate", star, "--fabric", "ib", "--set",
            "topology.generate={kind: leaf_spine, spines: 4, leaves: 200, hosts_per_leaf: 250}",
            "--set", "workloads.0.to=h49999")
e2e.check(r.returncode == 2 and "at most 49151 nodes" in r.stderr,
          f"ib with 50,204 nodes: exit {r.returncode}: {r.stderr}")
# Listed: at most 65,536 hosts, and 65,536 links a node (the graph used to
# number the 65,537th port 0).
hosts = [f"h{i}" for i in range(65537)]
for name, n, extra, words in (("many_hosts", 65537, "", "at most 65536 hosts, got 65537"),
                              ("many_ports", 65536, ", [s0, s1]", "'s0' would have more than 65536 links")):
    listed = e2e.write_text(os.path.join(tmp, name + ".yaml"), (
        "topology:\n  hosts: [" + ", ".join(hosts[:n]) + "]\n  switches: [s0, s1]\n"
        "  links: [" + ", ".join(f"[{h}, s0]" for h in hosts[:n]) + extra + "]\n"
        "workloads: [{kind: rdma_write, from: h0, to: h1}]\n"))
    r = rdmasim("validate", listed)
    e2e.check(r.returncode == 2 and words in r.stderr, f"{name}: exit {r.returncode}: {r.stderr[:300]}")

e2e.finish()
