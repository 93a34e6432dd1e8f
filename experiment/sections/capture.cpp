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
  if (auto t = f->find("timeseries")) {
    // timeseries: {interval: 10us}: queues.csv and qps.csv beside results.json.
    if (auto ts = d.c.fields(t->value, t->path, "time series settings", {"interval"})) {
      if (!ts->has("interval")) d.c.missing(*ts, "interval", "how often to sample, such as 10us");
      d.c.read(*ts, "interval", d.x.capture.timeseries, [&](const Entry& v) { return d.c.positive_time(v); });
    }
  }
  d.c.read(*f, "latency_samples", d.x.capture.latency_samples,
           [&](const Entry& v) { return d.c.boolean(v); });
}

}  // namespace rdmasim
