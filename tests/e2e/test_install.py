"""`cmake --install BUILD --prefix P` puts an rdmasim that runs on its own:
P/bin/rdmasim and its man page P/share/man/man1/rdmasim.1, which names
every subcommand and option that --help lists; the installed binary, run
from another folder, runs the quickstart and writes its output there."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

BINARY = os.path.abspath(e2e.BINARY)
SOURCE = os.path.abspath(e2e.SOURCE)
build = os.path.dirname(BINARY)
prefix = tempfile.mkdtemp(prefix="rdmasim-install-")
try:
    r = subprocess.run(["cmake", "--install", build, "--prefix", prefix], capture_output=True, text=True)
    e2e.check(r.returncode == 0, f"cmake --install: {r.stdout} {r.stderr}")
    exe = os.path.join(prefix, "bin", "rdmasim")
    man = os.path.join(prefix, "share", "man", "man1", "rdmasim.1")
    e2e.check(os.access(exe, os.X_OK), "bin/rdmasim is installed")
    e2e.check(os.path.isfile(man), "share/man/man1/rdmasim.1 is installed")

    # The man page renders without warnings and names every option of every subcommand's --help.
    page = open(man).read() if os.path.isfile(man) else ""
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", man], capture_output=True, text=True)
        e2e.check(g.returncode == 0 and g.stderr == "", f"groff warns about the man page: {g.stderr}")
    flat = page.replace("\\-", "-")
    h = subprocess.run([exe, "--help"], capture_output=True, text=True)
    e2e.check(h.returncode == 0 and "rdmasim COMMAND --help" in h.stdout and "man rdmasim" in h.stdout,
              f"rdmasim --help says where the rest is: {h.stdout}")
    for code in ("0", "1", "2", "3", "4"):
        e2e.check(f"{code} " in h.stdout.split("Exit status:")[-1] and f".B {code}\n" in page,
                  f"--help and the man page both give exit status {code}")
    for cmd in ("run", "compare", "sweep", "report", "validate"):
        h = subprocess.run([exe, cmd, "--help"], capture_output=True, text=True)
        e2e.check(h.returncode == 0, f"rdmasim {cmd} --help exits 0")
        e2e.check(f"B rdmasim {cmd}" in flat, f"the man page's synopsis has {cmd}")
        for opt in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", h.stdout))):
            e2e.check(opt in flat, f"the man page names {cmd}'s {opt}")

    # The installed binary, from a folder that is not the repository, runs the quickstart.
    work = tempfile.mkdtemp(prefix="rdmasim-install-run-")
    try:
        r = subprocess.run([exe, "run", os.path.join(SOURCE, "examples", "quickstart.yaml"), "--quiet"],
                           cwd=work, capture_output=True, text=True, timeout=300)
        e2e.check(r.returncode == 0 and "quickstart on roce_v2, seed 1" in r.stdout,
                  f"installed rdmasim runs the quickstart: {r.stdout} {r.stderr}")
        e2e.check(os.path.isfile(os.path.join(work, "out", "quickstart", "results.json")),
                  "it wrote out/quickstart/results.json where it ran")
        e2e.check_captures(os.path.join(work, "out", "quickstart"), "roce_v2")
        # The cost catalogue and the report script are compiled in: compare prices and reports.
        r = subprocess.run([exe, "compare", os.path.join(SOURCE, "examples", "quickstart.yaml"), "--fabrics",
                            "roce_v2", "--report"], cwd=work, capture_output=True, text=True, timeout=300)
        e2e.check(r.returncode == 0 and "total cost USD" in r.stdout,
                  f"installed rdmasim compares and prices: {r.stdout} {r.stderr}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
finally:
    shutil.rmtree(prefix, ignore_errors=True)
e2e.finish()
