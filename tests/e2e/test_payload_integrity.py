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

# Zero-length messages (IBA allows a zero-byte RDMA WRITE, READ and SEND; IBA 9.4.1.1, 9.4.3) carry no bytes, so
# nothing can land wrong: every fabric verifies them. The one-sided kinds used to report a mismatch, as the receiver's
# buffer had never been written.
ZERO = """
name: zero
fabric: {fabric}
topology: {{hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}}
capture: {{pcap: none}}
workloads:
  - {{name: w, kind: rdma_write, from: a, to: b, size: 0, count: 4, outstanding: 2}}
{imm}  - {{name: r, kind: rdma_read, from: a, to: b, size: 0, count: 4, start: 1ms}}
  - {{name: s, kind: send, from: a, to: b, size: 0, count: 4, start: 2ms}}
  - {{name: wb, kind: write_bw, from: a, to: b, size: 0, count: 4, start: 3ms}}
  - {{name: rl, kind: read_lat, from: a, to: b, size: 0, count: 4, start: 4ms}}
"""
for fabric in ("ib", "roce_v2", "iwarp"):
    # iWARP has no WRITE with immediate data (RFC 5040).
    imm = "" if fabric == "iwarp" else "  - {name: i, kind: rdma_write_imm, from: a, to: b, size: 0, count: 4}\n"
    rc, _, stderr, res = run(ZERO.format(fabric=fabric, imm=imm), os.path.join(d, f"zero_{fabric}"))
    if not check(rc == 0 and res is not None, f"{fabric}: zero-length messages run ({stderr.strip()})"):
        continue
    for w in res["workloads"]:
        check(w["finished"] and w["ops"] == 4 and w["data_verified"] and not w["data_mismatch"],
              f"{fabric} {w['name']}: four zero-length messages, verified ({w['data_verified']}, {w['data_mismatch']})")
e2e.finish()
