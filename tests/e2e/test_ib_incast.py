#!/usr/bin/env python3
"""Incast, 8 senders to 1 receiver (examples/ib_incast.yaml), on ib and on
roce_v2 without PFC (issue 3, "Done means"):
- ib: no drop anywhere, every operation completes with its data, the
  switches' credit_wait_ps shows the time their ports waited for credits,
  the bottleneck link runs near line rate, no PSN is ever sent twice, and
  the captures pass every check of test_ib_captures.py;
- roce_v2, same file: the switch drops, and senders retransmit (a PSN sent
  again on a QP, seen in their captures); the operations still complete.

usage: test_ib_incast.py PATH/TO/rdmasim SOURCE_DIR
"""
import collections
import os
import shutil
import struct
import tempfile

import test_ib_captures as ib
from test_ib_captures import check

HOSTS = [f"h{i}" for i in range(9)]  # leaf_spine 1 x 3 x 3: the receiver h0 and senders h1..h8


def roce_v2_request_psns(path):
    """Per (destination IP, dest QP): the PSNs of requests a RoCE v2 host sent, in order."""
    _, records = ib.read_pcap(path)
    streams = collections.defaultdict(list)
    for _, _, f in records:
        if struct.unpack(">H", f[12:14])[0] != 0x0800 or f[14 + 9] != 17:
            continue
        ihl = (f[14] & 0x0F) * 4
        udp = 14 + ihl
        if struct.unpack(">H", f[udp + 2:udp + 4])[0] != 4791:
            continue
        bth = udp + 8
        op = f[bth]
        if op in ib.READ_RESPONSES + (ib.ACK, ib.ATOMIC_ACK):
            continue
        qp = struct.unpack(">I", f[bth + 4:bth + 8])[0] & 0xFFFFFF
        psn = struct.unpack(">I", f[bth + 8:bth + 12])[0] & 0xFFFFFF
        streams[(f[14 + 16:14 + 20], qp)].append(psn)
    return streams


def resent(streams):
    """Packets whose PSN was not ahead of every PSN the QP had sent before."""
    n = 0
    for psns in streams.values():
        high = None
        for p in psns:
            if high is not None and ib.psn_diff(high, p) <= 0:
                n += 1
            else:
                high = p
    return n


def main():
    yaml = os.path.join(ib.SOURCE, "examples", "ib_incast.yaml")
    tmp = tempfile.mkdtemp(prefix="rdmasim-ib-incast-")
    try:
        out = os.path.join(tmp, "ib")
        _, res = ib.run(yaml, out)
        if res:
            check(res["fabric"] == "ib", "ran on ib")
            w = res["workloads"][0]
            check(w["completions"] == {"IBV_WC_SUCCESS": 128} and w["ops"] == 128,
                  f"ib: all 8 x 16 writes complete: {w['completions']}")
            check(w["data_verified"] and w["finished"], "ib: data verified")
            drops = sum(p["drops"] for p in res["ports"])
            check(drops == 0, f"ib: {drops} drops; credit flow control must drop nothing")
            waits = {f"{p['node']}-{p['port']}": p["credit_wait_ps"] for p in res["ports"]}
            switch_wait = sum(v for k, v in waits.items() if not k.startswith("h"))
            check(switch_wait > 0, f"ib: the switches never waited for credits: {waits}")
            check(waits["spine0-0"] > 0, "ib: the spine's port towards the receiver's leaf waited for credits")
            check(all(waits[f"h{i}-0"] > 0 for i in range(3, 9)), "ib: remote senders felt the back-pressure")
            # The receiver's link is the bottleneck and stays busy: 128 x 64 KiB
            # at 100 Gb/s is 671 us.
            check(w["throughput_gbps"] > 90, f"ib: incast at {w['throughput_gbps']} Gb/s, expected near 100")
            sent = ib.check_hosts(os.path.join(out, "pcap"), HOSTS, 4096)
            check(all(k[1] == 1 or k[0] == 1 for k in sent), "ib: traffic only to and from h0")

        out = os.path.join(tmp, "roce_v2")
        _, res = ib.run(yaml, out, "--fabric", "roce_v2")
        if res:
            check(res["fabric"] == "roce_v2", "ran on roce_v2")
            w = res["workloads"][0]
            drops = sum(p["drops"] for p in res["ports"])
            check(drops > 0, "roce_v2 without PFC: the incast must overflow the switch and drop")
            check(w["completions"] == {"IBV_WC_SUCCESS": 128} and w["data_verified"],
                  f"roce_v2: go-back-N recovers every write: {w['completions']}")
            again = sum(resent(roce_v2_request_psns(os.path.join(out, "pcap", f"{h}-0.pcap"))) for h in HOSTS[1:])
            check(again > 0, "roce_v2: no sender retransmitted a PSN after the drops")
            print(f"roce_v2: {drops} drops, {again} packets sent again; ib: 0 drops")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ib.finish()


if __name__ == "__main__":
    main()
