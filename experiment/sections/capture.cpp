// `capture:`, which ports are captured and how.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

// cpu_trace: true | false | {from: TIME, to: TIME}.
static void read_cpu_trace(ExperimentDraft& d, const Entry& e) {
  CaptureConfig& c = d.x.capture;
  if (!e.value.IsMap()) {
    if (auto b = d.c.boolean(e)) c.cpu_trace = *b;
    return;
  }
  auto f = d.c.fields(e.value, e.path, "CPU trace settings", {"from", "to"});
  if (!f) return;
  c.cpu_trace = true;
  d.c.read(*f, "from", c.cpu_trace_from, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "to", c.cpu_trace_to, [&](const Entry& v) { return d.c.time(v); });
  if (const Entry* to = f->find("to"); to && c.cpu_trace_to <= c.cpu_trace_from)
    d.c.error(to->value, to->path,
              "the window must end after it starts (from " + to_string(c.cpu_trace_from) + ")");
}

// ports: / qps: all, none, or a list whose names the validate pass checks
// against the topology and the workloads. Returns whether it is `all`.
static bool read_selection(ExperimentDraft& d, const Entry& e, std::optional<Entry>& list,
                           const std::string& what) {
  if (e.value.IsSequence()) {
    if (e.value.size() == 0) d.c.error(e.value, e.path, "an empty list; write none to sample no " + what);
    list = e;
    return false;
  }
  const std::string expected = "all, none or a list of " + what;
  auto s = d.c.scalar(e.value, e.path, expected);
  if (s && *s != "all" && *s != "none")
    d.c.error(e.value, e.path, "expected " + expected + ", got " + describe(e.value));
  return !s || *s != "none";
}

// timeseries: {interval: 10us, ports: [s0, s1:4], qps: [incast]}: queues.csv
// and qps.csv beside results.json.
static void read_timeseries(ExperimentDraft& d, const Entry& t) {
  auto ts = d.c.fields(t.value, t.path, "time series settings", {"interval", "ports", "qps"});
  if (!ts) return;
  if (!ts->has("interval")) d.c.missing(*ts, "interval", "how often to sample, such as 10us");
  TimeSeriesConfig c;
  std::optional<Time> interval;
  d.c.read(*ts, "interval", interval, [&](const Entry& v) { return d.c.positive_time(v); });
  if (interval) c.interval = *interval;
  const Entry* ports = ts->find("ports");
  const Entry* qps = ts->find("qps");
  if (ports) c.all_ports = read_selection(d, *ports, d.timeseries_ports, "ports (NODE or NODE:PORT)");
  if (qps) c.all_qps = read_selection(d, *qps, d.timeseries_qps, "workload names");
  if (ports && qps && ports->value.IsScalar() && qps->value.IsScalar() && ports->value.Scalar() == "none" &&
      qps->value.Scalar() == "none")
    d.c.error(t.value, t.path,
              "ports and qps are both none: nothing to sample; leave out timeseries instead");
  d.x.capture.timeseries = c;
}

void read_capture(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(
      e.value, e.path, "capture settings",
      {"pcap", "ib_linktype", "snaplen", "max_bytes", "cpu_trace", "timeseries", "latency_samples"});
  if (!f) return;
  if (auto p = f->find("pcap")) {
    d.capture_list = *p;
    if (p->value.IsSequence()) {
      d.x.capture.mode = CaptureMode::list;
    } else if (auto s = d.c.scalar(p->value, p->path, "none, hosts, all or a list of node names")) {
      auto m = from_string<CaptureMode>(*s);
      if (m && *m != CaptureMode::list)
        d.x.capture.mode = *m;
      else
        d.c.error(p->value, p->path,
                  "expected none, hosts, all or a list of node names, got " + describe(p->value));
    }
  }
  if (auto v = f->find("ib_linktype")) {
    auto s = d.c.scalar(v->value, v->path, "erf or infiniband");
    if (s && (*s == "erf" || *s == "infiniband"))
      d.x.capture.ib_linktype_infiniband = *s == "infiniband";
    else if (s)
      d.c.error(v->value, v->path, "unknown linktype '" + *s + "'; expected erf (197) or infiniband (247)");
  }
  d.c.read(*f, "snaplen", d.x.capture.snaplen, [&](const Entry& v) { return d.c.whole(v, 64, 262144); });
  d.c.read(*f, "max_bytes", d.x.capture.max_bytes, [&](const Entry& v) { return d.c.bytes(v); });
  if (auto v = f->find("cpu_trace")) read_cpu_trace(d, *v);
  if (auto t = f->find("timeseries")) read_timeseries(d, *t);
  d.c.read(*f, "latency_samples", d.x.capture.latency_samples,
           [&](const Entry& v) { return d.c.boolean(v); });
}

}  // namespace rdmasim
