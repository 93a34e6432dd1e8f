"""Real verbs programs on the simulated hosts (`programs:`, docs/programs.md):
ibv_devinfo and ibv_devices see each fabric's device; an ibv_rc_pingpong
pair exits 0 on every fabric, deterministically, with a usec/iter from
simulated time close to the model's own pingpong workload and its SENDs in
the captures, beside its out-of-band TCP exchange on the fabrics that carry
IP; alarm/setitimer run on the simulated clock (a probe, and perftest's
duration mode) and cut waits on out-of-band sockets short as Linux does (the
probe as a server and a client); a program not found, one that fails and one that never ends are refused
or reported, and no program outlives rdmasim."""
import json
import os
import re
import signal
import subprocess
import time

from e2e import BINARY, check, check_gui_clean, finish, run, tmpdir, tshark_fields

FABRICS = ("ib", "roce_v1", "roce_v2", "iwarp")
TOPOLOGY = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
# A port no other program uses: the orphan checks look for it.
PORT = 18599


def orphans():
    p = subprocess.run(["pgrep", "-f", f"ibv_rc_pingpong.*-p {PORT}"], capture_output=True, text=True)
    return p.stdout.split()


def program_text(out, name):
    with open(os.path.join(out, "programs", name)) as f:
        return f.read()


def run_twice(yaml, out, files, what):
    """Runs `yaml` into `out` and again into `out`_again, checks that `files` are the same both times, and
    returns the first run's exit code, stderr and results."""
    rc, _, stderr, res = run(yaml, out)
    run(yaml, out + "_again")
    for f in files:
        check(open(os.path.join(out, f), "rb").read() == open(os.path.join(out + "_again", f), "rb").read(),
              f"{what} deterministic: {f}")
    return rc, stderr, res


def oob_exchange(path, port):
    """The out-of-band TCP segments on `port` in a capture: (src, dst, sport, dport, flags, payload bytes,
    checksum status), in order."""
    rows = tshark_fields(path, ["ip.src", "ip.dst", "tcp.srcport", "tcp.dstport", "tcp.flags", "tcp.payload",
                                "tcp.checksum.status"], f"tcp.port == {port}")
    return [(r[0], r[1], int(r[2]), int(r[3]), int(r[4], 16), bytes.fromhex(r[5].replace(":", "")), r[6])
            for r in rows]


def check_oob(fabric, pcap, segments, server_port):
    """ibv_rc_pingpong's exchange as on real hosts: a's connection to b's `server_port`, its three-way handshake,
    each side's "LID:QPN:PSN:GID" message and the client's "done", every checksum good."""
    a, b = "10.0.0.1", "10.0.0.2"
    check(len(segments) >= 3 and {(s[0], s[1]) for s in segments} == {(a, b), (b, a)},
          f"{fabric} {pcap}: an out-of-band TCP stream between {a} and {b} ({len(segments)} segments)")
    if len(segments) < 3:
        return
    syn, syn_ack, ack = segments[:3]
    check((syn[0], syn[3], syn[4] & 0x12) == (a, server_port, 0x02)
          and (syn_ack[0], syn_ack[2], syn_ack[4] & 0x12) == (b, server_port, 0x12)
          and (ack[0], ack[4] & 0x17) == (a, 0x10), f"{fabric} {pcap}: SYN, SYN-ACK, ACK to port {server_port}")
    message = re.compile(rb"^0000:[0-9a-f]{6}:[0-9a-f]{6}:0{20}ffff[0-9a-f]{8}\0$")
    sent = {s[0]: [] for s in segments}
    for s in segments:
        if s[5]:
            sent[s[0]].append(s[5])
    check(any(message.match(m) for m in sent[a]) and any(message.match(m) for m in sent[b]),
          f"{fabric} {pcap}: each side's LID:QPN:PSN:GID message in the stream ({sent})")
    check(b"done\0" in sent[a], f"{fabric} {pcap}: the client's done")
    check({s[6] for s in segments} == {"1"}, f"{fabric} {pcap}: good TCP checksums")


d = tmpdir()

# ibv_devinfo and ibv_devices on each fabric.
for fabric in FABRICS:
    out = os.path.join(d, f"devinfo_{fabric}")
    rc, stdout, stderr, res = run(f"name: devinfo\nfabric: {fabric}\n{TOPOLOGY}programs:\n"
                                  "  - {host: b, run: \"ibv_devinfo -v\"}\n  - {host: a, run: ibv_devices}\n", out)
    if not check(res is not None and rc == 0, f"{fabric}: ibv_devinfo and ibv_devices exit 0 ({stderr.strip()})"):
        continue
    info = program_text(out, "b-0.out")
    devices = program_text(out, "a-1.out")
    check([p["exit_code"] for p in res["programs"]] == [0, 0], f"{fabric}: exit codes in results.json")
    check(re.search(r"state:\s+PORT_ACTIVE", info) is not None, f"{fabric}: the port is active")
    if fabric == "ib":
        check("link_layer:\t\tInfiniBand" in info, "ib: link layer InfiniBand")
        check(re.search(r"port_lid:\s+2\b", info) is not None, "ib: b's port has the LID the subnet manager gave it (2)")
        check(re.search(r"sm_lid:\s+1\b", info) is not None, "ib: the subnet manager's LID (its host a, 1)")
        check("transport:\t\t\tInfiniBand (0)" in info, "ib: InfiniBand transport")
    elif fabric == "iwarp":
        check("transport:\t\t\tiWARP (1)" in info, "iwarp: iWARP transport")
        check("link_layer:\t\tEthernet" in info, "iwarp: Ethernet link layer")
    else:
        check("link_layer:\t\tEthernet" in info, f"{fabric}: Ethernet link layer")
        kind = "RoCE v2" if fabric == "roce_v2" else "RoCE v1"
        check(re.search(r"GID\[\s*0\]:.*, " + kind, info) is not None, f"{fabric}: GID 0 is a {kind} GID")
    check(re.search(r"rdmasim\S*\s+[0-9a-f]{16}", devices) is not None, f"{fabric}: ibv_devices lists the device")
    check("rdmasim" in stdout and "a-1" in stdout and "b-0" in stdout, f"{fabric}: one summary line per program")


def pingpong_yaml(fabric):
    # stop: a pair that cannot talk (the first router dropping its frames) fails instead of spinning on.
    return (f"name: pp\nfabric: {fabric}\nstop: 500ms\n{TOPOLOGY}programs:\n"
            f"  - {{host: b, run: \"ibv_rc_pingpong -g 0 -n 1000 -s 4096 -p {PORT}\"}}\n"
            f"  - {{host: a, run: \"ibv_rc_pingpong -g 0 -n 1000 -s 4096 -p {PORT} {{b}}\", start: 10us}}\n")


SEND_OPCODES = {0, 1, 2, 4}  # RC SEND FIRST, MIDDLE, LAST, ONLY
for fabric in FABRICS:
    out = os.path.join(d, f"pp_{fabric}")
    rc, stdout, stderr, res = run(pingpong_yaml(fabric), out)
    if not check(res is not None and rc == 0, f"{fabric}: the pingpong pair exits 0 ({stderr.strip()})"):
        continue
    check([(p["host"], p["exit_code"]) for p in res["programs"]] == [("b", 0), ("a", 0)],
          f"{fabric}: both programs exit 0 in results.json")
    for p in res["programs"]:
        check(set(p) >= {"host", "run", "exit_code", "wall_s", "stdout", "stderr"}, f"{fabric}: program fields")
    usec = [float(m) for m in re.findall(r"= ([0-9.]+) usec/iter", program_text(out, "a-1.out"))]
    # The model's own pingpong of the same size: one op is a round trip, half of which latency_ns reports.
    wout = os.path.join(d, f"wl_{fabric}")
    _, _, _, wres = run(f"name: wl\nfabric: {fabric}\n{TOPOLOGY}workloads:\n"
                        "  - {kind: pingpong, from: a, to: b, op: send, size: 4096, count: 1000}\ncapture: {pcap: none}\n",
                        wout)
    if check(len(usec) == 1 and wres is not None, f"{fabric}: usec/iter printed ({usec})"):
        model = 2 * wres["workloads"][0]["latency_ns"]["p50"] / 1000
        check(abs(usec[0] - model) <= 0.1 * model, f"{fabric}: {usec[0]} usec/iter within 10 % of the model's {model:.2f}")
    # Its SENDs in the captures, and its out-of-band exchange where the fabric carries IP.
    for pcap in sorted(os.listdir(os.path.join(out, "pcap"))):
        path = os.path.join(out, "pcap", pcap)
        if fabric == "iwarp":
            ops = [r[0] for r in tshark_fields(path, ["iwarp_rdma.opcode"], "iwarp_rdma")]
            check(ops.count("0x03") == 4000, f"iwarp {pcap}: 2000 SENDs of 2 DDP segments each ({len(ops)})")
        else:
            ops = [int(r[0]) for r in tshark_fields(path, ["infiniband.bth.opcode"], "infiniband.bth")]
            sends = [o for o in ops if o in SEND_OPCODES]
            check(len(sends) >= 4000, f"{fabric} {pcap}: the RC SENDs of 1000 4 KiB messages each way ({len(sends)})")
        # Two passes, default heuristics (Wireshark 4.0's known defect on iwarp's two-segment SENDs aside).
        check_gui_clean(path)
        segments = oob_exchange(path, PORT)
        if fabric in ("roce_v2", "iwarp"):
            check_oob(fabric, pcap, segments, PORT)
        else:
            check(segments == [], f"{fabric} {pcap}: no IP, no out-of-band frames (the modelled side channel)")

# perftest: its latency tests against the model's own kinds of the same size (t_typical is the median).
for tool, kind in (("ib_send_lat", "send_lat"), ("ib_read_lat", "read_lat")):
    out = os.path.join(d, tool)
    rc, _, stderr, res = run(f"name: {tool}\nfabric: roce_v2\nstop: 2s\n{TOPOLOGY}programs:\n"
                             f"  - {{host: b, run: \"{tool} -n 100 -s 64 -p {PORT}\"}}\n"
                             f"  - {{host: a, run: \"{tool} -n 100 -s 64 -p {PORT} {{b}}\", start: 10us}}\n", out)
    if not check(res is not None and rc == 0, f"{tool}: the pair exits 0 ({stderr.strip()})"):
        continue
    # perftest's note for a device it does not know (it turns inline off for it, as it does on real ones).
    errs = [line for f in ("a-1.err", "b-0.err") for line in program_text(out, f).splitlines()
            if line != "Device not recognized to implement inline feature. Disabling it"]
    check(errs == [], f"{tool}: nothing else on stderr ({errs})")
    row = re.search(r"^\s*64\s+100\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", program_text(out, "a-1.out"), re.M)
    _, _, _, wres = run(f"name: wl\nfabric: roce_v2\n{TOPOLOGY}workloads:\n"
                        f"  - {{kind: {kind}, from: a, to: b, size: 64, count: 100}}\ncapture: {{pcap: none}}\n",
                        os.path.join(d, f"wl_{kind}"))
    if check(row is not None and wres is not None, f"{tool}: its result row"):
        typical, model = float(row.group(3)), wres["workloads"][0]["latency_ns"]["p50"] / 1000
        check(abs(typical - model) <= 0.1 * model, f"{tool}: t_typical {typical} us within 10 % of {kind}'s {model}")

out = os.path.join(d, "ib_write_bw")
BW = (f"name: bw\nfabric: ib\nstop: 3s\n{TOPOLOGY}programs:\n"
      f"  - {{host: b, run: \"ib_write_bw -n 200 -s 65536 -p {PORT}\"}}\n"
      f"  - {{host: a, run: \"ib_write_bw -n 200 -s 65536 -p {PORT} {{b}}\", start: 10us}}\n")
rc, stderr, res = run_twice(BW, out, ("results.json", "programs/a-1.out", "programs/b-0.out", "pcap/a-0.pcap"),
                           "ib_write_bw")
row = re.search(r"^\s*65536\s+200\s+([0-9.]+)\s+([0-9.]+)", program_text(out, "a-1.out"), re.M) if rc == 0 else None
check(row is not None and 80e3 / 8 * 0.9 < float(row.group(2)) < 100e3 / 8,
      f"ib_write_bw on ib: its average MB/s near the 100 Gb/s link ({row.group(2) if row else stderr.strip()})")

# The same burst on roce_v1: a QP's destination MAC comes from the peer's link-local GID as Linux sets it at RTR
# (rdma_get_ll_mac), so the first 64 KiB writes leave at once. They used to wait for neighbour discovery in a queue
# bounded at 208 KiB, which dropped the rest of the burst: a PSN gap, a NAK and go-back-N on the wire.
out = os.path.join(d, "ib_write_bw_roce_v1")
rc, _, stderr, res = run(BW.replace("fabric: ib", "fabric: roce_v1"), out)
row = re.search(r"^\s*65536\s+200\s+([0-9.]+)\s+([0-9.]+)", program_text(out, "a-1.out"), re.M) if rc == 0 else None
check(row is not None and 80e3 / 8 * 0.9 < float(row.group(2)) < 100e3 / 8,
      f"ib_write_bw on roce_v1: its average MB/s near the 100 Gb/s link ({row.group(2) if row else stderr.strip()})")
if rc == 0:
    path = os.path.join(out, "pcap", "a-0.pcap")
    rows = tshark_fields(path, ["ip.src", "infiniband.bth.opcode", "infiniband.bth.psn", "infiniband.aeth.syndrome"],
                         "infiniband.bth || icmpv6")
    writes = [int(r[2]) for r in rows if r[1] and int(r[1]) in (6, 7, 8, 10)]  # RC RDMA WRITE FIRST..ONLY
    naks = [r for r in rows if r[3] and (int(r[3], 0) >> 5) == 3]
    nd = [r for r in rows if not r[1]]
    check(len(writes) >= 200 * 16 and all(b == (a + 1) % (1 << 24) for a, b in zip(writes, writes[1:])),
          f"roce_v1 ib_write_bw: its writes' PSNs in order, none sent twice ({len(writes)})")
    check(naks == [] and nd == [], f"roce_v1 ib_write_bw: no NAK, no neighbour discovery ({len(naks)}, {len(nd)})")
    check_gui_clean(path)

# perftest's duration mode (-D) ends its measurement on SIGALRM from alarm(): the timer runs on the simulated
# clock (the program's run lasts its margins plus the duration in simulated time, not in real time), the same
# run gives the same figures, and its BW average agrees with the same program in iterations mode (-n).
out = os.path.join(d, "ib_write_bw_duration")
DURATION = (f"name: bw\nfabric: roce_v2\nstop: 5s\n{TOPOLOGY}capture: {{pcap: none}}\nprograms:\n"
            f"  - {{host: b, run: \"ib_write_bw -D 1 -s 65536 -p {PORT}\"}}\n"
            f"  - {{host: a, run: \"ib_write_bw -D 1 -s 65536 -p {PORT} {{b}}\", start: 10us}}\n")
rc, stderr, res = run_twice(DURATION, out, ("results.json", "programs/a-1.out", "programs/b-0.out"), "ib_write_bw -D 1")
lasted = [(p["end_ps"] - p["start_ps"]) / 1e12 for p in res["programs"]] if res else []
check(rc == 0 and len(lasted) == 2 and all(1.0 < t < 3.0 for t in lasted),
      f"ib_write_bw -D 1: both exit 0 after 1 s to 3 s of simulated time ({lasted}, {stderr.strip()})")
row = re.search(r"^\s*65536\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)", program_text(out, "a-1.out"), re.M)
_, _, _, ires = run(f"name: bw\nfabric: roce_v2\nstop: 5s\n{TOPOLOGY}capture: {{pcap: none}}\nprograms:\n"
                    f"  - {{host: b, run: \"ib_write_bw -n 5000 -s 65536 -p {PORT}\"}}\n"
                    f"  - {{host: a, run: \"ib_write_bw -n 5000 -s 65536 -p {PORT} {{b}}\", start: 10us}}\n",
                    os.path.join(d, "ib_write_bw_iterations"))
irow = re.search(r"^\s*65536\s+5000\s+([0-9.]+)\s+([0-9.]+)",
                 program_text(os.path.join(d, "ib_write_bw_iterations"), "a-1.out"), re.M)
if check(row is not None and irow is not None, "ib_write_bw -D 1 and -n 5000: their result rows"):
    bw, ibw = float(row.group(3)), float(irow.group(2))
    check(int(row.group(1)) > 100000 and abs(bw - ibw) <= 0.05 * ibw,
          f"ib_write_bw -D 1: {row.group(1)} iterations, BW average {bw} MB/s within 5 % of -n 5000's {ibw}")

# alarm, setitimer, getitimer and ualarm on the simulated clock, with the kernel's signal semantics.
probe = os.path.join(d, "alarm_probe")
cc = subprocess.run(["cc", "-O1", "-o", probe, os.path.join(os.path.dirname(os.path.abspath(__file__)), "alarm_probe.c"),
                     "-libverbs"], capture_output=True, text=True)
if check(cc.returncode == 0, "alarm_probe compiles", cc):
    out = os.path.join(d, "alarm")
    rc, _, stderr, res = run(f"name: p\nfabric: roce_v2\nstop: 10s\n{TOPOLOGY}capture: {{pcap: none}}\nprograms:\n"
                             f"  - {{host: a, run: \"{probe}\"}}\n", out, expect=None)
    want = ("sleep left 3 after 2.000001 fired 1\n"
            "nanosleep -1 Interrupted system call rem 0.749999020 at 0.250001 n=2\n"
            "nanosleep -1 Interrupted system call rem 0.900000020 at 0.350001 n=3\n"
            "nanosleep -1 Interrupted system call rem 0.900000020 at 0.450001 n=4\n"
            "nanosleep -1 Interrupted system call rem 0.900000020 at 0.550001 n=5\n"
            "left 0.099999 every 0.100000\nalarm(0) -> 1\nignored: slept 0.005000\n")
    got = program_text(out, "a-0.out") if res else ""
    check(got == want, f"alarm_probe: timers on the simulated clock:\n{got}")
    check(rc == 4 and res["programs"][0]["signal"] == "SIGALRM" and 3.55 < res["programs"][0]["wall_s"] < 3.56,
          f"alarm_probe: the default SIGALRM ends it 1 s after alarm(1) ({stderr.strip()})")

# The alarm against waits on an out-of-band socket, over the kernel's TCP (roce_v2) and the side channel (ib): EINTR
# without SA_RESTART, restarted with it unless the socket has a timeout, SO_RCVTIMEO's EAGAIN, an ignored SIGALRM.
SERVER_WANT = ("accept -1 Interrupted system call at 1.00 n=1\n"
               "accept restarted 0  at 3.00 n=2\n"
               "recv with a timeout, SA_RESTART -1 Interrupted system call at 4.00 n=3\n"
               "recv timed out -1 Resource temporarily unavailable at 4.50 n=3\n"
               "recv 5  at 5.00 n=3\n"
               "recv -1 Interrupted system call at 6.00 n=4\n"
               "recv restarted 5  at 7.00 n=4\n"
               "recv ignoring SIGALRM 0  at 8.00 n=4\n")
if cc.returncode == 0:  # the same alarm_probe, as a server and a client
    for fabric, nowhere in (("roce_v2", "Interrupted system call at 0.00 n=1"), ("ib", "Network is unreachable at 0.00 n=0")):
        out = os.path.join(d, f"socket_alarm_{fabric}")
        rc, _, stderr, res = run(f"name: p\nfabric: {fabric}\nstop: 20s\n{TOPOLOGY}capture: {{pcap: none}}\nprograms:\n"
                                 f"  - {{host: b, run: \"{probe} server {PORT}\"}}\n"
                                 f"  - {{host: a, run: \"{probe} client {{b}} {PORT} 10.0.0.99\"}}\n", out)
        server, client = (program_text(out, f) if rc == 0 else stderr for f in ("b-0.out", "a-1.out"))
        check(server == SERVER_WANT, f"{fabric}: accept and recv against the alarm as on Linux:\n{server}")
        # The SYNs to an address nobody has go unanswered (roce_v2); the side channel knows at once (ib).
        check(client.startswith(f"connect nowhere -1 {nowhere}\nconnect 0  at 3.00"),
              f"{fabric}: connect against the alarm:\n{client}")

# ibverbs-utils' other pingpongs on every fabric: UD and UC where the fabric has them; on iwarp (RC only, RFC 5040)
# ibv_create_qp fails with EOPNOTSUPP as on siw and iw_cxgb4, and the summary names the refused verb; an SRQ
# (16 QPs sharing one) everywhere, iwarp's QPs taking a WQE when a message starts.
for tool, qp_type in (("ibv_ud_pingpong", "IBV_QPT_UD"), ("ibv_uc_pingpong", "IBV_QPT_UC"), ("ibv_srq_pingpong", "")):
    for fabric in FABRICS:
        out = os.path.join(d, f"{tool}_{fabric}")
        rc, stdout, stderr, res = run(f"name: t\nfabric: {fabric}\nstop: 500ms\n{TOPOLOGY}programs:\n"
                                      f"  - {{host: b, run: \"{tool} -g 0 -n 100 -p {PORT}\"}}\n"
                                      f"  - {{host: a, run: \"{tool} -g 0 -n 100 -p {PORT} {{b}}\", start: 10us}}\n",
                                      out, expect=None)
        if fabric == "iwarp" and qp_type:
            refusal = f"ibv_create_qp ({qp_type}): EOPNOTSUPP"
            check(rc == 4 and res is not None and all(p["refused_verbs"] == [refusal] for p in res["programs"])
                  and f"the device refused {refusal}" in stdout and f"after the device refused {refusal}" in stderr,
                  f"iwarp: {tool} refused with EOPNOTSUPP, said in the summary ({stderr.strip()})")
            continue
        usec = re.findall(r"= ([0-9.]+) usec/iter", program_text(out, "a-1.out")) if res else []
        check(rc == 0 and len(usec) == 1, f"{fabric}: {tool} exits 0 with its usec/iter ({stderr.strip()})")
        if rc == 0:
            for pcap in sorted(os.listdir(os.path.join(out, "pcap"))):
                check_gui_clean(os.path.join(out, "pcap", pcap))

# RDMA CM (perftest -R) is not modelled: librdmacm fails at once, and the summary says so.
out = os.path.join(d, "rdma_cm")
rc, stdout, stderr, res = run(f"name: cm\nfabric: roce_v2\n{TOPOLOGY}programs:\n"
                              f"  - {{host: b, run: \"ib_send_lat -R -n 10 -p {PORT}\"}}\n", out, expect=None)
check(rc == 4 and "called RDMA CM (librdmacm" in stdout and "rdma_create_event_channel failed" in
      program_text(out, "b-0.err"), f"perftest -R: refused, the summary names RDMA CM ({stderr.strip()})")

# A program that waits by reading memory no peer may write (not a region registered with IBV_ACCESS_REMOTE_WRITE):
# killed after `silence` of real time, and said why.
spin = os.path.join(d, "spin")
cc = subprocess.run(["cc", "-x", "c", "-", "-o", spin, "-libverbs"], capture_output=True, text=True,
                    input="#include <infiniband/verbs.h>\nstatic volatile int never;\n"
                          "int main(void) { int n; ibv_free_device_list(ibv_get_device_list(&n)); while (!never); }\n")
if check(cc.returncode == 0, f"the spinning probe compiles ({cc.stderr.strip()})"):
    rc, _, stderr, res = run(f"name: spin\nfabric: roce_v2\n{TOPOLOGY}programs:\n  - {{host: a, run: {spin}, silence: 1s}}\n",
                             os.path.join(d, "spin_run"), expect=None)
    check(rc == 4 and "waits by reading memory" in stderr and res["programs"][0]["signal"] == "SIGKILL",
          f"a program spinning on memory no peer writes: killed with the reason ({stderr.strip()})")

# A program of our own: /proc/cpuinfo (through fopen and open) shows the simulated host, its cores at the TSC's
# rate, whatever machine this runs on; the clocks start where docs/programs.md says.
PROBE = r"""
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
int main(void) {
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  printf("devices %d %s\n", n, n > 0 ? ibv_get_device_name(list[0]) : "-");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  int processors = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "processor", 9) == 0) processors++;
    if (strncmp(line, "cpu MHz", 7) == 0 && processors == 1) printf("%s", line);
  }
  printf("processors %d\n", processors);
  int fd = open("/proc/cpuinfo", O_RDONLY);
  ssize_t got = read(fd, line, 9);
  printf("open %.*s\n", (int)(got > 0 ? got : 0), line);
  struct timeval tv;
  gettimeofday(&tv, NULL);
  printf("time %ld\n", (long)tv.tv_sec);
  return 0;
}
"""
probe = os.path.join(d, "probe")
cc = subprocess.run(["cc", "-x", "c", "-", "-o", probe, "-libverbs"], input=PROBE, capture_output=True, text=True)
if check(cc.returncode == 0, f"the probe compiles ({cc.stderr.strip()})"):
    out = os.path.join(d, "probe_run")
    rc, _, stderr, res = run(f"name: probe\nfabric: ib\nhost: {{cores: 3}}\n{TOPOLOGY}programs:\n"
                             f"  - {{host: a, run: {probe}}}\n", out)
    text = program_text(out, "a-0.out") if rc == 0 else stderr
    check(re.search(r"cpu MHz\s+: 2000\.000\n", text) is not None, f"/proc/cpuinfo: the TSC's 2000 MHz ({text})")
    check("processors 3\n" in text, "/proc/cpuinfo: one processor per simulated core")
    check("open processor\n" in text, "/proc/cpuinfo through open(2) too")
    check("devices 1 rdmasim0\n" in text and "time 1700000000\n" in text, "the device, and the simulated clock")

# Determinism: the same run again is byte for byte the same, its out-of-band TCP (ISNs, ports) included.
for fabric in ("roce_v2", "iwarp"):
    out2 = os.path.join(d, f"pp_{fabric}_again")
    run(pingpong_yaml(fabric), out2)
    for f in ("results.json", "pcap/a-0.pcap", "pcap/b-0.pcap", "programs/a-1.out", "programs/b-0.out"):
        a, b = os.path.join(d, f"pp_{fabric}", f), os.path.join(out2, f)
        check(os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read(), f"{fabric} deterministic: {f}")

# A client with no server: over IP its SYN is answered with a RST (in the capture, checksum good), and connect fails
# with ECONNREFUSED, as on real hosts.
out = os.path.join(d, "refused")
rc, _, stderr, res = run(f"name: refused\nfabric: roce_v2\nstop: 50ms\n{TOPOLOGY}programs:\n"
                         f"  - {{host: a, run: \"ibv_rc_pingpong -g 0 -n 10 -p {PORT} {{b}}\"}}\n", out, expect=None)
check(rc == 4 and res is not None and res["programs"][0]["exit_code"] == 1
      and f"Couldn't connect to 10.0.0.2:{PORT}" in program_text(out, "a-0.err"),
      f"refused: the client cannot connect ({stderr.strip()})")
segments = oob_exchange(os.path.join(out, "pcap", "a-0.pcap"), PORT)
check([(s[0], s[4] & 0x17, s[6]) for s in segments] == [("10.0.0.1", 0x02, "1"), ("10.0.0.2", 0x14, "1")],
      f"refused: its SYN, b's RST-ACK ({segments})")

# A program not found: refused before anything runs, at its place in the file.
out = os.path.join(d, "notfound")
rc, _, stderr, _ = run(f"name: nf\n{TOPOLOGY}programs:\n  - {{host: a, run: \"no_such_program_here -v\"}}\n", out,
                       expect=2)
check(re.search(r"notfound\.yaml:4:\d+: programs\[0\]\.run: program 'no_such_program_here' not found", stderr)
      is not None, f"not found: a located error ({stderr.strip()})")
check(not os.path.exists(out), "not found: no output written")

# fabric tcp has no RDMA device to open.
rc, _, stderr, _ = run(f"name: plain\nfabric: tcp\n{TOPOLOGY}programs:\n  - {{host: a, run: ibv_devinfo}}\n",
                       os.path.join(d, "plain"), expect=2)
check(re.search(r"plain\.yaml:5:\d+: programs: fabric tcp has no RDMA device", stderr) is not None,
      f"tcp: refused at the programs ({stderr.strip()})")

# A program that exits non-zero: the run fails and says which.
out = os.path.join(d, "fails")
rc, stdout, stderr, res = run(f"name: fails\n{TOPOLOGY}programs:\n  - {{host: a, run: \"ibv_rc_pingpong --bogus\"}}\n",
                              out, expect=None)
check(rc != 0, f"a failing program fails the run (exit {rc})")
check(res is not None and res["programs"][0]["exit_code"] == 1, "its exit code is in results.json")
check(re.search(r"a-0\s+a\s+1\s", stdout) is not None, "the summary line shows exit 1")
check("program a-0 (ibv_rc_pingpong --bogus) exited with 1" in stderr, f"the error names it ({stderr.strip()})")

# A pair still running at `stop`: both reported and killed.
out = os.path.join(d, "stopped")
text = pingpong_yaml("roce_v2").replace("-n 1000", "-n 100000000").replace("stop: 500ms", "stop: 2ms")
rc, stdout, stderr, res = run(text, out, expect=None)
check(rc != 0, f"programs still running at stop fail the run (exit {rc})")
if check(res is not None, "stopped: results.json written"):
    for p in res["programs"]:
        check("stop time" in p.get("killed", "") and p["signal"] == "SIGKILL", f"stopped: {p['host']} reported killed")
check("killed: still running when the experiment's stop time came" in stdout, "stopped: the summary says so")
check(orphans() == [], "stopped: no program left running")

# A server nobody connects to: the simulation runs out of things to do.
out = os.path.join(d, "alone")
rc, stdout, _, res = run(f"name: alone\n{TOPOLOGY}programs:\n  - {{host: a, run: \"ibv_rc_pingpong -g 0 -p {PORT}\"}}\n",
                         out, expect=None)
check(rc != 0 and res is not None and "nothing left to do" in res["programs"][0].get("killed", ""),
      "a server alone is reported killed when nothing is left to simulate")
check(orphans() == [], "alone: no program left running")

# Ctrl-C: the programs die with rdmasim.
path = os.path.join(d, "interrupted.yaml")
with open(path, "w") as f:
    f.write(pingpong_yaml("roce_v2").replace("-n 1000", "-n 100000000"))
p = subprocess.Popen([BINARY, "run", path, "--out", os.path.join(d, "interrupted")], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
deadline = time.time() + 20
while time.time() < deadline and len(orphans()) < 2:
    time.sleep(0.05)
check(len(orphans()) == 2, "interrupted: both programs were running")
# They run with no signal blocked, as from a shell (rdmasim itself blocks
# SIGINT and SIGTERM for its interrupt thread).
for pid in orphans():
    with open(f"/proc/{pid}/status") as f:
        blocked = [line.split()[1] for line in f if line.startswith("SigBlk:")]
    check(blocked == ["0000000000000000"], f"interrupted: program {pid} starts with signals blocked: {blocked}")
p.send_signal(signal.SIGINT)
p.wait(timeout=30)
for _ in range(100):
    if not orphans():
        break
    time.sleep(0.05)
check(orphans() == [], "interrupted: no program outlives rdmasim")

finish()
