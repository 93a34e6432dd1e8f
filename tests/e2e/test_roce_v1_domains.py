"""RoCE v1 stays in its broadcast domain.
- A leaf-spine of bridges is one domain: every pair talks, and the links the
  spanning tree blocks carry nothing (examples/roce_v1_leaf_spine.yaml).
- Two domains joined by a router (examples/roce_v1_two_domains.yaml): the
  cross-domain workload is refused with exit 2 and a message naming the
  hosts; in-domain traffic runs on both sides and nothing crosses the
  router; RoCE v2 routes the same workload."""
import os
import struct

from e2e import SOURCE, check, check_no_malformed, finish, read_pcap, run, tmpdir, tshark_fields

tmp = tmpdir()


def all_ok(res, what):
    check(res is not None, f"{what}: results.json written")
    if res is None:
        return
    for w in res["workloads"]:
        check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["ops"] > 0,
              f"{what}: {w['name']}: every completion successful ({w['completions']})")
        check(w["data_verified"], f"{what}: {w['name']}: data verified")


def port(res, node, index):
    return next(p for p in res["ports"] if p["node"] == node and p["port"] == index)


# ---- leaf-spine: one domain, spanning tree rooted at leaf0 (the lowest name).
out = os.path.join(tmp, "ls")
_, _, _, res = run(os.path.join(SOURCE, "examples/roce_v1_leaf_spine.yaml"), out)
all_ok(res, "leaf-spine")
# Leaves' ports: 0, 1 to hosts, 2 to spine0, 3 to spine1. Spine1's root port
# is its link to leaf0; leaf1..3 reach the root through spine0, so their links
# to spine1 are blocked: no frame in either direction.
for leaf in ("leaf1", "leaf2", "leaf3"):
    p = port(res, leaf, 3)
    check(p["tx_frames"] == 0 and p["rx_frames"] == 0, f"{leaf}-spine1 is blocked and idle: {p}")
    check(port(res, leaf, 2)["tx_frames"] > 0, f"{leaf}-spine0 carries traffic")
check(sum(port(res, "spine1", i)["tx_frames"] for i in range(4)) == 0, "spine1 forwards nothing (a leaf of the tree)")
check(port(res, "leaf0", 3)["tx_frames"] > 0, "leaf0 floods into spine1 over the tree link")
for f in sorted(os.listdir(os.path.join(out, "pcap"))):
    path = os.path.join(out, "pcap", f)
    check_no_malformed(path)
    _, frames = read_pcap(path)
    types = {struct.unpack(">H", fr[12:14])[0] for _, fr in frames}
    check(types <= {0x8915, 0x86DD}, f"{f}: only RoCE v1 and neighbour discovery ({types})")

# ---- two domains and a router.
example = os.path.join(SOURCE, "examples/roce_v1_two_domains.yaml")
refused = os.path.join(tmp, "refused")
rc, _, err, res = run(example, refused, expect=2)
check(rc == 2, "a cross-domain roce_v1 workload is refused with exit 2")
check("roce_v1_two_domains.yaml:" in err and "workloads[2]" in err and "a and d" in err
      and "different broadcast domains" in err, f"the error names the file, the workload and the hosts: {err!r}")
check(not os.path.exists(refused), "nothing written for a refused experiment")

out = os.path.join(tmp, "in-domain")
_, _, _, res = run(example, out, "--set", "workloads.2.to=b")
all_ok(res, "in-domain")
# The router takes flooded neighbour solicitations off the bridges and
# forwards nothing: RoCE v1 is not IP.
check(port(res, "r1", 0)["tx_frames"] == 0 and port(res, "r1", 1)["tx_frames"] == 0, "r1 forwards nothing")
check(port(res, "r1", 0)["rx_frames"] > 0 and port(res, "r1", 1)["rx_frames"] > 0, "r1 sees the floods")
pdir = os.path.join(out, "pcap")
left = {"fe80::ff:fe00:1", "fe80::ff:fe00:2"}
right = {"fe80::ff:fe00:3", "fe80::ff:fe00:4"}
for f, domain in (("a-0.pcap", left), ("b-0.pcap", left), ("c-0.pcap", right), ("d-0.pcap", right)):
    rows = tshark_fields(os.path.join(pdir, f), ["infiniband.grh.sgid", "infiniband.grh.dgid"], "infiniband.grh")
    gids = {g for r in rows for g in r}
    check(rows and gids <= domain, f"{f}: only its own domain's GIDs ({gids})")

# RoCE v2 routes what RoCE v1 cannot.
out = os.path.join(tmp, "v2")
_, _, _, res = run(example, out, "--fabric", "roce_v2")
all_ok(res, "roce_v2 across the router")

finish()
