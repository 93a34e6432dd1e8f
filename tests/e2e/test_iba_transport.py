"""The IBA transport's recovery and corner cases as a capture shows them (RoCE
v2): one retry per lost READ response, the RNR timer of IBA table 45,
zero-length operations and AckReq within long messages."""
import os

from e2e import OP, bth_records, check, check_roce_v2_capture, finish, read_pcap, run, tmpdir, workload

BASE = """
fabric: roce_v2
seed: {seed}
link: {{bandwidth: 100Gbps, delay: 1us, mtu: 1024{loss}}}
topology:
  hosts: [a, b]
  links: [[a, b]]
"""


def base(seed=3, loss=""):
    return BASE.format(seed=seed, loss=loss)


# READs over a lossy link: a lost response starts one retry of the rest of
# that READ (and of the READs behind it), never a request per response.
for seed in (3, 11):
    out = os.path.join(tmpdir(), f"read{seed}")
    _, _, _, res = run(f"name: read{seed}" + base(seed, ", loss: 0.02") + """
workloads:
  - {name: r, kind: rdma_read, from: a, to: b, size: 16KiB, count: 30, outstanding: 4, timeout: 4}
""", out)
    w = workload(res, "r")
    check(w["completions"] == {"IBV_WC_SUCCESS": 30} and w["data_verified"],
          f"read seed {seed}: all 30 READs succeed ({w['completions']})")
    a, b = (os.path.join(out, "pcap", f"{h}-0.pcap") for h in "ab")
    check_roce_v2_capture(a)
    requests = [r for r in bth_records(a, "ip.src == 10.0.0.1") if r[1] == OP["READ_REQUEST"]]
    responses = [r for r in bth_records(b, "ip.src == 10.0.0.2")
                 if OP["READ_RESPONSE_FIRST"] <= r[1] <= OP["READ_RESPONSE_ONLY"]]
    # 30 requests and 480 responses without loss; each loss costs a request
    # and the responses from the gap on, once.
    check(30 < len(requests) < 90, f"read seed {seed}: {len(requests)} READ requests")
    check(480 < len(responses) < 960, f"read seed {seed}: {len(responses)} READ responses")
    check(all(r[4] for r in requests), f"read seed {seed}: every READ request asks for an ACK (A=1)")

# An RNR NAK asks for min_rnr_timer 12 = 0.64 ms (IBA table 45): the SEND is
# tried again that long after the NAK, not 1000 times sooner.
out = os.path.join(tmpdir(), "rnr")
_, _, _, res = run("name: rnr" + base() + """
workloads:
  - {name: s, kind: send, from: a, to: b, size: 1KiB, count: 1, post_recvs: false, rnr_retry: 1, min_rnr_timer: 12}
""", out)
check(workload(res, "s")["completions"] == {"IBV_WC_RNR_RETRY_EXC_ERR": 1}, "rnr: RNR_RETRY_EXC_ERR")
a = os.path.join(out, "pcap", "a-0.pcap")
check_roce_v2_capture(a)
_, frames = read_pcap(a)
recs = bth_records(a)
sends = [frames[r[0] - 1][0] for r in recs if r[1] == OP["SEND_ONLY"]]
naks = [frames[r[0] - 1][0] for r in recs if r[1] == OP["ACK"] and r[5] is not None and (r[5] & 0x60) == 0x20]
check(len(sends) == 2 and len(naks) == 2, f"rnr: two tries, two RNR NAKs ({len(sends)}, {len(naks)})")
if len(sends) == 2 and naks:
    gap = sends[1] - naks[0]
    check(640_000 <= gap < 700_000, f"rnr: the retry leaves {gap} ns after the NAK, expected 0.64 ms")

# Zero-length SEND, WRITE, WRITE with immediate and READ are legal verbs.
out = os.path.join(tmpdir(), "zero")
_, _, _, res = run("name: zero" + base() + """
workloads:
  - {name: s, kind: send, from: a, to: b, size: 0, count: 2}
  - {name: w, kind: rdma_write, from: a, to: b, size: 0, count: 2}
  - {name: i, kind: rdma_write_imm, from: a, to: b, size: 0, count: 2, bad_rkey: true}
  - {name: r, kind: rdma_read, from: a, to: b, size: 0, count: 2, bad_rkey: true}
  - {name: big, kind: rdma_write, from: a, to: b, size: 256KiB, count: 1, start: 50us}
""", out)
for name in ("s", "w", "i", "r"):
    w = workload(res, name)
    check(w["completions"] == {"IBV_WC_SUCCESS": 2}, f"zero {name}: both succeed ({w['completions']})")
a = os.path.join(out, "pcap", "a-0.pcap")
check_roce_v2_capture(a)
ops = {r[1] for r in bth_records(a, "ip.src == 10.0.0.1")}
check({OP["SEND_ONLY"], OP["WRITE_ONLY"], OP["WRITE_ONLY_IMM"], OP["READ_REQUEST"]} <= ops,
      "zero: each operation is one request packet")
# AckReq within a long message, every 65 packets as rxe sets it, so a loss
# near its end is resent from the last ACK.
multi = [r for r in bth_records(a, "ip.src == 10.0.0.1")
         if r[1] in (OP["WRITE_FIRST"], OP["WRITE_MIDDLE"], OP["WRITE_LAST"])]
check(len(multi) == 256 and [i for i, r in enumerate(multi) if r[4]] == [65, 131, 197, 255],
      "big: AckReq on WRITE packets 66, 132, 198 and the last")
finish()
