"""The CPU as a contended resource: on a one-core host, a compute process
gets the core while the I/O program sleeps on interrupts but not while it
polls; polling still gives the lower latency; per-core time categories add
up to the run; bad compute workloads are refused with a located error."""
import os
import re
import subprocess

from e2e import BINARY, check, check_cpu_times, finish, run, tmpdir, workload

# a writes 64 KiB messages to b one at a time while computing 300us of work.
YAML = """
name: overlap
fabric: roce_v2
link: {bandwidth: 100Gbps, delay: 1us}
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: io, kind: rdma_write, from: a, to: b, size: 64KiB, count: 40}
  - {name: calc, kind: compute, on: a, work: 300us}
  - {name: lat, kind: rdma_write, from: b, to: a, size: 64, count: 20, start: 1ms}
capture: {pcap: none}
"""


def go(*sets):
    out = os.path.join(tmpdir(), "overlap")
    _, _, _, res = run(YAML, out, *sum([["--set", s] for s in sets], []))
    for w in res["workloads"]:
        if w["kind"] == "compute":
            check(w["finished"] and w["work_done_ps"] == w["work_ps"] == 300_000_000,
                  f"{sets}: {w['name']} did all its work ({w})")
        else:
            check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["data_verified"],
                  f"{sets}: {w['name']} completes its I/O ({w['completions']})")
    check_cpu_times(res, str(sets))
    return res


def host(res, name):
    return next(h for h in res["hosts"] if h["name"] == name)


poll = go()
irq = go("host.completion=interrupt")
hyb = go("host.completion=hybrid", "host.hybrid_spin=2us")
two = go("host.cores=2")

for r in (poll, irq, hyb, two):
    check(workload(r, "io")["ops"] == 40, "every mode completes the same I/O")

# Polling: the core spins until the I/O is over; only then does calc run.
# (calc has the core until the connection is up and the I/O program starts.)
io_start, io_end = workload(poll, "io")["start_ps"], workload(poll, "io")["end_ps"]
calc_end = workload(poll, "calc")["end_ps"]
check(calc_end >= io_end + 300_000_000 - io_start,
      f"polling: calc gets the core only before and after the I/O ({io_start}, {io_end}, {calc_end})")
check(host(poll, "a")["cores"][0]["poll_ps"] > 100_000_000, "polling: a's core spends its wait spinning")
check(host(poll, "a")["interrupts"] == 0, "polling takes no interrupts")

# Interrupts: calc computes while the program sleeps, and finishes sooner.
ci = workload(irq, "calc")["end_ps"]
check(ci < calc_end - 100_000_000, f"interrupts let calc finish sooner ({calc_end} -> {ci} ps)")
a = host(irq, "a")
check(a["interrupts"] >= 40, f"interrupts: one a completion at least ({a['interrupts']})")
check(a["cores"][0]["irq_ps"] == a["interrupts"] * 1_000_000, "interrupts: 1us of IRQ handler each")
check(a["cores"][0]["syscall_ps"] >= a["interrupts"] * 1_000_000, "interrupts: a context switch at least per wake-up")
check(a["cores"][0]["poll_ps"] == 0, "interrupts: no spinning")

# Hybrid with a short spin sleeps through the 64 KiB writes: like interrupts.
check(workload(hyb, "calc")["end_ps"] < calc_end, "hybrid with a short spin also lets calc run")

# Polling is faster on a fast path (64-byte writes, b -> a, the core free by then).
lp, li = workload(poll, "lat")["latency_ns"]["p50"], workload(irq, "lat")["latency_ns"]["p50"]
check(lp + 2000 < li, f"polling gives lower latency than interrupts ({lp} vs {li} ns)")

# Two cores: calc has a core of its own (1us switch in, then its work).
check(workload(two, "calc")["end_ps"] == 301_000_000, f"two cores: calc runs alone ({workload(two, 'calc')['end_ps']})")
check(len(host(two, "a")["cores"]) == 2, "two cores reported")

# Same experiment, same output.
again = go("host.completion=interrupt")
check(again == irq, "the same run twice gives the same results")

# Bad compute workloads: exit 2, located.
BAD = {
    "work: 0us": "above 0",
    "work: 10us, to: b": "not to",
    "chunk: 5us": "work",
    "work: 10us, on: z": "z",
}
for extra, word in BAD.items():
    d = tmpdir()
    path = os.path.join(d, "bad.yaml")
    with open(path, "w") as f:
        f.write(YAML.replace("{name: calc, kind: compute, on: a, work: 300us}",
                             "{name: calc, kind: compute, " + ("" if "on:" in extra else "on: a, ") + extra + "}"))
    p = subprocess.run([BINARY, "validate", path], capture_output=True, text=True, timeout=60)
    found = re.findall(re.escape(path) + r":(\d+):(\d+): (.*)", p.stderr)
    check(p.returncode == 2 and any(int(ln) == 8 and word in msg for ln, _, msg in found),
          f"compute with {extra}: exit 2 and an error on line 8 naming '{word}' (got {p.returncode}: {p.stderr.strip()})")
finish()
