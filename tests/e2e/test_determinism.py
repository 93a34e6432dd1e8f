"""The same experiment and seed give byte-identical output (results.json, the
CSVs, every pcap) whatever the output directory is called: its path's length
changes the heap's layout, and nothing the simulation does may depend on
where things lie in memory. Lossy iWARP (TCP retransmissions, SACK, Sends
into posted receives) and lossy RoCE v2 (go-back-N), each also checked for
every operation completing with the receiver holding the bytes sent: an
iWARP receive once got its id from subtracting deque element addresses, and
with seed 3 and some output paths the Send workload's last message was
never delivered."""

import filecmp
import os

import e2e
from e2e import check

# Output directory names of different lengths (and one nested deeper).
NAMES = ["d", "d" * 7, "d" * 30, os.path.join("n" * 13, "d" * 61)]


def files_under(d):
    out = []
    for root, _dirs, files in os.walk(d):
        out += [os.path.relpath(os.path.join(root, f), d) for f in files]
    return sorted(out)


def same_everywhere(experiment, label, *args):
    """Runs `experiment` into each of NAMES; checks every run's files are
    byte-identical to the first's. Returns (first output dir, every run's results)."""
    base = os.path.join(e2e.tmpdir(), label)
    outs, results = [], []
    for n in NAMES:
        out = os.path.join(base, n)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        _rc, _o, _e, res = e2e.run(experiment, out, *args)
        if not check(res is not None, f"{label} into {n}: ran"):
            return None, None
        outs.append(out)
        results.append(res)
    files = files_under(outs[0])
    check({"results.json", "hosts.csv", "ports.csv", "workloads.csv"} <= set(files)
          and any(f.endswith(".pcap") for f in files), f"{label}: results, CSVs and pcaps written ({files})")
    for out in outs[1:]:
        check(files_under(out) == files, f"{label}: {out} has the same files")
        differ = [f for f in files if not filecmp.cmp(os.path.join(outs[0], f), os.path.join(out, f), shallow=False)]
        check(not differ, f"{label}: output into {os.path.relpath(out, base)} differs from {NAMES[0]}'s in {differ}")
    return outs[0], results


def check_delivered(results, label):
    for w in (w for res in results for w in res["workloads"]):
        check(w["completions"] == {"IBV_WC_SUCCESS": w["ops"]} and w["ops"] == w["planned_ops"],
              f"{label} {w['name']}: every operation completed ({w['completions']})")
        check(w["data_verified"] is True and w["finished"] is True,
              f"{label} {w['name']}: the receiver holds every message sent")


def main():
    lossy = os.path.join(e2e.SOURCE, "examples", "iwarp_lossy.yaml")
    for seed in (3, 11):
        label = f"iwarp_lossy_seed{seed}"
        out, res = same_everywhere(lossy, label, "--seed", str(seed))
        if res is not None:
            check_delivered(res, label)
            check(sum(p["drops"] for p in res[0]["ports"]) > 0, f"{label}: frames were lost")
            for p in ("a-0.pcap", "b-0.pcap"):
                e2e.check_no_malformed(os.path.join(out, "pcap", p))
                e2e.check_all_match(os.path.join(out, "pcap", p), "tcp", "TCP")

    out, res = same_everywhere(os.path.join(e2e.SOURCE, "examples", "iwarp_leaf_spine.yaml"), "iwarp_leaf_spine")
    if res is not None:
        check_delivered(res, "iwarp_leaf_spine")
        e2e.check_no_malformed(os.path.join(out, "pcap", "h0-0.pcap"))

    roce = e2e.write_text(os.path.join(e2e.tmpdir(), "roce_v2_lossy.yaml"), e2e.LOSSY_RC)
    out, res = same_everywhere(roce, "roce_v2_lossy")
    if res is not None:
        check_delivered(res, "roce_v2_lossy")
        check(sum(p["drops"] for p in res[0]["ports"]) > 0, "roce_v2_lossy: frames were lost")
        for p in ("a-0.pcap", "b-0.pcap"):
            e2e.check_roce_v2_capture(os.path.join(out, "pcap", p))
    e2e.finish()


main()
