"""A program's asynchronous events (docs/programs.md): ibv_get_async_event
blocks until the device raises one, and a fault on the host's link raises
IBV_EVENT_PORT_ERR when it goes down and IBV_EVENT_PORT_ACTIVE when it
comes back (the device says IBV_DEVICE_PORT_ACTIVE_EVENT), with
ibv_query_port's state changed by then; a fault on another host's link
raises nothing here. ibv_get_async_event answered EOPNOTSUPP ("which the
model does not implement"), so a program watching its port could not run.

A program's own QP on an SRQ that goes to ERR raises
IBV_EVENT_QP_LAST_WQE_REACHED, named by that QP (it raised nothing a
program saw: one that waits for it before destroying the QP, as ib_drain_qp
does, waited for ever); another program's QP events are not given to it."""
import os
import subprocess

from e2e import check, finish, run, tmpdir

d = tmpdir()
probe = os.path.join(d, "async_probe")
cc = subprocess.run(["cc", "-O1", "-o", probe, os.path.join(os.path.dirname(os.path.abspath(__file__)), "async_probe.c"),
                     "-libverbs"], capture_output=True, text=True)
if check(cc.returncode == 0, "async_probe compiles", cc):
    # The probe's clock is the host's, which booted 1,000 s before the run.
    want = ("port error port 1 state PORT_DOWN at 1000001.003 ms\n"
            "port active port 1 state PORT_ACTIVE at 1000003.003 ms\n")
    for fabric in ("ib", "roce_v1", "roce_v2", "iwarp"):
        out = os.path.join(d, fabric)
        text = (f"name: async\nfabric: {fabric}\nstop: 10ms\n"
                "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
                f"programs:\n  - {{host: a, run: \"{probe}\"}}\n"
                "faults:\n"
                "  - {at: 500us, link: [b, s1], action: down}\n"
                "  - {at: 700us, link: [b, s1], action: up}\n"
                "  - {at: 1ms, link: [a, s1], action: down}\n"
                "  - {at: 3ms, link: [a, s1], action: up}\n"
                "capture: {pcap: none}\n")
        rc, _, stderr, res = run(text, out, expect=None)
        got = open(os.path.join(out, "programs", "a-0.out")).read() if res else ""
        check(rc == 0 and res["programs"][0]["exit_code"] == 0, f"{fabric}: the probe exits 0 ({stderr.strip()})")
        check(got == want, f"{fabric}: a's port events, 3 us after each fault of a's link (the interrupt and "
                           f"the read), none for b's:\n{got}")

qprobe = os.path.join(d, "qp_event_probe")
cc = subprocess.run(["cc", "-O1", "-o", qprobe, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "qp_event_probe.c"), "-libverbs"],
                    capture_output=True, text=True)
if check(cc.returncode == 0, "qp_event_probe compiles", cc):
    for fabric in ("ib", "roce_v1", "roce_v2", "iwarp"):
        out = os.path.join(d, "qp_" + fabric)
        text = (f"name: qp_events\nfabric: {fabric}\nstop: 10ms\n"
                "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
                f"programs:\n  - {{host: a, run: \"{qprobe} watch\"}}\n"
                f"  - {{host: a, run: \"{qprobe} err\", start: 100us}}\n"
                "capture: {pcap: none}\n")
        rc, _, stderr, res = run(text, out, expect=None)
        outs = [open(os.path.join(out, "programs", f"a-{i}.out")).read() if res else "" for i in (0, 1)]
        check(rc == 0 and all(p["exit_code"] == 0 for p in res["programs"]), f"{fabric}: both probes exit 0 "
              f"({stderr.strip()})")
        check(outs[1] == "last WQE reached qp on the SRQ\n",
              f"{fabric}: the QP on the SRQ raises Last WQE Reached, named by that QP: {outs[1]!r}")
        check(outs[0] == "none\n", f"{fabric}: another program's QP event is not this one's: {outs[0]!r}")
finish()
