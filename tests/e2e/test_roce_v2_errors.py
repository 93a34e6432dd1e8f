"""Failed operations complete with the statuses real verbs give, and the
capture shows the NAKs that caused them."""
import os

from e2e import OP, bth_records, check, check_roce_v2_capture, finish, run, tmpdir, workload

BASE = """
fabric: roce_v2
seed: 3
link: {bandwidth: 100Gbps, delay: 1us}
topology:
  hosts: [a, b]
  switches: [s1]
  links: [[a, s1], [b, s1]]
"""

# A wrong rkey: the first WRITE gets IBV_WC_REM_ACCESS_ERR, the QP goes to the
# error state and the other posted WRs are flushed.
out = os.path.join(tmpdir(), "badrkey")
_, _, _, res = run("name: badrkey" + BASE + """
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 4KiB, count: 5, outstanding: 3, bad_rkey: true}
""", out)
w = workload(res, "w")
check(w["completions"].get("IBV_WC_REM_ACCESS_ERR") == 1, f"bad rkey: one REM_ACCESS_ERR ({w['completions']})")
check(w["completions"].get("IBV_WC_WR_FLUSH_ERR") == 2, "bad rkey: the other two posted WRs are flushed")
check(w["ops"] == 0 and not w["data_verified"], "bad rkey: nothing succeeded")
b = os.path.join(out, "pcap", "b-0.pcap")
check_roce_v2_capture(b)
check(any(r[5] == 0x62 for r in bth_records(b, "infiniband.aeth")), "a NAK remote access error (0x62) in the capture")

# SEND with no receive posted and rnr_retry exhausted: IBV_WC_RNR_RETRY_EXC_ERR.
out = os.path.join(tmpdir(), "rnr")
_, _, _, res = run("name: rnr" + BASE + """
workloads:
  - {name: s, kind: send, from: a, to: b, size: 1KiB, count: 2, post_recvs: false, rnr_retry: 2, min_rnr_timer: 1}
""", out)
w = workload(res, "s")
check(w["completions"].get("IBV_WC_RNR_RETRY_EXC_ERR") == 1, f"rnr: RNR_RETRY_EXC_ERR ({w['completions']})")
b = os.path.join(out, "pcap", "b-0.pcap")
check_roce_v2_capture(b)
rnr = [r for r in bth_records(b, "infiniband.aeth") if r[5] is not None and (r[5] & 0x60) == 0x20]
check(len(rnr) == 3, f"rnr: the first try and 2 retries each get an RNR NAK (saw {len(rnr)})")
sends = [r for r in bth_records(os.path.join(out, "pcap", "a-0.pcap"), "ip.src == 10.0.0.1")
         if r[1] == OP["SEND_ONLY"]]
check(len(sends) == 3 and len({r[3] for r in sends}) == 1, "rnr: the same SEND (same PSN) is tried 3 times")

# A link cut mid-stream: IBV_WC_RETRY_EXC_ERR once retry_cnt is spent, and
# the rest of the send queue flushes with IBV_WC_WR_FLUSH_ERR.
out = os.path.join(tmpdir(), "cut")
_, _, _, res = run("name: cut" + BASE + """
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 64KiB, count: 50, outstanding: 4, timeout: 4, retry_cnt: 2}
faults:
  - {at: 30us, link: [b, s1], action: down}
""", out)
w = workload(res, "w")
c = w["completions"]
check(c.get("IBV_WC_RETRY_EXC_ERR") == 1, f"cut: one RETRY_EXC_ERR ({c})")
check(c.get("IBV_WC_WR_FLUSH_ERR", 0) >= 1, "cut: the rest of the queue is flushed")
check(c.get("IBV_WC_SUCCESS", 0) == w["ops"] and w["ops"] + c.get("IBV_WC_RETRY_EXC_ERR", 0) +
      c.get("IBV_WC_WR_FLUSH_ERR", 0) <= 50, "cut: completions add up")
a = os.path.join(out, "pcap", "a-0.pcap")
check_roce_v2_capture(a)
finish()
