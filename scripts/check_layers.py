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

Inside fabrics/, sub-layers stack the same way (FABRIC_SUBLAYERS, lowest
first): wire formats, then the seam every fabric shares (fabric.hpp,
network.hpp), then the protocols (Ethernet, IP and TCP, the IBA
transport), then the NICs and networks of each fabric, then the registry.
A file may include its own sub-layer or a lower one.

Above fabrics/, code sees a fabric through that seam: an include into
fabrics/ names one of its top-level files or a wire format
(fabrics/*/wire/), and no dynamic_cast names a type fabrics/ declares (a
NIC's capabilities are asked of the NicFabric: sockets(), ...).

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
# fabrics/ sub-layers, lowest first: each a list of path prefixes; a file
# belongs to the sub-layer of its longest matching prefix.
FABRIC_SUBLAYERS = [
    ("addresses", ["fabrics/ip/wire/address."]),
    ("ethernet wire", ["fabrics/ethernet/wire/"]),
    ("iba wire", ["fabrics/iba/wire/", "fabrics/iba/opcodes.", "fabrics/iba/icrc."]),
    ("ip wire", ["fabrics/ip/wire/"]),
    ("fabric wire", ["fabrics/ib/wire/", "fabrics/roce_v1/wire/"]),
    ("seam", ["fabrics/fabric.", "fabrics/network.", "fabrics/pfc_deadlocks."]),
    ("ethernet", ["fabrics/ethernet/"]),
    ("ip", ["fabrics/ip/"]),
    ("iba", ["fabrics/iba/"]),
    ("fabrics", ["fabrics/ib/", "fabrics/roce_v1/", "fabrics/roce_v2/", "fabrics/iwarp/", "fabrics/tcp/"]),
    ("registry", ["fabrics/registry."]),
]
# Known leaks, each with its reason, until the seam offers what they use.
# An entry that no longer leaks fails the check, so the list only shrinks.
KNOWN_LEAKS = set()
FABRIC_INCLUDE = re.compile(r'^\s*#\s*include\s+"(fabrics/[^"]+)"')
DYNAMIC_CAST = re.compile(r"dynamic_cast\s*<\s*(?:const\s+)?([A-Za-z_][A-Za-z0-9_:]*)")
DECLARED = re.compile(r"^\s*(?:class|struct)\s+([A-Z][A-Za-z0-9_]*)\b[^;]*$", re.M)
seen_leaks = set()
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


def sublayer(path):
    """(rank, name) of a path under fabrics/, by its longest matching prefix."""
    best = None
    for i, (name, prefixes) in enumerate(FABRIC_SUBLAYERS):
        for p in prefixes:
            if path.startswith(p) and (best is None or len(p) > best[2]):
                best = (i, name, len(p))
    return (best[0], best[1]) if best else None


def fabric_types(root):
    """The classes and structs fabrics/ headers declare."""
    types = set()
    for path in (root / "fabrics").rglob("*.hpp"):
        types.update(DECLARED.findall(path.read_text()))
    return types


def check_fabric_include(rel, layer, target, where, bad):
    """An include of fabrics/`target` from `rel` (in `layer`)."""
    if layer == "fabrics":
        src, dst = sublayer(rel), sublayer(target)
        if src is None:
            bad.append(f"{where}: {rel} is in no fabrics/ sub-layer (add it to FABRIC_SUBLAYERS)")
        elif dst is None:
            bad.append(f"{where}: includes {target}, which is in no fabrics/ sub-layer (add it to FABRIC_SUBLAYERS)")
        elif dst[0] > src[0]:
            bad.append(f"{where}: fabrics/ sub-layer {src[1]} includes {target}, of {dst[1]} above it")
    elif (rel, target) in KNOWN_LEAKS:
        seen_leaks.add((rel, target))
    elif LAYERS.index(layer) > LAYERS.index("fabrics") and target.count("/") > 1 and "/wire/" not in target:
        bad.append(f"{where}: {layer} includes {target}, inside a fabric (use the seam: "
                   f"fabrics/fabric.hpp, network.hpp, the NicFabric, or a wire format)")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = []
    files = 0
    names = fabric_names(root)
    types = fabric_types(root)
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
                rel = path.relative_to(root).as_posix()
                if layer != "fabrics":
                    for t in DYNAMIC_CAST.findall(line):
                        if t.split("::")[-1] in types:
                            bad.append(f"{rel}:{n}: casts to {t}, a type of fabrics/ (ask the NicFabric "
                                       f"what the NIC offers: sockets(), ...)")
                f = FABRIC_INCLUDE.match(line)
                if f:
                    check_fabric_include(rel, layer, f.group(1), f"{rel}:{n}", bad)
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                where = f"{path.relative_to(root)}:{n}"
                if target not in rank:
                    bad.append(f"{where}: {layer} includes {target}/, which is no layer (add it to LAYERS)")
                elif rank[target] > rank[layer]:
                    bad.append(f"{where}: {layer} includes {target}/, a layer above it")
    for rel, target in sorted(KNOWN_LEAKS - seen_leaks):
        bad.append(f"{rel}: no longer includes {target}: remove it from KNOWN_LEAKS")
    for b in bad:
        print(b)
    if files == 0:
        print(f"no sources under {root}")
        return 1
    if not names:
        print(f"no fabric names found under {root / 'fabrics'}")
        return 1
    print(f"{files} files, {len(bad)} upward includes, fabric names or fabric types above fabrics/")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
