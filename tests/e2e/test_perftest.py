"""perftest 4.5's programs against the workload kinds that imitate them
(docs/yaml.md "perftest kinds", examples/perftest.yaml): the kinds take
perftest's defaults (64 KiB x 5000 with 128 in flight for *_bw, 2 bytes x
1000 one at a time for *_lat), so `kind: write_bw` reaches the line rate as
`ib_write_bw` does; the real ib_write_bw's BW average is within 5 % of the
kind's and of an rdma_write keeping the same 128 in flight; the real
ib_send_lat's, ib_read_lat's and ib_write_lat's (which spins reading
memory) t_typical within 10 % of send_lat's, read_lat's and write_lat's,
which report perftest's figures; on iwarp ib_send_bw, whose
server posts receive credits as RDMA WRITEs from a QP it took to RTR only,
exits 0 with the server on either address, its BW average within 5 % of
send_bw's and its capture clean; cq_moderation is refused where perftest
has no such flag."""
import os
import re

from e2e import check, check_captures, finish, run, tmpdir, tshark, tshark_fields

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAT_FIELDS = ("t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us")


def program_out(out, name):
    with open(os.path.join(out, "programs", name)) as f:
        return f.read()


def bw_row(text, size, iters):
    """perftest's bandwidth row: (BW peak, BW average) in MB/sec and MsgRate in Mpps."""
    m = re.search(rf"^\s*{size}\s+{iters}\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", text, re.M)
    return tuple(float(x) for x in m.groups()) if m else None


def lat_row(text, size, iters):
    """perftest's latency row: t_min, t_max, t_typical, t_avg, t_stdev, 99 %, 99.9 % (usec)."""
    m = re.search(rf"^\s*{size}\s+{iters}" + r"\s+([0-9.]+)" * 7, text, re.M)
    return dict(zip(LAT_FIELDS, (float(x) for x in m.groups()))) if m else None


def within(a, b, share):
    return b > 0 and abs(a - b) <= share * b


d = tmpdir()

# The example: ib_write_bw and ib_send_lat, and write_bw and send_lat, each pair on links of its own.
out = os.path.join(d, "example")
rc, stdout, stderr, res = run(os.path.join(SOURCE, "examples", "perftest.yaml"), out)
if check(res is not None and rc == 0, f"examples/perftest.yaml runs ({stderr.strip()})"):
    check([p["exit_code"] for p in res["programs"]] == [0, 0, 0, 0], "every program exits 0")
    wl = {w["name"]: w for w in res["workloads"]}
    bw, lat = wl["write_bw"], wl["send_lat"]
    # perftest's defaults.
    check((bw["size"], bw["planned_ops"]) == (65536, 5000), f"write_bw: 64 KiB x 5000 by default ({bw['size']})")
    p = bw["perftest"]
    check((p["iterations"], p["tx_depth"], p["cq_moderation"], p["inline_size"]) == (5000, 128, 1, 0),
          f"write_bw: tx-depth 128, CQ moderation off above 8 KiB, no inline ({p})")
    check((lat["size"], lat["planned_ops"], lat["perftest"]["tx_depth"]) == (2, 1000, 1),
          f"send_lat: 2 bytes x 1000, one at a time ({lat['perftest']})")
    # With 128 in flight a WRITE stream fills the 100 Gb/s link (one in flight gave 40 Gb/s).
    check(p["bw_average_gbps"] > 95, f"write_bw: {p['bw_average_gbps']:.2f} Gb/s, the line rate")
    check(within(p["bw_average_gbps"], bw["throughput_gbps"], 0.001),
          f"write_bw: perftest's average (first post to last completion) is the workload's throughput "
          f"({p['bw_average_gbps']:.3f}, {bw['throughput_gbps']:.3f})")
    check(within(p["bw_average_mb_s"] * 2**20 * 8 / 1e9, p["bw_average_gbps"], 1e-9), "write_bw: MB = 2^20 bytes")
    check(p["bw_average_mb_s"] <= p["bw_peak_mb_s"], f"write_bw: the peak is at least the average ({p})")
    check(within(p["msg_rate_mpps"], p["bw_average_mb_s"] * 2**20 / 65536 / 1e6, 1e-9), "write_bw: MsgRate")
    real_bw = bw_row(program_out(out, "a-1.out"), 65536, 5000)
    if check(real_bw is not None, "ib_write_bw prints its row"):
        check(within(real_bw[1], p["bw_average_mb_s"], 0.05),
              f"ib_write_bw's BW average {real_bw[1]} MB/sec within 5 % of write_bw's {p['bw_average_mb_s']:.2f}")
    lp = lat["perftest"]
    check(lp["t_min_us"] <= lp["t_typical_us"] <= lp["p99_us"] <= lp["p999_us"] and lp["t_typical_us"] <= lp["t_max_us"],
          f"send_lat: perftest's figures in order ({lp})")
    real_lat = lat_row(program_out(out, "c-3.out"), 2, 1000)
    if check(real_lat is not None, "ib_send_lat prints its row"):
        check(within(real_lat["t_typical_us"], lp["t_typical_us"], 0.10),
              f"ib_send_lat's t_typical {real_lat['t_typical_us']} us within 10 % of send_lat's {lp['t_typical_us']:.3f}")
        check(within(real_lat["t_typical_us"], lat["latency_ns"]["p50"] / 1000, 0.10),
              f"ib_send_lat's t_typical within 10 % of send_lat's latency_ns.p50 ({lat['latency_ns']['p50']})")

TOPO = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"


def beside_kind(name, fabric, program, kind):
    """`program` as a server on b and a client on a, and apart the workload `kind` (its keys but `from` and `to`)
    from a to b, on the same two hosts: the pair's exit code, stderr and output folder, and the kind's results."""
    out = os.path.join(d, name)
    rc, _, stderr, _ = run(f"name: {name}\nfabric: {fabric}\nstop: 3s\n{TOPO}capture: {{pcap: none}}\nprograms:\n"
                           f"  - {{host: b, run: \"{program}\"}}\n  - {{host: a, run: \"{program} {{b}}\", start: 10us}}\n",
                           out)
    _, _, _, wres = run(f"name: wl\nfabric: {fabric}\n{TOPO}workloads:\n  - {{{kind}, from: a, to: b}}\n"
                        "capture: {pcap: none}\n", os.path.join(d, name + "_kind"))
    return rc, stderr, out, wres


# ib_write_bw against the model's rdma_write keeping perftest's tx-depth in flight, on ib.
rc, stderr, out, wres = beside_kind("ib_bw", "ib", "ib_write_bw -s 65536 -n 5000",
                                    "kind: rdma_write, size: 64KiB, count: 5000, outstanding: 128")
row = bw_row(program_out(out, "a-1.out"), 65536, 5000) if rc == 0 else None
if check(row is not None and wres is not None, f"ib: ib_write_bw and rdma_write run ({stderr.strip()})"):
    model = wres["workloads"][0]["throughput_gbps"] * 1e9 / 8 / 2**20
    check(within(row[1], model, 0.05), f"ib: ib_write_bw's BW average {row[1]} MB/sec within 5 % of rdma_write's {model:.2f}")

# ib_read_lat against read_lat, both with perftest's defaults (2 bytes, 1000 iterations).
rc, stderr, out, wres = beside_kind("read_lat", "roce_v2", "ib_read_lat", "kind: read_lat")
row = lat_row(program_out(out, "a-1.out"), 2, 1000) if rc == 0 else None
if check(row is not None and wres is not None, f"ib_read_lat and read_lat run ({stderr.strip()})"):
    kind = wres["workloads"][0]["perftest"]
    check(within(row["t_typical_us"], kind["t_typical_us"], 0.10),
          f"ib_read_lat's t_typical {row['t_typical_us']} us within 10 % of read_lat's {kind['t_typical_us']:.3f}")
    check(all(kind[f] is not None for f in LAT_FIELDS), f"read_lat: every perftest figure ({kind})")

# ib_write_lat waits by reading the last byte of its buffer, with no call in the loop: the pages the peer writes are
# kept closed, a read of the same byte again is a poll answered when the peer's WRITE lands (docs/programs.md), so
# its t_typical is write_lat's, on a fabric of each transport, and the same run gives the same figures.
for fabric in ("roce_v2", "iwarp"):
    rc, stderr, out, wres = beside_kind(f"write_lat_{fabric}", fabric, "ib_write_lat", "kind: write_lat")
    row = lat_row(program_out(out, "a-1.out"), 2, 1000) if rc == 0 else None
    if check(row is not None and wres is not None, f"{fabric}: ib_write_lat exits 0 with its row ({stderr.strip()})"):
        kind = wres["workloads"][0]["perftest"]
        check(within(row["t_typical_us"], kind["t_typical_us"], 0.10),
              f"{fabric}: ib_write_lat's t_typical {row['t_typical_us']} us within 10 % of write_lat's {kind['t_typical_us']:.3f}")
again = beside_kind("write_lat_again", "iwarp", "ib_write_lat", "kind: write_lat")[2]
check(all(program_out(again, f) == program_out(os.path.join(d, "write_lat_iwarp"), f) for f in ("a-1.out", "b-0.out")),
      "ib_write_lat: the same run prints the same")

# ib_send_bw on iwarp: perftest gives the receiver credits (an RDMA WRITE of its receive count every rx-depth / 3
# messages) from a QP it only took to RTR; the connection leaves it in RTS, as the iWARP CM does, so the server's
# WRITE goes out instead of "Couldn't post send qp 0 credit = 170". Its BW average is send_bw's on the same link.
rc, stderr, out, wres = beside_kind("send_bw_iwarp", "iwarp", "ib_send_bw -s 65536 -n 1000",
                                    "kind: send_bw, size: 64KiB, count: 1000")
row = bw_row(program_out(out, "a-1.out"), 65536, 1000) if rc == 0 else None
if check(row is not None and wres is not None, f"iwarp: the ib_send_bw pair exits 0 and send_bw runs ({stderr.strip()})"):
    kind = wres["workloads"][0]["perftest"]["bw_average_mb_s"]
    check(within(row[1], kind, 0.05), f"iwarp: ib_send_bw's BW average {row[1]} MB/sec within 5 % of send_bw's {kind:.2f}")
    check(bw_row(program_out(out, "b-0.out"), 65536, 1000) is not None, "iwarp: the ib_send_bw server prints its row")

# The server on the lower address: its QP, which stays in RTR, is the connection's active end and opens it at RTR;
# the client's SYN, which may come before the client's QP listens, waits for it as in a listener's backlog. The
# capture: one MPA request and reply, the client's SENDs and the server's credit WRITEs, clean as Wireshark reads it.
out = os.path.join(d, "send_bw_iwarp_reversed")
rc, _, stderr, res = run(f"name: sb\nfabric: iwarp\nstop: 3s\n{TOPO}programs:\n"
                         "  - {host: a, run: \"ib_send_bw -s 4096 -n 400 -p 18600\"}\n"
                         "  - {host: b, run: \"ib_send_bw -s 4096 -n 400 -p 18600 {a}\", start: 10us}\n", out)
if check(rc == 0 and bw_row(program_out(out, "b-1.out"), 4096, 400) is not None,
         f"iwarp: ib_send_bw with the server on the lower address exits 0 with its row ({stderr.strip()})"):
    for pcap in check_captures(out, "iwarp"):
        path = os.path.join(out, "pcap", pcap)
        again = tshark(path, "-Y", "tcp.analysis.retransmission")
        check(again.strip() == "", f"iwarp {pcap}: nothing sent again, no SYN waits out its timeout:\n{again[:500]}")
        opts = ("-o", "tcp.try_heuristic_first:TRUE", "-o", "tcp.analyze_sequence_numbers:FALSE")
        mpa = [tshark(path, *opts, "-Y", f).count("\n") for f in ("iwarp_mpa.req", "iwarp_mpa.rep")]
        check(mpa == [1, 1], f"iwarp {pcap}: one MPA request and one reply ({mpa})")
        rows = tshark_fields(path, ["ip.src", "iwarp_rdma.opcode", "iwarp_ddp.last_flag"], "iwarp_rdma")
        sends = sum(1 for r in rows if r[0] == "10.0.0.2" and r[1] == "0x03" and r[2] in ("1", "True"))
        credits = sum(1 for r in rows if r[0] == "10.0.0.1" and r[1] == "0x00")
        # The rx-depth is at most the iterations (400): a credit every 400 / 3 = 133 receives, and at the 400th.
        check(sends == 400 and credits == 4,
              f"iwarp {pcap}: 400 SENDs from the client, the server's 4 credit WRITEs ({sends}, {credits})")

# Small messages: CQ moderation 100 (one signalled work request in 100, and the last), every one completed.
_, _, _, res = run(f"name: mod\nfabric: roce_v2\n{TOPO}workloads:\n  - {{kind: send_bw, from: a, to: b, size: 4KiB, count: 1050}}\n"
                   "capture: {pcap: none}\n", os.path.join(d, "mod"))
if check(res is not None, "send_bw with 4 KiB messages runs"):
    w = res["workloads"][0]
    check(w["perftest"]["cq_moderation"] == 100, f"send_bw 4 KiB: CQ moderation 100 ({w['perftest']})")
    check(w["completions"] == {"IBV_WC_SUCCESS": 1050} and w["data_verified"] and w["finished"],
          f"send_bw 4 KiB: 1050 completed, unsignalled ones with the signalled one after them ({w['completions']})")

# cq_moderation is perftest's -Q: only the bandwidth kinds take it.
path = os.path.join(d, "bad.yaml")
with open(path, "w") as f:
    f.write(f"name: bad\n{TOPO}workloads:\n  - {{kind: send_lat, from: a, to: b, cq_moderation: 10}}\n")
rc, _, stderr, _ = run(path, os.path.join(d, "bad"), expect=2)
check(rc == 2 and "bad.yaml:4:" in stderr and "cq_moderation" in stderr, f"cq_moderation on send_lat refused, located ({stderr.strip()})")

finish()
