// `switch:`, the forwarding latency and mode of every switch.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

using namespace keys;

const KeyTable<SwitchConfig>& switch_keys() {
  static const KeyTable<SwitchConfig> t{
      "switch",
      "switch settings",
      {
          key("latency", &SwitchConfig::latency, time(), "300ns",
              "from the forwarding decision to the start of transmission"),
          key("mode", &SwitchConfig::mode, choice<SwitchMode>("switch mode"), "cut_through",
              "whether a frame may leave before it has fully arrived"),
      }};
  return t;
}

void read_switch(ExperimentDraft& d, const Entry& e) {
  switch_keys().read(d.c, e.value, e.path, d.x.switch_config);
}

}  // namespace rdmasim
