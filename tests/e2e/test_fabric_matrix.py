"""Every fabric x every workload kind it accepts, on a six-host star with
`capture: {pcap: all}`, plain, with `loss: 0.01` on every link, and with
`flow_control: pfc`: exit 0, every workload finished with `data_verified`,
and every capture clean in tshark (no malformed frame, no error-level expert
info, only the fabric's protocol; and as the Wireshark GUI reads it, e2e.check_gui_clean) with right ICRCs/VCRCs/MPA CRCs, checked
by the independent implementations of the other capture tests. The kinds a
fabric cannot run are refused before the start with a located error (exit 2)
that names the fabric's reason."""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import check  # noqa: E402
import test_ib_captures as ibcap  # noqa: E402  (its ICRC/VCRC and ERF reader)
import test_iwarp_captures as iwcap  # noqa: E402  (its MPA CRC32c check and tshark options)

FABRICS = ("ib", "roce_v1", "roce_v2", "iwarp", "tcp")
HOSTS = ["h0", "h1", "h2", "h3"]

# name -> workload. Small counts: this is a sweep of the combinations, not
# of volume. Sizes cross the 1024-byte MTU so messages take several packets.
KINDS = {
    "send": "{kind: send, from: h0, to: h1, size: 3000, count: 3, outstanding: 2}",
    "send_uc": "{kind: send, qp: uc, from: h1, to: h2, size: 3000, count: 3}",
    "send_ud": "{kind: send, qp: ud, from: h2, to: h3, size: 1000, count: 3}",
    "send_imm": "{kind: send_imm, from: h3, to: h0, size: 3000, count: 3}",
    "rdma_write": "{kind: rdma_write, from: h0, to: h2, size: 5000, count: 3, outstanding: 2}",
    "rdma_write_uc": "{kind: rdma_write, qp: uc, from: h3, to: h1, size: 5000, count: 3}",
    "rdma_write_imm": "{kind: rdma_write_imm, from: h1, to: h3, size: 5000, count: 3}",
    "rdma_read": "{kind: rdma_read, from: h2, to: h0, size: 5000, count: 3, outstanding: 2}",
    "atomic_cas": "{kind: atomic_cas, from: h0, to: h3, count: 3}",
    "atomic_fadd": "{kind: atomic_fadd, from: h1, to: h0, count: 3}",
    "incast": "{kind: incast, from: [h1, h2, h3], to: h0, size: 4KiB, count: 2}",
    "incast_send": "{kind: incast, op: send, from: [h0, h2, h3], to: h1, size: 4KiB, count: 2}",
    "all_to_all": "{kind: all_to_all, size: 2KiB, count: 2}",
    "all_to_all_send": "{kind: all_to_all, op: send, hosts: [h1, h2, h3], size: 2KiB, count: 2}",
    "all_to_all_read": "{kind: all_to_all, op: rdma_read, hosts: [h0, h1, h2], size: 2KiB, count: 2}",
    "pingpong": "{kind: pingpong, from: h2, to: h1, size: 64, count: 3}",
    "pingpong_send": "{kind: pingpong, op: send, from: h3, to: h2, size: 64, count: 3}",
    # The pong echoes what it received, after the GRH of its UD buffer.
    "pingpong_ud": "{kind: pingpong, op: send, qp: ud, from: h0, to: h2, size: 64, count: 3}",
    "write_bw": "{kind: write_bw, from: h0, to: h1, size: 4KiB, count: 3}",
    "write_lat": "{kind: write_lat, from: h1, to: h2, size: 64, count: 3}",
    "read_bw": "{kind: read_bw, from: h2, to: h3, size: 4KiB, count: 3}",
    "read_lat": "{kind: read_lat, from: h3, to: h0, size: 64, count: 3}",
    "send_bw": "{kind: send_bw, from: h1, to: h0, size: 4KiB, count: 3}",
    "send_lat": "{kind: send_lat, from: h2, to: h1, size: 64, count: 3}",
    "atomic_bw": "{kind: atomic_bw, from: h3, to: h2, count: 3}",
    "atomic_lat": "{kind: atomic_lat, op: atomic_cas, from: h0, to: h3, count: 3}",
    "flows": "{kind: flows, hosts: [h0, h1, h2], duration: 10us, load: 0.3}",
    "flows_send": "{kind: flows, op: send, hosts: [h1, h2, h3], duration: 10us, load: 0.3}",
    "compute": "{kind: compute, on: h2, work: 20us}",
    "udp": "{kind: udp, from: h0, to: h3, rate: 10Gbps, duration: 10us}",
}

# UC and UD do not recover lost packets: under loss their messages may never
# arrive, so those runs leave them out.
UNRELIABLE = {"send_uc", "send_ud", "rdma_write_uc", "pingpong_ud"}

# What each fabric refuses (docs/yaml.md "What the transports allow"), and a
# word the refusal must give as its reason.
RDMA_ONLY = {"send_imm", "rdma_write", "rdma_write_uc", "rdma_write_imm", "rdma_read", "atomic_cas",
             "atomic_fadd", "incast", "all_to_all", "all_to_all_read", "write_bw", "write_lat",
             "read_bw", "read_lat", "atomic_bw", "atomic_lat", "flows"}
REFUSED = {
    "ib": {"udp": "fabric: tcp"},
    "roce_v1": {"udp": "fabric: tcp"},
    "roce_v2": {"udp": "fabric: tcp"},
    "iwarp": {"udp": "fabric: tcp", "send_uc": "RFC 5040", "send_ud": "RFC 5040", "rdma_write_uc": "RFC 5040",
              "pingpong_ud": "RFC 5040",
              "send_imm": "RFC 5040", "rdma_write_imm": "RFC 5040", "atomic_cas": "RFC 5040",
              "atomic_fadd": "RFC 5040", "atomic_bw": "RFC 5040", "atomic_lat": "RFC 5040"},
    "tcp": {**{k: "has no RDMA" for k in RDMA_ONLY}, "send_uc": "qp: uc", "send_ud": "qp: ud",
            "pingpong_ud": "qp: ud"},
}

VARIANTS = {"plain": "", "loss": "loss: 0.01, ", "pfc": ""}


def experiment(fabric, variant, kinds):
    workloads = "".join(f"  - {{name: {k}, {KINDS[k][1:]}\n" for k in kinds)
    return f"""\
name: {fabric}_{variant}
fabric: {fabric}
seed: 5
{"flow_control: pfc" if variant == "pfc" else ""}
link: {{{VARIANTS[variant]}bandwidth: 25Gbps, delay: 500ns, mtu: 1024}}
topology:
  hosts: [{", ".join(HOSTS)}]
  switches: [s1]
  links: [{", ".join(f"[{h}, s1]" for h in HOSTS)}]
workloads:
{workloads}capture: {{pcap: all}}
"""


BAD = "_ws.malformed || _ws.short || _ws.expert.severity >= 8388608"
# Frames each fabric may carry besides its own: ARP, IPv6 neighbour discovery
# (roce_v1's GID resolution), PFC (macc.cbfc).
OTHER = "arp || icmpv6 || macc.cbfc.enbv"
# A DCQCN CNP (BTH opcode 129) is the one frame tshark 4.0 shows as vendor data.
IBA = "infiniband.bth && ((infiniband.invariant.crc && !infiniband.vendor) || infiniband.bth.opcode == 129)"
PROTOCOL = {
    "ib": IBA,
    "roce_v1": f"(eth.type == 0x8915 || vlan.etype == 0x8915) && {IBA}",  # PFC tags frames with the priority
    "roce_v2": f"udp.dstport == 4791 && {IBA}",
    "iwarp": "tcp && (tcp.len == 0 || iwarp_mpa.req || iwarp_mpa.rep || (iwarp_mpa.fpdu && iwarp_ddp && iwarp_rdma))",
    "tcp": "(tcp && tcp.checksum.status == 1) || (udp && udp.checksum.status == 1)",
}


def bad_frames(fabric, variant, path):
    """tshark's list of frames that are malformed, carry error-level expert
    info, or are not the fabric's protocol."""
    protocol = PROTOCOL[fabric]
    opts = iwcap.IWARP_OPTS if fabric == "iwarp" else []
    if fabric == "iwarp" and variant == "loss":
        # tshark dissects MPA only in a connection whose startup it saw, and
        # takes a retransmitted MPA request or reply for an FPDU (a malformed
        # one) unless its sequence analysis marks it a retransmission; after
        # loss some data segments are then left undissected. The MPA CRCs
        # are still all checked below (own_crcs).
        opts, protocol = iwcap.SEQ_OPTS, "tcp"
    return e2e.tshark(path, *opts, "-Y", f"({BAD}) || !(({protocol}) || {OTHER})").strip()


def own_crcs(fabric, path):
    """The CRCs tshark does not check: (frames checked, frames wrong)."""
    if fabric == "iwarp":
        return iwcap.check_fpdu_crcs(path), 0  # checks itself
    if fabric == "ib":
        frames = [f for _ns, _rx, f in ibcap.read_pcap(path)[1]]
        return len(frames), sum(1 for f in frames if crcs_not_ok(f))
    _lt, frames = e2e.read_pcap(path)
    n = wrong = 0
    for _ts, f in frames:
        if fabric == "roce_v2" and e2e.is_roce_v2(f):
            c, w = e2e.roce_v2_icrc(f)
        elif fabric == "roce_v1" and f[12:14] in (b"\x89\x15", b"\x81\x00") and (
                f[12:14] == b"\x89\x15" or f[16:18] == b"\x89\x15"):
            c, w = e2e.roce_v1_icrc(f)
        else:
            continue
        n += 1
        wrong += c != w
    return n, wrong


def crcs_not_ok(frame):
    icrc_ok, vcrc_ok = ibcap.crcs_ok(frame)
    return not (icrc_ok and vcrc_ok)


def check_run(fabric, variant, kinds, tmp):
    out = os.path.join(tmp, f"{fabric}_{variant}")
    _rc, _o, _e, res = e2e.run(experiment(fabric, variant, kinds), out)
    what = f"{fabric} {variant}"
    if not check(res is not None, f"{what}: results.json"):
        return []
    check(res["fabric"] == fabric, f"{what}: results.json names the fabric")
    got = {w["name"]: w for w in res["workloads"]}
    check(sorted(got) == sorted(kinds), f"{what}: a result per workload")
    for k, w in got.items():
        check(w["finished"], f"{what}: {k} finished")
        if k != "compute" and k != "udp":
            check(w["data_verified"] and not w["data_mismatch"], f"{what}: {k} data_verified")
    if variant == "loss":
        check(sum(p["drops"] for p in res["ports"]) > 0 or fabric == "ib", f"{what}: some frames were lost")
    pdir = os.path.join(out, "pcap")
    pcaps = sorted(os.listdir(pdir))
    check(len(pcaps) == 2 * len(HOSTS), f"{what}: a capture per port ({pcaps})")
    paths = [os.path.join(pdir, p) for p in pcaps]
    if fabric == "iwarp":
        # tshark keeps MPA state per TCP connection: one capture at a time.
        return [(fabric, variant, p, [p]) for p in paths]
    # The other dissectors keep no state across frames (and tcp's only
    # warns about a stream seen again), so one tshark reads all the run's
    # captures one after the other: tshark's start-up dominates its time.
    merged = os.path.join(out, "all.pcap")
    subprocess.run(["mergecap", "-a", "-F", "pcap", "-w", merged, *paths], check=True, capture_output=True)
    return [(fabric, variant, merged, paths)]


def check_pcaps(job):
    """One tshark pass over `tshark_path` (the run's captures one after the
    other, or one capture), then the CRCs of every capture. Returns the
    number of frames whose CRCs were checked."""
    fabric, variant, tshark_path, paths = job
    bad = bad_frames(fabric, variant, tshark_path)
    check(bad == "", f"{tshark_path}: frames malformed, in error or not {fabric}:\n{bad[:1500]}")
    total = 0
    for path in paths:
        e2e.check_gui_clean(path)  # one file, as Wireshark opens it
        n, wrong = own_crcs(fabric, path)
        check(wrong == 0, f"{path}: {wrong} of {n} frames with a wrong CRC")
        total += n
    return total


def check_refusals(tmp):
    """Each refused kind alone: exit 2 before the start, at the kind's line."""
    for fabric, refused in REFUSED.items():
        for k, reason in refused.items():
            path = e2e.write_text(os.path.join(tmp, f"refuse_{fabric}_{k}.yaml"), experiment(fabric, "plain", [k]))
            p = e2e.rdmasim("validate", path, timeout=60)
            msg = p.stderr.strip()
            check(p.returncode == 2, f"{fabric} {k}: refused with exit 2 (got {p.returncode}: {msg})")
            check(re.match(re.escape(path) + r":1[0-9]:\d+: workloads\[0\]\.(kind|qp|op): ", msg) is not None,
                  f"{fabric} {k}: the refusal points at the workload's line ({msg})")
            check(reason in msg, f"{fabric} {k}: the refusal says '{reason}' ({msg})")


def check_udp_alone(tmp):
    """A udp workload alone whose last datagram (offered one 11.8 us gap
    before the 20 us window ends) is received before the window ends: the
    run goes idle then, and every datagram offered was delivered."""
    out = os.path.join(tmp, "udp_alone")
    text = experiment("tcp", "plain", ["udp"]).replace("rate: 10Gbps, duration: 10us", "rate: 1Gbps, duration: 20us")
    _rc, _o, _e, res = e2e.run(text, out)
    if check(res is not None, "udp alone: results.json"):
        w = res["workloads"][0]
        check(w["datagrams"]["offered"] == 2 and w["datagrams"]["delivered"] == 2, f"udp alone: 2 of 2 ({w})")
        check(res["end_time_ps"] < 20_000_000, "udp alone: the run ends before the window does")
        check(w["finished"], "udp alone: finished with every datagram delivered")


def main():
    tmp = e2e.tmpdir()
    check_refusals(tmp)
    check_udp_alone(tmp)
    jobs = []
    for fabric in FABRICS:
        kinds = [k for k in KINDS if k not in REFUSED[fabric]]
        for variant in VARIANTS:
            jobs += check_run(fabric, variant, [k for k in kinds if variant != "loss" or k not in UNRELIABLE], tmp)
    with ThreadPoolExecutor(2) as pool:
        counts = list(pool.map(check_pcaps, jobs))
    for fabric in FABRICS[:-1]:  # tcp's checksums are tshark's to check
        n = sum(c for job, c in zip(jobs, counts) if job[0] == fabric)
        check(n > 0, f"{fabric}: CRCs checked on {n} frames")
    e2e.finish()


if __name__ == "__main__":
    main()
