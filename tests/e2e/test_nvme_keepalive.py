"""NVMe over Fabrics keep-alive, the controller's disconnects and the
host's fast I/O failure, as Linux's nvme-core, nvme-rdma, nvme-tcp and
nvmet do them (docs/storage.md "Keep-alive", "Error recovery").

- `kato` (nvme connect --keep-alive-tmo, 5 s by default) goes in the admin
  queue's Fabrics Connect (KATO, in ms); while live the host sends a Keep
  Alive (admin opcode 0x18) every kato / 2 (nvme_keep_alive_work_period), on
  every fabric; `kato: 0` sends none and a Connect KATO of 0.
- With the host's link down past kato the target hears nothing and removes
  the controller at its next check (nvmet_keep_alive_timer, every kato):
  on IB and RoCE it disconnects each queue with a CM DREQ, on iWARP (whose
  MPA has no disconnect message) and NVMe/TCP by closing its TCP connection:
  a FIN.
  The host recovers from its Keep Alive: on RDMA the Keep Alive's SEND
  exhausts the RC retries (nvme_rdma_wr_error; on iWARP the I/O queue's TCP
  connection gives up on its data first); on NVMe/TCP (kato 1 s,
  inside TCP's retries) the Keep Alive times out after kato. Error
  recovery's teardown sends a DREQ per queue; the target's and the host's
  DREQs cross and each is answered with a DREP once the link is back.
- `ctrl_loss_tmo: -1` reconnects for ever (past 600 s); a finite one removes
  the controller after its attempts.
- `fast_io_fail_tmo`: that long into error recovery, the I/O waiting for the
  reconnect fails with Host Path Error instead of waiting.
- Bad values of the keys exit 2 with a located message.
Every capture passes tshark as the Wireshark GUI reads it."""

import os
import re

import e2e
from e2e import check, check_captures, run
from nvme_e2e import BASE as NVME_BASE
from nvme_e2e import fields

d = e2e.tmpdir()

# I/O at QD 1 on a RAM namespace of 1 ms: 2.2 s of it is about 2 200 I/Os.
BASE = NVME_BASE.replace("ram: true}", "ram: true, ram_latency: 1ms}")
assert BASE != NVME_BASE
PERIOD = "capture: {pcap: hosts}\nworkloads:\n  - {name: r, kind: nvme, initiator: h, target: t, nsid: 2, iodepth: 1, \
runtime: 2200ms%s}\n"
JOB = "capture: {pcap: hosts%s}\nworkloads:\n  - {name: r, kind: nvme, initiator: h, target: t, rw: randrw, bs: 8KiB, \
iodepth: 4, size: 2MiB%s}\n"
FABRICS = ("roce_v2", "ib", "iwarp", "roce_v1", "tcp")


def down(at, until=None):
    up = f"  - {{at: {until}, link: [h, s], action: up}}\n" if until else ""
    return f"faults:\n  - {{at: {at}, link: [h, s], action: down}}\n" + up


def keep_alives(path, fabric):
    """Times of the host's Keep Alive capsules, and the admin Connect's KATO. No NVMe dissector on iWARP: the
    RDMAP Sends' payload is the SQE (opcode in byte 0, a Connect's KATO in bytes 48..51, little-endian)."""
    if fabric == "iwarp":
        kas = fields(path, "iwarp_rdma.opcode == 0x03 && data.data[0] == 0x18", "frame.time_relative")
        sqe = fields(path, "iwarp_rdma.opcode == 0x03 && data.data[0] == 0x7f && data.data[4] == 0x01", "data.data")
        kato = [int.from_bytes(bytes.fromhex(s[0][96:104]), "little") for s in sqe[:1]]
    else:
        kas = fields(path, "nvme.cmd.opc == 0x18 && !tcp.analysis.retransmission", "frame.time_relative")
        kato = [int(k[0]) for k in fields(path, "nvme.fabrics.cmd.connect.kato", "nvme.fabrics.cmd.connect.kato")]
    return [float(k[0]) for k in kas], kato


def workload(res):
    return res["workloads"][0] if res else {}


def keys(w, *names):
    return {k: w.get(k) for k in names}


# ---- Keep Alive every kato / 2 on each fabric, the Connect's KATO in ms; none with kato: 0.
for fabric in FABRICS:
    out = os.path.join(d, "period_" + fabric)
    code, stdout, err, res = run(f"name: p\nfabric: {fabric}" + BASE + PERIOD % ", kato: 1s", out)
    if not res:
        continue
    kas, kato = keep_alives(os.path.join(out, "pcap", "h-0.pcap"), fabric)
    check(kato[:1] == [1000], f"{fabric}: the admin Connect's KATO is 1000 ms: {kato}")
    check(len(kato) < 2 or kato[1] == 0, f"{fabric}: the I/O queue's Connect has none: {kato}")
    want = [0.5, 1.0, 1.5, 2.0]
    check(len(kas) == 4 and all(abs(k - w) < 0.001 for k, w in zip(kas, want)),
          f"{fabric}: a Keep Alive every 0.5 s from the controller going live: {kas}")
    check(workload(res).get("data_verified") and "timeouts" not in workload(res),
          f"{fabric}: the job is clean: {keys(workload(res), 'data_verified', 'timeouts')}")
    check(len(check_captures(out, fabric)) == 2, f"{fabric}: both captures clean")
    if fabric in ("roce_v2", "tcp"):
        code, stdout, err, res = run(f"name: p\nfabric: {fabric}" + BASE + PERIOD % ", kato: 0", out + "_off")
        kas, kato = keep_alives(os.path.join(out + "_off", "pcap", "h-0.pcap"), fabric)
        check(kas == [] and kato[:1] == [0], f"{fabric} kato 0: no Keep Alive, KATO 0: {kas}, {kato}")
        check(len(check_captures(out + "_off", fabric)) == 2, f"{fabric} kato 0: both captures clean")
        code, stdout, err, res = run(f"name: p\nfabric: {fabric}" + BASE + PERIOD % "", out + "_default")
        kas, kato = keep_alives(os.path.join(out + "_default", "pcap", "h-0.pcap"), fabric)
        check(kas == [] and kato[:1] == [5000], f"{fabric} default: KATO 5000, the first at 2.5 s: {kas}, {kato}")
        check(len(check_captures(out + "_default", fabric)) == 2, f"{fabric} default: both captures clean")

# ---- RoCE v2, the host's link down from 1 ms to 15 s, kato 5 s: the Keep Alive at 2.5 s exhausts its SEND's
# retries at 3.04 s: error recovery, a DREQ per queue (lost). The target saw I/O before its 5 s check, none before
# its 10 s one: it removes controller 1, a DREQ per queue (lost, sent again at 14.1 s). The reconnect at 13.04 s
# finds the link down; its REQ goes again at 17.6 s and connects. The host's DREQs sent again at 16.9 s cross the
# target's: each is answered with a DREP. Every I/O done and verified.
out = os.path.join(d, "down_roce_v2")
code, stdout, err, res = run("name: dn\nfabric: roce_v2" + BASE + JOB % ("", "") + down("1ms", "15s"), out)
w = workload(res)
check(w.get("finished") and w.get("ops") == 256 and w.get("data_verified") and w.get("reconnects") == 1
      and w.get("timeouts") == 0, f"roce_v2: recovered: {keys(w, 'ops', 'data_verified', 'reconnects', 'timeouts')}")
if res:
    host, target = (os.path.join(out, "pcap", n) for n in ("h-0.pcap", "t-0.pcap"))
    dreq = "infiniband.cm.dreq.localcommid"
    target_dreqs = fields(target, f"{dreq} && ip.src == 10.0.0.2", "frame.time_relative")
    check([round(float(t[0]), 3) for t in target_dreqs] == [10.0, 10.0, 14.096, 14.096],
          f"roce_v2: the target removes the controller at 10 s, a DREQ per queue, again at 14.096 s: {target_dreqs}")
    host_dreqs = fields(host, f"{dreq} && ip.src == 10.0.0.1", "frame.time_relative")
    check(len(host_dreqs) >= 2 and all(3.03 < float(t[0]) < 3.04 for t in host_dreqs[:2]),
          f"roce_v2: the host tears down after its Keep Alive failed at 3.04 s: {host_dreqs}")
    dreps = fields(host, "infiniband.cm.drsp.localcommid && ip.src == 10.0.0.2", "frame.time_relative")
    check(len(dreps) == 2 and all(16.8 < float(t[0]) < 16.9 for t in dreps), f"roce_v2: the DREPs: {dreps}")
    reqs = fields(host, "infiniband.cm.req", "frame.time_relative")
    check(len(reqs) == 5 and 13.03 < float(reqs[2][0]) < 13.04 and 17.64 < float(reqs[3][0]) < 17.65,
          f"roce_v2: reconnect 10 s after the teardown, its REQ again after 4.6 s: {reqs}")
    check(len(check_captures(out, "roce_v2")) == 2, "roce_v2: both captures clean")

# iWARP, the same outage: the I/O queue's TCP connection gives up on its data at 4.64 s (a RST, lost): error recovery;
# the teardown closes the admin queue's connection (its QP leaves RTS: a FIN, lost; MPA has no disconnect message).
# The target, no command since its 5 s check, removes the controller at 10 s and closes the admin queue's connection
# with a FIN (its I/O queue's TCP had reset at 4.64 s), as it sends a DREQ per queue on RoCE. The reconnect connects
# once the link is back. (The old model sent neither FIN: iWARP's close was not modelled.)
out = os.path.join(d, "down_iwarp")
code, stdout, err, res = run("name: di\nfabric: iwarp" + BASE + JOB % ("", "") + down("1ms", "15s"), out)
w = workload(res)
check(w.get("finished") and w.get("ops") == 256 and w.get("data_verified") and w.get("reconnects") == 1,
      f"iwarp: recovered: {keys(w, 'ops', 'data_verified', 'reconnects', 'timeouts')}")
if res:
    host, target = (os.path.join(out, "pcap", n) for n in ("h-0.pcap", "t-0.pcap"))
    first = "tcp.flags.fin == 1 && !tcp.analysis.retransmission && ip.src == "
    host_fins = fields(host, first + "10.0.0.1", "frame.time_relative")
    check([round(float(t[0]), 2) for t in host_fins] == [4.64],
          f"iwarp: the host's teardown closes the admin queue's connection at 4.64 s: {host_fins}")
    target_fins = fields(target, first + "10.0.0.2", "frame.time_relative")
    check(target_fins and abs(float(target_fins[0][0]) - 10.0) < 0.001,
          f"iwarp: the target removes the controller at 10 s, closing its connection: {target_fins}")
    check(len(check_captures(out, "iwarp")) == 2, "iwarp: both captures clean")

# NVMe/TCP, kato 1 s: the Keep Alive at 0.5 s times out at 1.5 s (TCP still retrying): error recovery; the target,
# no command since its 1 s check, closes the connections it still has at 2 s (a FIN from port 4420: the admin
# queue's; the I/O queue's, whose data went unacknowledged, TCP has reset already).
out = os.path.join(d, "down_tcp")
code, stdout, err, res = run("name: dt\nfabric: tcp" + BASE + JOB % ("", ", kato: 1s") + down("1ms", "38s"), out)
w = workload(res)
check(w.get("finished") and w.get("ops") == 256 and w.get("data_verified") and w.get("reconnects") == 1
      and w.get("timeouts") == 1, f"tcp: recovered: {keys(w, 'ops', 'data_verified', 'reconnects', 'timeouts')}")
if res:
    host, target = (os.path.join(out, "pcap", n) for n in ("h-0.pcap", "t-0.pcap"))
    fins = fields(target, "tcp.flags.fin == 1 && tcp.srcport == 4420 && !tcp.analysis.retransmission",
                  "frame.time_relative")
    check(fins and abs(float(fins[0][0]) - 2.0) < 0.001, f"tcp: the target closes its connection at 2 s: {fins}")
    host_fins = fields(host, "tcp.flags.fin == 1 && tcp.dstport == 4420 && !tcp.analysis.retransmission",
                       "frame.time_relative")
    check(host_fins and 1.5 < float(host_fins[0][0]) < 1.501, f"tcp: the host's teardown at 1.5 s: {host_fins}")
    check(len(check_captures(out, "tcp")) == 2, "tcp: both captures clean")

# The same outage never ending, reconnect attempts a second apart for 3 s: the error names the Keep Alive's timeout.
out = os.path.join(d, "ka_removed")
code, stdout, err, res = run("name: kr\nfabric: tcp" + BASE + JOB % ("", ", kato: 1s, reconnect_delay: 1s, "
                             "ctrl_loss_tmo: 3s") + down("1ms"), out)
w = workload(res)
check("error recovery began after queue 0 (admin): command 1 (Keep Alive) timed out after 1 s (kato)"
      in w.get("error", ""), f"tcp: removed, the Keep Alive's timeout named: {w.get('error')}")
check(len(check_captures(out, "tcp")) == 2, "tcp, removed: both captures clean")

# ---- ctrl_loss_tmo -1: the link never comes back; attempts go on past 600 s (cut off by `stop` at 700 s); with 60 s
# (6 attempts) the controller is removed.
forever = "name: f\nfabric: roce_v2\nstop: 700s" + BASE + JOB % ("", ", ctrl_loss_tmo: %s") + down("1ms")
out = os.path.join(d, "forever")
code, stdout, err, res = run(forever % "-1", out)
w = workload(res)
check(not w.get("finished") and "error" not in w, f"ctrl_loss_tmo -1: still reconnecting at 700 s: {keys(w, 'finished', 'error')}")
if res:
    reqs = [float(r[0]) for r in fields(os.path.join(out, "pcap", "h-0.pcap"), "infiniband.cm.req",
                                        "frame.time_relative")]
    check(sum(1 for t in reqs if t > 600) >= 5, f"ctrl_loss_tmo -1: REQs past 600 s: {[t for t in reqs if t > 590]}")
    check(len(check_captures(out, "roce_v2")) == 2, "ctrl_loss_tmo -1: both captures clean")
out = os.path.join(d, "finite")
code, stdout, err, res = run(forever % "60s", out)
w = workload(res)
check(w.get("finished") and "removed after 6 failed reconnect attempt(s) (ctrl_loss_tmo 60 s" in w.get("error", ""),
      f"ctrl_loss_tmo 60 s: removed: {keys(w, 'finished', 'error')}")
check(len(check_captures(out, "roce_v2")) == 2, "ctrl_loss_tmo 60 s: both captures clean")

# ---- fast_io_fail_tmo 2 s: recovery from 3.04 s; at 5.04 s the 4 I/Os waiting for the reconnect fail (Host Path
# Error: SCT 3, SC 0x70, nvme.csv's status 0x6E0); the rest complete after the reconnect. Without it: none fail.
ff = "name: ff\nfabric: roce_v2" + BASE + JOB % (", timeseries: {interval: 1s}", "%s") + down("1ms", "15s")
out = os.path.join(d, "failfast")
code, stdout, err, res = run(ff % ", fast_io_fail_tmo: 2s", out)
w = workload(res)
check(w.get("errors") == 4 and w.get("ops") == 252 and w.get("reconnects") == 1 and not w.get("data_verified"),
      f"fast_io_fail_tmo: 4 I/Os failed: {keys(w, 'errors', 'ops', 'reconnects', 'data_verified')}")
if res:
    with open(os.path.join(out, "nvme.csv")) as f:
        failed = [r.split(",") for r in f.read().splitlines()[1:] if not r.endswith(",0")]
    check(len(failed) == 4 and all(r[7] == str(0x6E0) and abs(int(r[6]) / 1e12 - 5.037) < 0.001 for r in failed),
          f"fast_io_fail_tmo: Host Path Error at 5.04 s: {failed}")
    check(len(check_captures(out, "roce_v2")) == 2, "fast_io_fail_tmo: both captures clean")
out = os.path.join(d, "no_failfast")
code, stdout, err, res = run(ff % "", out)
w = workload(res)
check(w.get("errors") == 0 and w.get("ops") == 256, f"no fast_io_fail_tmo: none fails: {keys(w, 'errors', 'ops')}")
check(len(check_captures(out, "roce_v2")) == 2, "no fast_io_fail_tmo: both captures clean")

# ---- bad values: located, exit 2
bad = {
    "kato_fraction": ("kato: 1500ms", "kato is whole seconds"),
    "kato_negative": ("kato: -1", "expected a time"),
    "ctrl_loss": ("ctrl_loss_tmo: -2", "expected a time, or -1 (reconnect for ever)"),
    "failfast": ("fast_io_fail_tmo: -5s", "expected a time, or -1 (off)"),
    "failfast_word": ("fast_io_fail_tmo: never", "a time such as"),
}
for name, (key, message) in bad.items():
    out = os.path.join(d, "bad_" + name)
    code, _, err, _ = run(f"name: b\nfabric: roce_v2" + BASE + JOB % ("", ", " + key), out, expect=2)
    check(message in err and re.search(r"bad_\w+\.yaml:\d+:\d+: ", err),
          f"bad {name}: located message '{message}': {err.strip()}")

e2e.finish()
