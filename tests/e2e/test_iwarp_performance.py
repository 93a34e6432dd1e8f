"""iWARP performance, end to end: one long RDMA WRITE stream reaches at least
90% of the link rate, and the same small-message latency experiment run with
`rdmasim compare` on ib, roce_v2 and iwarp puts iwarp's latency highest (TCP
offload costs the RNIC per segment) but within a few microseconds."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import check  # noqa: E402

STREAM = """name: iwarp_stream
fabric: iwarp
seed: 1
link: {bandwidth: 100Gbps, delay: 1us, mtu: %d}
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: stream, kind: rdma_write, from: a, to: b, qp: rc, size: 1MiB, count: 100, outstanding: 8}
capture: {pcap: none}
"""

LATENCY = """name: lat
seed: 1
link: {bandwidth: 100Gbps, delay: 1us, mtu: 4096}
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: lat, kind: rdma_write, from: a, to: b, qp: rc, size: 64, count: 50, outstanding: 1}
capture: {pcap: none}
"""


def main():
    tmp = e2e.tmpdir()

    # Steady state: 100 MiB in 1 MiB writes, 8 outstanding; slow start is a
    # few round trips of ~5 us out of ~9 ms. Wire efficiency caps it at about
    # 98.8% (MTU 9000) and 93.6% (MTU 1500) of the link.
    for mtu in (9000, 1500):
        out = os.path.join(tmp, f"stream{mtu}")
        _rc, _o, _e, res = e2e.run(STREAM % mtu, out)
        if check(res is not None, f"stream mtu {mtu} ran"):
            w = e2e.workload(res, "stream")
            check(w["data_verified"] is True and w["completions"] == {"IBV_WC_SUCCESS": 100},
                  f"stream mtu {mtu}: all writes complete, data verified")
            rate = w["bytes"] * 8 / ((w["end_ps"] - w["start_ps"]) / 1e12) / 100e9
            check(rate >= 0.90, f"stream mtu {mtu}: {rate:.3f} of the link rate, want >= 0.90")
            check(abs(w["throughput_gbps"] / 100 - rate) < 0.01, "throughput_gbps agrees with bytes / time")

    # Latency side by side.
    path = os.path.join(tmp, "lat.yaml")
    with open(path, "w") as f:
        f.write(LATENCY)
    cmp_dir = os.path.join(tmp, "cmp")
    p = subprocess.run([e2e.BINARY, "compare", path, "--fabrics", "ib,roce_v2,iwarp", "--out", cmp_dir],
                       capture_output=True, text=True, timeout=600)
    if check(p.returncode == 0, f"compare exit 0: {p.stdout}{p.stderr}"):
        with open(os.path.join(cmp_dir, "compare.json")) as f:
            cmp = json.load(f)
        lat = {}
        for fab in cmp["fabrics"]:
            check(fab["status"] == "ok", f"compare: {fab['fabric']} ran")
            w = fab["workloads"][0]
            check(w["data_verified"] is True, f"compare: {fab['fabric']} data verified")
            lat[fab["fabric"]] = w["latency_ns"]["p50"]
        check(set(lat) == {"ib", "roce_v2", "iwarp"}, f"compare.json has ib, roce_v2 and iwarp: {sorted(lat)}")
        if len(lat) == 3:
            check(lat["iwarp"] > lat["roce_v2"] and lat["iwarp"] > lat["ib"],
                  f"iwarp's latency is the highest: {lat}")
            check(lat["iwarp"] - lat["roce_v2"] < 3000, f"iwarp within 3 us of roce_v2: {lat}")

    e2e.finish()


if __name__ == "__main__":
    main()
