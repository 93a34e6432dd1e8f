#!/usr/bin/env python3
"""A topology written link by link is split over MPI ranks by a balanced
graph partition (METIS; docs/parallel.md), the default when the topology
is not generated: a leaf-spine whose hosts are listed in an order that
says nothing about their leaves (h0 under leaf0, h1 under leaf1, ...) is
split by leaf (two ranks: only leaf-spine links cut), and its output is the
single-process run's byte for byte at -np 2 and -np 3, captures clean in
tshark. With host links of no propagation delay, pods (by host order)
cuts them and is refused; graph never cuts a link with no delay, and runs.

usage: test_parallel_graph.py PATH/TO/rdmasim SOURCE_DIR"""
import os

from e2e import check, check_captures, finish, run, tmpdir, write_text
from mpi_e2e import mpirun, parallel_stats, require_mpi, same_output

base = tmpdir()
LEAVES, PER_LEAF = 4, 3
HOSTS = [f"h{i}" for i in range(LEAVES * PER_LEAF)]


def experiment(name, host_delay="1us"):
    links = [f"    - [{h}, leaf{i % LEAVES}, {{delay: {host_delay}}}]" for i, h in enumerate(HOSTS)]
    links += [f"    - [leaf{l}, spine{s}]" for l in range(LEAVES) for s in range(2)]
    text = f"""name: {name}
fabric: roce_v2
seed: 3
link: {{bandwidth: 100Gbps, delay: 1us}}
topology:
  hosts: [{", ".join(HOSTS)}]
  switches: [spine0, spine1, {", ".join(f"leaf{l}" for l in range(LEAVES))}]
  links:
{chr(10).join(links)}
workloads:
  - {{name: f, kind: flows, cdf: hadoop, load: 0.5, duration: 20us, op: rdma_write}}
  - {{name: w, kind: rdma_write, from: h0, to: h4, size: 16KiB, count: 10, outstanding: 4}}
capture: {{pcap: [h0, h1, leaf0, spine1]}}  # hosts and switches of both ranks
"""
    return write_text(os.path.join(base, name + ".yaml"), text)


require_mpi(experiment("probe"), os.path.join(base, "probe"), "graph")

for name, delay in (("scrambled", "1us"), ("no_delay", "0ns")):
    path = experiment(name, delay)
    single = os.path.join(base, name + "-1")
    run(path, single)
    for n in (2, 3):
        out = os.path.join(base, f"{name}-{n}")
        p = mpirun(n, "run", path, "--out", out)  # no --partition: graph, the topology is written by hand
        if not check(p.returncode == 0, f"{name} -np {n}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"):
            continue
        same_output(single, out, f"{name} -np {n}")
        stats = parallel_stats(out)
        check(stats["partition"] == "graph", f"{name} -np {n}: partition {stats['partition']}, expected graph")
        # Two ranks: two leaves each, only leaf-spine links cut. Three: the
        # leaves do not divide, and METIS may cut a host link to balance,
        # unless it has no delay (no_delay: never).
        if n == 2 or name == "no_delay":
            check(stats["cut"] and all("spine" in c for c in stats["cut"]),
                  f"{name} -np {n}: links other than leaf-spine cut: {stats['cut']}")
        hosts = [r["hosts"] for r in stats["per_rank"]]
        check(sum(hosts) == len(HOSTS) and max(hosts) <= PER_LEAF * ((LEAVES + n - 1) // n),
              f"{name} -np {n}: hosts per rank {hosts}")
        check(sum(r["frames_sent"] for r in stats["per_rank"]) > 0, f"{name} -np {n}: no frame crossed ranks")
        if name == "scrambled" and n == 2:
            check_captures(out, "roce_v2")

# pods goes by host order: it puts h0..h5 (under every leaf) on rank 0 and
# cuts host links, which here have no delay: refused, no output.
out = os.path.join(base, "no_delay-pods")
p = mpirun(2, "run", os.path.join(base, "no_delay.yaml"), "--out", out, "--partition", "pods")
check(p.returncode == 2 and "no propagation delay" in p.stderr,
      f"pods cutting a link with no delay: exit {p.returncode}\n{p.stderr}")
check(not os.path.exists(out), "pods cutting a link with no delay: an output directory was left")
# An unknown partition names the choices.
p = mpirun(2, "run", os.path.join(base, "scrambled.yaml"), "--out", os.path.join(base, "bad"), "--partition", "metis")
check(p.returncode == 2 and "pods, spread or graph" in p.stderr, f"--partition metis: {p.returncode} {p.stderr}")

finish()
