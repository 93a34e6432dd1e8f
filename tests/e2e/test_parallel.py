#!/usr/bin/env python3
"""A run split over MPI ranks (issue 16, docs/parallel.md) gives the same
output as one process: `mpirun -np 2` and `-np 4` on small leaf-spine
experiments (roce_v2 with loss, with PFC and with a `flows` workload, and
iwarp), under both partitions, write results.json, its CSVs, flows.csv and
every pcap byte-identical to the single-process run, and the captures are
clean in tshark. A partition that leaves ranks without hosts (or without
anything) works. A cut link with no propagation delay, and a cut IB link,
are refused with exit 2. A build without MPI refuses --partition with exit 2.

usage: test_parallel.py PATH/TO/rdmasim SOURCE_DIR"""
import filecmp
import os
import shutil
import subprocess

from e2e import BINARY, check, check_no_malformed, finish, rdmasim, run, tmpdir, write_text

base = tmpdir()

LEAF_SPINE = """
name: {name}
fabric: {fabric}
seed: 7
link: {{bandwidth: 100Gbps, delay: {delay}, loss: {loss}}}
topology:
  generate: {{kind: leaf_spine, spines: 2, leaves: 2, hosts_per_leaf: 2}}
{extra}
workloads:
{workloads}
capture: {{pcap: all}}
"""

PAIRS = """  - {name: w, kind: rdma_write, from: h0, to: h2, size: 16KiB, count: 20, outstanding: 4}
  - {name: s, kind: send, from: h1, to: h3, size: 4KiB, count: 10, outstanding: 2}
  - {name: r, kind: rdma_read, from: h3, to: h1, size: 8KiB, count: 5, start: 3us}"""
INCAST = """  - {name: incast, kind: incast, from: [h0, h1, h2], to: h3, op: rdma_write, size: 64KiB, count: 6, outstanding: 4}"""
FLOWS = """  - {name: f, kind: flows, cdf: hadoop, load: 0.5, duration: 20us, op: rdma_write}"""


def experiment(name, fabric="roce_v2", delay="1us", loss=0, extra="", workloads=PAIRS):
    return write_text(os.path.join(base, name + ".yaml"),
                      LEAF_SPINE.format(name=name, fabric=fabric, delay=delay, loss=loss, extra=extra,
                                        workloads=workloads))


def mpirun(n, *args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1")
    return subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(n), BINARY, *args],
                          capture_output=True, text=True, timeout=300, env=env)


def files(d):
    out = []
    for root, _, names in os.walk(d):
        for n in names:
            # parallel.json is the split run's own; the manifest lists it.
            if n not in ("parallel.json", ".rdmasim-manifest"):
                out.append(os.path.relpath(os.path.join(root, n), d))
    return sorted(out)


def same_output(single, split, what):
    a, b = files(single), files(split)
    check(a == b, f"{what}: files differ: {sorted(set(a) ^ set(b))}")
    for f in a:
        if f in b and not filecmp.cmp(os.path.join(single, f), os.path.join(split, f), shallow=False):
            check(False, f"{what}: {f} differs from the single-process run")


# A build without MPI says so and runs nothing.
yaml = experiment("pairs", loss=0.002)
probe = rdmasim("run", yaml, "--out", os.path.join(base, "probe"), "--partition", "pods")
if probe.returncode == 2 and "no MPI" in probe.stderr:
    check(not os.path.exists(os.path.join(base, "probe")), "no MPI: an output directory was written")
    print("built without MPI: checked the refusal only")
    finish()
check(probe.returncode == 0, f"--partition on one rank: exit {probe.returncode}: {probe.stderr}")
if shutil.which("mpirun") is None:
    check(False, "the build has MPI but mpirun is missing (scripts/setup.sh installs openmpi-bin)")
    finish()

cases = [
    ("pairs", yaml, ["pods", "spread"]),
    ("pfc", experiment("pfc", extra="flow_control: pfc\npfc: {priority: 3, xoff: 64KiB, xon: 32KiB}",
                       workloads=INCAST), ["spread"]),
    ("flows", experiment("flows", workloads=FLOWS), ["spread"]),
    ("iwarp", experiment("iwarp", fabric="iwarp", loss=0.002), ["pods"]),
]
checked_pcaps = False
for name, path, partitions in cases:
    single = os.path.join(base, name + "-1")
    run(path, single)
    for part in partitions:
        for n in (2, 4):
            out = os.path.join(base, f"{name}-{part}-{n}")
            p = mpirun(n, "run", path, "--out", out, "--partition", part)
            if not check(p.returncode == 0, f"{name} -np {n} --partition {part}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"):
                continue
            same_output(single, out, f"{name} -np {n} --partition {part}")
            if os.path.exists(os.path.join(out, "parallel.json")):
                import json
                with open(os.path.join(out, "parallel.json")) as f:
                    stats = json.load(f)
                check(stats["ranks"] == n and len(stats["per_rank"]) == n, f"{name}: parallel.json {stats}")
                check(stats["cut_links"] > 0, f"{name} -np {n} --partition {part}: the partition cuts no link")
                sent = sum(r["frames_sent"] for r in stats["per_rank"])
                check(sent > 0, f"{name} -np {n} --partition {part}: no frame crossed ranks")
            else:
                check(False, f"{name} -np {n}: no parallel.json")
            if not checked_pcaps:
                checked_pcaps = True
                for f in files(out):
                    if f.endswith(".pcap"):
                        check_no_malformed(os.path.join(out, f))
    # The flows workload has its flows.csv compared above; it must exist.
    if name == "flows":
        check(os.path.exists(os.path.join(single, "flows.csv")), "flows: no flows.csv")

# pairs over 4 ranks with pods: ranks 2 and 3 own nothing; spread: ranks without hosts own spines.
with open(os.path.join(base, "pairs-pods-4", "parallel.json")) as f:
    import json
    per = json.load(f)["per_rank"]
check(per[3]["events"] == per[2]["events"], f"ranks that own nothing run only the experiment's events: {per}")

# A cut link with no propagation delay leaves no lookahead: refused, no output.
zero = experiment("zero", delay="0ns")
out = os.path.join(base, "zero-2")
p = mpirun(2, "run", zero, "--out", out, "--partition", "spread")
check(p.returncode == 2, f"zero-delay cut link: exit {p.returncode}, expected 2\n{p.stderr}")
check("no propagation delay" in p.stdout + p.stderr, f"zero-delay cut link: message: {p.stdout}{p.stderr}")
check(not os.path.exists(out), "zero-delay cut link: an output directory was left")

# InfiniBand's credit updates do not cross ranks yet: a cut IB link is refused.
ib = experiment("ib", fabric="ib")
out = os.path.join(base, "ib-2")
p = mpirun(2, "run", ib, "--out", out, "--partition", "spread")
check(p.returncode == 2 and "credit" in p.stdout + p.stderr, f"cut ib link: exit {p.returncode}\n{p.stderr}")
check(not os.path.exists(out), "cut ib link: an output directory was left")

# Only `run` runs over ranks.
p = mpirun(2, "validate", yaml)
check(p.returncode == 2 and "only 'rdmasim run'" in p.stderr, f"validate under mpirun: {p.returncode} {p.stderr}")

finish()
