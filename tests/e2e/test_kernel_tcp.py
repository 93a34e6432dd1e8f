"""Kernel TCP sockets on fabric: tcp beside RDMA (examples/kernel_vs_rdma.yaml).
The same experiment on roce_v2 and on tcp: the kernel's latency is higher,
its CPU per GB moved several times higher, every byte is verified on both;
tcp's frames are plain Ethernet/IPv4/TCP with good checksums whose payload
is the workload's pattern; the socket buffers bound the window and the
throughput; send's patterns and flows run on sockets; what sockets are not
is refused at its line."""
import json
import os

from e2e import SOURCE, check, check_all_match, check_cpu_times, check_no_malformed, finish, rdmasim, run, \
    tmpdir, tshark_fields, workload

EXAMPLE = os.path.join(SOURCE, "examples/kernel_vs_rdma.yaml")

# compare: every RDMA fabric and tcp side by side.
out = os.path.join(tmpdir(), "compare")
p = rdmasim("compare", EXAMPLE, "--fabrics", "ib,roce_v2,iwarp,tcp", "--out", out)
check(p.returncode == 0, f"compare ran: {p.stdout}{p.stderr}")
print(p.stdout)
for row in ("lat latency p50 us", "cpu ms per GB, working", "cpu ms per GB, spinning"):
    check(row in p.stdout, f"the table has '{row}'")
with open(os.path.join(out, "compare.json")) as f:
    cmp = {e["fabric"]: e for e in json.load(f)["fabrics"]}
rdma, kern = cmp["roce_v2"], cmp["tcp"]
lat = {f: next(w for w in e["workloads"] if w["name"] == "lat") for f, e in cmp.items()}
bw = {f: next(w for w in e["workloads"] if w["name"] == "bw") for f, e in cmp.items()}
for f in cmp:
    check(lat[f]["data_verified"] and bw[f]["data_verified"], f"{f}: every byte verified")
check(lat["tcp"]["latency_ns"]["p50"] > 1.5 * lat["roce_v2"]["latency_ns"]["p50"],
      f"kernel TCP's ping-pong latency is well above RDMA's ({lat['tcp']['latency_ns']} vs {lat['roce_v2']['latency_ns']})")
check(bw["tcp"]["throughput_gbps"] < bw["roce_v2"]["throughput_gbps"],
      f"one TCP stream, CPU-bound, moves less than RDMA ({bw['tcp']['throughput_gbps']} vs {bw['roce_v2']['throughput_gbps']})")
check(set(cmp) == {"ib", "roce_v2", "iwarp", "tcp"}, f"all four ran: {sorted(cmp)}")
for f in ("ib", "roce_v2", "iwarp"):
    check(kern["cpu_work_ms_per_gb"] > 5 * cmp[f]["cpu_work_ms_per_gb"],
          f"the kernel works several times more per GB than {f} "
          f"({kern['cpu_work_ms_per_gb']} vs {cmp[f]['cpu_work_ms_per_gb']})")
check(kern["cpu_spin_ms_per_gb"] == 0 and rdma["cpu_spin_ms_per_gb"] > 0,
      "RDMA's programs poll (spin); the kernel's sleep")

# The tcp run itself: where its CPU went, and its frames.
with open(os.path.join(out, "tcp", "results.json")) as f:
    res = json.load(f)
check_cpu_times(res, "tcp")
for h in res["hosts"]:
    cores = h["cores"]
    check(sum(c["softirq_ps"] for c in cores) > 0 and sum(c["irq_ps"] for c in cores) > 0,
          f"{h['name']}: the receive path ran in IRQ and softirq")
    check(sum(c["syscall_ps"] for c in cores) > 0, f"{h['name']}: system calls and copies")
    check(h["kernel_rx"]["discarded"] == 0, f"{h['name']}: every TCP segment found its socket")
    check(h["interrupts"] > 0, f"{h['name']}: took interrupts")
# 13 MB at 80 Gb/s copied once on each side, plus a system call per send and recv.
a = next(h for h in res["hosts"] if h["name"] == "a")
check(sum(c["syscall_ps"] for c in a["cores"]) > 200 * 64 * 1024 * 8 / 80e9 * 1e12,
      "the sender's kernel time covers at least the copy of what it sent")
for host in ("a", "b"):
    pcap = os.path.join(out, "tcp", "pcap", f"{host}-0.pcap")
    check_no_malformed(pcap)
    check_all_match(pcap, "eth && ip && tcp && ip.checksum.status == 1 && tcp.checksum.status == 1 && "
                          "!tcp.analysis.retransmission && (tcp.port == 5201 || tcp.port == 5202)",
                    "good TCP segments of the two connections")
pcap = os.path.join(out, "tcp", "pcap", "a-0.pcap")
syn = tshark_fields(pcap, ["tcp.srcport", "tcp.dstport", "tcp.options.mss_val"], "tcp.flags.syn == 1")
check([r[:2] for r in syn] == [["49152", "5201"], ["5201", "49152"], ["49153", "5202"], ["5202", "49153"]],
      f"two handshakes, client ports from 49152 to servers from 5201 ({syn})")
check(all(r[2] == "4056" for r in syn), "MSS: the 4096-byte MTU less 40 bytes of headers")
# The first segment of each stream carries message 0's pattern.
first = tshark_fields(pcap, ["tcp.payload"], "tcp.dstport == 5202 && tcp.seq == 1 && tcp.len > 0")
check(first and bytes.fromhex(first[0][0].replace(":", ""))[:12] == b"bw       m00",
      f"the payload is the workload's pattern ({first[:1]})")

# The socket buffers bound the window and so the stream.
small = os.path.join(tmpdir(), "rcvbuf")
_, _, _, res_small = run(EXAMPLE, small, "--set", "fabric=tcp", "--set", "host.kernel.rcvbuf=8KiB",
                         "--set", "workloads.1.count=20")
w_small = workload(res_small, "bw")
check(w_small["data_verified"], "a small receive buffer: still every byte")
check(w_small["throughput_gbps"] < 0.5 * bw["tcp"]["throughput_gbps"],
      f"an 8 KiB window halves the stream at least ({w_small['throughput_gbps']} vs {bw['tcp']['throughput_gbps']})")
wins = tshark_fields(os.path.join(small, "pcap", "b-0.pcap"), ["tcp.window_size"], "ip.src == 10.0.0.2")
check(wins and max(int(r[0]) for r in wins) <= 8192, "b never offers more than its 8 KiB receive buffer")
sndbuf = os.path.join(tmpdir(), "sndbuf")
_, _, _, res_snd = run(EXAMPLE, sndbuf, "--set", "fabric=tcp", "--set", "host.kernel.sndbuf=8KiB",
                       "--set", "workloads.1.count=20")
w_snd = workload(res_snd, "bw")
check(w_snd["data_verified"] and w_snd["throughput_gbps"] < 0.5 * bw["tcp"]["throughput_gbps"],
      f"an 8 KiB send buffer blocks the sender on every ACK ({w_snd['throughput_gbps']} Gb/s)")

# send's patterns and flows, on sockets.
topo = "topology: {hosts: [a, b, c, d], switches: [s1], links: [[a, s1], [b, s1], [c, s1], [d, s1]]}\n"
text = (f"name: patterns\nfabric: tcp\nlink: {{bandwidth: 25Gbps, delay: 1us, mtu: 1500}}\n{topo}"
        "workloads:\n"
        "  - {name: in, kind: incast, op: send, from: [a, b, c], to: d, size: 100KiB, count: 5}\n"
        "  - {name: pp, kind: pingpong, op: send, from: a, to: b, size: 3000, count: 20}\n"
        "  - {name: fl, kind: flows, op: send, hosts: [a, b, c, d], cdf: hadoop, "
        "load: 0.3, duration: 1ms, start: 1ms}\n")
out = os.path.join(tmpdir(), "patterns")
_, stdout, _, res = run(text, out)
for name, ops in (("in", 15), ("pp", 20)):
    w = workload(res, name)
    check(w["ops"] == ops and w["data_verified"], f"{name}: {ops} messages over sockets, verified ({w['ops']})")
fl = workload(res, "fl")
check(fl["fct"]["completed"] == fl["fct"]["started"] > 0 and fl["data_verified"],
      f"flows over sockets: every flow completed and verified ({fl['fct']['completed']})")
check_no_malformed(os.path.join(out, "pcap", "d-0.pcap"))

# What a socket is not: refused before the run, at its line.
bad = [
    ("{kind: flows, op: rdma_write, hosts: [a, b], cdf: websearch, load: 0.1, duration: 10us}",
     "fabric: tcp has no RDMA: flows with op: rdma_write"),
    ("{kind: send, from: a, to: b, qp: ud}", "qp: ud has no counterpart"),
    ("{kind: send, from: a, to: b, size: 0}", "at least 1 byte"),
    ("{kind: send, from: a, to: b, post_recvs: false}", "no receive queue"),
]
for i, (wl, msg) in enumerate(bad):
    text = f"name: bad{i}\nfabric: tcp\n{topo}workloads:\n  - {wl}\n"
    code, _, err, _ = run(text, os.path.join(tmpdir(), f"bad{i}"), expect=None)
    check(code == 2 and msg in err and f"bad{i}.yaml:" in err, f"refused with '{msg}': {err.strip()}")
text = f"name: poll\nfabric: tcp\nhost: {{completion: polling}}\n{topo}workloads:\n  - {{kind: send, from: a, to: b}}\n"
code, _, err, _ = run(text, os.path.join(tmpdir(), "poll"), expect=None)
check(code == 2 and "SO_BUSY_POLL" in err and "poll.yaml:3:" in err, f"busy polling refused at its line: {err}")
finish()
