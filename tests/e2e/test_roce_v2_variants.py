"""Every basic operation, every QP type, IPv4 and IPv6, on RoCE v2: the
captures are clean and the data lands; the same seed gives byte-identical
output; and what is captured does not change what happens."""
import filecmp
import os

from e2e import OP, bth_records, check, check_roce_v2_capture, finish, run, tmpdir, tshark_fields

YAML = """
name: variants
fabric: roce_v2
ip: {ip}
seed: 11
link: {{bandwidth: 40Gbps, delay: 500ns, mtu: 2048}}
topology:
  hosts: [a, b, c]
  switches: [s1, s2]
  links: [[a, s1], [b, s2], [c, s1], [s1, s2]]
workloads:
  - {{name: send, kind: send, from: a, to: b, size: 5000, count: 8, outstanding: 2}}
  - {{name: send_imm, kind: send_imm, from: b, to: a, size: 100, count: 8}}
  - {{name: write_imm, kind: rdma_write_imm, from: c, to: b, size: 9KiB, count: 6, outstanding: 3}}
  - {{name: cas, kind: atomic_cas, from: a, to: c, count: 10, outstanding: 4}}
  - {{name: fadd, kind: atomic_fadd, from: b, to: c, count: 10}}
  - {{name: uc_write, kind: rdma_write, from: a, to: b, qp: uc, size: 6KiB, count: 5}}
  - {{name: uc_send, kind: send, from: c, to: a, qp: uc, size: 3KiB, count: 5}}
  - {{name: ud_send, kind: send, from: b, to: c, qp: ud, size: 2KiB, count: 6}}
  - {{name: ud_imm, kind: send_imm, from: c, to: a, qp: ud, size: 64, count: 6}}
  - {{name: inline, kind: rdma_write, from: b, to: a, size: 64, count: 4, inline_threshold: 128}}
capture:
  pcap: all
"""

for ip in ("ipv4", "ipv6"):
    d = tmpdir()
    out = os.path.join(d, ip)
    _, _, _, res = run(YAML.format(ip=ip), out)
    for w in res["workloads"]:
        check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["ops"] > 0,
              f"{ip} {w['name']}: all successful ({w['completions']})")
        check(w["data_verified"], f"{ip} {w['name']}: data verified")
    files = sorted(os.listdir(os.path.join(out, "pcap")))
    check(len(files) == 3 + 5, f"{ip}: pcap: all captures every port ({files})")
    for f in files:
        check_roce_v2_capture(os.path.join(out, "pcap", f))
    a = os.path.join(out, "pcap", "a-0.pcap")
    ops = {r[1] for r in bth_records(a)}
    for name in ("SEND_FIRST", "SEND_LAST", "CMP_SWAP", "ATOMIC_ACK"):
        check(OP[name] in ops, f"{ip}: a's capture has {name}")
    check(0x24 in ops or 0x20 in ops, f"{ip}: UC sends in a's capture")
    check(0x65 in ops, f"{ip}: UD SEND ONLY with immediate in a's capture")
    deth = tshark_fields(a, ["infiniband.deth.q_key", "infiniband.deth.srcqp"], "infiniband.deth")
    check(len(deth) >= 6 and all(int(q, 0) == 0x11111111 for q, _ in deth), f"{ip}: UD datagrams carry the Q_Key")
    if ip == "ipv6":
        n = tshark_fields(a, ["ipv6.src"], "ipv6")
        check(len(n) > 0, "ipv6: frames over IPv6")

    # Same seed, byte-identical output.
    out2 = os.path.join(d, ip + "-again")
    run(YAML.format(ip=ip), out2)
    for f in files:
        check(filecmp.cmp(os.path.join(out, "pcap", f), os.path.join(out2, "pcap", f), shallow=False),
              f"{ip}: {f} identical across runs with the same seed")
    check(filecmp.cmp(os.path.join(out, "results.json"), os.path.join(out2, "results.json"), shallow=False),
          f"{ip}: results.json identical across runs")

    # Capturing one switch only: an RC payload is then first read out of the
    # sender's memory at that switch (core/packet.hpp, deferred payloads).
    # Its frames, and every result, match the run that captured every port.
    out3 = os.path.join(d, ip + "-s2")
    _, _, _, res3 = run(YAML.format(ip=ip), out3, "--set", "capture.pcap=[s2]")
    only = sorted(os.listdir(os.path.join(out3, "pcap")))
    check(only and all(f.startswith("s2-") for f in only), f"{ip}: only s2 captured ({only})")
    for f in only:
        check(filecmp.cmp(os.path.join(out, "pcap", f), os.path.join(out3, "pcap", f), shallow=False),
              f"{ip}: {f} identical whether or not the hosts are captured")
    out4 = os.path.join(d, ip + "-none")
    _, _, _, res4 = run(YAML.format(ip=ip), out4, "--set", "capture.pcap=none")
    for r in (res3, res4):
        check(r["workloads"] == res["workloads"] and r["ports"] == res["ports"] and r["events"] == res["events"],
              f"{ip}: the same results with fewer captures")
finish()
