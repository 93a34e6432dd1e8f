"""The drops a run's summary prints count every place a frame or datagram
is lost, named, and add up to results.json's counters: a UDP flood into a
kernel host loses datagrams in the host (NIC ring, socket buffer), not on
the wire, and once said "drops 0"; a lossy link loses frames on the wire,
an incast into a small buffer at the switch's queue."""

import json
import os
import re

import e2e
from e2e import check, rdmasim, write_text

FLOOD = """
name: flood
fabric: tcp
link: {bandwidth: 10Gbps, delay: 1us, mtu: 1500}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
host: {completion: interrupt}
workloads:
  - {name: flood, kind: udp, from: a, to: b, size: 64, rate: 2Gbps, duration: 300us}
capture: {pcap: none}
"""
LOSSY = """
name: lossy
fabric: roce_v2
link: {bandwidth: 100Gbps, delay: 1us, buffer: 24KiB, loss: 0.01}
topology: {hosts: [a, b, c], switches: [s], links: [[a, s], [b, s], [c, s]]}
workloads:
  - {name: in, kind: incast, from: [a, b], to: c, size: 16KiB, count: 30, outstanding: 8}
capture: {pcap: none}
"""
PLACES = {"link": "links", "switch_queue": "switch queues", "nic_queue": "host NIC queues", "nic_ring": "NIC ring",
          "backlog": "backlog", "socket": "socket buffers", "no_socket": "no socket"}


def summary_drops(stdout):
    m = re.search(r"drops ([\d,]+)(?: \((.*)\))?\n", stdout)
    if not m:
        return None, {}
    at = {}
    for part in (m.group(2) or "").split(", "):
        if part:
            name, n = part.rsplit(" ", 1)
            at[name] = int(n.replace(",", ""))
    return int(m.group(1).replace(",", "")), at


d = e2e.tmpdir()

# A UDP flood: most datagrams lost in the receiving host.
out = os.path.join(d, "flood")
p = rdmasim("run", write_text(os.path.join(d, "flood.yaml"), FLOOD), "--out", out)
check(p.returncode == 0, f"flood: exit {p.returncode}: {p.stderr}")
with open(os.path.join(out, "results.json")) as f:
    r = json.load(f)
dg = r["workloads"][0]["datagrams"]
total, at = summary_drops(p.stdout)
ports = sum(x["drops"] for x in r["ports"])
check(dg["dropped"] > dg["offered"] / 2, f"the flood overloads the host: {dg}")
check(total == dg["dropped"] + ports == r["drops"]["total"],
      f"summary drops {total} = datagrams dropped {dg['dropped']} + port drops {ports}: {p.stdout}")
check(at.get("NIC ring", 0) == dg["dropped_at"]["ring"] and at.get("socket buffers", 0) == dg["dropped_at"]["socket"]
      and at.get("backlog", 0) == dg["dropped_at"]["backlog"], f"the places named as results.json counts them: {at}")
check(sum(at.values()) == total, "the places add up to the total")
check("n/a" in p.stdout and "NO" not in p.stdout, "the UDP row's data check is n/a, not NO")

# A lossy link and a small buffer: frames lost on the wire and at the switch.
out = os.path.join(d, "lossy")
p = rdmasim("run", write_text(os.path.join(d, "lossy.yaml"), LOSSY), "--out", out)
check(p.returncode == 0, f"lossy: exit {p.returncode}: {p.stderr}")
with open(os.path.join(out, "results.json")) as f:
    r = json.load(f)
total, at = summary_drops(p.stdout)
hosts = {h["name"] for h in r["hosts"]}
link = sum(x["link_drops"] for x in r["ports"])
queue = sum(x["drops"] - x["link_drops"] for x in r["ports"] if x["node"] not in hosts)
check(link > 0 and queue > 0, f"frames lost on links ({link}) and at the switch's queue ({queue})")
check(at.get("links") == link and at.get("switch queues") == queue, f"named: {at}")
check(total == sum(x["drops"] for x in r["ports"]) == r["drops"]["total"], f"the total is every port's: {total}")
for key, n in r["drops"]["at"].items():
    check(at.get(PLACES[key], 0) == n, f"{key}: summary {at.get(PLACES[key], 0)}, results.json {n}")

e2e.finish()
