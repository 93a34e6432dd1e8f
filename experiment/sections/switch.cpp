// `switch:`, the forwarding latency and mode of every switch.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

void read_switch(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "switch settings", {"latency", "mode"});
  if (!f) return;
  d.c.read(*f, "latency", d.x.switch_config.latency, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "mode", d.x.switch_config.mode,
           [&](const Entry& v) { return d.c.choice<SwitchMode>(v, "switch mode"); });
}

}  // namespace rdmasim
