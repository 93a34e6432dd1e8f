#!/usr/bin/env python3
"""Pair workloads span MPI ranks (docs/parallel.md): incast and all_to_all
of RC WRITEs and READs, rdma_write_imm, write_bw and read_bw (their
buffers computed), read_lat, send_bw, send_imm, pingpong, send_lat and the
atomics run each end on its own host's rank, on roce_v2 (with loss, and
with PFC), roce_v1, ib and iwarp (with loss; the kinds it accepts).
`mpirun -np 2` and `-np 4` write results.json, latency.csv and every pcap
byte-identical to the single-process run, every capture is clean in
tshark, every workload has data_verified true, and parallel.json shows the
hosts spread (two a rank, then one: every pair of these crosses ranks)
with the receivers' work handed over as notes. Failed runs (a bad rkey,
UC WRITEs and UD SENDs losing data) are reported, and exit, as one
process reports them.

usage: test_parallel_pairs.py PATH/TO/rdmasim SOURCE_DIR"""
import os

from e2e import check, check_no_malformed, check_roce_v2_capture, finish, run, tmpdir, write_text
from mpi_e2e import leaf_spine, mpirun, parallel_stats, require_mpi, same_output

base = tmpdir()

# At -np 2 (h0 h1 | h2 h3) every pair of the one-pair kinds crosses ranks,
# the incast and the all_to_alls have pairs of both sorts; at -np 4 (a
# host a rank) every pair crosses.
RC = """  - {name: incast, kind: incast, from: [h0, h1, h2], to: h3, op: rdma_write, size: 16KiB, count: 6, outstanding: 4}
  - {name: a2a, kind: all_to_all, hosts: [h0, h1, h2, h3], op: rdma_write, size: 4KiB, count: 3, outstanding: 2}
  - {name: a2a_read, kind: all_to_all, hosts: [h0, h1, h3], op: rdma_read, size: 8KiB, count: 3, outstanding: 2}
  - {name: wbw, kind: write_bw, from: h2, to: h0, size: 32KiB, count: 8, outstanding: 4, payload: pattern}
  - {name: rbw, kind: read_bw, from: h0, to: h2, size: 16KiB, count: 8, outstanding: 4, payload: pattern}
  - {name: rlat, kind: read_lat, from: h3, to: h0, size: 64, count: 4}
  - {name: send, kind: send_bw, from: h1, to: h3, size: 8KiB, count: 8, outstanding: 4}
  - {name: ping, kind: pingpong, op: send, from: h3, to: h1, size: 1KiB, count: 4}
  - {name: slat, kind: send_lat, from: h0, to: h3, size: 64, count: 4}"""
# What iwarp has not (RFC 5040): immediate data and atomics.
IBA = RC + """
  - {name: imm, kind: rdma_write_imm, from: h1, to: h2, size: 4KiB, count: 6, outstanding: 2}
  - {name: simm, kind: send_imm, from: h2, to: h1, size: 2KiB, count: 4}
  - {name: fadd, kind: atomic_bw, from: h1, to: h2, count: 6, outstanding: 2}
  - {name: cas, kind: atomic_cas, from: h2, to: h0, count: 3, compare: 0, swap: 5}"""
PFC = """  - {name: incast, kind: incast, from: [h0, h1, h2], to: h3, op: rdma_write, size: 64KiB, count: 6, outstanding: 4}
  - {name: a2a, kind: all_to_all, hosts: [h0, h1, h2, h3], op: rdma_read, size: 16KiB, count: 4, outstanding: 4}"""
FAILED = """  - {name: bad, kind: rdma_write, from: h0, to: h2, size: 4KiB, count: 3, bad_rkey: true, timeout: 8}
  - {name: uc, kind: rdma_write, qp: uc, from: h1, to: h3, size: 64KiB, count: 20, outstanding: 4}
  - {name: ud, kind: send, qp: ud, from: h3, to: h0, size: 1KiB, count: 40, outstanding: 4}
  - {name: ok, kind: rdma_read, from: h2, to: h1, size: 4KiB, count: 4, timeout: 8}"""

cases = [
    # name, fabric, loss, extra, workloads, expected exit (None: any, the same split)
    ("roce_v2", "roce_v2", 0.002, "", IBA, 0),
    ("pfc", "roce_v2", 0, "flow_control: pfc\npfc: {priority: 3, xoff: 32KiB, xon: 16KiB}", PFC, 0),
    ("roce_v1", "roce_v1", 0.002, "", IBA, 0),
    ("ib", "ib", 0.002, "", IBA, 0),
    ("iwarp", "iwarp", 0.002, "", RC, 0),
    ("failed", "roce_v2", 0.05, "", FAILED, None),
]



def experiment(name, fabric, workloads, loss=0, extra=""):
    return write_text(os.path.join(base, name + ".yaml"), leaf_spine(
        name, fabric, workloads, seed=11, capture="pcap: all, latency_samples: true", loss=loss, extra=extra))


require_mpi(experiment("probe", "roce_v2", PFC), os.path.join(base, "probe"))

for name, fabric, loss, extra, workloads, code in cases:
    path = experiment(name, fabric, workloads, loss, extra)
    single = os.path.join(base, name + "-1")
    got, _, _, results = run(path, single, expect=code)
    if results is None:
        continue
    code = got  # a split run exits as one process does
    # The hosts' captures (every frame of every pair) clean in tshark, the
    # split runs' being the same bytes; the switches' are compared only.
    for f in sorted(os.listdir(os.path.join(single, "pcap"))):
        if f.startswith("h"):
            if fabric == "roce_v2":
                check_roce_v2_capture(os.path.join(single, "pcap", f), pfc=name == "pfc")
            else:
                check_no_malformed(os.path.join(single, "pcap", f))
    by_name = {w["name"]: w for w in results["workloads"]}
    if name != "failed":
        for w in results["workloads"]:
            check(w["data_verified"] and w["finished"] and w["ops"] == w["planned_ops"],
                  f"{name}: {w['name']}: {w['ops']}/{w['planned_ops']} verified {w['data_verified']}")
    if name == "pfc":
        check(sum(p["pause_frames"] for p in results["ports"]) > 0, "pfc: no PAUSE frame")
    if name == "failed":
        check(not by_name["bad"]["data_verified"] and "IBV_WC_SUCCESS" not in by_name["bad"]["completions"],
              f"failed: bad: {by_name['bad']}")
        check(by_name["uc"]["data_mismatch"], f"failed: uc: no data lost {by_name['uc']}")
        check(not by_name["ud"]["data_verified"], f"failed: ud: no datagram lost {by_name['ud']}")
        check(by_name["ok"]["data_verified"], f"failed: ok: {by_name['ok']}")
    if loss:
        check(sum(p["drops"] for p in results["ports"]) > 0, f"{name}: nothing lost")
    for n in (2, 4):
        out = os.path.join(base, f"{name}-{n}")
        p = mpirun(n, "run", path, "--out", out, "--partition", "pods")
        if not check(p.returncode == code, f"{name} -np {n}: exit {p.returncode}, expected {code}\n{p.stdout}\n{p.stderr}"):
            continue
        same_output(single, out, f"{name} -np {n}")
        stats = parallel_stats(out)
        hosts = [r["hosts"] for r in stats["per_rank"]]
        check(hosts == [4 // n] * n, f"{name} -np {n}: hosts per rank {hosts}, expected {4 // n} each")
        # READ sources filled, WRITEs checked on the receiver's rank.
        check(sum(r["notes_sent"] for r in stats["per_rank"]) > 0, f"{name} -np {n}: no note {stats['per_rank']}")

finish()
