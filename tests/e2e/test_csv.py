"""CSV beside results.json: workloads.csv, ports.csv, hosts.csv and bom.csv
hold the same records as results.json (bom.csv: cost.bom), with its key
names (nested keys joined by dots, lists by ';'), so pandas and R read them
without glue; compare.csv is compare.json's fabrics the same way."""

import csv
import json
import os

import e2e
from e2e import check, rdmasim, write_text

EXPERIMENT = """
name: csv_test
fabric: roce_v2
topology: {hosts: [a, b, c], switches: [s], links: [[a, s], [b, s], [c, s]]}
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 8KiB, count: 10}
  - {name: ic, kind: incast, from: [a, b], to: c, size: 4KiB, count: 5}
capture: {pcap: none}
"""


def flatten(j, prefix=""):
    if isinstance(j, dict):
        out = {}
        for k, v in j.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else k))
        return out
    if isinstance(j, list) and any(isinstance(x, (dict, list)) for x in j):
        out = {}
        for i, x in enumerate(j):
            out.update(flatten(x, f"{prefix}.{i}"))
        return out
    if isinstance(j, list):
        return {prefix: ";".join(x if isinstance(x, str) else json.dumps(x) for x in j)}
    return {prefix: j}


def same(cell, value):
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        return float(cell) == value
    return cell == value


def check_table(path, records, table):
    """`path` is a CSV of `records` (JSON objects) with their flattened key names"""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    records = [flatten(r) for r in records]
    check(len(rows) == len(records), f"{table}.csv: a row per record")
    columns = []
    for r in records:
        columns += [k for k in r if k not in columns]
    check(list(rows[0].keys()) == columns, f"{table}.csv: columns are results.json's keys: {list(rows[0].keys())}")
    for row, rec in zip(rows, records):
        for k in columns:
            check(same(row[k], rec.get(k)), f"{table}.csv {k}: {row[k]!r} vs {rec.get(k)!r}")


d = e2e.tmpdir()
out = os.path.join(d, "run")
_, _, _, results = e2e.run(EXPERIMENT, out)
for table in ("workloads", "ports", "hosts"):
    check_table(os.path.join(out, f"{table}.csv"), results[table], table)
check_table(os.path.join(out, "bom.csv"), results["cost"]["bom"], "bom")
with open(os.path.join(out, "workloads.csv"), newline="") as f:
    check([r["from"] for r in csv.DictReader(f)] == ["a", "a;b"], "a list of hosts is joined with ';'")

# compare.csv: a row per fabric, compare.json's entry without the BOM.
cmp = os.path.join(d, "cmp")
exp = write_text(os.path.join(d, "exp.yaml"), EXPERIMENT)
p = rdmasim("compare", exp, "--fabrics", "ib,iwarp,tcp", "--out", cmp)
check(p.returncode == 0, f"compare: {p.stderr}")
with open(os.path.join(cmp, "compare.json")) as f:
    entries = json.load(f)["fabrics"]
for e in entries:
    if isinstance(e.get("cost"), dict):
        del e["cost"]["bom"]
check_table(os.path.join(cmp, "compare.csv"), entries, "compare")
check(any(e["status"] == "skipped" for e in entries), "a skipped fabric has its row too")
e2e.finish()
