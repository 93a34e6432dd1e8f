"""NVMe/TCP on `fabric: tcp` (docs/storage.md): each queue is a kernel TCP
connection to port 4420, opened with ICReq/ICResp; commands and completions
are CapsuleCmd/CapsuleResp PDUs, a read's data a C2HData PDU, a write's
data beyond the in-capsule size H2CData PDUs after an R2T. Wireshark's
nvme-tcp dissector (TCP port 4420, its default) dissects every PDU with no
malformed frame or error as the GUI reads it, and links each command to its
completion by CID; the header and data digests, when asked for, are the
CRC32C of what they cover. IOPS at QD 1 is 1 / latency; written blocks read
back verified; the QD 1 latency orders IB <= RoCE v2 < iWARP < NVMe/TCP on
the same topology; the host and the target both spend CPU per I/O."""

import json
import os
import struct

import e2e
from e2e import check, check_no_malformed, run
from nvme_e2e import BASE, gui_tshark

d = e2e.tmpdir()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def tcp_streams(path):
    """Each direction's TCP payload bytes, in sequence order, keyed by (src port, dst port)."""
    rows = gui_tshark(path, "-o", "tcp.desegment_tcp_streams:FALSE", "-Y", "tcp.len > 0", "-T", "fields",
                      "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.seq_raw", "-e", "tcp.payload")
    segs = {}
    for line in rows.splitlines():
        sport, dport, seq, payload = line.split("\t")
        segs.setdefault((int(sport), int(dport)), {})[int(seq)] = bytes.fromhex(payload)
    streams = {}
    for key, by_seq in segs.items():
        data, want = b"", None
        for seq in sorted(by_seq):
            if want is None or seq == want:
                data += by_seq[seq]
                want = seq + len(by_seq[seq])
        streams[key] = data
    return streams


def pdus(stream):
    """The PDUs of a byte stream: (type, flags, hlen, pdo, bytes)."""
    out, at = [], 0
    while at + 8 <= len(stream):
        t, flags, hlen, pdo, plen = struct.unpack_from("<BBBBI", stream, at)
        out.append((t, flags, hlen, pdo, stream[at:at + plen]))
        at += plen
    check(at == len(stream), f"the stream ends on a PDU boundary ({at} of {len(stream)})")
    return out


# ---- capture: writes (in capsule and by R2T/H2CData) then reads, dissected as NVMe/TCP
for digests in (False, True):
    name = "cap_dgst" if digests else "cap"
    out = os.path.join(d, name)
    dg = ", hdgst: true, ddgst: true" if digests else ""
    _, _, _, res = run(f"name: {name}\nfabric: tcp" + BASE + f"""
capture: {{pcap: hosts}}
workloads:
  - {{name: w, kind: nvme, initiator: h, target: t, nsid: 2, rw: write, bs: 16KiB, iodepth: 4, size: 256KiB{dg}}}
  - {{name: w4, kind: nvme, initiator: h, target: t, nsid: 1, rw: randwrite, bs: 4KiB, iodepth: 2, size: 64KiB,
     start: 1ms{dg}}}
  - {{name: r, kind: nvme, initiator: h, target: t, nsid: 2, rw: randread, bs: 16KiB, iodepth: 4, size: 256KiB,
     start: 2ms{dg}}}
""", out)
    if not res:
        continue
    for w in res["workloads"]:
        check(w["data_verified"] and w["finished"] and w["errors"] == 0, f"{name}: {w['name']} verified")
    path = os.path.join(out, "pcap", "h-0.pcap")
    check_no_malformed(path)
    check(gui_tshark(path, "-Y", "tcp.analysis.flags && !tcp.analysis.window_update").strip() == "",
          f"{name}: no TCP retransmissions or losses")
    check(gui_tshark(path, "-Y", "nvme-tcp.unknown_data").strip() == "",
          f"{name}: no PDU Wireshark cannot tie to a command")
    types = gui_tshark(path, "-Y", "nvme-tcp", "-T", "fields", "-E", "occurrence=a", "-e", "nvme-tcp.type")
    seen = {int(t) for line in types.split() for t in line.split(",")}
    check(seen == {0, 1, 4, 5, 6, 7, 9}, f"{name}: ICReq, ICResp, CapsuleCmd, CapsuleResp, H2CData, "
          f"C2HData and R2T all dissected as NVMe/TCP: {sorted(seen)}")
    rows = gui_tshark(path, "-Y", "nvme.cmd.opc || nvme.cqe.cid", "-T", "fields", "-E", "occurrence=a",
                      "-e", "frame.number", "-e", "nvme.cmd.opc", "-e", "nvme.cmd.cid", "-e", "nvme.cqe_pkt",
                      "-e", "nvme.cqe.cid")
    cmds, cqes = {}, {}
    for line in rows.splitlines():
        f = line.split("\t")
        for i, opc in enumerate(f[1].split(",") if f[1] else []):
            cqe_pkt = f[3].split(",")[i] if f[3] else ""
            cmds[(int(f[0]), i)] = (int(opc, 0), int(f[2].split(",")[i], 0), int(cqe_pkt) if cqe_pkt else None)
        for cid in f[4].split(",") if f[4] else []:
            cqes.setdefault(int(f[0]), []).append(int(cid, 0))
    reads = sum(1 for c in cmds.values() if c[0] == 2)
    writes = sum(1 for c in cmds.values() if c[0] == 1)
    check(reads == 16 and writes == 16 + 16, f"{name}: 32 writes and 16 reads dissected as NVMe ({writes}, {reads})")
    unmatched = [n for n, c in cmds.items() if c[2] is None or c[1] not in cqes.get(c[2], [])]
    check(not unmatched, f"{name}: every NVMe command links to a completion of its CID (not: {unmatched[:5]})")
    fabrics = gui_tshark(path, "-Y", "nvme.fabrics.cmd.connect.qid", "-T", "fields", "-e", "nvme.fabrics.cmd.connect.qid")
    check(sorted(int(q, 0) for q in fabrics.split()) == [0, 0, 0, 1, 1, 1],
          f"{name}: a Connect on each job's admin and I/O queue: {fabrics.split()}")
    # The PDUs themselves: lengths, offsets, digests.
    streams = tcp_streams(path)
    check(all(4420 in k for k in streams), f"{name}: every connection is to port 4420: {sorted(streams)}")
    checked = 0
    for (sport, dport), data in streams.items():
        for t, flags, hlen, pdo, pdu in pdus(data):
            if t in (0, 1):
                check(hlen == 128 and len(pdu) == 128 and pdu[11] == (3 if digests else 0),
                      f"{name}: IC PDU of 128 bytes with the digests asked for")
                continue
            check(bool(flags & 1) == digests, f"{name}: HDGSTF on every PDU after IC exactly when asked for")
            if flags & 1:
                check(struct.unpack_from("<I", pdu, hlen)[0] == crc32c(pdu[:hlen]), f"{name}: header digest")
            if pdo:
                end = len(pdu) - (4 if flags & 2 else 0)
                if flags & 2:
                    check(struct.unpack_from("<I", pdu, end)[0] == crc32c(pdu[pdo:end]), f"{name}: data digest")
                check(bool(flags & 2) == digests, f"{name}: DDGSTF on every PDU with data exactly when asked for")
            checked += 1
    check(checked > 100, f"{name}: PDUs checked ({checked})")
    if digests:  # Wireshark agrees, when asked to check them
        st = gui_tshark(path, "-o", "nvme-tcp.check_hdgst:TRUE", "-o", "nvme-tcp.check_ddgst:TRUE", "-Y",
                        "nvme-tcp.hdgst.status", "-T", "fields", "-E", "occurrence=a", "-e", "nvme-tcp.hdgst.status",
                        "-e", "nvme-tcp.ddgst.status")
        statuses = [v for line in st.split() for v in line.split(",")]
        check(len(statuses) > 100 and set(statuses) == {"1"}, f"{name}: Wireshark finds every digest good: "
              f"{sorted(set(statuses))}")

# ---- loss: TCP resends what was lost, byte for byte, and the GUI shows only
# Wireshark's own reassembly error on a resend that spans two PDUs
# (docs/captures.md), on frames that repeat an earlier segment exactly
out = os.path.join(d, "lossy")
_, _, _, res = run("name: lossy\nfabric: tcp\nseed: 3" + BASE + """
capture: {pcap: hosts}
workloads:
  - {name: w, kind: nvme, initiator: h, target: t, nsid: 2, rw: randwrite, bs: 4k, iodepth: 16, runtime: 200us}
""", out, "--set", "link.loss=0.01")
if res:
    w = res["workloads"][0]
    check(w["data_verified"] and w["errors"] == 0 and w["ops"] > 0, f"lossy: verified, no errors: {w['ops']} I/Os")
    path = os.path.join(out, "pcap", "h-0.pcap")
    check(gui_tshark(path, "-Y", "tcp.analysis.retransmission || tcp.analysis.fast_retransmission").strip() != "",
          "lossy: TCP resent what the link lost")
    problems = e2e.gui_problems(path)
    overlaps = [line for line, known in problems if e2e.TCP_RESEND_OVERLAP in line]
    check(overlaps and all(known for line, known in problems),
          f"lossy: Wireshark's resend overlap, on identical resends only: {overlaps}")
    check_no_malformed(path)

# ---- QD 1: IOPS = 1 / latency; the latency order over the same topology (a RAM namespace)
lat, cpu = {}, {}
for fabric in ("ib", "roce_v2", "iwarp", "tcp"):
    out = os.path.join(d, "qd1_" + fabric)
    _, _, _, res = run(f"name: qd1_{fabric}\nfabric: {fabric}" + BASE + """
workloads:
  - {name: r, kind: nvme, initiator: h, target: t, nsid: 2, rw: randread, bs: 4KiB, iodepth: 1, runtime: 1ms,
     ramp_time: 100us}
""", out)
    if not res:
        continue
    w = res["workloads"][0]
    lat[fabric] = w["lat_ns"]["mean"]
    check(abs(w["iops"] * w["lat_ns"]["mean"] / 1e9 - 1) < 0.05,
          f"{fabric}: IOPS at QD 1 is 1/latency within 5% ({w['iops']:.0f} vs {1e9 / w['lat_ns']['mean']:.0f})")
    busy = {h["name"]: h["cpu_busy_ps"] for h in res["hosts"]}
    cpu[fabric] = (busy["h"] / w["ops"], busy["t"] / w["ops"])
    check(w["clat_ns"]["percentile"]["50.000000"] <= w["clat_ns"]["percentile"]["99.000000"],
          f"{fabric}: percentiles in order")
if len(lat) == 4:
    check(lat["ib"] <= lat["roce_v2"] < lat["iwarp"] < lat["tcp"],
          f"QD 1 latency IB <= RoCE v2 < iWARP < NVMe/TCP: {lat}")
if "tcp" in cpu:
    check(cpu["tcp"][0] > 1e6 and cpu["tcp"][1] > 1e6,
          f"tcp: the host and the target spend microseconds of CPU per I/O: {cpu['tcp']} ps")

# ---- writes then reads of the same region verify (randrw too), R2T for the 8 KiB writes
out = os.path.join(d, "verify")
_, _, _, res = run("name: verify\nfabric: tcp" + BASE + """
workloads:
  - {name: w, kind: nvme, initiator: h, target: t, rw: randwrite, bs: 8KiB, iodepth: 16, size: 1MiB}
  - {name: rw, kind: nvme, initiator: h, target: t, rw: randrw, rwmixread: 70, bs: 8KiB, iodepth: 16, size: 1MiB,
     start: 3ms, ddgst: true}
  - {name: r, kind: nvme, initiator: h, target: t, rw: read, bs: 8KiB, iodepth: 16, size: 1MiB, start: 8ms}
capture: {pcap: none}
""", out)
if res:
    for w in res["workloads"]:
        check(w["data_verified"] and w["bad_blocks"] == 0 and w["finished"], f"verify: {w['name']} verified")

# ---- compare on the storage example: every fabric, NVMe/TCP too, with IOPS, clat, CPU per I/O and cost
out = os.path.join(d, "compare")
p = e2e.rdmasim("compare", os.path.join(e2e.SOURCE, "examples", "nvmeof_compare.yaml"), "--out", out)
check(p.returncode == 0, f"compare nvmeof_compare.yaml: exit {p.returncode}: {p.stderr[-1000:]}")
for row in ("randread IOPS", "randread clat p99.9 us", "randread initiator cpu us/IO (work)",
            "randread initiator cpu us/IO (incl. polling)", "randread target cpu us/IO (work)",
            "randread target cpu us/IO (incl. polling)", "randread target polling cores",
            "randread cost per million IOPS"):
    check(row in p.stdout, f"compare prints '{row}'")
if p.returncode == 0:
    with open(os.path.join(out, "compare.json")) as f:
        cmp = json.load(f)
    names = [e["fabric"] for e in cmp["fabrics"]]
    check(names == ["ib", "roce_v1", "roce_v2", "iwarp", "tcp"], f"compare runs every fabric, tcp last: {names}")
    for e in cmp["fabrics"]:
        w = e["workloads"][0] if e.get("workloads") else {}
        check(w.get("iops", 0) > 0 and w.get("initiator_cpu_ps_per_io", 0) > 0
              and w.get("target_cpu_ps_per_io", 0) > 0 and w.get("data_verified"),
              f"compare: {e['fabric']} has IOPS and CPU per I/O at both ends: {w}")
        # The SPDK-style target (cpu: poll, 2 cores) spins on RDMA; NVMe/TCP's threads sleep.
        work, total = w.get("target_cpu_work_ps_per_io", 0), w.get("target_cpu_ps_per_io", 0)
        if e["fabric"] == "tcp":
            check(0 < work == total and w.get("target_polling_cores") == 0,
                  f"compare: tcp: the target's CPU per I/O is all work: {w}")
        else:
            check(0 < work < total and w.get("target_polling_cores") == 2,
                  f"compare: {e['fabric']}: the target's work per I/O is below its total with polling: {w}")

e2e.finish()
