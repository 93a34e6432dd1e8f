"""What a latency is: write_lat and send_lat report half a ping-pong's round
trip as perftest's ib_write_lat and ib_send_lat do, the basic kinds the time
from post to completion; each workload says which (`latency_measure`), has
p95 and p99.9, and gives every sample on request (latency.csv). A run whose
operations failed unasked exits 4; a `stop` without a unit warns."""

import csv
import os

import e2e
from e2e import OP, bth_records, check, check_roce_v2_capture, run

d = e2e.tmpdir()

BASE = """
fabric: roce_v2
link: {bandwidth: 100Gbps, delay: 1us}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
"""

out = os.path.join(d, "lat")
_, _, _, res = run("name: lat" + BASE + """
capture: {latency_samples: true}
workloads:
  - {name: wlat, kind: write_lat, from: a, to: b, size: 64, count: 200}
  - {name: slat, kind: send_lat, from: a, to: b, size: 64, count: 200, start: 2ms}
  - {name: w, kind: rdma_write, from: a, to: b, size: 64, count: 200, start: 4ms}
  - {name: rlat, kind: read_lat, from: a, to: b, size: 64, count: 200, start: 6ms}
""", out)
wl = {w["name"]: w for w in res["workloads"]}
check(wl["wlat"]["latency_measure"] == "half_round_trip", "write_lat: half the round trip")
check(wl["slat"]["latency_measure"] == "half_round_trip", "send_lat: half the round trip")
check(wl["w"]["latency_measure"] == "post_to_completion", "rdma_write: post to completion")
check(wl["rlat"]["latency_measure"] == "post_to_completion", "read_lat: post to completion, as perftest")
# kind: udp times a datagram from its send to the receiving program, as the socket kinds do.
_, _, _, udp = run("""name: udp
fabric: tcp
link: {bandwidth: 10Gbps, delay: 1us}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
capture: {pcap: none}
workloads: [{name: u, kind: udp, from: a, to: b, size: 64, rate: 0.1Gbps, duration: 100us}]
""", os.path.join(d, "udp"))
u = udp["workloads"][0] if udp else {}
check(u.get("latency_measure") == "send_to_receive" and u["latency_ns"]["p50"] > 2000,
      f"udp: send to receive, over the two 1 us hops: {u.get('latency_measure')}")
for w in wl.values():
    check(w["completions"] == {"IBV_WC_SUCCESS": 200} and w["data_verified"], f"{w['name']}: all done and verified")
    lat = w["latency_ns"]
    check(lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["p999"] <= lat["max"],
          f"{w['name']}: percentiles in order {lat}")
# A WRITE's completion waits for its ACK: a whole round trip. write_lat's
# half round trip is the one-way time plus the poll: well under it, and
# over the link's two 1 us hops.
one_way, completion = wl["wlat"]["latency_ns"]["p50"], wl["w"]["latency_ns"]["p50"]
check(2000 < one_way < completion, f"write_lat {one_way} ns: over 2 us of wire, under a WRITE's completion {completion} ns")
# Both sides write: WRITE_ONLY requests go both ways.
pa = os.path.join(out, "pcap", "a-0.pcap")
check_roce_v2_capture(pa)
a_writes = [r for r in bth_records(pa, "ip.src == 10.0.0.1") if r[1] == OP["WRITE_ONLY"]]
b_writes = [r for r in bth_records(pa, "ip.src == 10.0.0.2") if r[1] == OP["WRITE_ONLY"]]
check(len(a_writes) == 400 and len(b_writes) == 200,
      f"a writes 200 for write_lat and 200 for rdma_write, b writes 200 back: {len(a_writes)}, {len(b_writes)}")
# Every sample, in latency.csv.
with open(os.path.join(out, "latency.csv")) as f:
    rows = list(csv.DictReader(f))
check(len(rows) == 800 and rows[0].keys() == {"workload", "sample", "latency_ns"}, f"latency.csv: {len(rows)} rows")
wlat = sorted(float(r["latency_ns"]) for r in rows if r["workload"] == "wlat")
check(abs(wlat[len(wlat) // 2] - one_way) < 1, "latency.csv's samples give results.json's p50")
check(".rdmasim-manifest" in os.listdir(out) and "latency.csv" in open(os.path.join(out, ".rdmasim-manifest")).read(),
      "latency.csv is rdmasim's (in the manifest)")

# write_lat polls the last byte of a message: it needs one.
code, _, err, _ = run("name: zero" + BASE + """
workloads: [{name: z, kind: write_lat, from: a, to: b, size: 0}]
""", os.path.join(d, "zero"), expect=2)
check("write_lat needs at least 1 byte" in err and "zero.yaml:6:" in err, f"size 0 refused, located: {err}")

# Operations that fail unasked: exit 4, results written.
LOSSY = """
fabric: roce_v2
link: {bandwidth: 100Gbps, delay: 1us, loss: 1.0}
topology: {hosts: [a, b], links: [[a, b]]}
capture: {pcap: none}
"""
code, _, err, res = run("name: lossy" + LOSSY + """
workloads: [{name: w, kind: rdma_write, from: a, to: b, size: 4KiB, retry_cnt: 1, timeout: 10}]
""", os.path.join(d, "lossy"), expect=4)
check(res is not None and "IBV_WC_RETRY_EXC_ERR" in res["workloads"][0]["completions"], "results.json written")
check("workload w: 1 operation(s) failed (IBV_WC_RETRY_EXC_ERR" in err, f"says which: {err}")
# ... but not when the experiment asks for failures.
run("name: asked" + BASE + """
capture: {pcap: none}
workloads: [{name: w, kind: rdma_write, from: a, to: b, size: 4KiB, bad_rkey: true}]
""", os.path.join(d, "asked"), expect=0)

# A stop without a unit is picoseconds: say so, where it is written. One
# with its unit is what it says, however short: no warning (`stop: 500ns`
# was told it had no unit).
for stop, warned in (("500", True), ("500ns", False), ("500ps", False), ("2ms", False)):
    _, _, err, _ = run("name: ps" + BASE + f"""
stop: {stop}
capture: {{pcap: none}}
workloads: [{{name: w, kind: rdma_write, from: a, to: b, size: 4KiB}}]
""", os.path.join(d, "ps"), expect=None)
    check(("stop: 500 has no unit, so it is 500ps" in err and "such as 500us" in err) == warned
          and ("unit" in err) == warned, f"stop: {stop}: {'a' if warned else 'no'} warning expected: {err}")

e2e.finish()
