#!/usr/bin/env python3
"""Runs that end (docs/reliability.md, "Runs that end"): a PFC deadlock on a
ring of four switches, whose workloads fail while PAUSE refreshes would keep
the event queue alive forever, is stopped soon after and reported, not
waited out; captures stop at capture.max_bytes and say so."""
import glob
import os

import e2e

RING = e2e.PFC_RING

tmp = e2e.tmpdir()
code, out, err, res = e2e.run(RING, tmp + "/ring", expect=4)  # its operations fail: exit 4
if res:
    w = res["workloads"][0]
    end = res["end"]
    e2e.check(w["finished"], "the deadlocked workload ends (its QPs give up)")
    e2e.check(w["completions"].get("IBV_WC_RETRY_EXC_ERR", 0) > 0,
              f"the deadlock shows as retries exhausted: {w['completions']}")
    e2e.check(end["reason"] == "stalled", f"the run says it stalled: {end}")
    e2e.check(0 < res["end_time_ps"] - end["workloads_done_ps"] <= 2 * 10**9,
              f"it stopped soon after the workloads finished: {res['end_time_ps']} vs {end}")
    paused = end.get("pfc_paused_ports", [])
    ring = {f"s{i}-{p}" for i in range(4) for p in (2, 3)}  # ports 0, 1: hosts; 2, 3: the ring
    e2e.check(ring <= set(paused), f"the ring's ports, still pausing, are named: {paused}")
    e2e.check("PFC deadlock" in err, f"the summary reports the deadlock: {err}")

# A run that goes idle with a workload still waiting (UD datagrams lost: nothing resends them) says so, naming
# the workload, beside the summary's "cut off".
UD = """\
name: ud
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
link: {loss: 1.0}
workloads: [{name: lost, kind: send, qp: ud, from: a, to: b, size: 64, count: 4}]
capture: {pcap: none}
"""
code, out, err, res = e2e.run(UD, tmp + "/ud")
if res:
    e2e.check(res["end"]["reason"] == "idle" and not res["workloads"][0]["finished"],
              f"the UD run ends idle, unfinished: {res['end']}")
    e2e.check("warning: workload lost did not finish" in err and "nothing was left to happen" in err,
              f"it is warned of: {err}")

# Without the cycle (one switch) the same traffic drains and the queue empties.
STAR = RING.replace("[s0, s1], [s1, s2], [s2, s3], [s3, s0]", "[s0, s1], [s1, s2], [s2, s3]")
code, out, err, res = e2e.run(STAR, tmp + "/line")
if res:
    e2e.check(res["end"]["reason"] == "idle", f"a line of switches drains: {res['end']}")
    e2e.check(res["workloads"][0]["completions"] == {"IBV_WC_SUCCESS": 8 * 7 * 50},
              f"every message completes: {res['workloads'][0]['completions']}")
    e2e.check("warning" not in err, f"no warning for a run that drained: {err}")

# An endless ping-pong: the captures stop at capture.max_bytes, all at the
# same time, readable to their last frame; the run goes on to `stop`.
PINGPONG = """\
name: endless
fabric: roce_v2
stop: 2ms
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads: [{kind: pingpong, from: a, to: b, size: 1KiB, count: 1000000000000000000}]
capture: {pcap: all, max_bytes: 100KiB}
"""
code, out, err, res = e2e.run(PINGPONG, tmp + "/endless")
if res:
    pcaps = sorted(glob.glob(tmp + "/endless/pcap/*.pcap"))
    total = sum(os.path.getsize(p) - 24 for p in pcaps)  # records, without each file's header
    cap = res.get("capture", {})
    e2e.check(cap.get("max_bytes") == 100 * 1024 and total == cap.get("bytes") and total <= 100 * 1024,
              f"the captures hold {total} bytes of records: {cap}")
    e2e.check(total > 90 * 1024, f"the captures use the budget: {total}")
    full = cap.get("full_at_ps", 0)
    e2e.check(0 < full < res["end_time_ps"] == 2 * 10**9, f"the captures ended early, the run did not: {cap}")
    for p in pcaps:
        e2e.check_no_malformed(p)
        last = e2e.read_pcap(p)[1][-1][0]
        e2e.check(last <= full // 1000, f"{p}: its last frame ({last} ns) is not after the cap ({full} ps)")
    e2e.check(res["workloads"][0]["ops"] > 100, "the ping-pong went on")
    e2e.check("capture.max_bytes" in err, f"a warning says the captures ended: {err}")

e2e.finish()
