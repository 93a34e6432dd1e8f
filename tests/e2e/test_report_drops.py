"""The drops a run's summary prints count every place a frame or datagram
is lost, named, and add up to results.json's counters: a UDP flood into a
kernel host loses datagrams in the host (NIC ring, socket buffer), not on
the wire, and once said "drops 0"; a lossy link loses frames on the wire,
an incast into a small buffer at the switch's queue. A routed switch
discards what it cannot forward: a frame whose TTL runs out on a path of
more than 63 switches, a SYN to an address no host has; both once went
uncounted ("drops 0"). What a router is sent to a group address (the
neighbour solicitations of the L2 domains it joins) it does not route, and
does not lose either."""

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
PLACES = {"link": "links", "switch_queue": "switch queues", "no_route": "no route", "ttl_expired": "TTL expired", "nic_queue": "host NIC queues", "nic_ring": "NIC ring",
          "backlog": "backlog", "socket": "socket buffers", "no_socket": "no socket"}

# A chain of 64 L3 switches: a frame leaves a with TTL 64 and reaches the
# 64th switch with TTL 1, which it may not forward (RFC 1812 5.3.1). UD
# SENDs complete at the sender whatever becomes of them.
CHAIN = [f"s{i}" for i in range(64)]
LONG_PATH = f"""
name: long_path
fabric: roce_v2
topology:
  hosts: [a, b]
  switches: [{", ".join(CHAIN)}]
  links: [[a, s0], {", ".join(f"[{x}, {y}]" for x, y in zip(CHAIN, CHAIN[1:]))}, [s63, b]]
workloads:
  - {{name: far, kind: send, from: a, to: b, qp: ud, size: 64, count: 3}}
capture: {{pcap: none}}
"""
# A real program connecting to an address no host has: the switch has no
# route for its SYNs (and sends no ICMP), so it tries until `stop`.
NOWHERE = """
name: nowhere
fabric: roce_v2
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
programs:
  - {host: a, run: "ibv_rc_pingpong -g 0 -p 18611 10.9.9.9"}
stop: 2ms
capture: {pcap: none}
"""


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


def switch_discards(name, yaml_text, expect_rc):
    """Runs YAML_TEXT; returns (summary total, summary places, results.json)."""
    out = os.path.join(d, name)
    p = rdmasim("run", write_text(os.path.join(d, name + ".yaml"), yaml_text), "--out", out)
    check(p.returncode == expect_rc, f"{name}: exit {p.returncode}: {p.stderr}")
    with open(os.path.join(out, "results.json")) as f:
        r = json.load(f)
    total, at = summary_drops(p.stdout)
    check(total == r["drops"]["total"] == sum(at.values()), f"{name}: the places add up to the total: {p.stdout}")
    for key, n in r["drops"]["at"].items():
        check(at.get(PLACES[key], 0) == n, f"{name} {key}: summary {at.get(PLACES[key], 0)}, results.json {n}")
    return total, at, r


# TTL expired at the 64th switch: b receives nothing, the summary says where the SENDs went.
total, at, r = switch_discards("long_path", LONG_PATH, 0)
check(at == {"TTL expired": 3} and total == 3, f"the three SENDs' frames expired: {at}")
check([(s["node"], s["ttl_expired"]) for s in r["switches"] if s["ttl_expired"]] == [("s63", 3)],
      f"at the 64th switch: {r['switches']}")
check(r["workloads"][0]["completions"] == {"IBV_WC_SUCCESS": 3}, f"UD completes at the sender: {r['workloads'][0]}")
check(next(x["rx_frames"] for x in r["ports"] if x["node"] == "b") == 0, "b receives nothing")

# No route: the program's SYN and its retries end at the switch; the program is killed at `stop` (exit 4).
total, at, r = switch_discards("nowhere", NOWHERE, 4)
s = next(x for x in r["switches"] if x["node"] == "s")
check(total > 0 and at == {"no route": total} and s["no_route"] == total, f"every SYN had no route: {at}, {s}")
check(s["no_route"] == next(x["rx_frames"] for x in r["ports"] if x["node"] == "s" and x["port"] == 0),
      "everything a sent the switch")


# A healthy run through a router: the hosts' neighbour solicitations reach it and are no drops.
total, at, r = switch_discards("domains", open(os.path.join(e2e.SOURCE, "examples", "roce_v1_two_domains.yaml")).read()
                               .replace("from: a, to: d", "from: a, to: b"), 0)
check(total == 0 and at == {}, f"a healthy run loses nothing: {at}")
check(any(s["node"] == "r1" for s in r["switches"]), f"the router is listed: {r['switches']}")
e2e.finish()
