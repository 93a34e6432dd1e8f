// `link:` and the settings of each link.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

// IBA path MTUs on the IBA fabrics (IBA 7.7.8), an IP MTU on iwarp.
void check_mtu(const ExperimentDraft& d, const YAML::Node& at, const std::string& path, uint32_t mtu) {
  if (d.x.fabric == FabricKind::iwarp || d.x.fabric == FabricKind::tcp) {
    if (mtu < kMinIpMtu || mtu > kMaxIpMtu)
      d.c.error(at, path, std::string(to_string(d.x.fabric)) + " needs an IP MTU from 576 to 9000, got " + std::to_string(mtu));
  } else if (!is_iba_mtu(mtu)) {
    d.c.error(at, path,
              std::string(to_string(d.x.fabric)) + " needs an IBA MTU: 256, 512, 1024, 2048 or 4096, got " +
                  std::to_string(mtu));
  }
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
