// `mpa:`, the MPA options (RFC 5044, RFC 6581) iwarp negotiates.
#include "fabrics/iwarp/iwarp_network.hpp"
#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"

namespace rdmasim {

using namespace keys;

namespace {

const KeyTable<MpaConfig>& mpa_keys() {
  using M = MpaConfig;
  static const KeyTable<M> t{
      "mpa",
      "MPA options",
      {
          key("markers", &M::markers, boolean(), "false",
              "insert MPA markers every 512 bytes of the TCP stream"),
          key("crc", &M::crc, boolean(), "true", "CRC32c on every FPDU"),
          key("revision", &M::revision, whole(1, 2), "2",
              "MPA revision: `2` is RFC 6581's enhanced connection establishment (IRD and ORD, from the QPs' "
              "`max_dest_rd_atomic` and `max_rd_atomic`, negotiated in the private data), as siw and rdma_cm "
              "use "
              "by default; `1` is plain RFC 5044"),
      }};
  return t;
}

void read_mpa(ExperimentDraft& d, const Entry& e) {
  auto mpa = std::make_shared<MpaConfig>();
  mpa_keys().read(d.c, e.value, e.path, *mpa);
  d.x.fabric_settings["mpa"] = std::move(mpa);
}

}  // namespace

SectionType mpa_section() {
  return plain_section<read_mpa>("mpa", {"map", "", "iWARP's MPA options", &mpa_keys()});
}

}  // namespace rdmasim
