#!/usr/bin/env python3
"""Checks that every #include "dir/..." in the model points to its own
layer or one below it, so that the layers stay a stack:

  core < nodes < pcap < topologies < fabrics < experiment < workloads < cost < parallel < apps

(bench/ and tests/ may include anything.) CMakeLists.txt builds one library
per layer and links them in this order; this check also catches an upward
include of a header that needs no linking. mpi.h is included by
parallel/cluster.cpp alone. Prints each violation as
`file:line: <layer> includes <layer>` and exits 1 if there is any.

usage: check_layers.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

LAYERS = ["core", "nodes", "pcap", "topologies", "fabrics", "experiment", "workloads", "cost", "parallel", "apps"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')
# The rest of the build does not see MPI: one file wraps it (parallel/cluster.hpp).
MPI = re.compile(r'^\s*#\s*include\s+[<"]mpi\.h[>"]')
MPI_ONLY = "parallel/cluster.cpp"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    files = 0
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*")):
            if path.suffix not in (".hpp", ".cpp", ".h"):
                continue
            files += 1
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if MPI.match(line) and path.relative_to(root).as_posix() != MPI_ONLY:
                    bad.append(f"{path.relative_to(root)}:{n}: includes mpi.h, which only {MPI_ONLY} may")
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                where = f"{path.relative_to(root)}:{n}"
                if target not in rank:
                    bad.append(f"{where}: {layer} includes {target}/, which is no layer (add it to LAYERS)")
                elif rank[target] > rank[layer]:
                    bad.append(f"{where}: {layer} includes {target}/, a layer above it")
    for b in bad:
        print(b)
    if files == 0:
        print(f"no sources under {root}")
        return 1
    print(f"{files} files, {len(bad)} upward includes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
