// `mpa:`, the MPA options (RFC 5044, RFC 6581) iwarp negotiates.
#include "fabrics/iwarp/iwarp_network.hpp"
#include "topologies/experiment_draft.hpp"

namespace rdmasim {

namespace {

void read_mpa(ExperimentDraft& d, const Entry& e) {
  auto mpa = std::make_shared<MpaConfig>();
  if (auto f = d.c.fields(e.value, e.path, "MPA options", {"markers", "crc", "revision"})) {
    d.c.read(*f, "markers", mpa->markers, [&](const Entry& v) { return d.c.boolean(v); });
    d.c.read(*f, "crc", mpa->crc, [&](const Entry& v) { return d.c.boolean(v); });
    d.c.read(*f, "revision", mpa->revision, [&](const Entry& v) { return d.c.whole(v, 1, 2); });
  }
  d.x.fabric_settings["mpa"] = std::move(mpa);
}

}  // namespace

SectionType mpa_section() { return plain_section<read_mpa>("mpa"); }

}  // namespace rdmasim
