#!/usr/bin/env python3
"""Bad ib experiments exit 2 with file:line:column: message, and write no
output (issue 3): an unknown routing name, an MTU that IB does not have
(9000), routers (ib is one subnet), a receive buffer that cannot hold one
packet per VL.

usage: test_ib_errors.py PATH/TO/rdmasim SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import tempfile
import textwrap

import test_ib_captures as ib
from test_ib_captures import check

BASE = textwrap.dedent("""\
    name: ib_bad
    fabric: ib
    link:
      mtu: {mtu}
    ib:
      routing: {routing}
    topology:
      hosts: [a, b]
      switches: [s]
      links:
        - [a, s]
        - [b, s, {{buffer: {buffer}}}]
    workloads:
      - {{kind: send, from: a, to: b}}
    """)


def expect_error(tmp, name, text, line, column, words, command="run"):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + "-out")
    args = [ib.RDMASIM, command, path] + (["--out", out] if command == "run" else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(p.returncode == 2, f"{name}: exit {p.returncode}, expected 2\n{p.stdout}{p.stderr}")
    where = re.search(re.escape(path) + r":(\d+):(\d+): (.*)", p.stderr)
    if check(where, f"{name}: no '{path}:line:column: message' in:\n{p.stderr}"):
        check((int(where.group(1)), int(where.group(2))) == (line, column),
              f"{name}: error at {where.group(1)}:{where.group(2)}, expected {line}:{column}: {where.group(3)}")
        for w in words:
            check(w in where.group(3), f"{name}: '{w}' not in the message: {where.group(3)}")
    check(not os.path.exists(out), f"{name}: output written although the run failed")


def main():
    tmp = tempfile.mkdtemp(prefix="rdmasim-ib-errors-")
    try:
        good = dict(mtu=4096, routing="min_hop", buffer="1MiB")
        expect_error(tmp, "routing", BASE.format(**{**good, "routing": "fastest"}), 6, 12,
                     ["ib.routing", "fastest", "min_hop", "updown"])
        expect_error(tmp, "routing_validate", BASE.format(**{**good, "routing": "fastest"}), 6, 12,
                     ["fastest"], command="validate")
        expect_error(tmp, "mtu", BASE.format(**{**good, "mtu": 9000}), 4, 8, ["9000", "4096"])
        expect_error(tmp, "mtu_link", BASE.format(**good).replace("{buffer: 1MiB}", "{mtu: 1500}"), 12, 20,
                     ["1500"])
        expect_error(tmp, "buffer", BASE.format(**{**good, "buffer": "6KiB"}), 12, 7,
                     ["b - s", "buffer", "VL", "4190"])
        expect_error(tmp, "buffer_validate", BASE.format(**{**good, "buffer": "6KiB"}), 12, 7,
                     ["topology.links[1]", "b - s", "4190"], command="validate")
        routed = BASE.format(**good).replace("  switches: [s]\n", "  switches: [s]\n  routers: [r]\n")
        expect_error(tmp, "routers", routed, 10, 12, ["router"])

        # The same file with good values runs.
        path = os.path.join(tmp, "good.yaml")
        with open(path, "w") as f:
            f.write(BASE.format(**good))
        p = subprocess.run([ib.RDMASIM, "run", path, "--out", os.path.join(tmp, "good-out")], capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 0, f"the good file fails: {p.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ib.finish()


if __name__ == "__main__":
    main()
