"""Every bad experiment file: exit 2, `file:line:column: message` naming the
key, nothing written; `validate` says the same without running."""
import os
import re
import subprocess

from e2e import BINARY, SOURCE, check, finish, tmpdir

BAD = os.path.join(SOURCE, "tests/e2e/bad")
# file -> (line, a word the message must contain)
EXPECT = {
    "unknown_key.yaml": (8, "sise"),
    "bad_unit.yaml": (4, "bandwidth"),
    "unknown_node.yaml": (6, "s2"),
    "self_link.yaml": (6, "itself"),
    "disconnected_host.yaml": (4, "c"),
    "ud_too_big.yaml": (9, "size"),
    "ud_flows_too_big.yaml": (7, "4096 bytes), but the cdf hadoop draws flows of up to 10000000 bytes"),
    "syntax.yaml": (None, ""),
    "wrong_type.yaml": (3, "seed"),
    "unknown_fabric.yaml": (2, "fabric"),
    "fabric_prefix.yaml": (2, "unknown fabric 'roce' (did you mean 'roce_v2'?)"),
    "iwarp_atomic.yaml": (9, "atomic"),
    "ib_mtu.yaml": (3, "mtu"),
    "bad_fault.yaml": (8, "link"),
    "old_dcqcn_section.yaml": (3, "congestion_control"),
    "cc_wrong_fabric.yaml": (3, "roce_v2"),
    "cc_hpcc_ipv6.yaml": (4, "ipv4"),
    "cc_unknown_algorithm.yaml": (3, "algorithm"),
    "cc_bad_param.yaml": (3, "eta"),
    "irn_wrong_fabric.yaml": (3, "roce_v2"),
    "irn_ipv6.yaml": (4, "ipv4"),
    "irn_bad_rto.yaml": (4, "rto_high"),
    # Checks a run once made only after it had started: validate makes them too.
    "ib_buffer.yaml": (4, "too small for ib"),
    "host_two_links.yaml": (6, "more than one link"),
    "flows_payload.yaml": (8, "pattern"),
    "payload_pattern_send.yaml": (8, "rdma_write"),
    "timeseries_unknown_port.yaml": (9, "no port 7"),
    "timeseries_unknown_workload.yaml": (10, "unknown workload 'blk'"),
}
# Files whose one error is the cause, reported first and alone: a link to an
# unknown node used to be preceded by "host 'b' has no link" (line 4) and
# followed by "a cannot reach b", both its consequences.
ONLY_ERROR = ("unknown_node.yaml",)

for name, (line, word) in sorted(EXPECT.items()):
    path = os.path.join(BAD, name)
    for cmd in (["validate", path], ["run", path, "--out", os.path.join(tmpdir(), "o")]):
        p = subprocess.run([BINARY, *cmd], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2, f"{cmd[0]} {name}: exit {p.returncode}, expected 2 ({p.stderr.strip()[:200]})")
        found = re.findall(re.escape(path) + r":(\d+):(\d+): (.*)", p.stderr)
        check(found, f"{cmd[0]} {name}: 'file:line:column: message' on stderr, got: {p.stderr.strip()[:300]}")
        if found and line is not None:
            check(any(int(ln) == line and word in msg for ln, _, msg in found),
                  f"{name}: an error on line {line} naming '{word}', got: {p.stderr.strip()[:300]}")
        if found and name in ONLY_ERROR:
            check(len(found) == 1 and int(found[0][0]) == line,
                  f"{name}: one error, at line {line}, got: {p.stderr.strip()[:300]}")
        if cmd[0] == "run":
            check(not os.path.exists(cmd[-1]), f"{name}: a failed run writes no output")
finish()
