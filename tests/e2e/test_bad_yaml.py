"""A bad experiment file through the binary: exit 2, `file:line:column:
message` on stderr naming the key, nothing written; `validate` says the
same without running. One file for each stage that refuses: the YAML
parser, a section's reader, the validate pass. Every bad file's located
message is checked in-process (tests/experiment/bad_yaml_test.cpp)."""
import os
import re

from e2e import SOURCE, check, finish, rdmasim, tmpdir

BAD = os.path.join(SOURCE, "tests/experiment/bad")
# file -> (line, a word the message must contain)
EXPECT = {
    "syntax.yaml": (4, "YAML syntax"),
    "unknown_key.yaml": (8, "sise"),
    "ib_buffer.yaml": (4, "too small for ib"),
    "unknown_node.yaml": (6, "s2"),
    # A second document was dropped without a word.
    "two_documents.yaml": (6, "second document"),
}

for name, (line, word) in sorted(EXPECT.items()):
    path = os.path.join(BAD, name)
    for cmd in (["validate", path], ["run", path, "--out", os.path.join(tmpdir(), "o")]):
        p = rdmasim(*cmd, timeout=60)
        check(p.returncode == 2, f"{cmd[0]} {name}: exit {p.returncode}, expected 2 ({p.stderr.strip()[:200]})")
        found = re.findall(re.escape(path) + r":(\d+):(\d+): (.*)", p.stderr)
        check(any(int(ln) == line and word in msg for ln, _, msg in found),
              f"{cmd[0]} {name}: 'file:{line}:column: message' naming '{word}' on stderr, got: {p.stderr.strip()[:300]}")
        check(p.stdout == "", f"{cmd[0]} {name}: nothing on stdout, got: {p.stdout[:200]}")
        if cmd[0] == "run":
            check(not os.path.exists(cmd[-1]), f"{name}: a failed run writes no output")
finish()
