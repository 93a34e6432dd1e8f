"""RoCE v1 with two VLANs on shared bridges: each VLAN is its own broadcast
domain. Traffic stays in its VLAN (access ports carry one, the trunk both),
and a workload across VLANs is refused with file:line:column, exit 2."""
import os
import subprocess

from e2e import BINARY, SOURCE, check, check_no_malformed, finish, read_pcap, roce_v1_icrc, run, tmpdir, \
    tshark_fields

example = os.path.join(SOURCE, "examples/roce_v1_vlans.yaml")
out = os.path.join(tmpdir(), "vlans")
_, _, _, res = run(example, out)
for w in res["workloads"]:
    check(w["completions"] == {"IBV_WC_SUCCESS": 5} and w["data_verified"], f"{w['name']}: 5 ops, data verified")

vids = {}
for f in sorted(os.listdir(os.path.join(out, "pcap"))):
    path = os.path.join(out, "pcap", f)
    check_no_malformed(path)
    vids[f] = {int(v) for (v,) in tshark_fields(path, ["vlan.id"]) if v}
    # Every RoCE v1 frame (ethertype 0x8915 inside the tag) has a right ICRC.
    for _, frame in read_pcap(path)[1]:
        if frame[12:14] == b"\x81\x00" and frame[16:18] == b"\x89\x15":
            c, w = roce_v1_icrc(frame)
            check(c == w, f"{f}: ICRC")
check(vids["a-0.pcap"] == {100} and vids["b-0.pcap"] == {100}, f"a and b see only VLAN 100 ({vids})")
check(vids["c-0.pcap"] == {200} and vids["d-0.pcap"] == {200}, f"c and d see only VLAN 200 ({vids})")
check(vids["s1-2.pcap"] == {100, 200}, f"the trunk between the bridges carries both VLANs ({vids})")

bad = os.path.join(tmpdir(), "cross.yaml")
with open(example) as f:
    text = f.read()
with open(bad, "w") as f:
    f.write(text.replace("capture:", "  - {name: ac, kind: send, from: a, to: c}\ncapture:"))
line = text.replace("capture:", "  - {name: ac").splitlines().index("  - {name: ac") + 1
for cmd in (["validate", bad], ["run", bad, "--out", os.path.join(tmpdir(), "x")]):
    p = subprocess.run([BINARY, *cmd], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2, f"{cmd[0]}: a cross-VLAN workload exits 2")
    check(f"{bad}:{line}:" in p.stderr and "VLAN 100" in p.stderr and "VLAN 200" in p.stderr,
          f"{cmd[0]}: the error names the line and both VLANs: {p.stderr.strip()}")
finish()
