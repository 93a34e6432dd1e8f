"""Builds one of bench/ns3/*.cc against Debian's ns-3 (libns3-dev), for the
ns-3 comparisons (ns3_compare.py, ns3_engine.py): the program beside the
rdmasim binary, rebuilt when its source is newer."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build(source, exe, mods):
    """Compiles bench/ns3/`source` into `exe` with the ns-3 modules `mods`;
    returns ns-3's version."""
    if subprocess.run(["pkg-config", "--exists", *mods]).returncode != 0:
        sys.exit("ns-3 not found: apt-get install libns3-dev (Debian 12: ns-3 3.37)")
    src = os.path.join(HERE, "ns3", source)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        cflags = subprocess.check_output(["pkg-config", "--cflags", *mods], text=True).split()
        # Debian's .pc files name libgsl.so, which only libgsl-dev installs; the
        # ns-3 libraries already link what they need of it.
        libs = [l for l in subprocess.check_output(["pkg-config", "--libs", *mods], text=True).split()
                if "libgsl" not in l]
        subprocess.run(["g++", "-O2", "-I", ROOT, "-o", exe, src, *cflags, *libs], check=True)
    return subprocess.check_output(["pkg-config", "--modversion", "ns3-core"], text=True).strip()
