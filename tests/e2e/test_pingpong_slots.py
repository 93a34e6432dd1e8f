"""A SEND ping-pong whose `outstanding` gives the ping several buffer slots
(message k goes out of slot k % slots): the pong checked each message it
received against slot 0 only, so from the second message on every
ping-pong with `outstanding` above 1 said `data_verified: false` and
`data_mismatch: true` though every byte arrived as sent. Each RDMA fabric,
RC, UC and UD, a count that wraps the slots and one that does not. And a
ping-pong's op is send (check_op)."""
import os

import e2e
from e2e import check

FABRICS = ("ib", "roce_v1", "roce_v2", "iwarp")


def experiment(fabric):
    # iWARP is RC only (RFC 5040); the other fabrics run every QP type.
    qps = ("rc",) if fabric == "iwarp" else ("rc", "uc", "ud")
    workloads = "".join(
        f"  - {{name: {qp}_{count}, kind: pingpong, op: send, qp: {qp}, from: a, to: b, "
        f"size: {200 if qp == 'ud' else 3000}, count: {count}, outstanding: 3}}\n"
        for qp in qps for count in (2, 7))
    return e2e.two_hosts(f"pingpong_{fabric}", "{kind: compute, on: a, work: 1us}", fabric=fabric,
                         head="link: {mtu: 1024}\n", tail=workloads + "capture: {pcap: none}\n")


def main():
    tmp = e2e.tmpdir()
    for fabric in FABRICS:
        _rc, _o, _e, res = e2e.run(experiment(fabric), os.path.join(tmp, fabric))
        if not check(res is not None, f"{fabric}: results.json"):
            continue
        for w in res["workloads"]:
            if w["kind"] != "pingpong":
                continue
            what = f"{fabric} {w['name']}"
            check(w["finished"] and w["ops"] == w["planned_ops"], f"{what}: every round trip done")
            check(w["data_verified"] and not w["data_mismatch"],
                  f"{what}: data_verified (got {w['data_verified']}, mismatch {w['data_mismatch']})")
    check_op(tmp)
    e2e.finish()


def check_op(tmp):
    """A ping-pong is of SENDs whatever its op (Flow::ping): op rdma_write,
    the default, ran SENDs and reported rdma_write, and fabric tcp refused a
    ping-pong without op as RDMA. Now its op is send, and another is
    refused at its place."""
    pp = "{kind: pingpong, from: a, to: b, size: 64, count: 3}"
    for fabric in ("roce_v2", "tcp"):
        _rc, _o, _e, res = e2e.run(e2e.two_hosts(f"pp_op_{fabric}", pp, fabric=fabric), os.path.join(tmp, fabric))
        if check(res is not None, f"{fabric}: a ping-pong without op runs"):
            w = res["workloads"][0]
            check(w["op"] == "send" and w["data_verified"], f"{fabric}: its op is send: {w['op']}")
    path = e2e.write_text(os.path.join(tmp, "read.yaml"), e2e.two_hosts("pp_read", pp.replace("}", ", op: rdma_read}")))
    p = e2e.rdmasim("validate", path)
    check(p.returncode == 2 and f"{path}:11:" in p.stderr and "workloads[0].op: pingpong is a SEND ping-pong" in p.stderr,
          f"op: rdma_read refused at its place: exit {p.returncode}: {p.stderr}")


if __name__ == "__main__":
    main()
