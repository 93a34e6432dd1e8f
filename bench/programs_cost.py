#!/usr/bin/env python3
"""What real programs under rdmasim cost in wall-clock and CPU time
(docs/performance.md, docs/programs.md): an `ib_write_bw -s 65536 -n 5000`
pair on RoCE v2 (no capture, three runs, the median; then once with
`capture: {pcap: hosts}`), and the attach channel's cost per call: a probe
program, compiled here against the installed libibverbs, makes N empty
`ibv_poll_cq` calls, and the cost of a call is the difference from N = 0
divided by N. CPU seconds are rdmasim's and its programs' (they are its
children), user and system.

    python3 bench/programs_cost.py build/rdmasim [N]
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

TOPOLOGY = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
PROBE = r"""
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  long n = atol(argv[1]), found = 0;
  struct ibv_device** list = ibv_get_device_list(NULL);
  struct ibv_context* ctx = ibv_open_device(list[0]);
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  struct ibv_wc wc;
  for (long i = 0; i < n; ++i) found += ibv_poll_cq(cq, 1, &wc);
  printf("%ld polls, %ld found\n", n, found);
  return found != 0;
}
"""


def timed(binary, d, name, text):
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([binary, "run", path, "--out", os.path.join(d, name)], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    binary = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    d = tempfile.mkdtemp(prefix="programs-bench-")
    bw = (f"name: bw\nfabric: roce_v2\nstop: 3s\n{TOPOLOGY}programs:\n"
          "  - {host: b, run: \"ib_write_bw -s 65536 -n 5000\"}\n"
          "  - {host: a, run: \"ib_write_bw -s 65536 -n 5000 {b}\", start: 10us}\n")
    runs = sorted(timed(binary, d, f"bw{i}", bw + "capture: {pcap: none}\n") for i in range(3))
    print(f"ib_write_bw -s 65536 -n 5000, no capture: wall {runs[1][0]:.2f} s, cpu {runs[1][1]:.2f} s (median of 3)")
    wall, cpu = timed(binary, d, "bw_pcap", bw + "capture: {pcap: hosts}\n")
    print(f"ib_write_bw -s 65536 -n 5000, pcap: hosts: wall {wall:.2f} s, cpu {cpu:.2f} s")
    src = os.path.join(d, "poll.c")
    with open(src, "w") as f:
        f.write(PROBE)
    probe = os.path.join(d, "poll")
    subprocess.run(["cc", "-O2", "-o", probe, src, "-libverbs"], check=True)
    empty = f"name: poll\nfabric: roce_v2\nstop: 1000s\n{TOPOLOGY}capture: {{pcap: none}}\nprograms:\n"
    w0, c0 = timed(binary, d, "poll0", empty + f"  - {{host: a, run: \"{probe} 0\"}}\n")
    wn, cn = timed(binary, d, "polln", empty + f"  - {{host: a, run: \"{probe} {n}\"}}\n")
    print(f"empty ibv_poll_cq: wall {(wn - w0) / n * 1e6:.1f} us, cpu {(cn - c0) / n * 1e6:.1f} us a call ({n} calls)")
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
