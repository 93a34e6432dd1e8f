// What the roce_v2 fabric checks of an experiment: the congestion controls
// and loss recoveries its frames carry, and what they need of the IP
// header (an IPv4 option has room for one of HPCC's telemetry and IRN's
// extension header).
#include "fabrics/ip/wire/int_telemetry.hpp"
#include "fabrics/roce_v2/roce_v2_network.hpp"
#include "topologies/cc_algorithms.hpp"
#include "topologies/experiment_draft.hpp"

namespace rdmasim {

namespace {

void refuse(ExperimentDraft& d, const std::optional<Entry>& at, std::string_view what,
            const std::string& why) {
  if (at) d.c.error(at->value, at->path, std::string(what) + " cannot run on fabric roce_v2: " + why);
}

// HPCC's INT rides in an IPv4 option; each hop reports its link rate as an
// index into a table of standard rates (HPCC, section 4.1).
void hpcc(ExperimentDraft& d) {
  if (cc_facts(d.x.cc.algorithm).signal != CcSignal::ip_telemetry) return;
  const std::optional<Entry>& at = d.cc_algorithm;
  if (d.x.ip != IpVersion::ipv4) {
    refuse(d, at, "hpcc", "its switch telemetry rides in an IPv4 option: set ip: ipv4");
    return;
  }
  for (const auto& l : d.x.topology.links) {
    if (IntHop::rate_index(l.config.bandwidth)) continue;
    refuse(d, at, "hpcc",
           "its switch telemetry reports link rates from a table of standard Ethernet rates (1, 2.5, 5, 10, "
           "25, 40, 50, 56, 100, 200, 400, 800, 1600 Gbps), and a link runs at " +
               to_string(l.config.bandwidth));
    return;
  }
}

// IRN's extension header rides in an IPv4 option too
// (docs/reliability.md#irn-loss-recovery).
void irn(ExperimentDraft& d) {
  if (d.x.loss_recovery != LossRecovery::irn) return;
  if (d.x.ip != IpVersion::ipv4)
    refuse(d, d.loss_recovery, "irn", "its extension header rides in an IPv4 option: set ip: ipv4");
  else if (cc_facts(d.x.cc.algorithm).signal == CcSignal::ip_telemetry)
    refuse(d, d.loss_recovery, "irn",
           "its extension header and HPCC's telemetry would both need the IPv4 options' 40 bytes");
}

}  // namespace

// ECN in the IP header (DCQCN, DCTCP), INT in an IPv4 option (HPCC), the
// NIC's own RTT samples (TIMELY, Swift).
std::string RoceV2Net::cc_error(CcAlgorithm a) const {
  if (cc_facts(a).signal != CcSignal::ib_fecn) return {};
  return "it is InfiniBand's (IBA annex A10): its FECN marks come from InfiniBand switches, and IP switches "
         "mark ECN instead (dcqcn, dctcp)";
}

void RoceV2Net::validate(ExperimentDraft& d) const {
  hpcc(d);
  irn(d);
}

}  // namespace rdmasim
