#include "fabrics/iba/transport/cc/congestion_control.hpp"

#include "fabrics/iba/transport/cc/dcqcn.hpp"
#include "fabrics/iba/transport/cc/dctcp.hpp"
#include "fabrics/iba/transport/cc/hpcc.hpp"
#include "fabrics/iba/transport/cc/ib_cca.hpp"
#include "fabrics/iba/transport/cc/swift.hpp"
#include "fabrics/iba/transport/cc/timely.hpp"

namespace rdmasim {

CcFeedback cc_feedback(CcAlgorithm a) {
  CcFeedback f;
  switch (a) {
    case CcAlgorithm::none:
      break;
    case CcAlgorithm::dcqcn:
      f.cnp_on_ce = true;
      break;
    case CcAlgorithm::dctcp:
      f.becn_on_ce = true;
      f.ack_every_packet = true;  // the fraction of marked packets needs an ACK for each
      break;
    case CcAlgorithm::hpcc:
      f.echo_telemetry = f.request_telemetry = true;
      f.ack_every_packet = true;  // HPCC reacts per ACK (its simulator ACKs every packet)
      break;
    case CcAlgorithm::timely:
      f.rtt_samples = true;
      f.ack_every_packet = true;  // an RTT sample each packet, as HPCC's simulator takes them
      break;
    case CcAlgorithm::swift:
      f.rtt_samples = true;
      f.ack_every_packet = true;
      break;
    case CcAlgorithm::ib_cca:
      f.becn_on_fecn = true;
      break;
  }
  return f;
}

std::unique_ptr<QpCongestionControl> make_congestion_control(const CcConfig& cfg, Simulator& sim,
                                                             DataRate line, const void* qp,
                                                             CcHasWork has_work) {
  switch (cfg.algorithm) {
    case CcAlgorithm::none:
      return nullptr;
    case CcAlgorithm::dcqcn:
      return std::make_unique<DcqcnRate>(sim, cfg.dcqcn, line, qp, has_work);
    case CcAlgorithm::hpcc:
      return std::make_unique<Hpcc>(cfg.hpcc, line);
    case CcAlgorithm::timely:
      return std::make_unique<Timely>(cfg.timely, line);
    case CcAlgorithm::dctcp:
      return std::make_unique<Dctcp>(cfg.dctcp, line);
    case CcAlgorithm::swift:
      return std::make_unique<Swift>(cfg.swift, line);
    case CcAlgorithm::ib_cca:
      return std::make_unique<IbCca>(sim, cfg.ib_cca, line);
  }
  return nullptr;
}

}  // namespace rdmasim
