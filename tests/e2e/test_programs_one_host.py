"""Several programs on one host at once (docs/programs.md): each is a process
of its own, so two of them register buffers at the same addresses (address
space randomisation is off for every program), as two processes do on a
real host. The second pair's ibv_reg_mr failed with EFAULT: the programs'
pages shared the host's one address space. Now each program's regions are
in its own, beside the workloads' on the same hosts."""
from e2e import check, finish, run, tmpdir

d = tmpdir()
for fabric in ("roce_v2", "ib"):
    programs = "".join(f"  - {{host: b, run: \"ibv_rc_pingpong -g 0 -n 50 -p {port}\"}}\n"
                       f"  - {{host: a, run: \"ibv_rc_pingpong -g 0 -n 50 -p {port} {{b}}\", start: 10us}}\n"
                       for port in (18621, 18622, 18623))
    rc, stdout, stderr, res = run(
        f"name: one_host\nfabric: {fabric}\nseed: 1\nstop: 100ms\n"
        "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\ncapture: {pcap: none}\n"
        "workloads:\n  - {name: beside, kind: rdma_write, from: a, to: b, size: 64KiB, count: 50, outstanding: 4}\n"
        f"programs:\n{programs}", f"{d}/{fabric}", expect=None)
    check(rc == 0 and res and [p["exit_code"] for p in res["programs"]] == [0] * 6,
          f"{fabric}: three ibv_rc_pingpong pairs on the same two hosts all exit 0 ({stderr.strip()[:400]})")
    check(res and res["workloads"][0]["data_verified"] is True,
          f"{fabric}: the workload beside them on those hosts is verified")
finish()
