"""The README and the tutorial run as written: every fenced ```sh block of
README.md and docs/tutorial.md that runs `rdmasim` is run by bash (with
`rdmasim` on PATH the binary under test), and the fenced block that follows
it in the doc, what the doc says it prints, is compared with what it printed.

A block runs in a temporary folder that holds `examples` (a link to the
repository's), so that its relative paths mean what they mean at the
repository's root while its output (out/...) never goes into the user's
out/; the blocks of one doc run in order in the same folder, as a reader
runs them. Blocks that run no `rdmasim` (scripts/quickstart.sh, which
builds) are not run here.

Each non-empty line of the printed block must be a line of the output, in
order (a doc may show some of the lines, not all): the same words, the
numbers within 2 % or one unit of the doc's last digit. A doc whose numbers
or columns drifted from the code fails, naming the line.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

BINARY = os.path.abspath(e2e.BINARY)
SOURCE = os.path.abspath(e2e.SOURCE)
DOCS = ["README.md", "docs/tutorial.md"]
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
TOLERANCE = 0.02


def blocks(text):
    """The fenced blocks of a markdown text: (info string, body, line number)."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        out.append((m.group(1), "\n".join(body), start))
        i += 1
    return out


def runs_rdmasim(script):
    return any(re.search(r"(^|[\s;])rdmasim\s", line.split("#")[0]) for line in script.split("\n"))


def split(line):
    """A line as its words (spaces collapsed) and its numbers."""
    numbers = NUMBER.findall(line)
    words = " ".join(NUMBER.sub("#", line).split())
    return words, numbers


def close(doc, real):
    d, r = float(doc), float(real)
    digits = len(doc.split("e")[0].split(".")[1]) if "." in doc.split("e")[0] else 0
    unit = 10.0 ** -digits
    if "e" in doc:
        unit *= 10.0 ** int(doc.split("e")[1])
    return abs(d - r) <= max(TOLERANCE * abs(d), unit * 1.0001)


def compare(doc_block, output):
    """Why `doc_block` is not what `output` shows, or None."""
    real = [split(line) for line in output.split("\n") if line.strip()]
    pos = 0
    for line in doc_block.split("\n"):
        if not line.strip():
            continue
        words, numbers = split(line)
        at = next((k for k in range(pos, len(real)) if real[k][0] == words and len(real[k][1]) == len(numbers)),
                  None)
        if at is None:
            return f"the line\n    {line}\nis not in the output (after its line {pos + 1})"
        bad = [(d, r) for d, r in zip(numbers, real[at][1]) if not close(d, r)]
        if bad:
            shown = output.split("\n")
            return (f"the line\n    {line}\nprints\n    {[x for x in shown if x.strip()][at]}\n"
                    f"(numbers off by more than {TOLERANCE:.0%}: {bad})")
        pos = at + 1
    return None


def run_doc(doc, failures, timings):
    text = open(os.path.join(SOURCE, doc)).read()
    found = blocks(text)
    work = tempfile.mkdtemp(prefix="rdmasim-docs-")
    bindir = os.path.join(work, ".bin")
    os.mkdir(bindir)
    os.symlink(BINARY, os.path.join(bindir, "rdmasim"))
    os.symlink(os.path.join(SOURCE, "examples"), os.path.join(work, "examples"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    ran = 0
    try:
        for k, (info, script, line) in enumerate(found):
            if info != "sh" or not runs_rdmasim(script):
                continue
            ran += 1
            t0 = time.monotonic()
            r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                               capture_output=True, text=True, timeout=300)
            timings.append((f"{doc}:{line}", time.monotonic() - t0))
            where = f"{doc}:{line}"
            if r.returncode != 0:
                failures.append(f"{where}: exits {r.returncode}:\n{script}\n{r.stderr[-2000:]}")
                continue
            if k + 1 >= len(found) or found[k + 1][0] not in ("", "text", "console"):
                failures.append(f"{where}: no printed block follows the command")
                continue
            why = compare(found[k + 1][1], r.stdout)
            if why:
                failures.append(f"{doc}:{found[k + 1][2]}: (the output of {where}) {why}\n"
                                f"--- what it printed:\n{r.stdout}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if ran == 0:
        failures.append(f"{doc}: no rdmasim command found")


def self_test():
    """The comparison itself: tolerance, column words, order."""
    out = "x on roce_v2, seed 1\n  write  96.42  42.793  yes\n  read   12.54  10.379  yes\n"
    assert compare("  write  96.40  42.800  yes", out) is None
    assert compare("  read 12.54 10.379 yes\n  write 96.42 42.793 yes", out) is not None  # order
    assert compare("  write  90.00  42.793  yes", out) is not None  # 7 % off
    assert compare("  write  96.42  42.793  no", out) is not None  # words
    assert compare("  write  96.42  yes", out) is not None  # a column missing
    assert close("5", "6") and not close("5", "7") and close("8.1e-06", "8.08e-06")


if __name__ == "__main__":
    self_test()
    failures, timings = [], []
    for doc in DOCS:
        run_doc(doc, failures, timings)
    for where, seconds in timings:
        print(f"{where}: {seconds:.1f} s")
    if failures:
        print(f"{len(failures)} doc block(s) differ from what the commands print:")
        for f in failures:
            print(f"FAIL {f}\n")
        sys.exit(1)
    print(f"ok: {len(timings)} command blocks of {', '.join(DOCS)} print what the docs show")
