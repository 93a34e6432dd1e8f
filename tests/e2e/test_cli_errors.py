#!/usr/bin/env python3
"""The command line's error contract (docs/design.md, "Contract: the command line").

Bad input (flags, files, YAML, fabric names, output locations) exits 2 with a
message, errors in a file are reported as file:line:column: message, and a
run that fails leaves neither DIR nor DIR.tmp-* behind, and a previous DIR as
it was.

usage: test_cli_errors.py PATH/TO/rdmasim SOURCE_DIR
"""
import json
import os
import re
import textwrap

from e2e import check, finish, rdmasim, tmpdir, two_hosts, write_text

WORKLOAD = "{kind: rdma_write, from: a, to: b, qp: rc, size: 4KiB, count: 2}"
GOOD = two_hosts("cli_good", WORKLOAD)
# Line 5 holds a value that is not a bandwidth.
BAD_VALUE = two_hosts("cli_bad_value", WORKLOAD, head="link:\n  bandwidth: fast\n")

BAD_SYNTAX = "name: cli_bad_syntax\nfabric: [roce_v2\nseed: 1\n"

# RoCE v1 cannot leave its L2 broadcast domain (docs/design.md): a and b sit on
# either side of a router, so this experiment must fail, at load or at run time.
ROCE_V1_ROUTED = textwrap.dedent("""\
    name: cli_v1_routed
    fabric: roce_v1
    seed: 1
    topology:
      hosts: [a, b]
      switches: [s1, s2]
      routers: [r1]
      links:
        - [a, s1]
        - [s1, r1]
        - [r1, s2]
        - [s2, b]
    workloads:
      - {kind: rdma_write, from: a, to: b, qp: rc, size: 4KiB, count: 1}
    """)


def tree(path):
    """Every file under path with its content, to see that nothing changed."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs:
            out[os.path.relpath(os.path.join(root, name), path) + "/"] = None
        for name in files:
            p = os.path.join(root, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, path)] = f.read()
    return out


def leftovers(parent, name):
    """DIR and DIR.tmp-* / DIR.old-* siblings of `name` in `parent`."""
    if not os.path.isdir(parent):
        return []
    return sorted(e for e in os.listdir(parent) if e == name or e.startswith(name + ".tmp-") or e.startswith(name + ".old-"))


def bad_input(result, what, pattern=None):
    check(result.returncode == 2, f"{what}: exit 2 expected", result)
    check(result.stderr.strip() != "", f"{what}: a message on stderr expected", result)
    if pattern:
        check(re.search(pattern, result.stderr, re.M) is not None, f"{what}: stderr should match {pattern!r}", result)


def main():
    tmp = tmpdir()
    good = os.path.join(tmp, "good.yaml")
    bad_value = os.path.join(tmp, "bad_value.yaml")
    bad_syntax = os.path.join(tmp, "bad_syntax.yaml")
    routed = os.path.join(tmp, "v1_routed.yaml")
    write_text(good, GOOD)
    write_text(bad_value, BAD_VALUE)
    write_text(bad_syntax, BAD_SYNTAX)
    write_text(routed, ROCE_V1_ROUTED)

    # --help and --version succeed.
    r = rdmasim("--help", cwd=tmp)
    check(r.returncode == 0 and "run" in r.stdout and "compare" in r.stdout and "validate" in r.stdout,
          "--help: exit 0 and name the commands", r)
    r = rdmasim("--version", cwd=tmp)
    check(r.returncode == 0 and r.stdout.startswith("rdmasim "), "--version: exit 0, 'rdmasim VERSION'", r)

    # The command itself.
    bad_input(rdmasim(cwd=tmp), "no command")
    bad_input(rdmasim("frobnicate", good, cwd=tmp), "unknown command", r"frobnicate")
    bad_input(rdmasim("--frobnicate", cwd=tmp), "unknown top-level flag", r"frobnicate")

    # Missing or unreadable experiment files.
    for cmd in ("run", "compare", "validate"):
        missing = os.path.join(tmp, "no_such.yaml")
        bad_input(rdmasim(cmd, missing, cwd=tmp), f"{cmd} on a missing file", re.escape(missing))
        bad_input(rdmasim(cmd, cwd=tmp), f"{cmd} without a file")
        bad_input(rdmasim(cmd, tmp, cwd=tmp), f"{cmd} on a directory", re.escape(tmp))

    # Bad flags and flag values.
    bad_input(rdmasim("run", good, "--bogus", cwd=tmp), "run --bogus", r"--bogus")
    bad_input(rdmasim("run", good, "--fabric", "token_ring", cwd=tmp), "run --fabric token_ring", r"token_ring")
    bad_input(rdmasim("run", good, "--fabric", cwd=tmp), "run --fabric without a value")
    bad_input(rdmasim("run", good, "--seed", "abc", cwd=tmp), "run --seed abc", r"abc")
    bad_input(rdmasim("run", good, "--seed", "-3", cwd=tmp), "run --seed -3")
    bad_input(rdmasim("run", good, "--set", "noequals", cwd=tmp), "run --set without =", r"noequals")
    bad_input(rdmasim("compare", good, "--fabrics", "ib,token_ring", cwd=tmp), "compare --fabrics with an unknown one",
              r"token_ring")
    # "roce" begins two fabrics' names: the default one is suggested, and all are listed.
    for cmd, flag in (("compare", "--fabrics"), ("run", "--fabric"), ("validate", "--fabric")):
        bad_input(rdmasim(cmd, good, flag, "roce", cwd=tmp), f"{cmd} {flag} roce",
                  r"unknown fabric 'roce' \(did you mean 'roce_v2'\?\); the fabrics are ib, roce_v1, roce_v2, iwarp")
    bad_input(rdmasim("validate", good, "--out", "x", cwd=tmp), "validate takes no --out")
    check(leftovers(tmp, "out") == [], "bad flags must not create out/")
    # An error quotes the option as the user gave it: --seed, not the
    # `--set seed=...` it was read as.
    r = rdmasim("validate", good, "--seed", "0x10", cwd=tmp)
    bad_input(r, "validate --seed 0x10", r"^<command line>:1:1: seed: expected a whole number from 0, got '0x10' "
              r"\(--seed 0x10\)$")
    check("--set" not in r.stderr, "--seed quoted as itself", r)
    # --partition without mpirun: a mode that is none is refused (it ran,
    # without a word); a valid one runs the one process, and says so.
    part = os.path.join(tmp, "part")
    bad_input(rdmasim("run", good, "--partition", "foo", "--out", part, cwd=tmp), "run --partition foo",
              r"partition 'foo' \(expected pods, spread or graph\)|no MPI")
    check(not os.path.exists(part), "--partition foo writes nothing")
    r = rdmasim("run", good, "--partition", "spread", "--out", part, cwd=tmp)
    if "no MPI" not in r.stderr:  # a build without MPI refuses any --partition (docs/parallel.md)
        check(r.returncode == 0 and "note: --partition spread splits a run over the ranks mpirun starts" in r.stderr,
              "run --partition spread without mpirun: runs, with a note", r)

    # Errors in the file: file:line:column: message.
    r = rdmasim("validate", bad_syntax, cwd=tmp)
    bad_input(r, "validate on broken YAML", r"^" + re.escape(bad_syntax) + r":\d+:\d+: \S")
    r = rdmasim("validate", bad_value, cwd=tmp)
    bad_input(r, "validate on a bad bandwidth", r"^" + re.escape(bad_value) + r":5:\d+: .*bandwidth")
    check("OK" not in r.stdout, "validate on a bad file must not say OK", r)
    r = rdmasim("run", bad_value, cwd=tmp)
    bad_input(r, "run on a bad bandwidth", r"^" + re.escape(bad_value) + r":5:\d+: .*bandwidth")
    r = rdmasim("compare", bad_syntax, cwd=tmp)
    bad_input(r, "compare on broken YAML", r"^" + re.escape(bad_syntax) + r":\d+:\d+: \S")
    check(leftovers(tmp, "out") == [], "a bad file must not create out/")
    # --set naming a key that does not exist is bad input too.
    bad_input(rdmasim("validate", good, "--set", "no_such_key.at_all=3", cwd=tmp), "--set on an unknown key",
              r"no_such_key")
    # --set reaches a list element by [index] or by name (w0: the name an
    # unnamed workload gets), and an error points at the part at fault.
    for path in ("workloads[0].count", "workloads.w0.count", "workloads[w0].count"):
        out = os.path.join(tmp, "set-" + path.replace("[", "_").replace("]", "_"))
        r = rdmasim("run", good, "--set", f"{path}=3", "--out", out, "--quiet", cwd=tmp)
        check(r.returncode == 0, f"--set {path}=3 runs", r)
        if r.returncode == 0:
            with open(os.path.join(out, "results.json")) as f:
                ops = json.load(f)["workloads"][0]["ops"]
            check(ops == 3, f"--set {path}=3 makes 3 operations, got {ops}", r)
    bad_input(rdmasim("validate", good, "--set", "workloads[0].cont=3", cwd=tmp), "--set on a misspelt key",
              r"^<command line>:1:14: workloads\[0\]\.cont: unknown key \(did you mean 'count'\?\)")
    bad_input(rdmasim("validate", good, "--set", "workloads.w9.count=3", cwd=tmp), "--set on an unknown name",
              r"^<command line>:1:11: workloads is a list of 1; expected an index from 0 to 0 or a name "
              r"\(w0\), got 'w9'")

    # A good file validates.
    r = rdmasim("validate", good, cwd=tmp)
    check(r.returncode == 0 and r.stdout.strip() == f"OK: {good}", "validate on a good file: 'OK: FILE'", r)
    check(leftovers(tmp, "out") == [], "validate must write nothing")

    # A failed run leaves no DIR and no DIR.tmp-*.
    outdir = os.path.join(tmp, "runs")
    r = rdmasim("run", bad_value, "--out", os.path.join(outdir, "x"), cwd=tmp)
    bad_input(r, "run on a bad file with --out")
    check(not os.path.exists(outdir), "a run rejected at load must not create --out or its parents", r)

    r = rdmasim("run", routed, "--out", os.path.join(outdir, "v1"), cwd=tmp)
    check(r.returncode in (1, 2) and r.stderr.strip() != "",
          "roce_v1 across a router must fail with a message", r)
    check(leftovers(outdir, "v1") == [], "a failed run must leave no DIR, DIR.tmp-* or DIR.old-*", r)
    r = rdmasim("run", routed, cwd=tmp)
    check(r.returncode in (1, 2), "roce_v1 across a router must fail (default --out)", r)
    check(leftovers(os.path.join(tmp, "out"), "cli_v1_routed") == [],
          "a failed run must leave no out/NAME or out/NAME.tmp-*", r)

    # ... and leaves a previous DIR exactly as it was.
    prev = os.path.join(tmp, "prev")
    os.makedirs(os.path.join(prev, "pcap"))
    write_text(os.path.join(prev, "results.json"), '{"experiment": "earlier"}\n')
    write_text(os.path.join(prev, "pcap", "a-0.pcap"), "not really a capture")
    before = tree(prev)
    r = rdmasim("run", routed, "--out", prev, cwd=tmp)
    check(r.returncode in (1, 2), "roce_v1 across a router must fail (existing --out)", r)
    check(tree(prev) == before, "a failed run must leave the previous DIR untouched", r)
    check(leftovers(tmp, "prev") == ["prev"], "a failed run must leave no prev.tmp-* or prev.old-*", r)

    # Output locations that are not ours: exit 2, nothing touched.
    precious = os.path.join(tmp, "precious")
    os.makedirs(precious)
    write_text(os.path.join(precious, "thesis.tex"), "years of work")
    before = tree(precious)
    r = rdmasim("run", good, "--out", precious, cwd=tmp)
    bad_input(r, "--out on a directory that is not rdmasim output", re.escape(precious))
    check(tree(precious) == before, "a directory that is not rdmasim output must not be touched", r)
    a_file = os.path.join(tmp, "a_file")
    write_text(a_file, "x")
    bad_input(rdmasim("run", good, "--out", a_file, cwd=tmp), "--out on a file", re.escape(a_file))
    bad_input(rdmasim("run", good, "--out", os.path.join(a_file, "sub"), cwd=tmp), "--out under a file")
    bad_input(rdmasim("run", good, "--out", ".", cwd=tmp), "--out .")
    check(open(a_file).read() == "x", "--out must not touch a file in the way")
    # An empty --out (`--out "$DIR"` with DIR unset) wrote to the default
    # out/<name> without a word.
    for cmd in (["run", good], ["compare", good], ["sweep", good, "--vary", "seed=1,2"], ["report", precious]):
        r = rdmasim(*cmd, "--out", "", cwd=tmp)
        bad_input(r, f"{cmd[0]} --out ''", r"--out: an empty path")
    check(not os.path.exists(os.path.join(tmp, "out")), "an empty --out writes nothing")


main()
finish()
