"""Payload bytes that no Wireshark heuristic claims (docs/captures.md).

The other capture tests switch the upper-layer heuristics off (e2e.TSHARK_OPTS),
as a script should; a person opening a capture in Wireshark has them on. With
them on, the workloads' ASCII pattern (workloads/payload_pattern.hpp) must still
dissect as plain data under the transport on every RDMA fabric: no SMB Direct
fragments, no RPC-over-RDMA or NVMe-over-RDMA, nothing malformed (an earlier
pattern made tshark call RoCE payloads SMB Direct fragments, and the GUI showed a
dissector bug on iWARP SENDs). WRITEs and READs with computed payloads, SENDs
from memory, generated flows and every other operation of each fabric, each of several segments (memory and pattern
give byte-identical captures: test_payload_pattern.py).

Each capture is also read as the GUI reads it, two passes with default
preferences (e2e.check_gui_clean): nothing malformed, no error-level expert
info. The quickstart on iwarp, whose SENDs fit one DDP segment, is clean
without exception; on a SEND of several segments Wireshark 4.0 has a
defect no payload avoids (docs/captures.md), tolerated on those frames alone."""
import os
import subprocess

from e2e import SOURCE, check, check_gui_clean, finish, gui_problems, run, tmpdir, tshark_version

EXPERIMENT = """name: heuristics_{fabric}
fabric: {fabric}
seed: 3
topology: {{generate: {{kind: star, hosts: 4}}}}
workloads:
  - {{name: w, kind: rdma_write, from: h0, to: h1, size: 8KiB, count: 4, payload: {payload}}}
  - {{name: s, kind: send, from: h2, to: h3, size: 6000, count: 4}}
  - {{name: r, kind: rdma_read, from: h1, to: h2, size: 5000, count: 2, payload: {payload}}}
  - {{name: f, kind: flows, cdf: websearch, load: 0.2, duration: 20us}}
{extra}capture: {{pcap: hosts}}
"""
# The operations iwarp has not (RFC 5040: no immediate data, atomics, UC or UD).
IBA_ONLY = """  - {name: wi, kind: rdma_write_imm, from: h1, to: h0, size: 5000, count: 2}
  - {name: si, kind: send_imm, from: h3, to: h2, size: 3000, count: 2}
  - {name: us, kind: send, qp: ud, from: h0, to: h3, size: 1000, count: 2}
  - {name: uc, kind: rdma_write, qp: uc, from: h3, to: h0, size: 5000, count: 2}
  - {name: ucs, kind: send, qp: uc, from: h2, to: h1, size: 3000, count: 2}
  - {name: ac, kind: atomic_cas, from: h0, to: h2, count: 2}
  - {name: af, kind: atomic_fadd, from: h2, to: h0, count: 2}
"""
TRANSPORT = {"roce_v2": "infiniband", "roce_v1": "infiniband", "ib": "infiniband", "iwarp": "iwarp_ddp_rdmap"}
# Upper layers that, switched on by default, look into RDMA payloads.
CLAIMERS = ("smb_direct", "rpcrdma", "nvme-rdma", "iser", "sdp", "smc", "lnet", "drbd", "eoib", "fcoib")

base = tmpdir()
for fabric, transport in TRANSPORT.items():
    for payload in ("pattern",):
        out = os.path.join(base, f"{fabric}_{payload}")
        _, _, _, r = run(EXPERIMENT.format(fabric=fabric, payload=payload, extra="" if fabric == "iwarp" else IBA_ONLY), out)
        if not r:
            continue
        check(all(w["data_verified"] for w in r["workloads"]), f"{fabric} {payload}: data verified")
        data_frames = 0
        for name in sorted(os.listdir(os.path.join(out, "pcap"))):
            path = os.path.join(out, "pcap", name)
            # Default preferences: no --disable-heuristic here on purpose.
            p = subprocess.run(["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.protocols", "-e",
                                "_ws.malformed", "-e", "_ws.expert.severity"],
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 0, f"tshark on {path}: {p.stderr}")
            for line in p.stdout.splitlines():
                protocols, malformed, severity = (line.split("\t") + ["", ""])[:3]
                layers = protocols.split(":")
                check(not malformed and all(int(s) < 8388608 for s in severity.split(",") if s),
                      f"{path}: malformed or error-level expert info with default heuristics: {line}")
                claimed = [c for c in CLAIMERS if any(layer.startswith(c) for layer in layers)]
                check(not claimed, f"{path}: payload claimed by {claimed}: {protocols}")
                if layers[-1] == "data":
                    check(transport in layers, f"{path}: data not under {transport}: {protocols}")
                    data_frames += 1
        check(data_frames > 0, f"{fabric} {payload}: frames with payload in the captures")
        for name in sorted(os.listdir(os.path.join(out, "pcap"))):
            path = os.path.join(out, "pcap", name)
            known = check_gui_clean(path)
            # Exactly the last segments of SENDs of several segments (6000 bytes: two), as
            # docs/captures.md says 4.0 fails on every one (later releases: none, or some).
            sends = subprocess.run(["tshark", "-n", "-r", path, "-Y", "iwarp_rdma.opcode == 3 && iwarp_ddp.last_flag "
                                    "&& iwarp_ddp.mo > 0"], capture_output=True, text=True).stdout.count("\n")
            exact = known == sends if tshark_version().startswith("4.0.") else known <= sends
            check(exact, f"{path}: the 4.0 defect on {known} frames, {sends} last segments of SENDs")

# The README's first capture, on iwarp: clean as the GUI reads it, with no exception.
out = os.path.join(base, "quickstart_iwarp")
_, _, _, r = run(os.path.join(SOURCE, "examples", "quickstart.yaml"), out, "--fabric", "iwarp")
if r:
    for name in sorted(os.listdir(os.path.join(out, "pcap"))):
        path = os.path.join(out, "pcap", name)
        problems = gui_problems(path)
        check(not problems, f"{path}: as Wireshark reads it: {problems[:5]}")

finish()
