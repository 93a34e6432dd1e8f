"""Sizes: KB, kB, MB and GB are powers of 10, KiB, MiB and GiB powers of 2
(docs/yaml.md, "Units"). A message size written with a power-of-10 unit,
which fio and iperf users may mean as 16384, is taken as written and warned
about once, at its line, with both values; a power-of-2 one is not."""
import json
import os

from e2e import SOURCE, check, finish, rdmasim, tmpdir, write_text

d = tmpdir()
src = open(os.path.join(SOURCE, "examples", "quickstart.yaml")).read()
assert "size: 16KiB" in src and "size: 2KiB" in src
for unit, size, warned in (("16KB", 16000, True), ("16kB", 16000, True), ("16KiB", 16384, False)):
    exp = write_text(os.path.join(d, f"q_{unit}.yaml"),
                     src.replace("size: 16KiB", f"size: {unit}").replace("size: 2KiB", "size: 2KB"))
    p = rdmasim("validate", exp, timeout=60)
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("warning: ")]
    check(p.returncode == 0, f"{unit}: validate exit {p.returncode}: {p.stderr}")
    # One warning for the file: the first such size (the SEND's 2KB, line before).
    check(len(warnings) == 1, f"{unit}: one warning, got {warnings}")
    check(all("2KB is 2000 bytes" in w and "for 2048 bytes write 2KiB" in w for w in warnings),
          f"{unit}: the warning names the first decimal size with both values: {warnings}")
    out = os.path.join(d, f"out_{unit}")
    p = rdmasim("run", exp, "--out", out, "--quiet", timeout=120)
    check(p.returncode == 0 and sum(ln.startswith("warning: ") for ln in p.stderr.splitlines()) == 1,
          f"{unit}: run warns once: {p.stderr}")
    r = json.load(open(os.path.join(out, "results.json")))
    read = next(w for w in r["workloads"] if w["name"] == "read")
    check(read["size"] == size, f"{unit}: read size {read['size']}, expected {size}")
# No decimal unit: no warning.
p = rdmasim("validate", os.path.join(SOURCE, "examples", "quickstart.yaml"), timeout=60)
check("warning" not in p.stderr, f"quickstart: no warning: {p.stderr}")
finish()
