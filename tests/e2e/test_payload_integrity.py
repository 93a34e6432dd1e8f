"""Every message carries its own bytes: two messages through the same buffer
slot differ (the pattern names the message), so a lost or repeated message
cannot hide behind an identical later one, and each placement is checked."""

import os

import e2e
from e2e import check, check_roce_v2_capture, read_pcap, run

d = e2e.tmpdir()
out = os.path.join(d, "slots")
_, _, _, res = run("""
name: slots
fabric: roce_v2
topology: {hosts: [a, b], links: [[a, b]]}
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 64, count: 6, outstanding: 2}
  - {name: s, kind: send, from: a, to: b, size: 64, count: 6, outstanding: 2, start: 1ms}
  - {name: r, kind: rdma_read, from: a, to: b, size: 64, count: 6, outstanding: 2, start: 2ms}
""", out)
for w in res["workloads"]:
    check(w["data_verified"] and not w["data_mismatch"], f"{w['name']}: every placement checked and right")
pcap = os.path.join(out, "pcap", "a-0.pcap")
check_roce_v2_capture(pcap)
_, frames = read_pcap(pcap)
for name in ("w", "s", "r"):
    tag = name.encode().ljust(8)
    seen = [k for k in range(6) for _, f in frames if tag + b" m%08d @00000000000\n" % k in f]
    # Six messages through two slots: each on the wire once, with its own number.
    check(seen == list(range(6)), f"{name}: messages 0..5 each carry their own bytes: {seen}")
e2e.finish()
