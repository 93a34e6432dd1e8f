"""Ethernet's minimum frame (IEEE 802.3 4.2.3.3, 3.2.8): a MAC pads a frame
shorter than 64 bytes with zeros behind its data, so a capture from real
hardware, which leaves the FCS out, never holds an Ethernet frame under 60
bytes. Small experiments on every Ethernet fabric with captures on: RoCE v2's
zero-length SEND (58 bytes), iWARP's and kernel TCP's ACKs (54),
kernel TCP's 1-byte segments (55), UDP's 16-byte datagrams (58), RoCE v1 (no
frame of it is short), PFC and neighbour discovery. Every frame is at least
60 bytes; a short one is its datagram (IP total length, or the GRH's payload
length on RoCE v1), then zeros up to 60, which tshark shows as `eth.padding`;
a frame of 60 bytes or more carries no trailer; nothing is malformed, no
checksum wrong, no error-level expert info (two passes, as the GUI reads it).
Each port's tx_bytes and rx_bytes count the padded frames, as captured."""
import csv
import os
import struct

from e2e import check, check_no_malformed, finish, read_pcap, run, tmpdir, tshark_fields

MIN_FRAME = 60
TOPO = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
HOST_MAC = {"a": bytes.fromhex("020000000001"), "b": bytes.fromhex("020000000002")}

# A zero-length SEND (Wireshark's RPC-over-RDMA heuristic calls it
# malformed, a defect e2e.gui_problems knows), 1-byte WRITEs and READs, and
# 64-byte SENDs (a SEND of a few bytes trips that heuristic too).
IBA_SMALL = """\
  - {name: s0, kind: send, from: a, to: b, size: 0, count: 3}
  - {name: w1, kind: write_lat, from: a, to: b, size: 1, count: 3}
  - {name: r1, kind: rdma_read, from: b, to: a, size: 1, count: 3}
  - {name: lat, kind: send_lat, from: a, to: b, size: 64, count: 3}
"""
# An incast into c through a small buffer: PFC pauses the senders.
PFC_INCAST = """\
flow_control: pfc
link: {buffer: 32KiB}
topology: {hosts: [a, b, c], switches: [s1], links: [[a, s1], [b, s1], [c, s1]]}
workloads:
  - {name: in, kind: incast, from: [a, b], to: c, size: 64KiB, count: 8, outstanding: 4}
  - {name: s0, kind: send, from: a, to: b, size: 0, count: 3}
"""
# UDP of fewer than 8 bytes would do too, but Wireshark gives port 5001 to
# CPFI, whose dissector calls so short a datagram malformed.
SOCKETS_SMALL = """\
  - {name: lat, kind: send_lat, from: a, to: b, size: 1, count: 4}
  - {name: bw, kind: send_bw, from: a, to: b, size: 5, count: 4, outstanding: 2}
  - {name: udp, kind: udp, from: b, to: a, size: 16, rate: 1Gbps, duration: 2us}
"""

# (case, fabric, experiment body, extra arguments, whether some frame must have been short)
CASES = [
    ("roce_v2", "roce_v2", TOPO + "workloads:\n" + IBA_SMALL, [], True),
    ("roce_v2_ipv6", "roce_v2", "ip: ipv6\n" + TOPO + "workloads:\n" + IBA_SMALL, [], False),
    ("roce_v1", "roce_v1", TOPO + "workloads:\n" + IBA_SMALL, [], False),
    ("roce_v1_pfc", "roce_v1", PFC_INCAST, [], False),
    ("roce_v2_pfc", "roce_v2", PFC_INCAST, [], True),
    ("iwarp", "iwarp", TOPO + "workloads:\n  - {name: w1, kind: rdma_write, from: a, to: b, size: 1, count: 3}\n"
     "  - {name: lat, kind: send_lat, from: a, to: b, size: 64, count: 3}\n", [], True),
    ("tcp", "tcp", TOPO + "workloads:\n" + SOCKETS_SMALL, [], True),
    ("tcp_dpdk", "tcp", TOPO + "workloads:\n" + SOCKETS_SMALL,
     ["--set", "host.stack=dpdk", "--set", "host.cores=2"], True),
]


def datagram_end(frame):
    """Where the frame's datagram ends (IPv4 total length, IPv6 or RoCE v1
    GRH payload length, behind an 802.1Q tag if any), or None for a frame
    without one (PFC: its reserved bytes are its own)."""
    off = 12
    ethertype = struct.unpack(">H", frame[off:off + 2])[0]
    if ethertype == 0x8100:
        off += 4
        ethertype = struct.unpack(">H", frame[off:off + 2])[0]
    l3 = off + 2
    if ethertype == 0x0800:
        return l3 + struct.unpack(">H", frame[l3 + 2:l3 + 4])[0]
    if ethertype in (0x86DD, 0x8915):  # IPv6, and RoCE v1's GRH (the same 40 bytes)
        return l3 + 40 + struct.unpack(">H", frame[l3 + 4:l3 + 6])[0]
    return None


def check_frames(path, what):
    """Every frame at least 60 bytes, a short datagram padded with zeros and
    nothing else behind it; returns (frames, padded frames, kinds seen)."""
    linktype, frames = read_pcap(path)
    check(linktype == 1, f"{what}: linktype {linktype}, expected 1 (Ethernet)")
    padded, ethertypes = [], set()
    for i, (_, f) in enumerate(frames):
        ethertypes.add(struct.unpack(">H", f[12:14])[0])
        check(len(f) >= MIN_FRAME, f"{what}: frame {i + 1} is {len(f)} bytes, under the minimum of {MIN_FRAME}")
        end = datagram_end(f)
        if end is None:
            check(len(f) == MIN_FRAME, f"{what}: frame {i + 1} (not IP) is {len(f)} bytes, expected {MIN_FRAME}")
            continue
        if end < MIN_FRAME:
            padded.append(i + 1)
            check(len(f) == MIN_FRAME and f[end:] == bytes(MIN_FRAME - end),
                  f"{what}: frame {i + 1}: a {end}-byte datagram, then {f[end:].hex()} (expected zeros up to 60)")
        else:
            check(len(f) == end, f"{what}: frame {i + 1}: {len(f) - end} bytes behind its {end}-byte datagram")
    return frames, padded, ethertypes


def check_tshark(path, padded, what):
    """tshark: frame.len at least 60, eth.padding on exactly the padded
    frames, no eth.trailer; nothing malformed, no error (two passes)."""
    rows = tshark_fields(path, ["frame.number", "frame.len", "eth.padding", "eth.trailer"])
    check(rows, f"{what}: tshark read frames")
    short = [r[0] for r in rows if int(r[1]) < MIN_FRAME]
    check(not short, f"{what}: tshark's frame.len under {MIN_FRAME} in frames {short[:10]}")
    with_padding = {int(r[0]) for r in rows if len(r) > 2 and r[2]}
    check(with_padding == set(padded), f"{what}: eth.padding on frames {sorted(with_padding - set(padded))[:10]} "
          f"of no short datagram, missing on frames {sorted(set(padded) - with_padding)[:10]}")
    trailers = [r[0] for r in rows if len(r) > 3 and r[3]]
    check(not trailers, f"{what}: eth.trailer in frames {trailers[:10]}")
    check_no_malformed(path)


def check_counters(out, frames_of, what):
    """A host port's tx_bytes is what its capture shows it sent, rx_bytes
    what it shows it received: the pad counted."""
    with open(os.path.join(out, "ports.csv")) as f:
        ports = {(r["node"], r["port"]): r for r in csv.DictReader(f)}
    for host, frames in frames_of.items():
        sent = sum(len(f) for _, f in frames if f[6:12] == HOST_MAC[host])
        got = sum(len(f) for _, f in frames if f[6:12] != HOST_MAC[host])
        row = ports[(host, "0")]
        check(int(row["tx_bytes"]) == sent and int(row["rx_bytes"]) == got,
              f"{what}: {host}'s port counts tx {row['tx_bytes']}, rx {row['rx_bytes']}; "
              f"its capture holds {sent} sent, {got} received")


tmp = tmpdir()
for case, fabric, body, args, want_padded in CASES:
    out = os.path.join(tmp, case)
    _, _, _, res = run(f"name: {case}\nfabric: {fabric}\nseed: 1\n" + body + "capture: {pcap: hosts}\n", out, *args)
    if res is None:
        continue
    for w in res["workloads"]:  # udp counts its datagrams instead
        check(w["finished"] and w.get("data_verified", w["kind"] == "udp"),
              f"{case}: workload {w['name']} finished with its data intact")
    frames_of, padded_total, ethertypes = {}, 0, set()
    for host in ("a", "b"):
        path = os.path.join(out, "pcap", f"{host}-0.pcap")
        what = f"{case} {host}-0.pcap"
        frames, padded, kinds = check_frames(path, what)
        check_tshark(path, padded, what)
        frames_of[host] = frames
        padded_total += len(padded)
        ethertypes |= kinds
    check_counters(out, frames_of, case)
    if want_padded:
        check(padded_total > 0, f"{case}: some frame was short and padded")
    else:
        check(padded_total == 0, f"{case}: no frame is short on this fabric ({padded_total} padded)")
    if case.endswith("_pfc"):
        check(0x8808 in ethertypes, f"{case}: PFC frames were sent ({sorted(map(hex, ethertypes))})")

finish()
