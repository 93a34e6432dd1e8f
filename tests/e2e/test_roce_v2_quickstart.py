"""The quickstart experiment on RoCE v2: clean captures whose opcodes, PSNs,
READ responses and ACKs tell the same story as results.json."""
import math
import os

from e2e import (OP, SOURCE, bth_records, check, check_roce_v2_capture, finish, run, tmpdir, tshark_fields,
                 workload)

out = os.path.join(tmpdir(), "qs")
rc, stdout, _, res = run(os.path.join(SOURCE, "examples/quickstart.yaml"), out)
check(res is not None, "results.json written")
check("write" in stdout and "data verified" in stdout, "a human summary is printed")

for w in res["workloads"]:
    check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]}, f"{w['name']}: every completion successful")
    check(w["data_verified"], f"{w['name']}: data verified")
wr, sd, rd = workload(res, "write"), workload(res, "send"), workload(res, "read")
check(wr["ops"] == 100 and wr["bytes"] == 100 * 65536, "write: 100 ops of 64KiB")
check(wr["throughput_gbps"] > 80, f"write: {wr['throughput_gbps']} Gb/s should be close to 100")
check(sum(p["drops"] for p in res["ports"]) == 0, "no drops on a lossless run")

pcap = os.path.join(out, "pcap", "a-0.pcap")
check(sorted(os.listdir(os.path.join(out, "pcap"))) == ["a-0.pcap", "b-0.pcap"], "one capture per host port")
for f in os.listdir(os.path.join(out, "pcap")):
    check_roce_v2_capture(os.path.join(out, "pcap", f))

recs = bth_records(pcap, "infiniband.bth && ip.src == 10.0.0.1")
ops = [r[1] for r in recs]
mtu = 4096
check(ops.count(OP["WRITE_FIRST"]) == 100 and ops.count(OP["WRITE_LAST"]) == 100,
      "a FIRST and a LAST per 64KiB write")
check(ops.count(OP["WRITE_MIDDLE"]) == 100 * (65536 // mtu - 2), "MIDDLE packets of the writes")
check(ops.count(OP["READ_REQUEST"]) == 10, "10 READ requests")
# READ responses come from b.
resp = [r[1] for r in bth_records(pcap, "infiniband.bth && ip.src == 10.0.0.2")]
n = math.ceil(16384 / mtu)
check(resp.count(OP["READ_RESPONSE_FIRST"]) == 10 and resp.count(OP["READ_RESPONSE_LAST"]) == 10 and
      resp.count(OP["READ_RESPONSE_MIDDLE"]) == 10 * (n - 2), "READ responses: FIRST, MIDDLEs, LAST per read")
check(resp.count(OP["SEND_ONLY"]) == 10, "10 SEND ONLY from b")
check(resp.count(OP["ACK"]) >= 1, "ACKs from b")

# PSNs continuous per QP for requests (no loss: no gaps, no repeats).
by_qp = {}
for r in recs:
    if r[1] in (OP["WRITE_FIRST"], OP["WRITE_MIDDLE"], OP["WRITE_LAST"]):
        by_qp.setdefault(r[2], []).append(r[3])
for qp, psns in by_qp.items():
    steps = {(b - a) % (1 << 24) for a, b in zip(psns, psns[1:])}
    check(steps == {1}, f"QP {qp:#x}: write PSNs continuous")
# A READ consumes one PSN per response packet: the next request's PSN jumps by that.
reads = [r[3] for r in recs if r[1] == OP["READ_REQUEST"]]
check({(b - a) % (1 << 24) for a, b in zip(reads, reads[1:])} == {n}, "READ requests step PSN by the response count")

# RETH on WRITE FIRST and READ requests; AETH on ACKs and first/last/only read responses.
rows = tshark_fields(pcap, ["infiniband.bth.opcode", "infiniband.reth.dmalen", "infiniband.aeth.syndrome"])
for op_, dmalen, syn in rows:
    op_ = int(op_)
    if op_ == OP["WRITE_FIRST"]:
        check(dmalen == "65536", "WRITE FIRST carries a RETH with the message length")
    if op_ == OP["READ_REQUEST"]:
        check(dmalen == "16384", "READ request carries a RETH with the read length")
    if op_ in (OP["ACK"], OP["READ_RESPONSE_FIRST"], OP["READ_RESPONSE_LAST"]):
        check(syn != "", "ACKs and READ responses carry an AETH")
finish()
