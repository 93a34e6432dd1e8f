"""A generated leaf-spine on RoCE v2: all-to-all and incast complete, ECMP
uses both spines, switch captures are clean RoCE v2 with TTL decremented."""
import os

from e2e import SOURCE, check, check_roce_v2_capture, finish, run, tmpdir, tshark_fields, workload

out = os.path.join(tmpdir(), "ls")
_, _, _, res = run(os.path.join(SOURCE, "examples/roce_v2_leaf_spine.yaml"), out)
a2a, inc = workload(res, "a2a"), workload(res, "incast")
check(a2a["ops"] == 16 * 15 * 10 and a2a["completions"] == {"IBV_WC_SUCCESS": 2400}, "all_to_all: 2400 writes")
check(inc["ops"] == 160 and inc["completions"] == {"IBV_WC_SUCCESS": 160}, "incast: every write succeeds")
check(a2a["data_verified"] and inc["data_verified"], "data verified")
spine_tx = {}
for p in res["ports"]:
    if p["node"].startswith("spine"):
        spine_tx[p["node"]] = spine_tx.get(p["node"], 0) + p["tx_frames"]
check(len(spine_tx) == 2 and min(spine_tx.values()) > 0.3 * max(spine_tx.values()),
      f"ECMP spreads flows over both spines ({spine_tx})")
check(sum(p["drops"] for p in res["ports"]) > 0, "an 8-to-1 incast without PFC overflows a buffer")
pcaps = sorted(os.listdir(os.path.join(out, "pcap")))
check(pcaps == ["h0-0.pcap", "h5-0.pcap"] + [f"spine{s}-{p}.pcap" for s in (0, 1) for p in range(4)],
      f"captures for the listed nodes only ({pcaps})")
for f in pcaps:
    check_roce_v2_capture(os.path.join(out, "pcap", f))
# h0 -> h5 crosses leaf, spine, leaf: TTL 64 leaves h0, 61 arrives at h5.
ttls = {int(t) for (t,) in tshark_fields(os.path.join(out, "pcap", "h5-0.pcap"), ["ip.ttl"],
                                         "ip.src == 10.0.0.1")}
check(ttls == {61}, f"TTL decremented by each of the three switches ({ttls})")
finish()
