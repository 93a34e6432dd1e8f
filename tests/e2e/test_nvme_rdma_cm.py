"""NVMe over Fabrics never stalls silently on a lost CM MAD (docs/storage.md,
docs/reliability.md). The RDMA CM sends a lost REQ again, byte for byte with
the same transaction ID, 2 x PacketLifeTime + the CM response timeout later
(4.608 s, ib_cm's timer), and the queues connect and the I/O runs; a lost
REP goes again on the passive side's timer (4.096 s); with the RTU lost, the
host's first capsule establishes the target's queue at once (communication
established). A REQ lost for longer than its 15 retries fails the workload
with an error naming the queue, in results.json and on the command line:
exit 4, unless the experiment asked for failures with faults. The captures
stay clean in Wireshark."""

import os

import e2e
from e2e import check, check_no_malformed, check_roce_v2_capture, run
from nvme_e2e import BASE, gui_tshark

d = e2e.tmpdir()

JOB = """
capture: {pcap: hosts}
workloads:
  - {name: r, kind: nvme, initiator: h, target: t, rw: randread, bs: 4KiB, iodepth: 4, size: 256KiB}
"""


def down(link, at, until):
    return f"faults:\n  - {{at: {at}, link: [{link}, s], action: down}}\n  - {{at: {until}, link: [{link}, s], action: up}}\n"


def mads(path, attribute):
    """(time s, transaction ID, the MAD's 256 bytes in hex) of every CM MAD of `attribute` in the capture."""
    rows = gui_tshark(path, "-Y", f"infiniband.mad.attributeid == {attribute}", "-T", "fields", "-e",
                      "frame.time_epoch", "-e", "infiniband.mad.transactionid", "-e", "infiniband.mad").splitlines()
    return [(float(r.split("\t")[0]), r.split("\t")[1], r.split("\t")[2]) for r in rows if r]


def clean(path, what):
    check_no_malformed(path)
    bad = gui_tshark(path, "-Y", "_ws.malformed || _ws.short || _ws.expert.severity >= 8388608")
    check(bad.strip() == "", f"{what}: malformed or error-level frames as the GUI reads it:\n{bad[:1500]}")


def finished_with_io(res, what):
    w = res["workloads"][0]
    check(w["finished"] and w["data_verified"] and w["errors"] == 0 and w["ops"] == 64 and "error" not in w,
          f"{what}: the job connects and runs: {({k: w.get(k) for k in ('finished', 'ops', 'error')})}")


REQ, REP, RTU = "0x0010", "0x0013", "0x0014"

# ---- the REQ lost (the host's link down as it connects): sent again, the same MAD, 4.608 s later
for fabric in ("ib", "roce_v2"):
    out = os.path.join(d, "req_" + fabric)
    _, _, _, res = run(f"name: req_{fabric}\nfabric: {fabric}" + BASE + JOB + down("h", "0us", "5us"), out)
    if not res:
        continue
    finished_with_io(res, f"{fabric}: REQ lost")
    path = os.path.join(out, "pcap", "h-0.pcap")
    reqs = mads(path, REQ)
    # The admin queue's REQ twice (lost, then sent again), then the I/O queue's.
    check(len(reqs) == 3 and reqs[0][1] == reqs[1][1] != reqs[2][1],
          f"{fabric}: the admin queue's REQ sent twice with one transaction ID: {[r[:2] for r in reqs]}")
    if len(reqs) == 3:
        check(reqs[0][2] == reqs[1][2], f"{fabric}: the REQ sent again is the same 256 bytes")
        check(abs(reqs[1][0] - reqs[0][0] - 4.608) < 1e-6,
              f"{fabric}: sent again 2 x 256 ms + 4096 ms later: {reqs[1][0] - reqs[0][0]:.9f} s")
    check(len(mads(path, REP)) == 2 and len(mads(path, RTU)) == 2, f"{fabric}: one REP and RTU a queue")
    if fabric == "roce_v2":
        check_roce_v2_capture(path)
    clean(path, f"{fabric}: REQ lost")

# ---- the REP lost (the target's link down as it answers): the target sends it again 4.096 s later
out = os.path.join(d, "rep")
_, _, _, res = run("name: rep\nfabric: ib" + BASE + JOB + down("t", "8us", "14us"), out)
if res:
    finished_with_io(res, "REP lost")
    path = os.path.join(out, "pcap", "t-0.pcap")
    reps = mads(path, REP)
    check(len(reps) == 3 and reps[0][1:] == reps[1][1:],
          f"REP lost: the admin queue's REP sent again, the same MAD: {[r[:2] for r in reps]}")
    if len(reps) == 3:
        check(abs(reps[1][0] - reps[0][0] - 4.096) < 1e-6, f"REP sent again 4096 ms later: {reps[1][0] - reps[0][0]}")
    check(len(mads(path, REQ)) == 2, "REP lost: each queue's REQ came once (the REP's timer is the shorter)")
    clean(path, "REP lost")

# ---- the RTU lost (the switch's link to the target down as it crosses, not the
# capsule 1 us behind it): the capsule arriving on the QP establishes the queue
out = os.path.join(d, "rtu")
_, _, _, res = run("name: rtu\nfabric: ib" + BASE + JOB + down("t", "24300ns", "24400ns"), out)
if res:
    finished_with_io(res, "RTU lost")
    path = os.path.join(out, "pcap", "t-0.pcap")
    check(len(mads(path, RTU)) == 1, "RTU lost: the window takes the admin queue's RTU (the I/O queue's arrives)")
    check(len(mads(path, REP)) == 2, "RTU lost: no REP sent again")
    check(res["end_time_ps"] < 10**10, f"RTU lost: no 4 s wait for a REP's resend: ends at {res['end_time_ps']} ps")
    clean(path, "RTU lost")

# ---- the REQ lost longer than all its retries: the workload fails, saying why
why = "queue 0 (admin): rdma connection establishment failed (-104): CM REQ timed out after 15 retries"
out = os.path.join(d, "gone")
_, stdout, _, res = run("name: gone\nfabric: roce_v2" + BASE + JOB + down("h", "0us", "100s"), out)
if res:
    w = res["workloads"][0]
    check(why in w.get("error", ""), f"faults: results.json's error names the queue and the retries: {w.get('error')}")
    check(w["finished"] and w["ops"] == 0, f"faults: the job ended without I/O: {w['finished']}, {w['ops']}")
    check(f"failed: r: {why}" in stdout, f"faults: the summary says why: {stdout}")
    reqs = mads(os.path.join(out, "pcap", "h-0.pcap"), REQ)
    check(len(reqs) == 16 and len({r[1] for r in reqs}) == 1 and len({r[2] for r in reqs}) == 1,
          f"faults: the REQ sent 16 times, the same MAD: {len(reqs)}")
    # Unreachable after 16 waits of 4.608 s; the run ends 1 ms later (the link's fault is still due).
    check(res["end_time_ps"] == 16 * 4608 * 10**9 + 10**9, f"faults: unreachable after 16 waits: {res['end_time_ps']} ps")

# Every frame lost, no faults: a failure the experiment did not ask for, exit 4.
out = os.path.join(d, "lossy")
code, _, err, res = run("name: lossy\nfabric: ib" + BASE.replace("delay: 1us}", "delay: 1us, loss: 1.0}") + JOB,
                        out, expect=4)
check(f"error: workload r: {why}" in err, f"loss: the error on stderr names the queue: {err.strip()}")
if res:
    check(why in res["workloads"][0].get("error", ""), "loss: results.json's error")

# A queue whose RC connection fails once the CM connected it (a link losing 45 % of its frames: the admin queue's
# Property Get goes unanswered until its retries are exhausted) fails the job saying which queue and why, and the
# run exits 4; it used to end with no error and exit 0, the summary saying only MISMATCH.
LOSSY = """name: lossy45
fabric: roce_v2
seed: 1
link: {bandwidth: 100Gbps, delay: 1us, mtu: 4096, loss: 0.45}
topology: {hosts: [initiator, target], switches: [s1], links: [[initiator, s1], [target, s1]]}
storage:
  targets:
    - {host: target, namespaces: [{nsid: 1, size: 1GiB, block_size: 512}], cpu: poll, cores: 1}
workloads:
  - {name: r, kind: nvme, initiator: initiator, target: target, rw: randread, bs: 4KiB, iodepth: 16, runtime: 2ms}
capture: {pcap: none}
"""
code, _, err, res = run(LOSSY, os.path.join(d, "lossy45"), expect=4)
if res:
    w = res["workloads"][0]
    check(w["finished"] and w.get("error", "").startswith("queue 0 (admin): its RDMA connection failed")
          and not w["data_verified"], f"lossy45: the job fails naming the queue and the reason: {w.get('error')}")
    check("error: workload r: queue 0 (admin): its RDMA connection failed" in err, f"lossy45: on stderr: {err}")

e2e.finish()
