"""kind: flows on a k=4 fat tree, on every fabric: every flow completes with a
slowdown of at least 1, flows.csv has a row per flow and agrees with
results.json, the receivers hold the senders' pattern, captures are clean
in tshark (RoCE v2: ICRCs checked independently), the payload is the
readable pattern, and the same seed gives byte-identical output. Flows
compute their payload from the pattern by default (payload: pattern); with
payload: memory the bytes are stored, and every output file is the same."""
import csv
import filecmp
import os

from e2e import check, check_captures, finish, read_pcap, run, tmpdir

EXPERIMENT = """
name: flows
fabric: {fabric}
seed: 5
link: {{bandwidth: 100Gbps, delay: 1us, mtu: 1024}}
{flow_control}
topology:
  generate: {{kind: fat_tree, k: 4}}
workloads:
  - {{name: hdp, kind: flows, cdf: hadoop, load: 0.5, duration: 40us, op: {op}, payload: {payload}}}
capture: {{pcap: [h0, h7]}}
"""

base = tmpdir()


def flows_run(fabric, op="rdma_write", name=None, payload="pattern"):
    out = os.path.join(base, name or f"{fabric}-{op}-{payload}")
    text = EXPERIMENT.format(fabric=fabric, op=op, payload=payload,
                             flow_control="flow_control: pfc" if fabric in ("roce_v1", "roce_v2") else "")
    code, stdout, _, res = run(text, out)
    return out, stdout, res


for fabric, op in (("roce_v2", "rdma_write"), ("roce_v2", "send"), ("roce_v1", "rdma_write"),
                   ("ib", "rdma_write"), ("iwarp", "rdma_write")):
    what = f"{fabric} {op}"
    out, stdout, res = flows_run(fabric, op)
    if res is None:
        continue
    w = res["workloads"][0]
    fct = w["fct"]
    with open(os.path.join(out, "flows.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) > 10, f"{what}: some flows ({len(rows)})")
    check(fct["started"] == len(rows) == w["planned_ops"], f"{what}: flows.csv rows = fct.started")
    check(fct["completed"] == fct["started"] == w["ops"], f"{what}: every flow completed ({fct})")
    check(sum(b["count"] for b in fct["buckets"]) == fct["completed"], f"{what}: buckets add up")
    check(w["finished"] and w["data_verified"] and not w["data_mismatch"], f"{what}: finished, data verified")
    check(w["completions"] == {"IBV_WC_SUCCESS": len(rows)}, f"{what}: one completion a flow")
    slow = [float(r["slowdown"]) for r in rows]
    check(min(slow) >= 1.0, f"{what}: every slowdown at least 1 (least {min(slow)})")
    check(all(int(r["fct_ps"]) == int(r["end_ps"]) - int(r["start_ps"]) for r in rows), f"{what}: fct = end - start")
    check(all(r["from"] != r["to"] for r in rows), f"{what}: no flow to itself")
    check(f"{len(rows)} of {len(rows)} flows completed" in stdout and "16 hosts" in stdout,
          f"{what}: the summary counts flows and hosts:\n{stdout}")
    check_captures(out, fabric, pfc=True)
    # The payload is the readable pattern: "hdp      m00000003 @00000000020\n".
    _, frames = read_pcap(os.path.join(out, "pcap", "h0-0.pcap"))
    check(any(b"hdp      m" in f for _, f in frames), f"{what}: the payload pattern names the workload")
    # Stored bytes instead of computed ones: the same frames, byte for byte, and the same results.
    mem, _, _ = flows_run(fabric, op, payload="memory")
    for f in ["results.json", "flows.csv"] + [os.path.join("pcap", p) for p in os.listdir(os.path.join(out, "pcap"))]:
        check(filecmp.cmp(os.path.join(out, f), os.path.join(mem, f), shallow=False),
              f"{what}: {f} the same with payload: memory")

# Same seed, same output, byte for byte.
a, _, _ = flows_run("roce_v2", name="again-1")
b, _, _ = flows_run("roce_v2", name="again-2")
for f in ("results.json", "flows.csv", "pcap/h0-0.pcap", "pcap/h7-0.pcap"):
    check(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False), f"{f} identical run to run")

# Cut off by stop: the summary says how many flows ended and "cut off"; the
# flows that completed are verified, the others counted as undelivered.
out = os.path.join(base, "cut")
_, stdout, _, res = run(EXPERIMENT.format(fabric="roce_v2", op="rdma_write", payload="pattern",
                                         flow_control="flow_control: pfc"),
                        out, "--set", "stop=20us", "--set", "capture.pcap=none")
w = res["workloads"][0]
check(not w["finished"] and w["data_verified"] and not w["data_mismatch"], f"cut-off run: unfinished, intact ({w})")
check(w["undelivered"]["messages"] == w["planned_ops"] - w["ops"] > 0 and w["undelivered"]["bytes"] > 0,
      f"cut-off run: the flows not completed are undelivered ({w['undelivered']})")
check(f'{w["ops"]}/{w["planned_ops"]} done' in stdout and "cut off" in stdout,
      f"cut-off run: the summary marks it:\n{stdout}")
with open(os.path.join(out, "flows.csv")) as f:
    rows = list(csv.DictReader(f))
check(any(r["end_ps"] == "" for r in rows), "cut-off run: unfinished flows have no end")
# UC WRITEs (no ACK: the sender's completion says the bytes left, not that
# they landed). Their receiver's memory is checked when the message lands,
# so a lossless run verifies every flow, with stored bytes as with computed
# ones; a lost packet leaves its message dropped (IBA 9.8.3): not delivered,
# and no wrong byte.
UC = """
name: ucw
fabric: roce_v2
seed: 11
link: {{bandwidth: 100Gbps, delay: 1us, loss: {loss}}}
topology:
  generate: {{kind: leaf_spine, spines: 2, leaves: 2, hosts_per_leaf: 2}}
workloads:
  - {{name: ucw, kind: flows, op: rdma_write, qp: uc, cdf: hadoop, load: 0.3, duration: 30us, payload: {payload}}}
capture: {{pcap: none}}
"""
for loss, payload in ((0, "pattern"), (0, "memory"), (0.05, "pattern"), (0.05, "memory")):
    what = f"uc write loss {loss} {payload}"
    _, _, _, res = run(UC.format(loss=loss, payload=payload), os.path.join(base, f"uc-{loss}-{payload}"))
    if res is None:
        continue
    w = res["workloads"][0]
    check(w["fct"]["completed"] >= 5 and w["finished"], f"{what}: flows ran ({w['fct']})")
    check(not w["data_mismatch"], f"{what}: no wrong byte ({w})")
    if loss:
        check(sum(p["drops"] for p in res["ports"]) > 0, f"{what}: a packet lost")
        check(not w["data_verified"], f"{what}: a dropped message is not delivered ({w})")
    else:
        check(w["data_verified"], f"{what}: every message landed as sent ({w})")

finish()
