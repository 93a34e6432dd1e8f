"""capture.cpu_trace: per host, trace/<host>.json in the trace-event format
(what each core did when) whose durations add up, per category, to the
host's results.json core times, with no two events of a core overlapping;
trace/<host>.svg, a well-formed picture of the window; same run, same bytes;
`kind: flows` traced too."""
import json
import os
import xml.etree.ElementTree as ET

from e2e import SOURCE, check, finish, run, tmpdir

EXAMPLE = os.path.join(SOURCE, "examples/host_overlap.yaml")


def ps(us):
    """A trace timestamp (microseconds, 6 decimals) in picoseconds, exactly."""
    whole, _, frac = f"{us:.6f}".partition(".")
    return int(whole) * 1_000_000 + int(frac)


def go(*sets):
    out = os.path.join(tmpdir(), "trace")
    _, _, _, res = run(EXAMPLE, out, "--set", "host.completion=interrupt", *sets)
    return out, res


# The whole run traced: the events are the core times of results.json.
out, res = go("--set", "capture.cpu_trace=true")
for h in res["hosts"]:
    with open(os.path.join(out, "trace", h["name"] + ".json")) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    check(names == {0: "core 0"}, f"{h['name']}: one thread per core ({names})")
    spans = [e for e in events if e["ph"] == "X"]
    by_cat = {}
    end = 0
    for e in spans:
        start, dur = ps(e["ts"]), ps(e["dur"])
        check(start >= end and dur > 0, f"{h['name']}: events of a core do not overlap ({e})")
        end = start + dur
        by_cat[e["cat"]] = by_cat.get(e["cat"], 0) + dur
    core = h["cores"][0]
    for cat in ("user", "syscall", "irq", "poll"):
        check(by_cat.get(cat, 0) == core[cat + "_ps"],
              f"{h['name']}: trace {cat} {by_cat.get(cat, 0)} ps = results {core[cat + '_ps']} ps")
    check("idle" not in by_cat, f"{h['name']}: idle is the gaps")
a_names = {e["name"] for e in json.load(open(os.path.join(out, "trace", "a.json")))["traceEvents"] if e["ph"] == "X"}
check({"io sender", "calc", "irq"} <= a_names, f"a's trace names its processes and IRQs ({sorted(a_names)})")

# The example's window: an SVG of 0..60us, and only events that overlap it.
out, res = go()
svg = ET.parse(os.path.join(out, "trace", "a.svg")).getroot()
rects = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect")]
titles = " ".join(t.text for t in svg.iter("{http://www.w3.org/2000/svg}title"))
check(len(rects) > 10 and "calc" in titles and "io sender" in titles, f"a.svg draws the core ({len(rects)} rects)")
with open(os.path.join(out, "trace", "a.json")) as f:
    spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
check(spans and all(ps(e["ts"]) < 60_000_000 for e in spans), "the window bounds what is traced")

out2, _ = go()
for name in ("a.json", "a.svg", "b.json", "b.svg"):
    with open(os.path.join(out, "trace", name), "rb") as f1, open(os.path.join(out2, "trace", name), "rb") as f2:
        check(f1.read() == f2.read(), f"{name}: same run, same bytes")
# kind: flows, a program a flow and many on a core: the trace adds up and
# the SVG draws the polling no process's context is loaded for (it ended
# in "internal error: map::at").
FLOWS = """\
name: flows_trace
topology: {generate: {kind: star, hosts: 4}}
workloads: [{kind: flows, cdf: websearch, load: 0.3, duration: 2ms, op: send}]
capture: {pcap: none, cpu_trace: true}
"""
for fabric in ("roce_v2", "tcp"):
    out = os.path.join(tmpdir(), "flows_" + fabric)
    code, _, err, res = run(FLOWS, out, "--fabric", fabric)
    check(code == 0 and res, f"flows with cpu_trace on {fabric}: exit {code}: {err}")
    if not res:
        continue
    for h in res["hosts"]:
        with open(os.path.join(out, "trace", h["name"] + ".json")) as f:
            spans = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
        for c, core in enumerate(h["cores"]):
            for cat in ("user", "syscall", "irq", "softirq", "poll"):
                got = sum(ps(e["dur"]) for e in spans if e["tid"] == c and e["cat"] == cat)
                check(got == core[cat + "_ps"],
                      f"{fabric} {h['name']} core {c}: trace {cat} {got} ps = results {core[cat + '_ps']} ps")
        ET.parse(os.path.join(out, "trace", h["name"] + ".svg"))
finish()
