#!/usr/bin/env python3
"""RoCE v1 towards a neighbour that never answers (loss 1.0, or its link
down): the run's memory is what RoCE v2 uses for the same experiment, not
size x outstanding x retries (it was 2.9 GB for 16 MiB x 8, and bad_alloc
beyond). The QP's frames go to the MAC in the peer's link-local GID without
waiting; what waits for neighbour discovery (frames to other GIDs) is bounded
as a real neighbour table bounds it (Linux's unres_qlen_bytes,
roce_v1_fabric_test.cpp)."""
import os
import subprocess

import e2e

EXP = """\
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads: [{kind: rdma_write, from: a, to: b, size: 4MiB, count: 8, outstanding: 8}]
capture: {pcap: none}
"""

tmp = e2e.tmpdir()
exp = e2e.write_text(os.path.join(tmp, "unresolved.yaml"), EXP)


def peak_rss_mb(out, *args):
    """Runs rdmasim; returns (exit code, its own peak RSS in MB)."""
    p = subprocess.Popen([e2e.BINARY, "run", exp, "--out", os.path.join(tmp, out), *args],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    return p.returncode, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


# Buffers: 32 MiB of messages on each side. The neighbour queue held 8 tries
# of 32 MiB of frames more (about 300 MB) before it was bounded.
BUDGET_MB = 150
for how, args in (("loss", ["--set", "link.loss=1.0"]),
                  ("down", ["--set", "faults=[{at: 0, link: [b, s1], action: down}]"])):
    code2, v2 = peak_rss_mb("v2-" + how, "--fabric", "roce_v2", *args)
    code1, v1 = peak_rss_mb("v1-" + how, "--fabric", "roce_v1", *args)
    want = 0 if how == "down" else 4  # a fault asks for failures; loss does not (exit 4)
    e2e.check(code1 == want and code2 == want, f"{how}: exit codes {code1} (roce_v1), {code2} (roce_v2)")
    e2e.check(v1 < BUDGET_MB and v1 < v2 + 32,
              f"{how}: roce_v1 peak RSS {v1:.0f} MB, expected under {BUDGET_MB} MB and within 32 MB of "
              f"roce_v2's {v2:.0f} MB")
    res = e2e.run(exp, os.path.join(tmp, "v1-" + how), "--fabric", "roce_v1", *args, expect=want)[3]
    e2e.check(res and res["workloads"][0]["completions"].get("IBV_WC_RETRY_EXC_ERR") == 1,
              f"{how}: the QP gives up (IBV_WC_RETRY_EXC_ERR): {res and res['workloads'][0]['completions']}")
    print(f"{how}: peak RSS roce_v1 {v1:.0f} MB, roce_v2 {v2:.0f} MB")

e2e.finish()
