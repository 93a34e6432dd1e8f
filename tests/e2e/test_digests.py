"""Refactoring guard: a few examples, and a few small experiments covering
every workload kind, run on every fabric must write byte-identical output
(results.json, the CSVs, every pcap) to what the stored digests say
(tests/e2e/digests.json, sha256 of each file; a run a fabric refuses is
stored as its exit code). A change meant to alter behaviour regenerates them
with `test_digests.py BINARY SOURCE --update` and says why in its commit; a
change meant to keep it (moving code, splitting a function) must pass as is.

`--only LABEL` runs one case (on every fabric)."""

import hashlib
import json
import os
import sys

import e2e
from e2e import check

FABRICS = ["ib", "roce_v1", "roce_v2", "iwarp", "tcp"]

TOPO = "topology: {hosts: [a, b, c, d], switches: [s1], links: [[a, s1], [b, s1], [c, s1], [d, s1]]}\n"

# Small experiments, one or a few kinds each; every fabric runs each (or refuses it).
INLINE = {
    "patterns": "name: patterns\nseed: 5\n" + TOPO + """\
workloads:
  - {name: inc, kind: incast, from: [a, b, c], to: d, size: 16KiB, count: 4, outstanding: 2}
  - {name: a2a, kind: all_to_all, hosts: [a, b, c], size: 4KiB, count: 2}
  - {name: pp, kind: pingpong, from: a, to: d, size: 256B, count: 5}
""",
    "perftest": "name: perftest\nseed: 3\n" + TOPO + """\
workloads:
  - {name: wl, kind: write_lat, from: a, to: b, size: 64B, count: 5}
  - {name: rl, kind: read_lat, from: c, to: d, size: 64B, count: 5}
  - {name: sb, kind: send_bw, from: b, to: c, size: 8KiB, count: 8, outstanding: 4}
  - {name: pat, kind: rdma_write, from: a, to: c, size: 32KiB, count: 6, outstanding: 3, payload: pattern}
""",
    "atomics": "name: atomics\nseed: 4\n" + TOPO + """\
workloads:
  - {name: ab, kind: atomic_bw, from: d, to: a, count: 6, op: atomic_cas, compare: 0, swap: 9}
  - {name: al, kind: atomic_lat, from: b, to: c, count: 4}
""",
    "flows": "name: flows\nseed: 11\n" + TOPO + """\
workloads:
  - {name: f, kind: flows, cdf: websearch, load: 0.2, duration: 30us}
  - {name: busy, kind: compute, on: b, work: 20us, chunk: 5us}
capture: {pcap: hosts, latency_samples: true}
""",
    "lossy": "name: lossy\nseed: 9\nlink: {bandwidth: 25Gbps, mtu: 1024, loss: 0.02}\n" + TOPO + """\
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 16KiB, count: 10, outstanding: 4, timeout: 8}
  - {name: s, kind: send, from: c, to: d, size: 4KiB, count: 10, outstanding: 2, timeout: 8}
""",
}
EXAMPLES = ["quickstart", "ib_two_hosts", "host_overlap", "kernel_vs_rdma", "udp_livelock", "roce_v2_irn_loss"]


def digests_of(out):
    d = {}
    for root, _dirs, files in os.walk(out):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                d[os.path.relpath(p, out)] = hashlib.sha256(fh.read()).hexdigest()
    return dict(sorted(d.items()))


def cases():
    out = [(name, os.path.join(e2e.SOURCE, "examples", name + ".yaml")) for name in EXAMPLES]
    return out + sorted(INLINE.items())


def main():
    stored_path = os.path.join(e2e.SOURCE, "tests", "e2e", "digests.json")
    update = "--update" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    stored = {}
    if os.path.exists(stored_path):
        with open(stored_path) as f:
            stored = json.load(f)
    got = {}
    tmp = e2e.tmpdir()
    for label, experiment in cases():
        if only and label != only:
            continue
        if "\n" in experiment:  # the same file name every time: results.json names it
            path = os.path.join(tmp, label + ".yaml")
            with open(path, "w") as f:
                f.write(experiment)
            experiment = path
        for fabric in FABRICS:
            key = f"{label}/{fabric}"
            out = os.path.join(tmp, label, fabric)
            rc, _o, _e, _r = e2e.run(experiment, out, "--fabric", fabric, "-q", expect=None)
            got[key] = digests_of(out) if rc == 0 else {"exit": rc}
    if update:
        stored.update(got)
        with open(stored_path, "w") as f:
            json.dump(stored, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {len(got)} digests to {stored_path}")
    else:
        for key, d in got.items():
            if not check(key in stored, f"{key}: a stored digest"):
                continue
            for name in sorted(set(d) | set(stored[key])):
                check(d.get(name) == stored[key].get(name), f"{key}: {name} as stored")
        if not only:
            check(set(got) == set(stored), f"every stored case ran ({sorted(set(stored) - set(got))} did not)")
    e2e.finish()


main()
