# rdmasim report: a self-contained HTML page with SVG figures (matplotlib)
# from output folders of `rdmasim run`, `compare` and `sweep`. rdmasim runs
# this script (compiled into the binary) as: python3 -c SCRIPT OUT SHOWN DIR...
# (SHOWN: the page's name to print, where OUT is staged).
# Exit 2: no results in the folders given, or files there that are not
# what rdmasim writes; 3: matplotlib is missing.
import csv
import html
import io
import json
import os
import sys

try:
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.stderr.write("rdmasim report: needs matplotlib for python3 (Debian: apt-get install python3-matplotlib)\n")
    sys.exit(3)

matplotlib.rcParams["svg.hashsalt"] = "rdmasim"  # the same input makes the same page
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["font.size"] = 9


def refuse(message):
    sys.stderr.write(f"rdmasim report: {message}\n")
    sys.exit(2)


def load(path):
    """A JSON object rdmasim wrote; anything else is the folder's fault (exit 2)."""
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        refuse(f"{path}: not a file rdmasim wrote ({e})")
    if not isinstance(d, dict):
        refuse(f"{path}: not a file rdmasim wrote (a JSON {type(d).__name__}, not an object)")
    return d


def runs_of(d):
    """(label, results, folder) of every run an output folder holds."""
    if os.path.exists(os.path.join(d, "compare.json")):
        out = []
        for e in load(os.path.join(d, "compare.json"))["fabrics"]:
            p = os.path.join(d, e["fabric"], "results.json")
            if e.get("status") == "ok" and os.path.exists(p):
                out.append((e["fabric"], load(p), os.path.dirname(p)))
        return out
    if os.path.exists(os.path.join(d, "sweep.json")):
        s = load(os.path.join(d, "sweep.json"))
        keys = [a["key"] for a in s.get("axes", [])]
        out = []
        for row in s.get("rows", []):
            p = os.path.join(d, "runs", row[0], "results.json")
            if os.path.exists(p):
                label = " ".join(f"{k}={v}" for k, v in zip(keys, row[2:2 + len(keys)]))
                out.append((label or row[0], load(p), os.path.dirname(p)))
        return out
    p = os.path.join(d, "results.json")
    if os.path.exists(p):
        r = load(p)
        return [(f"{r.get('fabric', '?')} ({os.path.basename(os.path.normpath(d))})", r, d)]
    return []


def svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def delivered(r):
    ws = r.get("workloads", [])
    if not ws:
        return 0.0, 0.0
    start = min(w.get("start_ps", 0) for w in ws)
    end = max(w.get("end_ps", 0) for w in ws)
    if end <= start:
        return 0.0, 0.0
    secs = (end - start) / 1e12
    return sum(w.get("bytes", 0) for w in ws) * 8 / secs / 1e9, sum(w.get("ops", 0) for w in ws) / secs / 1e6


def labelled(fig, xlabel, ylabel, title):
    ax = fig.axes[0]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    return fig


def bars(runs, value, ylabel, title):
    names = []
    for _, r, _ in runs:
        for w in r.get("workloads", []):
            if w["name"] not in names:
                names.append(w["name"])
    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.8 / max(1, len(runs))
    for i, (label, r, _) in enumerate(runs):
        ws = {w["name"]: w for w in r.get("workloads", [])}
        ys = [value(ws[n]) if n in ws else 0 for n in names]
        ax.bar([x + i * width for x in range(len(names))], ys, width, label=label)
    ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(names))], names)
    return labelled(fig, "workload", ylabel, title)


MEASURES = {"half_round_trip": "half RTT", "post_to_completion": "post to CQE",
            "send_to_receive": "send to receive", "flow_completion": "FCT"}


def latency(runs):
    fig = bars(runs, lambda w: w.get("latency_ns", {}).get("p50", 0) / 1e3, "us", "Latency p50 (bars) and p99 (marks)")
    ax = fig.axes[0]
    names = [t.get_text() for t in ax.get_xticklabels()]
    width = 0.8 / max(1, len(runs))
    for i, (_, r, _) in enumerate(runs):
        ws = {w["name"]: w for w in r.get("workloads", [])}
        xs = [x + i * width for x, n in enumerate(names) if n in ws]
        ys = [ws[n].get("latency_ns", {}).get("p99", 0) / 1e3 for n in names if n in ws]
        ax.plot(xs, ys, "k_", markersize=12)
    # Workloads time different things (results.json latency_measure): name
    # each one's under it, so half a round trip is not read as a whole one.
    measures = {}
    for _, r, _ in runs:
        for w in r.get("workloads", []):
            m = MEASURES.get(w.get("latency_measure"), w.get("latency_measure"))
            if m and m not in measures.setdefault(w["name"], []):
                measures[w["name"]].append(m)
    ax.set_xticklabels([n + ("\n" + " / ".join(measures[n]) if measures.get(n) else "") for n in names],
                       fontsize=8)
    return fig


def rows_of(path):
    """The rows of a CSV rdmasim wrote, or [] when there is none."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def latency_samples(d):
    """latency.csv (capture.latency_samples): workload -> samples in ns."""
    out = {}
    for row in rows_of(os.path.join(d, "latency.csv")):
        out.setdefault(row["workload"], []).append(float(row["latency_ns"]))
    return out


def has_latency_samples(runs):
    return any(latency_samples(d) for _, _, d in runs)


def latency_cdf(runs):
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for label, _, d in runs:
        for name, xs in sorted(latency_samples(d).items()):
            xs.sort()
            ax.plot([x / 1e3 for x in xs], [(i + 1) / len(xs) for i in range(len(xs))], label=f"{label} {name}")
    return labelled(fig, "latency us", "fraction of operations", "Latency CDF")


def size_label(b):
    """A bucket of results.json fct.buckets by its upper bound."""
    top = b.get("max_size_bytes")
    if top is None:
        return "larger"
    for unit, div in (("MB", 10**6), ("KB", 10**3)):
        if top >= div:
            return f"<= {top / div:g} {unit}"
    return f"<= {top} B"


def fct(runs):
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for label, r, _ in runs:
        for w in r.get("workloads", []):
            # Buckets no flow fell into have no percentiles: left out.
            buckets = [b for b in (w.get("fct") or {}).get("buckets") or [] if b.get("count")]
            if buckets:
                ax.plot([size_label(b) for b in buckets], [b["slowdown"]["p99"] for b in buckets], "o-",
                        label=f"{label} {w['name']}")
    return labelled(fig, "flow size", "FCT slowdown p99", "Flow completion time slowdown per size bucket")


def has_fct(runs):
    return any(b.get("count") for _, r, _ in runs for w in r.get("workloads", [])
               for b in (w.get("fct") or {}).get("buckets") or [])


def queues(runs, most=6):
    """timeseries/queues.csv: the `most` ports whose queues grew longest, over time."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    series = []
    for label, _, d in runs:
        by_port = {}
        for row in rows_of(os.path.join(d, "timeseries", "queues.csv")):
            t, q = by_port.setdefault(f"{row['node']}:{row['port']}", ([], []))
            t.append(float(row["time_ps"]) / 1e6)
            q.append(float(row["queue_bytes"]))
        series += [(max(q), f"{label} {port}", t, q) for port, (t, q) in by_port.items()]
    series.sort(key=lambda s: (-s[0], s[1]))
    for _, name, t, q in series[:most]:
        ax.plot(t, q, label=name)
    return labelled(fig, "time us", "queue bytes", "Queue length over time (the longest queues)")


def has_timeseries(runs):
    return any(rows_of(os.path.join(d, "timeseries", "queues.csv")) for _, _, d in runs)


def cpu_per_gb(runs):
    fig, ax = plt.subplots(figsize=(7, 3.2))
    labels, ys = [], []
    for label, r, _ in runs:
        busy = sum(h.get("cpu_busy_ps", 0) for h in r.get("hosts", []))
        gb = sum(w.get("bytes", 0) for w in r.get("workloads", [])) / 1e9
        labels.append(label)
        ys.append(busy / 1e6 / gb if gb > 0 else 0)
    ax.bar(labels, ys)
    ax.set_ylabel("CPU us per GB delivered")
    ax.set_title("CPU time per GB (all hosts)")
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def cost_scatter(runs):
    pts = []
    for label, r, _ in runs:
        c = r.get("cost") or {}
        if "total" in c:
            pts.append((c["total"], delivered(r)[0], label, c.get("currency", "")))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for x, y, label, _ in pts:
        ax.scatter([x], [y])
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    # Pareto front: no other point is at most as expensive and at least as fast.
    front = sorted((p for p in pts if not any(q[0] <= p[0] and q[1] >= p[1] and q[:2] != p[:2] for q in pts)))
    if len(front) > 1:
        ax.plot([p[0] for p in front], [p[1] for p in front], "k--", linewidth=1, label="Pareto front")
        # Beside the axes: inside, wherever it went it could cover a point or its label.
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    # Room inside the frame for the labels of the outermost points (up and to the right of each).
    ax.margins(x=0.15, y=0.14)
    ax.set_xlabel(f"total cost {pts[0][3] if pts else ''}")
    ax.set_ylabel("delivered Gb/s")
    ax.set_title("Cost against performance")
    return fig


def table(runs):
    head = ["run", "fabric", "Gb/s delivered", "Mop/s", "capex", "total cost", "cost per Gb/s", "drops", "data verified"]
    rows = []
    for label, r, _ in runs:
        g, m = delivered(r)
        c = r.get("cost") or {}
        per = c.get("total", 0) / g if g > 0 and "total" in c else None
        ok = all(w.get("data_verified") for w in r.get("workloads", []))
        drops = sum(p.get("drops", 0) for p in r.get("ports", []))
        rows.append([label, r.get("fabric", ""), f"{g:.2f}", f"{m:.3f}", f"{c.get('capex', 0):.0f}",
                     f"{c.get('total', 0):.0f}", "-" if per is None else f"{per:.2f}", str(drops), "yes" if ok else "NO"])
    out = "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>\n"
    for row in rows:
        out += "<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in row) + "</tr>\n"
    return out + "</table>\n"


def main():
    out, shown, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    runs = []
    for d in dirs:
        try:
            found = runs_of(d)
        except (TypeError, KeyError, AttributeError, IndexError) as e:
            refuse(f"{d}: its compare.json or sweep.json is not what rdmasim writes ({type(e).__name__}: {e})")
        if not found:
            sys.stderr.write(f"{d}: no results.json, compare.json or sweep.json here\n")
            sys.exit(2)
        runs += found
    try:
        page = make_page(runs)
    except (TypeError, KeyError, AttributeError, IndexError, ValueError) as e:
        refuse(f"{', '.join(dirs)}: a results.json there is not what rdmasim writes ({type(e).__name__}: {e})")
    tmp = out + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(page)
        os.replace(tmp, out)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        sys.stderr.write(f"error: {shown}: cannot write the page: {e.strerror}\n")
        sys.exit(4)
    print(f"wrote {shown} ({page.count('<figure')} figures, {len(runs)} runs)")


def make_page(runs):
    figures = [("throughput", "Throughput per workload",
                bars(runs, lambda w: w.get("throughput_gbps", 0), "Gb/s", "Throughput per workload")),
               ("latency", "Latency per workload", latency(runs))]
    if has_latency_samples(runs):
        figures.append(("latency-cdf", "Latency CDF", latency_cdf(runs)))
    if has_fct(runs):
        figures.append(("fct", "FCT slowdown per size bucket", fct(runs)))
    if has_timeseries(runs):
        figures.append(("queues", "Queue length over time", queues(runs)))
    figures.append(("cpu", "CPU time per GB", cpu_per_gb(runs)))
    if any("cost" in r for _, r, _ in runs):
        figures.append(("cost", "Cost against performance", cost_scatter(runs)))
    title = ", ".join(sorted({r.get("experiment", "?") for _, r, _ in runs}))
    page = ["<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            f"<title>rdmasim report: {html.escape(title)}</title>",
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}"
            "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}"
            "figure{margin:1.5em 0}</style></head><body>",
            f"<h1>rdmasim report: {html.escape(title)}</h1>", table(runs)]
    for fid, caption, fig in figures:
        page.append(f"<figure id=\"{fid}\">{svg(fig)}<figcaption>{html.escape(caption)}</figcaption></figure>")
    page.append("</body></html>\n")
    return "\n".join(page)


main()
