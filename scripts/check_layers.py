#!/usr/bin/env python3
"""Checks that every #include "dir/..." in the model points to its own
layer or one below it, so that the layers stay a stack:

  core < nodes < pcap < topologies < fabrics < workloads < experiment < cost < parallel < apps

(bench/ and tests/ may include anything.) CMakeLists.txt builds one library
per layer and links them in this order; this check also catches an upward
include of a header that needs no linking. mpi.h is included by
parallel/cluster.cpp alone. Prints each violation as
`file:line: <layer> includes <layer>` and exits 1 if there is any.

It also keeps the fabric seam (docs/architecture.md, "Fabrics"): no string
literal in a layer above fabrics/ names a fabric (the names each
fabrics/*/*.hpp returns from `name()`); such code asks the `Fabric`, or
lists names from the registry. A name within a dotted key
(`tcp.congestion_control`) is a key, not a fabric; one in a Markdown code
span or link target (a key table's help text, which docs/yaml.md is
generated from) is documentation.

usage: check_layers.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

LAYERS = ["core", "nodes", "pcap", "topologies", "fabrics", "workloads", "experiment", "cost", "parallel", "programs", "apps"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')
# The rest of the build does not see MPI: one file wraps it (parallel/cluster.hpp).
MPI = re.compile(r'^\s*#\s*include\s+[<"]mpi\.h[>"]')
MPI_ONLY = "parallel/cluster.cpp"
FABRIC_NAME = re.compile(r'name\(\) const override \{ return "([a-z0-9_]+)"; \}')


def literals(text):
    """(line, text) of each string literal outside comments and #include lines."""
    text = re.sub(r"(?m)^[ \t]*#[ \t]*include.*$", "", text)
    out, i, line = [], 0, 1
    while i < len(text):
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            line += text.count("\n", i, j)
            i = j + 2
        elif text[i] == '"' or (text[i] == "'" and not text[i - 1].isalnum()):  # not 1'000'000
            quote, j = text[i], i + 1
            while text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            if quote == '"':
                out.append((line, text[i + 1:j]))
            i = j + 1
        else:
            line += text[i] == "\n"
            i += 1
    return out


def fabric_names(root):
    names = set()
    for path in (root / "fabrics").glob("*/*.hpp"):
        names.update(FABRIC_NAME.findall(path.read_text()))
    return names


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    files = 0
    names = fabric_names(root)
    above_fabrics = set(LAYERS[rank["fabrics"] + 1:])
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*")):
            if path.suffix not in (".hpp", ".cpp", ".h"):
                continue
            files += 1
            text = path.read_text()
            if layer in above_fabrics:
                for n, lit in literals(text):
                    # A Markdown code span or link target is documentation (a key table's help), not a decision.
                    for word in re.findall(r"[A-Za-z0-9_.]+", re.sub(r"`[^`]*`|\]\([^)]*\)", "", lit)):
                        if word.rstrip(".") in names:
                            bad.append(f"{path.relative_to(root)}:{n}: names fabric {word.rstrip('.')} "
                                       f"above fabrics/ (ask the Fabric, or list from the registry)")
            for n, line in enumerate(text.splitlines(), 1):
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
    if not names:
        print(f"no fabric names found under {root / 'fabrics'}")
        return 1
    print(f"{files} files, {len(bad)} upward includes or fabric names above fabrics/")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
