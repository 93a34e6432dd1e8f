"""iWARP never stalls silently: whatever end waits and whatever it waits for
(the peer's SYN, the MPA Reply, Read Responses, TCP acknowledgements), a path
that stops carrying frames fails the work with IBV_WC_RETRY_EXC_ERR within
TCP's retransmission limit, and the run ends."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import check  # noqa: E402

BASE = """name: {name}
fabric: iwarp
seed: 1
topology: {{hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}}
{extra}
workloads: [{{name: w, kind: {kind}, from: {frm}, to: {to}, size: 64KiB, count: 20, outstanding: 4}}]
capture: {{pcap: none}}
"""


def expect_retry_exceeded(name, kind, frm, to, extra):
    out = os.path.join(e2e.tmpdir(), name)
    t0 = time.monotonic()
    # Operations that fail without the experiment asking (no faults): exit 4, results written.
    want = 0 if "faults" in extra else 4
    rc, _o, _e, res = e2e.run(BASE.format(name=name, kind=kind, frm=frm, to=to, extra=extra), out, expect=want)
    took = time.monotonic() - t0
    if not check(rc == want and res is not None, f"{name}: the run ends and writes results (exit {rc})"):
        return
    c = res["workloads"][0]["completions"]
    # The first outstanding WQE fails, the rest of the queue is flushed.
    check(c.get("IBV_WC_RETRY_EXC_ERR") == 1, f"{name}: one IBV_WC_RETRY_EXC_ERR: {c}")
    check(set(c) <= {"IBV_WC_RETRY_EXC_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_SUCCESS"}, f"{name}: {c}")
    check(took < 60, f"{name}: took {took:.1f} s")


def main():
    # Every frame lost: the active end (a: lower address) gives up its SYNs;
    # the passive end, listening, hears nothing and must give up too.
    expect_retry_exceeded("active_loss", "rdma_write", "a", "b", "link: {loss: 1.0}")
    expect_retry_exceeded("passive_loss", "rdma_write", "b", "a", "link: {loss: 1.0}")
    expect_retry_exceeded("passive_send_loss", "send", "b", "a", "link: {loss: 1.0}")
    # The responder's link goes down while Reads are outstanding: their Read
    # Requests were acknowledged, so only the wait for the responses can fail them.
    down = "faults: [{at: 15us, link: [b, s1], action: down}]"
    expect_retry_exceeded("read_down", "rdma_read", "a", "b", down)
    expect_retry_exceeded("read_down_passive", "rdma_read", "b", "a", down)
    expect_retry_exceeded("write_down", "rdma_write", "a", "b", down)
    e2e.finish()


if __name__ == "__main__":
    main()
