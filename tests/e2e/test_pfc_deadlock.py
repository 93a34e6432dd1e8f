"""PFC deadlock detection (docs/reliability.md, "PFC deadlocks"): on a ring
of four switches whose shortest paths close a cycle of buffer
dependencies, the deadlock is reported in results.json (pfc_deadlocks: the
ring's ports, each paused by the next switch, found once deadlock_detect
has passed); a line of switches with the same traffic reports nothing."""
import os

import e2e

RING = e2e.PFC_RING
# Ring links: s0-s1 is s0 port 2 / s1 port 2; s1-s2: s1 port 3 / s2 port 2;
# s2-s3: s2 port 3 / s3 port 2; s3-s0: s3 port 3 / s0 port 3.
PEER = {("s0", 2): "s1", ("s1", 2): "s0", ("s1", 3): "s2", ("s2", 2): "s1",
        ("s2", 3): "s3", ("s3", 2): "s2", ("s3", 3): "s0", ("s0", 3): "s3"}

tmp = e2e.tmpdir()
_, _, _, res = e2e.run(RING, os.path.join(tmp, "ring"), expect=4)  # the deadlocked operations fail
if res:
    dl = res.get("pfc_deadlocks")
    e2e.check(isinstance(dl, list) and dl, f"the deadlock is reported: {dl}")
    for d in dl or []:
        ports = [(p["node"], p["port"]) for p in d["ports"]]
        e2e.check(all(p in PEER for p in ports), f"only ring ports: {ports}")
        # A cycle: each port's peer switch holds the next port.
        e2e.check(all(PEER[ports[i]] == ports[(i + 1) % len(ports)][0] for i in range(len(ports))),
                  f"the ports form a cycle of pauses: {ports}")
        e2e.check(d["at_ps"] >= 10**9, f"found after 1 ms of it (deadlock_detect): {d['at_ps']}")
    e2e.check(res["workloads"][0]["completions"].get("IBV_WC_SUCCESS", 0) < 8 * 7 * 50, "the deadlock stops work")

# The watchdog breaks it: every operation completes, the bytes verified.
WATCHDOG = RING.replace("flow_control: pfc", "flow_control: pfc\npfc: {watchdog: {detect: 200us}}")
_, _, _, res = e2e.run(WATCHDOG, os.path.join(tmp, "watchdog"))  # exit 0: nothing failed
if res:
    w = res["workloads"][0]
    e2e.check(w["completions"] == {"IBV_WC_SUCCESS": 8 * 7 * 50}, f"watchdog: every operation succeeded ({w['completions']})")
    e2e.check(w["data_verified"], "watchdog: the bytes landed as sent")
    wd = res["pfc_watchdog"]
    e2e.check(wd and all(e["node"] in ("s0", "s1", "s2", "s3") and e["dropped_frames"] > 0 for e in wd),
              f"watchdog events on the switches, each dropping frames: {wd[:4]}")
    e2e.check(all(e["at_ps"] >= 200 * 10**6 for e in wd), "none before the detection time")
    e2e.check(w["retransmitted_packets"] > 0, "the drained frames were sent again")
    e2e.check(res["end"]["reason"] == "idle", f"the run ends by itself: {res['end']}")
    drops = {(p["node"], p["port"]): p["drops"] for p in res["ports"]}
    for e in wd:
        e2e.check(drops[(e["node"], e["port"])] >= e["dropped_frames"], f"{e}: counted in the port's drops")

# Without the cycle nothing is reported.
LINE = RING.replace("[s0, s1], [s1, s2], [s2, s3], [s3, s0]", "[s0, s1], [s1, s2], [s2, s3]")
_, _, _, res = e2e.run(LINE, os.path.join(tmp, "line"))
if res:
    e2e.check(res["pfc_deadlocks"] == [], f"a line of switches has no deadlock: {res['pfc_deadlocks']}")

# A detection time of 0 is a located error.
code, _, err, _ = e2e.run(RING.replace("flow_control: pfc", "flow_control: pfc\npfc: {deadlock_detect: 0us}"),
                          os.path.join(tmp, "bad"), expect=2)
e2e.check(code == 2 and ":5:" in err and "deadlock_detect" in err, f"deadlock_detect 0: exit {code}, {err.strip()}")

# A watchdog without its detection time is a located error.
code, _, err, _ = e2e.run(RING.replace("flow_control: pfc", "flow_control: pfc\npfc: {watchdog: {restore: 1ms}}"),
                          os.path.join(tmp, "bad_wd"), expect=2)
e2e.check(code == 2 and ":5:" in err and "detect" in err, f"watchdog without detect: exit {code}, {err.strip()}")

# A later detection time finds the deadlock later.
_, _, _, res = e2e.run(RING.replace("flow_control: pfc", "flow_control: pfc\npfc: {deadlock_detect: 3ms}"),
                       os.path.join(tmp, "later"), expect=4)
if res:
    e2e.check(res["pfc_deadlocks"] and all(d["at_ps"] >= 3 * 10**9 for d in res["pfc_deadlocks"]),
              f"found after 3 ms: {res['pfc_deadlocks']}")

e2e.finish()
