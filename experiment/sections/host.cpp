// `host:`, how hosts post work and learn of completions.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

void read_host(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "host settings",
                      {"completion", "hybrid_spin", "interrupt_coalescing", "doorbell", "pcie", "poll_cost",
                       "interrupt_cost", "post_cost"});
  if (!f) return;
  HostConfig& h = d.x.host;
  d.c.read(*f, "completion", h.completion,
           [&](const Entry& v) { return d.c.choice<Completion>(v, "completion mode"); });
  d.c.read(*f, "hybrid_spin", h.hybrid_spin, [&](const Entry& v) { return d.c.time(v); });
  if (auto v = f->find("interrupt_coalescing")) {
    if (auto g = d.c.fields(v->value, v->path, "interrupt coalescing settings", {"frames", "delay"})) {
      d.c.read(*g, "frames", h.interrupt_coalescing.frames,
               [&](const Entry& w) { return d.c.whole(w, 1, 65535); });
      d.c.read(*g, "delay", h.interrupt_coalescing.delay, [&](const Entry& w) { return d.c.time(w); });
    }
  }
  d.c.read(*f, "doorbell", h.doorbell, [&](const Entry& v) { return d.c.choice<Doorbell>(v, "doorbell"); });
  if (auto v = f->find("pcie")) {
    if (auto g = d.c.fields(v->value, v->path, "PCIe settings", {"latency", "bandwidth"})) {
      d.c.read(*g, "latency", h.pcie.latency, [&](const Entry& w) { return d.c.time(w); });
      d.c.read(*g, "bandwidth", h.pcie.bandwidth, [&](const Entry& w) { return d.c.rate(w); });
    }
  }
  d.c.read(*f, "poll_cost", h.poll_cost, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "interrupt_cost", h.interrupt_cost, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "post_cost", h.post_cost, [&](const Entry& v) { return d.c.time(v); });
}

}  // namespace rdmasim
