"""What the NVMe-oF e2e tests share (test_nvme_rdma.py, test_nvme_tcp.py):
the topology and target they run on, and tshark as the Wireshark GUI reads."""

import subprocess

from e2e import check

BASE = """
link: {bandwidth: 100Gbps, delay: 1us}
host: {cores: 4}
topology: {hosts: [h, t], switches: [s], links: [[h, s], [t, s]]}
storage:
  targets:
    - host: t
      namespaces: [{nsid: 1, size: 64MiB, block_size: 512}, {nsid: 2, size: 16MiB, block_size: 4096, ram: true}]
"""


def gui_tshark(path, *args):
    """tshark as the Wireshark GUI reads a file: two passes, default preferences and heuristics."""
    p = subprocess.run(["tshark", "-n", "-2", "-r", path, *args], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"tshark on {path}: {p.stderr[-500:]}")
    return p.stdout


def fields(path, filt, *names):
    """Rows of the named fields of the frames `filt` matches, as the GUI reads `path`."""
    args = []
    for n in names:
        args += ["-e", n]
    out = gui_tshark(path, "-Y", filt, "-T", "fields", *args)
    return [r.split("\t") for r in out.splitlines() if r]
