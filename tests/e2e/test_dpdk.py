"""A DPDK-style user-space stack (host.stack: dpdk) between the kernel and
RDMA: the same experiment (examples/kernel_vs_rdma.yaml) compared as
tcp (the kernel), dpdk and roce_v2. DPDK's latency and its CPU per GB of
work lie between the kernel's and RDMA's; its poll-mode core is 100% busy
(spinning when idle) and takes no interrupt; the frames are the same clean
TCP. The UDP flood of the livelock experiment shows no livelock."""
import json
import os

from e2e import SOURCE, check, check_all_match, check_cpu_times, check_no_malformed, finish, rdmasim, run, \
    tmpdir, workload

EXAMPLE = os.path.join(SOURCE, "examples/kernel_vs_rdma.yaml")

out = os.path.join(tmpdir(), "compare")
p = rdmasim("compare", EXAMPLE, "--fabrics", "tcp,dpdk,roce_v2", "--out", out)
check(p.returncode == 0, f"compare ran: {p.stdout}{p.stderr}")
print(p.stdout)
check(["tcp", "dpdk", "roce_v2"] in [line.split() for line in p.stdout.splitlines()], "the columns: kernel, dpdk, RDMA")
with open(os.path.join(out, "compare.json")) as f:
    cmp = {e["fabric"]: e for e in json.load(f)["fabrics"]}
lat = {f: next(w for w in e["workloads"] if w["name"] == "lat")["latency_ns"]["p50"] for f, e in cmp.items()}
check(lat["tcp"] > lat["dpdk"] > lat["roce_v2"], f"latency: kernel > dpdk > RDMA ({lat})")
work = {f: e["cpu_work_ms_per_gb"] for f, e in cmp.items()}
check(work["tcp"] > work["dpdk"] > work["roce_v2"], f"CPU per GB, working: kernel > dpdk > RDMA ({work})")
check(cmp["dpdk"]["cpu_spin_ms_per_gb"] > 0 and cmp["tcp"]["cpu_spin_ms_per_gb"] == 0,
      "dpdk spins, the kernel sleeps")
for f, e in cmp.items():
    check(all(w["data_verified"] for w in e["workloads"]), f"{f}: every byte verified")

with open(os.path.join(out, "dpdk", "results.json")) as f:
    res = json.load(f)
check_cpu_times(res, "dpdk")
end = res["end_time_ps"]
for h in res["hosts"]:
    check(h["stack"] == "dpdk" and "kernel_rx" not in h, f"{h['name']}: the user-space stack")
    lcore = h["cores"][0]
    check(lcore["idle_ps"] == 0 and lcore["poll_ps"] > 0 and lcore["user_ps"] > 0,
          f"{h['name']}: the poll-mode core is 100% busy, spinning when nothing comes ({lcore})")
    check(lcore["poll_ps"] > end / 2, f"{h['name']}: mostly spinning ({lcore['poll_ps']} of {end})")
    check(h["interrupts"] == 0, f"{h['name']}: no interrupts")
    check(all(c["irq_ps"] == 0 and c["softirq_ps"] == 0 for c in h["cores"]), f"{h['name']}: no IRQ or softirq time")
    d = h["dpdk_rx"]
    check(d["processed"] == d["frames"] > 0 and d["discarded"] == 0, f"{h['name']}: every frame to its socket ({d})")
    check(1 <= d["largest_burst"] <= 32, f"{h['name']}: bursts of at most dpdk_burst ({d['largest_burst']})")
b = next(h for h in res["hosts"] if h["name"] == "b")["dpdk_rx"]
check(b["bursts"] < b["frames"] and b["largest_burst"] > 1, f"b, the stream's receiver: bursts of several frames ({b})")
for host in ("a", "b"):
    pcap = os.path.join(out, "dpdk", "pcap", f"{host}-0.pcap")
    check_no_malformed(pcap)
    check_all_match(pcap, "eth && ip && tcp && ip.checksum.status == 1 && tcp.checksum.status == 1",
                    "good TCP segments")

# Receive livelock's flood: no interrupts, so no livelock; the poll core
# bounds delivery and the program keeps its own core.
LIVELOCK = os.path.join(SOURCE, "examples/udp_livelock.yaml")
got = {}
for stack in ("kernel", "dpdk"):
    for rate in (0.5, 2, 3):
        o = os.path.join(tmpdir(), f"{stack}-{rate}")
        _, _, _, r = run(LIVELOCK, o, "--set", f"workloads.0.rate={rate}Gbps", "--set", "host.cores=2",
                         "--set", f"host.stack={stack}", "--set", "host.completion=interrupt",
                         "--set", "workloads.0.duration=1ms")
        d = workload(r, "flood")["datagrams"]
        check(d["delivered"] + d["dropped"] == d["offered"], f"{stack} at {rate}: every datagram accounted ({d})")
        got[(stack, rate)] = workload(r, "flood")["delivered_pps"]
print(got)
check(got[("dpdk", 0.5)] > 0.99 * 976000, f"dpdk below saturation: everything delivered ({got})")
check(got[("dpdk", 3)] >= 0.95 * got[("dpdk", 2)], f"dpdk: more load, no less delivered ({got})")
check(got[("dpdk", 3)] > 5 * got[("kernel", 3)], f"dpdk: several times the interrupt-driven kernel ({got})")

# Where it does not apply, refused at its line.
topo = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
for i, (head, msg) in enumerate([
        ("fabric: roce_v2\nhost: {stack: dpdk, cores: 2}\n", "dpdk is a user-space TCP/UDP stack for fabric: tcp"),
        ("fabric: tcp\nhost: {stack: dpdk}\n", "must leave at least one"),
        ("fabric: tcp\nhost: {stack: dpdk, cores: 4, dpdk_burst: 0}\n", "dpdk_burst")]):
    code, _, err, _ = run(f"name: bad{i}\n{head}{topo}workloads:\n  - {{kind: send, from: a, to: b}}\n",
                          os.path.join(tmpdir(), f"bad{i}"), expect=None)
    check(code == 2 and msg in err and f"bad{i}.yaml:" in err, f"refused with '{msg}': {err.strip()}")
finish()
