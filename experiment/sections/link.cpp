// `link:` and the settings of each link.
#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"

namespace rdmasim {

using namespace keys;

const KeyTable<LinkConfig>& link_keys() {
  static const KeyTable<LinkConfig> t{
      "link",
      "link settings",
      {
          key("bandwidth", &LinkConfig::bandwidth, rate(), "100Gbps", "serialisation rate, each direction"),
          key("delay", &LinkConfig::delay, time(), "1us", "propagation delay"),
          key("mtu", &LinkConfig::mtu, whole(1, 65535), "4096",
              "`ib`, `roce_v1`, `roce_v2`: the IBA path MTU, one of 256, 512, 1024, 2048, 4096. `iwarp`, "
              "`tcp`: the IP MTU, 576 to 9000"),
          key("buffer", &LinkConfig::buffer, size(), "1MiB",
              "egress queue limit per port, all traffic classes together"),
          key("loss", &LinkConfig::loss, probability(), "0", "chance that a frame is lost on the wire"),
      }};
  return t;
}

LinkConfig read_link(ExperimentDraft& d, const YAML::Node& v, const std::string& path, LinkConfig base) {
  const auto f = link_keys().read(d.c, v, path, base);
  // The fabric's MTU rule: an IBA path MTU, or an IP MTU.
  if (const Entry* e = f ? f->read_ok("mtu") : nullptr)
    if (const std::string why = fabric_of(d.x).mtu_error(base.mtu); !why.empty())
      d.c.error(e->value, e->path, why);
  return base;
}

}  // namespace rdmasim
