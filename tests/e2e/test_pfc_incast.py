"""Priority flow control (802.1Qbb) on RoCE v1 and RoCE v2: an 8-to-1 incast
through one switch (examples/roce_v1_pfc_incast.yaml, roce_v2_pfc_incast.yaml).
With PFC nothing is dropped and every operation completes; the PAUSE frames
dissect as PFC with priority 3 enabled and 0xFFFF or 0 quanta, come in
XOFF/XON pairs and are counted on both sides. Without PFC the receiver's
port drops and the RC transport recovers by retransmission. The same seed
gives the same bytes."""
import filecmp
import os
import struct

from e2e import (SOURCE, check, check_no_malformed, finish, read_pcap, roce_v1_icrc, roce_v2_icrc, run, tmpdir,
                 tshark, tshark_fields)

tmp = tmpdir()
SENDERS = [f"h{i}" for i in range(8)]
PFC_DST = bytes.fromhex("0180c2000001")


def pfc_frames(frames):
    """[(enable vector, [8 quanta])] of the PFC frames among `frames` (802.3 annex 31D)."""
    out = []
    for _, f in frames:
        if f[:6] == PFC_DST and f[12:14] == b"\x88\x08" and f[14:16] == b"\x01\x01":
            out.append((struct.unpack(">H", f[16:18])[0], list(struct.unpack(">8H", f[18:34]))))
    return out


def data_ok(fabric, frame):
    """(is RoCE data, ICRC right)."""
    et = struct.unpack(">H", frame[12:14])[0]
    if fabric == "roce_v1" and (et == 0x8915 or (et == 0x8100 and frame[16:18] == b"\x89\x15")):
        c, w = roce_v1_icrc(frame)
        return True, c == w
    if fabric == "roce_v2" and et == 0x0800:
        c, w = roce_v2_icrc(frame)
        return True, c == w
    return False, True


def all_completed(res, what):
    w = res["workloads"][0]
    check(w["completions"] == {"IBV_WC_SUCCESS": 160} and w["ops"] == 160,
          f"{what}: 160 writes completed successfully ({w['completions']})")
    check(w["data_verified"], f"{what}: receiver memory holds the bytes sent")


for fabric in ("roce_v1", "roce_v2"):
    example = os.path.join(SOURCE, f"examples/{fabric}_pfc_incast.yaml")

    # ---- PFC on: lossless.
    out = os.path.join(tmp, fabric)
    _, _, _, res = run(example, out)
    all_completed(res, f"{fabric} with PFC")
    drops = sum(p["drops"] for p in res["ports"])
    check(drops == 0, f"{fabric} with PFC: no drops ({drops})")
    ports = {(p["node"], p["port"]): p for p in res["ports"]}
    pdir = os.path.join(out, "pcap")
    for i, h in enumerate(SENDERS):
        sw = ports[("s0", i)]
        check(sw["pause_frames"] > 0 and sw["pause_frames"] == ports[(h, 0)]["pause_frames"],
              f"{fabric}: s0 port {i} paused {h}; both count the PFC frames ({sw['pause_frames']})")
        check(ports[(h, 0)]["credit_wait_ps"] > 0, f"{fabric}: {h} waited while paused")
        # What the switch port sent, as the sender received it.
        _, frames = read_pcap(os.path.join(pdir, f"{h}-0.pcap"))
        pfc = pfc_frames(frames)
        check(len(pfc) == sw["pause_frames"], f"{fabric}: {h}-0.pcap holds the {sw['pause_frames']} PFC frames")
        check(all(e == 0x0008 and q[3] in (0xFFFF, 0) and q[:3] + q[4:] == [0] * 7 for e, q in pfc),
              f"{fabric}: PFC frames enable priority 3 only, with 0xFFFF (XOFF) or 0 (XON) quanta")
        check(pfc and pfc[0][1][3] == 0xFFFF and pfc[-1][1][3] == 0,
              f"{fabric}: {h}: the first PFC frame pauses, the last resumes")
        xoff = [q[3] for _, q in pfc]
        check(all(not (a == 0 and b == 0) for a, b in zip(xoff, xoff[1:])), f"{fabric}: {h}: no XON without an XOFF")
        bad = sum(1 for _, f in frames if not data_ok(fabric, f)[1])
        check(bad == 0, f"{fabric}: {h}: every ICRC right ({bad} wrong)")
    check(ports[("s0", 8)]["pause_frames"] == 0 and ports[("h8", 0)]["pause_frames"] == 0,
          f"{fabric}: the receiver's link is never paused")
    # The bottleneck port sends one frame at a time: each frame reaches h8
    # at least its own serialisation time (with preamble, FCS and gap, 24
    # bytes, at 100 Gb/s) after the one before, however many senders
    # converge on the switch in the same picosecond.
    _, frames = read_pcap(os.path.join(pdir, "h8-0.pcap"))
    rx = [(t, f) for t, f in frames if f[6:12] != bytes.fromhex("020000000009")]  # not h8's own
    overlap = sum(1 for (t0, _), (t1, f1) in zip(rx, rx[1:]) if (t1 - t0) * 1e-9 < (len(f1) + 24) * 8 / 100e9 - 1e-9)
    check(len(rx) > 1000 and overlap == 0, f"{fabric}: frames to h8 never overlap on its link ({overlap} did)")

    # tshark: PFC frames are MAC control CBFC with the right vector and quanta.
    for f in ("h0-0.pcap", "s0-0.pcap", "s0-8.pcap"):
        path = os.path.join(pdir, f)
        check_no_malformed(path)
        data = "(eth.type == 0x8915 || vlan.etype == 0x8915) && infiniband.grh" if fabric == "roce_v1" else \
            "udp.dstport == 4791"
        other = tshark(path, "-Y", f"!(({data} && infiniband.bth && !infiniband.vendor) || macc.opcode == 0x0101"
                                   " || icmpv6.type == 135 || icmpv6.type == 136)")
        check(other.strip() == "", f"{fabric}: {f}: only RoCE data, PFC and neighbour discovery:\n{other[:1000]}")
    rows = tshark_fields(os.path.join(pdir, "h0-0.pcap"),
                         ["eth.dst", "macc.cbfc.enbv", "macc.cbfc.pause_time.c3", "macc.cbfc.pause_time.c0"],
                         "macc.opcode == 0x0101")
    check(rows and all(r[0] == "01:80:c2:00:00:01" and int(r[1], 0) == 8 and r[2] in ("65535", "0") and r[3] == "0"
                       for r in rows), f"{fabric}: tshark reads CBFC pauses for C3: {rows[:3]}")
    if fabric == "roce_v1":
        tags = tshark_fields(os.path.join(pdir, "s0-8.pcap"), ["vlan.id", "vlan.priority"], "vlan.etype == 0x8915")
        check(tags and all(t == ["0", "3"] for t in tags), "roce_v1: data is priority-tagged: VID 0, PCP 3")
    else:
        dscp = tshark_fields(os.path.join(pdir, "s0-8.pcap"), ["ip.dsfield.dscp"], "udp.dstport == 4791")
        check(dscp and all(d == ["26"] for d in dscp), "roce_v2: data carries DSCP 26 (priority 3)")

    # Same seed, same bytes (PFC timers included).
    again = os.path.join(tmp, fabric + "-again")
    run(example, again)
    names = sorted(os.listdir(pdir))
    same = filecmp.cmpfiles(pdir, os.path.join(again, "pcap"), names, shallow=False)
    check(same[0] == names, f"{fabric}: same seed, byte-identical captures (differ: {same[1]})")

    # ---- PFC off: the receiver's port overflows; RC recovers.
    out = os.path.join(tmp, fabric + "-lossy")
    _, _, _, res = run(example, out, "--set", "flow_control=none")
    all_completed(res, f"{fabric} without PFC")
    ports = {(p["node"], p["port"]): p for p in res["ports"]}
    check(ports[("s0", 8)]["drops"] > 0, f"{fabric} without PFC: the port to the receiver drops "
                                         f"({ports[('s0', 8)]['drops']})")
    check(sum(p["pause_frames"] for p in res["ports"]) == 0, f"{fabric} without PFC: no PFC frames")
    # Recovery shows as sequence-error NAKs (AETH syndrome 0x60..) from the
    # receiver and retransmitted PSNs from the senders.
    h8 = os.path.join(out, "pcap", "h8-0.pcap")
    naks = tshark_fields(h8, ["infiniband.aeth.syndrome"], "infiniband.aeth.syndrome >= 96")
    _, frames = read_pcap(os.path.join(out, "pcap", "h0-0.pcap"))
    psns, repeats = set(), 0
    for _, f in frames:
        ok, _ = data_ok(fabric, f)
        if not ok:
            continue
        if fabric == "roce_v1":
            bth = 14 + (4 if f[12:14] == b"\x81\x00" else 0) + 40
        else:
            bth = 14 + 20 + 8
        if f[bth] in (6, 7, 8):  # RDMA WRITE FIRST, MIDDLE, LAST
            psn = struct.unpack(">I", f[bth + 8:bth + 12])[0] & 0xFFFFFF
            repeats += psn in psns
            psns.add(psn)
    check(len(naks) > 0 or repeats > 0, f"{fabric} without PFC: recovery is visible ({len(naks)} NAKs, "
                                        f"{repeats} retransmitted PSNs from h0)")
    check(repeats > 0, f"{fabric} without PFC: h0 retransmitted ({repeats})")

finish()
