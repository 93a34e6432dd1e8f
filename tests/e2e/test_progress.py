"""The progress line: `run --progress` shows one line on stderr, rewritten
in place, from the start (`run` alone shows it only on a terminal, after a
second); --quiet, or stderr not a terminal, shows nothing. It does not change
the run: results.json and flows.csv are byte-identical with and without it."""
import filecmp
import os
import subprocess

from e2e import BINARY, check, finish, tmpdir

d = tmpdir()
path = os.path.join(d, "flows.yaml")
with open(path, "w") as f:
    f.write("""name: flows
fabric: roce_v2
seed: 3
stop: 300us
link: {bandwidth: 100Gbps, delay: 1us, mtu: 1024}
flow_control: pfc
topology: {generate: {kind: fat_tree, k: 4}}
workloads:
  - {kind: flows, cdf: hadoop, load: 0.5, duration: 300us}
capture: {pcap: none}
""")


def run(out, *args):
    # Bytes, not text: text mode would turn the line's carriage returns into newlines.
    p = subprocess.run([BINARY, "run", path, "--out", os.path.join(d, out), *args], capture_output=True, timeout=600)
    err = p.stderr.decode()
    check(p.returncode == 0, f"{out}: exit {p.returncode}: {err}")
    return err


shown = run("progress", "--progress")
check(shown.startswith("\rsimulated ") and " of 300.000 us | " in shown and "flows done" in shown,
      f"--progress: a line rewritten in place, got {shown!r}")
check(shown.endswith("\n") and shown.count("\n") == 1, f"--progress: one line, ended before the summary: {shown!r}")
check(run("plain") == "", "nothing when stderr is not a terminal")
check(run("quiet", "--progress", "--quiet") == "", "nothing with --quiet")
for f in ("results.json", "flows.csv"):
    check(filecmp.cmp(os.path.join(d, "progress", f), os.path.join(d, "plain", f), shallow=False),
          f"{f} identical with and without the progress line")
finish()
