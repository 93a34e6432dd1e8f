// `link:` and the settings of each link.
#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"

namespace rdmasim {

namespace {

// The fabric's MTU rule: an IBA path MTU, or an IP MTU.
void check_mtu(const ExperimentDraft& d, const YAML::Node& at, const std::string& path, uint32_t mtu) {
  if (const std::string why = fabric_of(d.x).mtu_error(mtu); !why.empty()) d.c.error(at, path, why);
}
}  // namespace

LinkConfig read_link(ExperimentDraft& d, const YAML::Node& v, const std::string& path, LinkConfig base) {
  auto f = d.c.fields(v, path, "link settings", {"bandwidth", "delay", "mtu", "buffer", "loss"});
  if (!f) return base;
  d.c.read(*f, "bandwidth", base.bandwidth, [&](const Entry& e) { return d.c.rate(e); });
  d.c.read(*f, "delay", base.delay, [&](const Entry& e) { return d.c.time(e); });
  if (auto e = f->find("mtu")) {
    if (auto m = d.c.whole(*e, 1, 65535)) {
      base.mtu = static_cast<uint32_t>(*m);
      check_mtu(d, e->value, e->path, base.mtu);
    }
  }
  d.c.read(*f, "buffer", base.buffer, [&](const Entry& e) { return d.c.bytes(e); });
  d.c.read(*f, "loss", base.loss, [&](const Entry& e) { return d.c.probability(e); });
  return base;
}

}  // namespace rdmasim
