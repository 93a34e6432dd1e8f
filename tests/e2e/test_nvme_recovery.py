"""NVMe over Fabrics host error recovery, as Linux's nvme-core, nvme-rdma and
nvme-tcp do it (docs/storage.md "Error recovery", docs/reliability.md).

- A command not completed within its timeout (admin_timeout 60 s on the
  admin queue) while the controller connects is aborted by the host and the
  connect fails, as `nvme connect` does: the job ends with results.json's
  `error` and, without `faults`, exit 4. It used to wait for ever: the run
  went idle unfinished, exit 0 (a target whose QP gave up on its RDMA READ of
  the Connect data on a lossy link; the Connect's completion lost on the
  host's link, down from 40 us).
- Once the controller is live, a command timing out (io_timeout 30 s) or the
  queue's connection failing starts error recovery: the queues are torn
  down, the host waits reconnect_delay (10 s) and connects again (a new CM
  REQ, new QPs, a new Fabrics Connect on the admin queue, which the target
  answers with a new controller ID, then on the I/O queues; on NVMe/TCP new
  connections and ICReqs); the commands cancelled are sent again and the job
  ends with every I/O done and verified. After ctrl_loss_tmo / reconnect_delay
  failed attempts the controller is removed: the job fails saying so.
- I/O that completes with an error status (here: commands the recovery
  cancelled, with max_retries 0) makes the run exit 4 without `faults`.
- Error recovery's teardown disconnects each RDMA queue through the CM: a DREQ
  from the host, a DREP from the target, on the wire (IBA 12.6.10, 12.6.11).
  On iWARP (no CM, and no disconnect message in MPA) the QP's leaving RTS
  closes its TCP connection: a FIN, answered by the target's once it freed
  the queue (it used to be freed with nothing on the wire).
These cases run without keep-alive (`kato: 0`, nvme connect
--keep-alive-tmo=0): the keep-alive's own cases are test_nvme_keepalive.py.
Every capture passes tshark as the GUI reads it (the reconnect's CM MADs and
Connect dissect as nvme-rdma)."""

import os

import e2e
from e2e import check, check_captures, run
from nvme_e2e import BASE, fields

d = e2e.tmpdir()

# As test_nvme_rdma_cm.py's lossy experiment, case by case.
LOSSY = """name: lossy
fabric: roce_v2
seed: {seed}
link: {{bandwidth: 100Gbps, delay: 1us, mtu: 4096, loss: {loss}}}
topology: {{hosts: [initiator, target], switches: [s1], links: [[initiator, s1], [target, s1]]}}
storage:
  targets:
    - {{host: target, namespaces: [{{nsid: 1, size: 1GiB, block_size: 512}}], cpu: poll, cores: 1}}
workloads:
  - {{name: r, kind: nvme, initiator: initiator, target: target, rw: randread, bs: 4KiB, iodepth: 16, runtime: {runtime}{extra}}}
capture: {{pcap: none}}
"""

JOB = """
capture: {pcap: hosts}
workloads:
  - {name: r, kind: nvme, initiator: h, target: t, rw: randrw, bs: 8KiB, iodepth: 4, size: 2MiB, kato: 0%s}
"""


def down(at, until):
    return f"faults:\n  - {{at: {at}, link: [h, s], action: down}}\n  - {{at: {until}, link: [h, s], action: up}}\n"


def clean(out, fabric):
    """Both hosts' captures clean in tshark, as a script and as the GUI reads them (RoCE v2's frame by frame)."""
    check(len(check_captures(out, fabric)) == 2, f"{fabric}: a capture a host in {out}")


def workload(res):
    return res["workloads"][0] if res else {}


def check_disconnects(path, fabric):
    """The teardown at 30 s: a DREQ per queue from the host, naming the connection the REQ and REP made and the
    target's QP; a DREP for each from the target, its IDs the other way round, the DREQ's transaction ID."""
    # (Wireshark names a REQ's and a REP's Local Communication ID infiniband.cm.req and .rep, a DREQ's remote QPN
    # infiniband.cm.req.remoteqpneecn.)
    reqs = fields(path, "infiniband.cm.req", "infiniband.cm.req")
    reps = fields(path, "infiniband.cm.rep", "infiniband.cm.rep", "infiniband.cm.rep.localqpn")
    dreqs = fields(path, "infiniband.cm.dreq.localcommid", "frame.time_relative", "ip.src",
                   "infiniband.cm.dreq.localcommid", "infiniband.cm.dreq.remotecommid",
                   "infiniband.cm.req.remoteqpneecn", "infiniband.mad.transactionid")
    dreps = fields(path, "infiniband.cm.drsp.localcommid", "frame.time_relative", "ip.src",
                   "infiniband.cm.drsp.localcommid", "infiniband.cm.drsp.remotecommid", "infiniband.mad.transactionid")
    want = [[q[0], p[0], p[1]] for q, p in zip(reqs[:2], reps[:2])]
    check([r[2:5] for r in dreqs] == want and all(30.0 < float(r[0]) < 30.01 for r in dreqs),
          f"{fabric}: a DREQ per queue at the teardown, for the first association's connections: {dreqs}, {want}")
    check([r[2:5] for r in dreps] == [[r[3], r[2], r[5]] for r in dreqs] and len(dreps) == 2,
          f"{fabric}: a DREP answers each DREQ: {dreps}")


TIMED_OUT = "queue 0 (admin): command 0 (Connect) timed out after 60 s (admin_timeout) and was aborted by the host"

# ---- (1) loss 0.45, seed 4: the target's QP gives up on its RDMA READ of the Connect data; the host's Connect
# times out 60 s after it was sent, the connect fails, exit 4 (no faults).
code, stdout, err, res = run(LOSSY.format(seed=4, loss=0.45, runtime="2ms", extra=""), os.path.join(d, "lossy4"),
                             expect=4)
w = workload(res)
check(w.get("finished") and w.get("ops") == 0 and w.get("error") == TIMED_OUT,
      f"lossy4: the Connect times out and the job fails: {({k: w.get(k) for k in ('finished', 'ops', 'error')})}")
check(w.get("timeouts") == 1 and w.get("reconnects") == 0, f"lossy4: one timeout counted: {w.get('timeouts')}")
check(f"error: workload r: {TIMED_OUT}" in err, f"lossy4: stderr names the queue and the timeout: {err}")
check("recovery: r: 1 command timeout(s), 0 reconnect(s)" in stdout, f"lossy4: the summary: {stdout}")

# ---- (2) the host's link down from 40 us (the Connect's completion lost) to 100 s: the Connect times out at 60 s.
for fabric in ("roce_v2", "ib"):
    out = os.path.join(d, "connect_" + fabric)
    code, stdout, err, res = run(f"name: c\nfabric: {fabric}" + BASE + JOB % "" + down("40us", "100s"), out)
    w = workload(res)
    check(w.get("finished") and w.get("error") == TIMED_OUT,
          f"{fabric}: the connect fails at the Connect's timeout: {w.get('finished')}, {w.get('error')}")
    if res:
        check(60 * 10**12 < res["end_time_ps"] < 61 * 10**12, f"{fabric}: ends at 60 s: {res['end_time_ps']}")
        clean(out, fabric)

# ---- the host's link down from 1 ms to 15 s under I/O: the I/O times out at 30 s, the controller reconnects 10 s
# later and the job completes, every block verified.
for fabric in ("roce_v2", "ib"):
    out = os.path.join(d, "reconnect_" + fabric)
    code, stdout, err, res = run(f"name: rc\nfabric: {fabric}" + BASE + JOB % "" + down("1ms", "15s"), out)
    w = workload(res)
    check(w.get("finished") and w.get("ops") == 256 and w.get("data_verified") and w.get("errors") == 0
          and "error" not in w, f"{fabric}: every I/O done after the reconnect: "
          f"{({k: w.get(k) for k in ('finished', 'ops', 'errors', 'error', 'data_verified')})}")
    check(w.get("timeouts") == 1 and w.get("reconnects") == 1,
          f"{fabric}: one timeout, one reconnect: {w.get('timeouts')}, {w.get('reconnects')}")
    check("recovery: r: 1 command timeout(s), 1 reconnect(s), 0 I/O error(s)" in stdout, f"{fabric}: {stdout}")
    if not res:
        continue
    path = os.path.join(out, "pcap", "h-0.pcap")
    # Each association: a REQ for the admin queue and the I/O queue; the second's REQs 40 s in (30 s + 10 s).
    reqs = fields(path, "infiniband.cm.req", "frame.time_relative", "nvme-rdma.cm.req.qid", "nvme-rdma.cm.req.cntlid")
    check([r[1:] for r in reqs] == [["0", "0x0000"], ["1", "0x0001"], ["0", "0x0000"], ["1", "0x0002"]],
          f"{fabric}: REQs of both associations, the second's I/O queue for controller 2: {reqs}")
    if len(reqs) == 4:
        check(40.0 < float(reqs[2][0]) < 40.01, f"{fabric}: reconnects 40 s in: {reqs[2][0]}")
    connects = fields(path, "nvme.fabrics.cmd.connect.qid", "nvme.fabrics.cmd.connect.qid")
    check([c[0] for c in connects] == ["0", "1", "0", "1"], f"{fabric}: a Fabrics Connect per queue twice: {connects}")
    check_disconnects(path, fabric)
    clean(out, fabric)

# NVMe/TCP: the host's TCP connections give up during the outage; new connections, ICReqs and Connects after it.
out = os.path.join(d, "reconnect_tcp")
code, stdout, err, res = run("name: rt\nfabric: tcp" + BASE + JOB % "" + down("1ms", "38s"), out)
w = workload(res)
check(w.get("finished") and w.get("ops") == 256 and w.get("data_verified") and "error" not in w
      and w.get("reconnects") == 1, f"tcp: every I/O done after the reconnect: "
      f"{({k: w.get(k) for k in ('finished', 'ops', 'error', 'data_verified', 'reconnects')})}")
if res:
    path = os.path.join(out, "pcap", "h-0.pcap")
    icreqs = fields(path, "nvme-tcp.type == 0", "frame.time_relative")
    check(len(icreqs) == 4 and float(icreqs[2][0]) > 38, f"tcp: two ICReqs an association: {icreqs}")
    connects = fields(path, "nvme.fabrics.cmd.connect.qid", "nvme.fabrics.cmd.connect.qid")
    check([c[0] for c in connects] == ["0", "1", "0", "1"], f"tcp: a Fabrics Connect per queue twice: {connects}")
    clean(out, "tcp")

# iWARP: the host's QP fails with its TCP connection (retries exhausted at 4.6 s); new connections and MPA exchanges.
out = os.path.join(d, "reconnect_iwarp")
code, stdout, err, res = run("name: ri\nfabric: iwarp" + BASE + JOB % "" + down("1ms", "15s"), out)
w = workload(res)
check(w.get("finished") and w.get("ops") == 256 and w.get("data_verified") and w.get("errors") == 0
      and "error" not in w and w.get("reconnects") == 1 and w.get("timeouts") == 0,
      f"iwarp: every I/O done after the reconnect: "
      f"{({k: w.get(k) for k in ('finished', 'ops', 'errors', 'error', 'reconnects', 'timeouts')})}")
if res:
    path = os.path.join(out, "pcap", "h-0.pcap")
    mpa = fields(path, "iwarp_mpa.req", "frame.time_relative")
    check(len(mpa) == 4 and float(mpa[2][0]) > 14.6, f"iwarp: an MPA request a queue, each association: {mpa}")
    clean(out, "iwarp")

# ---- the host's teardown with the path up: a read past io_timeout (10 ms) on a RAM namespace of 50 ms starts error
# recovery. On RoCE v2 each queue's QP goes to the error state and the CM sends a DREQ, which the target answers with a
# DREP once it has freed the queue. On iWARP, whose MPA has no disconnect message, the QP's leaving RTS closes its
# TCP connection: a FIN per queue, on which the target frees the queue and closes its side at once (siw's
# SIW_CM_WORK_PEER_CLOSE). The host starts recovery at about the same time on both; the old model freed the target's
# queues with nothing on the wire. max_retries 0: the read fails (exit 4, no faults).
SLOW = BASE.replace("ram: true}", "ram: true, ram_latency: 50ms}")
assert SLOW != BASE
TEARDOWN = """
capture: {pcap: hosts}
workloads:
  - {name: r, kind: nvme, initiator: h, target: t, nsid: 2, rw: randread, bs: 4KiB, iodepth: 1, size: 4KiB, kato: 0,
     io_timeout: 10ms, max_retries: 0, reconnect_delay: 1ms}
"""
CLOSE = {"roce_v2": ("infiniband.cm.dreq.localcommid", "infiniband.cm.drsp.localcommid"),
         "iwarp": ("tcp.flags.fin == 1", "tcp.flags.fin == 1")}
teardown = {}
for fabric, (by_host, by_target) in CLOSE.items():
    out = os.path.join(d, "teardown_" + fabric)
    code, stdout, err, res = run(f"name: td\nfabric: {fabric}" + SLOW + TEARDOWN, out, expect=4)
    w = workload(res)
    check(w.get("timeouts") == 1 and w.get("reconnects") == 1 and w.get("errors") == 1,
          f"{fabric} teardown: the read timed out, the host reconnected: "
          f"{({k: w.get(k) for k in ('timeouts', 'reconnects', 'errors')})}")
    if not res:
        continue
    path = os.path.join(out, "pcap", "t-0.pcap")
    host = [float(r[0]) for r in fields(path, f"{by_host} && ip.src == 10.0.0.1", "frame.time_relative")]
    target = [float(r[0]) for r in fields(path, f"{by_target} && ip.src == 10.0.0.2", "frame.time_relative")]
    check(len(host) == 2 and all(0.010 < t < 0.0102 for t in host),
          f"{fabric} teardown: the host disconnects each queue 10 ms in, past the read's io_timeout: {host}")
    check(len(target) == 2 and host and all(0 < t - host[0] < 20e-6 for t in target),
          f"{fabric} teardown: the target learns of it at once and closes its side: {target} after {host}")
    resets = fields(path, "tcp.flags.reset == 1", "frame.time_relative")
    check(not resets, f"{fabric} teardown: an orderly close, no reset: {resets}")
    teardown[fabric] = host[:1]
    clean(out, fabric)
if len(teardown) == 2 and teardown["roce_v2"] and teardown["iwarp"]:
    check(abs(teardown["roce_v2"][0] - teardown["iwarp"][0]) < 100e-6,
          f"teardown: the host disconnects at about the same time on RoCE v2 and iWARP: {teardown}")
# On iWARP with the read's data 10 us short of the timeout, the target's RDMA WRITE and SEND of it cross the host's FIN:
# the host, whose QP reads no more (siw released the socket), answers the data with a RST, as the kernel does.
out = os.path.join(d, "teardown_crossing")
code, stdout, err, res = run("name: tx\nfabric: iwarp" + SLOW.replace("50ms", "9990us") + TEARDOWN, out, expect=4)
if res:
    path = os.path.join(out, "pcap", "h-0.pcap")
    fin = [float(r[0]) for r in fields(path, "tcp.flags.fin == 1 && ip.src == 10.0.0.1", "frame.time_relative")]
    data = [float(r[0]) for r in fields(path, "iwarp_rdma && ip.src == 10.0.0.2", "frame.time_relative")]
    rst = [float(r[0]) for r in fields(path, "tcp.flags.reset == 1 && ip.src == 10.0.0.1", "frame.time_relative")]
    crossing = [t for t in data if fin and fin[0] < t < fin[0] + 5e-6]
    check(crossing and rst and crossing[-1] < rst[0] < fin[0] + 5e-6,
          f"teardown crossing: the target's data after the host's FIN gets a RST: FIN {fin}, data {crossing}, "
          f"RST {rst}")
    clean(out, "iwarp")

# ---- the link never comes back: after ctrl_loss_tmo / reconnect_delay attempts (20 s / 10 s: 2) the controller is
# removed, the I/O waiting to be sent again fails.
out = os.path.join(d, "removed")
code, stdout, err, res = run("name: rm\nfabric: roce_v2" + BASE + JOB % ", ctrl_loss_tmo: 20s"
                             + down("1ms", "1000s"), out)
w = workload(res)
why = ("controller 1 of t: removed after 2 failed reconnect attempt(s) (ctrl_loss_tmo 20 s, reconnect_delay 10 s); "
       "the last: queue 0 (admin): rdma connection establishment failed (-104): CM REQ timed out after 15 retries")
check(w.get("finished") and w.get("error", "").startswith(why) and w.get("errors") == 4 and not w.get("data_verified"),
      f"removed: the job fails naming the controller: {({k: w.get(k) for k in ('finished', 'error', 'errors')})}")
check("error recovery began after queue 1 (I/O): command" in w.get("error", ""), f"removed: {w.get('error')}")
check(f"failed: r: {why}" in stdout, f"removed: the summary says why: {stdout}")
if res:
    clean(out, "roce_v2")

# ---- (3) I/O completing with an error status, no faults: exit 4. Loss 0.3, seed 2: an I/O queue's connection fails,
# the controller reconnects; with max_retries 0 the commands it cancelled fail at once.
code, stdout, err, res = run(LOSSY.format(seed=2, loss=0.3, runtime="10ms", extra=", max_retries: 0"),
                             os.path.join(d, "errors"), expect=4)
w = workload(res)
check(w.get("finished") and "error" not in w and w.get("errors", 0) > 0 and w.get("reconnects") == 1,
      f"errors: the job reconnects and ends with errors: {({k: w.get(k) for k in ('finished', 'error', 'errors')})}")
check("NVMe command(s) completed with an error status or failed" in err, f"errors: stderr says so: {err}")

e2e.finish()
