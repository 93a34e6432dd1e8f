"""Helpers for end-to-end tests of runs split over MPI ranks
(docs/parallel.md): start rdmasim under mpirun as CI does (as root,
oversubscribed), and compare a split run's output with one process's."""
import filecmp
import json
import os
import shutil
import subprocess

import e2e
from e2e import BINARY, check, finish, rdmasim


def leaf_spine(name, fabric, workloads, seed, capture, delay="1us", loss=0, extra=""):
    """An experiment's text: two spines over two leaves of two hosts (h0, h1
    under leaf0, h2, h3 under leaf1), `extra` sections, `workloads` (the
    lines of a YAML list) and `capture` (the keys inside capture: {...})."""
    return f"""
name: {name}
fabric: {fabric}
seed: {seed}
link: {{bandwidth: 100Gbps, delay: {delay}, loss: {loss}}}
topology:
  generate: {{kind: leaf_spine, spines: 2, leaves: 2, hosts_per_leaf: 2}}
{extra}
workloads:
{workloads}
capture: {{{capture}}}
"""


def mpi_env():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1")
    # Open MPI does not free its own allocations at MPI_Finalize, some in
    # plugins it has unloaded (frames LeakSanitizer cannot name, so no
    # suppression matches them): leak checks are off for the ranks only.
    if e2e.SANITIZED:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


def mpirun(n, *args):
    return subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(n), BINARY, *args],
                          capture_output=True, text=True, timeout=300, env=mpi_env())


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


def parallel_stats(out):
    with open(os.path.join(out, "parallel.json")) as f:
        return json.load(f)


def require_mpi(yaml, out, partition="pods"):
    """Runs YAML in one process with --partition; ends the test (passing)
    when the build has no MPI, after checking that it refused with exit 2
    and wrote nothing; fails it when mpirun is missing."""
    probe = rdmasim("run", yaml, "--out", out, "--partition", partition)
    if probe.returncode == 2 and "no MPI" in probe.stderr:
        check(not os.path.exists(out), "no MPI: an output directory was written")
        print("built without MPI: checked the refusal only")
        finish()
    check(probe.returncode == 0, f"--partition {partition} on one rank: exit {probe.returncode}: {probe.stderr}")
    if shutil.which("mpirun") is None:
        check(False, "the build has MPI but mpirun is missing (scripts/setup.sh installs openmpi-bin)")
        finish()
