"""RoCE v1 on two hosts and a bridge (examples/roce_v1_two_hosts.yaml):
every data frame is EtherType 0x8915 and dissects as InfiniBand with a GRH
and a BTH, none malformed, ICRC right by an implementation written here from
IBA annex A16; the IPv6 neighbour discovery that finds the peer's MAC comes
before the first data frame with valid checksums; the opcodes tell the story
of results.json; an 802.1Q VLAN tags every frame; the same seed gives the
same bytes."""
import filecmp
import os
import struct
import zlib

from e2e import (OP, SOURCE, check, check_no_malformed, finish, read_pcap, run, tmpdir, tshark, tshark_fields,
                 workload)

EXAMPLE = os.path.join(SOURCE, "examples/roce_v1_two_hosts.yaml")
ROCE_V1 = "(eth.type == 0x8915 || vlan.etype == 0x8915)"
ND = "(icmpv6.type == 135 || icmpv6.type == 136)"


def icrc_v1(frame):
    """IBA A16.4.1 / 7.8.1: CRC-32 over 8 bytes of ones (the absent LRH),
    the GRH with traffic class, flow label and hop limit as ones, the BTH
    with byte 4 as ones, then the rest up to the ICRC, which is carried
    least significant byte first. Returns (computed, carried) or None."""
    off = 14
    ethertype = struct.unpack(">H", frame[12:14])[0]
    if ethertype == 0x8100:
        ethertype = struct.unpack(">H", frame[16:18])[0]
        off = 18
    if ethertype != 0x8915:
        return None
    pay_len = struct.unpack(">H", frame[off + 4:off + 6])[0]
    packet = bytearray(frame[off:off + 40 + pay_len])
    body, carried = packet[:-4], struct.unpack("<I", bytes(packet[-4:]))[0]
    body[0] |= 0x0F           # traffic class, low half
    body[1:4] = b"\xff" * 3   # traffic class, high half; flow label
    body[7] = 0xFF            # hop limit
    body[40 + 4] = 0xFF       # BTH: FECN, BECN, reserved
    return zlib.crc32(b"\xff" * 8 + bytes(body)) & 0xFFFFFFFF, carried


def check_capture(path, vlan=None):
    """Clean RoCE v1 capture. Returns the number of RoCE v1 frames."""
    linktype, frames = read_pcap(path)
    check(linktype == 1, f"{path}: linktype {linktype}, expected 1 (Ethernet)")
    check_no_malformed(path)
    bad = tshark(path, "-Y", f"!(({ROCE_V1} && infiniband.grh && infiniband.grh.nxthdr == 27 && infiniband.bth"
                             f" && infiniband.invariant.crc && !infiniband.vendor) || {ND})")
    check(bad.strip() == "", f"{path}: frames neither RoCE v1 nor neighbour discovery:\n{bad[:1500]}")
    nd = tshark_fields(path, ["icmpv6.checksum.status", "ipv6.hlim"], ND)
    check(all(r == ["1", "255"] for r in nd), f"{path}: ND checksums good and hop limit 255: {nd[:4]}")
    n, wrong = 0, 0
    for i, (_, f) in enumerate(frames):
        r = icrc_v1(f)
        if r is None:
            continue
        n += 1
        if r[0] != r[1]:
            wrong += 1
            if wrong <= 3:
                print(f"{path}: frame {i + 1}: ICRC {r[1]:#010x}, expected {r[0]:#010x}")
    check(wrong == 0, f"{path}: {wrong} RoCE v1 frame(s) with a wrong ICRC")
    if vlan is not None:
        vid, pcp = vlan
        rows = tshark_fields(path, ["vlan.id", "vlan.priority", "vlan.etype"])
        check(all(r[0] == str(vid) for r in rows), f"{path}: every frame in VLAN {vid}")
        check(all(r[1] == str(pcp) for r in rows if r[2] == "0x8915"), f"{path}: RoCE v1 frames at PCP {pcp}")
        check(all(r[1] == "0" for r in rows if r[2] == "0x86dd"), f"{path}: neighbour discovery at PCP 0")
    return n


tmp = tmpdir()
out = os.path.join(tmp, "v1")
_, stdout, _, res = run(EXAMPLE, out)
check(res is not None and res["fabric"] == "roce_v1", "results.json written for roce_v1")
for w in res["workloads"]:
    check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]}, f"{w['name']}: every completion successful")
    check(w["data_verified"], f"{w['name']}: data verified")
check(sum(p["drops"] for p in res["ports"]) == 0, "no drops")

pdir = os.path.join(out, "pcap")
check(sorted(os.listdir(pdir)) == ["a-0.pcap", "b-0.pcap", "s1-0.pcap", "s1-1.pcap"], "a capture per port")
total = sum(check_capture(os.path.join(pdir, f)) for f in sorted(os.listdir(pdir)))
check(total > 400, f"RoCE v1 frames were captured ({total})")

# Address resolution before the first data frame: a solicits b's link-local
# GID (fe80:: + EUI-64 of 02:00:00:00:00:02) at its solicited-node group and
# b answers with its MAC.
a_pcap = os.path.join(pdir, "a-0.pcap")
rows = tshark_fields(a_pcap, ["frame.number", "icmpv6.type", "ipv6.src", "ipv6.dst", "icmpv6.nd.ns.target_address",
                              "icmpv6.nd.na.target_address", "icmpv6.opt.linkaddr", "eth.type"])
first_data = next(int(r[0]) for r in rows if r[7] == "0x8915")
ns = [r for r in rows if r[1] == "135" and r[2] == "fe80::ff:fe00:1"]
na = [r for r in rows if r[1] == "136" and r[2] == "fe80::ff:fe00:2"]
check(len(ns) == 1 and ns[0][3] == "ff02::1:ff00:2" and ns[0][4] == "fe80::ff:fe00:2"
      and ns[0][6] == "02:00:00:00:00:01", f"a solicits b's GID with its own MAC: {ns}")
check(len(na) == 1 and na[0][3] == "fe80::ff:fe00:1" and na[0][5] == "fe80::ff:fe00:2"
      and na[0][6] == "02:00:00:00:00:02", f"b advertises its MAC to a: {na}")
check(na and int(na[0][0]) < first_data, "the advertisement arrives before a's first data frame")
gids = tshark_fields(a_pcap, ["infiniband.grh.sgid", "infiniband.grh.dgid", "eth.src", "eth.dst"], ROCE_V1)
check({tuple(r) for r in gids} == {("fe80::ff:fe00:1", "fe80::ff:fe00:2", "02:00:00:00:00:01", "02:00:00:00:00:02"),
                                   ("fe80::ff:fe00:2", "fe80::ff:fe00:1", "02:00:00:00:00:02", "02:00:00:00:00:01")},
      "GIDs are the hosts' link-local addresses and the MACs behind them")

# The opcodes tell results.json's story (a sends writes, read requests and
# datagrams; b sends SENDs, READ responses and ACKs).
ops_a = [int(r[0]) for r in tshark_fields(a_pcap, ["infiniband.bth.opcode"], "infiniband.grh.sgid == fe80::ff:fe00:1")]
ops_b = [int(r[0]) for r in tshark_fields(a_pcap, ["infiniband.bth.opcode"], "infiniband.grh.sgid == fe80::ff:fe00:2")]
wr, rd, sd, ud = (workload(res, n) for n in ("write", "read", "send", "datagram"))
check(ops_a.count(OP["WRITE_FIRST"]) == wr["ops"] and ops_a.count(OP["WRITE_LAST"]) == wr["ops"],
      "a WRITE FIRST and LAST per write")
check(ops_a.count(OP["WRITE_MIDDLE"]) == wr["ops"] * (65536 // 4096 - 2), "WRITE MIDDLEs")
check(ops_a.count(OP["READ_REQUEST"]) == rd["ops"], "a READ request per read")
check(ops_a.count(100) == ud["ops"], "a UD SEND ONLY per datagram")
check(ops_b.count(OP["SEND_ONLY"]) == sd["ops"], "b's SEND ONLYs")
check(ops_b.count(OP["READ_RESPONSE_FIRST"]) == rd["ops"] and ops_b.count(OP["READ_RESPONSE_LAST"]) == rd["ops"],
      "READ responses from b")
check(ops_b.count(OP["ACK"]) >= 1, "ACKs from b")

# Same seed, same bytes; another seed, other PSNs.
out2 = os.path.join(tmp, "v1-again")
run(EXAMPLE, out2)
same = filecmp.cmpfiles(pdir, os.path.join(out2, "pcap"), sorted(os.listdir(pdir)), shallow=False)
check(same[0] == sorted(os.listdir(pdir)), f"same seed: byte-identical captures (differ: {same[1]}, {same[2]})")
with open(os.path.join(out, "results.json")) as f1, open(os.path.join(out2, "results.json")) as f2:
    check(f1.read() == f2.read(), "same seed: identical results.json")
out3 = os.path.join(tmp, "v1-seed2")
run(EXAMPLE, out3, "--seed", "2")
check(not filecmp.cmp(a_pcap, os.path.join(out3, "pcap", "a-0.pcap"), shallow=False), "another seed: other bytes")

# A VLAN: every frame tagged; the data at the VLAN's PCP.
out4 = os.path.join(tmp, "v1-vlan")
_, _, _, res4 = run(EXAMPLE, out4, "--set", "vlan={id: 100, pcp: 5}")
check(res4 is not None and all(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} for w in res4["workloads"]),
      "VLAN: every completion successful")
for f in sorted(os.listdir(os.path.join(out4, "pcap"))):
    check_capture(os.path.join(out4, "pcap", f), vlan=(100, 5))

finish()
