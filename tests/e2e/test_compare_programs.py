"""`rdmasim compare` of an experiment with programs (docs/programs.md): the
table has a row per program with how it ended on each fabric, compare.json
each fabric's `programs` and, for a fabric whose run failed unasked (exit
4), its `error`. ibv_ud_pingpong compared on ib and iwarp (which has no UD
QPs) said "status": "ok" for iwarp, and neither the table nor compare.json
showed a program at all."""
import json
import os
import re

from e2e import check, finish, rdmasim, tmpdir, write_text

d = tmpdir()
port = 18631
path = write_text(os.path.join(d, "ud.yaml"),
                  "name: ud\nfabric: ib\nseed: 1\nstop: 1s\n"
                  "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\ncapture: {pcap: none}\n"
                  f"programs:\n  - {{host: b, run: \"ibv_ud_pingpong -n 20 -p {port}\"}}\n"
                  f"  - {{host: a, run: \"ibv_ud_pingpong -n 20 -p {port} {{b}}\", start: 10us}}\n")
out = os.path.join(d, "cmp")
p = rdmasim("compare", path, "--fabrics", "ib,iwarp", "--out", out)
check(p.returncode == 4, f"compare: exit 4, iwarp's programs failed ({p.returncode}: {p.stderr.strip()})")
rows = {m.group(1): m.group(2).split() for m in re.finditer(r"^  (program \S+ exit)\s+(.*)$", p.stdout, re.M)}
check(rows == {"program b-0 exit": ["0", "1"], "program a-1 exit": ["0", "1"]},
      f"compare: a row per program, its exit on ib and iwarp ({rows}):\n{p.stdout}")
if os.path.exists(os.path.join(out, "compare.json")):
    fabrics = {f["fabric"]: f for f in json.load(open(os.path.join(out, "compare.json")))["fabrics"]}
    ib, iwarp = fabrics["ib"], fabrics["iwarp"]
    check([x["exit_code"] for x in ib.get("programs", [])] == [0, 0] and "error" not in ib,
          f"compare.json ib: the programs exited 0, no error ({ib.get('programs')}, {ib.get('error')})")
    check([x["exit_code"] for x in iwarp.get("programs", [])] == [1, 1]
          and "ibv_create_qp (IBV_QPT_UD): EOPNOTSUPP" in iwarp.get("error", ""),
          f"compare.json iwarp: the programs exited 1 and the error says why ({iwarp.get('programs')}, "
          f"{iwarp.get('error')})")
finish()
