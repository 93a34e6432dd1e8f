"""Shared helpers for end-to-end tests: run the rdmasim binary, read its
pcaps, ask tshark about them, and check CRCs with an implementation that is
independent of the simulator's own (zlib's CRC-32, a bitwise CRC-16/32C)."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

# Absolute, so that a test may run the binary in another working directory.
BINARY = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/rdmasim")
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."

# Upper-layer heuristics that would claim synthetic payloads (docs/captures.md).
TSHARK_OPTS = [
    "-n", "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
] + sum([["--disable-heuristic", h] for h in (
    "rpcrdma_iwarp", "smb_direct_iwarp", "rpcrdma_infiniband", "smb_direct_infiniband", "smcr_infiniband",
    "nvme_rdma", "lnet_ib", "iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband",
    "fc_infiniband", "drbd_rdma")], [])

failures = []

# A sanitizer build (scripts/test-sanitizers.sh): AddressSanitizer's shadow
# memory and quarantine inflate every process's RSS, so peak-RSS bounds, set
# from the normal build, are not checked there.
SANITIZED = os.environ.get("RDMASIM_SANITIZE", "") != ""

# Two hosts on a switch, one WRITE workload, no captures: the reliability
# tests' reproducer (docs/reliability.md), changed by --set.
TWO_HOSTS = """\
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads: [{kind: rdma_write, from: a, to: b, size: 64KiB, count: 20, outstanding: 4}]
capture: {pcap: none}
"""



def two_hosts(name, workload, head="", tail="", fabric="roce_v2"):
    """An experiment file as a user writes one: hosts a and b on switch s1
    running `workload` (a flow mapping), with `head` after `seed: 1` and
    `tail` after the workloads."""
    return (f"name: {name}\nfabric: {fabric}\nseed: 1\n{head}"
            "topology:\n  hosts: [a, b]\n  switches: [s1]\n  links:\n    - [a, s1]\n    - [b, s1]\n"
            f"workloads:\n  - {workload}\n{tail}")


# Hosts a and b on one switch, 25 Gbps with 1% of frames lost: RC WRITEs,
# SENDs and READs recovering by go-back-N (test_roce_v2_loss.py,
# test_determinism.py); a test may append workloads.
LOSSY_RC = """\
name: roce_v2_lossy
fabric: roce_v2
seed: 7
link: {bandwidth: 25Gbps, delay: 1us, mtu: 1024, loss: 0.01}
topology:
  hosts: [a, b]
  switches: [s1]
  links: [[a, s1], [b, s1]]
workloads:
  - {name: write, kind: rdma_write, from: a, to: b, size: 64KiB, count: 40, outstanding: 4, timeout: 8}
  - {name: send, kind: send, from: a, to: b, size: 8KiB, count: 40, outstanding: 4, timeout: 8}
  - {name: read, kind: rdma_read, from: a, to: b, size: 32KiB, count: 20, outstanding: 2, timeout: 8}
"""

# Eight hosts on a ring of four L3 switches: the shortest paths between
# opposite switches form a cycle of buffer dependencies that PFC closes
# into a deadlock (test_stalls.py, test_pfc_deadlock.py).
PFC_RING = """\
name: pfc_ring
fabric: roce_v2
seed: 1
flow_control: pfc
link: {bandwidth: 100Gbps, delay: 1us, buffer: 64KiB}
topology:
  hosts: [a0, a1, b0, b1, c0, c1, d0, d1]
  switches: [s0, s1, s2, s3]
  links: [[a0, s0], [a1, s0], [b0, s1], [b1, s1], [c0, s2], [c1, s2], [d0, s3], [d1, s3],
          [s0, s1], [s1, s2], [s2, s3], [s3, s0]]
workloads:
  - {kind: all_to_all, size: 64KiB, count: 50, outstanding: 16, timeout: 8}
capture: {pcap: none}
"""


def check(cond, what, result=None):
    """Records a failure unless `cond`; `result` (a CompletedProcess) adds
    its exit code and output to the message."""
    if not cond:
        if result is not None:
            what += f"\n    exit {result.returncode}\n    stdout: {result.stdout!r}\n    stderr: {result.stderr!r}"
        failures.append(what)
        print("FAIL:", what)
    return cond


_tmpdirs = []


def finish():
    """Exits 1 if a check failed (keeping the output to look at), else
    removes the test's temporary directories and exits 0."""
    if failures:
        print(f"{len(failures)} check(s) failed; output kept in {' '.join(_tmpdirs)}")
        sys.exit(1)
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)
    print("ok")
    sys.exit(0)


def tmpdir():
    d = tempfile.mkdtemp(prefix="rdmasim-e2e-")
    _tmpdirs.append(d)
    return d


def rdmasim(*args, timeout=600, **kw):
    """Runs the binary with `args`; returns the CompletedProcess (text output)."""
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, **kw)


def peak_rss_mib(*args):
    """Runs the binary with `args`; returns (exit code, its peak resident set
    in MiB). ru_maxrss of a child forked from Python starts at Python's own
    resident set (it counts the memory the child had before its exec, about
    13 MiB here), so the peak is taken by /usr/bin/time, which forks from a
    small process, when it is there."""
    cmd = [BINARY, *args]
    if shutil.which("time") or os.path.exists("/usr/bin/time"):
        with tempfile.NamedTemporaryFile("r", suffix=".rss") as f:
            p = subprocess.run(["/usr/bin/time", "-q", "-f", "%M", "-o", f.name, *cmd],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            lines = f.read().split()
            return p.returncode, int(lines[-1]) / 1024 if lines else 0.0
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def run(yaml_text_or_path, out, *args, expect=0):
    """Runs `rdmasim run`; returns (returncode, stdout, stderr, results or None)."""
    path = yaml_text_or_path
    if "\n" in yaml_text_or_path:
        path = os.path.join(os.path.dirname(out) or ".", os.path.basename(out) + ".yaml")
        with open(path, "w") as f:
            f.write(yaml_text_or_path)
    p = subprocess.run([BINARY, "run", path, "--out", out, *args], capture_output=True, text=True, timeout=600)
    results = None
    rp = os.path.join(out, "results.json")
    if os.path.exists(rp):
        with open(rp) as f:
            results = json.load(f)
    if expect is not None and p.returncode != expect:
        print(p.stdout)
        print(p.stderr)
        check(False, f"rdmasim run {path}: exit {p.returncode}, expected {expect}")
    return p.returncode, p.stdout, p.stderr, results


CPU_USES = ("user", "syscall", "softirq", "irq", "poll", "idle")


def check_cpu_times(results, what):
    """Per host, per core: the six time categories add up to the run's
    end_time_ps, and cpu_busy_ps is all of them but idle."""
    for h in results["hosts"]:
        busy = 0
        for i, c in enumerate(h["cores"]):
            check(set(c) == {u + "_ps" for u in CPU_USES}, f"{what}: {h['name']} core {i} has the six categories")
            check(sum(c.values()) == results["end_time_ps"],
                  f"{what}: {h['name']} core {i} adds up to end_time_ps ({sum(c.values())} vs {results['end_time_ps']})")
            busy += sum(v for k, v in c.items() if k != "idle_ps")
        check(h["cpu_busy_ps"] == busy, f"{what}: {h['name']} cpu_busy_ps is all but idle")


def workload(results, name):
    for w in results["workloads"]:
        if w["name"] == name:
            return w
    raise KeyError(name)


def read_pcap(path):
    """Returns (linktype, [(timestamp_ns, bytes)]) of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B23C4D, 0xA1B2C3D4), f"{path}: not a little-endian classic pcap"
    nano = magic == 0xA1B23C4D
    linktype = struct.unpack("<I", data[20:24])[0]
    frames = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        frames.append((sec * 10**9 + (frac if nano else frac * 1000), data[off:off + incl]))
        off += incl
    return linktype, frames


def tshark(path, *args):
    if not shutil.which("tshark"):
        raise RuntimeError("tshark is not installed (scripts/setup.sh installs it)")
    p = subprocess.run(["tshark", "-r", path, *TSHARK_OPTS, *args], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"tshark failed on {path}: {p.stderr}")
    return p.stdout


def tshark_fields(path, fields, display_filter=None):
    args = ["-T", "fields", "-E", "occurrence=a", "-E", "separator=\t"]
    for f in fields:
        args += ["-e", f]
    if display_filter:
        args += ["-Y", display_filter]
    out = tshark(path, *args)
    return [line.split("\t") for line in out.splitlines()]


BAD_FRAMES = "_ws.malformed || _ws.short || _ws.expert.severity >= 8388608"
# The one error Wireshark 4.0 reports on captures rdmasim cannot avoid: its
# RPC-over-RDMA heuristic, reading a frame a second time, fails an assertion
# on the last segment of a SEND it holds no reassembled message for, whatever
# the SEND's bytes (docs/captures.md): on iwarp the last DDP segment of every
# Send or Send with Invalidate of several segments (the DDP/RDMAP dissector
# reassembles the SEND and calls the heuristic on its last segment alone;
# Sends with Solicited Event, 0x5 and 0x6, the heuristic does not take), on
# the IBA fabrics an RC SEND whose segments the capture does not hold exactly
# once (one lost before the capture point, or resent after a loss).
# Tolerated on exactly those frames.
WS40_SEND_BUG = './epan/tvbuff.c:748: failed assertion "tvb && tvb->initialized"'
IWARP_SENDS = ("0x03", "0x04")  # the opcodes the heuristic reassembles
IBA_SEND_FIRST, IBA_SEND_LASTS = "0", ("2", "22")  # RC SEND First; Last, Last with Invalidate


def tshark_version():
    out = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout
    return out.split("\n")[0].split()[2]  # "TShark (Wireshark) 4.0.17 (...)"


# Wireshark's RPC-over-RDMA heuristic reads past the end of an empty SEND
# (a legal zero-length message): "Malformed Packet" on a frame with no
# payload at all, which no payload pattern can avoid (docs/captures.md).
EMPTY_SEND_BUG = "Malformed Packet (Exception occurred)"
# Wireshark's reassemble.c, on a segment added to a PDU it has reassembled
# already that runs past that PDU's end: "That could just be a
# retransmission" (docs/captures.md).
TCP_RESEND_OVERLAP = "New fragment overlaps old data (retransmission?)"
IBA_SEND_ONLYS = ("4", "5", "36", "37")  # RC and UC SEND Only, Only with Immediate


def _iba_payload_empty(path, frame):
    """Whether the IBA packet in `frame` carries no payload."""
    rows = tshark_fields(path, ["frame.number", "data.len"], f"frame.number == {frame}")
    return bool(rows) and (len(rows[0]) < 2 or rows[0][1] in ("", "0"))


def _iba_send_incomplete(path, frame):
    """Whether the RC SEND that ends at `frame` is not whole, once and in
    order in the capture: a PSN between its First and its Last missing
    (lost before the capture point), seen twice (go-back-N resent it) or
    seen after a later one (IRN resends a lost First after the Middles)."""
    rows = tshark_fields(path, ["frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
                                "eth.src", "infiniband.lrh.slid"], "infiniband.bth")
    at = next(i for i, r in enumerate(rows) if int(r[0]) == frame)
    key = lambda r: (r[2], r[4], r[5])  # noqa: E731  one direction of one QP
    # What Wireshark had seen when it reached `frame` (IRN resends a lost
    # middle packet after the Last: the capture holds it whole, later).
    mine = [r for r in rows[:at + 1] if key(r) == key(rows[at])]
    hi = int(rows[at][3])  # PSNs wrap at 2^24; no test SEND crosses it
    firsts = [int(r[3]) for r in mine if r[1] == IBA_SEND_FIRST and int(r[3]) < hi]
    if not firsts:
        return True  # its First is not in the capture at all
    lo = max(firsts)
    seen = [int(r[3]) for r in mine if lo <= int(r[3]) <= hi]  # in capture order
    return seen != list(range(lo, hi + 1))


def _tcp_identical_resend(path, frame):
    """Whether TCP segment `frame` repeats, byte for byte, one sent before it
    on the same connection with the same sequence number: a retransmission
    the sender was right to make, not a conflicting one."""
    rows = tshark_fields(path, ["frame.number", "tcp.stream", "tcp.seq_raw", "tcp.payload"], "tcp.len > 0")
    mine = next((r for r in rows if int(r[0]) == frame), None)
    return mine is not None and any(int(r[0]) < frame and r[1:] == mine[1:] for r in rows)


def gui_problems(path):
    """Frames that the Wireshark GUI shows as malformed or with error-level
    expert info: tshark with two passes and default preferences (every
    heuristic on, no --disable-heuristic), as Wireshark reads a file.
    Returns [(line, known)]: known when it is Wireshark 4.0's SEND defect
    above, on a frame where it is expected, or Wireshark's reassembly error
    on a TCP segment that repeats an earlier one exactly."""
    sep = "\x1f"
    p = subprocess.run(["tshark", "-n", "-2", "-r", path, "-Y", BAD_FRAMES, "-T", "fields", "-E", "occurrence=a",
                        "-E", f"aggregator={sep}", "-e", "frame.number", "-e", "iwarp_rdma.opcode", "-e",
                        "iwarp_ddp.last_flag", "-e", "iwarp_ddp.mo", "-e", "infiniband.bth.opcode", "-e",
                        "_ws.expert.message", "-e", "_ws.expert.severity", "-e", "frame.protocols"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"tshark -2 failed on {path}: {p.stderr}")
    ws40 = tshark_version().startswith("4.0.")
    found = []
    for line in p.stdout.splitlines():
        frame, iw_op, last, mo, ib_op, messages, severities, protocols = (line.split("\t") + [""] * 8)[:8]
        errors = {m for m, s in zip(messages.split(sep), severities.split(sep)) if s and int(s) >= 8388608}
        known = ws40 and errors == {WS40_SEND_BUG} and protocols.endswith(":rpcordma")
        if errors == {TCP_RESEND_OVERLAP}:
            known = _tcp_identical_resend(path, int(frame))
        elif protocols.endswith(":rpcordma") and errors == {EMPTY_SEND_BUG} and ib_op in IBA_SEND_ONLYS:
            known = _iba_payload_empty(path, int(frame))
        elif known and iw_op:
            known = iw_op in IWARP_SENDS and last in ("1", "True") and mo.isdigit() and int(mo) > 0
        elif known:
            known = ib_op in IBA_SEND_LASTS and _iba_send_incomplete(path, int(frame))
        found.append((line, known))
    return found


def check_gui_clean(path):
    """No malformed frame and no error-level expert info as the Wireshark GUI
    reads PATH (gui_problems); returns how many frames showed the known 4.0
    SEND defect."""
    problems = gui_problems(path)
    bad = [line for line, known in problems if not known]
    check(not bad, f"{path}: malformed or error-level expert info as Wireshark reads it (tshark -2, "
          f"default heuristics):\n" + "\n".join(bad)[:2000])
    return len(problems) - len(bad)


def check_no_malformed(path):
    """Clean to a script (checksums checked, upper-layer heuristics off) and
    as the Wireshark GUI reads it (check_gui_clean)."""
    bad = tshark(path, "-Y", BAD_FRAMES)
    if TCP_RESEND_OVERLAP in bad:  # Wireshark's own, on a TCP resend that spans two PDUs
        rows = tshark_fields(path, ["frame.number", "_ws.expert.message"], BAD_FRAMES)
        bad = "\n".join(line for line, (frame, messages) in zip(bad.splitlines(), rows)
                        if TCP_RESEND_OVERLAP not in messages or not _tcp_identical_resend(path, int(frame)))
    check(bad.strip() == "", f"{path}: malformed frames or error-level expert info:\n{bad[:2000]}")
    check_gui_clean(path)


def check_all_match(path, display_filter, what):
    """Every frame must match `display_filter`."""
    bad = tshark(path, "-Y", f"!({display_filter})")
    check(bad.strip() == "", f"{path}: frames that are not {what}:\n{bad[:2000]}")


# ---------------------------------------------------------------- ICRC / CRCs

def _crc32_ieee(data):
    return zlib.crc32(data) & 0xFFFFFFFF


def roce_v2_icrc(frame):
    """ICRC of an Ethernet + IPv4/IPv6 + UDP + IBA frame (IBA A17.4.3.1):
    returns (computed, carried)."""
    ethertype = struct.unpack(">H", frame[12:14])[0]
    l3 = bytearray(frame[14:])
    if ethertype == 0x0800:
        ihl = (l3[0] & 0x0F) * 4
        total = struct.unpack(">H", l3[2:4])[0]
        l3 = l3[:total]
        l3[1] = 0xFF           # TOS
        l3[8] = 0xFF           # TTL
        l3[10:12] = b"\xff\xff"  # header checksum
        udp = ihl
    elif ethertype == 0x86DD:
        plen = struct.unpack(">H", l3[4:6])[0]
        l3 = l3[:40 + plen]
        l3[0] |= 0x0F
        l3[1:4] = b"\xff\xff\xff"  # traffic class (low half), flow label
        l3[7] = 0xFF               # hop limit
        udp = 40
    else:
        raise ValueError("not IP")
    l3[udp + 6:udp + 8] = b"\xff\xff"  # UDP checksum
    l3[udp + 8 + 4] = 0xFF             # BTH byte 4
    carried = struct.unpack("<I", bytes(l3[-4:]))[0]
    computed = _crc32_ieee(b"\xff" * 8 + bytes(l3[:-4]))
    return computed, carried


def roce_v1_icrc(frame):
    """Ethernet [+ 802.1Q] + GRH + IBA: (computed, carried)."""
    off = 14
    if struct.unpack(">H", frame[12:14])[0] == 0x8100:
        off = 18
    g = bytearray(frame[off:])
    g[0] |= 0x0F
    g[1:4] = b"\xff\xff\xff"
    g[7] = 0xFF
    g[40 + 4] = 0xFF
    carried = struct.unpack("<I", bytes(g[-4:]))[0]
    return _crc32_ieee(b"\xff" * 8 + bytes(g[:-4])), carried


def is_roce_v2(frame):
    if len(frame) < 14:
        return False
    et = struct.unpack(">H", frame[12:14])[0]
    if et == 0x0800:
        ihl = (frame[14] & 0x0F) * 4
        return frame[14 + 9] == 17 and struct.unpack(">H", frame[14 + ihl + 2:14 + ihl + 4])[0] == 4791
    if et == 0x86DD:
        return frame[14 + 6] == 17 and struct.unpack(">H", frame[14 + 40 + 2:14 + 40 + 4])[0] == 4791
    return False


def check_roce_v2_capture(path, pfc=False):
    """Every frame RoCE v2 (or, with pfc, a PFC frame), none malformed, every
    ICRC right. Returns frame count."""
    linktype, frames = read_pcap(path)
    check(linktype == 1, f"{path}: linktype {linktype}, expected 1 (Ethernet)")
    check_no_malformed(path)
    # A DCQCN CNP (opcode 129) is the one frame tshark 4.0 shows as vendor
    # data: its 16 reserved bytes and ICRC (checked below like every other).
    roce = ("(udp.dstport == 4791 && infiniband.bth && ((infiniband.invariant.crc && !infiniband.vendor) || "
            "infiniband.bth.opcode == 129))")
    check_all_match(path, roce + (" || macc.cbfc.enbv" if pfc else ""), "RoCE v2")
    bad = 0
    for i, (_, f) in enumerate(frames):
        if not is_roce_v2(f):
            continue
        c, w = roce_v2_icrc(f)
        if c != w:
            bad += 1
            if bad < 3:
                print(f"{path}: frame {i + 1}: ICRC 0x{w:08x}, expected 0x{c:08x}")
    check(bad == 0, f"{path}: {bad} frame(s) with a wrong ICRC")
    return len(frames)


# BTH opcodes (IBA 9.2 table 35).
OP = {
    "SEND_FIRST": 0, "SEND_MIDDLE": 1, "SEND_LAST": 2, "SEND_LAST_IMM": 3, "SEND_ONLY": 4, "SEND_ONLY_IMM": 5,
    "WRITE_FIRST": 6, "WRITE_MIDDLE": 7, "WRITE_LAST": 8, "WRITE_LAST_IMM": 9, "WRITE_ONLY": 10,
    "WRITE_ONLY_IMM": 11, "READ_REQUEST": 12, "READ_RESPONSE_FIRST": 13, "READ_RESPONSE_MIDDLE": 14,
    "READ_RESPONSE_LAST": 15, "READ_RESPONSE_ONLY": 16, "ACK": 17, "ATOMIC_ACK": 18, "CMP_SWAP": 19,
    "FETCH_ADD": 20,
}


def check_captures(out, fabric, pfc=False):
    """Every capture in OUT/pcap clean in tshark, RoCE v2's also checked
    frame by frame (ICRC, UDP, PFC); returns their file names."""
    pcaps = sorted(os.listdir(os.path.join(out, "pcap")))
    for p in pcaps:
        path = os.path.join(out, "pcap", p)
        if fabric == "roce_v2":
            check_roce_v2_capture(path, pfc=pfc)
        else:
            check_no_malformed(path)
    return pcaps


def bth_records(path, display_filter="infiniband.bth"):
    """[(frame_no, opcode, destqp, psn, ackreq, syndrome or None)] from tshark."""
    rows = tshark_fields(path, ["frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp",
                                "infiniband.bth.psn", "infiniband.bth.a", "infiniband.aeth.syndrome"],
                         display_filter)
    out = []
    for r in rows:
        r += [""] * (6 - len(r))
        out.append((int(r[0]), int(r[1]), int(r[2], 0), int(r[3]), r[4] in ("1", "True"),
                    int(r[5]) if r[5] else None))
    return out
