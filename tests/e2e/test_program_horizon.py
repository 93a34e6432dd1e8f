"""A run with programs and no `stop` ends (docs/programs.md, What you get):
a program still running after 1000 s of simulated time is killed and
reported, as a workload may not take longer either. A server whose client
ended early (ibv_rc_pingpong -n larger on the server) polled its CQ for
ever, the run never ended, and an interrupt left no output at all."""
import json
import os
import subprocess

from e2e import BINARY, check, finish, tmpdir

PORT = 18613
d = tmpdir()
probe = os.path.join(d, "sleeps_for_ever")
cc = subprocess.run(["cc", "-x", "c", "-", "-o", probe, "-libverbs"], capture_output=True, text=True,
                    input="#include <infiniband/verbs.h>\n#include <stdio.h>\n#include <unistd.h>\n"
                          "int main(void) { int n; ibv_free_device_list(ibv_get_device_list(&n));\n"
                          "  printf(\"sleeping\\n\"); for (;;) sleep(100); }\n")
check(cc.returncode == 0, "the sleeping probe compiles", cc)
topology = "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\ncapture: {pcap: none}\n"
cases = {
    "sleeps": f"  - {{host: a, run: {probe}}}\n",
    "pingpong": f"  - {{host: b, run: \"ibv_rc_pingpong -g 0 -n 1000000 -p {PORT}\"}}\n"
                f"  - {{host: a, run: \"ibv_rc_pingpong -g 0 -n 10 -p {PORT} {{b}}\", start: 10us}}\n",
}
for name, programs in cases.items():
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"name: {name}\nfabric: roce_v2\nseed: 1\n{topology}programs:\n{programs}")
    out = os.path.join(d, name)
    try:
        p = subprocess.run([BINARY, "run", path, "--out", out, "-q"], capture_output=True, text=True, timeout=150)
    except subprocess.TimeoutExpired:
        check(False, f"{name}: a run with a program that never ends and no stop ends")
        continue
    res = json.load(open(os.path.join(out, "results.json")))
    stuck = res["programs"][0]
    check(p.returncode == 4 and stuck["signal"] == "SIGKILL" and stuck["end_ps"] == 1000 * 10**12
          and "1000s of simulated time had passed and the experiment sets no stop" in stuck["killed"],
          f"{name}: killed at 1000 s and said why ({stuck}; {p.stderr.strip()})")
    if name == "pingpong":
        check(res["programs"][1]["exit_code"] == 0, f"pingpong: the client ended well ({res['programs'][1]})")
    else:
        check(open(os.path.join(out, "programs", "a-0.out")).read() == "sleeping\n", "sleeps: its output kept")
finish()
