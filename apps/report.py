# rdmasim report: a self-contained HTML page with SVG figures (matplotlib)
# from output folders of `rdmasim run`, `compare` and `sweep`. rdmasim runs
# this script (compiled into the binary) as: python3 -c SCRIPT PID OUT SHOWN NOTE DIR...
# (PID: rdmasim's, which renames the page into place: once it is gone
# (kill -9) nothing says the page was written; OUT: the file to write,
# which rdmasim staged and renames, or a stream; SHOWN: the page's name to
# print; NOTE: stdout or stderr, where to say so, stderr when the page
# itself goes to stdout).
# Exit 2: no results in the folders given, or files there that are not
# what rdmasim writes; 3: matplotlib is missing; 4: OUT cannot be written.
#
# What it draws (docs/report.md): a sweep over an ordered key (a size, a
# rate, a load, any number) plots each metric as a line against that key,
# one line per value of the other varied keys, the mean over seeds with a
# 95% confidence interval as error bars; unordered configurations (fabrics
# of a comparison, single runs, a sweep over names only) get horizontal
# bars, one per configuration, named on the axis. Figures carry ids for
# the tests: a line is <g id="series-N">, a bar <g id="bar-N">.
import csv
import html
import io
import json
import math
import os
import re
import sys

try:
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator
except ImportError:
    sys.stderr.write("rdmasim report: needs matplotlib for python3 (Debian: apt-get install python3-matplotlib)\n")
    sys.exit(3)

matplotlib.rcParams["svg.hashsalt"] = "rdmasim"  # the same input makes the same page
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["font.size"] = 9
matplotlib.rcParams["font.family"] = "DejaVu Sans"  # the page names it too, so the browser measures alike

# In every page's head: rdmasim writes over an existing file only when it
# has it (apps/output_dir.hpp, kReportMark).
REPORT_MARK = '<meta name="generator" content="rdmasim report">'
DETAIL_LIMIT = 8  # per-run figures (CDFs, FCT buckets, queues, cost points) up to this many runs
MARKERS = "osD^vPX*"


def refuse(message):
    sys.stderr.write(f"rdmasim report: {message}\n")
    sys.exit(2)


def load(path):
    """A JSON object rdmasim wrote; anything else is the folder's fault (exit 2), named at its line and column where the JSON itself is broken."""
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except json.JSONDecodeError as e:
        refuse(f"{path}:{e.lineno}:{e.colno}: not a file rdmasim wrote ({e.msg}: cut short or edited?)")
    except (OSError, ValueError, RecursionError) as e:  # RecursionError: nested deeper than Python parses
        refuse(f"{path}: not a file rdmasim wrote ({type(e).__name__}: {e})")
    if not isinstance(d, dict):
        refuse(f"{path}: not a file rdmasim wrote (a JSON {type(d).__name__}, not an object)")
    return d


TOP_FILES = ("results.json", "compare.json", "sweep.json")
# The key at the top of each file rdmasim writes, to tell one put in another's place.
TOP_KEYS = [("workloads", "a run's results.json"), ("fabrics", "a comparison's compare.json"),
            ("rows", "a sweep's sweep.json")]


def load_as(path, key, shape, d=None):
    """`path` loaded (or `d`, loaded from it), whose `key` holds a `shape` (list) as TOP_KEYS says; else
    refused, saying what it holds."""
    d = load(path) if d is None else d
    if isinstance(d.get(key), shape):
        return d
    other = next((what for k, what in TOP_KEYS if k != key and k in d), None)
    want = dict(TOP_KEYS)[key]
    refuse(f"{path}: " + (f"holds what {other} holds, not {want}" if other else f"not {want} (no {key} list)"))


class Run:
    """One run: its label, results.json, folder, and the varied keys' values (sweeps)."""

    def __init__(self, label, results, folder, coords=None):
        self.label, self.r, self.dir, self.coords = label, results, folder, coords or {}
        self.own = label  # within its folder; `label` names the folder too where the page needs it (name_folders)


class Folder:
    """An output folder given to the report: a run, a comparison or a sweep."""

    def __init__(self, path, kind, runs, axes=None, note=None):
        self.path, self.kind, self.runs, self.axes = path, kind, runs, axes or []
        self.name = os.path.basename(os.path.normpath(path))
        self.note = note  # a sweep's over seeds (sweep.json's summary.note): the seed changed nothing


def name_folders(folders):
    """Names each folder on the page by the last part of its path, or by the path as given where two
    share that part (a/out, b/out), and labels its runs with it where the page has several folders, so
    that every row, bar and legend says whose it is. A run folder's run always names its folder."""
    base = [os.path.basename(os.path.normpath(f.path)) for f in folders]
    for f, b in zip(folders, base):
        f.name = b if base.count(b) == 1 else os.path.normpath(f.path)
        for run in f.runs:
            if f.kind == "run":
                run.label = f"{run.own} ({f.name})"
            elif len(folders) > 1:
                run.label = f"{f.name}: {run.own}"


def fabric_label(r):
    """The fabric, and the host stack where the fabric has one (tcp: kernel or DPDK)."""
    stacks = sorted({h["stack"] for h in r.get("hosts", []) if h.get("stack")})
    f = r.get("fabric", "?")
    return f"{f} ({'/'.join('DPDK' if s == 'dpdk' else s for s in stacks)} stack)" if stacks else f


def bad_entry(path, what, entry):
    refuse(f"{path}: not what rdmasim writes ({what}: {json.dumps(entry)[:80]})")


def compare_folder(d):
    path = os.path.join(d, "compare.json")
    runs = []
    for e in load_as(path, "fabrics", list)["fabrics"]:
        if not isinstance(e, dict) or not isinstance(e.get("fabric"), str):
            bad_entry(path, "a fabric's entry without its name", e)
        p = os.path.join(d, e["fabric"], "results.json")
        if e.get("status") == "ok" and os.path.exists(p):
            r = load_as(p, "workloads", list)
            runs.append(Run(fabric_label(r), r, os.path.dirname(p), {"fabric": e["fabric"]}))
    return Folder(d, "compare", runs)


def sweep_folder(d):
    path = os.path.join(d, "sweep.json")
    s = load(path)
    if "rows" not in s and any(k in s for k, _ in TOP_KEYS):  # no rows yet (--emit slurm), or another's file
        load_as(path, "rows", list, s)
    axes = s.get("axes", [])
    if not isinstance(axes, list) or not all(isinstance(a, dict) and isinstance(a.get("key"), str)
                                             and isinstance(a.get("values"), list) for a in axes):
        bad_entry(path, "axes not a list of {key, values}", axes)
    axes = [(a["key"], [str(v) for v in a["values"]]) for a in axes]
    if not isinstance(s.get("rows", []), list):
        bad_entry(path, "rows not a list", s["rows"])
    runs = []
    for row in s.get("rows", []):
        if not isinstance(row, list) or len(row) < 2 + len(axes) or not isinstance(row[0], str):
            bad_entry(path, f"a row not [run, exit code, a value per axis ({len(axes)})]", row)
        if any(str(v) not in values for (_, values), v in zip(axes, row[2:])):
            bad_entry(path, "a row's value not one of its axis's values", row)
        p = os.path.join(d, "runs", row[0], "results.json")
        if row[1] == 0 and os.path.exists(p):
            coords = {k: str(v) for (k, _), v in zip(axes, row[2:2 + len(axes)])}
            label = " ".join(f"{k}={v}" for k, v in coords.items())
            runs.append(Run(label or row[0], load_as(p, "workloads", list), os.path.dirname(p), coords))
    summary = s.get("summary") if isinstance(s.get("summary"), dict) else {}
    return Folder(d, "sweep", runs, axes, summary.get("note"))


def folder_of(d):
    """The folder `d`: a comparison, a sweep or a run, by the file at its top."""
    if os.path.exists(os.path.join(d, "compare.json")):
        return compare_folder(d)
    if os.path.exists(os.path.join(d, "sweep.json")):
        return sweep_folder(d)
    p = os.path.join(d, "results.json")
    if os.path.exists(p):
        r = load_as(p, "workloads", list)
        return Folder(d, "run", [Run(fabric_label(r), r, d)])
    return Folder(d, "none", [])


# ---- numbers of a run ------------------------------------------------------

UNIT_SCALE = [("size", {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}),
              ("rate", {"bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12}),
              ("time", {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1})]


def ordered_value(text):
    """(number, kind) of a value with an optional unit (4KiB, 0.5Gbps, 2us, 0.3), or None."""
    m = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m:
        return None
    x, unit = float(m.group(1)), m.group(2)
    if not unit:
        return x, "number"
    for kind, units in UNIT_SCALE:
        if unit in units:
            return x * units[unit], kind
    return None


def work(r):
    """(bytes, ops, seconds) of all workloads, from the first start to the last end."""
    ws = [w for w in r.get("workloads", []) if "start_ps" in w and "end_ps" in w]
    if not ws:
        return 0, 0, 0
    secs = (max(w["end_ps"] for w in ws) - min(w["start_ps"] for w in ws)) / 1e12
    return sum(w.get("bytes", 0) for w in ws), sum(w.get("ops", 0) for w in ws), max(secs, 0)


def delivered(r):
    b, ops, secs = work(r)
    return (b * 8 / secs / 1e9, ops / secs / 1e6) if secs > 0 else (0.0, 0.0)


DROP_PLACES = [("link", "links"), ("switch_queue", "switch queues"), ("no_route", "no route"),
               ("ttl_expired", "TTL expired"), ("nic_queue", "host NIC queues"),
               ("nic_ring", "NIC ring"), ("backlog", "backlog"), ("socket", "socket buffers"),
               ("no_socket", "no socket")]


def drops(r):
    """(total, {place: n}): results.json's drops (every place); older files: the ports' only."""
    d = r.get("drops")
    if isinstance(d, dict):
        return d.get("total", 0), {k: v for k, v in d.get("at", {}).items() if v}
    n = sum(p.get("drops", 0) for p in r.get("ports", []))
    return n, ({"ports": n} if n else {})


def per_unit(r, unit):
    for u in (r.get("cost") or {}).get("per_unit", []):
        if u.get("unit") == unit:
            return u
    return None


def cpu_ms_per_gb(r):
    gb = work(r)[0] / 1e9
    return sum(h.get("cpu_busy_ps", 0) for h in r.get("hosts", [])) / 1e9 / gb if gb > 0 else None


def verified(r):
    """("yes" | "NO" | "n/a", why n/a): only workloads whose data is checked count."""
    checked = [w for w in r.get("workloads", []) if isinstance(w.get("data_verified"), bool)]
    if not checked:
        kinds = sorted({w.get("kind", "?") for w in r.get("workloads", [])})
        return "n/a", f"no workload here carries data to check ({', '.join(kinds)}: " \
                      "compute moves none, UDP datagrams are counted, not compared)"
    return ("yes" if all(w["data_verified"] for w in checked) else "NO"), ""


MEASURES = {"half_round_trip": "half RTT", "post_to_completion": "post to CQE",
            "send_to_receive": "send to receive", "flow_completion": "FCT"}


def lat(key):
    return lambda w: (w.get("latency_ns") or {}).get(key, None) / 1e3 \
        if (w.get("latency_ns") or {}).get(key) is not None and w.get("ops") else None


# (figure id, title, axis label, value of a workload) and (id, title, label, value of a run).
WORKLOAD_METRICS = [
    ("throughput", "Throughput", "Gb/s", lambda w: w.get("throughput_gbps") if w.get("ops") else None),
    ("latency-p50", "Latency, median", "latency p50 (us)", lat("p50")),
    ("latency-p99", "Latency, 99th percentile", "latency p99 (us)", lat("p99")),
    ("fct-p99", "Flow completion time slowdown, p99", "FCT slowdown p99",
     lambda w: ((w.get("fct") or {}).get("slowdown") or {}).get("p99")),
    ("delivered-pps", "Datagrams delivered to the program", "datagrams/s", lambda w: w.get("delivered_pps")),
]


def currencies(runs):
    """The cost currencies of the runs, in order of first use (several: runs priced with other files)."""
    out = []
    for run in runs:
        cur = (run.r.get("cost") or {}).get("currency")
        if cur and cur not in out:
            out.append(cur)
    return out


def run_metrics(currency):
    return [
        ("drops", "Frames and datagrams dropped (every place)", "drops", lambda r: drops(r)[0]),
        ("cpu", "CPU time per GB moved (all hosts)", "CPU ms per GB", cpu_ms_per_gb),
        ("cost-per-gb", "Cost per GB moved", f"{currency} per GB",
         lambda r: (per_unit(r, "GB") or {}).get("total")),
        ("cost-per-mop", "Cost per million operations", f"{currency} per million ops",
         lambda r: (per_unit(r, "Mop") or {}).get("total")),
    ]


def workload_names(runs):
    names = []
    for run in runs:
        for w in run.r.get("workloads", []):
            if w["name"] not in names:
                names.append(w["name"])
    return names


def measure_of(runs, name):
    ms = []
    for run in runs:
        for w in run.r.get("workloads", []):
            m = MEASURES.get(w.get("latency_measure"), w.get("latency_measure"))
            if w["name"] == name and m and m not in ms:
                ms.append(m)
    return " / ".join(ms)


def panels_of(runs, fid, value):
    """[(panel title, {run index: value})]: a panel per workload with a value somewhere."""
    out = []
    for name in workload_names(runs):
        vals = {}
        for i, run in enumerate(runs):
            for w in run.r.get("workloads", []):
                if w["name"] == name and value(w) is not None:
                    vals[i] = value(w)
        if vals:
            m = measure_of(runs, name) if fid.startswith("latency") else ""
            out.append((f"{name} ({m})" if m else name, vals))
    return out


def metric_panels(runs):
    """[(id, title, axis label, [(panel title, {run index: value})])] of every metric some run has."""
    out = [(fid, title, unit, p) for fid, title, unit, value in WORKLOAD_METRICS
           if (p := panels_of(runs, fid, value))]
    curs = currencies(runs)
    for fid, title, unit, value in run_metrics(curs[0] if curs else "USD"):
        if fid.startswith("cost") and len(curs) > 1:
            continue  # amounts in different currencies share no axis: the table gives each with its own
        vals = {i: v for i, run in enumerate(runs) if (v := value(run.r)) is not None}
        if vals and (fid != "drops" or any(vals.values())):
            out.append((fid, title, unit, [("all workloads", vals)]))
    return out


T95 = [0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
       2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
       2.042]


def mean_ci(xs):
    """Mean and the 95% confidence half-width (Student's t; 0 for one value or equal values)."""
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, 0.0
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, (T95[n - 1] if n - 1 < len(T95) else 1.96) * sd / math.sqrt(n)


# ---- drawing ---------------------------------------------------------------

def svg(fig):
    declutter(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def declutter(fig):
    """Hides tick labels that would touch the one before them (log axes bunch values together)."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in fig.axes:
        for labels, horizontal in ((ax.get_xticklabels(), True), (ax.get_yticklabels(), False)):
            last = None
            for t in labels:
                if not t.get_visible() or not t.get_text():
                    continue
                b = t.get_window_extent(renderer).expanded(1.15, 1.3)
                if last is not None and b.overlaps(last):
                    t.set_visible(False)
                else:
                    last = b


def short(x, _pos=None):
    """An axis number: 0.25, 12.5, 850, 12k, 3.5M (no "m" for milli, which reads as mega)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if abs(x) >= div:
            return f"{x / (div if suffix != 'k' else 1e3):.3g}{suffix}"
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


NUMBERS = FuncFormatter(short)


def grid_of(n, most):
    cols = min(n, most)
    return cols, (n + cols - 1) // cols


def style(i):
    """A colour and a marker per series: 80 distinct pairs."""
    return f"C{i % 10}", MARKERS[(i // 10) % len(MARKERS)]


def bar_figure(title, unit, labels, panels):
    """Horizontal bars, one per configuration (its label on the axis), a panel per workload.
    panels: [(panel title, {config index: [repetitions]})]."""
    cols, rows = grid_of(len(panels), 3)
    n = len(labels)
    fig, axs = plt.subplots(rows, cols, figsize=(7.5, rows * (0.25 * n + 1.0)), sharey=True, squeeze=False)
    k = 0
    for p, (ptitle, vals) in enumerate(panels):
        ax = axs[p // cols][p % cols]
        for i in range(n):
            if i not in vals:
                continue
            m, ci = mean_ci(vals[i])
            ax.barh([i], [m], 0.7, xerr=[ci] if ci > 0 else None, color="C0", ecolor="#333", capsize=2,
                    gid=f"bar-{k}")
            k += 1
        ax.set_yticks(range(n), labels)
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_title(ptitle, fontsize=9)
        ax.set_xlabel(unit)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.xaxis.set_major_formatter(NUMBERS)
    for p in range(len(panels), rows * cols):
        axs[p // cols][p % cols].set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def line_figure(title, unit, xkey, xs, log, series, series_keys, panels):
    """A line per series against the swept key, a panel per workload.
    xs: [(number, label)]; series: [names], of the values of series_keys; panels: [(panel title, {(series, x index): [repetitions]})]."""
    cols, rows = grid_of(len(panels), 2)
    fig, axs = plt.subplots(rows, cols, figsize=(7.5 if cols > 1 else 6, 2.8 * rows), squeeze=False)
    handles = {}
    k = 0
    for p, (ptitle, vals) in enumerate(panels):
        ax = axs[p // cols][p % cols]
        for s, name in enumerate(series):
            pts = [(xs[x][0], *mean_ci(vals[(s, x)])) for x in range(len(xs)) if (s, x) in vals]
            if not pts:
                continue
            colour, marker = style(s)
            errs = [e for _, _, e in pts]
            c = ax.errorbar([x for x, _, _ in pts], [m for _, m, _ in pts], yerr=errs if any(errs) else None,
                            color=colour, marker=marker, markersize=4, linewidth=1.3, capsize=2, label=name)
            c[0].set_gid(f"series-{k}")
            if c[2]:
                c[2][0].set_gid(f"errorbar-{k}")
            k += 1
            handles.setdefault(name, c)
        if log:
            ax.set_xscale("log", base=2 if log == "size" else 10)
        ax.xaxis.set_major_locator(FixedLocator([x for x, _ in xs]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([label for _, label in xs])
        ax.yaxis.set_major_formatter(NUMBERS)
        ax.set_xlabel(xkey + (" (log scale)" if log else ""))
        ax.set_ylabel(unit)
        ax.set_title(ptitle, fontsize=9)
        if all(m >= 0 for v in vals.values() for m in v):
            ax.set_ylim(bottom=0)
        ax.grid(True, linewidth=0.3, color="#ccc")
    for p in range(len(panels), rows * cols):
        axs[p // cols][p % cols].set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if len(series) > 1:  # beside the panels, never over a line
        leg = fig.legend(list(handles.values()), list(handles), loc="upper left", bbox_to_anchor=(1.0, 0.93),
                         fontsize=8, title=", ".join(series_keys), title_fontsize=8,
                         ncol=1 + len(handles) // 16, frameon=False)
        leg.set_gid("legend")
    return fig


# ---- the groups of figures -------------------------------------------------

def sweep_plan(folder):
    """(x key, xs, log, series keys) of a sweep with an ordered key, or None (names only)."""
    for key, values in folder.axes:
        if key in ("seed", "fabric") or len(values) < 2:
            continue
        parsed = [ordered_value(v) for v in values]
        if all(parsed) and len({k for _, k in parsed}) == 1:
            kind = parsed[0][1]
            nums = [x for x, _ in parsed]
            xs = sorted(zip(nums, values))
            positive = all(x > 0 for x in nums)
            log = "size" if positive and (kind == "size" or key.endswith("size")) and max(nums) / min(nums) >= 8 \
                else ("10" if positive and max(nums) / min(nums) >= 100 else None)
            others = [k for k, vs in folder.axes if k not in (key, "seed") and len(vs) > 1]
            return key, xs, log, others
    return None


def sweep_figures(folder, prefix):
    key, xs, log, others = sweep_plan(folder)
    runs = folder.runs
    series = []
    coords_of = []
    for run in runs:
        name = ", ".join(f"{k}={run.coords[k]}" if len(others) > 1 else run.coords[k] for k in others) or "all"
        if name not in series:
            series.append(name)
        coords_of.append((series.index(name), [label for _, label in xs].index(run.coords[key])))
    seeds = next((len(vs) for k, vs in folder.axes if k == "seed"), 1)
    figs = []
    for fid, title, unit, panels in metric_panels(runs):
        pv = []
        for ptitle, vals in panels:
            grouped = {}
            for i, v in vals.items():
                grouped.setdefault(coords_of[i], []).append(v)
            pv.append((ptitle, grouped))
        caption = f"{title} against {key}, {folder.name}: a line per {' and '.join(others) or 'sweep'}" + \
                  (f"; mean of {seeds} seeds, error bars the 95% confidence interval" if seeds > 1 else "")
        figs.append((prefix + fid, caption, line_figure(title, unit, key, xs, log, series, others, pv)))
    return figs


def bar_figures(runs, reps):
    """Unordered configurations: `reps` maps a configuration's label to its runs' indices."""
    labels = list(reps)
    figs = []
    for fid, title, unit, panels in metric_panels(runs):
        pv = [(ptitle, {c: [vals[i] for i in reps[label] if i in vals] for c, label in enumerate(labels)
                        if any(i in vals for i in reps[label])}) for ptitle, vals in panels]
        repeated = any(len(ix) > 1 for ix in reps.values())
        caption = f"{title}, a bar per configuration" + \
                  ("; mean over seeds, error bars the 95% confidence interval" if repeated else "")
        figs.append((fid, caption, bar_figure(title, unit, labels, pv)))
    return figs


LATENCY_COLUMNS = {"workload": str, "latency_ns": float}
QUEUE_COLUMNS = {"node": str, "port": str, "time_ps": float, "queue_bytes": float}


def rows_of(path, columns):
    """The rows of a CSV rdmasim wrote, each {column: columns[column](text)}, or [] when there is none;
    a row without them, or not a number where one is due, is refused (exit 2) at its line."""
    if not os.path.exists(path):
        return []
    line = 1
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = []
            for row in csv.DictReader(f):
                line += 1
                rows.append({k: kind(row[k]) for k, kind in columns.items()})
            return rows
    except (OSError, ValueError, KeyError, TypeError, csv.Error) as e:
        refuse(f"{path}:{line}: not a table rdmasim wrote ({type(e).__name__}: {e}; columns "
               f"{', '.join(columns)} expected)")


def latency_samples(d):
    """latency.csv (capture.latency_samples): workload -> samples in ns."""
    out = {}
    for row in rows_of(os.path.join(d, "latency.csv"), LATENCY_COLUMNS):
        out.setdefault(row["workload"], []).append(row["latency_ns"])
    return out


def outside_legend(fig, ax, title=None):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, frameon=False,
                  title=title, title_fontsize=7).set_gid("legend")
    return fig


def latency_cdf(runs):
    fig, ax = plt.subplots(figsize=(6, 3.2))
    k = 0
    for run in runs:
        for name, xs in sorted(latency_samples(run.dir).items()):
            xs.sort()
            colour, marker = style(k)
            ax.plot([x / 1e3 for x in xs], [(i + 1) / len(xs) for i in range(len(xs))], color=colour,
                    label=f"{run.label} {name}", gid=f"series-{k}")
            k += 1
    ax.set(xlabel="latency us", ylabel="fraction of operations", title="Latency CDF")
    return outside_legend(fig, ax)


def size_label(b):
    """A bucket of results.json fct.buckets by its upper bound."""
    top = b.get("max_size_bytes")
    if top is None:
        return "larger"
    for unit, div in (("MB", 10**6), ("KB", 10**3)):
        if top >= div:
            return f"<= {top / div:g} {unit}"
    return f"<= {top} B"


def fct_buckets(runs):
    fig, ax = plt.subplots(figsize=(6, 3.2))
    k = 0
    for run in runs:
        for w in run.r.get("workloads", []):
            # Buckets no flow fell into have no percentiles: left out.
            buckets = [b for b in (w.get("fct") or {}).get("buckets") or [] if b.get("count")]
            if buckets:
                colour, marker = style(k)
                ax.plot([size_label(b) for b in buckets], [b["slowdown"]["p99"] for b in buckets], "-",
                        marker=marker, color=colour, label=f"{run.label} {w['name']}", gid=f"series-{k}")
                k += 1
    ax.set(xlabel="flow size", ylabel="FCT slowdown p99", title="Flow completion time slowdown per size bucket")
    ax.tick_params(axis="x", labelsize=7)
    return outside_legend(fig, ax)


def queues(runs, most=6):
    """timeseries/queues.csv: the `most` ports whose queues grew longest, over time."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    series = []
    for run in runs:
        by_port = {}
        for row in rows_of(os.path.join(run.dir, "timeseries", "queues.csv"), QUEUE_COLUMNS):
            t, q = by_port.setdefault(f"{row['node']}:{row['port']}", ([], []))
            t.append(row["time_ps"] / 1e6)
            q.append(row["queue_bytes"])
        series += [(max(q), f"{run.label} {port}", t, q) for port, (t, q) in by_port.items()]
    series.sort(key=lambda s: (-s[0], s[1]))
    for k, (_, name, t, q) in enumerate(series[:most]):
        ax.plot(t, q, label=name, color=style(k)[0], gid=f"series-{k}")
    ax.set(xlabel="time us", ylabel="queue bytes", title="Queue length over time (the longest queues)")
    return outside_legend(fig, ax)


def cost_scatter(runs):
    pts = []
    for run in runs:
        c = run.r.get("cost") or {}
        if finite(c.get("total")) is not None:
            pts.append((c["total"], delivered(run.r)[0], run.label, c.get("currency", "")))
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for k, (x, y, label, _) in enumerate(pts):
        colour, marker = style(k)
        ax.scatter([x], [y], color=colour, marker=marker, s=30, label=label, gid=f"point-{k}")
    # Pareto front: no other point is at most as expensive and at least as fast.
    front = sorted((p for p in pts if not any(q[0] <= p[0] and q[1] >= p[1] and q[:2] != p[:2] for q in pts)))
    if len(front) > 1:
        ax.plot([p[0] for p in front], [p[1] for p in front], "k--", linewidth=1, label="Pareto front")
    ax.margins(x=0.15, y=0.14)
    ax.set(xlabel=f"total cost {pts[0][3] if pts else ''}", ylabel="delivered Gb/s", title="Cost against performance")
    return outside_legend(fig, ax)


def detail_figures(runs):
    figs = []
    if any(latency_samples(run.dir) for run in runs):
        figs.append(("latency-cdf", "Latency CDF", latency_cdf(runs)))
    if any(b.get("count") for run in runs for w in run.r.get("workloads", [])
           for b in (w.get("fct") or {}).get("buckets") or []):
        figs.append(("fct", "FCT slowdown per size bucket", fct_buckets(runs)))
    if any(rows_of(os.path.join(run.dir, "timeseries", "queues.csv"), QUEUE_COLUMNS) for run in runs):
        figs.append(("queues", "Queue length over time", queues(runs)))
    if len(currencies(runs)) == 1 and any(finite((run.r.get("cost") or {}).get("total")) is not None
                                          for run in runs):
        figs.append(("cost", "Cost against performance", cost_scatter(runs)))
    return figs


# ---- tables ----------------------------------------------------------------

def esc(x):
    return html.escape(str(x))


def html_table(head, rows, cls=""):
    out = f"<table{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}><tr>" + \
        "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>\n"
    for row in rows:
        out += "<tr>" + "".join(f"<td>{esc(x)}</td>" for x in row) + "</tr>\n"
    return out + "</table>\n"


def finite(x):
    """x when it is a finite number, else None: a cost that overflowed is null in JSON (an older
    rdmasim took prices up to 1e308), and the page shows "-" for it."""
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def money(x):
    if finite(x) is None:
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.2f}" if abs(x) >= 1 else f"{x:.3g}"


def num(x, spec="g"):
    return "-" if finite(x) is None else format(x, spec)


def runs_table(runs):
    curs = currencies(runs)
    # One currency: in the head. Several (runs priced with other files): each amount names its own.
    currency = curs[0] if len(curs) == 1 else "USD" if not curs else "cost"

    def cost(run, unit):
        x = money((per_unit(run.r, unit) or {}).get("total"))
        return f"{x} {run.r['cost']['currency']}" if len(curs) > 1 and x != "-" else x

    head = ["run", "fabric", "Gb/s delivered", "Mop/s", f"{currency} per GB moved",
            f"{currency} per million ops", "drops", "data verified"]
    rows, notes = [], []
    for run in runs:
        g, m = delivered(run.r)
        n, at = drops(run.r)
        where = ", ".join(f"{dict(DROP_PLACES).get(k, k)} {v}" for k, v in at.items())
        ok, why = verified(run.r)
        if why and why not in notes:
            notes.append(why)
        rows.append([run.label, fabric_label(run.r), f"{g:.2f}", f"{m:.3f}",
                     cost(run, "GB"), cost(run, "Mop"),
                     f"{n} ({where})" if where else str(n), ok])
    return html_table(head, rows) + "".join(f"<p class=\"note\">n/a: {esc(w)}</p>\n" for w in notes)


def cost_section(runs):
    """The bill of materials of each distinct network, with the opex and CPU formulas."""
    groups = []
    for run in runs:
        c = run.r.get("cost")
        if not c:
            continue
        key = json.dumps([c.get("bom"), c.get("assumptions"), c.get("currency")], sort_keys=True)
        for g in groups:
            if g[0] == key:
                g[2].append(run)
                break
        else:
            groups.append((key, c, [run]))
    if not groups:
        return ""
    out = ["<h2>Cost model</h2>",
           "<p>Prices are the catalogue's (estimates to replace with yours: <code>cost:</code> or "
           "<code>--prices</code>, docs/cost.md). Cost per unit of work = network + CPU: network = "
           "(capex + opex) / (units per second measured &times; the years in seconds), what the network "
           "costs for what it moves at this run's rate over its life; CPU = the run's busy core-hours "
           "&times; the core-hour price / units, what the work costs in CPU however long it took.</p>"]
    for _, c, members in groups:
        cur, a = c.get("currency", ""), c.get("assumptions", {})
        fabrics = ", ".join(sorted({fabric_label(r.r) for r in members}))
        names = ", ".join(r.label for r in members) if len(members) <= 3 else f"{len(members)} runs"
        out.append(f"<h3>{esc(fabrics)}{'' if names == fabrics else ': ' + esc(names)}</h3>")
        rows = [[l["item"], l.get("kind", ""), l.get("product", ""), l["count"], money(l["unit_price"]),
                 money(l["price"]), num(l.get("unit_watts", 0)), num(l.get("watts", 0)),
                 l.get("source", "") + (" (estimate)" if l.get("estimate") else ""), l.get("date", "")]
                for l in c.get("bom", [])]
        out.append(html_table(["part", "kind", "product", "count", f"unit {cur}", cur, "unit W", "W",
                               "price source", "date"], rows, "bom"))
        years, pue, kwh = a.get("years", 0), a.get("pue", 1), a.get("energy_price", 0)
        switches = a.get("switches", "?")
        out.append(f"<p>Switches priced as <code>{esc(switches)}</code>"
                   + (" (<code>cost.ethernet_switches</code> chooses for every Ethernet fabric alike). "
                      if switches.startswith("ethernet") else ". ") +
                   f"Capex {money(c.get('capex'))} {esc(cur)}. Opex = {num(c.get('power_w', 0))} W &times; PUE "
                   f"{num(pue)} &times; 8760 h &times; {num(years)} years &times; {num(kwh)} {esc(cur)}/kWh = "
                   f"{money(c.get('opex'))} {esc(cur)}.</p>")
        out.append(f"<p>CPU cost of a run = its hosts' busy core-hours &times; {num(a.get('cpu_core_hour', 0))} "
                   f"{esc(cur)} per core-hour (cost.cpu.run_cost). Over the {num(years)} years, the cores it kept "
                   "busy on average at that price make cost.cpu.cost, part of the total; the comparison is per "
                   "unit of work.</p>")
        if len(members) > DETAIL_LIMIT:
            out.append("<p class=\"note\">Each run's cost per unit of work is in the table at the top.</p>")
            continue
        cpu_rows = []
        for r in members:
            cc = r.r["cost"].get("cpu", {})
            busy_h = cc.get("busy_ps", 0) / 1e12 / 3600
            cells = [r.label, f"{cc.get('busy_ps', 0) / 1e9:.3f}",
                     f"{busy_h:.3g} h x {num(cc.get('core_hour', 0))} = {money(cc.get('run_cost'))}"]
            for unit in ("GB", "Mop"):
                u = per_unit(r.r, unit)
                cells.append("-" if not u else f"{num(u.get('amount'), '.4g')} {unit}: {money(u.get('network'))} + "
                                               f"{money(u.get('cpu'))} = {money(u.get('total'))}")
            cpu_rows.append(cells)
        out.append(html_table(["run", "CPU busy ms", f"CPU cost of the run {cur}",
                               f"per GB: network + CPU {cur}", f"per million ops: network + CPU {cur}"],
                              cpu_rows, "cpu"))
    return "\n".join(out)


NO_RUNS = {
    "sweep": "the sweep folder holds no runs (none under runs/ with a results.json of a run that succeeded: "
             "after --emit slurm, run the job, then the sweep command with --collect)",
    "compare": "the comparison holds no fabric that ran (compare.json says why each did not)",
    "none": "no results.json, compare.json or sweep.json here",
}


# What reading a file rdmasim did not write raises somewhere in the page's code.
MALFORMED = (TypeError, KeyError, AttributeError, IndexError, ValueError)


def culprit(folders):
    """The results.json that the page cannot be made of, and why: each run's drawn alone, its figures
    too when the page has them (the page failed; the time to find which is spent only then)."""
    runs = [run for f in folders for run in f.runs]
    for run in runs:
        try:
            runs_table([run]), metric_panels([run]), cost_section([run])
            if len(runs) <= DETAIL_LIMIT:
                detail_figures([run])
        except MALFORMED as e:
            return os.path.join(run.dir, "results.json"), e
    return None, None


def gone(pid, child):
    """Whether rdmasim (`pid`) has ended: this script, its child (`child`, as it started) when its parent
    is another now; else (through a wrapper, or rdmasim killed before the script began) when no such
    process is left (a zombie not yet reaped counts as there)."""
    if child:
        return os.getppid() != pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: there
        pass
    return False


def inner_folders(d):
    """A hint naming the output folders inside `d` (a parent such as out/ given for its folders)."""
    try:
        inside = sorted(e.path for e in os.scandir(d) if e.is_dir() and
                        any(os.path.exists(os.path.join(e.path, top)) for top in TOP_FILES))
    except OSError:
        return ""
    if not inside:
        return ""
    return f"; the output folders in it are {', '.join(inside[:3])}{' and more' if len(inside) > 3 else ''}"


def main():
    parent, out, shown, note, dirs = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    child = os.getppid() == parent
    folders = []
    for d in dirs:
        f = folder_of(d)
        if not f.runs:
            refuse(f"{d}: {NO_RUNS.get(f.kind, NO_RUNS['none'])}{inner_folders(d) if f.kind == 'none' else ''}")
        folders.append(f)
    name_folders(folders)
    try:
        page = make_page(folders)
    except MALFORMED as e:
        path, why = culprit(folders)
        where = path or f"{', '.join(dirs)}: the files there"
        refuse(f"{where}: not what rdmasim writes ({type(why or e).__name__}: {why or e})")
    try:
        with open(out, "w") as f:
            f.write(page)
    except OSError as e:
        sys.stderr.write(f"error: {shown}: cannot write the page: {e.strerror}\n")
        sys.exit(4)
    if gone(parent, child):  # rdmasim was killed (kill -9): it renames nothing, so nothing was written
        sys.exit(1)
    said = f"wrote {shown} ({page.count('<figure')} figures, {sum(len(f.runs) for f in folders)} runs)\n"
    try:
        stream = sys.stderr if note == "stderr" else sys.stdout
        stream.write(said)
        stream.flush()
    except BrokenPipeError:  # nobody reads it (report ... | head -0): the page is written all the same
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def make_page(folders):
    runs = [run for f in folders for run in f.runs]
    sections = []
    ordered = [f for f in folders if f.kind == "sweep" and sweep_plan(f)]
    for k, f in enumerate(ordered):
        key = sweep_plan(f)[0]
        sections.append((f"Sweep {f.name}: each metric against {key}", sweep_figures(f, f"sweep{k + 1 if k else ''}-")))
    # Everything else is a set of unordered configurations: bars, seeds of a
    # configuration as its repetitions; labels made unique across folders.
    bar_runs, reps = [], {}
    rest = [f for f in folders if f not in ordered]
    for f in rest:
        names = [k for k, vs in f.axes if k != "seed" and len(vs) > 1]
        for run in f.runs:
            label = ", ".join(f"{k}={run.coords[k]}" for k in names) if f.kind == "sweep" else ""
            label = label or (run.own if len(folders) > 1 else run.label)
            if len(folders) > 1:
                label = f"{f.name}: {label}"
            reps.setdefault(label, []).append(len(bar_runs))
            bar_runs.append(run)
    if bar_runs:
        sections.append(("Configurations side by side", bar_figures(bar_runs, reps)))
    if len(runs) <= DETAIL_LIMIT:
        sections.append(("Per run", detail_figures(runs)))
    title = ", ".join(sorted({run.r.get("experiment", "?") for run in runs}))
    page = ["<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            REPORT_MARK,
            f"<title>rdmasim report: {esc(title)}</title>",
            "<style>body{font-family:'DejaVu Sans',sans-serif;max-width:64em;margin:2em auto;color:#222}"
            "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;"
            "text-align:right}td:first-child,table.bom td:nth-child(3),table.bom td:nth-child(9){text-align:left}"
            "figure{margin:1.5em 0}figcaption{font-size:90%;color:#444}.note{font-size:90%;color:#444}</style>"
            "</head><body>",
            f"<h1>rdmasim report: {esc(title)}</h1>", runs_table(runs)]
    page += [f"<p class=\"note\" id=\"seed-note-{k}\">{esc(f.name)}: {esc(f.note)}</p>"
             for k, f in enumerate(folders) if f.note]
    for heading, figs in sections:
        if figs:
            page.append(f"<h2>{esc(heading)}</h2>")
        for fid, caption, fig in figs:
            page.append(f"<figure id=\"{fid}\">{svg(fig)}<figcaption>{esc(caption)}</figcaption></figure>")
    if len(runs) > DETAIL_LIMIT:
        page.append(f"<p class=\"note\">Latency CDFs, FCT buckets, queues and cost points are drawn per run, "
                    f"for at most {DETAIL_LIMIT} runs; this page has {len(runs)}.</p>")
    page.append(cost_section(runs))
    page.append("</body></html>\n")
    return "\n".join(page)


main()
