#!/usr/bin/python3
"""The runs and figures of docs/validation.md: each experiment runs the
rdmasim binary on YAML it writes, reads results.json, flows.csv and the
time series, and draws an SVG into docs/ with matplotlib (Debian's
python3-matplotlib, hence /usr/bin/python3). Not part of ctest: the HPCC
experiment at full size takes many minutes.

    bench/validation/validate.py [--binary build/rdmasim] [--work out/validation]
                                 [EXPERIMENT ...]

EXPERIMENT is one or more of hpcc, figure11, fairness, incast, irn, ib_cca
(default: all). `hpcc` is HPCC's evaluation setting: its simulator's 320-host fat tree
(5 pods of 4 ToRs with 16 hosts each), each algorithm with
`congestion_control.profile: hpcc_ns3` (--profile paper for the papers'
defaults), one run per algorithm and --workloads entry (CDF:LOAD, default
websearch:0.3 websearch:0.5 hadoop:0.3; CDF:LOAD+incast adds figure 11a's
60-to-1 incasts); --pods, --hosts-per-tor and
--duration make it smaller. It writes WORK/hpcc/tables.md (p50 / p95 / p99
slowdown per flow-size bucket, and each run's time, events, PFC frames and
ECN marks) and the figure. A run already in WORK with the same YAML is read
back, not run again. `figure11` runs figure 11's two workloads (FB_Hadoop
30 % with incasts, 50 %) in the same setting and draws them over the values
read from the paper's figure (hpcc_figure11.csv). Every run goes through `nice`. Each experiment also
writes WORK/EXPERIMENT/summary.json with the numbers the page quotes.
"""
import argparse
import csv
import json
import os
import random
import resource
import subprocess
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIGURES = os.path.join(ROOT, "docs")  # --figures
plt.rcParams["svg.hashsalt"] = "rdmasim"  # the same SVG for the same data
plt.rcParams["svg.fonttype"] = "none"  # text as text: smaller files


def run(binary, work, name, text, *sets, reuse=False):
    """Runs one experiment; returns (results, seconds of wall time). With
    `reuse`, a run already in `work` with the same YAML and settings is read
    back instead of run again (the HPCC runs take long)."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, name + ".yaml")
    out = os.path.join(work, name)
    stamp = out + ".run.json"  # beside the output: rdmasim keeps its directory to itself
    if reuse and os.path.exists(stamp):
        with open(path) as f, open(stamp) as g:
            old = json.load(g)
            if f.read() == text and old["sets"] == list(sets):
                with open(os.path.join(out, "results.json")) as h:
                    return json.load(h), old["wall_s"]
    with open(path, "w") as f:
        f.write(text)
    t0 = time.monotonic()
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["nice", binary, "run", path, "--out", out, *sets], capture_output=True, text=True)
    secs = time.monotonic() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)  # the machine is shared: wall time says little
    if p.returncode not in (0, 4):
        sys.exit(f"{name}: rdmasim exited {p.returncode}\n{p.stderr}")
    with open(stamp, "w") as f:
        json.dump({"sets": list(sets), "wall_s": secs, "cpu_s": cpu, "max_rss_kib": c1.ru_maxrss,
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "load_average": round(os.getloadavg()[1], 1)}, f)  # the machine's, over 5 minutes
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f), secs


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def save(fig, name, work, rect=(0, 0, 1, 1)):
    fig.tight_layout(rect=rect)
    fig.savefig(os.path.join(FIGURES, name), format="svg", metadata={"Date": None})
    fig.savefig(os.path.join(work, name[:-4] + ".png"), dpi=60)  # a quick look
    plt.close(fig)
    print("wrote " + os.path.join(FIGURES, name))


def log_axis(ax):
    """A log y axis labelled 1, 2, 5, 10, ... in plain numbers."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def dump(work, summary):
    with open(os.path.join(work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))


# ---------------------------------------------------------------- HPCC's trend

def hpcc_topology(pods, tors_per_pod, hosts_per_tor):
    """HPCC's evaluation fat tree (Li et al. 2019, section 5.1): pods of ToRs
    and as many aggregation switches, every ToR to every aggregation switch of
    its pod, aggregation switch j of each pod to core switches j*k..j*k+k-1;
    hosts at 100 Gb/s, switch links at 400 Gb/s (no oversubscription)."""
    k = tors_per_pod
    hosts, tors, aggs, cores, links = [], [], [], [f"c{i}" for i in range(k * k)], []
    fast = "{bandwidth: 400Gbps}"
    for p in range(pods):
        pod_aggs = [f"a{p * k + j}" for j in range(k)]
        aggs += pod_aggs
        for t in range(k):
            tor = f"t{p * k + t}"
            tors.append(tor)
            for h in range(hosts_per_tor):
                name = f"h{len(hosts)}"
                hosts.append(name)
                links.append(f"[{name}, {tor}]")
            links += [f"[{tor}, {a}, {fast}]" for a in pod_aggs]
        for j, a in enumerate(pod_aggs):
            links += [f"[{a}, c{j * k + c}, {fast}]" for c in range(k)]
    return (f"  hosts: [{', '.join(hosts)}]\n  switches: [{', '.join(tors + aggs + cores)}]\n"
            f"  links:\n" + "".join(f"    - {l}\n" for l in links)), len(hosts)


def hpcc_runs(workloads):
    """(cdf, load, incast) triples from CDF:LOAD[+incast] (websearch:0.3, hadoop:0.3+incast)."""
    out = []
    for w in workloads:
        spec, plus, extra = w.partition("+")
        if plus and extra != "incast":
            sys.exit(f"--workloads {w}: only +incast may follow CDF:LOAD")
        cdf, _, load = spec.partition(":")
        out.append((cdf, float(load), bool(plus)))
    return out


def incast_workloads(hosts, duration_us, seed):
    """Figure 11a's background incasts (HPCC paper, section 5.3): 60 random
    senders to one random receiver, 500 KB each, as often as makes 2 % of the
    network's capacity (every 60 x 500 KB x 8 / (2 % x hosts x 100 Gb/s))."""
    rng = random.Random(seed)
    senders = min(60, hosts - 1)  # a smaller tree (--pods, --hosts-per-tor): every other host
    gap_us = senders * 500_000 * 8 / (0.02 * hosts * 100e9) * 1e6
    out, t = [], 0.0
    while t < duration_us:
        picked = rng.sample(range(hosts), senders + 1)
        names = ", ".join(f"h{h}" for h in picked[1:])
        out.append(f"  - {{name: incast{len(out)}, kind: incast, from: [{names}], to: h{picked[0]}, "
                   f"size: 500000, start: {t:.3f}us}}\n")
        t += gap_us
    return "".join(out)


def micros(text):
    """A duration as the YAML writes it (3ms, 30us) in microseconds."""
    for unit, scale in (("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * scale
    sys.exit(f"--duration {text}: a number and ns, us, ms or s")


def run_name(algo, cdf, load, incast=False):
    return f"{algo}_{cdf}_{int(round(load * 100))}" + ("_incast" if incast else "")


def workload_title(cdf, load, incast=False):
    return f"{cdf} {int(round(load * 100))} %" + (" + incast" if incast else "")


BUCKETS = ["≤ 10 KB", "10 – 100 KB", "100 KB – 1 MB", "1 – 10 MB", "> 10 MB"]
HPCC_ALGOS = ("dcqcn", "timely", "dctcp", "hpcc")


def hpcc_tables(summary, runs):
    """Markdown: per workload, p50 / p95 / p99 slowdown per bucket and algorithm."""
    out = []
    for cdf, load, incast in runs:
        names = {a: run_name(a, cdf, load, incast) for a in HPCC_ALGOS}
        algos = [a for a in HPCC_ALGOS if names[a] in summary["runs"]]
        if not algos:
            continue
        out.append(f"{workload_title(cdf, load, incast)}, p50 / p95 / p99 slowdown:\n")
        out.append("| flow size | flows | " + " | ".join(algos) + " |")
        out.append("|---|---|" + "---|" * len(algos))
        first = summary["runs"][names[algos[0]]]
        for i, label in enumerate(BUCKETS):
            if i >= len(first["buckets"]):
                break
            cells = []
            for a in algos:
                b = summary["runs"][names[a]]["buckets"][i]
                s = b["slowdown"]
                cells.append(f"{s['p50']:.2f} / {s['p95']:.2f} / {s['p99']:.2f}" if b["count"] else "–")
            out.append(f"| {label} | {first['buckets'][i]['count']} | " + " | ".join(cells) + " |")
        cells = []
        for a in algos:
            s = summary["runs"][names[a]]["slowdown"]
            cells.append(f"{s['p50']:.2f} / {s['p95']:.2f} / {s['p99']:.2f}")
        out.append(f"| all | {first['started']} | " + " | ".join(cells) + " |")
        out.append("")
        out.append("| run | simulated ms | events | PFC frames | ECN marks | peak switch queue, KB | CPU s | wall s |"
                   " load average |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for a in algos:
            r = summary["runs"][names[a]]
            out.append(f"| {a} | {r['end_time_ps'] / 1e9:.1f} | {r['events']:,} | {r['pauses']:,} | "
                       f"{r['ecn_marks']:,} | {r['peak_queue'] / 1000:,.0f} | {r['cpu_s']:.0f} | {r['wall_s']:.0f} | {r.get('load_average') or '–'} |")
        out.append("")
    return "\n".join(out)


def percentile_buckets(flows_csv, step=5):
    """The reference's analysis (analysis/fct_analysis.py): the `flows`
    workload's completed flows sorted by size, cut into 100/step buckets of
    equal count; each bucket's largest size and 95th-percentile slowdown
    (sorted[int(n * 0.95)], slowdowns below 1 as 1)."""
    done = sorted((int(f["size_bytes"]), max(1.0, float(f["slowdown"])))
                  for f in rows(flows_csv) if f["workload"] == "flows" and f["slowdown"])
    n, out = len(done), []
    for i in range(0, 100, step):
        part = done[i * n // 100:(i + step) * n // 100]
        slow = sorted(x for _, x in part)
        out.append({"max_size": part[-1][0], "p95": slow[int(len(slow) * 0.95)]} if part else  # fewer than 20 flows
                   {"max_size": None, "p95": None})
    return out


def hpcc_run(args, work, algo, cdf, load, incast):
    """One run of the HPCC evaluation's setting; its summary entry."""
    topo, nhosts = hpcc_topology(args.pods, 4, args.hosts_per_tor)
    # HPCC's T (and DCTCP's window) the longest path's base RTT: 6 hops of
    # 1 us each way, as the simulator's GLOBAL_T 1 takes it. With the profile
    # the switch's ECN and buffer are its; without it, the paper-default
    # model with ECN 100-400 KB as before.
    switch = ("link: {bandwidth: 100Gbps, delay: 1us, mtu: 1024}\n" if args.profile == "hpcc_ns3" else
              "link: {bandwidth: 100Gbps, delay: 1us, mtu: 1024, buffer: 4MiB}\n"
              "ecn: {kmin: 100KB, kmax: 400KB, pmax: 0.2}\n")
    name = run_name(algo, cdf, load, incast)
    duration_us = micros(args.duration)
    text = f"""name: hpcc_{name}
fabric: roce_v2
seed: 1
{switch}flow_control: pfc
congestion_control:
  algorithm: {algo}
  profile: {args.profile}
  hpcc: {{base_rtt: 13us}}
  dctcp: {{base_rtt: 13us}}
capture: {{pcap: none}}
topology:
{topo}workloads:
  - {{name: flows, kind: flows, cdf: {cdf}, load: {load}, duration: {args.duration}}}
""" + (incast_workloads(nhosts, duration_us, 1) if incast else "")
    r, secs = run(args.binary, work, name, text, reuse=True)
    with open(os.path.join(work, name + ".run.json")) as f:
        stamp = json.load(f)
    fct = r["workloads"][0]["fct"]
    pauses = sum(p.get("pause_frames", 0) for p in r.get("ports", [])) // 2  # counted at both ends
    marks = sum(p.get("ecn_marks", 0) for p in r.get("ports", []))
    peak = max(p["max_queue_bytes"] for p in r["ports"] if not p["node"].startswith("h"))  # switches'
    print(f"{name}: {secs:.0f} s, {fct['completed']}/{fct['started']} flows, slowdown {fct['slowdown']}", flush=True)
    return name, {"wall_s": round(secs, 1), "cpu_s": round(stamp["cpu_s"], 1),
                  "date": stamp.get("date"), "load_average": stamp.get("load_average"),
                  "end_time_ps": r["end_time_ps"], "events": r.get("events"),
                  "started": fct["started"], "completed": fct["completed"],
                  "slowdown": fct["slowdown"], "buckets": fct["buckets"],
                  "percentile_p95": percentile_buckets(os.path.join(work, name, "flows.csv")),
                  "pauses": pauses, "ecn_marks": marks, "peak_queue": peak}


def hpcc_summary(args, work):
    """summary.json's runs of this size and profile, kept across invocations."""
    nhosts = args.pods * 4 * args.hosts_per_tor
    summary = {"hosts": nhosts, "duration": args.duration, "profile": args.profile, "runs": {}}
    if os.path.exists(os.path.join(work, "summary.json")):
        with open(os.path.join(work, "summary.json")) as f:
            old = json.load(f)
        if (old["hosts"], old["duration"], old.get("profile")) == (nhosts, args.duration, args.profile):
            summary["runs"] = old["runs"]
    return summary


def hpcc_experiment(args, work):
    """HPCC's evaluation setting: its simulator's fat tree (mix/fat.txt: 320
    hosts, 20 ToR, 20 aggregation, 16 core switches, 100/400 Gb/s, 1 us
    links), each algorithm with `congestion_control.profile` (hpcc_ns3: the
    simulator's parameters, switch buffer, ECN and ACK priority)."""
    runs = hpcc_runs(args.workloads)
    summary = hpcc_summary(args, work)
    for cdf, load, incast in runs:
        for algo in args.algos:
            name, entry = hpcc_run(args, work, algo, cdf, load, incast)
            summary["runs"][name] = entry
            dump(work, summary)
    tables = hpcc_tables(summary, runs)
    with open(os.path.join(work, "tables.md"), "w") as f:
        f.write(tables)
    print(tables)
    fig, axes = plt.subplots(3, len(runs), figsize=(5 * len(runs), 9.5), squeeze=False)
    labels = ["≤10K", "≤100K", "≤1M", "≤10M", ">10M"]
    for c, (cdf, load, incast) in enumerate(runs):
        for r_, pct in enumerate(("p50", "p95", "p99")):
            ax = axes[r_][c]
            for algo in HPCC_ALGOS:
                if run_name(algo, cdf, load, incast) not in summary["runs"]:
                    continue
                b = summary["runs"][run_name(algo, cdf, load, incast)]["buckets"]
                ys = [x["slowdown"][pct] if x["count"] else None for x in b]
                ax.plot(labels[:len(ys)], ys, marker="o", label=algo)
            log_axis(ax)
            ax.set_title(f"{workload_title(cdf, load, incast)}: {pct} FCT slowdown", fontsize=10)
            ax.set_xlabel("flow size (bytes)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    save(fig, args.figure, work)


# Figure 11's panels: (a) FB_Hadoop 30 % with 60-to-1 incasts, (c) FB_Hadoop 50 %.
FIGURE11 = {"a": ("hadoop", 0.3, True), "c": ("hadoop", 0.5, False)}
FIGURE11_CSV = os.path.join(ROOT, "bench", "validation", "hpcc_figure11.csv")
COLOURS = {"dcqcn": "#9400d3", "timely": "#009e73", "dctcp": "#c8b400", "hpcc": "#0072b2"}


def size_label(size):
    return f"{size}" if size < 1000 else f"{size / 1000:.0f}K" if size < 10**6 else f"{size / 1e6:.0f}M"


def figure11_table(summary, paper, panel):
    cdf, load, incast = FIGURE11[panel]
    names = {a: run_name(a, cdf, load, incast) for a in HPCC_ALGOS}
    algos = [a for a in HPCC_ALGOS if names[a] in summary["runs"]]
    out = [f"Figure 11{panel}, {workload_title(cdf, load, incast)}: p95 slowdown, rdmasim / paper:\n",
           "| flows (percentile of size) | up to | " + " | ".join(algos) + " |",
           "|---|---|" + "---|" * len(algos)]
    for i in range(20):
        ours = {a: summary["runs"][names[a]]["percentile_p95"][i] for a in algos}
        size = ours[algos[0]]["max_size"] if algos else 0
        cells = [("–" if ours[a]["p95"] is None else f"{ours[a]['p95']:.2f}") + f" / {paper[(panel, a)][i]:.2f}"
                 for a in algos]
        out.append(f"| {5 * i}–{5 * i + 5} | " + ("–" if size is None else f"{size:,} B") + " | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def figure11_experiment(args, work):
    """HPCC's figure 11 side by side: the same two workloads run here (FB_Hadoop
    30 % with incasts, 50 %), plotted as the paper plots them (p95 slowdown of
    each 5 % of flows by size) over the values read from the paper's figure
    (hpcc_figure11.csv, read_hpcc_figure11.py)."""
    work = os.path.join(args.work, "hpcc")  # the same runs as the hpcc experiment's
    summary = hpcc_summary(args, work)
    for panel, (cdf, load, incast) in FIGURE11.items():
        for algo in args.algos:
            name, entry = hpcc_run(args, work, algo, cdf, load, incast)
            summary["runs"][name] = entry
            dump(work, summary)
    paper = {}
    for r in rows(FIGURE11_CSV):
        paper.setdefault((r["panel"], r["algorithm"]), [0.0] * 20)[int(r["bucket"])] = float(r["p95_slowdown"])
    tables = "\n".join(figure11_table(summary, paper, p) for p in FIGURE11)
    with open(os.path.join(work, "figure11.md"), "w") as f:
        f.write(tables)
    print(tables)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, (panel, (cdf, load, incast)) in zip(axes, FIGURE11.items()):
        for algo in HPCC_ALGOS:
            name = run_name(algo, cdf, load, incast)
            if name not in summary["runs"]:
                continue
            ax.plot(range(20), [b["p95"] or float("nan") for b in summary["runs"][name]["percentile_p95"]], marker="o",
                    markersize=3, color=COLOURS[algo], label=f"{algo}, rdmasim")
            ax.plot(range(20), paper[(panel, algo)], linestyle="--", color=COLOURS[algo], label=f"{algo}, paper")
        sizes = [b["max_size"] for b in summary["runs"][run_name("hpcc", cdf, load, incast)]["percentile_p95"]]
        ax.set_xticks(range(1, 20, 2), [size_label(s) if s else "" for s in sizes[1::2]], fontsize=8)
        log_axis(ax)
        ax.set_title(f"figure 11{panel}: {workload_title(cdf, load, incast)}, p95 FCT slowdown", fontsize=10)
        ax.set_xlabel("flow size: each point 5 % of the flows, labelled with its largest")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    save(fig, "validation_hpcc_figure11.svg", work, rect=(0, 0.12, 1, 1))


# ---------------------------------------------------------------- DCQCN fairness

def fairness_experiment(args, work):
    n, gap_us = 4, 10000
    counts = [4200, 2300, 1300, 700]  # 64 KiB writes: about until the fourth phase ends
    flows = "".join(
        f"  - {{name: f{i}, kind: rdma_write, from: h{i}, to: h{n}, size: 64KiB, count: {counts[i]}, "
        f"outstanding: 8, start: {i * gap_us}us}}\n" for i in range(n))
    text = f"""name: dcqcn_fairness
fabric: roce_v2
seed: 1
link: {{bandwidth: 100Gbps, delay: 1us, buffer: 4MiB}}
congestion_control: {{algorithm: dcqcn}}
capture: {{pcap: none, timeseries: {{interval: 20us}}}}
topology:
  generate: {{kind: star, hosts: {n + 1}}}
workloads:
{flows}"""
    r, _ = run(args.binary, work, "fairness", text)
    qp = rows(os.path.join(work, "fairness", "timeseries", "qps.csv"))
    ends = {w["name"]: w["end_ps"] / 1e6 for w in r["workloads"]}  # us
    series = {}
    for row in qp:
        t = int(row["time_ps"]) / 1e6
        if row["qp"].split(":")[0] != f"h{n}" and t <= ends[row["workload"]]:
            series.setdefault(row["workload"], []).append((t, int(row["rate_bps"]) / 1e9))
    # Each phase (i flows running): the mean rate of each flow over the
    # phase's second half, and Jain's fairness index of those means.
    phases = []
    for i in range(1, n + 1):
        lo = (i - 1) * gap_us + gap_us / 2
        hi = i * gap_us if i < n else min(ends.values())
        means = []
        for w in [f"f{j}" for j in range(i)]:
            xs = [v for t, v in series[w] if lo <= t <= hi]
            means.append(sum(xs) / len(xs) if xs else 0)
        jain = sum(means) ** 2 / (len(means) * sum(m * m for m in means)) if any(means) else 0
        phases.append({"flows": i, "from_us": lo, "to_us": round(hi, 1), "mean_gbps": [round(m, 1) for m in means],
                       "jain": round(jain, 3)})
    dump(work, {"phases": phases, "end_us": {w: round(e, 1) for w, e in ends.items()}})
    fig, ax = plt.subplots(figsize=(8, 4))
    for w, pts in sorted(series.items()):
        ax.plot([t / 1000 for t, _ in pts], [v for _, v in pts], label=w, linewidth=1)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("DCQCN rate (Gb/s)")
    ax.set_title(f"DCQCN: {n} flows join a 100 Gb/s bottleneck {gap_us // 1000} ms apart")
    ax.grid(True, alpha=0.3)
    ax.legend()
    save(fig, "validation_dcqcn_fairness.svg", work)


# ---------------------------------------------------------------- incast queues

def incast_experiment(args, work):
    example = os.path.join(ROOT, "examples", "roce_v2_cc_incast.yaml")
    with open(example) as f:
        text = f.read()
    algos = ["none", "dcqcn", "dctcp", "timely", "hpcc", "swift"]
    summary = {}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for c, fc in enumerate(("none", "pfc")):
        ax = axes[c]
        for algo in algos:
            name = f"{algo}_{fc}"
            r, _ = run(args.binary, work, name, text, "--set", f"congestion_control.algorithm={algo}", "--set",
                       f"flow_control={fc}", "--set", "capture.pcap=none")
            q = [(int(x["time_ps"]) / 1e6, int(x["queue_bytes"]) / 1e3)
                 for x in rows(os.path.join(work, name, "timeseries", "queues.csv")) if x["node"] == "s0" and x["port"] == "4"]
            port = next(p for p in r["ports"] if p["node"] == "s0" and p["port"] == 4)
            w = r["workloads"][0]
            summary[name] = {"max_queue_bytes": port["max_queue_bytes"], "gbps": round(w["throughput_gbps"], 1),
                             "end_us": round(r["end_time_ps"] / 1e6, 1),
                             "pause_frames": sum(p["pause_frames"] for p in r["ports"])}
            style = {"color": "black", "linestyle": "--"} if algo == "none" else {}  # timely runs on top of it
            ax.plot([t for t, _ in q], [v for _, v in q], label=algo, linewidth=1, **style)
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=10)
        ax.set_xlabel("time (us)")
        ax.set_title(f"4-to-1 incast, 100 Gb/s, flow_control: {fc}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("queue towards the receiver (KB)")
    dump(work, summary)
    save(fig, "validation_incast_queues.svg", work)


# ---------------------------------------------------------------- IRN

IRN_READS = """name: irn_read
fabric: roce_v2
seed: 5
link: {bandwidth: 25Gbps, delay: 1us, mtu: 1024}
irn: {rto_low: 40us, rto_high: 131us}
capture: {pcap: none}
topology:
  hosts: [a, b]
  switches: [s1]
  links: [[a, s1], [b, s1]]
workloads:
  - {name: read, kind: rdma_read, from: a, to: b, size: 64KiB, count: 200, outstanding: 2, timeout: 5}
"""


def irn_experiment(args, work):
    example = os.path.join(ROOT, "examples", "roce_v2_irn_loss.yaml")
    with open(example) as f:
        text = f.read()
    losses = [0.001, 0.002, 0.005, 0.01]
    summary = {}
    for mode in ("go_back_n", "irn"):
        for loss in losses:
            for what, yaml, wname in (("write", text, "write"), ("read", IRN_READS, "read")):
                name = f"{what}_{mode}_{loss}"
                r, _ = run(args.binary, work, name, yaml, "--set", f"loss_recovery={mode}", "--set", f"link.loss={loss}")
                w = next(x for x in r["workloads"] if x["name"] == wname)
                summary[name] = {"gbps": round(w["throughput_gbps"], 2),
                                 "p50_us": round(w["latency_ns"]["p50"] / 1e3, 1),
                                 "p99_us": round(w["latency_ns"]["p99"] / 1e3, 1),
                                 "retransmitted": w["retransmitted_packets"], "ok": w["data_verified"]}
    dump(work, summary)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    xs = [x * 100 for x in losses]
    for mode, color in (("go_back_n", "tab:blue"), ("irn", "tab:orange")):
        for ax, what in ((axes[0], "write"), (axes[2], "read")):
            ax.plot(xs, [summary[f"{what}_{mode}_{x}"]["gbps"] for x in losses], marker="o", color=color, label=mode)
        axes[1].plot(xs, [summary[f"write_{mode}_{x}"]["p99_us"] for x in losses], marker="o", color=color,
                     label=f"{mode} p99")
        axes[1].plot(xs, [summary[f"write_{mode}_{x}"]["p50_us"] for x in losses], marker="x", color=color,
                     linestyle="--", label=f"{mode} p50")
    axes[0].set_ylabel("WRITE goodput (Gb/s)")
    axes[0].set_title("64 KiB WRITEs (beside SENDs), no PFC, 25 Gb/s", fontsize=10)
    axes[1].set_ylabel("64 KiB WRITE completion time (us)")
    axes[1].set_yscale("log")
    axes[1].set_title("WRITE completion time", fontsize=10)
    axes[2].set_ylabel("READ goodput (Gb/s)")
    axes[2].set_title("64 KiB READs, 2 outstanding, no PFC, 25 Gb/s", fontsize=10)
    for ax in axes:
        ax.set_xlabel("loss per link (%)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    save(fig, "validation_irn.svg", work)


# ---------------------------------------------------------------- IB CCA hot spot

IB_HOTSPOT = """name: ib_hotspot
fabric: ib
seed: 1
link: {bandwidth: 100Gbps, delay: 500ns, mtu: 4096, buffer: 64KiB}
switch: {latency: 300ns, mode: cut_through}
ib: {routing: updown, vls: 1}
topology:
  hosts: [h0, v0, hot, w0, h3, h4, h5]
  switches: [s0, s1]
  links: [[h0, s0], [v0, s0], [hot, s1], [w0, s1], [h3, s1], [h4, s1], [h5, s1], [s0, s1]]
workloads:
  - {name: hotspot, kind: incast, op: rdma_write, to: hot, from: [h0, h3, h4, h5], qp: rc, size: 64KiB,
     count: 200, outstanding: 8}
  - {name: victim, kind: rdma_write, from: v0, to: w0, qp: rc, size: 64KiB, count: 400, outstanding: 8}
capture: {pcap: none, timeseries: {interval: 10us}}
"""


def ib_cca_experiment(args, work):
    summary = {}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    runs = {"none": ("none",), "ib_cca": ("ib_cca",),
            "ib_cca, 50 ns steps": ("ib_cca", "--set", "congestion_control.ib_cca.delay_step=50ns")}
    for label, (algo, *more) in runs.items():
        name = label.replace(", ", "_").replace(" ", "_")
        r, _ = run(args.binary, work, name, IB_HOTSPOT, "--set", f"congestion_control.algorithm={algo}", *more)
        ws = {w["name"]: w for w in r["workloads"]}
        summary[label] = {w: {"gbps": round(ws[w]["throughput_gbps"], 1),
                              "p50_us": round(ws[w]["latency_ns"]["p50"] / 1e3, 1),
                              "end_us": round(ws[w]["end_ps"] / 1e6, 1)} for w in ws}
        q = rows(os.path.join(work, name, "timeseries", "queues.csv"))
        for ax, (node, port, what) in zip(axes, (("s0", "2", "s0's output towards s1 (h0's hot flow, the victim)"),
                                                 ("s1", "0", "s1's output towards the hot spot"))):
            pts = [(int(x["time_ps"]) / 1e6, int(x["queue_bytes"]) / 1e3) for x in q
                   if x["node"] == node and x["port"] == port]
            ax.plot([t for t, _ in pts], [v for _, v in pts], label=label, linewidth=0.8)
            ax.set_title(what, fontsize=10)
    for ax in axes[:2]:
        ax.set_xlabel("time (us)")
        ax.set_ylabel("output queue (KB)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    labels = list(runs)
    xs = range(len(labels))
    axes[2].bar([x - 0.2 for x in xs], [summary[l]["victim"]["gbps"] for l in labels], width=0.4, label="victim v0 -> w0")
    axes[2].bar([x + 0.2 for x in xs], [summary[l]["hotspot"]["gbps"] for l in labels], width=0.4,
                label="hot spot (4 senders)")
    axes[2].set_xticks(list(xs), labels)
    axes[2].set_ylabel("throughput (Gb/s)")
    axes[2].set_title("throughput", fontsize=10)
    axes[2].legend()
    dump(work, summary)
    save(fig, "validation_ib_cca.svg", work)


EXPERIMENTS = {"hpcc": hpcc_experiment, "figure11": figure11_experiment, "fairness": fairness_experiment, "incast": incast_experiment,
               "irn": irn_experiment, "ib_cca": ib_cca_experiment}


def main():
    global FIGURES
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiments", nargs="*", help=", ".join(EXPERIMENTS))
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "rdmasim"))
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "validation"))
    ap.add_argument("--pods", type=int, default=5, help="hpcc: pods of 4 ToRs and 4 aggregation switches")
    ap.add_argument("--hosts-per-tor", type=int, default=16)
    ap.add_argument("--duration", default="3ms", help="hpcc: flows arrive for this long")
    ap.add_argument("--workloads", nargs="+", default=["websearch:0.3", "websearch:0.5", "hadoop:0.3"],
                    help="hpcc: CDF:LOAD runs (figure 11: WebSearch 30 %% and 50 %%, FB_Hadoop 30 %%)")
    ap.add_argument("--profile", default="hpcc_ns3", help="hpcc: congestion_control.profile (hpcc_ns3 or paper)")
    ap.add_argument("--figure", default="validation_hpcc_fct.svg", help="hpcc: the SVG's name in docs/")
    ap.add_argument("--algos", nargs="+", default=["dcqcn", "timely", "dctcp", "hpcc"], help="hpcc: which")
    ap.add_argument("--figures", default=FIGURES, help="where the SVGs go (docs/)")
    args = ap.parse_args()
    FIGURES = args.figures
    for name in args.experiments:
        if name not in EXPERIMENTS:
            ap.error(f"unknown experiment {name}; one of {', '.join(EXPERIMENTS)}")
    for name in args.experiments or list(EXPERIMENTS):
        EXPERIMENTS[name](args, os.path.join(args.work, name))


if __name__ == "__main__":
    main()
