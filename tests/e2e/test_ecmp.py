"""ECMP on a three-tier fat tree uses every path (RoCE v2 and the tcp
fabric's IP switches). Each switch hashes the 5-tuple with its own salt,
as real switches seed their hash: with one function everywhere, an
aggregation switch receives only the flows whose hash picked it at the
edge, and the same hash then sends them all up one of its k/2 core links
(ECMP polarization); k = 4 then left half the cores without a frame."""
import os

from e2e import check, finish, run, tmpdir

FAT_TREE = """name: ecmp_{fabric}
fabric: {fabric}
seed: 2
link: {{bandwidth: 100Gbps, delay: 1us}}
capture: {{pcap: none}}
topology: {{generate: {{kind: fat_tree, k: 4}}}}
workloads:
  - {{name: a2a, kind: all_to_all, op: {op}, size: 16KiB, count: 2}}
"""

for fabric, op in (("roce_v2", "rdma_write"), ("tcp", "send")):
    out = os.path.join(tmpdir(), fabric)
    code, _, err, res = run(FAT_TREE.format(fabric=fabric, op=op), out)
    if not check(code == 0 and res, f"{fabric}: exit {code}\n{err}"):
        continue
    tx = {}
    for p in res["ports"]:
        tx[(p["node"], p["port"])] = p["tx_frames"]
    cores = {n: sum(v for (m, _), v in tx.items() if m == n) for n in {m for m, _ in tx if m.startswith("core")}}
    check(len(cores) == 4 and all(v > 0 for v in cores.values()), f"{fabric}: every core forwards frames {cores}")
    # An aggregation switch's ports 2 and 3 go up to its two cores: both carry
    # what leaves the pod (the 240 connections of the all-to-all, each its
    # own 5-tuple, move the same bytes), within a factor of 3 of each other.
    for a in range(8):
        up = [tx[(f"agg{a}", p)] for p in (2, 3)]
        check(min(up) > 0 and max(up) < 3 * min(up), f"{fabric}: agg{a}'s core links share the load {up}")
finish()
