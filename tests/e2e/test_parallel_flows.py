#!/usr/bin/env python3
"""`kind: flows` workloads of SENDs (RC, UC and UD QPs) and of kernel
sockets (fabric: tcp) span MPI ranks (docs/parallel.md, "Workloads whose
flows span ranks"): each flow's two programs run on their own hosts' ranks,
what one process reads across the two ends goes between the ranks as
notes, and `mpirun -np 2` (and `-np 4` on roce_v2 with loss and on tcp)
write results.json, flows.csv, latency.csv and every pcap byte-identical
to the single-process run, on roce_v2 (with loss, and with PFC), roce_v1,
ib, iwarp and tcp. The
partition really splits the hosts (a leaf a rank at -np 2, a host a rank
at -np 4), flows cross ranks and their ends told each other by notes; the
captures are clean in tshark.

An NVMe job beside a `flows` workload on one of its hosts is refused
before a split run starts (its queues, made during the run on its hosts'
rank only, numbered the flows' QPs and memory regions differently on the
two ranks: REM_ACCESS_ERR and different results); with the flows on other
hosts the split run is byte-identical.

usage: test_parallel_flows.py PATH/TO/rdmasim SOURCE_DIR"""
import csv
import json
import os

from e2e import check, check_captures, finish, run, tmpdir, write_text
from mpi_e2e import leaf_spine, mpirun, parallel_stats, require_mpi, same_output

base = tmpdir()

# Small flows, so that many arrive in 15 us; UD's fit one packet (the 4 KiB MTU).
write_text(os.path.join(base, "small.cdf"), "512 0\n4096 50\n32768 100\n")
write_text(os.path.join(base, "ud.cdf"), "1024 0\n4096 100\n")


def flows(name, op="send", qp="rc", cdf="small.cdf", payload=""):
    return (f"  - {{name: {name}, kind: flows, op: {op}, qp: {qp}, cdf: {cdf}, load: 0.2, duration: 15us"
            f"{payload}}}")


RDMA_SENDS = "\n".join([flows("rc"), flows("rcm", payload=", payload: memory"), flows("uc", qp="uc"),
                        flows("ud", qp="ud", cdf="ud.cdf"), flows("w", op="rdma_write")])
PFC = "flow_control: pfc\npfc: {priority: 3, xoff: 4KiB, xon: 2KiB}"


def experiment(name, fabric, loss=0, extra="", workloads=RDMA_SENDS):
    return write_text(os.path.join(base, name + ".yaml"),
                      leaf_spine(name, fabric, workloads, seed=11, capture="pcap: hosts, latency_samples: true",
                                 loss=loss, extra=extra))


require_mpi(experiment("probe", "roce_v2"), os.path.join(base, "probe"))

cases = [
    # name, fabric, loss, extra, workloads
    ("roce_v2_loss", "roce_v2", 0.01, "", RDMA_SENDS),
    ("roce_v2_pfc", "roce_v2", 0, PFC, RDMA_SENDS),
    ("roce_v1", "roce_v1", 0.01, "", RDMA_SENDS),
    ("ib", "ib", 0.01, "", RDMA_SENDS),
    # iWARP has RC only.
    ("iwarp", "iwarp", 0.01, "", "\n".join([flows("rc"), flows("w", op="rdma_write")])),
    # Kernel sockets: the server times each message from the client's send().
    ("tcp", "tcp", 0.01, "", flows("sock")),
]
for name, fabric, loss, extra, workloads in cases:
    path = experiment(name, fabric, loss, extra, workloads)
    single = os.path.join(base, name + "-1")
    run(path, single)
    if not check(os.path.exists(os.path.join(single, "results.json")), f"{name}: no results"):
        continue
    with open(os.path.join(single, "results.json")) as f:
        res = json.load(f)
    # Every workload ran flows, most of them across the leaves.
    with open(os.path.join(single, "flows.csv")) as f:
        rows = list(csv.DictReader(f))
    for w in res["workloads"]:
        mine = [r for r in rows if r["workload"] == w["name"]]
        across = [r for r in mine if (r["from"] in ("h0", "h1")) != (r["to"] in ("h0", "h1"))]
        check(len(across) >= 3, f"{name}: {w['name']}: {len(across)} flows across the leaves")
        check(w["fct"]["completed"] > 0, f"{name}: {w['name']}: no flow completed")
        if loss == 0:
            check(w["finished"] and w["data_verified"], f"{name}: {w['name']}: {w}")
        check(not w["data_mismatch"], f"{name}: {w['name']}: wrong bytes landed")
    if loss:
        check(sum(w["retransmitted_packets"] for w in res["workloads"]) > 0, f"{name}: no retransmission")
    pfc = fabric == "roce_v2" and extra == PFC
    if pfc:
        check(any(p["pause_frames"] > 0 for p in res["ports"]), f"{name}: no PAUSE frame")
    check(len(check_captures(single, fabric, pfc=pfc)) == 4, f"{name}: a capture per host")
    # -np 4 (a host a rank: every flow crosses) on two fabrics, the IBA
    # transport's and the sockets', so the test stays short.
    for n, hosts in ((2, [2, 2]), (4, [1, 1, 1, 1]))[:2 if name in ("roce_v2_loss", "tcp") else 1]:
        out = os.path.join(base, f"{name}-{n}")
        p = mpirun(n, "run", path, "--out", out, "--partition", "pods")
        if not check(p.returncode == 0, f"{name} -np {n}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"):
            continue
        same_output(single, out, f"{name} -np {n}")
        per = parallel_stats(out)["per_rank"]
        # A leaf a rank, then a host a rank: the flows' hosts are not tied together.
        check([r["hosts"] for r in per] == hosts, f"{name} -np {n}: hosts per rank {[r['hosts'] for r in per]}")
        check(sum(r["notes_sent"] for r in per) > 0, f"{name} -np {n}: no note crossed ranks")
        check(sum(r["frames_sent"] for r in per) > 0, f"{name} -np {n}: no frame crossed ranks")

# NVMe beside flows (docs/parallel.md): sharing host h0, refused before
# anything runs; on other hosts, byte-identical to one process.
STORAGE = "storage: {targets: [{host: h3, namespaces: [{nsid: 1, size: 1GiB, ram: true}]}]}"
for name, hosts in (("nvme_shared", "[h0, h1, h2]"), ("nvme_apart", "[h1, h2]")):
    text = leaf_spine(name, "roce_v2", f"""  - {{name: io, kind: nvme, initiator: h0, target: h3, bs: 4k, iodepth: 4,
     runtime: 100us}}
  - {{name: fl, kind: flows, op: rdma_write, cdf: small.cdf, load: 0.3, duration: 100us, hosts: {hosts}}}""",
                      seed=7, capture="pcap: none", extra=STORAGE)
    path = write_text(os.path.join(base, name + ".yaml"), text)
    out = os.path.join(base, name + "-2")
    p = mpirun(2, "run", path, "--out", out, "--partition", "pods")
    if name == "nvme_shared":
        check(p.returncode == 2 and f"{path}:10:5: workloads: nvme workload io and flows workload fl share host h0"
              in p.stderr and not os.path.exists(out), f"{name}: refused, located, nothing written: "
              f"{p.returncode} {p.stderr.strip()[:300]}")
        continue
    single = os.path.join(base, name + "-1")
    run(path, single, "--partition", "pods")
    if check(p.returncode == 0, f"{name} -np 2: exit {p.returncode}\n{p.stderr}"):
        same_output(single, out, f"{name} -np 2")

finish()
