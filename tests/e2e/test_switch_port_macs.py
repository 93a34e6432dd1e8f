"""Switch port MACs stay unique past port 255. Port p of switch n was
02:00:01:nn:nn:pp, n's base plus p, so a leaf with 300 hosts gave its port
256 the address of the next leaf's port 0: h256's gateway and h300's had one
MAC. Two leaves of 300 hosts, on roce_v2 (L3 switches) and roce_v1 (L2
bridges, their MACs the PFC frames' source): every switch port a host sees
has its own address, and the first 256 keep theirs (tests/e2e/digests.json
holds the examples' captures byte for byte)."""
import os

import e2e
from e2e import check

HOSTS_PER_LEAF = 300


def experiment(fabric):
    # leaf0 is node 600 and leaf1 node 601: leaf0's port 256 (to h256) used
    # to be leaf1's port 0 (to h300). Each incast's leaf pauses its senders
    # (PFC frames from the port's MAC); on roce_v2 the port is also the
    # senders' gateway.
    return f"""\
name: wide_{fabric}
fabric: {fabric}
flow_control: pfc
pfc: {{xoff: 8KiB, xon: 4KiB}}
link: {{buffer: 64KiB}}
topology: {{generate: {{kind: leaf_spine, spines: 1, leaves: 2, hosts_per_leaf: {HOSTS_PER_LEAF}}}}}
workloads:
  - {{kind: incast, from: [h256, h257, h258], to: h255, size: 64KiB, count: 4}}
  - {{kind: incast, from: [h300, h301, h302], to: h303, size: 64KiB, count: 4}}
capture: {{pcap: [h255, h256, h300]}}
"""


def macs_seen(path, field):
    return {row[0] for row in e2e.tshark_fields(path, [field]) if row and row[0]}


def main():
    tmp = e2e.tmpdir()
    for fabric in ("roce_v2", "roce_v1"):
        out = os.path.join(tmp, fabric)
        _rc, _o, _e, res = e2e.run(experiment(fabric), out)
        if not check(res is not None, f"{fabric}: results.json"):
            continue
        check(all(w["finished"] and w["data_verified"] for w in res["workloads"]), f"{fabric}: every workload verified")
        e2e.check_captures(out, fabric, pfc=True)
        pcap = os.path.join(out, "pcap")
        # The switch's address as each host sees it: the source of what it
        # receives that no host sent.
        switch_side = {}
        for host in ("h255", "h256", "h300"):
            seen = macs_seen(os.path.join(pcap, f"{host}-0.pcap"), "eth.src")
            switch_side[host] = {m for m in seen if not m.startswith("02:00:00:")}
        check(switch_side["h256"] and switch_side["h300"], f"{fabric}: switch addresses seen: {switch_side}")
        check(not switch_side["h256"] & switch_side["h300"],
              f"{fabric}: leaf0's port 256 and leaf1's port 0 have different MACs: {switch_side}")
        check(all(m.startswith("02:00:01:") for h in ("h255", "h300") for m in switch_side[h]),
              f"{fabric}: ports below 256 keep 02:00:01:nn:nn:pp: {switch_side}")
        check(all(m.startswith("02:8") for m in switch_side["h256"]), f"{fabric}: port 256 is 02:8n:...: {switch_side}")
    e2e.finish()


if __name__ == "__main__":
    main()
