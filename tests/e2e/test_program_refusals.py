"""What a program asks of the model that it does not implement is named
(docs/programs.md): ibv_xsrq_pingpong's XRC domain (ibv_open_xrcd, an op of
the extended context verbs.h calls inline) fails with EOPNOTSUPP and is in
unsupported_verbs and the summary, not a bare exit 1; ib_atomic_bw on iwarp,
whose RNIC has no atomics, names the post the device refused, and the run's
error names that program rather than its peer, which only lost its
connection; ibv_rc_pingpong without -g on iwarp has no address to connect
to and is refused at RTR, as on RoCE. Under mpirun a run with programs is refused, exit 2, at the
file's line and column as every other refusal. A `run` with shell syntax
(quotes, a pipe, a redirection: no shell runs it) is refused at its place
instead of reaching the program as written ("IB device ''rdmasim0'' wasn't
found")."""
import shutil

from e2e import check, finish, run, tmpdir
from mpi_e2e import mpirun

TOPOLOGY = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\ncapture: {pcap: none}\n"
PORT = 18612

d = tmpdir()
rc, stdout, stderr, res = run(f"name: xrc\nfabric: ib\nseed: 1\n{TOPOLOGY}programs:\n"
                              f"  - {{host: b, run: \"ibv_xsrq_pingpong -n 10 -p {PORT}\"}}\n"
                              f"  - {{host: a, run: \"ibv_xsrq_pingpong -n 10 -p {PORT} {{b}}\", start: 10us}}\n",
                              f"{d}/xsrq", expect=None)
check(rc == 4 and res and all(p["unsupported_verbs"] == ["ibv_open_xrcd"] for p in res["programs"]),
      f"ibv_xsrq_pingpong: ibv_open_xrcd listed as unsupported ({res and res['programs']})")
check("called ibv_open_xrcd, which the model does not implement" in stdout,
      f"ibv_xsrq_pingpong: the summary names ibv_open_xrcd:\n{stdout}")

# ibv_rc_pingpong without -g on iwarp: its address has no GID, and iwarp
# opens the QP's connection to that GID's IPv4 address. The device refuses
# RTR (EINVAL, as on RoCE; siw and iw_cxgb4 refuse RTS with no connection)
# and both programs exit 1 at once; they waited until stop, killed.
rc, stdout, stderr, res = run(f"name: no_gid\nfabric: iwarp\nseed: 1\nstop: 1s\n{TOPOLOGY}programs:\n"
                              f"  - {{host: b, run: \"ibv_rc_pingpong -n 10 -p {PORT}\"}}\n"
                              f"  - {{host: a, run: \"ibv_rc_pingpong -n 10 -p {PORT} {{b}}\", start: 10us}}\n",
                              f"{d}/no_gid", expect=None)
check(rc == 4 and res and res["programs"][0]["refused_verbs"] == ["ibv_modify_qp: EINVAL"]
      and all(p["exit_code"] == 1 and p["end_ps"] < 10**9 for p in res["programs"]),
      f"ibv_rc_pingpong without -g on iwarp: RTR refused, both exit 1 before stop ({res and res['programs']})")

rc, stdout, stderr, res = run(f"name: atomic\nfabric: iwarp\nseed: 1\n{TOPOLOGY}programs:\n"
                              f"  - {{host: b, run: \"ib_atomic_bw -n 10 -p {PORT}\"}}\n"
                              f"  - {{host: a, run: \"ib_atomic_bw -n 10 -p {PORT} {{b}}\", start: 10us}}\n",
                              f"{d}/atomic", expect=None)
refused = "ibv_post_send (IBV_WR_ATOMIC_FETCH_AND_ADD): EINVAL"
check(rc == 4 and res and res["programs"][1]["refused_verbs"] == [refused],
      f"ib_atomic_bw on iwarp: the refused post is listed ({res and res['programs']})")
check(f"the device refused {refused}" in stdout, f"ib_atomic_bw on iwarp: the summary names the post:\n{stdout}")
check(f"error: program a-1 (ib_atomic_bw -n 10 -p {PORT} {{b}}) exited with 1 after the device refused {refused}"
      in stderr, f"ib_atomic_bw on iwarp: the error names the client, whose post was refused ({stderr.strip()})")

for line in ("ibv_devinfo -d 'rdmasim0'", 'ibv_devinfo -d \\"rdmasim0\\"', "ibv_devinfo > info.txt",
             "ibv_devinfo | grep port", "ibv_devinfo -d $DEV"):
    rc, _, stderr, _ = run(f"name: shell\nfabric: roce_v2\n{TOPOLOGY}programs:\n  - {{host: a, run: \"{line}\"}}\n",
                           f"{d}/shell", expect=None)
    check(rc == 2 and ":6:20: programs[0].run: shell syntax (" in stderr and "is not interpreted" in stderr,
          f"run: {line!r}: refused at its place ({rc}: {stderr.strip()})")

if shutil.which("mpirun"):
    path = f"{d}/split.yaml"
    with open(path, "w") as f:
        f.write(f"name: split\nfabric: roce_v2\n{TOPOLOGY}programs:\n  - {{host: a, run: ibv_devices}}\n")
    p = mpirun(2, "run", path, "-q", "--out", f"{d}/split")
    check("no MPI" in p.stderr or p.returncode == 2 and f"{path}:6:5: programs: a run with programs cannot be split over ranks" in p.stderr,
          f"programs under mpirun: a located refusal, exit 2 ({p.returncode}: {p.stderr.strip()[:400]})")
finish()
