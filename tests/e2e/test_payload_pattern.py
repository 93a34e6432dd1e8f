"""payload: pattern on explicit workloads (RC WRITEs, WRITEs with immediate,
READs, an incast of WRITEs), messages reusing their slots: the frames,
captures and results are byte for byte those of payload: memory, on every
RDMA fabric; the captures are clean in tshark (RoCE v2: ICRCs checked
independently) and carry the readable pattern; and the memory estimate counts
no payload bytes (tests/experiment/bad/payload_pattern_send.yaml: a SEND cannot take it)."""
import filecmp
import os

from e2e import (TWO_HOSTS, check, check_captures, finish, rdmasim, read_pcap, run,
                 tmpdir, write_text)

EXPERIMENT = """
name: slots
fabric: {fabric}
seed: 3
link: {{bandwidth: 100Gbps, delay: 1us, mtu: {mtu}}}
{flow_control}
topology: {{hosts: [a, b, c], switches: [s1], links: [[a, s1], [b, s1], [c, s1]]}}
workloads:
  - {{name: wr, kind: rdma_write, from: a, to: b, size: 3000, count: 7, outstanding: 3, payload: {payload}}}
  - {{name: rd, kind: rdma_read, from: b, to: a, size: 5000, count: 6, outstanding: 2, start: 50us, payload: {payload}}}
  - {{name: ic, kind: incast, from: [a, c], to: b, size: 4KiB, count: 4, outstanding: 2, start: 100us, payload: {payload}}}
{imm}
capture: {{pcap: all}}
"""
IMM = ("  - {{name: wi, kind: rdma_write_imm, from: c, to: a, size: 2KiB, count: 5, outstanding: 2, "
       "start: 150us, payload: {payload}}}")

base = tmpdir()


def slots_run(fabric, payload):
    out = os.path.join(base, f"{fabric}-{payload}")
    iba = fabric != "iwarp"
    text = EXPERIMENT.format(fabric=fabric, payload=payload, mtu=1024 if iba else 1500,
                             flow_control="flow_control: pfc" if fabric.startswith("roce") else "",
                             imm=IMM.format(payload=payload) if iba else "")
    _, stdout, _, res = run(text, out)
    return out, stdout, res


for fabric in ("roce_v2", "roce_v1", "ib", "iwarp"):
    out, stdout, res = slots_run(fabric, "pattern")
    if res is None:
        continue
    for w in res["workloads"]:
        check(w["finished"] and w["data_verified"] and not w["data_mismatch"],
              f"{fabric} {w['name']}: finished, every placement checked and right")
    pcaps = check_captures(out, fabric, pfc=True)
    # The third message of wr went out of slot 0 again: its stamp names it,
    # the rest of the slot is message 0's.
    _, frames = read_pcap(os.path.join(out, "pcap", "a-0.pcap"))
    check(any(b"wr       m00000003 @00000000000\n" in f for _, f in frames), f"{fabric}: message 3 named on the wire")
    mem, mem_stdout, _ = slots_run(fabric, "memory")
    for f in ["results.json"] + [os.path.join("pcap", p) for p in pcaps]:
        check(filecmp.cmp(os.path.join(out, f), os.path.join(mem, f), shallow=False),
              f"{fabric}: {f} the same with payload: memory")

# The estimate before a run counts no payload bytes for pattern: 2 GiB
# messages, 4 outstanding, are refused under an 8 GiB limit with memory
# (16 GiB, test_memory_limit.py) and pass it with pattern, which an RC
# WRITE takes when it says nothing.
two = write_text(os.path.join(base, "two.yaml"), TWO_HOSTS)
big = ["--set", "workloads.0.size=2GiB", "--memory-limit", "8GiB"]
r = rdmasim("validate", two, *big, "--set", "workloads.0.payload=memory")
check(r.returncode == 2, f"2 GiB x 4 in memory: refused under 8 GiB ({r.returncode})")
r = rdmasim("validate", two, *big, "--set", "workloads.0.payload=pattern")
check(r.returncode == 0, f"2 GiB x 4 computed: validates under 8 GiB: {r.stderr}")
r = rdmasim("validate", two, *big)
check(r.returncode == 0, f"2 GiB x 4, payload unsaid: computed by default, validates under 8 GiB: {r.stderr}")
# Where a program reads the bytes (a SEND's receiver, a ping-pong), memory
# stays the default: the same messages as SENDs are refused.
r = rdmasim("validate", two, *big, "--set", "workloads.0.kind=send")
check(r.returncode == 2, f"2 GiB x 4 SENDs, payload unsaid: in memory, refused under 8 GiB ({r.returncode})")
finish()
