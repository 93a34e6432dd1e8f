#!/usr/bin/env python3
"""Fuzzing (docs/reliability.md): seeded mutations of the example experiments
go through `validate` and, when they validate, `run` with a short `stop`.
The only acceptable exit codes are 0, 2 and, for a run, 4 (operations failed
that the mutant did not ask for): never 1 (an internal error), 3 (this
test's output folder is writable), a signal or a hang. Bounded in time:
it tries at least MINIMUM mutants, stops after BUDGET seconds and says
how many it tried.

usage: test_fuzz.py PATH/TO/rdmasim SOURCE_DIR [SEED [COUNT]]"""
import copy
import glob
import os
import random
import subprocess
import sys
import time

import yaml

import e2e

SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
COUNT = int(sys.argv[4]) if len(sys.argv) > 4 else 300
BUDGET = 60.0      # seconds of mutating, once MINIMUM mutants are done
MINIMUM = 50
RUN_TIMEOUT = 30   # a run of 50 us of simulated time that takes longer is a hang

# Values that have broken simulators: limits of every integer type, units at
# their edges, wrong types, empty and long things.
HOSTILE = [
    0, 1, -1, 7, 8, 255, 256, 4095, 4096, 65535, 65536, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
    10**30, 0.5, -0.0, 1e308, float("inf"), float("nan"), True, False, None, "", " ", "x" * 300,
    "0x10", "010", "1e3", "-5us", "0s", "1ps", "1500000s", "9223372s", "1ms", "0bps", "1bps",
    "18446744073709551615bps", "1e20bps", "100Gbps", "400Gbps", "0B", "1B", "2GiB", "16EiB", "64KiB",
    "1MiB", "ib", "roce_v2", "iwarp", "h0", "a", "s1", "rc", "uc", "ud", "none", "all", "hosts", "pfc",
    [], {}, [[]], [1, 2], {"a": 1}, "\u00e9\u00e9", "a: b", "*", "&x",
]


def scalars(node, path=()):
    """Every (path, value) of the YAML tree, maps and lists included."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from scalars(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from scalars(v, path + (i,))


def set_at(tree, path, value):
    if not path:
        return value
    node = tree
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return tree


def delete_at(tree, path):
    node = tree
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]


def mutate(rng, tree, text):
    """One to three mutations of the tree, or of the text itself."""
    if rng.random() < 0.15:  # text-level: cut, drop a line, or insert a byte
        lines = text.splitlines(keepends=True)
        kind = rng.randrange(3)
        if kind == 0:
            return text[:rng.randrange(len(text) + 1)]
        i = rng.randrange(len(lines))
        if kind == 1:
            del lines[i]
        else:
            lines.insert(i, rng.choice(["{", "[", ":", "- ", "\t", "---\n", "...\n", "? x\n", "key: [1,\n"]))
        return "".join(lines)
    tree = copy.deepcopy(tree)
    for _ in range(rng.randint(1, 3)):
        nodes = list(scalars(tree))
        path, value = rng.choice(nodes)
        r = rng.random()
        if r < 0.6 or not path:
            tree = set_at(tree, path, copy.deepcopy(rng.choice(HOSTILE)))
        elif r < 0.8:
            delete_at(tree, path)
        elif r < 0.9:  # a value from elsewhere in the file
            tree = set_at(tree, path, copy.deepcopy(rng.choice(nodes)[1]))
        else:  # nesting
            tree = set_at(tree, path, [[[{"k": value}]]])
    return yaml.safe_dump(tree, default_flow_style=True, allow_unicode=True) if isinstance(tree, (dict, list)) \
        else str(tree)


def rdmasim(args, timeout):
    try:
        p = subprocess.run([e2e.BINARY, *args], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def main():
    examples = sorted(glob.glob(os.path.join(e2e.SOURCE, "examples", "*.yaml")))
    bases = []
    for path in examples:
        with open(path) as f:
            text = f.read()
        bases.append((os.path.basename(path), yaml.safe_load(text), text))
    rng = random.Random(SEED)
    tmp = e2e.tmpdir()
    seen = {0: 0, 2: 0}
    runs = 0
    began = time.monotonic()
    tried = 0
    for i in range(COUNT):
        # At least MINIMUM mutants however slow the machine (a sanitized
        # build on a loaded one takes seconds a mutant); then until BUDGET.
        if tried >= MINIMUM and time.monotonic() - began > BUDGET:
            break
        name, tree, text = rng.choice(bases)
        mutant = mutate(rng, tree, text)
        exp = os.path.join(tmp, f"m{i}.yaml")
        with open(exp, "w") as f:
            f.write(mutant)
        tried += 1
        code, err = rdmasim(["validate", exp], 20)
        ok = e2e.check(code in (0, 2), f"mutant {i} of {name}: validate exit {code}: {err[-500:]}\n{mutant[:3000]}")
        if not ok:
            continue
        seen[code] += 1
        if code != 0:
            e2e.check(err.strip() != "", f"mutant {i} of {name}: exit 2 says nothing")
            continue
        # It validates: run it briefly, with bounded captures.
        out = os.path.join(tmp, f"out{i}")
        code, err = rdmasim(["run", exp, "--out", out, "--set", "stop=50us", "--set", "capture.max_bytes=1MiB"],
                            RUN_TIMEOUT)
        runs += 1
        # 4: it ran, and operations failed that it did not ask for (a mutated loss or timeout).
        e2e.check(code in (0, 2, 4), f"mutant {i} of {name}: run exit {code}: {err[-500:]}\n{mutant[:3000]}")
        subprocess.run(["rm", "-rf", out])
        os.remove(exp)
    print(f"{tried} mutants (seed {SEED}): {seen[0]} valid, {seen[2]} refused with exit 2; {runs} run, "
          f"{time.monotonic() - began:.0f} s")
    e2e.finish()


main()
