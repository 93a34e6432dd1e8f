"""The C++ benchmarks that read a run's results (bench/fat_tree.cpp,
bench/roce_v2_stream.cpp) run on small inputs and print their figures:
no test ran them, and when a run's own port table stopped being part of
what Run::execute returns, both stopped with a JSON type error. The
engine's comparison with ns-3 (bench/ns3_engine.py) runs too."""
import os
import re
import subprocess
import sys

from e2e import BINARY, SANITIZED, SOURCE, check, finish

build = os.path.dirname(BINARY)
fat_tree, stream = os.path.join(build, "bench_fat_tree"), os.path.join(build, "bench_roce_v2_stream")
if SANITIZED or not (os.path.exists(fat_tree) and os.path.exists(stream)):
    print("skipped: the benchmarks are not built here (the sanitizer build leaves them out)")
    finish()

p = subprocess.run([fat_tree, "--k", "4", "--time", "200us"], capture_output=True, text=True, timeout=300)
check(p.returncode == 0, f"bench_fat_tree runs: {p.stderr[-500:]}")
m = re.search(r"frames_delivered=(\d+)", p.stdout)
check(m is not None and int(m.group(1)) > 0, f"bench_fat_tree counts frames delivered to hosts: {p.stdout}")

p = subprocess.run([stream, "--messages", "200", "--capture", "off", "--repeat", "1"], capture_output=True,
                   text=True, timeout=300)
check(p.returncode == 0, f"bench_roce_v2_stream runs: {p.stderr[-500:]}")
m = re.search(r"frames_delivered=(\d+) hop_deliveries=(\d+)", p.stdout)
# 200 messages of 64 KiB at MTU 4096: 16 data frames each, and their ACKs.
check(m is not None and int(m.group(1)) >= 200 * 16 and int(m.group(2)) == 2 * int(m.group(1)),
      f"bench_roce_v2_stream counts frames at the hosts and at the switch: {p.stdout}")

# The engine against ns-3's schedulers: builds bench/ns3/engine.cc against
# libns3-dev beside bench_engine and prints a ratio per pending count.
p = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "ns3_engine.py"), os.path.join(build, "bench_engine"),
                    "--pending", "100", "--rounds", "1", "--events", "30000"], capture_output=True, text=True,
                   timeout=300)
check(p.returncode == 0, f"ns3_engine.py runs: {p.stderr[-800:]}")
m = re.search(r"pending=100 ratio: ([\d.]+)x ns-3's best \((\w+)Scheduler\)", p.stdout)
check(m is not None and float(m.group(1)) > 0, f"ns3_engine.py compares with every scheduler: {p.stdout}")
for s in ("Map", "Heap", "Calendar", "PriorityQueue"):
    check(f"pending=100 {s}: " in p.stdout, f"ns3_engine.py runs ns-3's {s}Scheduler: {p.stdout}")
finish()
