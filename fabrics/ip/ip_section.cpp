// `ip:`, the IP version of the fabrics that carry IP (roce_v2, iwarp, tcp).
#include "fabrics/ip/ip_section.hpp"

#include "topologies/experiment_draft.hpp"

namespace rdmasim {

namespace {

void read_ip(ExperimentDraft& d, const Entry& e) {
  if (auto v = d.c.choice<IpVersion>(e, "IP version")) d.x.ip = *v;
  d.ip_version = e;
}

}  // namespace

SectionType ip_section() {
  return plain_section<read_ip>("ip",
                                {"`ipv4` or `ipv6`", "ipv4", "IP version of roce_v2, iwarp and tcp frames"});
}

}  // namespace rdmasim
