"""At a 1% frame loss rate every RC operation still completes successfully,
the capture shows the retransmissions, and the receiver's memory holds
exactly the bytes sent."""
import os

from e2e import LOSSY_RC, OP, bth_records, check, check_roce_v2_capture, finish, run, tmpdir

YAML = LOSSY_RC + "  - {name: fadd, kind: atomic_fadd, from: a, to: b, count: 50, outstanding: 4, timeout: 8}\n"

out = os.path.join(tmpdir(), "lossy")
_, _, _, res = run(YAML, out)
for w in res["workloads"]:
    check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["ops"] == {"write": 40, "send": 40, "read": 20,
                                                                              "fadd": 50}[w["name"]],
          f"{w['name']}: all operations completed successfully under loss ({w['completions']})")
    check(w["data_verified"], f"{w['name']}: receiver memory holds exactly the bytes sent")
drops = sum(p["drops"] for p in res["ports"])
check(drops > 0, "frames were lost on the wire")

a = os.path.join(out, "pcap", "a-0.pcap")
b = os.path.join(out, "pcap", "b-0.pcap")
check_roce_v2_capture(a)
check_roce_v2_capture(b)

# Retransmissions: a request PSN that a sends more than once on the same QP.
seen, repeats = set(), 0
for r in bth_records(a, "infiniband.bth && ip.src == 10.0.0.1"):
    if r[1] in (OP["ACK"],):
        continue
    key = (r[2], r[3])
    repeats += key in seen
    seen.add(key)
check(repeats > 0, "the sender's capture shows retransmitted PSNs")
# NAK (PSN sequence error, syndrome 0x60 = 96) from the responder.
naks = [r for r in bth_records(b, "infiniband.aeth && ip.src == 10.0.0.2") if r[5] == 0x60]
check(len(naks) > 0, "the responder sent PSN sequence error NAKs")
finish()
