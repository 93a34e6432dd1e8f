#!/usr/bin/env python3
"""`rdmasim run` and `rdmasim compare` when they succeed: what they write and
print (docs/design.md, "Contract: the command line" and "Contract: the output").

usage: test_cli_run.py PATH/TO/rdmasim SOURCE_DIR
"""
import json
import os
import struct

from e2e import check, finish, rdmasim, tmpdir, two_hosts, write_text

EXPERIMENT = two_hosts("cli_run", "{name: bulk, kind: rdma_write, from: a, to: b, qp: rc, size: 8KiB, count: 4, "
                       "outstanding: 2}", head="stop: 10ms\n", tail="capture:\n  pcap: hosts\n")
# A UD workload: iwarp has no UD (RFC 5040), so compare must skip iwarp only.
UD_EXPERIMENT = two_hosts("cli_ud", "{kind: send, from: a, to: b, qp: ud, size: 1KiB, count: 2}", head="stop: 10ms\n")

PCAP_MAGIC_NS = 0xA1B23C4D


def pcap_header(path):
    with open(path, "rb") as f:
        head = f.read(24)
    magic, = struct.unpack("<I", head[:4])
    linktype, = struct.unpack("<I", head[20:24])
    return magic, linktype


def load_json(path):
    """The JSON in path, or {} (and a failure) when it is missing or broken."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, f"{path}: {e}")
        return {}


def siblings(parent, name):
    return sorted(e for e in os.listdir(parent) if e.startswith(name + ".tmp-") or e.startswith(name + ".old-"))


def main():
    tmp = tmpdir()
    exp = write_text(os.path.join(tmp, "exp.yaml"), EXPERIMENT)
    ud = write_text(os.path.join(tmp, "ud.yaml"), UD_EXPERIMENT)

    # run, default output directory out/<name>.
    r = rdmasim("run", exp, cwd=tmp)
    out = os.path.join(tmp, "out", "cli_run")
    if check(r.returncode == 0, "run: exit 0", r):
        check("bulk" in r.stdout and "rdma_write" in r.stdout and "a -> b" in r.stdout,
              "run: the summary names the workload", r)
        check("out/cli_run" in r.stdout, "run: the summary says where the output went", r)
        res = load_json(os.path.join(out, "results.json"))
        check(res.get("experiment") == "cli_run" and res.get("fabric") == "roce_v2" and res.get("seed") == 1,
              f"results.json: experiment, fabric, seed: {res}")
        check([w.get("name") for w in res.get("workloads", [])] == ["bulk"], "results.json: one workload 'bulk'")
        pcaps = sorted(os.listdir(os.path.join(out, "pcap"))) if os.path.isdir(os.path.join(out, "pcap")) else []
        check(pcaps == ["a-0.pcap", "b-0.pcap"], f"capture: hosts gives a-0.pcap and b-0.pcap, not {pcaps}")
        for p in pcaps:
            check(pcap_header(os.path.join(out, "pcap", p)) == (PCAP_MAGIC_NS, 1),
                  f"{p}: nanosecond pcap, linktype 1 (Ethernet)")
        check(siblings(os.path.join(tmp, "out"), "cli_run") == [], "run: no tmp or old directory left")

    # A second run replaces the first whole.
    r = rdmasim("run", exp, "--seed", "7", "--fabric", "ib", cwd=tmp)
    if check(r.returncode == 0, "run --seed 7 --fabric ib: exit 0", r):
        res = load_json(os.path.join(out, "results.json"))
        check(res.get("seed") == 7 and res.get("fabric") == "ib", "the second run replaced results.json")
        for p in os.listdir(os.path.join(out, "pcap")):
            check(pcap_header(os.path.join(out, "pcap", p)) == (PCAP_MAGIC_NS, 197),
                  f"ib {p}: nanosecond pcap, linktype 197 (ERF)")
        check(siblings(os.path.join(tmp, "out"), "cli_run") == [], "second run: no tmp or old directory left")

    # --out and --set.
    custom = os.path.join(tmp, "custom", "dir")
    r = rdmasim("run", exp, "--out", custom, "--set", "workloads.0.count=2", cwd=tmp)
    if check(r.returncode == 0, "run --out --set: exit 0", r):
        res = load_json(os.path.join(custom, "results.json"))
        check([w.get("ops") for w in res.get("workloads", [])] == [2], "--set workloads.0.count=2 gives 2 ops")

    # compare on two fabrics.
    cmp_dir = os.path.join(tmp, "cmp")
    r = rdmasim("compare", exp, "--fabrics", "ib,roce_v2", "--out", cmp_dir, cwd=tmp)
    if check(r.returncode == 0, "compare --fabrics ib,roce_v2: exit 0", r):
        check("ib" in r.stdout and "roce_v2" in r.stdout and "throughput" in r.stdout,
              "compare prints a table naming both fabrics", r)
        cmp = load_json(os.path.join(cmp_dir, "compare.json"))
        ran = [(e.get("fabric"), e.get("status")) for e in cmp.get("fabrics", [])]
        check(ran == [("ib", "ok"), ("roce_v2", "ok")], f"compare.json: both fabrics ran: {cmp.get('fabrics')}")
        for fab in ("ib", "roce_v2"):
            if os.path.isdir(os.path.join(cmp_dir, fab)):
                res = load_json(os.path.join(cmp_dir, fab, "results.json"))
                check(res.get("fabric") == fab, f"compare: {fab}/results.json is the {fab} run")
        check(siblings(cmp_dir, "ib") == [] and siblings(cmp_dir, "roce_v2") == [],
              "compare: no tmp or old directory left")

    # A fabric the experiment cannot run on is skipped, not a failure.
    r = rdmasim("compare", ud, "--fabrics", "roce_v2,iwarp", cwd=tmp)
    if check(r.returncode == 0, "compare of a UD workload on roce_v2 and iwarp: exit 0", r):
        cmp = load_json(os.path.join(tmp, "out", "cli_ud-compare", "compare.json"))
        status = {e.get("fabric"): e.get("status") for e in cmp.get("fabrics", [])}
        check(status == {"roce_v2": "ok", "iwarp": "skipped"}, f"UD: iwarp skipped, roce_v2 ran: {status}")
        check("skipped iwarp" in r.stdout, "compare says iwarp was skipped", r)
        check(not os.path.exists(os.path.join(tmp, "out", "cli_ud-compare", "iwarp")), "a skipped fabric writes nothing")



main()
finish()
