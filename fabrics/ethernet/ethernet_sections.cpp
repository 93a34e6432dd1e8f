// The Ethernet fabrics' sections: `flow_control:`, `pfc:` (802.1Qbb), `ecn:`.
#include "fabrics/ethernet/ethernet_sections.hpp"

#include "topologies/experiment_draft.hpp"

namespace rdmasim {

namespace {

void read_flow_control(ExperimentDraft& d, const Entry& e) {
  auto s = d.c.scalar(e.value, e.path, "none or pfc");
  if (s && (*s == "none" || *s == "pfc"))
    d.x.pfc = *s == "pfc";
  else if (s)
    d.c.error(e.value, e.path, "unknown flow control '" + *s + "'; expected none or pfc");
}

void read_pfc(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "PFC settings",
                      {"priority", "xoff", "xon", "deadlock_detect", "watchdog", "shared_buffer",
                       "shared_buffer_per", "alpha_shift", "reserve", "resume_offset"});
  if (!f) return;
  PfcConfig& p = d.x.pfc_config;
  d.c.read(*f, "shared_buffer", p.shared_buffer, [&](const Entry& v) { return d.c.bytes(v, false); });
  d.c.read(*f, "shared_buffer_per", p.shared_buffer_per, [&](const Entry& v) -> std::optional<DataRate> {
    if (v.value.IsScalar() && v.value.Scalar() == "0") return DataRate(0);
    return d.c.rate(v);
  });
  d.c.read(*f, "alpha_shift", p.alpha_shift, [&](const Entry& v) { return d.c.whole(v, 0, 16); });
  d.c.read(*f, "reserve", p.reserve, [&](const Entry& v) { return d.c.bytes(v, false); });
  d.c.read(*f, "resume_offset", p.resume_offset, [&](const Entry& v) { return d.c.bytes(v, false); });
  d.c.read(*f, "deadlock_detect", d.x.pfc_config.deadlock_detect,
           [&](const Entry& v) { return d.c.positive_time(v); });

  d.c.read(*f, "priority", d.x.pfc_config.priority, [&](const Entry& v) { return d.c.whole(v, 0, 7); });
  d.c.read(*f, "xoff", d.x.pfc_config.xoff, [&](const Entry& v) { return d.c.bytes(v); });
  d.c.read(*f, "xon", d.x.pfc_config.xon, [&](const Entry& v) { return d.c.bytes(v); });
  if (const Entry* w = f->find("watchdog")) {
    if (auto wf = d.c.fields(w->value, w->path, "PFC watchdog settings", {"detect", "restore"})) {
      if (!wf->find("detect"))
        d.c.missing(*wf, "detect", "how long a paused queue with frames waits before it is drained");
      d.c.read(*wf, "detect", d.x.pfc_config.watchdog_detect,
               [&](const Entry& v) { return d.c.positive_time(v); });
      d.c.read(*wf, "restore", d.x.pfc_config.watchdog_restore,
               [&](const Entry& v) { return d.c.positive_time(v); });
    }
  }
  if (d.x.pfc_config.xon > d.x.pfc_config.xoff) {
    const Entry* at = f->find("xon") ? f->find("xon") : f->find("xoff");
    d.c.error(at ? at->value : e.value, at ? at->path : e.path,
              "xon (" + to_string(d.x.pfc_config.xon) + ") must not exceed xoff (" +
                  to_string(d.x.pfc_config.xoff) + ")");
  }
}

void read_ecn(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "ECN settings",
                      {"enabled", "kmin", "kmax", "pmax", "rates_per", "at", "per_priority"});
  if (!f) return;
  d.c.read(*f, "rates_per", d.x.ecn.rates_per, [&](const Entry& v) -> std::optional<DataRate> {
    if (v.value.IsScalar() && v.value.Scalar() == "0") return DataRate(0);
    return d.c.rate(v);
  });
  d.c.read(*f, "at", d.x.ecn.at, [&](const Entry& v) { return d.c.choice<EcnAt>(v, "ECN marking point"); });
  d.c.read(*f, "per_priority", d.x.ecn.per_priority, [&](const Entry& v) { return d.c.boolean(v); });
  d.c.read(*f, "enabled", d.x.ecn.enabled, [&](const Entry& v) { return d.c.boolean(v); });
  if (const Entry* en = f->find("enabled")) d.ecn_enabled = *en;
  d.c.read(*f, "kmin", d.x.ecn.kmin, [&](const Entry& v) { return d.c.bytes(v, false); });
  d.c.read(*f, "kmax", d.x.ecn.kmax, [&](const Entry& v) { return d.c.bytes(v); });
  d.c.read(*f, "pmax", d.x.ecn.pmax, [&](const Entry& v) { return d.c.probability(v); });
  if (d.x.ecn.kmin > d.x.ecn.kmax) {
    const Entry* at = f->find("kmin") ? f->find("kmin") : f->find("kmax");
    d.c.error(
        at ? at->value : e.value, at ? at->path : e.path,
        "kmin (" + to_string(d.x.ecn.kmin) + ") must not exceed kmax (" + to_string(d.x.ecn.kmax) + ")");
  }
}

}  // namespace

std::vector<SectionType> ethernet_sections() {
  return {plain_section<read_flow_control>("flow_control"), plain_section<read_pfc>("pfc"),
          plain_section<read_ecn>("ecn")};
}

}  // namespace rdmasim
