"""NVMe over Fabrics on the RDMA fabrics (docs/storage.md): the queues are
connected through the RDMA CM (CM REQ/REP/RTU MADs on QP1 with NVMe-oF's
private data) so Wireshark's nvme-rdma dissector recognises them with its
default preferences: on IB, RoCE v1 and RoCE v2 every command frame is
dissected as NVMe and linked to its completion with the same CID, nothing
malformed, RoCE v2 ICRCs right; iWARP's MPA request and reply carry
NVMe-oF's private data. At high QD IOPS saturates at the SSD's read ceiling
(QD 1 on every fabric: test_nvme_tcp.py); written blocks read back
verified; fio.json has fio's layout; bad input is refused with a located
error."""

import json
import os
import struct

import e2e
from e2e import check, check_no_malformed, check_roce_v2_capture, run
from nvme_e2e import BASE, gui_tshark

d = e2e.tmpdir()


# ---- captures on every IBA fabric: NVMe commands matched to completions by CID
for fabric in ("roce_v2", "roce_v1", "ib"):
    out = os.path.join(d, "cap_" + fabric)
    _, _, _, res = run(f"name: cap_{fabric}\nfabric: {fabric}" + BASE + """
capture: {pcap: hosts}
workloads:
  - {name: w, kind: nvme, initiator: h, target: t, nsid: 2, rw: write, bs: 16KiB, iodepth: 4, size: 256KiB}
  - {name: r, kind: nvme, initiator: h, target: t, nsid: 2, rw: randread, bs: 16KiB, iodepth: 4, size: 256KiB,
     start: 1ms}
""", out)
    if not res:
        continue
    for w in res["workloads"]:
        check(w["data_verified"] and w["finished"] and w["errors"] == 0, f"{fabric}: {w['name']} verified")
    path = os.path.join(out, "pcap", "h-0.pcap")
    if fabric == "roce_v2":
        check_roce_v2_capture(path)
    check_no_malformed(path)
    bad = gui_tshark(path, "-Y", "_ws.malformed || _ws.short || _ws.expert.severity >= 8388608")
    check(bad.strip() == "", f"{fabric}: malformed or error-level frames as the GUI reads it:\n{bad[:1500]}")
    cm = gui_tshark(path, "-Y", "infiniband.cm.req", "-T", "fields", "-e", "nvme-rdma.cm.req.qid",
                    "-e", "nvme-rdma.cm.req.hsqsize", "-e", "infiniband.cm.req.serviceid.dport").split("\n")
    cm = [r.split("\t") for r in cm if r]
    check([r[0] for r in cm] == ["0", "1", "0", "1"], f"{fabric}: a CM REQ per queue (admin, I/O) per job: {cm}")
    check(all(int(r[2], 0) == 4420 for r in cm), f"{fabric}: REQs for port 4420: {cm}")
    rows = gui_tshark(path, "-Y", "nvme.cmd.opc || nvme.cqe.cid", "-T", "fields", "-e", "frame.number",
                      "-e", "nvme.cmd.opc", "-e", "nvme.cmd.cid", "-e", "nvme.cqe_pkt", "-e", "nvme.cqe.cid")
    cmds, cqes = {}, {}
    for line in rows.splitlines():
        f = line.split("\t")
        if f[1]:
            cmds[int(f[0])] = (int(f[1], 0), int(f[2], 0), int(f[3]) if f[3] else None)
        elif f[4]:
            cqes[int(f[0])] = int(f[4], 0)
    reads = sum(1 for c in cmds.values() if c[0] == 2)
    writes = sum(1 for c in cmds.values() if c[0] == 1)
    check(reads == 16 and writes == 16, f"{fabric}: 16 writes and 16 reads dissected as NVMe ({writes}, {reads})")
    unmatched = [n for n, c in cmds.items() if c[2] is None or cqes.get(c[2]) != c[1]]
    check(not unmatched, f"{fabric}: every NVMe command links to a completion of its CID (not: {unmatched[:5]})")

# ---- iWARP: the same jobs (no NVMe dissector for iWARP in Wireshark; MPA clean, NVMe-oF's private data in it)
out = os.path.join(d, "iw")
_, _, _, res = run("name: iw\nfabric: iwarp" + BASE + """
capture: {pcap: hosts}
workloads:
  - {name: w, kind: nvme, initiator: h, target: t, nsid: 2, rw: randwrite, bs: 4KiB, iodepth: 8, size: 256KiB}
""", out)
if res:
    check(res["workloads"][0]["data_verified"], "iwarp: writes verified")
    path = os.path.join(out, "pcap", "h-0.pcap")
    check_no_malformed(path)
    # The MPA request and reply carry NVMe-oF's private data after MPA Rev 2's
    # IRD and ORD, as nvme-rdma's reaches them through iw_cm: the request
    # RECFMT 0, QID, HRQSIZE, HSQSIZE (0's based), CNTLID; the reply CRQSIZE.
    mpa = gui_tshark(path, "-Y", "iwarp_mpa.req || iwarp_mpa.rep", "-T", "fields", "-e", "iwarp_mpa.rep",
                     "-e", "iwarp_mpa.pdlength", "-e", "iwarp_mpa.privatedata").splitlines()
    reqs = [bytes.fromhex(r.split("\t")[2].replace(":", "")) for r in mpa if not r.split("\t")[0]]
    reps = [bytes.fromhex(r.split("\t")[2].replace(":", "")) for r in mpa if r.split("\t")[0]]
    check(len(reqs) == 2 and len(reps) == 2, f"iwarp: an MPA request and reply per queue: {mpa}")
    fields = [struct.unpack_from("<5H", r, 4) for r in reqs]
    check(all(len(r) == 4 + 32 for r in reqs + reps), "iwarp: IRD/ORD and 32 bytes of NVMe-oF private data")
    check([f[1] for f in fields] == [0, 1] and all(f[0] == 0 for f in fields),
          f"iwarp: RECFMT 0 and the admin queue's then the I/O queue's QID: {fields}")
    check(fields[0][2:4] == (32, 31) and fields[1][2:4] == (128, 127) and fields[1][4] == 1,
          f"iwarp: HRQSIZE, HSQSIZE (0's based) and the I/O queue's CNTLID: {fields}")
    check([struct.unpack_from("<2H", r, 4) for r in reps] == [(0, 32), (0, 128)],
          f"iwarp: the replies' RECFMT 0 and CRQSIZE: {[r.hex() for r in reps]}")

# ---- high QD: the SSD's read ceiling (700 000 IOPS by default), with target cores enough
# (one poller core serves at most 1 / 1.5 us of commands)
out = os.path.join(d, "qd128")
_, _, _, res = run("name: qd128\nfabric: roce_v2" + BASE + "      cores: 4\n" + """
workloads:
  - {name: r, kind: nvme, initiator: h, target: t, rw: randread, bs: 4KiB, iodepth: 128, numjobs: 2,
     group_reporting: true, runtime: 3ms, ramp_time: 1ms}
""", out)
if res:
    w = res["workloads"][0]
    check(abs(w["iops"] / 700000 - 1) < 0.05, f"QD 128: IOPS at the SSD's ceiling ({w['iops']:.0f})")
    with open(os.path.join(out, "fio.json")) as f:
        fio = json.load(f)
    job = fio["jobs"][0]
    check(job["jobname"] == "r" and job["read"]["iops"] == w["iops"], "fio.json: jobs[].jobname, jobs[].read.iops")
    check(set(job["read"]["clat_ns"]["percentile"]) >= {"1.000000", "50.000000", "99.000000", "99.990000"},
          "fio.json: fio's default percentile list")

# ---- CPU per I/O: work apart from polling. A poll-mode target's pollers spin on their cores
# the whole window (work + polling = cores x window), so its work per I/O is below its total;
# a kernel target (cpu: interrupt) and a host waiting by interrupt never spin.
for mode in ("poll", "interrupt"):
    out = os.path.join(d, "cpu_" + mode)
    _, _, _, res = run(f"name: cpu_{mode}\nfabric: roce_v2" + BASE + f"      cpu: {mode}\n      cores: 2\n" + """
workloads:
  - {name: r, kind: nvme, initiator: h, target: t, rw: randread, bs: 4KiB, iodepth: 16, runtime: 1ms,
     ramp_time: 200us}
""", out, "--set", "host.completion=" + ("polling" if mode == "poll" else "interrupt"))
    if not res:
        continue
    w = res["workloads"][0]
    cpu = w["cpu"]
    ini, tgt = cpu["initiator"], cpu["target"]
    check(0 < cpu["ios"] <= w["ops"] and 0 < cpu["window_ps"] <= w["runtime_ps"],
          f"{mode}: the CPU window lies in the counted one: {cpu['ios']} of {w['ops']} I/Os")
    for name, side in (("initiator", ini), ("target", tgt)):
        check(abs(side["work_ps_per_io"] * cpu["ios"] - side["work_ps"]) < cpu["ios"]
              and abs(side["total_ps_per_io"] - side["work_ps_per_io"] - side["poll_ps_per_io"]) < 1,
              f"{mode}: {name}: per I/O figures are the window's over its I/Os: {side}")
        check(side["work_ps_per_io"] > 0, f"{mode}: the {name} works for each I/O")
    if mode == "poll":
        check(tgt["work_ps_per_io"] < tgt["total_ps_per_io"] and tgt["poll_ps"] > 0 and tgt["polling_cores"] == 2,
              f"poll: the target's work per I/O is below its total with polling: {tgt}")
        check(abs((tgt["work_ps"] + tgt["poll_ps"]) / (2 * cpu["window_ps"]) - 1) < 0.01,
              f"poll: the two pollers' cores are busy the whole window: {tgt}, {cpu['window_ps']}")
        check(ini["work_ps_per_io"] < ini["total_ps_per_io"], f"poll: the initiator spins on its CQ: {ini}")
    else:
        check(tgt["poll_ps"] == 0 and tgt["polling_cores"] == 0 and ini["poll_ps"] == 0
              and tgt["work_ps_per_io"] == tgt["total_ps_per_io"],
              f"interrupt: no spinning at either end: {tgt}, {ini}")

# ---- writes then reads of the same region verify (randrw too)
out = os.path.join(d, "verify")
_, _, _, res = run("name: verify\nfabric: roce_v2" + BASE + """
workloads:
  - {name: w, kind: nvme, initiator: h, target: t, rw: randwrite, bs: 8KiB, iodepth: 16, size: 1MiB}
  - {name: rw, kind: nvme, initiator: h, target: t, rw: randrw, rwmixread: 70, bs: 8KiB, iodepth: 16, size: 1MiB,
     start: 2ms}
  - {name: r, kind: nvme, initiator: h, target: t, rw: read, bs: 8KiB, iodepth: 16, size: 1MiB, start: 6ms}
capture: {pcap: none, timeseries: {interval: 1ms}}
""", out)
if res:
    for w in res["workloads"]:
        check(w["data_verified"] and w["bad_blocks"] == 0, f"verify: {w['name']} verified")
    with open(os.path.join(out, "nvme.csv")) as f:
        rows = f.read().splitlines()
    check(rows[0] == "workload,job,op,lba,blocks,submit_ps,complete_ps,status", "nvme.csv header")
    check(len(rows) - 1 == sum(w["ops"] for w in res["workloads"]), "nvme.csv: a row per I/O")
    check(sum(1 for r in rows[1:] if r.startswith("w,0,write,")) == 128, "nvme.csv: the 128 writes of w")

# ---- fio's sizes: bs=4k is 4096 bytes (kb_base=1024), size=64k, offset=1m
out = os.path.join(d, "fio_sizes")
_, _, _, res = run("name: fio_sizes\nfabric: roce_v2" + BASE + """workloads:
  - {name: f, kind: nvme, initiator: h, target: t, nsid: 2, rw: read, bs: 4k, size: 64K, offset: 1m}
capture: {pcap: none, timeseries: {interval: 1ms}}
""", out)
if res:
    f = e2e.workload(res, "f")
    check(f["ops"] == 16 and f["bytes"] == 65536 and f["data_verified"], f"fio sizes: 16 I/Os of 4096 bytes: {f}")
    with open(os.path.join(out, "nvme.csv")) as csv:
        lbas = sorted(int(r.split(",")[3]) for r in csv.read().splitlines()[1:])
    check(lbas == [256 + i for i in range(16)], f"fio sizes: offset=1m is block 256 of 4096 bytes: {lbas}")

# ---- bad input: located, exit 2
bad = {
    "past": ("{kind: nvme, initiator: h, target: t, offset: 60MiB, size: 8MiB}", "goes past namespace 1"),
    "bs": ("{kind: nvme, initiator: h, target: t, nsid: 2, bs: 6KiB}", "not a multiple of the namespace's 4096"),
    "depth": ("{kind: nvme, initiator: h, target: t, iodepth: 256}", "more than the I/O queue's 128 entries"),
    "nsid": ("{kind: nvme, initiator: h, target: t, nsid: 9}", "has no namespace 9"),
    "notarget": ("{kind: nvme, initiator: t, target: h}", "host h has no storage target"),
    "fio_bs": ("{kind: nvme, initiator: h, target: t, nsid: 2, bs: 6k}", "bs 6KiB is not a multiple"),
    "fio_big": ("{kind: nvme, initiator: h, target: t, bs: 2m}", "bs is at most 1MiB"),
    "runtime_unit": ("{kind: nvme, initiator: h, target: t, runtime: 30}",
                     "runtime 30 has no unit: fio would read seconds"),
    "ramp_unit": ("{kind: nvme, initiator: h, target: t, runtime: 1ms, ramp_time: 2}", "ramp_time 2 has no unit"),
}
for name, (job, message) in bad.items():
    out = os.path.join(d, "bad_" + name)
    code, _, err, _ = run(f"name: bad_{name}\nfabric: roce_v2" + BASE + "workloads:\n  - " + job + "\n", out,
                          expect=2)
    check(message in err and ".yaml:" in err, f"bad input {name}: located message '{message}': {err.strip()}")

e2e.finish()
