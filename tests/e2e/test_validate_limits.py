#!/usr/bin/env python3
"""Values the model cannot hold, refused by `validate` at their place with
the limit in the message (docs/reliability.md, "Limits"): times and rates
past the 64-bit picosecond arithmetic, names too long for file names, YAML
nested too deep, workloads that cannot end without `stop`, and timers
shorter than a microsecond. Each used to
validate and then run wrong (a 0 serialisation time, a delay clamped to
"now"), fail late, or quote a whole 50 MB value back."""
import os

import e2e

TWO = e2e.TWO_HOSTS

rdmasim = e2e.rdmasim
tmp = e2e.tmpdir()
two = e2e.write_text(os.path.join(tmp, "two.yaml"), TWO)


def refused(args, key, *words, path=two):
    """`validate` exits 2 with one error at `key` saying each of `words`."""
    r = rdmasim("validate", path, *args)
    lines = r.stderr.strip().splitlines()
    ok = r.returncode == 2 and len(lines) == 1 and f" {key}: " in lines[0] and all(w in lines[0] for w in words)
    e2e.check(ok, f"validate {' '.join(args)}: exit {r.returncode}, expected 2 at {key} saying {words}: {r.stderr}")
    return lines[0] if lines else ""


def accepted(args, path=two):
    r = rdmasim("validate", path, *args)
    e2e.check(r.returncode == 0, f"validate {' '.join(args)}: exit {r.returncode}: {r.stderr}")


# Every time field: at most 1000s. 1500000s fits int64 picoseconds but a run
# adding it up passes 2^63 ps, and the engine used to clamp that to "now".
times = ["link.delay", "switch.latency", "stop", "workloads.0.start", "host.hybrid_spin",
         "host.interrupt_coalescing.delay", "host.pcie.latency", "host.poll_cost", "host.interrupt_cost",
         "host.post_cost", "host.context_switch", "congestion_control.dcqcn.cnp_interval", "congestion_control.dcqcn.alpha_period",
         "congestion_control.dcqcn.rate_period", "tcp.delayed_ack"]
for key in times:
    refused(["--set", f"{key}=1500000s"], key.replace(".0.", "[0]."), "at most 1000s", "2^63 ps", "1500000s")
    accepted(["--set", f"{key}=1000s"] + (["--set", "stop=1000s"] if key != "stop" else []))
refused(["--set", "faults=[{at: 1500000s, link: [a, s1], action: down}]"], "faults[0].at", "at most 1000s")
refused(["--set", "workloads=[{kind: compute, on: a, work: 1500000s}]"], "workloads[0].work", "at most 1000s")
# A located error in the file itself: line 2, the value's column.
delay_file = e2e.write_text(os.path.join(tmp, "delay.yaml"), "link: {delay: 1500000s}\n" + TWO)
line = refused([], "link.delay", "at most 1000s", path=delay_file)
e2e.check(line.startswith(delay_file + ":1:15: "), f"located at the value: {line}")
# TCP clamps its RTO to [min_rto, 1s]: a larger floor was silently lost.
refused(["--set", "tcp.min_rto=2s"], "tcp.min_rto", "at most 1s")

# Timers: at least 1us (IB CCA's CCTI_Timer one 1.024 us unit). IRN's RTO
# of 1ps armed a timer event every picosecond a QP, and the example (a
# tenth of a second) still ran after 30 s; a watchdog, a deadlock check, a
# compute chunk alike.
for key, least in (("irn.rto_low", "1us"), ("irn.rto_high", "1us"), ("congestion_control.dcqcn.alpha_period", "1us"),
                   ("congestion_control.dcqcn.rate_period", "1us"), ("congestion_control.ib_cca.timer", "1.024us"),
                   ("pfc.deadlock_detect", "1us"), ("pfc.watchdog.detect", "1us"), ("pfc.watchdog.restore", "1us"),
                   ("tcp.min_rto", "1us"), ("workloads.0.chunk", "1us")):
    path = two
    if key.startswith("workloads"):
        path = e2e.write_text(os.path.join(tmp, "compute.yaml"), TWO.replace(
            "workloads: [", "workloads: [{kind: compute, on: a, work: 20us}, "))
    sets = ["--set", "pfc.watchdog.detect=1ms"] if key == "pfc.watchdog.restore" else []
    refused(sets + ["--set", f"{key}=1ps"], key.replace(".0.", "[0]."), f"at least {least}", "1ps", path=path)
    both = ["--set", "irn.rto_low=1us", "--set", "irn.rto_high=1us"] if key.startswith("irn") else []
    accepted(sets + both + ["--set", f"{key}={least}"], path=path)

# A time series: at least 1ns. 1ps took 16 s and 1 GiB of rows on the
# quickstart before its budget stopped it.
refused(["--set", "capture.timeseries.interval=999ps"], "capture.timeseries.interval", "at least 1ns", "999ps")
accepted(["--set", "capture.timeseries.interval=1ns"])

# Every rate: 1Kbps to 1000Tbps. 2^64 - 1 bit/s used to make serialisation time 0.
for key in ("link.bandwidth", "host.pcie.bandwidth", "host.pio_bandwidth", "congestion_control.dcqcn.additive",
            "congestion_control.dcqcn.hyper", "congestion_control.dcqcn.min_rate"):
    refused(["--set", f"{key}=18446744073709551615"], key, "at most 1000Tbps", "18446744073709551615")
    refused(["--set", f"{key}=1bps"], key, "at least 1Kbps")
    accepted(["--set", f"{key}=1000Tbps"])
refused(["--set", "link.bandwidth=1001Tbps"], "link.bandwidth", "at most 1000Tbps")

# Sums: a round trip over many hops of 1000s each passes half the clock.
switches = [f"s{i}" for i in range(1200)]
links = [["a", "s0"]] + [[switches[i], switches[i + 1]] for i in range(len(switches) - 1)] + [[switches[-1], "b"]]
chain = e2e.write_text(os.path.join(tmp, "chain.yaml"),
                       f"link: {{delay: 1000s}}\nstop: 1s\ncapture: {{pcap: none}}\n"
                       f"topology: {{hosts: [a, b], switches: {switches}, links: {links}}}\n".replace("'", "")
                       + "workloads: [{kind: rdma_write, from: a, to: b}]\n")
refused([], "topology", "2^63 ps", "1201 hops", path=chain)
accepted(["--set", "link.delay=1s"], path=chain)

# Names: at most 64 characters, and an error never quotes a huge value whole.
long_name = "n" * 65
refused(["--set", f"name={long_name}"], "name", "at most 64 characters")
refused(["--set", f"workloads.0.name={long_name}"], "workloads[0].name", "at most 64 characters")
accepted(["--set", "name=" + "n" * 64])
big = "x" * 5_000_000
big_file = e2e.write_text(os.path.join(tmp, "big.yaml"), f"name: {big}\n" + TWO)
line = refused([], "name", "at most 64 characters", "(5000000 characters)", path=big_file)
e2e.check(len(line) < 400, f"a 5 MB name is not quoted whole: {len(line)} characters")
host_file = e2e.write_text(os.path.join(tmp, "hosts.yaml"), TWO.replace("[a, b]", f"[a, b, {long_name}]"))
refused([], "topology.hosts[2]", "at most 64 characters", path=host_file)
stem = e2e.write_text(os.path.join(tmp, "s" * 70 + ".yaml"), TWO)
refused([], "name", "defaults to the file's name", "70 characters", path=stem)

# Deep nesting: yaml-cpp's "bad file" becomes what it is, at the line.
deep = e2e.write_text(os.path.join(tmp, "deep.yaml"),
                      TWO + "faults:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(3000)))
r = rdmasim("validate", deep)
parts = r.stderr.split(":")
e2e.check(r.returncode == 2 and "nesting too deep" in r.stderr and "bad file" not in r.stderr
          and len(parts) > 2 and parts[1].isdigit() and int(parts[1]) > 100,
          f"deep nesting: exit {r.returncode}, expected 2 with the line: {r.stderr[:300]}")
r = rdmasim("validate", two, "--set", "topology=" + "[" * 3000 + "]" * 3000)
e2e.check(r.returncode == 2 and "nesting too deep" in r.stderr, f"deep --set value: {r.stderr[:300]}")

# Workloads that cannot end without stop: refused, and accepted with one.
refused(["--set", "workloads.0.kind=send", "--set", "workloads.0.post_recvs=false"], "workloads[0].post_recvs",
        "never ends", "rnr_retry 7", "give stop")
accepted(["--set", "workloads.0.kind=send", "--set", "workloads.0.post_recvs=false", "--set", "stop=1ms"])
accepted(["--set", "workloads.0.kind=send", "--set", "workloads.0.post_recvs=false",
          "--set", "workloads.0.rnr_retry=6"])
accepted(["--set", "workloads.0.kind=send", "--set", "workloads.0.post_recvs=false", "--fabric", "iwarp"])
for kind in ("pingpong", "rdma_write", "write_lat"):
    size = "1" if kind == "write_lat" else "0"  # write_lat polls the last byte: it needs one
    refused(["--set", f"workloads.0.kind={kind}", "--set", "workloads.0.count=1000000000000000000",
             "--set", f"workloads.0.size={size}"], "workloads[0].count", "cannot end within 1000s", "give stop")
    accepted(["--set", f"workloads.0.kind={kind}", "--set", "workloads.0.count=1000000000000000000",
              "--set", f"workloads.0.size={size}", "--set", "stop=1ms"])
accepted(["--set", "workloads.0.count=1000000"])  # 66 s of 64KiB writes at 100 Gb/s

e2e.finish()
