#!/usr/bin/env python3
"""A run split over MPI ranks (issue 16, docs/parallel.md) gives the same
output as one process: `mpirun -np 2` and `-np 4` on small leaf-spine
experiments (roce_v2 with loss, with PFC and with a `flows` workload whose
flows span ranks, roce_v1 with a fault on a cut link, iwarp, kernel TCP
sockets, and InfiniBand with loss and a fault on a cut link and with an
flows its credits hold back, their updates crossing ranks), write
results.json, its CSVs, flows.csv, latency.csv and every pcap
byte-identical to the single-process run, and the captures are clean in
tshark. A PFC deadlock whose cycle spans ranks is reported as one process
reports it. A partition that leaves ranks without hosts (or without
anything) works. A rank that fails stops every rank, rank 0 says which,
and no output is left. A cut link with no propagation delay is refused
with exit 2. A build without MPI refuses --partition with exit 2.

usage: test_parallel.py PATH/TO/rdmasim SOURCE_DIR"""
import json
import os
import signal
import subprocess
import time

import e2e
from e2e import BINARY, check, check_no_malformed, finish, run, tmpdir, write_text
from mpi_e2e import files, leaf_spine, mpi_env, mpirun, require_mpi, same_output

base = tmpdir()

PAIRS = """  - {name: w, kind: rdma_write, from: h0, to: h2, size: 16KiB, count: 20, outstanding: 4}
  - {name: s, kind: send, from: h1, to: h3, size: 4KiB, count: 10, outstanding: 2}
  - {name: r, kind: rdma_read, from: h3, to: h1, size: 8KiB, count: 5, start: 3us}"""
INCAST = """  - {name: incast, kind: incast, from: [h0, h1, h2], to: h3, op: rdma_write, size: 64KiB, count: 6, outstanding: 4}"""
SOCKETS = """  - {name: s, kind: send, from: h0, to: h2, size: 16KiB, count: 10, outstanding: 2}
  - {name: p, kind: pingpong, op: send, from: h3, to: h1, size: 1KiB, count: 5}"""
# write_lat keeps its two hosts on one rank (docs/parallel.md): with pods
# -np 4 the two pairs take ranks 0 and 2, and ranks 1 and 3 own nothing.
PINNED = """  - {name: l0, kind: write_lat, from: h0, to: h2, size: 2KiB, count: 20}
  - {name: l1, kind: write_lat, from: h1, to: h3, size: 64, count: 20}"""
FLOWS = """  - {name: f, kind: flows, cdf: hadoop, load: 0.5, duration: 20us, op: rdma_write}"""


def experiment(name, fabric="roce_v2", delay="1us", loss=0, extra="", workloads=PAIRS, capture=""):
    return write_text(os.path.join(base, name + ".yaml"),
                      leaf_spine(name, fabric, workloads, seed=7, capture="pcap: all" + capture, delay=delay,
                                 loss=loss, extra=extra))


# A build without MPI says so and runs nothing.
yaml = experiment("pairs", loss=0.002)
require_mpi(yaml, os.path.join(base, "probe"))

# A PFC deadlock across ranks: the ring of four switches of
# test_pfc_deadlock, loaded four times over by flows of 64 KiB (which span
# ranks), so pods cuts the ring in two (s0, s1 | s2, s3) and spread -np 4
# at every switch.
write_text(os.path.join(base, "64k.cdf"), "65536 0\n65536 100\n")
PFC_RING = e2e.PFC_RING.replace(
    "flow_control: pfc", "flow_control: pfc\npfc: {deadlock_detect: 50us}\nstop: 400us").replace(
    "  - {kind: all_to_all, size: 64KiB, count: 50, outstanding: 16, timeout: 8}",
    "\n".join(f"  - {{name: f{i}, kind: flows, cdf: 64k.cdf, load: 1, duration: 100us}}" for i in range(4)))

# InfiniBand held back by its credits (16 KiB of buffer a link, every
# port waits for credits) under flows that span ranks, with loss.
IB_FLOWS = leaf_spine("ib_flows", "ib", seed=7, capture="pcap: all", loss="0.001",
                      workloads="\n".join(f"  - {{name: f{i}, kind: flows, cdf: 64k.cdf, load: 1, duration: 30us}}"
                                                  for i in range(2))).replace("loss: 0.001}", "loss: 0.001, buffer: 16KiB}")

# A fault on a link the spread partition cuts at -np 2 and 4 (leaf1 -
# spine0: the spines go round robin, leaf1 with h2): down, then up.
FAULT = "faults:\n  - {at: 4us, link: [leaf1, spine0], action: down}\n  - {at: 9us, link: [leaf1, spine0], action: up}"
cases = [
    ("pairs", yaml, ["pods", "spread"]),
    ("pinned", experiment("pinned", workloads=PINNED), ["pods", "spread"]),
    ("pfc", experiment("pfc", extra="flow_control: pfc\npfc: {priority: 3, xoff: 64KiB, xon: 32KiB}",
                       workloads=INCAST), ["spread"]),
    # kind: flows of RDMA WRITEs spans ranks: each leaf's hosts on their own rank.
    ("flows", experiment("flows", workloads=FLOWS, capture=", latency_samples: true"),
     ["pods", "spread"]),
    ("iwarp", experiment("iwarp", fabric="iwarp", loss=0.002), ["pods"]),
    # Captures of receivers only: the senders' frames reach them from
    # other ranks, sealed there (MPA CRCs need the sender's stream state).
    ("iwarp_receivers", write_text(os.path.join(base, "iwarp_receivers.yaml"), open(experiment(
        "iwarp_receivers", fabric="iwarp", loss=0.002)).read().replace("pcap: all", "pcap: [h2, h3, spine0]")),
     ["spread"]),
    ("roce_v1", experiment("roce_v1", fabric="roce_v1", loss=0.002, extra=FAULT), ["spread"]),
    ("tcp", experiment("tcp", fabric="tcp", loss=0.002, workloads=SOCKETS), ["spread"]),
    # InfiniBand: credits return across ranks; frames lost on a cut link
    # (loss, the fault) give theirs back on the receiver's rank.
    ("ib", experiment("ib", fabric="ib", loss=0.002, extra=FAULT), ["spread"]),
    ("ib_flows", write_text(os.path.join(base, "ib_flows.yaml"), IB_FLOWS), ["spread"]),
    ("pfc_ring", write_text(os.path.join(base, "pfc_ring.yaml"), PFC_RING), ["spread"]),
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
    # The deadlocked ring's flows are cut off by stop: the bytes they left
    # undelivered, compared above, are not 0 (a split run once lost them
    # on the way to rank 0).
    if name == "pfc_ring":
        with open(os.path.join(single, "results.json")) as f:
            undelivered = [w["undelivered"]["bytes"] for w in json.load(f)["workloads"]]
        check(all(b > 0 for b in undelivered), f"pfc_ring: undelivered bytes {undelivered}")
    # The flows workload has its flows.csv compared above; it must exist.
    if name == "flows":
        check(os.path.exists(os.path.join(single, "flows.csv")), "flows: no flows.csv")

# write_lat over 4 ranks with pods: the two workloads' host pairs on ranks 0
# and 2, ranks 1 and 3 own nothing and run only the experiment's events.
with open(os.path.join(base, "pinned-pods-4", "parallel.json")) as f:
    per = json.load(f)["per_rank"]
empty = [r for r in per if r["nodes"] == 0]
check(len(empty) == 2 and empty[0]["events"] == empty[1]["events"],
      f"ranks that own nothing run only the experiment's events: {per}")
# The flows workload spans ranks: every rank of pods -np 4 owns hosts
# (2 leaves, 2 hosts each: one host a rank), and receivers' checks were
# handed over as notes.
with open(os.path.join(base, "flows-pods-4", "parallel.json")) as f:
    per = json.load(f)["per_rank"]
check([r["hosts"] for r in per] == [1, 1, 1, 1], f"flows -np 4: hosts per rank {per}")
check(sum(r["notes_sent"] for r in per) > 0, f"flows -np 4: no flow ended across ranks {per}")
# The fault's link is one the split cuts, at both -np 2 and 4.
for n in (2, 4):
    with open(os.path.join(base, f"roce_v1-spread-{n}", "parallel.json")) as f:
        cut = json.load(f)["cut"]
    check("leaf1 - spine0" in cut, f"roce_v1 -np {n}: the faulty link is not cut: {cut}")
# spread -np 4 leaves ranks with no host (they own spines only).
with open(os.path.join(base, "pinned-spread-4", "parallel.json")) as f:
    per = json.load(f)["per_rank"]
check(any(r["hosts"] == 0 and r["nodes"] > 0 for r in per), f"spread -np 4: a rank with switches only {per}")

# A cut link with no propagation delay leaves no lookahead: refused, no output.
zero = experiment("zero", delay="0ns")
out = os.path.join(base, "zero-2")
p = mpirun(2, "run", zero, "--out", out, "--partition", "spread")
check(p.returncode == 2, f"zero-delay cut link: exit {p.returncode}, expected 2\n{p.stderr}")
check("no propagation delay" in p.stdout + p.stderr, f"zero-delay cut link: message: {p.stdout}{p.stderr}")
check(not os.path.exists(out), "zero-delay cut link: an output directory was left")

# InfiniBand: credit updates crossed ranks; the fault's link is cut.
for name in ("ib", "ib_flows"):
    for n in (2, 4):
        with open(os.path.join(base, f"{name}-spread-{n}", "parallel.json")) as f:
            stats = json.load(f)
        check(sum(r["credits_sent"] for r in stats["per_rank"]) > 0, f"{name} -np {n}: no credit crossed ranks")
        if name == "ib":
            check("leaf1 - spine0" in stats["cut"], f"ib -np {n}: the faulty link is not cut: {stats['cut']}")
with open(os.path.join(base, "ib_flows-1", "results.json")) as f:
    waited = [p for p in json.load(f)["ports"] if p["credit_wait_ps"] > 0]
check(len(waited) > 8, f"ib_flows: few ports wait for credits: {len(waited)}")
# The ring's deadlock is found, its cycle across ranks.
with open(os.path.join(base, "pfc_ring-1", "results.json")) as f:
    ring = json.load(f)
check(ring["pfc_deadlocks"], "pfc_ring: no deadlock to find across ranks")
for part in ("spread",):
    for n in (2, 4):
        with open(os.path.join(base, f"pfc_ring-{part}-{n}", "parallel.json")) as f:
            cut = json.load(f)["cut"]
        check("s1 - s2" in cut or "s2 - s1" in cut, f"pfc_ring {part} -np {n}: the ring is not cut: {cut}")

# A rank that fails brings the run down: rank 1 may write no file (its
# captures fail with EFBIG), so every rank stops, rank 0 says which rank
# failed and why, with the output error's exit code 3, and no output
# directory is left, half-written or not.
out = os.path.join(base, "failed-2")
args = ["run", yaml, "--out", out, "--partition", "spread"]
cmd = " ".join("'" + a + "'" for a in [BINARY, *args])
p = subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "1", BINARY, *args, ":",
                    "-np", "1", "sh", "-c", "trap '' XFSZ; ulimit -f 0; exec " + cmd],
                   capture_output=True, text=True, timeout=300, env=mpi_env())
check(p.returncode == 3, f"a failing rank: exit {p.returncode}, expected 3\n{p.stdout}\n{p.stderr}")
check("rank 1:" in p.stderr, f"a failing rank: rank 0 does not say which: {p.stderr}")
check(not os.path.exists(out), "a failing rank: an output directory was left")

# mpirun ends a job on SIGINT by sending SIGTERM to every rank, and a
# second later SIGKILL; but as soon as one rank ends it kills the rest at
# once. A rank other than 0 therefore ends only after rank 0 has removed
# what it staged and said so: one that ended at once had rank 0 killed
# halfway through (often, on a loaded machine), leaving out.tmp-* behind.
def process_state(pid):
    """The state letter of process `pid` (Z: ended, not yet reaped), None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def rank_pids(launcher):
    """The ranks' process ids by rank: mpirun's children that rdmasim runs in."""
    ranks = {}
    for pid in subprocess.run(["pgrep", "-P", str(launcher.pid)], capture_output=True, text=True).stdout.split():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK" in env:
            ranks[int(env[b"OMPI_COMM_WORLD_RANK"])] = int(pid)
    return ranks


long_run = experiment("long", extra="stop: 10s",
                      workloads="  - {name: w, kind: rdma_write, from: h0, to: h2, size: 64KiB, count: 10000000}")
for case in ("rank 1 first", "mpirun"):
    parent = os.path.join(base, "interrupted-" + case.replace(" ", "-"))
    os.mkdir(parent)
    out = os.path.join(parent, "out")
    p = subprocess.Popen(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", BINARY, "run", long_run,
                          "--out", out, "--partition", "spread", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env())
    deadline = time.monotonic() + 120
    while not os.listdir(parent) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    check(os.listdir(parent) != [], f"interrupted ({case}): rank 0 began staging its output")
    time.sleep(0.5)  # every rank is running windows
    if case == "rank 1 first":
        # Rank 1 alone interrupted (as the launcher's SIGTERM reaches it
        # first): it waits for rank 0, which has not ended.
        ranks = rank_pids(p)
        check(sorted(ranks) == [0, 1], f"interrupted ({case}): the ranks' processes {ranks}")
        if 1 in ranks:
            os.kill(ranks[1], signal.SIGTERM)
            time.sleep(1.5)
            check(p.poll() is None and process_state(ranks[1]) not in (None, "Z"),
                  f"interrupted ({case}): rank 1 ended before rank 0")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    check(p.returncode != 0, f"interrupted ({case}): mpirun exit {p.returncode}")
    check("interrupted (SIGTERM)" in err, f"interrupted ({case}): rank 0 did not say so: {err}")
    check(os.listdir(parent) == [], f"interrupted ({case}): left {os.listdir(parent)}")

# Only `run` runs over ranks.
p = mpirun(2, "validate", yaml)
check(p.returncode == 2 and "only 'rdmasim run'" in p.stderr, f"validate under mpirun: {p.returncode} {p.stderr}")

finish()
