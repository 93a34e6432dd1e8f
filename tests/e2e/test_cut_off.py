"""A run cut off by `stop` is not a corrupted one: an incast of 4 senders,
64 KiB x 50 each, stopped at 300us reports `finished: false`; the messages
that completed are verified (`data_verified: true`), those that did not are
counted in `undelivered` (messages and bytes), and the summary's
data-verified cell says "cut off", not "NO". On every fabric (kernel TCP
sockets on tcp). A run that failed still says "not all delivered", and one
that finished "yes" with nothing undelivered."""
import os

from e2e import check, check_no_malformed, finish, run, tmpdir, workload

SIZE = 64 * 1024
INCAST = """name: cut_{fabric}
fabric: {fabric}
stop: {stop}
link: {{bandwidth: 100Gbps, delay: 1us, mtu: {mtu}}}
topology: {{hosts: [s0, s1, s2, s3, r], switches: [sw], links: [[s0, sw], [s1, sw], [s2, sw], [s3, sw], [r, sw]]}}
workloads:
  - {{name: inc, kind: incast, senders: 4, to: r, size: 64KiB, count: 50{op}}}
capture: {{pcap: {pcap}}}
"""


def cell(stdout, name):
    """The data-verified cell: what follows the p99 column on the workload's line."""
    for line in stdout.splitlines():
        if line.strip().startswith(name + " "):
            return line.rsplit("  ", 1)[-1].strip()
    return None


for fabric in ("roce_v2", "ib", "roce_v1", "iwarp", "tcp"):
    mtu = 1500 if fabric in ("iwarp", "tcp") else 4096
    op = ", op: send" if fabric == "tcp" else ""
    out = os.path.join(tmpdir(), fabric)
    _, stdout, _, res = run(INCAST.format(fabric=fabric, stop="300us", mtu=mtu, op=op, pcap="hosts"), out)
    w = workload(res, "inc")
    what = f"{fabric}, stopped at 300us"
    check(not w["finished"], f"{what}: not finished")
    check(0 < w["ops"] < w["planned_ops"] == 200, f"{what}: some of the 200 messages completed ({w['ops']})")
    check(w["data_verified"] is True and w["data_mismatch"] is False,
          f"{what}: what was delivered is intact ({w['data_verified']}, {w['data_mismatch']})")
    left = w["planned_ops"] - w["ops"]
    check(w.get("undelivered") == {"messages": left, "bytes": left * SIZE},
          f"{what}: undelivered counts the {left} messages not completed ({w.get('undelivered')})")
    check(cell(stdout, "inc") == "cut off", f"{what}: the summary says 'cut off':\n{stdout}")
    for pcap in ("r-0.pcap", "s0-0.pcap"):
        check_no_malformed(os.path.join(out, "pcap", pcap))

    # The same run to the end: verified, nothing undelivered.
    _, stdout, _, res = run(INCAST.format(fabric=fabric, stop="50ms", mtu=mtu, op=op, pcap="none"),
                            os.path.join(tmpdir(), fabric + "-whole"))
    w = workload(res, "inc")
    check(w["finished"] and w["data_verified"] and w["undelivered"] == {"messages": 0, "bytes": 0},
          f"{fabric} to the end: finished, verified, nothing undelivered ({w['undelivered']})")
    check(cell(stdout, "inc") == "yes", f"{fabric} to the end: the summary says 'yes':\n{stdout}")

# A run that failed (a wrong rkey) is not cut off: "not all delivered".
_, stdout, _, res = run("""name: failed
fabric: roce_v2
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: w, kind: rdma_write, from: a, to: b, size: 4KiB, count: 5, bad_rkey: true}
capture: {pcap: none}
""", os.path.join(tmpdir(), "failed"))
w = workload(res, "w")
check(w["finished"] and not w["data_verified"] and not w["data_mismatch"], f"failed run: unverified ({w})")
check(w["undelivered"] == {"messages": 5, "bytes": 5 * 4096}, f"failed run: all undelivered ({w['undelivered']})")
check(cell(stdout, "w") == "not all delivered", f"failed run: the summary says 'not all delivered':\n{stdout}")
finish()
