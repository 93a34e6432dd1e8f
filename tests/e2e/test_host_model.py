"""The host side: polling costs CPU and saves latency, interrupts the
opposite, coalescing cuts interrupts, a PIO doorbell saves the WQE fetch.
write_bw signals every work request here (cq_moderation: 1, where
perftest would signal one in 16) so that each WRITE can interrupt."""
import os

from e2e import check, check_cpu_times, finish, run, tmpdir, workload

YAML = """
name: host
fabric: roce_v2
link: {bandwidth: 100Gbps, delay: 500ns}
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: lat, kind: send_lat, from: a, to: b, size: 64, count: 50}
  - {name: bw, kind: write_bw, from: a, to: b, size: 4KiB, count: 400, outstanding: 16, cq_moderation: 1, start: 1ms}
capture: {pcap: none}
"""


def go(*sets):
    out = os.path.join(tmpdir(), "host")
    args = sum([["--set", s] for s in sets], [])
    _, _, _, res = run(YAML, out, *args)
    check(not os.path.exists(os.path.join(out, "pcap")) or not os.listdir(os.path.join(out, "pcap")),
          "capture: none writes no pcap")
    for w in res["workloads"]:
        check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["data_verified"], f"{sets} {w['name']} ok")
    check_cpu_times(res, str(sets))
    return res


def cpu(res, host):
    return next(h for h in res["hosts"] if h["name"] == host)


poll = go()
irq = go("host.completion=interrupt")
hyb = go("host.completion=hybrid", "host.hybrid_spin=20us")
coal = go("host.completion=interrupt", "host.interrupt_coalescing.frames=8",
          "host.interrupt_coalescing.delay=5us")
pio = go("host.doorbell=pio")

lp, li = workload(poll, "lat")["latency_ns"]["p50"], workload(irq, "lat")["latency_ns"]["p50"]
check(li > lp + 500, f"interrupts add wake-up latency to a ping-pong ({lp} -> {li} ns)")
check(cpu(irq, "b")["cpu_busy_ps"] < cpu(poll, "b")["cpu_busy_ps"],
      "interrupts cost less CPU than polling while waiting")
check(cpu(poll, "a")["interrupts"] == 0 and cpu(irq, "a")["interrupts"] > 50, "interrupts are counted")
check(abs(workload(hyb, "lat")["latency_ns"]["p50"] - lp) < 1, "hybrid polling within its spin = polling latency")
check(cpu(coal, "a")["interrupts"] < cpu(irq, "a")["interrupts"], "coalescing raises fewer interrupts")
lpio = workload(pio, "lat")["latency_ns"]["p50"]
check(lpio < lp - 300, f"a PIO doorbell saves the WQE fetch ({lp} -> {lpio} ns)")
finish()
