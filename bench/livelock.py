#!/usr/bin/python3
"""The receive-livelock figure of docs/host.md ("Receive livelock"):
sweeps examples/udp_livelock_app.yaml over the offered load with an
interrupt per frame and with NAPI (`rdmasim sweep`, through `nice`), reads
sweep.csv and draws docs/host_livelock.svg with matplotlib (Debian's
python3-matplotlib, hence /usr/bin/python3). About a minute of one core.

    bench/livelock.py [--binary build/rdmasim] [--work out/livelock_app]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "validation"))
from validate import ROOT, plt, rows, save  # noqa: E402  (the figures' common settings)

RATES = ["0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.4", "0.5", "0.75", "1", "2", "3", "9"]  # Gb/s
MODES = {"interrupt": "an interrupt per frame", "napi": "NAPI"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "rdmasim"))
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "livelock_app"))
    args = ap.parse_args()
    example = os.path.join(ROOT, "examples", "udp_livelock_app.yaml")
    sweep = os.path.join(args.work, "sweep")  # rdmasim's own; the PNG goes beside it
    p = subprocess.run(["nice", args.binary, "sweep", example, "--vary",
                        "workloads.flood.rate=" + ",".join(r + "Gbps" for r in RATES), "--vary",
                        "host.completion=" + ",".join(MODES), "-j", "1", "--out", sweep],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"rdmasim sweep exited {p.returncode}\n{p.stderr}")
    fig, ax = plt.subplots(figsize=(6.4, 4))
    points = rows(os.path.join(sweep, "sweep.csv"))
    top = max(float(r["flood.offered_pps"]) for r in points) / 1e3
    ax.plot([0, top], [0, top], color="0.8", linestyle=":", label="every datagram delivered")
    for mode, label in MODES.items():
        curve = sorted((float(r["flood.offered_pps"]) / 1e3, float(r["flood.delivered_pps"]) / 1e3)
                       for r in points if r["host.completion"] == mode)
        ax.plot([x for x, _ in curve], [y for _, y in curve], marker="o", label=label)
        print(mode, " ".join(f"{x:.0f}:{y:.1f}" for x, y in curve))
    ax.set_xscale("log")
    ax.set_ylim(0, 350)
    ax.set_xlabel("offered, k datagrams/s (64 B; log scale)")
    ax.set_ylabel("delivered to the program while offered, k/s")
    ax.set_title("One core, 1 us of program work per datagram")
    ax.legend(loc="upper left")
    save(fig, "host_livelock.svg", args.work)


if __name__ == "__main__":
    main()
