"""Programs whose registered memory rdmasim watches (docs/programs.md, memory
polling): perftest fills its buffers after registering them, a byte at a time,
so a write must not cost a trap each (ib_write_bw -s 1 MiB was killed as
silent, ib_read_bw on iwarp, whose sink regions the peer may write, took
seconds); a program that writes a watched byte and then spins on it with no
call is still seen to spin; and what a program printed before rdmasim killed
it is in its .out."""
import os
import subprocess
import time

from e2e import check, finish, run, tmpdir

TOPOLOGY = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\ncapture: {pcap: none}\n"
PORT = 18611

d = tmpdir()


def pair(fabric, program, size):
    """A perftest pair: b serves, a connects 10 us later; `silence` short so that a slow fill fails fast."""
    cmd = f"{program} -s {size} -n 20 -p {PORT}"
    return (f"name: fill\nfabric: {fabric}\nseed: 1\nstop: 5s\n{TOPOLOGY}programs:\n"
            f"  - {{host: b, run: \"{cmd}\", silence: 5s}}\n"
            f"  - {{host: a, run: \"{cmd} {{b}}\", start: 10us, silence: 5s}}\n")


for fabric, program in (("roce_v2", "ib_write_bw"), ("iwarp", "ib_read_bw")):
    out = os.path.join(d, f"{program}_{fabric}")
    began = time.monotonic()
    rc, _, stderr, res = run(pair(fabric, program, 1 << 20), out, expect=None)
    took = time.monotonic() - began
    check(rc == 0 and [p["exit_code"] for p in res["programs"]] == [0, 0],
          f"{program} -s 1MiB on {fabric}: both ends exit 0 ({stderr.strip()[-300:]})")
    check(took < 4, f"{program} -s 1MiB on {fabric}: its buffer fill takes no trap a byte ({took:.1f} s)")
    if rc == 0:
        report = open(os.path.join(out, "programs", "a-1.out")).read()
        check(" 1048576    20 " in report, f"{program} on {fabric}: the 1 MiB line is printed:\n{report}")
        again = out + "_again"
        run(pair(fabric, program, 1 << 20), again, expect=None)
        for f in ("results.json", "programs/a-1.out", "programs/b-0.out"):
            check(open(os.path.join(out, f), "rb").read() == open(os.path.join(again, f), "rb").read(),
                  f"{program} on {fabric}: {f} deterministic")

# A program that writes a byte of a region the peer may write and then spins on it with no call: rdmasim's
# nudge after a second of silence closes the page its write opened, the spin is seen and answered as a poll,
# so simulated time passes until `stop` (not killed as silent); what it printed first is in its .out.
PROBE = r"""
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int n;
  struct ibv_device **list = ibv_get_device_list(&n);
  struct ibv_context *ctx = ibv_open_device(list[0]);
  struct ibv_pd *pd = ibv_alloc_pd(ctx);
  volatile char *buf = aligned_alloc(4096, 8192);
  if (!ibv_reg_mr(pd, (void *)buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) return 1;
  printf("waiting for the peer\n");
  buf[100] = 0;
  while (buf[100] == 0) {
  }
  return 0;
}
"""
probe = os.path.join(d, "write_then_spin")
cc = subprocess.run(["cc", "-x", "c", "-", "-o", probe, "-libverbs"], input=PROBE, capture_output=True, text=True)
if check(cc.returncode == 0, "the write-then-spin probe compiles", cc):
    out = os.path.join(d, "write_then_spin_run")
    # With a silence under the nudge's second too: the nudge comes at half of it.
    for silence in ("8s", "1s"):
        rc, _, stderr, res = run(f"name: spin\nfabric: roce_v2\nstop: 3ms\n{TOPOLOGY}programs:\n"
                                 f"  - {{host: a, run: {probe}, silence: {silence}}}\n", out, expect=None)
        killed = res["programs"][0]["killed"] if res else None
        check(rc == 4 and killed is not None and "stop time" in killed,
              f"silence {silence}: a spin on a byte the program wrote: polled until stop, not silent ({killed}; "
              f"{stderr.strip()})")
        printed = open(os.path.join(out, "programs", "a-0.out")).read()
        check(printed == "waiting for the peer\n", f"a killed program's output is in its .out ({printed!r})")

finish()
