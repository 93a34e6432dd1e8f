"""iWARP end to end: the examples run, every capture is a valid TCP stream
(checksums validated by tshark), tshark finds the MPA request and reply of
every connection and dissects every FPDU as MPA + DDP + RDMAP with the right
opcode and a good CRC32c, the CRC32c also checked here independently, the
receiver's memory holds the bytes sent (also under 1% loss, where the capture
shows retransmissions), a bad rkey ends in IBV_WC_REM_ACCESS_ERR and a
Terminate, the same seed gives byte-identical captures, and the loader refuses
what iWARP does not have."""

import filecmp
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import check  # noqa: E402

# tshark hands a segment it judges retransmitted or out of order to no
# subdissector; every segment here carries whole FPDUs (an MPA-aware TCP), so
# the dissection checks turn sequence analysis off and look at each one. The
# retransmission check turns it back on.
IWARP_OPTS = ["-o", "tcp.try_heuristic_first:TRUE", "-o", "tcp.analyze_sequence_numbers:FALSE"]
SEQ_OPTS = ["-o", "tcp.try_heuristic_first:TRUE"]
WRITE, READ_REQ, READ_RESP, SEND, SEND_SE, TERMINATE = 0x0, 0x1, 0x2, 0x3, 0x5, 0x7

# ----------------------------------------------------------- CRC32c (RFC 3385)
_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


def tcp_segments(path):
    """[(src, sport, dst, dport, seq, flags, payload)] of an Ethernet + IPv4/IPv6 + TCP capture."""
    _lt, frames = e2e.read_pcap(path)
    out = []
    for _ts, f in frames:
        et = struct.unpack(">H", f[12:14])[0]
        if et == 0x0800:
            ihl = (f[14] & 0x0F) * 4
            total = struct.unpack(">H", f[16:18])[0]
            if f[23] != 6:
                continue
            src, dst = f[26:30], f[30:34]
            seg = f[14 + ihl:14 + total]
        elif et == 0x86DD:
            plen = struct.unpack(">H", f[18:20])[0]
            if f[20] != 6:
                continue
            src, dst = f[22:38], f[38:54]
            seg = f[54:54 + plen]
        else:
            continue
        sport, dport, seq = struct.unpack(">HHI", seg[:8])
        doff = (seg[12] >> 4) * 4
        out.append((src, sport, dst, dport, seq, seg[13], seg[doff:]))
    return out


def check_fpdu_crcs(path):
    """Independent MPA check (RFC 5044, no markers): every data segment after the
    MPA startup is whole FPDUs, each with a right CRC32c. Returns the FPDU count."""
    fpdus = bad = 0
    startup = {}
    for src, sport, dst, dport, _seq, _flags, pl in tcp_segments(path):
        if not pl:
            continue
        key = (src, sport, dst, dport)
        if pl.startswith(b"MPA ID Req Frame") or pl.startswith(b"MPA ID Rep Frame"):
            startup[key] = True
            continue
        if not check(key in startup or (dst, dport, src, sport) in startup, f"{path}: FPDU before MPA startup"):
            return fpdus
        off = 0
        while off < len(pl):
            ulen = struct.unpack(">H", pl[off:off + 2])[0]
            body = 2 + ulen
            body += (-body) % 4
            if off + body + 4 > len(pl):
                check(False, f"{path}: FPDU runs past its TCP segment")
                return fpdus
            carried = struct.unpack("<I", pl[off + body:off + body + 4])[0]
            fpdus += 1
            if crc32c(pl[off:off + body]) != carried:
                bad += 1
            off += body + 4
    check(bad == 0, f"{path}: {bad} of {fpdus} FPDUs have a wrong CRC32c (independent check)")
    return fpdus


def check_iwarp_capture(path, opcodes_expected):
    """tshark's view of one capture. Returns the set of RDMAP opcodes seen."""
    e2e.check_no_malformed(path)
    check(e2e.tshark(path, *IWARP_OPTS, "-Y", "!tcp").strip() == "", f"{path}: frames that are not TCP")
    bad_sums = e2e.tshark(path, *IWARP_OPTS, "-Y", "tcp.checksum.status == 0 || ip.checksum.status == 0")
    check(bad_sums.strip() == "", f"{path}: bad TCP/IP checksums:\n{bad_sums[:1000]}")
    req = len(e2e.tshark(path, *IWARP_OPTS, "-Y", "iwarp_mpa.req").splitlines())
    rep = len(e2e.tshark(path, *IWARP_OPTS, "-Y", "iwarp_mpa.rep").splitlines())
    check(req > 0 and req == rep, f"{path}: MPA requests {req} and replies {rep}")
    # Every segment with payload that is not the MPA startup is an FPDU with DDP and RDMAP.
    stray = e2e.tshark(path, *IWARP_OPTS, "-Y",
                       "tcp.len > 0 && !iwarp_mpa.req && !iwarp_mpa.rep && "
                       "!(iwarp_mpa.fpdu && iwarp_ddp && iwarp_rdma)")
    check(stray.strip() == "", f"{path}: data segments not dissected as MPA/DDP/RDMAP:\n{stray[:1500]}")
    rows = e2e.tshark_fields(path, ["iwarp_rdma.opcode", "iwarp_ddp.tagged_flag"], "iwarp_rdma")
    ops = set()
    for row in rows:
        for op, tagged in zip(row[0].split(","), row[1].split(",")):
            o = int(op, 16)
            ops.add(o)
            # RFC 5041: Write and Read Response are tagged, the rest untagged.
            check((o in (WRITE, READ_RESP)) == (tagged in ("1", "True")),
                  f"{path}: opcode {o:#x} with tagged flag {tagged}")
    check(opcodes_expected <= ops, f"{path}: RDMAP opcodes {sorted(ops)} lack {sorted(opcodes_expected - ops)}")
    verbose = e2e.tshark(path, *IWARP_OPTS, "-V", "-Y", "iwarp_mpa.fpdu")
    good, badc = verbose.count("Good CRC32"), verbose.count("Bad CRC32")
    fpdus = check_fpdu_crcs(path)
    check(badc == 0 and good == fpdus and fpdus > 0,
          f"{path}: tshark Good CRC32 {good}, Bad {badc}, FPDUs {fpdus}")
    return ops


def run_example(name, out, *args):
    _rc, _o, _e, res = e2e.run(os.path.join(e2e.SOURCE, "examples", name), out, *args)
    return res


def main():
    tmp = e2e.tmpdir()

    # --- two hosts and a router: Write, Send, Read; determinism
    out = os.path.join(tmp, "two")
    res = run_example("iwarp_two_hosts.yaml", out)
    if check(res is not None, "iwarp_two_hosts ran"):
        check(res["fabric"] == "iwarp", "results say iwarp")
        for w in res["workloads"]:
            check(w["data_verified"] is True, f"two hosts {w['name']}: data_verified")
            check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]}, f"two hosts {w['name']}: {w['completions']}")
        check_iwarp_capture(os.path.join(out, "pcap", "a-0.pcap"), {WRITE, READ_REQ, READ_RESP, SEND})
        check_iwarp_capture(os.path.join(out, "pcap", "b-0.pcap"), {WRITE, READ_REQ, READ_RESP, SEND})
        out2 = os.path.join(tmp, "two_again")
        run_example("iwarp_two_hosts.yaml", out2)
        for f in ("a-0.pcap", "b-0.pcap"):
            check(filecmp.cmp(os.path.join(out, "pcap", f), os.path.join(out2, "pcap", f), shallow=False),
                  f"same seed, byte-identical {f}")

    # --- IPv6 and markers: still dissected, CRCs right (markers: tshark only)
    out = os.path.join(tmp, "v6")
    res = run_example("iwarp_two_hosts.yaml", out, "--set", "ip=ipv6")
    if check(res is not None, "iwarp over IPv6 ran"):
        check(all(w["data_verified"] for w in res["workloads"]), "IPv6: data_verified")
        check_iwarp_capture(os.path.join(out, "pcap", "a-0.pcap"), {WRITE, READ_REQ, READ_RESP, SEND})

    # --- 1% loss: TCP retransmits, the data still arrives intact
    out = os.path.join(tmp, "lossy")
    res = run_example("iwarp_lossy.yaml", out)
    if check(res is not None, "iwarp_lossy ran"):
        for w in res["workloads"]:
            check(w["data_verified"] is True, f"lossy {w['name']}: data_verified")
            check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]}, f"lossy {w['name']}: {w['completions']}")
        a = os.path.join(out, "pcap", "a-0.pcap")
        check_iwarp_capture(a, {WRITE, READ_REQ, READ_RESP, SEND})
        rt = e2e.tshark(a, *SEQ_OPTS, "-Y", "tcp.analysis.retransmission || tcp.analysis.fast_retransmission")
        check(len(rt.splitlines()) > 0, "lossy: the capture shows TCP retransmissions")
        check(sum(p["drops"] for p in res["ports"]) > 0, "lossy: frames were lost")

    # --- leaf-spine: many connections, DCTCP, incast
    out = os.path.join(tmp, "ls")
    res = run_example("iwarp_leaf_spine.yaml", out)
    if check(res is not None, "iwarp_leaf_spine ran"):
        for w in res["workloads"]:
            check(w["data_verified"] is True, f"leaf-spine {w['name']}: data_verified")
            check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]}, f"leaf-spine {w['name']}")
        check_iwarp_capture(os.path.join(out, "pcap", "h0-0.pcap"), {WRITE})

    # --- a bad rkey: the responder terminates, the requester sees REM_ACCESS_ERR
    bad = """name: iwarp_bad_rkey
fabric: iwarp
seed: 1
stop: 5ms
link: {bandwidth: 100Gbps, delay: 1us, mtu: 1500}
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: bad, kind: rdma_write, from: a, to: b, qp: rc, size: 4KiB, count: 4, outstanding: 2, bad_rkey: true}
capture: {pcap: hosts}
"""
    out = os.path.join(tmp, "bad")
    _rc, _o, _e, res = e2e.run(bad, out)
    if check(res is not None, "bad rkey run wrote results"):
        c = res["workloads"][0]["completions"]
        check(c.get("IBV_WC_REM_ACCESS_ERR") == 1, f"bad rkey: one IBV_WC_REM_ACCESS_ERR: {c}")
        check(set(c) <= {"IBV_WC_REM_ACCESS_ERR", "IBV_WC_WR_FLUSH_ERR"}, f"bad rkey: the rest flushed: {c}")
        a = os.path.join(out, "pcap", "a-0.pcap")
        ops = check_iwarp_capture(a, {WRITE, TERMINATE})
        check(TERMINATE in ops, "bad rkey: a Terminate in the capture")

    # --- the loader refuses what iWARP has not, naming file:line:col
    for what, wl in (("ud", "{kind: send, from: a, to: b, qp: ud, size: 64, count: 1}"),
                     ("atomic", "{kind: atomic_fadd, from: a, to: b, qp: rc, count: 1}"),
                     ("immediate", "{kind: send_imm, from: a, to: b, qp: rc, size: 64, count: 1}")):
        path = os.path.join(tmp, f"refuse_{what}.yaml")
        with open(path, "w") as f:
            f.write("name: r\nfabric: iwarp\ntopology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
                    f"workloads:\n  - {wl}\n")
        p = subprocess.run([e2e.BINARY, "validate", path], capture_output=True, text=True)
        msg = p.stdout + p.stderr
        check(p.returncode == 2 and f"{path}:5:" in msg and "iwarp" in msg,
              f"validate refuses {what} on iwarp with file:line:col: exit {p.returncode}: {msg.strip()}")

    e2e.finish()


if __name__ == "__main__":
    main()
