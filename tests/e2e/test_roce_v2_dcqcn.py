"""DCQCN on RoCE v2 (examples/roce_v2_dcqcn_incast.yaml): the receiver of
CE-marked frames sends CNPs (BTH opcode 129, BECN set, 16 reserved bytes, a
correct ICRC) to the QPs that sent them, at most one per QP per 50 us; the
senders cut their rates, so the same incast needs far fewer PFC pauses and
ECN marks than with DCQCN off. What the captures show matches the counts in
results.json, and the data still lands."""
import collections
import os
import struct

from e2e import SOURCE, check, check_roce_v2_capture, finish, read_pcap, run, tmpdir

EXAMPLE = os.path.join(SOURCE, "examples", "roce_v2_dcqcn_incast.yaml")
CNP = 129
ACK = 17


def bth(frame):
    """(opcode, BTH byte 4, (destination IP, dest QP)) of a RoCE v2 IPv4 frame, or None."""
    if struct.unpack(">H", frame[12:14])[0] != 0x0800 or frame[23] != 17:
        return None
    udp = 14 + (frame[14] & 0x0F) * 4
    if struct.unpack(">H", frame[udp + 2:udp + 4])[0] != 4791:
        return None
    b = udp + 8
    return frame[b], frame[b + 4], (frame[30:34], struct.unpack(">I", frame[b + 4:b + 8])[0] & 0xFFFFFF)


def frames_from(path, ip):
    """The RoCE v2 frames of a capture that `ip` sent: [(time, bth(frame))]."""
    _, frames = read_pcap(path)
    return [(t, bth(f)) for t, f in frames if bth(f) and f[26:30] == ip]


H8_IP = bytes([10, 0, 0, 9])

out = os.path.join(tmpdir(), "on")
_, _, _, on = run(EXAMPLE, out)
w = on["workloads"][0]
check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["ops"] == 320, f"all writes complete ({w['completions']})")
check(w["data_verified"], "the receiver's memory holds the bytes sent")
hosts = {h["name"]: h for h in on["hosts"]}
sent = hosts["h8"]["cnps_sent"]
check(sent > 0, f"h8 sent CNPs ({sent})")
check(sum(hosts[f"h{i}"]["cnps_received"] for i in range(8)) == sent, "every CNP reached a sender")
check(all(hosts[f"h{i}"]["cnps_received"] > 0 for i in range(8)), "every sender was told to slow down")
check(sum(p["drops"] for p in on["ports"]) == 0, "no drops (PFC stays on)")

# Captures: clean, right ICRCs (CNPs included), counts that match.
h8 = os.path.join(out, "pcap", "h8-0.pcap")
h0 = os.path.join(out, "pcap", "h0-0.pcap")
for p in (h8, h0):
    check_roce_v2_capture(p, pfc=True)
cnps = [(t, b) for t, b in frames_from(h8, H8_IP) if b[0] == CNP]
check(len(cnps) == sent, f"h8's capture holds its {sent} CNPs ({len(cnps)})")
_, h8_frames = read_pcap(h8)
check(all(len(f) == 14 + 20 + 8 + 12 + 16 + 4 for _, f in h8_frames if bth(f) and bth(f)[0] == CNP),
      "a CNP is BTH + 16 reserved bytes + ICRC")
check(all(b[1] & 0x40 for _, b in cnps), "every CNP has BECN set")
to_h0 = [b for _, b in frames_from(h0, H8_IP)]
h0_qps = {b[2] for b in to_h0 if b[0] == ACK}
h0_cnps = [b for b in to_h0 if b[0] == CNP]
check(len(h0_cnps) == hosts["h0"]["cnps_received"], f"h0's capture holds the CNPs it received ({len(h0_cnps)})")
check(h0_cnps and all(b[2] in h0_qps for b in h0_cnps), "CNPs go to the QP that the ACKs go to: the sender's")
by_qp = collections.defaultdict(list)
for t, b in cnps:
    by_qp[b[2]].append(t)
gaps = [b - a for ts in by_qp.values() for a, b in zip(ts, ts[1:])]
check(len(by_qp) == 8 and all(g >= 50_000 for g in gaps),
      f"at most one CNP per QP per 50 us ({len(by_qp)} QPs, closest {min(gaps) if gaps else None} ns)")

# The same incast without DCQCN: PFC and ECN marking do all the work.
_, _, _, off = run(EXAMPLE, os.path.join(tmpdir(), "off"), "--set", "congestion_control.algorithm=none", "--set", "capture.pcap=none")
check(all(h["cnps_sent"] == 0 and h["cnps_received"] == 0 for h in off["hosts"]), "no CNPs with DCQCN off")
pauses = [sum(p["pause_frames"] for p in r["ports"]) for r in (on, off)]
marks = [sum(p["ecn_marks"] for p in r["ports"]) for r in (on, off)]
check(pauses[0] * 3 < pauses[1], f"DCQCN cuts the PFC pauses (on {pauses[0]}, off {pauses[1]})")
check(marks[0] * 3 < marks[1], f"DCQCN keeps the queue below the marking threshold more (on {marks[0]}, off {marks[1]})")
finish()
