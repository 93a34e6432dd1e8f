"""Cost in the results (docs/cost.md): results.json's `cost` holds the bill
of materials of the topology and its sums; compare.json carries it per
fabric with cost per delivered Gb/s and per unit of work; --prices and `cost:` change prices,
and a bad one is a located error (exit 2)."""

import json
import os
import re

import e2e
from e2e import check, rdmasim, write_text

LEAF_SPINE = """
name: cost_leaf_spine
seed: 3
link: {bandwidth: 100Gbps, delay: 500ns}
topology:
  generate: {kind: leaf_spine, spines: 2, leaves: 2, hosts_per_leaf: 2, host_link: {bandwidth: 25Gbps}}
workloads:
  - {name: w, kind: rdma_write, from: h0, to: h3, size: 16KiB, count: 20, outstanding: 4}
capture: {pcap: none}
"""



d = e2e.tmpdir()
exp = write_text(os.path.join(d, "ls.yaml"), LEAF_SPINE)
prices = os.path.join(d, "prices.yaml")
with open(prices, "w") as f:
    f.write("currency: EUR\nyears: 4\nprices: {roce_nic_25g: 500, iwarp_rnic_25g: 100}\n")

out = os.path.join(d, "cmp")
p = rdmasim("compare", exp, "--fabrics", "ib,roce_v2,iwarp", "--prices", prices, "--out", out)
check(p.returncode == 0, f"compare exit {p.returncode}: {p.stderr}")
with open(os.path.join(out, "compare.json")) as f:
    cmp = json.load(f)

want_adapter = {"ib": ("ib_hca_100g", 1000), "roce_v2": ("roce_nic_25g", 500), "iwarp": ("iwarp_rnic_25g", 100)}
for entry in cmp["fabrics"]:
    fabric = entry["fabric"]
    with open(os.path.join(out, fabric, "results.json")) as f:
        cost = json.load(f)["cost"]
    # The contract's keys.
    for key in ("currency", "capex", "power_w", "opex", "total", "cpu", "bom"):
        check(key in cost, f"{fabric}: results cost has {key}")
    check(cost["currency"] == "EUR", f"{fabric}: --prices set the currency")
    check(cost["assumptions"]["years"] == 4, f"{fabric}: --prices set the years")
    lines = {l["item"]: l for l in cost["bom"]}
    item, price = want_adapter[fabric]
    check(lines.get(item, {}).get("count") == 4 and lines[item]["unit_price"] == price,
          f"{fabric}: 4 x {item} at {price}: {lines.get(item)}")
    # 4 host links in the rack (copper), 4 leaf-spine links (optics).
    copper = sum(l["count"] for i, l in lines.items() if "_copper_" in i)
    optical = sum(l["count"] for i, l in lines.items() if "_optical_" in i)
    check((copper, optical) == (4, 4), f"{fabric}: cables {copper} copper, {optical} optical")
    switches = sum(l["count"] for i, l in lines.items() if "_switch_" in i)
    check(switches == 4, f"{fabric}: 4 switches, got {switches}")
    bom_sum = sum(l["price"] for l in cost["bom"])
    check(abs(cost["capex"] - bom_sum) < 0.01, f"{fabric}: capex {cost['capex']} = BOM sum {bom_sum}")
    check(abs(cost["total"] - (cost["capex"] + cost["opex"] + cost["cpu"]["cost"])) < 0.02,
          f"{fabric}: total = capex + opex + cpu")
    # compare.json: the same cost, per delivered Gb/s.
    c = entry["cost"]
    check(c["capex"] == cost["capex"] and c["total"] == cost["total"], f"{fabric}: compare carries the cost")
    check(abs(c["per_gbps"] * c["delivered_gbps"] - c["total"]) < 0.01, f"{fabric}: per_gbps = total / Gb/s")
    # Every part says where its price came from, and when.
    check(all(l["source"] and l["date"] and l["kind"] for l in cost["bom"]), f"{fabric}: BOM sources and dates")
    # Per unit of work: the network over what it moves in its life at this
    # rate, the CPU per job (busy core-hours priced, over the work).
    w = [x for x in json.load(open(os.path.join(out, fabric, "results.json")))["workloads"]]
    secs = (max(x["end_ps"] for x in w) - min(x["start_ps"] for x in w)) / 1e12
    gb = sum(x["bytes"] for x in w) / 1e9
    u = {x["unit"]: x for x in cost["per_unit"]}
    life = 4 * 8760 * 3600
    check(abs(u["GB"]["amount"] - gb) < 1e-12 and abs(u["Mop"]["amount"] - sum(x["ops"] for x in w) / 1e6) < 1e-12,
          f"{fabric}: GB and Mop of work")
    check(abs(u["GB"]["network"] - (cost["capex"] + cost["opex"]) / (gb / secs * life)) < 1e-6 * u["GB"]["network"],
          f"{fabric}: network per GB = (capex + opex) / GB in the years at the measured rate")
    cpu_run = cost["cpu"]["busy_ps"] / 1e12 / 3600 * cost["cpu"]["core_hour"]
    check(abs(u["GB"]["cpu"] - cpu_run / gb) < 1e-9 * u["GB"]["cpu"] + 1e-15, f"{fabric}: CPU per GB = run's CPU / GB")
    check(abs(u["GB"]["total"] - u["GB"]["network"] - u["GB"]["cpu"]) < 1e-15, f"{fabric}: per GB = network + CPU")
check("cheapest per GB moved: " in p.stdout and "total cost EUR" in p.stdout, "compare names the winner")
# The same Ethernet switches for roce_v2 and iwarp; ib its own.
switch = {e["fabric"]: [l["item"] for l in json.load(open(os.path.join(out, e["fabric"], "results.json")))["cost"]["bom"]
                        if l["kind"] == "switch"] for e in cmp["fabrics"]}
check(switch["roce_v2"] == switch["iwarp"] == ["eth_switch_100g_32p"] and switch["ib"] == ["ib_switch_100g_36p"],
      f"equal parts priced equally: {switch}")

# compare's printed cost rows are the BOM's sums, a column per fabric.
table = {}
for line in p.stdout.splitlines():
    m = re.match(r"^  (\S.*?\S)\s{2,}(\S+)\s+(\S+)\s+(\S+)$", line)
    if m and m.group(1) in ("capex EUR", "power W", "total cost EUR"):
        table[m.group(1)] = dict(zip(("ib", "roce_v2", "iwarp"), map(float, m.groups()[1:])))
check(len(table) == 3, f"cost rows: {sorted(table)}")
for entry in cmp["fabrics"]:
    fabric = entry["fabric"]
    with open(os.path.join(out, fabric, "results.json")) as f:
        cost = json.load(f)["cost"]
    capex = sum(l["count"] * l["unit_price"] for l in cost["bom"])
    watts = sum(l["count"] * l["unit_watts"] for l in cost["bom"])
    check(abs(table["capex EUR"][fabric] - capex) <= 0.5, f"{fabric}: capex row {table['capex EUR'][fabric]} = BOM {capex}")
    check(abs(table["power W"][fabric] - watts) <= 0.5, f"{fabric}: power row {table['power W'][fabric]} = BOM {watts}")
    total = capex + cost["opex"] + cost["cpu"]["cost"]
    check(abs(table["total cost EUR"][fabric] - total) <= 0.5, f"{fabric}: total row = BOM + opex + cpu")

# A price changed in the experiment: capex moves by count x the change.
base = rdmasim("run", exp, "--fabric", "roce_v2", "--out", os.path.join(d, "a"))
more = rdmasim("run", exp, "--fabric", "roce_v2", "--set", "cost.prices.roce_nic_25g=1400",
               "--out", os.path.join(d, "b"))
check(base.returncode == 0 and more.returncode == 0, "runs with and without cost.prices")
costs = []
for run in ("a", "b"):
    with open(os.path.join(d, run, "results.json")) as f:
        costs.append(json.load(f)["cost"])
nic = {l["item"]: l["unit_price"] for l in costs[0]["bom"]}["roce_nic_25g"]
check(abs(costs[1]["capex"] - costs[0]["capex"] - 4 * (1400 - nic)) < 0.01, "capex is linear in a price")

# Bad prices: located, exit 2, nothing written.
with open(prices, "w") as f:
    f.write("prices:\n  roce_nic_25g: -3\n  no_such_item: 4\n")
p = rdmasim("validate", exp, "--prices", prices)
check(p.returncode == 2, f"bad --prices: exit {p.returncode}")
check(f"{prices}:2:17: prices.roce_nic_25g: expected a number from 0 to 1000000000000, got '-3'" in p.stderr, p.stderr)
p = rdmasim("run", exp, "--set", "cost.ethernet_switches=fancy", "--out", os.path.join(d, "c"))
check(p.returncode == 2 and "<command line>:1:" in p.stderr and "no Ethernet switches of family 'fancy'" in p.stderr,
      f"an unknown switch family: {p.stderr}")
p = rdmasim("run", exp, "--set", "cost.prices.no_such_item=4", "--out", os.path.join(d, "c"))
check(p.returncode == 2 and "no item 'no_such_item' in the price catalogue" in p.stderr, p.stderr)
check(not os.path.exists(os.path.join(d, "c")), "nothing written for bad cost settings")

# docs/cost.md lists every catalogue item with its price and watts.
with open(os.path.join(e2e.SOURCE, "cost", "catalogue.yaml")) as f:
    items = re.findall(r"^  (\w+): +\{kind: .*?price: ([\d.]+), watts: ([\d.]+)", f.read(), re.M)
with open(os.path.join(e2e.SOURCE, "docs", "cost.md")) as f:
    doc = f.read()
check(len(items) > 30, f"catalogue items found: {len(items)}")
for key, price, watts in items:
    row = re.search(r"^\| `" + key + r"` \|.*$", doc, re.M)
    check(row and f"| {price} | {watts} |" in row.group(0), f"docs/cost.md has {key} at {price}, {watts} W")

e2e.finish()
