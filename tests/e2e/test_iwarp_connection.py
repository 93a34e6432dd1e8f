"""iWARP connection establishment as a capture shows it: the passive end
listens on tcp.listen_port and the active end connects from an ephemeral
port; MPA revision 2 (RFC 6581) by default, with the enhanced flag and the
QPs' IRD and ORD leading the private data, revision 1 on request; tshark
dissects both (revision 2 with its two RFC 5044 warnings and nothing
worse), every FPDU after them included, CRCs checked independently."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import check  # noqa: E402
from test_iwarp_captures import IWARP_OPTS, READ_REQ, READ_RESP, SEND, WRITE, check_iwarp_capture, crc32c, \
    tcp_segments  # noqa: E402

EXPERIMENT = """name: iwarp_connection
fabric: iwarp
seed: 3
link: {bandwidth: 100Gbps, delay: 1us, mtu: 1500}
topology: {hosts: [a, b, c], switches: [s1], links: [[a, s1], [b, s1], [c, s1]]}
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 8KiB, count: 4}
  - {name: r, kind: rdma_read, from: c, to: a, size: 8KiB, count: 4}
  - {name: s, kind: send, from: b, to: c, size: 300, count: 4}
capture: {pcap: hosts}
"""


# a writes to b, c reads from a, b sends to c.
OPCODES = {"a": {WRITE, READ_REQ, READ_RESP}, "b": {WRITE, SEND}, "c": {SEND, READ_REQ, READ_RESP}}


def startup_frames(path):
    """[(sport, dport, is_request, flags, rev, private_data)] of the MPA frames in a capture."""
    out = []
    for _src, sport, _dst, dport, _seq, _flags, pl in tcp_segments(path):
        if pl[:16] in (b"MPA ID Req Frame", b"MPA ID Rep Frame"):
            pd_len = struct.unpack(">H", pl[18:20])[0]
            out.append((sport, dport, pl[:16] == b"MPA ID Req Frame", pl[16], pl[17], pl[20:20 + pd_len]))
    return out


def check_run(name, listen_port, revision, *args):
    out = os.path.join(e2e.tmpdir(), name)
    _rc, _o, _e, res = e2e.run(EXPERIMENT, out, *args)
    if not check(res is not None, f"{name}: ran"):
        return
    for w in res["workloads"]:
        check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["data_verified"], f"{name} {w['name']}")
    for host in "abc":
        path = os.path.join(out, "pcap", f"{host}-0.pcap")
        # SYNs: from an ephemeral port (RFC 6335 dynamic range) to the listening port.
        syns = [(sp, dp) for _s, sp, _d, dp, _q, fl, _p in tcp_segments(path) if fl & 0x12 == 0x02]
        check(len(syns) > 0 and all(dp == listen_port and sp >= 49152 for sp, dp in syns),
              f"{name} {host}: SYNs go from an ephemeral port to {listen_port}: {syns}")
        frames = startup_frames(path)
        check(len(frames) == 4, f"{name} {host}: two connections, a request and a reply each: {len(frames)}")
        for sport, dport, req, flags, rev, pd in frames:
            check((dport if req else sport) == listen_port, f"{name} {host}: request to / reply from the listener")
            check(rev == revision, f"{name} {host}: MPA Rev {rev}, expected {revision}")
            enhanced = bool(flags & 0x10)
            check(enhanced == (revision == 2) and flags & 0x0F == 0, f"{name} {host}: flags {flags:#x}")
            if revision == 2:
                ird, ord_ = struct.unpack(">HH", pd[:4])
                # The workloads' QPs: max_dest_rd_atomic = max_rd_atomic = 16, no peer-to-peer mode.
                check((ird, ord_) == (16, 16), f"{name} {host}: IRD/ORD {ird}/{ord_}")
            else:
                check(len(pd) == 0, f"{name} {host}: Rev 1 private data {pd.hex()}")
        check_iwarp_capture(path, OPCODES[host])
        # tshark 4.0 knows RFC 5044 only: each Rev 2 frame gets two warnings, nothing worse.
        expert = e2e.tshark(path, *IWARP_OPTS, "-q", "-z", "expert")
        check("Errors (" not in expert, f"{name} {host}: tshark reports errors:\n{expert}")
        for what in ("Res field is NOT set to zero", "Rev field is NOT set to one"):
            freq = [int(line.split()[0]) for line in expert.splitlines() if what in line]
            check(sum(freq) == (4 if revision == 2 else 0), f"{name} {host}: '{what}' on {sum(freq)} frames")


# A 484-byte Send is a 502-byte ULPDU, a 508-byte FPDU: with the marker in
# front of it, exactly 512 bytes. Each FPDU starts at a marker position and
# ends where the next marker falls.
MARKERS_EDGE = """name: iwarp_markers_edge
fabric: iwarp
seed: 1
link: {bandwidth: 100Gbps, delay: 1us, mtu: 1500}
mpa: {markers: true}
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: s, kind: send, from: a, to: b, size: 484, count: 3}
capture: {pcap: hosts}
"""


def check_marker_at_segment_end():
    """RFC 5044 markers sit at every 512th octet of the stream, counted from
    the first FPDU. A marker that falls where an FPDU starts is sent in front
    of that FPDU (FPDUPTR 0, covered by its CRC), so no segment ends with one.
    Checked here independently of tshark (docs/fabrics/iwarp.md says what
    tshark 4.0 makes of these segments)."""
    out = os.path.join(e2e.tmpdir(), "markers_edge")
    _rc, _o, _e, res = e2e.run(MARKERS_EDGE, out)
    if not check(res is not None and res["workloads"][0]["data_verified"], "markers edge: ran, data verified"):
        return
    segs = [(seq, pl) for _s, sp, _d, _dp, seq, _f, pl in tcp_segments(os.path.join(out, "pcap", "a-0.pcap"))
            if pl and sp != 18515 and not pl.startswith(b"MPA ID")]
    check(len(segs) == 3, f"markers edge: three Send segments from a: {len(segs)}")
    first = segs[0][0] if segs else 0
    for seq, pl in segs:
        check((seq - first) % 512 == 0 and len(pl) == 512, f"markers edge: segment at {seq - first}, {len(pl)} bytes")
        check(pl[:4] == b"\0\0\0\0", f"markers edge: leading marker, FPDUPTR 0: {pl[:4].hex()}")
        check(struct.unpack(">H", pl[4:6])[0] == 502, "markers edge: ULPDU_LENGTH 502")
        check(crc32c(pl[:508]) == struct.unpack("<I", pl[508:512])[0], "markers edge: CRC32c over marker and FPDU")


def main():
    check_marker_at_segment_end()
    check_run("default", 18515, 2)
    check_run("rev1_port", 7174, 1, "--set", "mpa.revision=1", "--set", "tcp.listen_port=7174")
    e2e.finish()


if __name__ == "__main__":
    main()
