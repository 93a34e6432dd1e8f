"""The figures of `rdmasim report` keep their words apart, as Chromium
draws them: no two texts intersect, and the cost figure's legend, which
names each fabric's point and the Pareto front, lies beside the plot, not
over it. The points are docs/cost.md's leaf-spine comparison, whose legend
once covered iwarp's label."""

import json
import os

import e2e
from e2e import check, rdmasim, write_text
from report_probe import check_readable, probe

# fabric: (total cost USD, delivered Gb/s), as docs/cost_leaf_spine.svg shows them.
POINTS = {"ib": (109199, 697.5), "roce_v1": (81457, 396.3), "roce_v2": (86238, 679.5), "iwarp": (80375, 576.1)}

d = e2e.tmpdir()
cmp = os.path.join(d, "cmp")
for fabric, (total, gbps) in POINTS.items():
    # 1 ms of workload moving gbps: bytes = gbps * 1e9 / 8 * 1e-3.
    results = {"experiment": "layout", "fabric": fabric, "seed": 1, "end_time_ps": 10**9,
               "workloads": [{"name": "w", "kind": "rdma_write", "start_ps": 0, "end_ps": 10**9,
                              "bytes": int(gbps * 1e9 / 8 / 1e3), "ops": 1000, "throughput_gbps": gbps,
                              "latency_ns": {"p50": 1000, "p99": 2000, "p999": 3000}, "data_verified": True}],
               "cost": {"currency": "USD", "total": total, "capex": total, "per_gbps": total / gbps}}
    os.makedirs(os.path.join(cmp, fabric))
    write_text(os.path.join(cmp, fabric, "results.json"), json.dumps(results))
write_text(os.path.join(cmp, "compare.json"),
           json.dumps({"experiment": "layout", "seed": 1,
                       "fabrics": [{"fabric": f, "status": "ok"} for f in POINTS]}))
page = os.path.join(d, "report.html")
p = rdmasim("report", cmp, "--out", page)
if not check(p.returncode == 0, f"report: exit {p.returncode}: {p.stderr}"):
    e2e.finish()
figs = probe(page)
check_readable(figs, "comparison")
cost = figs.get("cost", {"points": 0, "texts": [], "legends": 0})
check(cost["points"] == len(POINTS), f"a point per fabric: {cost['points']}")
check(cost["legends"] == 1 and all(f in cost["texts"] for f in POINTS) and "Pareto front" in cost["texts"],
      f"one legend, beside the plot, naming every fabric and the front: {cost['texts']}")

e2e.finish()
