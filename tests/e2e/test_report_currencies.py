"""`rdmasim report` over folders priced in different currencies (docs/report.md,
the table of runs): nothing is converted, so each amount names its own
currency and no cost figure puts them on one axis. The table's head said
"USD per GB moved" over a EUR run's amounts, and the cost figures plotted
EUR beside USD."""
import json
import os
import re

import e2e
from e2e import check, rdmasim, write_text

d = e2e.tmpdir()


def run_folder(name, currency, per_gb):
    results = {"experiment": "money", "fabric": "roce_v2", "seed": 1, "end_time_ps": 10**9,
               "workloads": [{"name": "w", "kind": "rdma_write", "start_ps": 0, "end_ps": 10**9,
                              "bytes": 12_500_000, "ops": 1000, "throughput_gbps": 100.0,
                              "latency_ns": {"p50": 1000, "p99": 2000, "p999": 3000}, "data_verified": True}],
               "cost": {"currency": currency, "total": 1000.0, "capex": 1000.0, "per_gbps": 10.0,
                        "per_unit": [{"unit": "GB", "of": "bytes moved", "total": per_gb},
                                     {"unit": "Mop", "of": "operations", "total": per_gb * 10}]}}
    os.makedirs(os.path.join(d, name))
    write_text(os.path.join(d, name, "results.json"), json.dumps(results))
    return os.path.join(d, name)


usd, eur = run_folder("usd", "USD", 0.5), run_folder("eur", "EUR", 0.25)
for folders, mixed in (([usd, eur], True), ([eur], False)):
    page = os.path.join(d, f"report-{len(folders)}.html")
    p = rdmasim("report", *folders, "--out", page)
    if not check(p.returncode == 0, f"report: exit {p.returncode}: {p.stderr}"):
        continue
    html = open(page).read()
    heads = re.findall(r"<th>([^<]*per GB moved)</th>", html)
    figures = re.findall(r'<figure id="([^"]*)"', html)
    if mixed:
        check(heads == ["cost per GB moved"] and "<td>0.5 USD</td>" in html
              and "<td>0.25 EUR</td>" in html, f"USD and EUR folders: each amount with its currency ({heads})")
        check(not {"cost-per-gb", "cost-per-mop", "cost"} & set(figures),
              f"USD and EUR folders: no cost figure mixes them ({figures})")
    else:
        check(heads == ["EUR per GB moved"] and "<td>0.25</td>" in html, f"one currency: in the head ({heads})")
        check({"cost-per-gb", "cost"} <= set(figures), f"one currency: the cost figures are drawn ({figures})")
e2e.finish()
