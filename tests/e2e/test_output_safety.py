#!/usr/bin/env python3
"""Output folders (docs/reliability.md): rdmasim never deletes a file it did
not write, `compare` replaces its whole output at once, an interrupted run
leaves nothing half-written behind and says what it kept, and output that
cannot be written exits 3 with the path and the system's reason."""
import os
import resource
import select
import signal
import stat
import subprocess
import threading
import time

import e2e

TWO = """\
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads: [{kind: rdma_write, from: a, to: b, size: 64KiB, count: 20, outstanding: 4}]
capture: {pcap: none}
"""

# Runs long enough (wall clock) to be interrupted: no stop, many messages.
LONG = """\
name: long
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads: [{kind: rdma_write, from: a, to: b, size: 64KiB, count: 100000000, outstanding: 8}]
capture: {pcap: hosts}
"""


write = e2e.write_text
rdmasim = e2e.rdmasim


def read(path):
    with open(path) as f:
        return f.read()


def leftovers(parent):
    return sorted(e for e in os.listdir(parent) if ".tmp-" in e or ".old-" in e)

def wait_until_staged(p):
    """Until the process has begun writing its output (its staging directory
    exists): a signal sent before then, by a fixed sleep on a slow or
    sanitized build, would arrive before the process could say anything."""
    deadline = time.monotonic() + 120
    while not leftovers(tmp) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    e2e.check(leftovers(tmp) != [], "the process began staging its output")



tmp = e2e.tmpdir()
two = os.path.join(tmp, "two.yaml")
write(two, TWO)

# The reproducer: a folder with the user's own files is refused, whole.
d = os.path.join(tmp, "d")
os.mkdir(d)
write(os.path.join(d, "results.json"), "mine")
write(os.path.join(d, "thesis.txt"), "four years")
r = rdmasim("run", two, "--out", d)
e2e.check(r.returncode == 2, f"run into a folder with thesis.txt: exit {r.returncode}, expected 2: {r.stderr}")
e2e.check("thesis.txt" in r.stderr and "did not write" in r.stderr, f"the refusal names thesis.txt: {r.stderr}")
e2e.check(read(os.path.join(d, "thesis.txt")) == "four years", "thesis.txt is still there")
e2e.check(read(os.path.join(d, "results.json")) == "mine", "the user's results.json is still there")
e2e.check(leftovers(tmp) == [], f"no staging directory left: {leftovers(tmp)}")

# rdmasim's own output is replaced; a file added to it afterwards protects it.
out = os.path.join(tmp, "out")
e2e.run(two, out)
manifest = read(os.path.join(out, ".rdmasim-manifest")).splitlines()
e2e.check("results.json" in manifest, f"the manifest lists results.json: {manifest}")
e2e.run(two, out, "--seed", "2")
e2e.check(e2e.run(two, out)[3]["seed"] == 1, "a second run replaces the first")
write(os.path.join(out, "notes.txt"), "mine")
code, _, err, _ = e2e.run(two, out, expect=2)
e2e.check("notes.txt" in err, f"a file added to an output folder is named: {err}")
e2e.check(read(os.path.join(out, "notes.txt")) == "mine", "notes.txt is still there")

# compare: one consistent set. A second compare with other fabrics and seed
# leaves no fabric folder of the first.
cmp = os.path.join(tmp, "cmp")
r = rdmasim("compare", two, "--fabrics", "ib,roce_v2", "--out", cmp)
e2e.check(r.returncode == 0, f"compare ib,roce_v2: exit {r.returncode}: {r.stderr}")
r = rdmasim("compare", two, "--fabrics", "roce_v1", "--seed", "5", "--out", cmp)
e2e.check(r.returncode == 0, f"compare roce_v1 --seed 5: exit {r.returncode}: {r.stderr}")
e2e.check(sorted(os.listdir(cmp)) == [".rdmasim-manifest", "compare.csv", "compare.json", "roce_v1"],
          f"compare replaced the whole set: {sorted(os.listdir(cmp))}")
e2e.check(leftovers(tmp) == [], f"compare: no staging directory left: {leftovers(tmp)}")
# ...and refuses a folder holding someone else's file.
write(os.path.join(cmp, "thesis.txt"), "four years")
r = rdmasim("compare", two, "--fabrics", "roce_v2", "--out", cmp)
e2e.check(r.returncode == 2 and "thesis.txt" in r.stderr, f"compare into a folder with thesis.txt: {r.stderr}")
e2e.check(sorted(os.listdir(cmp)) == [".rdmasim-manifest", "compare.csv", "compare.json", "roce_v1", "thesis.txt"],
          f"compare left the refused folder alone: {sorted(os.listdir(cmp))}")
os.remove(os.path.join(cmp, "thesis.txt"))

# kill -9 in the middle of a compare: the previous set stays whole, and the
# next compare clears what the killed one staged.
long = os.path.join(tmp, "long.yaml")
write(long, LONG)
p = subprocess.Popen([e2e.BINARY, "compare", long, "--fabrics", "roce_v2,ib", "--out", cmp],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
e2e.check("running on roce_v2" in p.stdout.readline(), "compare started")
time.sleep(0.5)
p.kill()
p.wait()
e2e.check(sorted(os.listdir(cmp)) == [".rdmasim-manifest", "compare.csv", "compare.json", "roce_v1"],
          f"after kill -9 the previous compare is whole: {sorted(os.listdir(cmp))}")
e2e.check(len(leftovers(tmp)) == 1, f"kill -9 leaves its staging directory: {leftovers(tmp)}")
r = rdmasim("compare", two, "--fabrics", "roce_v2", "--out", cmp)
e2e.check(r.returncode == 0, f"compare after a killed one: exit {r.returncode}: {r.stderr}")
e2e.check(leftovers(tmp) == [], f"the next compare removed the killed one's staging: {leftovers(tmp)}")

# SIGINT and SIGTERM: nothing staged is left, the previous output is kept,
# and the message says so. 130 and 143: 128 + the signal.
for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
    p = subprocess.Popen([e2e.BINARY, "run", long, "--out", out + "2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_until_staged(p)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    e2e.check(p.returncode == code, f"{sig.name}: exit {p.returncode}, expected {code}: {err}")
    e2e.check("interrupted" in err and "was not written" in err, f"{sig.name}: says what it kept: {err}")
    e2e.check(not os.path.exists(out + "2") and leftovers(tmp) == [],
              f"{sig.name}: nothing left behind: {sorted(os.listdir(tmp))}")
before = read(os.path.join(cmp, "compare.json"))
p = subprocess.Popen([e2e.BINARY, "compare", long, "--fabrics", "roce_v2", "--out", cmp],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
wait_until_staged(p)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
e2e.check(p.returncode == 130 and cmp + " keeps its previous output" in err, f"compare SIGINT: {err}")
e2e.check(read(os.path.join(cmp, "compare.json")) == before and leftovers(tmp) == [],
          "compare SIGINT: the previous set is untouched")

# A child rdmasim starts (the report's python3, a sweep's runs) starts with
# no signal blocked, though rdmasim blocks SIGINT and SIGTERM for its
# interrupt thread: one that inherited them would not end when passed them.
p = subprocess.Popen([e2e.BINARY, "report", cmp, "--out", os.path.join(tmp, "page.html")],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
blocked = None
deadline = time.monotonic() + 60
while blocked is None and p.poll() is None and time.monotonic() < deadline:
    for child in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
        try:
            with open(f"/proc/{child}/status") as f:
                blocked = [line.split()[1] for line in f if line.startswith("SigBlk:")]
        except OSError:
            pass
    time.sleep(0.01)
p.wait(timeout=120)
e2e.check(blocked == ["0000000000000000"], f"report: its python3 starts with signals blocked: {blocked}")


# Each command has its own default folder (run: out/<name>, compare:
# out/<name>-compare, sweep: out/<name>-sweep), so a compare right after a
# run (the quickstart's next step) does not meet the run's output; and given
# the same folder, a run does not delete a comparison or a sweep, nor a
# comparison or a sweep a run.
kinds = os.path.join(tmp, "kinds")
os.mkdir(kinds)
named = write(os.path.join(kinds, "named.yaml"), "name: named\n" + TWO)
r = rdmasim("run", named, cwd=kinds)
e2e.check(r.returncode == 0, f"run into its default folder: {r.stderr}")
r = rdmasim("compare", named, "--fabrics", "roce_v2", cwd=kinds)
e2e.check(r.returncode == 0 and "output: out/named-compare " in r.stdout,
          f"compare right after a run, into its own default folder: {r.stdout} {r.stderr}")
compared = os.path.join(kinds, "out", "named-compare")
e2e.check(os.path.isdir(compared) and sorted(os.listdir(compared)) ==
          [".rdmasim-manifest", "compare.csv", "compare.json", "roce_v2"], "the comparison is whole")
e2e.check(os.path.exists(os.path.join(kinds, "out", "named", "results.json")), "the run's output is kept")
for cmd in (["run", named, "--out", "out/run"], ["sweep", named, "--vary", "seed=1,2"]):
    r = rdmasim(*cmd, cwd=kinds)
    e2e.check(r.returncode == 0, f"{cmd[0]}: {r.stderr}")
e2e.check(sorted(os.listdir(os.path.join(kinds, "out"))) == ["named", "named-compare", "named-sweep", "run"],
          f"folders: {os.listdir(os.path.join(kinds, 'out'))}")
r = rdmasim("run", named, "--out", "out/named-compare", cwd=kinds)
e2e.check(r.returncode == 2 and "out/named-compare: holds the output of `rdmasim compare` (compare.json), which "
          "`rdmasim run` does not replace: give --out another folder" in r.stderr, f"run into a comparison: {r.stderr}")
for cmd, into, theirs in ((["run", named], "named-sweep", "sweep"),
                          (["compare", named, "--fabrics", "ib"], "run", "run"),
                          (["sweep", named, "--vary", "seed=3"], "named-compare", "compare"),
                          (["sweep", named, "--vary", "seed=3", "--collect"], "run", "run")):
    folder = os.path.join(kinds, "out", into)
    before = sorted(os.listdir(folder))
    r = rdmasim(*cmd, "--out", folder)
    e2e.check(r.returncode == 2 and f"holds the output of `rdmasim {theirs}`" in r.stderr
              and f"which `rdmasim {cmd[0]}` does not replace" in r.stderr, f"{cmd[0]} into {into}: {r.stderr}")
    e2e.check(sorted(os.listdir(folder)) == before, f"{into} untouched by {cmd[0]}")
e2e.check(leftovers(os.path.join(kinds, "out")) == [], "no staging left by the refusals")

# A full disk: the pcap and results.json both give exit 3 with the path and
# the reason. A file size limit makes writes fail as a full disk does (EFBIG).
def limited(limit):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


r = rdmasim("run", two, "--out", os.path.join(tmp, "full1"), "--set", "capture.pcap=hosts",
            preexec_fn=limited(100_000))
e2e.check(r.returncode == 3, f"pcap on a full disk: exit {r.returncode}, expected 3: {r.stderr}")
e2e.check(os.path.join(tmp, "full1.tmp-") in r.stderr and ".pcap: cannot write capture: File too large" in r.stderr,
          f"pcap on a full disk: path and reason: {r.stderr}")
r = rdmasim("run", two, "--out", os.path.join(tmp, "full2"), preexec_fn=limited(1000))
e2e.check(r.returncode == 3, f"results.json on a full disk: exit {r.returncode}, expected 3: {r.stderr}")
e2e.check("results.json: cannot write: File too large" in r.stderr, f"results.json: path and reason: {r.stderr}")
e2e.check(not os.path.exists(os.path.join(tmp, "full1")) and not os.path.exists(os.path.join(tmp, "full2"))
          and leftovers(tmp) == [], "a failed write leaves nothing behind")
# The same without SIGXFSZ ignored, as `ulimit -f` leaves it: the default
# action killed rdmasim (exit 153) and left its staging folder behind;
# rdmasim ignores it, and the write fails with EFBIG as above.
def size_limited(limit):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


r = rdmasim("run", two, "--out", os.path.join(tmp, "full3"), "--set", "capture.pcap=hosts",
            preexec_fn=size_limited(100_000))
e2e.check(r.returncode == 3 and "cannot write capture: File too large" in r.stderr,
          f"SIGXFSZ: exit {r.returncode}, expected 3 with the reason: {r.stderr}")
e2e.check(not os.path.exists(os.path.join(tmp, "full3")) and leftovers(tmp) == [],
          f"SIGXFSZ: nothing left behind: {sorted(os.listdir(tmp))}")

# stdout or stderr a pipe nobody reads (`rdmasim compare ... | head -1`):
# SIGPIPE killed rdmasim at its next line, leaving the staging folder of a
# compare or a sweep behind. Now the line is lost and nothing else: the
# output is written, and the exit code is the run's (docs/reliability.md).
closed = os.path.join(tmp, "closed")
os.mkdir(closed)
for cmd, to in ((["run", two, "--out", os.path.join(closed, "run")], "stdout"),
                (["run", long, "--set", "stop=200us", "--progress", "--out", os.path.join(closed, "progress")], "stderr"),
                (["compare", two, "--fabrics", "roce_v2,ib", "--out", os.path.join(closed, "compare")], "stdout"),
                (["sweep", two, "--vary", "seed=1,2", "--out", os.path.join(closed, "sweep")], "stdout")):
    rfd, wfd = os.pipe()
    os.close(rfd)
    streams = {"stdout": wfd, "stderr": subprocess.PIPE} if to == "stdout" else \
        {"stdout": subprocess.PIPE, "stderr": wfd}
    p = subprocess.run([e2e.BINARY, *cmd], text=True, timeout=600, **streams)
    os.close(wfd)
    what = f"{cmd[0]} with {to} closed"
    e2e.check(p.returncode == 0, f"{what}: exit {p.returncode}, expected 0: {p.stderr or p.stdout}")
    e2e.check(os.path.exists(os.path.join(cmd[-1], ".rdmasim-manifest")), f"{what}: the output is written")
e2e.check(leftovers(closed) == [], f"a closed stdout or stderr leaves nothing behind: {leftovers(closed)}")

# report --out: a file rdmasim did not write is never written over (it
# wrote the page over a user's file, through FILE.tmp, another one), and a
# FIFO or a device is written into, never replaced by a file (as root,
# `--out /dev/null` renamed a regular file over the device).
pages = os.path.join(tmp, "pages")
os.mkdir(pages)
mine = write(os.path.join(pages, "mine.html"), "my page")
write(mine + ".tmp", "my draft")
r = rdmasim("report", out, "--out", mine)
e2e.check(r.returncode == 2 and f"{mine}: exists and is not a page rdmasim wrote" in r.stderr,
          f"report over a user's file: exit {r.returncode}, expected 2 naming it: {r.stderr}")
e2e.check(read(mine) == "my page" and read(mine + ".tmp") == "my draft" and
          sorted(os.listdir(pages)) == ["mine.html", "mine.html.tmp"], f"the user's files are as they were: {os.listdir(pages)}")
# rdmasim's own page, and an empty file (as mktemp makes), are written over;
# the staging file never takes the name of a file that is there.
ours = os.path.join(pages, "ours.html")
for before in (None, ""):
    if before is not None:
        write(ours, before)
    r = rdmasim("report", out, "--out", ours)
    e2e.check(r.returncode == 0 and '<meta name="generator" content="rdmasim report">' in read(ours),
              f"report into {'an empty file' if before == '' else 'a new file'}: {r.stderr}")
first = read(ours)
r = rdmasim("report", cmp, "--out", ours,
            preexec_fn=lambda: write(f"{ours}.tmp-{os.getpid()}", "mine, named as rdmasim's staging file"))
squatter = [e for e in os.listdir(pages) if e.startswith("ours.html.tmp-")]
e2e.check(r.returncode == 0 and read(ours) != first, f"rdmasim's own page is replaced: {r.stderr}")
e2e.check(len(squatter) == 1 and read(os.path.join(pages, squatter[0])) == "mine, named as rdmasim's staging file",
          f"a file with the staging name is left alone: {squatter}")
# A FIFO gets the page and stays a FIFO; the "wrote" line goes to stderr.
fifo = os.path.join(pages, "fifo")
os.mkfifo(fifo)
fd = os.open(fifo, os.O_RDWR)  # never blocks, and holds the FIFO open for the page's writer
received, done = [], threading.Event()


def drain():
    while not done.is_set():
        if select.select([fd], [], [], 0.1)[0]:
            received.append(os.read(fd, 1 << 16))


reader = threading.Thread(target=drain)
reader.start()
r = rdmasim("report", out, "--out", fifo)
done.set()
reader.join()
os.close(fd)
page = b"".join(received).decode()
e2e.check(r.returncode == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and page.rstrip().endswith("</html>"),
          f"report into a FIFO: exit {r.returncode}, still a FIFO: {stat.S_ISFIFO(os.stat(fifo).st_mode)}, "
          f"{len(page)} characters read: {r.stderr}")
e2e.check(r.stdout == "" and f"wrote {fifo}" in r.stderr, f"report into a FIFO says so on stderr: {r.stdout!r} {r.stderr!r}")
# A descriptor (the page on stdout): written as it is.
r = rdmasim("report", out, "--out", "/dev/fd/1")
e2e.check(r.returncode == 0 and r.stdout.startswith("<!DOCTYPE html>") and "wrote /dev/fd/1" in r.stderr,
          f"report --out /dev/fd/1: exit {r.returncode}: {r.stdout[:80]!r} {r.stderr}")
if os.geteuid() == 0:  # a device of our own, the null device's numbers: writes go nowhere
    null = os.path.join(pages, "null")
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    r = rdmasim("report", out, "--out", null)
    e2e.check(r.returncode == 0 and stat.S_ISCHR(os.stat(null).st_mode),
              f"report into a character device: exit {r.returncode}, still a device: "
              f"{stat.S_ISCHR(os.stat(null).st_mode)}: {r.stderr}")
e2e.check(sorted(e for e in os.listdir(pages) if ".tmp" in e) == ["mine.html.tmp"] + squatter,
          f"no staging file left: {os.listdir(pages)}")

# A folder the system will not let us create: exit 3, not 2.
os.chmod(tmp, 0o555)
try:
    if os.geteuid() != 0:  # root may write anywhere
        r = rdmasim("run", two, "--out", os.path.join(tmp, "denied"))
        e2e.check(r.returncode == 3 and "Permission denied" in r.stderr, f"permission denied: {r.stderr}")
finally:
    os.chmod(tmp, 0o755)

e2e.finish()
