#!/usr/bin/env python3
"""sha256 of every output file (results.json, captures, ...) of every
example run on every fabric: a change that should not alter what a run
produces is checked by comparing this list before and after it.

    scripts/output_digests.py BINARY [--examples DIR] [--fabrics ib,roce_v1,roce_v2,iwarp,tcp] > digests.txt
    diff before.txt after.txt

Each line is `example fabric path sha256` (or `example fabric exit N` when
the run is refused or fails: a refusal is part of what must not change).
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("binary")
ap.add_argument("--examples", default=os.path.join(os.path.dirname(__file__), "..", "examples"))
ap.add_argument("--fabrics", default="ib,roce_v1,roce_v2,iwarp,tcp")
ap.add_argument("--only", default="", help="comma-separated example names (default: all)")
args = ap.parse_args()

only = set(filter(None, args.only.split(",")))
names = sorted(f[:-5] for f in os.listdir(args.examples) if f.endswith(".yaml"))
with tempfile.TemporaryDirectory(prefix="rdmasim-digests-") as tmp:
    for name in names:
        if only and name not in only:
            continue
        for fabric in args.fabrics.split(","):
            out = os.path.join(tmp, f"{name}.{fabric}")
            p = subprocess.run([args.binary, "run", os.path.join(args.examples, name + ".yaml"), "--fabric",
                                fabric, "--out", out, "--quiet"], capture_output=True)
            if p.returncode not in (0, 4):
                print(f"{name} {fabric} exit {p.returncode}")
                continue
            for root, _, files in sorted(os.walk(out)):
                for f in sorted(files):
                    path = os.path.join(root, f)
                    with open(path, "rb") as fh:
                        digest = hashlib.sha256(fh.read()).hexdigest()
                    print(f"{name} {fabric} {os.path.relpath(path, out)} {digest}")
            sys.stdout.flush()
