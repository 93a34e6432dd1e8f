"""Byte streams make a computed payload's bytes only as they send them.

iWARP sends a computed payload (`payload: pattern`, the default of
WRITEs and of flows) from the message's region as it builds each FPDU
(fabrics/iwarp/iwarp_qp.cpp, message_bytes): the bytes are made a segment
at a time in TCP's send buffer, which holds at most 1 MiB a connection.
They were gathered whole into the work request when it was handed to the
stream, so four 64 MiB WRITEs in flight took 256 MiB. The receiver still
checks every byte against the pattern (data_verified), and the bytes on
the wire are the same (test_digests).

A socket flow (fabric: tcp) sends from the pattern too, the bytes made as
the socket's send buffer takes them (StreamSocket::send of a computed
Payload), and its reader reads into a buffer of twice SO_RCVBUF, not of
the message's size (workloads/socket_flow.cpp): each end held a buffer of
the whole message, zeroed, so web-search flows of up to 30 MB took 377 MiB
on a k = 4 fat tree.

A connection whose records are all acknowledged gives its send buffer's
ring back (fabrics/ip/tcp/record_queue.hpp), and a socket read empty its
receive queue: a finished flow's connection stays open until the run ends,
and each kept up to a megabyte, so two hosts' 96 web-search flows took
52 MiB on iwarp and 46 MiB on tcp (about 24 and 30 MiB now)."""
import json
import os

import e2e
from e2e import check, finish, tmpdir

WRITES = e2e.two_hosts("iwarp_big_writes", "{kind: rdma_write, from: a, to: b, size: 64MiB, count: 4, outstanding: 4}",
                       fabric="iwarp", tail="capture: {pcap: none}\n")
FLOWS = """\
name: iwarp_flows
fabric: iwarp
seed: 1
stop: 1ms
link: {bandwidth: 100Gbps, delay: 1us, mtu: 9000}
topology: {generate: {kind: fat_tree, k: 4}}
workloads: [{kind: flows, cdf: websearch, load: 0.5, duration: 1ms}]
capture: {pcap: none}
"""

SOCKET_FLOWS = FLOWS.replace("fabric: iwarp", "fabric: tcp").replace("mtu: 9000", "mtu: 1500").replace(
    "duration: 1ms}", "duration: 1ms, op: send}")

SEQUENTIAL = """\
name: sequential_flows
fabric: iwarp
seed: 1
stop: 20ms
topology: {hosts: [a, b], links: [[a, b]]}
workloads: [{kind: flows, hosts: [a, b], cdf: websearch, load: 0.3, duration: 20ms}]
capture: {pcap: none}
"""
SOCKET_SEQUENTIAL = SEQUENTIAL.replace("fabric: iwarp", "fabric: tcp").replace("duration: 20ms}", "duration: 20ms, op: send}")

tmp = tmpdir()
for name, text, bound in (("writes", WRITES, 100), ("flows", FLOWS, 120), ("socket_flows", SOCKET_FLOWS, 120),
                          ("sequential", SEQUENTIAL, 40), ("socket_sequential", SOCKET_SEQUENTIAL, 40)):
    path = os.path.join(tmp, name + ".yaml")
    e2e.write_text(path, text)
    out = os.path.join(tmp, name)
    code, peak = e2e.peak_rss_mib("run", path, "--out", out, "--quiet")
    check(code == 0, f"{name}: exit {code}")
    res = json.load(open(os.path.join(out, "results.json")))
    check(all(w["data_verified"] for w in res["workloads"]), f"{name}: data verified")
    if name == "writes":
        w = res["workloads"][0]
        check(w["ops"] == 4 and w["completions"] == {"IBV_WC_SUCCESS": 4}, f"writes: 4 completed, got {w}")
    # Peak RSS bounds are not checked on a sanitized build (its shadow memory).
    check(e2e.SANITIZED or peak < bound, f"{name}: peak RSS {peak:.0f} MiB, expected under {bound} MiB")
    print(f"{name}: peak RSS {peak:.1f} MiB")
finish()
