#include "fabrics/iba/transport/cc/congestion_control.hpp"

#include <stdexcept>
#include <string>

#include "fabrics/iba/transport/cc/dcqcn.hpp"
#include "fabrics/iba/transport/cc/dctcp.hpp"
#include "fabrics/iba/transport/cc/hpcc.hpp"
#include "fabrics/iba/transport/cc/ib_cca.hpp"
#include "fabrics/iba/transport/cc/swift.hpp"
#include "fabrics/iba/transport/cc/timely.hpp"

namespace rdmasim {

namespace {

// One row per algorithm: what the receiving NIC and the requester do for
// it, and how a QP's instance is made. What it asks of the network is
// topologies/cc_algorithms.cpp's row.
struct Implementation {
  CcAlgorithm algorithm;
  CcFeedback feedback;
  std::unique_ptr<QpCongestionControl> (*make)(const CcConfig&, Simulator&, DataRate line, const void* qp,
                                               CcHasWork);
};

const Implementation kImplementations[] = {
    {CcAlgorithm::none,
     {},
     [](const CcConfig&, Simulator&, DataRate, const void*, CcHasWork) {
       return std::unique_ptr<QpCongestionControl>();
     }},
    {CcAlgorithm::dcqcn,
     {.cnp_on_ce = true},
     [](const CcConfig& c, Simulator& sim, DataRate line, const void* qp, CcHasWork has_work) {
       return std::unique_ptr<QpCongestionControl>(
           std::make_unique<DcqcnRate>(sim, c.dcqcn, line, qp, has_work));
     }},
    // The fraction of marked packets needs an ACK for each.
    {CcAlgorithm::dctcp,
     {.becn_on_ce = true, .ack_every_packet = true},
     [](const CcConfig& c, Simulator&, DataRate line, const void*, CcHasWork) {
       return std::unique_ptr<QpCongestionControl>(std::make_unique<Dctcp>(c.dctcp, line));
     }},
    // HPCC reacts per ACK (its simulator ACKs every packet).
    {CcAlgorithm::hpcc,
     {.echo_telemetry = true, .request_telemetry = true, .ack_every_packet = true},
     [](const CcConfig& c, Simulator&, DataRate line, const void*, CcHasWork) {
       return std::unique_ptr<QpCongestionControl>(std::make_unique<Hpcc>(c.hpcc, line));
     }},
    // An RTT sample each packet, as HPCC's simulator takes them.
    {CcAlgorithm::timely,
     {.ack_every_packet = true, .rtt_samples = true},
     [](const CcConfig& c, Simulator&, DataRate line, const void*, CcHasWork) {
       return std::unique_ptr<QpCongestionControl>(std::make_unique<Timely>(c.timely, line));
     }},
    {CcAlgorithm::swift,
     {.ack_every_packet = true, .rtt_samples = true},
     [](const CcConfig& c, Simulator&, DataRate line, const void*, CcHasWork) {
       return std::unique_ptr<QpCongestionControl>(std::make_unique<Swift>(c.swift, line));
     }},
    {CcAlgorithm::ib_cca,
     {.becn_on_fecn = true},
     [](const CcConfig& c, Simulator& sim, DataRate line, const void*, CcHasWork) {
       return std::unique_ptr<QpCongestionControl>(std::make_unique<IbCca>(sim, c.ib_cca, line));
     }},
};

const Implementation& implementation(CcAlgorithm a) {
  for (const Implementation& i : kImplementations)
    if (i.algorithm == a) return i;
  throw std::logic_error("congestion control " + std::string(to_string(a)) +
                         " has no row in congestion_control.cpp");
}

}  // namespace

CcFeedback cc_feedback(CcAlgorithm a) { return implementation(a).feedback; }

std::unique_ptr<QpCongestionControl> make_congestion_control(const CcConfig& cfg, Simulator& sim,
                                                             DataRate line, const void* qp,
                                                             CcHasWork has_work) {
  return implementation(cfg.algorithm).make(cfg, sim, line, qp, has_work);
}

}  // namespace rdmasim
