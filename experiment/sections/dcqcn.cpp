// `dcqcn:`, congestion control at RoCE v2 NICs.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

void read_dcqcn(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "DCQCN settings",
                      {"enabled", "cnp_interval", "g", "alpha_period", "rate_period", "byte_counter",
                       "fast_recovery", "additive", "hyper", "min_rate"});
  if (!f) return;
  DcqcnConfig& dc = d.x.dcqcn;
  d.c.read(*f, "enabled", dc.enabled, [&](const Entry& v) { return d.c.boolean(v); });
  d.c.read(*f, "cnp_interval", dc.cnp_interval, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "g", dc.g, [&](const Entry& v) { return d.c.probability(v); });
  d.c.read(*f, "alpha_period", dc.alpha_period, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "rate_period", dc.rate_period, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "byte_counter", dc.byte_counter, [&](const Entry& v) { return d.c.bytes(v); });
  d.c.read(*f, "fast_recovery", dc.fast_recovery, [&](const Entry& v) { return d.c.whole(v, 0, 1000); });
  d.c.read(*f, "additive", dc.additive, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "hyper", dc.hyper, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "min_rate", dc.min_rate, [&](const Entry& v) { return d.c.rate(v); });
  if (dc.g <= 0) {
    const Entry* at = f->find("g");
    d.c.error(at->value, at->path, "must be above 0");
  }
  if (dc.enabled && !d.x.ecn.enabled) {  // ecn: is read before dcqcn:
    const Entry* at = f->find("enabled");
    d.c.error(at->value, at->path, "DCQCN reacts to ECN marks: set ecn.enabled: true as well");
  }
}

}  // namespace rdmasim
